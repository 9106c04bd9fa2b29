// rtnl/wire/netconf.h — RTM_NEWNETCONF / RTM_DELNETCONF / RTM_GETNETCONF: struct netconfmsg
// and its NETCONFA_* attributes as one value, encoded in the order of Linux's
// inet_netconf_fill_devconf and inet6_netconf_fill_devconf (NETCONFA_IFINDEX, FORWARDING,
// RP_FILTER, MC_FORWARDING, BC_FORWARDING, PROXY_NEIGH, IGNORE_ROUTES_WITH_LINKDOWN), and
// the checks Linux makes of a get or dump request (inet_netconf_valid_get_req,
// inet6_netconf_valid_get_req, the dumps' strict checks).
#pragma once

#include <linux/netconf.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>

#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

// NETCONFA_MAX of Linux 6.18 (NETCONFA_FORCE_FORWARDING, 9), newer than the uapi headers
// ifcore builds with: a strict parse refuses types above it.
inline constexpr std::uint16_t kNetconfaMax = 9;

struct NetconfMessage {
  std::uint8_t family = 0;              // netconfmsg.ncm_family: AF_INET, AF_INET6
  std::optional<std::int32_t> ifindex;  // NETCONFA_IFINDEX: a device, -1 all, -2 default
  std::optional<std::int32_t> forwarding, rp_filter, mc_forwarding, bc_forwarding, proxy_neigh,
      ignore_routes_with_linkdown, input;
  // decode_netconf_get, not strict: bytes were left after the last attribute (Linux warns
  // "bytes leftover after parsing attributes" in the ACK's extack).
  bool leftover = false;
};

// Writes `n` as one message of type h.type (netconfmsg padded to 4 bytes).
// Errors: EMSGSIZE from the builder.
Result<void> encode_netconf(MessageBuilder& b, const Header& h, const NetconfMessage& n);

// Reads a netconf message (a reply or a notification), tolerantly: unknown attributes are
// skipped. Errors: EINVAL for an empty payload or malformed attributes.
Result<NetconfMessage> decode_netconf(const Message& m);

// Reads an RTM_GETNETCONF request of `family` (AF_INET or AF_INET6; the "ipv4: " or
// "ipv6: " of the messages) as Linux does: the attributes after the padded netconfmsg,
// each of the family's policy at least 4 bytes long (ERANGE "Attribute failed policy
// validation", at the attribute); when `strict` (NETLINK_GET_STRICT_CHK), an unknown type
// (EINVAL "Unknown attribute type", at it), bytes left after the last attribute (EINVAL
// "bytes leftover after parsing attributes"), and any attribute but NETCONFA_IFINDEX
// (EINVAL "ipvN: Unsupported attribute in netconf get request") are refused. The last
// NETCONFA_IFINDEX given counts; its first 4 bytes. Not strict, bytes left over are
// reported in `leftover`.
Result<NetconfMessage> decode_netconf_get(const Message& m, int family, bool strict);

// Linux's strict check of a dump request of `family`: EINVAL "ipvN: Invalid data after
// header in netconf dump request" unless exactly a padded netconfmsg.
Result<void> check_netconf_dump(const Message& m, int family);

}  // namespace ifcore::wire
