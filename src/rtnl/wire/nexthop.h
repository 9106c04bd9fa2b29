// rtnl/wire/nexthop.h — RTM_NEWNEXTHOP / RTM_DELNEXTHOP / RTM_GETNEXTHOP: struct nhmsg and
// its NHA_* attributes as one value, decoded from requests and notifications and encoded in
// the order of Linux's nh_fill_node (NHA_ID, NHA_FDB, then a group's NHA_GROUP_TYPE,
// NHA_GROUP, NHA_RES_GROUP and NHA_OP_FLAGS, or a single one's NHA_BLACKHOLE or NHA_OIF and
// NHA_GATEWAY).
#pragma once

#include <linux/nexthop.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "ifcore/addr.h"
#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

// Newer than the uapi headers this builds with (<linux/nexthop.h> of Linux 6.12): the
// operation flags a group dump carries, and the bit that says nexthop_grp's reserved bytes
// are zero in what follows.
inline constexpr std::uint16_t kNhaOpFlags = 14;
inline constexpr std::uint32_t kNhaOpFlagRespGrpResvd0 = 1u << 31;

// NHA_RES_GROUP's attributes (absent: not given).
struct NexthopResGroup {
  std::optional<std::uint16_t> buckets;           // NHA_RES_GROUP_BUCKETS
  std::optional<std::uint32_t> idle_timer;        // NHA_RES_GROUP_IDLE_TIMER
  std::optional<std::uint32_t> unbalanced_timer;  // NHA_RES_GROUP_UNBALANCED_TIMER
  std::optional<std::uint64_t> unbalanced_time;   // NHA_RES_GROUP_UNBALANCED_TIME
};

struct NexthopMessage {
  // nhmsg
  std::uint8_t family = 0;
  std::uint8_t scope = 0;
  std::uint8_t protocol = 0;
  std::uint8_t resvd = 0;
  std::uint32_t flags = 0;

  std::optional<std::uint32_t> id;                // NHA_ID
  std::optional<std::vector<nexthop_grp>> group;  // NHA_GROUP (whole entries)
  bool group_bad_length = false;                  // NHA_GROUP's length is not a multiple of 8, or 0
  std::optional<std::uint16_t> group_type;        // NHA_GROUP_TYPE
  bool blackhole = false;                         // NHA_BLACKHOLE
  std::optional<std::uint32_t> oif;               // NHA_OIF
  std::optional<IpAddr> gateway;                  // NHA_GATEWAY (4 or 16 bytes)
  std::optional<std::size_t> gateway_len;         // its payload length as sent
  bool encap = false, encap_type = false;         // NHA_ENCAP / NHA_ENCAP_TYPE were present
  bool groups = false;                            // NHA_GROUPS (dump filter)
  std::optional<std::uint32_t> master;            // NHA_MASTER (dump filter)
  bool fdb = false;                               // NHA_FDB
  std::optional<NexthopResGroup> res_group;       // NHA_RES_GROUP
  std::optional<std::uint32_t> op_flags;          // NHA_OP_FLAGS
  // Attributes past NHA_GROUP_TYPE other than NHA_FDB and NHA_RES_GROUP (Linux:
  // nh_check_attr_group refuses them beside a group).
  bool other_attrs = false;
};

// RTM_NEWNEXTHOPBUCKET / RTM_GETNEXTHOPBUCKET: struct nhmsg, NHA_ID and the nested
// NHA_RES_BUCKET (Linux: nh_fill_res_bucket writes NHA_RES_BUCKET_INDEX,
// NHA_RES_BUCKET_NH_ID and NHA_RES_BUCKET_IDLE_TIME, in that order), with a dump's filters.
struct NexthopBucketMessage {
  std::uint8_t family = 0, scope = 0, protocol = 0, resvd = 0;
  std::uint32_t flags = 0;
  std::optional<std::uint32_t> id;         // NHA_ID: the group
  std::optional<std::uint32_t> oif;        // NHA_OIF (dump filter)
  std::optional<std::uint32_t> master;     // NHA_MASTER (dump filter)
  bool groups = false, fdb = false;        // NHA_GROUPS, NHA_FDB (read by a dump's checks)
  bool bucket = false;                     // NHA_RES_BUCKET was present
  std::optional<std::uint16_t> index;      // NHA_RES_BUCKET_INDEX
  std::optional<std::uint32_t> nhid;       // NHA_RES_BUCKET_NH_ID
  std::optional<std::uint64_t> idle_time;  // NHA_RES_BUCKET_IDLE_TIME, clock ticks
};

// Decodes a bucket message. Errors: EINVAL for a short header, malformed TLVs or a
// fixed-size attribute of the wrong size ("invalid attribute length").
Result<NexthopBucketMessage> decode_nexthop_bucket(const Message& m);

// Writes `n` as one message of type h.type, in Linux's attribute order.
Result<void> encode_nexthop_bucket(MessageBuilder& b, const Header& h,
                                   const NexthopBucketMessage& n);

// Decodes a nexthop message. Errors: EINVAL for a short header or malformed TLVs, ERANGE
// ("Attribute failed policy validation") for a fixed-size attribute of the wrong size.
Result<NexthopMessage> decode_nexthop(const Message& m);

// Writes `n` as one message of type h.type, in Linux's attribute order.
Result<void> encode_nexthop(MessageBuilder& b, const Header& h, const NexthopMessage& n);

}  // namespace ifcore::wire
