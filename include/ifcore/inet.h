// ifcore/inet.h — the protocol layers that hold references on devices: IPv4 addresses
// (inet), IPv6 addresses (inet6), the route tables of both families (fib) and the route
// cache entries (dst) through which every route's next hop holds its device.
//
// Everything here runs under the engine's control lock: every function takes the
// `Control` that proves it. Values are plain copies; nothing returned points into the
// engine. Constants are the uapi ones: AF_INET/AF_INET6, IFA_F_* (<linux/if_addr.h>),
// RT_TABLE_*, RTN_*, RTPROT_*, RT_SCOPE_*, RTNH_F_* (<linux/rtnetlink.h>).
//
// The rtnetlink layer learns about changes through a `ProtoListener`, called in the order
// Linux sends RTM_NEWADDR/RTM_DELADDR/RTM_NEWROUTE/RTM_DELROUTE (see each function).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ifcore/addr.h"
#include "ifcore/clock.h"
#include "ifcore/engine.h"
#include "ifcore/neigh_table.h"
#include "ifcore/nexthop.h"
#include "ifcore/result.h"

namespace ifcore::inet {

// Linux: INFINITY_LIFE_TIME — a lifetime that never ends.
inline constexpr std::uint32_t kForever = 0xFFFFFFFFu;

// ---------------------------------------------------------------- addresses

// One address as RTM_NEWADDR reports it (ifaddrmsg + IFA_* attributes).
struct AddrInfo {
  int family = 0;  // AF_INET or AF_INET6
  int ifindex = 0;
  std::uint8_t prefixlen = 0;
  std::uint32_t flags = 0;  // IFA_F_* (SECONDARY, PERMANENT, NODAD, NOPREFIXROUTE, TENTATIVE)
  std::uint8_t scope = 0;   // RT_SCOPE_*
  IpAddr local;             // IFA_LOCAL: the address itself
  IpAddr address;           // IFA_ADDRESS: the peer on point-to-point links, else == local
  IpAddr broadcast;         // IFA_BROADCAST (IPv4; empty if none)
  std::string label;        // IFA_LABEL (IPv4; the device name unless given)
  // IFA_CACHEINFO: the seconds left of each lifetime as the address is reported (Linux:
  // inet_fill_ifaddr / inet6_fill_ifaddr count them down from the last update), and when
  // it was made and last updated on the engine's clock (Linux: cstamp, tstamp).
  std::uint32_t valid_lft = kForever, preferred_lft = kForever;
  TimePoint cstamp{}, tstamp{};
  std::uint32_t rt_priority = 0;  // IFA_RT_PRIORITY: metric of the prefix route (0 = default)
  std::uint8_t proto = 0;         // IFA_PROTO
};

// What RTM_NEWADDR / RTM_DELADDR ask for.
struct AddrRequest {
  int family = 0;
  int ifindex = 0;
  std::uint8_t prefixlen = 0;
  std::optional<IpAddr> local;       // IFA_LOCAL (IPv6 requests may give only IFA_ADDRESS)
  std::optional<IpAddr> address;     // IFA_ADDRESS (the peer)
  std::optional<IpAddr> broadcast;   // IPv4
  std::optional<std::string> label;  // IPv4
  std::uint8_t scope = 0;
  std::uint32_t flags = 0;  // IFA_F_NODAD, IFA_F_NOPREFIXROUTE, IFA_F_HOMEADDRESS...
  std::uint32_t rt_priority = 0;
  std::uint8_t proto = 0;
  // IFA_CACHEINFO's lifetimes in seconds (kForever: none). A finite valid lifetime makes
  // the address dynamic: it is deprecated when the preferred one ends and removed when the
  // valid one does (the engine's timers; ifcore/timer.h).
  std::uint32_t valid_lft = kForever, preferred_lft = kForever;
  bool replace = false;  // NLM_F_REPLACE: an existing address is updated, not EEXIST
};

// Adds an address, or with `replace` updates an existing one's lifetimes, protocol and
// metric (IPv6: and its flags). Linux: inet_rtm_newaddr (IPv4), inet6_rtm_newaddr (IPv6).
// Notifies RTM_NEWADDR, then RTM_NEWROUTE for the routes it makes (IPv4: local route in
// table local always; on an up device the subnet broadcast and the connected route in
// main. IPv6 on an up device: the prefix route, metric 256, unless IFA_F_NOPREFIXROUTE,
// and a local route in table local; on a down device the address stays tentative). An IPv4
// address of 0.0.0.0 is dropped, and the call succeeds (as Linux's does).
// Context: control lock. Errors: ENODEV ("ipv4: Device not found"), EINVAL (prefix length,
// missing local, scope), EEXIST ("ipv4: Address already assigned" / "ipv6: address already
// assigned"), EACCES ("IPv6 is disabled on this device"), EINVAL ("ipv4: address lifetime
// invalid" / "ipv6: address lifetime invalid": a zero valid lifetime, or a preferred one
// longer than the valid one).
Result<AddrInfo> add_address(Control& ctl, Namespace& ns, const AddrRequest& req);

// Deletes the first address that matches `req` (local, and label/prefix when given).
// IPv4: deleting a primary deletes its secondaries unless promote_secondaries is on for the
// namespace ("all") or the device, in which case the first secondary is promoted
// (RTM_NEWADDR for it). Context: control lock. Errors: ENODEV, EADDRNOTAVAIL
// ("ipv4: Address not found" / "ipv6: address not found").
Result<void> delete_address(Control& ctl, Namespace& ns, const AddrRequest& req);

// Addresses of `family` (AF_UNSPEC: both, IPv4 first) on `ifindex` (0: every device), in
// device order then list order (primaries before secondaries). Context: control lock.
std::vector<AddrInfo> list_addresses(Control& ctl, Namespace& ns, int family = 0, int ifindex = 0);
// True when a device of `ns` has `a` as its local address (either family; a lookup, not a
// walk of the devices). Context: control lock.
bool is_local_address(Control& ctl, Namespace& ns, const IpAddr& a);

// ---------------------------------------------------------------- routes

// A route's metrics (RTA_METRICS: RTAX_MTU, RTAX_ADVMSS, RTAX_HOPLIMIT, RTAX_LOCK...), as
// Linux's ip_metrics_convert keeps them: the nonzero values by type, in type order, and
// the congestion control algorithm (RTAX_CC_ALGO) by name.
struct RouteMetrics {
  std::vector<std::pair<std::uint16_t, std::uint32_t>> values;
  std::string cc_algo;  // empty: none
  bool empty() const { return values.empty() && cc_algo.empty(); }
  friend bool operator==(const RouteMetrics&, const RouteMetrics&) = default;
};

// One next hop of a multipath route (RTA_MULTIPATH's struct rtnexthop and RTA_GATEWAY).
struct NextHop {
  IpAddr gateway;           // empty: none
  int oif = 0;              // its device
  std::uint8_t weight = 1;  // 1..256 (rtnh_hops + 1)
  std::uint32_t flags = 0;  // RTNH_F_ONLINK as given; reports add RTNH_F_DEAD/LINKDOWN
  friend bool operator==(const NextHop&, const NextHop&) = default;
};

// One route as RTM_NEWROUTE reports it (rtmsg + RTA_* attributes).
struct RouteInfo {
  int family = 0;
  std::uint32_t table = 0;  // RT_TABLE_MAIN, RT_TABLE_LOCAL, or any id
  IpAddr dst;               // the prefix (masked); empty never: 0.0.0.0 / :: for default
  std::uint8_t dst_len = 0;
  // IPv6: the source prefix the route is for (RTA_SRC, rtm_src_len; Linux's
  // CONFIG_IPV6_SUBTREES); src_len 0: any source, `src` then empty.
  IpAddr src;
  std::uint8_t src_len = 0;
  std::uint8_t tos = 0;
  IpAddr gateway;              // empty: none
  int oif = 0;                 // 0: none (blackhole, unreachable, prohibit)
  std::uint32_t priority = 0;  // RTA_PRIORITY (the metric)
  std::uint8_t protocol = 0;   // RTPROT_*
  std::uint8_t scope = 0;      // RT_SCOPE_*
  std::uint8_t type = 0;       // RTN_UNICAST, RTN_LOCAL, RTN_BROADCAST, RTN_MULTICAST...
  IpAddr prefsrc;              // RTA_PREFSRC; empty: none
  std::uint32_t flags = 0;     // RTNH_F_LINKDOWN, RTNH_F_ONLINK, RTNH_F_DEAD
  RouteMetrics metrics;        // RTA_METRICS
  // IPv6: when the route ends (Linux: RTF_EXPIRES, the prefix route of an address with a
  // finite valid lifetime, or a route added with RTA_EXPIRES); RTA_CACHEINFO's rta_expires
  // counts down to it.
  std::optional<TimePoint> expires;
  std::uint8_t pref = 0;  // IPv6: RTA_PREF (ICMPV6_ROUTER_PREF_*: medium 0, high 1, low 3)
  // A multipath route's next hops (RTA_MULTIPATH; two or more); `gateway` and `oif` are
  // then the first hop's, kept for lookups, and not reported on their own.
  std::vector<NextHop> nexthops;
  // RTA_NH_ID: the nexthop object the route names (0: none); gateway, oif and nexthops
  // are then that object's, as Linux reports them.
  std::uint32_t nhid = 0;
};

// What RTM_NEWROUTE / RTM_DELROUTE / RTM_GETROUTE ask for.
struct RouteRequest {
  int family = 0;
  std::uint32_t table = 0;  // 0: main
  IpAddr dst;               // empty: the default route
  std::uint8_t dst_len = 0;
  std::uint8_t tos = 0;
  std::optional<IpAddr> gateway;
  int oif = 0;
  std::optional<std::uint32_t> priority;  // IPv6 default 1024 (IP6_RT_PRIO_USER), IPv4 0
  std::optional<std::uint8_t> protocol;   // add: default RTPROT_BOOT; delete: match if given
  std::optional<std::uint8_t> scope;      // add: default from type and gateway
  std::optional<std::uint8_t> type;       // add: default RTN_UNICAST; delete: match if given
  std::optional<IpAddr> prefsrc;
  std::uint32_t flags = 0;  // RTNH_F_ONLINK
  RouteMetrics metrics;     // add: checked and clamped by the caller (rtnl)
  // RTA_MULTIPATH: each hop is resolved as a route's gateway and device would be; one hop
  // makes an ordinary route, as in Linux.
  std::vector<NextHop> nexthops;
  // RTA_NH_ID: a nexthop object instead of gateway, oif and nexthops (add); delete: match.
  std::uint32_t nhid = 0;
  // RTA_SRC and rtm_src_len: an IPv6 route's source prefix (IPv4 ignores them, as Linux).
  IpAddr src;  // empty: ::
  std::uint8_t src_len = 0;
  // IPv6 only (IPv4 ignores them, as Linux): RTA_PREF, the router preference (any value
  // but high and low is medium); RTA_EXPIRES, the seconds until the route ends.
  std::uint8_t pref = 0;
  std::optional<std::uint32_t> expires;
  // Netlink flags of RTM_NEWROUTE. `ip route add` = create+excl, `replace` = create+replace,
  // `append` = create+append, `change` = replace.
  bool create = true, excl = true, replace = false, append = false;
};

// Adds a route. The next hop (oif, or the device of the connected route that reaches the
// gateway) holds a reference on its device through a route-cache (dst) entry.
// Notifies RTM_NEWROUTE. Context: control lock.
// Errors: ENODEV (oif unknown; "Nexthop device required for onlink"), ENETDOWN ("Nexthop
// device is not up"), ENETUNREACH ("Nexthop has invalid gateway", IPv4 gateway with no
// route), EHOSTUNREACH (IPv6 gateway with no route in the route's table, main or local),
// EINVAL ("Egress device not specified", "Nexthop has invalid gateway or device mismatch",
// ...), EEXIST, ENOENT (no create flag and nothing to replace).
Result<RouteInfo> add_route(Control& ctl, Namespace& ns, const RouteRequest& req);

// Deletes the first route matching `req` (prefix and table; gateway, oif, metric, protocol,
// type and scope when given; IPv4: `nexthops` compared hop by hop, and a route through a
// nexthop object only when neither oif, gateway nor hops are given, as fib_nh_match).
// IPv6 with `nexthops`: each hop is deleted on its own (its oif and gateway in place of the
// request's), as ip6_route_multipath_del; the result is the last failure, so some hops may
// be gone on ESRCH. Notifies RTM_DELROUTE. Context: control lock.
// Errors: ESRCH (no such route).
Result<void> delete_route(Control& ctl, Namespace& ns, const RouteRequest& req);

// True when the table `table` of `family` (AF_INET, AF_INET6) exists: IPv6's main and local
// always, any other once a route, a rule or a VRF made it (tables are never taken away, as
// in Linux). Context: control lock.
bool has_table(Control& ctl, Namespace& ns, int family, std::uint32_t table);

// Routes of `family` (AF_UNSPEC: both) in `table` (nullopt: every table). IPv4 first; in a
// family, by table id then prefix. Context: control lock.
std::vector<RouteInfo> list_routes(Control& ctl, Namespace& ns, int family = 0,
                                   std::optional<std::uint32_t> table = std::nullopt);

// The flow a lookup is for (Linux: struct flowi4/flowi6), as `ip route get` gives it.
struct Flow {
  IpAddr dst;
  IpAddr src;              // empty: any
  int iif = 0;             // 0: a locally made packet (Linux: LOOPBACK_IFINDEX for rules)
  int oif = 0;             // restricts the device; also what `oif` rules match
  std::uint32_t mark = 0;  // what `fwmark` rules match
  std::uint32_t uid = 0;
  std::uint8_t tos = 0;
  std::uint8_t ip_proto = 0;
  std::uint16_t sport = 0, dport = 0;
  // `fibmatch`: answer with the table's route that matched, as a dump shows it, instead
  // of the host route of the flow (none matched, as for the on-link answer: EHOSTUNREACH).
  bool fib_match = false;
};

// ---------------------------------------------------------------- multipath hash
// How a lookup picks one hop of a multipath route or a nexthop group (Linux:
// fib_select_multipath, fib6_select_path, nexthop_select_path): a 31-bit hash of the
// flow's fields, set per namespace by the sysctls net.ipv4.fib_multipath_hash_policy,
// _fields and _seed and net.ipv6.fib_multipath_hash_policy and _fields, is compared with
// each live hop's upper bound (its share of 2^31 by the running sum of the live hops'
// weights; a hop whose device is down has none): the first hop whose bound is not below
// the hash carries the flow. A resilient group takes the bucket hash % buckets.
//
// The hash function is ifcore's own (the kernel's is siphash over its struct flow_keys,
// keyed at random at each boot unless a seed is set): which hop carries a given flow
// differs from Linux's choice, but what is hashed, the weights' shares, and that a dead
// hop is never chosen are the same. With a seed, ifcore's choice is fixed for a flow.

// The fields a custom policy (3) hashes: the values of the fib_multipath_hash_fields
// sysctl (Linux: FIB_MULTIPATH_HASH_FIELD_*, include/net/ip_fib.h; not in the uapi).
inline constexpr std::uint32_t kMpHashSrcIp = 1u << 0, kMpHashDstIp = 1u << 1,
                               kMpHashIpProto = 1u << 2, kMpHashFlowlabel = 1u << 3,
                               kMpHashSrcPort = 1u << 4, kMpHashDstPort = 1u << 5;
inline constexpr std::uint32_t kMpHashOuterFields = 0x3f;  // the six above
inline constexpr std::uint32_t kMpHashAllFields = 0xfff;   // and the inner headers' six
inline constexpr std::uint32_t kMpHashDefaultFields = kMpHashSrcIp | kMpHashDstIp | kMpHashIpProto;

struct MultipathHashConf {
  // 0: L3 (addresses; IPv6 adds the flow label and protocol), 1: L4 (addresses, protocol
  // and ports), 2: L3, or the inner packet's L3 (a lookup has none), 3: `fields`.
  std::uint8_t policy4 = 0, policy6 = 0;
  std::uint32_t fields4 = kMpHashDefaultFields, fields6 = kMpHashDefaultFields;
  std::uint32_t seed = 0;  // net.ipv4.fib_multipath_hash_seed (both families); 0: random
  // net.ipv4.fib_multipath_use_neigh: an IPv4 multipath route's hop whose gateway has a
  // neighbour entry in no valid state is passed over (a nexthop group's always is).
  bool use_neigh = false;
  friend bool operator==(const MultipathHashConf&, const MultipathHashConf&) = default;
};

// Context: control lock.
MultipathHashConf multipath_hash_conf(Control& ctl, Namespace& ns);
// Context: control lock. Errors (nothing changes): EINVAL for a policy above 3 or fields
// outside 1..kMpHashAllFields (Linux: proc_fib_multipath_hash_policy / _fields ranges).
Result<void> set_multipath_hash_conf(Control& ctl, Namespace& ns, const MultipathHashConf& c);
// net.ipv4.nexthop_compat_mode (Linux: 1 by default, one setting for both families): while
// on, a route through a nexthop object shows the object's hops beside RTA_NH_ID in dumps
// and notifications, a nexthop's replacement announces the routes through it and its
// deletion the IPv6 routes it takes; while off, none of that. Context: control lock.
bool nexthop_compat_mode(Control& ctl, Namespace& ns);
Result<void> set_nexthop_compat_mode(Control& ctl, Namespace& ns, bool on);
// The 31-bit hash a lookup of `flow` (its family: flow.dst's) compares with the hops'
// bounds. Context: control lock.
std::uint32_t multipath_hash(Control& ctl, Namespace& ns, const Flow& flow);

// `ip route get`: the route a packet of `flow` takes, through the namespace's rules (with
// only the default ones: table local, then main), as a host route with the source address
// the device would use. Context: control lock. Errors: ENETUNREACH ("Network is
// unreachable"; also an `unreachable` rule), EHOSTUNREACH / EINVAL / EACCES (an
// unreachable, blackhole or prohibit route, or a blackhole / prohibit rule).
Result<RouteInfo> get_route(Control& ctl, Namespace& ns, const Flow& flow);
inline Result<RouteInfo> get_route(Control& ctl, Namespace& ns, const IpAddr& dst, int oif = 0) {
  Flow f;
  f.dst = dst;
  f.oif = oif;
  return get_route(ctl, ns, f);
}

// ---------------------------------------------------------------- policy rules

// A range of a rule's selectors (Linux: fib_rule_uid_range, fib_rule_port_range).
template <class T>
struct Range {
  T start = 0, end = 0;
  friend bool operator==(const Range&, const Range&) = default;
};

// One policy-routing rule as RTM_NEWRULE reports it (fib_rule_hdr + FRA_* attributes).
// Constants: FR_ACT_*, FIB_RULE_* (<linux/fib_rules.h>).
struct RuleInfo {
  int family = 0;              // AF_INET or AF_INET6
  std::uint32_t priority = 0;  // FRA_PRIORITY (Linux: pref)
  std::uint8_t action = 0;     // FR_ACT_TO_TBL, GOTO, NOP, BLACKHOLE, UNREACHABLE, PROHIBIT...
  std::uint32_t table = 0;     // FRA_TABLE (FR_ACT_TO_TBL)
  std::uint32_t flags = 0;     // FIB_RULE_INVERT as given; reports add the DETACHED and
                               // UNRESOLVED bits
  IpAddr src, dst;             // FRA_SRC / FRA_DST (empty: any)
  std::uint8_t src_len = 0, dst_len = 0;
  std::uint8_t tos = 0;          // the DSCP bits of the tos byte
  std::string iifname, oifname;  // FRA_IIFNAME / FRA_OIFNAME (empty: any)
  std::uint32_t fwmark = 0, fwmask = 0;
  std::uint32_t goto_target = 0;                     // FRA_GOTO (FR_ACT_GOTO)
  std::uint32_t flow = 0;                            // FRA_FLOW (IPv4 realms)
  std::uint64_t tun_id = 0;                          // FRA_TUN_ID (host order)
  std::uint8_t l3mdev = 0;                           // FRA_L3MDEV
  std::optional<Range<std::uint32_t>> uid;           // FRA_UID_RANGE
  std::optional<Range<std::uint16_t>> sport, dport;  // FRA_SPORT_RANGE / FRA_DPORT_RANGE
  std::uint8_t ip_proto = 0;                         // FRA_IP_PROTO
  std::uint8_t protocol = 0;                         // FRA_PROTOCOL (RTPROT_KERNEL: a default rule)
  std::int32_t suppress_prefixlen = -1;              // FRA_SUPPRESS_PREFIXLEN (-1: none)
  std::int32_t suppress_ifgroup = -1;                // FRA_SUPPRESS_IFGROUP (-1: none)
};

// What RTM_NEWRULE / RTM_DELRULE ask for: a RuleInfo and which of its fields were given
// (a delete matches on those only, as Linux's rule_find).
struct RuleRequest {
  RuleInfo rule;
  bool has_priority = false, has_fwmark = false, has_fwmask = false, has_goto = false;
  bool has_flow = false;
  bool excl = false;  // NLM_F_EXCL: an identical rule is EEXIST
};

// Adds a rule after the last one of lower or equal priority (Linux: fib_nl_newrule). No
// priority: one below the second rule's. A rule naming a device that does not exist is
// kept, detached, and attaches when one of that name appears. Notifies RTM_NEWRULE.
// Context: control lock. Errors (errno, extack): EAFNOSUPPORT ("Rule family not
// supported"), EINVAL ("Invalid source address", "Invalid dst address", "Invalid dsfield
// (tos): ECN bits must be 0", "Invalid uid range", "Invalid sport range", "Invalid dport
// range", "Invalid l3mdev attribute", "l3mdev and table are mutually exclusive", "Missing
// goto target for action goto", "Backward goto not supported", "Invalid table" (IPv6
// table 0)), EEXIST (with excl, no extack).
Result<RuleInfo> add_rule(Control& ctl, Namespace& ns, const RuleRequest& req);
// Deletes the first rule that matches what `req` gives (Linux: fib_nl_delrule). Notifies
// RTM_DELRULE. Context: control lock. Errors: EAFNOSUPPORT, ENOENT (no extack).
Result<void> delete_rule(Control& ctl, Namespace& ns, const RuleRequest& req);
// The rules of `family` (AF_UNSPEC: IPv4's, then IPv6's) in order. Context: control lock.
std::vector<RuleInfo> list_rules(Control& ctl, Namespace& ns, int family = 0);

// ---------------------------------------------------------------- neighbours

// One neighbour entry as RTM_NEWNEIGH reports it (ndmsg + NDA_*). Linux: struct neighbour
// of arp_tbl (IPv4) and nd_tbl (IPv6), and with NTF_PROXY a struct pneigh_entry. An entry
// holds its device; every entry of a device goes when the device goes down or is
// unregistered, the ones that are not NUD_PERMANENT when its carrier goes, all of them
// when its hardware address changes (neigh_ifdown, neigh_carrier_down, neigh_changeaddr).
// ifcore sends no frames and runs no timers: a state stays as it was set.
struct NeighInfo {
  int family = 0;   // AF_INET or AF_INET6
  int ifindex = 0;  // 0: a proxy entry for every device
  IpAddr dst;       // IPv4 on loopback and point-to-point devices: 0.0.0.0 (one per device)
  std::optional<HwAddr> lladdr;  // reported while the state is NUD_VALID
  std::uint16_t state = 0;       // NUD_* (NUD_NONE for proxy entries)
  std::uint8_t flags = 0;        // NTF_ROUTER, NTF_PROXY, NTF_EXT_LEARNED
  std::uint8_t type = 0;         // RTN_UNICAST, RTN_MULTICAST, RTN_BROADCAST, RTN_LOCAL
  std::uint8_t protocol = 0;     // NDA_PROTOCOL (0: none)
  std::uint32_t probes = 0;
  std::uint32_t refcnt = 0;  // Linux: users besides the table (1 while a timer runs)
  // Seconds ago, in clock ticks of 1/100 s (NDA_CACHEINFO).
  std::uint32_t confirmed = 0, used = 0, updated = 0;
};

// What RTM_NEWNEIGH / RTM_DELNEIGH / RTM_GETNEIGH ask for.
struct NeighRequest {
  int family = 0;
  int ifindex = 0;  // required except for proxy entries
  std::optional<IpAddr> dst;
  std::optional<HwAddr> lladdr;
  std::uint16_t state = 0;  // NUD_*
  std::uint8_t flags = 0;   // NTF_ROUTER, NTF_PROXY, NTF_EXT_LEARNED, NTF_USE
  std::optional<std::uint8_t> protocol;
  // Netlink flags of RTM_NEWNEIGH: `ip neigh add` = create+excl, `replace` =
  // create+replace, `change` = replace.
  bool create = true, excl = true, replace = false;
};

// Adds or updates an entry (Linux: neigh_add, __neigh_update). Notifies RTM_NEWNEIGH when
// the entry is new or its state, address or flags changed. Context: control lock.
// Errors: EINVAL ("Network address not specified", "Invalid link address", "No link layer
// address given", "Device not specified"), ENODEV, EEXIST (create+excl of an existing
// entry), ENOENT (no create flag, no entry), EAFNOSUPPORT.
Result<NeighInfo> add_neigh(Control& ctl, Namespace& ns, const NeighRequest& req);

// Deletes an entry (Linux: neigh_delete): RTM_NEWNEIGH as it turns NUD_FAILED, then
// RTM_DELNEIGH; a proxy entry goes without notification. Context: control lock.
// Errors: EINVAL, ENODEV, ENOENT.
Result<void> delete_neigh(Control& ctl, Namespace& ns, const NeighRequest& req);

// The entries of `family` (AF_UNSPEC: IPv4 then IPv6), newest first, on `ifindex` (0:
// all); with `proxy`, the proxy entries instead. Context: control lock.
std::vector<NeighInfo> list_neighs(Control& ctl, Namespace& ns, int family, bool proxy,
                                   int ifindex = 0);

// One entry (Linux: neigh_get). Context: control lock. Errors: EINVAL, ENODEV, ENOENT
// ("Neighbour entry not found").
Result<NeighInfo> get_neigh(Control& ctl, Namespace& ns, const NeighRequest& req);

// Entries held, for the bench and the tests. Context: control lock.
std::size_t neigh_count(Control& ctl);

// ---------------------------------------------------------------- settings (sysctls)

// The scopes of a setting, as NETCONFA_IFINDEX_* in <linux/netconf.h>.
inline constexpr int kConfAll = -1;      // net.ipv{4,6}.conf.all: applies to every device
inline constexpr int kConfDefault = -2;  // net.ipv{4,6}.conf.default: copied to new devices

// The integer settings keep the value written, as /proc/sys does (proc_dointvec): Linux
// reads most of them as booleans (nonzero: on) and reports them as written.
struct Inet4Conf {
  std::int32_t forwarding = 0;
  bool promote_secondaries = false;  // effective if set on "all" OR on the device
  std::int32_t rp_filter = 0;        // 0 off, 1 strict, 2 loose (any value is kept)
  std::int32_t proxy_arp = 0;        // netconf: NETCONFA_PROXY_NEIGH
  std::int32_t ignore_routes_with_linkdown = 0;
  std::int32_t bc_forwarding = 0;
  std::int32_t mc_forwarding = 0;               // read-only: ifcore runs no multicast router
  NeighParms arp = NeighParms::arp_defaults();  // arp_cache's parameters (neigh_table.h)
};
struct Inet6Conf {
  bool disable_ipv6 = false;
  std::int32_t forwarding = 0;
  std::int32_t proxy_ndp = 0;  // netconf: NETCONFA_PROXY_NEIGH
  std::int32_t ignore_routes_with_linkdown = 0;
  std::int32_t force_forwarding = 0;  // 0 or 1 (Linux 6.17+): forward on this device alone
  std::uint8_t addr_gen_mode = 0;     // IN6_ADDR_GEN_MODE_EUI64 (0), _NONE (1), _RANDOM (3)
  // Keep permanent addresses when the device goes down (effective if set on "all" OR on the
  // device). Linux 2.6.35-36 always did; since 4.6 it is this sysctl, off by default.
  bool keep_addr_on_down = false;
  // Duplicate address detection (Linux: accept_dad; ifcore's DAD ends at once where it runs).
  // Below 1 on "all" and on the device, a new address skips it: never tentative, even on a
  // device that is down or has no carrier (addrconf_dad_begin).
  std::int32_t accept_dad = 1;
  // `ip token` (IFLA_INET6_TOKEN): the interface identifier, the low 8 bytes of an
  // address, for addresses made from router advertisements. A device's own, never a
  // sysctl: "all" and "default" keep zeros.
  std::array<std::uint8_t, 8> token{};
  NeighParms nd = NeighParms::nd_defaults();  // ndisc_cache's parameters (neigh_table.h)
};

// Reads a scope's settings: kConfAll, kConfDefault or an ifindex.
// Context: control lock. Errors: ENODEV (no such device).
Result<Inet4Conf> inet4_conf(Control& ctl, Namespace& ns, int ifindex);
Result<Inet6Conf> inet6_conf(Control& ctl, Namespace& ns, int ifindex);
// What a write of kConfAll copies to the default and to every device. A sysctl write copies
// only the key it writes, and only the keys Linux copies (devinet_sysctl_forward;
// addrconf_sysctl_forward, addrconf_sysctl_disable, addrconf_sysctl_addr_gen_mode); the
// defaults below copy forwarding (IPv4) and forwarding and disable_ipv6 (IPv6) together.
enum ConfCopy : unsigned {
  kCopyNone = 0,
  kCopyForwarding = 1u << 0,
  kCopyDisableIpv6 = 1u << 1,  // IPv6 only
  kCopyAddrGenMode = 1u << 2,  // IPv6 only
  // IPv6 only (Linux: addrconf_fixup_linkdown); IPv4 keeps "all" to itself.
  kCopyIgnoreLinkdown = 1u << 3,
  // IPv6 only: "all" to every device, not the default, when it changed
  // (addrconf_force_forward_change).
  kCopyForceForwarding = 1u << 4,
};
// Writes a scope's settings as the sysctls do: writing "all" sets every device and the
// default too (the fields in `copy`); disabling IPv6 on a device removes its IPv6 addresses
// and routes; enabling it on an up device makes the link-local address. An IPv4 default
// setting also goes to the devices that never had their own written (Linux:
// devinet_copy_dflt_conf; forwarding excepted).
// Announces the netconf settings that changed (RTM_NEWNETCONF, one attribute each, see
// NetconfInfo) as Linux's sysctl handlers do: IPv4 (devinet_conf_proc,
// devinet_sysctl_forward) when the value changed, forwarding of "all" for "all", the
// default and every device in that order; IPv6 (addrconf_fixup_forwarding,
// addrconf_fixup_linkdown, addrconf_sysctl_proxy_ndp) forwarding and
// ignore_routes_with_linkdown when they turn on or off, of "all" for the default, the
// devices and then "all", proxy_ndp when its value changed, force_forwarding when it
// changed (of "all": "all" first, then each device that changed), with the ifindex alone.
// Context: control lock. Errors: ENODEV.
// The IPv4 settings a device has written for itself (Linux: the ipv4_devconf.state bit
// devinet_conf_proc sets on every write, whether the value changed or not): a default
// written later no longer reaches them. set_inet4_conf on a device marks those in `own`
// and every one whose value changed.
enum ConfOwn4 : unsigned {
  kOwn4Forwarding = 1u << 0,
  kOwn4Promote = 1u << 1,
  kOwn4RpFilter = 1u << 2,
  kOwn4ProxyArp = 1u << 3,
  kOwn4IgnoreLinkdown = 1u << 4,
  kOwn4BcForwarding = 1u << 5,
};
Result<void> set_inet4_conf(Control& ctl, Namespace& ns, int ifindex, const Inet4Conf& c,
                            unsigned copy = kCopyForwarding, unsigned own = 0);
Result<void> set_inet6_conf(Control& ctl, Namespace& ns, int ifindex, const Inet6Conf& c,
                            unsigned copy = kCopyForwarding | kCopyDisableIpv6);

// What Linux reports about a device's protocol state in IFLA_AF_SPEC (rtnl_fill_link_af:
// inet_fill_link_af, inet6_fill_link_af). A family without state on the device (no
// in_device / inet6_dev, or an engine without the protocols) is nullopt.
inline constexpr std::uint32_t kIf6Ready = 0x80000000u;  // Linux: IF_READY (net/if_inet6.h)
inline constexpr std::uint32_t kIf6RsSent = 0x10u;       // Linux: IF_RS_SENT
struct LinkAfInfo {
  std::optional<Inet4Conf> conf4;
  std::optional<Inet6Conf> conf6;
  std::uint32_t inet6_flags = 0;  // IF_READY, IF_RS_SENT (Linux: inet6_dev::if_flags)
  bool loopback = false;          // Linux gives lo its own defaults (NOXFRM, NOPOLICY...)
};
// Context: control lock. Errors: none.
LinkAfInfo link_af_info(const Device& dev);

// ---------------------------------------------------------------- netconf

// One scope's settings as RTM_NEWNETCONF reports them (netconfmsg + NETCONFA_*; Linux:
// inet_netconf_fill_devconf, inet6_netconf_fill_devconf). A full report (a get, a dump, a
// device's registration) carries every attribute the family has; a change carries the one
// that changed; RTM_DELNETCONF (a device's protocol state going) carries none.
// IPv4: forwarding, rp_filter, mc_forwarding, bc_forwarding, proxy_neigh (proxy_arp),
// ignore_routes_with_linkdown. IPv6: forwarding, proxy_neigh (proxy_ndp),
// ignore_routes_with_linkdown (mc_forwarding only in kernels built with IPv6 multicast
// routing, which Linux 6.18 here is not).
struct NetconfInfo {
  int family = 0;   // AF_INET or AF_INET6
  int ifindex = 0;  // a device, kConfAll or kConfDefault
  std::optional<std::int32_t> forwarding, rp_filter, mc_forwarding, bc_forwarding, proxy_neigh,
      ignore_routes_with_linkdown;
};

// Every attribute of a scope. Context: control lock. Errors: ENODEV (no such device, or
// one without that family's state).
Result<NetconfInfo> get_netconf(Control& ctl, Namespace& ns, int family, int ifindex);
// Linux's dump order: every device with the family's state (by ifindex), then "all", then
// "default". Context: control lock.
std::vector<NetconfInfo> list_netconf(Control& ctl, Namespace& ns, int family);

// ---------------------------------------------------------------- events and policies

enum class ProtoEvent : std::uint8_t { New, Del };  // RTM_NEW* / RTM_DEL*

// Hears every address and route change of an engine, in Linux's notification order.
// Context of every method: control lock held; must not call back into the engine's
// mutating functions.
class ProtoListener {
 public:
  virtual ~ProtoListener() = default;
  virtual void on_addr(Namespace& ns, ProtoEvent ev, const AddrInfo& a) {}
  virtual void on_route(Namespace& ns, ProtoEvent ev, const RouteInfo& r) {}
  // The same with the notification's NLM_F_* flags, as Linux sets them on RTM_NEWROUTE:
  // NLM_F_CREATE | NLM_F_EXCL for the first route of its key, NLM_F_CREATE (and
  // NLM_F_APPEND when appended) beside routes of the same key, NLM_F_REPLACE for a route
  // that took another's place; none on RTM_DELROUTE. By default it calls on_route.
  virtual void on_route_flagged(Namespace& ns, ProtoEvent ev, const RouteInfo& r,
                                std::uint16_t nlflags) {
    on_route(ns, ev, r);
  }
  virtual void on_neigh(Namespace& ns, ProtoEvent ev, const NeighInfo& n) {}
  virtual void on_rule(Namespace& ns, ProtoEvent ev, const RuleInfo& r) {}
  virtual void on_nexthop(Namespace& ns, ProtoEvent ev, const NexthopInfo& n) {}
  // RTM_NEWNEXTHOPBUCKET: a resilient group's bucket moved by the group's timer.
  virtual void on_nexthop_bucket(Namespace& ns, const NexthopBucket& b) {}
  // RTM_NEWNETCONF / RTM_DELNETCONF: a device's protocol state made (full report, before
  // its RTM_NEWLINK) or gone (Del, before its RTM_DELLINK), a setting changed.
  virtual void on_netconf(Namespace& ns, ProtoEvent ev, const NetconfInfo& n) {}
  // False if on_route would ignore every route of `family` in `ns` now: the protocols then
  // skip building the RouteInfo (a copy per route, and a vlan going down drops three).
  virtual bool wants_routes(Namespace& ns, int family) const { return true; }
};

// Registers/unregisters a listener (it must outlive its registration).
// Context: control lock. Errors: none.
void add_listener(Control& ctl, ProtoListener& l);
void remove_listener(Control& ctl, ProtoListener& l);

// The protocols follow Engine::set_policies (dst priority, reference wait) by themselves.

// Route-cache entries of an engine. Context: control lock.
struct DstStats {
  std::size_t live = 0;     // held by routes
  std::size_t garbage = 0;  // dead routes' entries still pinned to an unregistering device
};
DstStats dst_stats(Control& ctl);

}  // namespace ifcore::inet
