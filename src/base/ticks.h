// base/ticks.h — a cheap clock for statistics that add up many short intervals (the time
// the notifier passes take). On x86-64 with an invariant time-stamp counter it reads the
// counter (12 ns here, against 28 ns for steady_clock::now() through the vDSO: a vlan
// created through rtnetlink makes seven notifier passes, fourteen readings). Elsewhere it
// reads steady_clock. Ticks become nanoseconds only when a statistic is read.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace ifcore::ticks {

namespace detail {
bool cpu_has_invariant_tsc();  // CPUID: the counter runs at a constant rate
// Whether the clock reads the counter; decided once per process.
inline bool use_tsc() {
  static const bool tsc = cpu_has_invariant_tsc();
  return tsc;
}
}  // namespace detail

// A point on the tick clock; only differences mean something. Context: any thread; no
// system call, never blocks.
inline std::uint64_t now() {
#if defined(__x86_64__)
  if (detail::use_tsc()) return __rdtsc();
#endif
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// The nanoseconds that `n` ticks last. The counter's rate is measured against
// steady_clock over the time since the process first used this clock, so the figure
// grows more exact as the process ages (within 0.1% after a millisecond).
// Context: any thread; not for hot paths (reads steady_clock).
std::int64_t to_ns(std::uint64_t n);

}  // namespace ifcore::ticks
