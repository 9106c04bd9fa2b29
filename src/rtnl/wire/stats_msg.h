// rtnl/wire/stats_msg.h — ifcore's statistics message: the engine's counters and time per phase
// (Engine::stats()), asked for and answered over rtnetlink, so `ifc stats` works against
// the daemon and the embedded engine alike. Format in docs/WIRE.md ("Engine statistics").
//
// Pure: bytes in, values out, and back; no engine, no socket.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ifcore/engine.h"
#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::rtnl {

// Request and reply type: next to IFCORE_NLMSG_CONTROL (control_msg.h), above RTM_MAX.
inline constexpr std::uint16_t IFCORE_NLMSG_GETSTATS = 0x3ff1;

// One u64 attribute per field of ifcore::Stats, in this order; times in nanoseconds.
enum : std::uint16_t {
  IFCORE_STATS_UNSPEC,
  IFCORE_STATS_DEVICES_REGISTERED,
  IFCORE_STATS_DEVICES_UNREGISTERED,
  IFCORE_STATS_DEVICES_RELEASED,
  IFCORE_STATS_DEVICES_LEAKED,
  IFCORE_STATS_LEAK_REPORTS,
  IFCORE_STATS_BATCHES,
  IFCORE_STATS_NOTIFIER_PASSES,
  IFCORE_STATS_NOTIFIER_CALLS,
  IFCORE_STATS_GRACE_PERIODS,
  IFCORE_STATS_BARRIERS,
  IFCORE_STATS_REF_WAITS,
  IFCORE_STATS_REBROADCASTS,
  IFCORE_STATS_NOTIFIER_NS,
  IFCORE_STATS_GRACE_NS,
  IFCORE_STATS_BARRIER_NS,
  IFCORE_STATS_REF_WAIT_NS,
  IFCORE_STATS_UNLIST_NS,
  IFCORE_STATS_FREE_NS,
  IFCORE_STATS_PENDING,  // devices waiting for their references now
  IFCORE_STATS_MAX = IFCORE_STATS_PENDING,
};

// The statistics as named values, in attribute order (for printing and JSON).
struct StatsEntry {
  std::string_view name;  // "devices_registered", ..., "notifier_time_ns", ...
  std::uint64_t value = 0;
};
std::vector<StatsEntry> stats_entries(const Stats& s, std::uint64_t pending);

// Writes the request: NLM_F_REQUEST | extra_flags, a 4-byte rtgenmsg (family AF_UNSPEC).
Result<void> encode_stats_request(wire::MessageBuilder& b, std::uint32_t seq,
                                  std::uint16_t extra_flags = 0);
// Writes the reply (echoing seq, to portid).
Result<void> encode_stats_reply(wire::MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                const Stats& s, std::uint64_t pending);
// Reads a reply. Errors: EINVAL if not a stats message or malformed; unknown attribute
// types are skipped (newer daemons may add some).
Result<std::vector<StatsEntry>> decode_stats_reply(const wire::Message& m);

}  // namespace ifcore::rtnl
