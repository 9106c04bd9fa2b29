// cli/batch_adds.h — `ifc -batch` against ifcored: a run of consecutive `link add` lines
// of kinds the daemon creates in a batch goes out as ONE create batch (docs/WIRE.md,
// "Create batch") instead of one request per line. What the lines print, and where a
// batch stops, stay those of `ip -batch`: a failed line is reported with its number and
// the lines before it are made, the lines after it only with -force.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "cli/client.h"

namespace ifcore::cli {

// The requests held back, each with the batch file's line it came from.
struct BatchedAdds {
  std::vector<std::vector<std::uint8_t>> bodies;  // ifinfomsg + IFLA_* of each RTM_NEWLINK
  std::vector<int> lines;
  std::size_t bytes = 0;
  bool empty() const { return bodies.empty(); }
};

// Whether `words` is a `link add` of a kind ifcored creates in a batch (dummy), with
// nothing that needs another device.
bool batchable_add(const std::vector<std::string>& words);

// Keeps the finished RTM_NEWLINK `message` (its body) for the next batch. The caller notes
// the line.
void defer_add(BatchedAdds& adds, std::span<const std::uint8_t> message);

// True when enough is held back to send (a batch stays well under a datagram's limit).
bool adds_full(const BatchedAdds& adds);

enum class FlushOutcome { Done, Failed, Stop };

// Sends what is held back, in as few batches as the outcome allows, and empties `adds`.
// A failed line is reported as `ip -batch` reports it ("RTNETLINK answers: ...", then
// "Command failed FILE:LINE"): the lines before it are made; without `force` the rest is
// dropped (Stop), with it they are sent on (Failed when any line failed).
// `before_report` runs before a failure is printed.
FlushOutcome flush_adds(Client& client, BatchedAdds& adds, const std::string& file, bool force,
                        const std::function<void()>& before_report = {});

}  // namespace ifcore::cli
