// A mutex annotated for clang's thread-safety analysis (-Wthread-safety, on in every clang
// build): fields say which mutex guards them (IFCORE_GUARDED_BY), functions which mutex
// their caller holds (IFCORE_REQUIRES), and the compiler checks every access. The
// annotations compile to nothing under g++. The model is gVisor's pkg/tcpip/stack: the
// guarded fields grouped under their mutex, the lock order written on the mutex, the whole
// order in docs/CONCURRENCY.md.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#if defined(__clang__)
#define IFCORE_TSA(x) __attribute__((x))
#else
#define IFCORE_TSA(x)
#endif

#define IFCORE_CAPABILITY(x) IFCORE_TSA(capability(x))
#define IFCORE_GUARDED_BY(x) IFCORE_TSA(guarded_by(x))
#define IFCORE_PT_GUARDED_BY(x) IFCORE_TSA(pt_guarded_by(x))
#define IFCORE_REQUIRES(...) IFCORE_TSA(requires_capability(__VA_ARGS__))
#define IFCORE_ACQUIRE(...) IFCORE_TSA(acquire_capability(__VA_ARGS__))
#define IFCORE_RELEASE(...) IFCORE_TSA(release_capability(__VA_ARGS__))
#define IFCORE_TRY_ACQUIRE(...) IFCORE_TSA(try_acquire_capability(__VA_ARGS__))
#define IFCORE_ASSERT_CAPABILITY(x) IFCORE_TSA(assert_capability(x))
#define IFCORE_RETURN_CAPABILITY(x) IFCORE_TSA(lock_returned(x))
#define IFCORE_SCOPED_CAPABILITY IFCORE_TSA(scoped_lockable)
#define IFCORE_EXCLUDES(...) IFCORE_TSA(locks_excluded(__VA_ARGS__))
#define IFCORE_ACQUIRED_AFTER(...) IFCORE_TSA(acquired_after(__VA_ARGS__))
#define IFCORE_NO_THREAD_SAFETY_ANALYSIS IFCORE_TSA(no_thread_safety_analysis)

namespace ifcore {

class IFCORE_CAPABILITY("mutex") Mutex {
 public:
  void lock() IFCORE_ACQUIRE() { m_.lock(); }
  void unlock() IFCORE_RELEASE() { m_.unlock(); }
  bool try_lock() IFCORE_TRY_ACQUIRE(true) { return m_.try_lock(); }
  // Tells the analysis that the caller holds it, where it cannot see so (a callback run
  // under the lock by code that is not annotated). Checks nothing at run time.
  void assert_held() const IFCORE_ASSERT_CAPABILITY(this) {}
  // For a holder that the analysis cannot follow (Control, which keeps the control lock
  // across calls as a std::unique_lock): it says so where it takes it.
  std::mutex& native() { return m_; }

 private:
  friend class MutexLock;
  std::mutex m_;
};

// A reader-writer mutex: the engine's control lock, held exclusively by an engine-wide
// Control and shared by a namespace's (engine.h). Only Control takes it.
class IFCORE_CAPABILITY("mutex") SharedMutex {
 public:
  std::shared_mutex& native() { return m_; }

 private:
  std::shared_mutex m_;
};

// Holds a Mutex for its scope; unlock() and lock() let it go and take it again early, and
// wait() sleeps on a condition variable with it (held again when wait returns).
class IFCORE_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& m) IFCORE_ACQUIRE(m) : lk_(m.m_) {}
  ~MutexLock() IFCORE_RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void unlock() IFCORE_RELEASE() { lk_.unlock(); }
  void lock() IFCORE_ACQUIRE() { lk_.lock(); }

  void wait(std::condition_variable& cv) { cv.wait(lk_); }
  template <class Clock, class Dur>
  std::cv_status wait_until(std::condition_variable& cv,
                            const std::chrono::time_point<Clock, Dur>& t) {
    return cv.wait_until(lk_, t);
  }
  template <class Rep, class Period>
  std::cv_status wait_for(std::condition_variable& cv,
                          const std::chrono::duration<Rep, Period>& d) {
    return cv.wait_for(lk_, d);
  }

 private:
  std::unique_lock<std::mutex> lk_;
};

}  // namespace ifcore
