// ThreadSanitizer annotations for what it cannot see: ordering made by code that is not
// instrumented (liburcu's grace periods and callback queue, liburcu-cds's hash table).
// Without TSan they are empty and cost nothing.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define IFCORE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IFCORE_TSAN 1
#endif
#endif

#ifdef IFCORE_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace ifcore::tsan {

inline constexpr bool kEnabled =
#ifdef IFCORE_TSAN
    true;
#else
    false;
#endif

// What this thread did before release(p) happens before what a thread does after a
// later acquire(p) (a release joins: several threads may release the same address).
inline void release(const void* p) {
#ifdef IFCORE_TSAN
  __tsan_release(const_cast<void*>(p));
#else
  (void)p;
#endif
}
inline void acquire(const void* p) {
#ifdef IFCORE_TSAN
  __tsan_acquire(const_cast<void*>(p));
#else
  (void)p;
#endif
}

}  // namespace ifcore::tsan
