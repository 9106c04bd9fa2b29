// rtnl/wire/route.h — RTM_NEWROUTE / RTM_DELROUTE / RTM_GETROUTE: struct rtmsg and its RTA_*
// attributes as one value, decoded and encoded in the order of Linux's fib_dump_info
// (IPv4) and rt6_fill_node (IPv6).
#pragma once

#include <linux/rtnetlink.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ifcore/addr.h"
#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

// One hop of RTA_MULTIPATH (struct rtnexthop + its attributes).
struct RouteNexthop {
  std::uint8_t flags = 0;  // RTNH_F_*
  std::uint8_t hops = 0;   // weight - 1
  std::int32_t ifindex = 0;
  std::optional<IpAddr> gateway;  // RTA_GATEWAY (same family as the route)
  std::optional<IpAddr> via;      // RTA_VIA (struct rtvia: any family)

  friend bool operator==(const RouteNexthop&, const RouteNexthop&) = default;
};

// One RTAX_* metric inside RTA_METRICS. RTAX_CC_ALGO is a string, every other one a u32.
struct RouteMetric {
  std::uint16_t type = 0;
  std::uint32_t value = 0;
  std::string str;  // RTAX_CC_ALGO only

  friend bool operator==(const RouteMetric&, const RouteMetric&) = default;
};

struct RouteMessage {
  // rtmsg
  std::uint8_t family = 0;
  std::uint8_t dst_len = 0;
  std::uint8_t src_len = 0;
  std::uint8_t tos = 0;
  std::uint8_t table = 0;     // RT_TABLE_* (RT_TABLE_COMPAT when the id needs RTA_TABLE)
  std::uint8_t protocol = 0;  // RTPROT_*
  std::uint8_t scope = 0;     // RT_SCOPE_*
  std::uint8_t type = 0;      // RTN_*
  std::uint32_t flags = 0;    // RTM_F_*

  std::optional<std::uint32_t> table_id;   // RTA_TABLE
  std::optional<IpAddr> dst, src;          // RTA_DST, RTA_SRC
  std::optional<std::uint32_t> iif, oif;   // RTA_IIF, RTA_OIF
  std::optional<IpAddr> gateway;           // RTA_GATEWAY
  std::optional<IpAddr> via;               // RTA_VIA (not read in an IPv6 message)
  bool has_via = false;                    // an IPv6 message had RTA_VIA (Linux refuses it)
  std::optional<std::uint32_t> priority;   // RTA_PRIORITY (the metric)
  std::optional<IpAddr> prefsrc;           // RTA_PREFSRC
  std::vector<RouteMetric> metrics;        // RTA_METRICS (empty: absent)
  std::vector<RouteNexthop> multipath;     // RTA_MULTIPATH (empty: absent)
  std::optional<std::uint32_t> nh_id;      // RTA_NH_ID (a nexthop object; before the hops)
  std::optional<std::uint8_t> pref;        // RTA_PREF (IPv6 router preference)
  std::optional<std::uint64_t> expires;    // RTA_EXPIRES (u32 in IPv6 requests, u64 from ipmr)
  std::optional<rta_cacheinfo> cacheinfo;  // RTA_CACHEINFO
  // RTA_UID: the uid a lookup was made for. IPv4 `route get` replies only; when set, an
  // IPv4 message is written in rt_fill_info's order (TABLE, DST, SRC, OIF, PREFSRC,
  // GATEWAY, METRICS, MARK, UID, IIF, CACHEINFO) instead of fib_dump_info's; with `iif`
  // (an input route) RTA_UID is left out.
  std::optional<std::uint32_t> uid;
  // A lookup's flow (`ip route get ... mark M ipproto P sport S dport D`); RTA_MARK is
  // also in an IPv4 reply, before RTA_UID.
  std::optional<std::uint32_t> mark;          // RTA_MARK
  std::optional<std::uint8_t> ip_proto;       // RTA_IP_PROTO
  std::optional<std::uint16_t> sport, dport;  // RTA_SPORT / RTA_DPORT (host order)
  bool has_encap = false;                     // RTA_ENCAP / RTA_ENCAP_TYPE were present (ignored)

  // The table: RTA_TABLE when present, else rtm_table.
  std::uint32_t table_or_id() const { return table_id ? *table_id : table; }
};

// Decodes a route message (a request, a dump reply or a notification). Unknown types are
// skipped; RTA_ENCAP is not decoded (has_encap says it was there). A GETROUTE dump may
// carry a struct rtgenmsg only.
// Errors: EINVAL "rtmsg payload too short ...", EINVAL for malformed TLVs, addresses not
// matching the family, fixed-size attributes of the wrong size, a malformed rtnexthop;
// RTA_VIA as Linux's fib_gw_from_via reads it: EINVAL "Invalid attribute length for RTA_VIA",
// "Invalid IPv4 address in RTA_VIA", "Invalid IPv6 address in RTA_VIA", "Unsupported address family
// in RTA_VIA".
Result<RouteMessage> decode_route(const Message& m);

// Linux's checks of a route get request of `family` (AF_INET or AF_INET6;
// inet_rtm_valid_getroute_req, inet6_rtm_valid_getroute_req): a payload shorter than
// rtmsg is EINVAL "ipv4: Invalid header for route get request" ("ipv6: Invalid header for
// get route request"), strict or not. With `strict` (NETLINK_GET_STRICT_CHK), in Linux's
// order: prefix lengths other than 0 or the address's ("ipv4: Invalid values in header for
// route get request", with a table, protocol, scope or type too; "ipv6: Invalid prefix for
// get route request"), flags ("ipv4: Unsupported rtm_flags for route get request": any but
// RTM_F_NOTIFY, LOOKUP_TABLE, FIB_MATCH; "ipv6: Invalid flags for get route request": any
// but FIB_MATCH), an unknown attribute type ("Unknown attribute type", at it), bytes left
// over, RTA_SRC or RTA_DST with a zero length ("ipv4: rtm_src_len and rtm_dst_len must be
// 32 for IPv4", "ipv6: ... must be 128 for IPv6"), and any attribute but IIF, OIF, SRC,
// DST, IP_PROTO, SPORT, DPORT, MARK, UID ("ipv4: Unsupported attribute in route get
// request", "ipv6: Unsupported attribute in get route request"). All EINVAL.
Result<void> check_route_get(const Message& m, int family, bool strict);

// Writes `r` as one message of type h.type. IPv4 order (fib_dump_info): RTA_TABLE,
// RTA_DST, RTA_SRC, RTA_IIF, RTA_PRIORITY, RTA_METRICS, RTA_PREFSRC, then RTA_GATEWAY or
// RTA_VIA and RTA_OIF, or RTA_MULTIPATH; RTA_EXPIRES, RTA_CACHEINFO, RTA_PREF. IPv6
// (rt6_fill_node): RTA_TABLE, RTA_DST, RTA_SRC, RTA_IIF, RTA_PREFSRC, RTA_METRICS,
// RTA_PRIORITY, next hops, RTA_EXPIRES, RTA_CACHEINFO, RTA_PREF.
// Errors: EMSGSIZE from the builder.
Result<void> encode_route(MessageBuilder& b, const Header& h, const RouteMessage& r);

}  // namespace ifcore::wire
