// bench/scenarios/neigh_batch.h — what neighbour entries add to a batched unregister:
// N dummies, each with K permanent neighbours (every entry holds its device), removed in
// one batch, beside the same N dummies without neighbours, both in the embedded engine and
// in the same run. The entries must let go of their devices within the batch's one pass:
// the time per device should stay within 2× of the plain delete.
#pragma once

#include <cstdio>

#include "ifcore/result.h"

namespace ifcore::bench {

struct NeighBatchFigures {
  int devices = 0;
  int per_device = 0;  // neighbours per device
  int repeat = 0;
  double plain = 0, with_neighbours = 0;  // medians of the batch delete, seconds
  std::size_t left = 0;                   // entries left after the deletes (must be 0)
};

// Runs both `repeat` times. Errors: an engine call that fails.
Result<NeighBatchFigures> measure_neigh_batch(int devices, int per_device, int repeat);

// The section of the report: both figures, per device, and the ratio against its target.
void print_neigh_batch(const NeighBatchFigures& f, std::FILE* out);

inline constexpr const char* kNeighBatchName = "neigh-10k-delete";
inline constexpr double kNeighTarget = 2.0;

}  // namespace ifcore::bench
