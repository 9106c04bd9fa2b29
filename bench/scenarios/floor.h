// bench/scenarios/floor.h — the cost floor of registering and unregistering N devices: in
// the same run, N dummies created one by one and deleted in one batch through the embedded
// engine, beside a bare floor that does only what any device table must: allocate the same
// objects a dummy is made of (the device, its IPv4 and IPv6 state, its protocol record and
// its name's table entry, each of the engine's sizes), insert each name into the same kind
// of lock-free hash table (liburcu's rculfhash, sized for N from the start) and each
// ifindex into a flat index, then remove them all, wait one grace period and free them.
// ifcore's cost per device is printed as a multiple of the floor's (target: 3× or less).
#pragma once

#include <cstdio>
#include <vector>

#include "ifcore/result.h"

namespace ifcore::bench {

struct FloorRow {
  int devices = 0;
  // Medians over the repetitions, seconds for all N.
  double create = 0, remove = 0;              // ifcore: create_link × N, one batch delete
  double floor_create = 0, floor_remove = 0;  // the bare floor
  // The median of the repetitions' own ratios of (create + remove) to the floor's.
  double ratio = 0;
};

struct FloorFigures {
  int repeat = 0;
  std::vector<FloorRow> rows;  // one per N
};

// Measures every N of `sizes`, `repeat` times. Errors: an engine call that fails.
Result<FloorFigures> measure_floor(const std::vector<int>& sizes, int repeat);

void print_floor(const FloorFigures& f, std::FILE* out);

// The bare floor of `n` devices on the calling thread, in a table of its own: made, named
// and indexed, then removed, one grace period, freed. Seconds for all of it. Errors:
// ENOMEM when the table cannot be made.
Result<double> bare_floor_seconds(int n);

inline constexpr const char* kFloorName = "floor";
inline constexpr double kFloorTarget = 3.0;

}  // namespace ifcore::bench
