// rtnl/wire/neigh.h — RTM_NEWNEIGH / RTM_DELNEIGH / RTM_GETNEIGH: struct ndmsg and its NDA_*
// attributes as one value, decoded from requests and notifications and encoded in the
// order of Linux's neigh_fill_info (NDA_DST, NDA_LLADDR, NDA_PROBES, NDA_CACHEINFO,
// NDA_PROTOCOL, NDA_FLAGS_EXT) and pneigh_fill_info (NDA_DST, NDA_PROTOCOL).
#pragma once

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include <cstdint>
#include <optional>

#include "ifcore/addr.h"
#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

struct NeighMessage {
  // ndmsg
  std::uint8_t family = 0;  // AF_INET, AF_INET6 (AF_UNSPEC in a dump of both)
  std::int32_t ifindex = 0;
  std::uint16_t state = 0;  // NUD_*
  std::uint8_t flags = 0;   // NTF_*
  std::uint8_t type = 0;    // RTN_* of the destination

  std::optional<IpAddr> dst;                  // NDA_DST
  std::optional<HwAddr> lladdr;               // NDA_LLADDR
  std::optional<std::uint32_t> probes;        // NDA_PROBES
  std::optional<nda_cacheinfo> cacheinfo;     // NDA_CACHEINFO
  std::optional<std::uint8_t> protocol;       // NDA_PROTOCOL
  std::optional<std::uint32_t> flags_ext;     // NDA_FLAGS_EXT
  std::optional<std::uint32_t> dump_ifindex;  // NDA_IFINDEX (a dump's device filter)
  std::optional<std::uint32_t> master;        // NDA_MASTER (a dump's master filter)
  std::optional<std::uint16_t> vlan;          // NDA_VLAN (bridge fdb)
  bool has_unknown = false;                   // an attribute Linux's nda_policy refuses
  // Forwarding entries (family AF_BRIDGE): NDA_IFINDEX is dump_ifindex above.
  std::optional<std::uint16_t> port;        // NDA_PORT, host order
  std::optional<std::uint32_t> vni;         // NDA_VNI
  std::optional<std::uint32_t> src_vni;     // NDA_SRC_VNI
  std::optional<std::uint32_t> nh_id;       // NDA_NH_ID
  std::optional<std::uint16_t> state_mask;  // NDA_NDM_STATE_MASK (a bulk delete's filter)
  std::optional<std::uint8_t> flags_mask;   // NDA_NDM_FLAGS_MASK (a bulk delete's filter)
  bool dst_bad = false;                     // AF_BRIDGE: NDA_DST neither 4 nor 16 bytes long
  std::uint64_t present = 0;                // bit N: attribute type N was in the message (N < 64)
};

// Decodes a neighbour message. A dump may carry only a struct rtgenmsg (old clients).
// Errors: EINVAL for a short ndmsg, malformed TLVs, a destination whose size does not match
// the family, or a fixed-size attribute of the wrong size.
Result<NeighMessage> decode_neigh(const Message& m);

// Writes `n` as one message of type h.type, in Linux's attribute order.
// Errors: EMSGSIZE from the builder.
Result<void> encode_neigh(MessageBuilder& b, const Header& h, const NeighMessage& n);

// Writes a forwarding entry (family AF_BRIDGE) in the order Linux's fillers share
// (fdb_fill_info, vxlan_fdb_info, nlmsg_populate_fdb_fill): NDA_LLADDR, NDA_DST,
// NDA_MASTER, NDA_FLAGS_EXT, NDA_PORT, NDA_VNI, NDA_IFINDEX, NDA_SRC_VNI, NDA_CACHEINFO,
// NDA_VLAN. Errors: EMSGSIZE from the builder.
Result<void> encode_fdb(MessageBuilder& b, const Header& h, const NeighMessage& n);

}  // namespace ifcore::wire
