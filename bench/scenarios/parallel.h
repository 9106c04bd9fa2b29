// bench/scenarios/parallel.h — namespaces in parallel: writers, each in a namespace of its
// own and holding that namespace's control (Engine::control(Namespace&)), make N dummies one
// by one and delete them in one batch, round after round, in one embedded engine. The
// throughput of 1 and of 2 writers is measured in the same run, and of 1 writer holding the
// engine-wide control, which shows what a namespace's control costs a writer alone. On 2
// CPUs, 2 writers should reach at least 1.7× the throughput of 1.
#pragma once

#include <cstdio>

#include "ifcore/result.h"

namespace ifcore::bench {

struct ParallelFigures {
  int devices = 0;  // per round and writer
  int rounds = 0;   // per writer
  int repeat = 0;
  // Medians over the repetitions, devices made and deleted per second by all writers.
  double engine_wide = 0;   // 1 writer, Engine::control()
  double one = 0, two = 0;  // 1 and 2 writers, each with its namespace's control
  // What the host gives 2 threads at the time: 2 threads of an arithmetic loop that shares
  // nothing, ÷ 1 (median). On a VM whose vCPUs share a core, or when the host is busy, it
  // is well under 2, and bounds what the writers can reach.
  double ceiling = 0;
  // The same for work like the writers': 2 threads each running the bare floor (floor.h)
  // of as many devices and rounds, in tables of their own, ÷ 1 (median). Where the vCPUs
  // share a core's caches and memory bandwidth this is far under the loop's ceiling.
  double floor_ceiling = 0;
  double ratio() const { return one > 0 ? two / one : 0; }
};

// Errors: an engine call that fails.
Result<ParallelFigures> measure_parallel_namespaces(int devices, int rounds, int repeat);

void print_parallel_namespaces(const ParallelFigures& f, std::FILE* out);

inline constexpr const char* kParallelName = "parallel-namespaces";
inline constexpr double kParallelTarget = 1.7;

}  // namespace ifcore::bench
