// A mutex annotated for clang's thread-safety analysis (-Wthread-safety); the
// annotations compile to nothing under g++.
#pragma once

#include <mutex>

#if defined(__clang__)
#define IFCORE_TSA(x) __attribute__((x))
#else
#define IFCORE_TSA(x)
#endif

#define IFCORE_CAPABILITY(x) IFCORE_TSA(capability(x))
#define IFCORE_GUARDED_BY(x) IFCORE_TSA(guarded_by(x))
#define IFCORE_REQUIRES(...) IFCORE_TSA(requires_capability(__VA_ARGS__))
#define IFCORE_ACQUIRE(...) IFCORE_TSA(acquire_capability(__VA_ARGS__))
#define IFCORE_RELEASE(...) IFCORE_TSA(release_capability(__VA_ARGS__))
#define IFCORE_SCOPED_CAPABILITY IFCORE_TSA(scoped_lockable)
#define IFCORE_EXCLUDES(...) IFCORE_TSA(locks_excluded(__VA_ARGS__))

namespace ifcore {

class IFCORE_CAPABILITY("mutex") Mutex {
 public:
  void lock() IFCORE_ACQUIRE() { m_.lock(); }
  void unlock() IFCORE_RELEASE() { m_.unlock(); }
  bool try_lock() { return m_.try_lock(); }
  std::mutex& native() { return m_; }

 private:
  std::mutex m_;
};

class IFCORE_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& m) IFCORE_ACQUIRE(m) : m_(m) { m_.lock(); }
  ~MutexLock() IFCORE_RELEASE() { m_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& m_;
};

}  // namespace ifcore
