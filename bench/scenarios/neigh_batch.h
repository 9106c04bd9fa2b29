// bench/scenarios/neigh_batch.h — what neighbour entries and nexthop objects add to a
// batched unregister: N dummies, each with K permanent neighbours (every entry holds its
// device), removed in one batch; then N up dummies with K neighbours and a nexthop object
// each (IPv6 off, so that the up devices carry nothing else); beside the same N dummies
// with nothing, all in the embedded engine and in the same run. The holders must let go of
// their devices within the batch's one pass: the time per device should stay within 2× of
// the plain delete.
#pragma once

#include <cstdio>

#include "ifcore/result.h"

namespace ifcore::bench {

struct NeighBatchFigures {
  int devices = 0;
  int per_device = 0;  // neighbours per device
  int repeat = 0;
  double plain = 0, with_neighbours = 0;  // medians of the batch delete, seconds
  double up = 0;                          // up dummies (IPv6 off) with nothing
  double with_nexthops = 0;               // ... with neighbours and a nexthop each
  // The ratios against the plain delete (and against `up`), each the median of the
  // repetitions' own ratios: the four deletes of a repetition run back to back, so a
  // machine that slows down for a while slows both sides of a ratio alike.
  double ratio_neighbours = 0, ratio_nexthops = 0, ratio_nexthops_up = 0;
  std::size_t left = 0;           // entries left after the deletes (must be 0)
  std::size_t nexthops_left = 0;  // nexthops left after the deletes (must be 0)
};

// Runs both `repeat` times. Errors: an engine call that fails.
Result<NeighBatchFigures> measure_neigh_batch(int devices, int per_device, int repeat);

// The section of the report: both figures, per device, and the ratio against its target.
void print_neigh_batch(const NeighBatchFigures& f, std::FILE* out);

inline constexpr const char* kNeighBatchName = "neigh-10k-delete";
inline constexpr double kNeighTarget = 2.0;

}  // namespace ifcore::bench
