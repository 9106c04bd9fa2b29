// base/ticks.cc — the tick clock's choice of counter and its conversion (ticks.h).
#include "base/ticks.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace ifcore::ticks {

namespace {

using Steady = std::chrono::steady_clock;

// The first reading of both clocks, taken together; the counter's rate is measured from it.
struct Origin {
  std::uint64_t t = now();
  Steady::time_point s = Steady::now();
};

const Origin& origin() {
  static const Origin o;
  return o;
}

// Taken at load time, so that the rate is measured over the process's whole life.
[[maybe_unused]] const Origin& taken_at_start = origin();

}  // namespace

namespace detail {

bool cpu_has_invariant_tsc() {
#if defined(__x86_64__)
  // CPUID 0x80000007, EDX bit 8: the counter runs at a constant rate in every power state
  // (Linux's constant_tsc and nonstop_tsc).
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000007u) return false;
  __cpuid(0x80000007u, a, b, c, d);
  return (d >> 8) & 1u;
#else
  return false;
#endif
}

}  // namespace detail

std::int64_t to_ns(std::uint64_t n) {
  if (n == 0) return 0;
#if defined(__x86_64__)
  if (detail::use_tsc()) {
    const Origin& o = origin();
    std::uint64_t t = now();
    auto s = Steady::now();
    double ns =
        static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(s - o.s).count());
    if (t <= o.t || ns <= 0) return 0;
    return static_cast<std::int64_t>(static_cast<double>(n) * ns / static_cast<double>(t - o.t));
  }
#endif
  return static_cast<std::int64_t>(n);
}

}  // namespace ifcore::ticks
