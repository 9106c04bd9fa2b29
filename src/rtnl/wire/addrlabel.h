// rtnl/wire/addrlabel.h — RTM_NEWADDRLABEL / RTM_DELADDRLABEL / RTM_GETADDRLABEL: struct
// ifaddrlblmsg + IFAL_ADDRESS, IFAL_LABEL (<linux/if_addrlabel.h>), as Linux's
// net/ipv6/addrlabel.c writes them (ip6addrlbl_fill) and checks them (ifal_policy: the
// address at least 16 bytes, the label at least 4; ip6addrlbl_valid_get_req,
// ip6addrlbl_valid_dump_req).
#pragma once

#include <linux/if_addrlabel.h>

#include <array>
#include <cstdint>
#include <optional>

#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

struct AddrLabelMessage {
  std::uint8_t family = 0;  // ifal_family: AF_INET6
  std::uint8_t reserved = 0, prefix_len = 0, flags = 0;
  std::uint32_t ifindex = 0;  // ifal_index: 0, every device
  std::uint32_t seq = 0;      // ifal_seq: the table's generation (replies)
  std::optional<std::array<std::uint8_t, 16>> address;  // IFAL_ADDRESS (its first 16 bytes)
  std::optional<std::uint32_t> label;                   // IFAL_LABEL (its first 4 bytes)
  // Not strict: bytes were left after the last attribute (Linux warns "bytes leftover
  // after parsing attributes" in the ACK's extack).
  bool leftover = false;
};

// Writes `m` as one message of type h.type. Errors: EMSGSIZE from the builder.
Result<void> encode_addrlabel(MessageBuilder& b, const Header& h, const AddrLabelMessage& m);

// Reads an address label message (a reply), tolerantly: unknown attributes are skipped.
// Errors: EINVAL for a payload shorter than ifaddrlblmsg or malformed attributes.
Result<AddrLabelMessage> decode_addrlabel(const Message& m);

// Reads a request as Linux's nlmsg_parse_deprecated does: EINVAL "Invalid header length"
// for a payload shorter than ifaddrlblmsg (`get`: "ipv6: Invalid header for addrlabel get
// request"); IFAL_ADDRESS under 16 bytes or IFAL_LABEL under 4 is ERANGE "Attribute failed
// policy validation" (at the attribute); other types are skipped; a malformed attribute
// ends the walk, and what is left is reported in `leftover`. With `strict` (a get on a
// socket with NETLINK_GET_STRICT_CHK, ip6addrlbl_valid_get_req): a reserved byte, flags or
// seq set is EINVAL "ipv6: Invalid values in header for addrlabel get request", an unknown
// type EINVAL "Unknown attribute type" (at it), bytes left over EINVAL "bytes leftover after
// parsing attributes", and any attribute but IFAL_ADDRESS EINVAL "ipv6: Unsupported
// attribute in addrlabel get request".
Result<AddrLabelMessage> decode_addrlabel_request(const Message& m, bool get, bool strict);

// Linux's strict check of a dump request (ip6addrlbl_valid_dump_req): EINVAL "ipv6: Invalid
// header for address label dump request" (short), "ipv6: Invalid values in header for
// address label dump request" (any field but the family set), "ipv6: Invalid data after
// header for address label dump request".
Result<void> check_addrlabel_dump(const Message& m);

}  // namespace ifcore::wire
