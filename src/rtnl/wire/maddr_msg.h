// rtnl/wire/maddr_msg.h — ifcore's multicast-list message: the link-layer multicast
// addresses and the IPv4/IPv6 groups of the devices, as /proc/net/dev_mcast, igmp and igmp6
// show them on Linux, and the SIOCADDMULTI/SIOCDELMULTI change of a device's link-layer
// list (what `ip maddr` reads and does). The preload shim turns the files and the ioctls
// into these. Format in docs/WIRE.md ("Multicast lists").
//
// Pure: bytes in, values out, and back; no engine, no socket.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::rtnl {

// Request and reply type: after IFCORE_NLMSG_CONTROL (0x3ff0), IFCORE_NLMSG_GETSTATS
// (0x3ff1), IFCORE_NLMSG_PROBE (0x3ff2), IFCORE_NLMSG_SYSCTL (0x3ff3) and
// IFCORE_NLMSG_NSID (0x3ff4), above RTM_MAX.
inline constexpr std::uint16_t IFCORE_NLMSG_MADDR = 0x3ff5;

enum : std::uint16_t {
  IFCORE_MADDR_UNSPEC,
  IFCORE_MADDR_OP,        // u8, request: IFCORE_MADDR_ADD or IFCORE_MADDR_DEL; absent: a dump
  IFCORE_MADDR_IFNAME,    // string: the device (request: as ifr_name names it)
  IFCORE_MADDR_ADDRESS,   // binary: request: sa_data; reply: the link-layer address or group
  IFCORE_MADDR_HWFAMILY,  // u16, request: the sockaddr's sa_family
  IFCORE_MADDR_IFINDEX,   // u32, reply
  IFCORE_MADDR_USERS,     // u32, reply: the address's users (Linux: refcount, users)
  IFCORE_MADDR_FLAGS,     // u32, reply: see inet::McEntry::flags
  IFCORE_MADDR_MAX = IFCORE_MADDR_FLAGS,
};

inline constexpr std::uint8_t IFCORE_MADDR_ADD = 1, IFCORE_MADDR_DEL = 2;
inline constexpr std::size_t kMaddrMaxAddress = 32;  // MAX_ADDR_LEN

// A dump (op 0, sent with NLM_F_DUMP; `family` AF_UNSPEC, AF_PACKET, AF_INET or AF_INET6
// picks the lists), or a change of `ifname`'s link-layer list.
struct MaddrRequest {
  std::uint8_t family = 0;
  std::uint8_t op = 0;
  std::string ifname;
  std::vector<std::uint8_t> address;
  std::uint16_t hw_family = 0;
};

// One entry of a dump: the family is AF_PACKET for a link-layer address.
struct MaddrEntry {
  std::uint8_t family = 0;
  std::uint32_t ifindex = 0;
  std::string ifname;
  std::vector<std::uint8_t> address;
  std::uint32_t users = 0;
  std::uint32_t flags = 0;
};

// Writes the request: NLM_F_REQUEST | extra_flags, a 4-byte rtgenmsg, then the attributes
// a change needs.
Result<void> encode_maddr_request(wire::MessageBuilder& b, std::uint32_t seq,
                                  const MaddrRequest& req, std::uint16_t extra_flags = 0);
// Reads a request. Errors: EINVAL if not a multicast-list message or truncated, an unknown
// op, a change without IFNAME or ADDRESS; ERANGE for an overlong name or address.
Result<MaddrRequest> decode_maddr_request(const wire::Message& m);

// Writes one dump entry (echoing seq, to portid, with `flags` such as NLM_F_MULTI).
Result<void> encode_maddr_entry(wire::MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                const MaddrEntry& e, std::uint16_t flags = 0);
// Reads one entry. Errors: EINVAL if not a multicast-list message, truncated, or without
// IFINDEX or ADDRESS; unknown types are skipped.
Result<MaddrEntry> decode_maddr_entry(const wire::Message& m);

}  // namespace ifcore::rtnl
