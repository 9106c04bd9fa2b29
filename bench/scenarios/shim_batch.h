// bench/scenarios/shim_batch.h — the preload shim's cost: `ip -batch` of N `link add`
// lines (`link add bI group 7 type bridge`: the kernel here has no dummy) through ifcore-run
// against a fresh ifcored, beside `ifc -batch` of the same file over ifcored's socket and on mapped
// rings, and beside the real ip on this machine's kernel in a fresh namespace. Whole programs are
// timed, from their start to their exit: what a user of each sees.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "ifcore/result.h"

namespace ifcore::bench {

struct ShimBatchFigures {
  int lines = 0;
  int repeat = 0;
  // Medians of the repetitions, seconds; nothing where the path could not run.
  std::optional<double> shim, ifc_socket, ifc_rings, kernel;
  std::string daemon_why, kernel_why;  // why a path has no figure
};

// Runs the comparison `repeat` times (each ifcored path once untimed first; the kernel
// once, its thousand bridges taking it seconds to remove). The programs are
// looked for in `bin_dir` (ifcored, ifcore-run, ifc; empty: beside this program) and `ip`
// on the PATH. Errors: only for files that cannot be written; a path that cannot run
// leaves its figure empty with the reason.
Result<ShimBatchFigures> measure_shim_batch(int lines, int repeat, std::string bin_dir = {});

// The section of the report: the four figures, per line, and the shim's ratio to ifc over
// the socket against its target (at most 1.5×).
void print_shim_batch(const ShimBatchFigures& f, std::FILE* out);

inline constexpr const char* kShimBatchName = "shim-ip-batch";
inline constexpr double kShimTarget = 1.5;

}  // namespace ifcore::bench
