// rtnl/wire/probe_msg.h — ifcore's probe message: "send frames from one device, count how many
// arrive at another and how long the first took" (frame.h probe()), asked for and
// answered over rtnetlink, so `ifc probe` works against the daemon and the embedded engine
// alike. Format in docs/WIRE.md ("Probe").
//
// Pure: bytes in, values out, and back; no engine, no socket.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::rtnl {

// Request and reply type: after IFCORE_NLMSG_CONTROL (0x3ff0) and IFCORE_NLMSG_GETSTATS
// (0x3ff1), above RTM_MAX.
inline constexpr std::uint16_t IFCORE_NLMSG_PROBE = 0x3ff2;

enum : std::uint16_t {
  IFCORE_PROBE_UNSPEC,
  // Request.
  IFCORE_PROBE_FROM_IFINDEX,  // u32
  IFCORE_PROBE_FROM_NAME,     // string
  IFCORE_PROBE_TO_IFINDEX,    // u32
  IFCORE_PROBE_TO_NAME,       // string
  IFCORE_PROBE_COUNT,         // u32: stop once this many frames arrived (default 1)
  IFCORE_PROBE_INTERVAL_US,   // u32: between attempts (default 1000)
  IFCORE_PROBE_TIMEOUT_MS,    // u32: give up after (default 3000)
  // Reply.
  IFCORE_PROBE_ATTEMPTS,          // u64: frames handed to the sending device
  IFCORE_PROBE_SENT,              // u64: of those, taken by it (not dropped at once)
  IFCORE_PROBE_RECEIVED,          // u64: arrived at the other device
  IFCORE_PROBE_FIRST_ARRIVAL_US,  // u64: from the first attempt; absent if none arrived
  IFCORE_PROBE_MAX = IFCORE_PROBE_FIRST_ARRIVAL_US,
};

// Limits the handler enforces (EINVAL beyond them): a probe runs while its peer waits.
inline constexpr std::uint32_t kProbeMaxCount = 1'000'000;
inline constexpr std::uint32_t kProbeMaxIntervalUs = 1'000'000;
inline constexpr std::uint32_t kProbeMaxTimeoutMs = 10'000;

// A device named by ifindex (when > 0) or else by name.
struct ProbeEnd {
  std::uint32_t ifindex = 0;
  std::string name;
  bool given() const { return ifindex > 0 || !name.empty(); }
};

struct ProbeRequest {
  ProbeEnd from, to;
  std::uint32_t count = 1;
  std::uint32_t interval_us = 1000;
  std::uint32_t timeout_ms = 3000;
};

struct ProbeReply {
  std::uint64_t attempts = 0, sent = 0, received = 0;
  std::optional<std::uint64_t> first_arrival_us;
};

// Writes the request: NLM_F_REQUEST | extra_flags, a 4-byte rtgenmsg (AF_UNSPEC), then
// the attributes (an end by ifindex when it has one, else by name).
Result<void> encode_probe_request(wire::MessageBuilder& b, std::uint32_t seq,
                                  const ProbeRequest& req, std::uint16_t extra_flags = 0);
// Reads a request. Errors: EINVAL if not a probe message, truncated, an attribute of the
// wrong size, or FROM / TO missing; ERANGE for an empty or overlong name. Unknown
// attribute types are skipped.
Result<ProbeRequest> decode_probe_request(const wire::Message& m);

// Writes the reply (echoing seq, to portid).
Result<void> encode_probe_reply(wire::MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                const ProbeReply& r);
// Reads a reply. Errors: EINVAL if not a probe message or malformed; unknown attribute
// types are skipped.
Result<ProbeReply> decode_probe_reply(const wire::Message& m);

}  // namespace ifcore::rtnl
