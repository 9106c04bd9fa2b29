// bench/scenarios/fairness.h — one client cannot starve another: the round trip of a light
// client of ifcored (one RTM_GETLINK of lo with NLM_F_ACK at a time) measured alone, then
// while a heavy client floods the daemon with the same request pipelined, 64 in flight, as
// fast as it reads its answers. The loop serves clients in turns with a budget each
// (src/daemon/daemon.cc), so the light client's wait under flood should stay within a turn
// of the heavy one's budget, not grow with the flood.
#pragma once

#include <cstdio>

#include "ifcore/result.h"

namespace ifcore::bench {

struct Latency {
  double median = 0, p99 = 0;  // seconds
};

struct FairnessFigures {
  int round_trips = 0;     // per measurement
  Latency alone, flooded;  // the light client's round trip
  double heavy_rate = 0;   // the heavy client's requests answered per second meanwhile
  bool rings = false;      // both clients on mapped rings
};

// Runs both measurements against a fresh ifcored. Errors: the daemon does not start; a
// request fails.
Result<FairnessFigures> measure_fairness(int round_trips, bool rings);

// The section of the report.
void print_fairness(const FairnessFigures& f, std::FILE* out);

inline constexpr const char* kFairnessName = "fairness";

}  // namespace ifcore::bench
