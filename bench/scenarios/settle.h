// bench/scenarios/settle.h — waiting for a quiet machine before each measured run. The
// kernel finishes a removed namespace in its own workers (devices, routes, RCU callbacks)
// long after the request that removed it has returned, and a fresh ifcored's predecessor
// may still be unmapping its heap: a run that starts then shares the CPUs with that work.
// Every path (embedded, daemon and kernel) waits the same way.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "ifcore/result.h"

namespace ifcore::bench {

// The aggregate "cpu" line of /proc/stat, in clock ticks.
struct CpuTimes {
  std::uint64_t idle = 0;   // idle + iowait
  std::uint64_t total = 0;  // user nice system idle iowait irq softirq steal
};

// Reads the first line of /proc/stat's text. Errors: EINVAL "no aggregate cpu line",
// "cpu line has N fields, need 8".
Result<CpuTimes> parse_proc_stat(std::string_view text);

// The idle share of the time between two samples (1 when no tick passed).
double idle_fraction(const CpuTimes& before, const CpuTimes& after);

struct SettleOptions {
  double idle = 0.9;                      // wanted idle share of all CPUs
  std::chrono::milliseconds window{20};   // one sample period
  int windows = 2;                        // consecutive quiet periods needed
  std::chrono::milliseconds limit{2000};  // give up (and measure) after this
};

// Waits until the CPUs were at least `idle` idle over `windows` consecutive windows, or
// until `limit`. Returns whether they were. Context: sleeps; any thread. Without
// /proc/stat it returns false at once.
bool settle(const SettleOptions& o = {});

}  // namespace ifcore::bench
