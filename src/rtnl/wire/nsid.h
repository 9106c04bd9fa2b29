// rtnl/wire/nsid.h — RTM_NEWNSID / RTM_GETNSID / RTM_DELNSID: struct rtgenmsg and NETNSA_*
// attributes, enough for `ip netns list-id` and `ip netns set NAME ID`.
#pragma once

#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

// ifcore names namespaces: the name travels in an attribute far above NETNSA_MAX.
inline constexpr std::uint16_t IFCORE_NETNSA_NAME = 0x3f00;  // string

struct NsidMessage {
  std::uint8_t family = 0;                   // rtgen_family (AF_UNSPEC)
  std::optional<std::int32_t> nsid;          // NETNSA_NSID (NETNSA_NSID_NOT_ASSIGNED = -1)
  std::optional<std::uint32_t> pid;          // NETNSA_PID
  std::optional<std::uint32_t> fd;           // NETNSA_FD
  std::optional<std::int32_t> target_nsid;   // NETNSA_TARGET_NSID
  std::optional<std::int32_t> current_nsid;  // NETNSA_CURRENT_NSID
  std::optional<std::string> name;           // IFCORE_NETNSA_NAME
};

// Decodes an nsid message. Unknown types are skipped. A GETNSID dump may have an empty
// payload (the family then reads as AF_UNSPEC).
// Errors: EINVAL "rtgenmsg payload too short" for a non-dump without payload, EINVAL for
// malformed TLVs and fixed-size attributes of the wrong size.
Result<NsidMessage> decode_nsid(const Message& m);

// Writes `n` as one message of type h.type: rtgenmsg, NETNSA_NSID, NETNSA_PID, NETNSA_FD,
// NETNSA_TARGET_NSID, NETNSA_CURRENT_NSID, IFCORE_NETNSA_NAME (Linux's rtnl_net_fill puts
// NETNSA_NSID then NETNSA_CURRENT_NSID).
// Errors: EMSGSIZE from the builder.
Result<void> encode_nsid(MessageBuilder& b, const Header& h, const NsidMessage& n);

}  // namespace ifcore::wire
