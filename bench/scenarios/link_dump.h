// bench/scenarios/link_dump.h — a dump of every link over ifcored's socket, read as it
// comes: N dummies are made in create batches, then one RTM_GETLINK dump is timed from its
// request to NLMSG_DONE while ifcored's peak resident memory is watched (its VmHWM, reset
// before the dump). It runs twice, on two daemons: with dumps sent in parts (the default,
// --dump-part-bytes 64 KiB) and with the whole dump made at once (--dump-part-bytes 0), so
// that the memory a dump needs shows beside the memory it would need unstreamed.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "ifcore/result.h"

namespace ifcore::bench {

struct LinkDumpRun {
  double seconds = 0;  // the dump, request to NLMSG_DONE (median of the repetitions)
  // ifcored's VmHWM during a dump minus its VmRSS before, MiB (the largest of the
  // repetitions: the first, as a rule).
  double peak_growth_mb = 0;
  long messages = 0;  // RTM_NEWLINK messages received (N + lo)
  long bytes = 0;     // their datagrams' bytes
};

struct LinkDumpFigures {
  int devices = 0;
  int repeat = 0;
  std::optional<LinkDumpRun> parts, whole;
  std::string why;  // why a run has no figure
};

// `daemon`: the ifcored to run (empty: the one beside this program). Errors: none; a run
// that cannot be made leaves its figure empty with the reason.
Result<LinkDumpFigures> measure_link_dump(int devices, int repeat, const std::string& daemon = {});

void print_link_dump(const LinkDumpFigures& f, std::FILE* out);

inline constexpr const char* kLinkDumpName = "link-dump";

}  // namespace ifcore::bench
