// ifcore/nexthop.h — nexthop objects (Linux: net/ipv4/nexthop.c): next hops with an id of
// their own that routes name (`nhid`) instead of carrying a gateway and a device, and
// groups of them (multipath, hash-threshold or resilient).
//
// A nexthop with a device holds it. It goes, silently, when the device goes down, loses
// its carrier or is unregistered (a blackhole one, on the loopback, only at unregister),
// and takes with it the routes that name it and its place in every group; a group left
// empty goes too. Everything here runs under the control lock; values are plain copies.
// Constants: NHA_*, NEXTHOP_GRP_TYPE_* (<linux/nexthop.h>), RTNH_F_* (<linux/rtnetlink.h>).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ifcore/addr.h"
#include "ifcore/engine.h"
#include "ifcore/result.h"

namespace ifcore::inet {

// One member of a group (struct nexthop_grp): its id and weight, 1..256.
struct NexthopMember {
  std::uint32_t id = 0;
  std::uint16_t weight = 1;
  friend bool operator==(const NexthopMember&, const NexthopMember&) = default;
};

// A resilient group's table (NHA_RES_GROUP). The timers are in clock ticks (1/100 s), as
// on the wire; the kernel's defaults are 120 s idle and 0 (never) unbalanced.
struct NexthopResilient {
  std::uint16_t buckets = 0;
  std::uint32_t idle_timer = 120 * 100, unbalanced_timer = 0;
  // NHA_RES_GROUP_UNBALANCED_TIME: ticks since the table last became unbalanced (some
  // member holds fewer buckets than its weight wants), 0 when balanced.
  std::uint64_t unbalanced_time = 0;
  friend bool operator==(const NexthopResilient&, const NexthopResilient&) = default;
};

// One nexthop object as RTM_NEWNEXTHOP reports it (struct nhmsg + NHA_*).
struct NexthopInfo {
  std::uint32_t id = 0;
  int family = 0;             // AF_INET / AF_INET6; AF_UNSPEC for a group
  std::uint8_t scope = 0;     // RT_SCOPE_LINK with a gateway, RT_SCOPE_HOST without
  std::uint8_t protocol = 0;  // RTPROT_*
  std::uint32_t flags = 0;    // RTNH_F_ONLINK as given
  IpAddr gateway;             // empty: none
  int oif = 0;                // its device (a blackhole: the loopback, not reported)
  bool blackhole = false;
  bool fdb = false;  // NHA_FDB: for the bridge and vxlan forwarding databases only
  // A group: its members in the order given, and its type.
  std::vector<NexthopMember> group;
  std::uint16_t group_type = 0;  // NEXTHOP_GRP_TYPE_MPATH or NEXTHOP_GRP_TYPE_RES
  NexthopResilient resilient;    // NEXTHOP_GRP_TYPE_RES
  bool is_group() const { return !group.empty(); }
};

// What RTM_NEWNEXTHOP asks for: the header's family, protocol and flags and the
// attributes given (Linux: rtm_to_nh_config has checked their combinations).
struct NexthopRequest {
  std::uint32_t id = 0;  // 0: the first unused one
  int family = 0;
  std::uint8_t protocol = 0;
  std::uint32_t flags = 0;
  std::optional<IpAddr> gateway;
  int oif = 0;  // required unless blackhole, fdb or a group
  bool blackhole = false, fdb = false;
  std::vector<NexthopMember> group;  // non-empty: a group
  std::uint16_t group_type = 0;
  std::optional<std::uint16_t> buckets;  // NHA_RES_GROUP_BUCKETS
  std::optional<std::uint32_t> idle_timer, unbalanced_timer;
  // Netlink flags: `ip nexthop add` = create+excl, `replace` = create+replace.
  bool create = true, replace = false;
};

// Adds a nexthop, or with `replace` changes the one with that id in place: the routes and
// groups that use it follow (RTM_NEWNEXTHOP, then RTM_NEWROUTE for each route that names it
// or a group holding it). Linux: nexthop_add, insert_nexthop, replace_nexthop.
// Context: control lock. Errors (errno, extack): EEXIST (the id is taken, no extack),
// EINVAL ("Invalid nexthop id", "Nexthop id can not be used twice in a group",
// "Hash-threshold group can not be a nexthop within a group", "Resilient group can not be
// a nexthop within a group", "Blackhole nexthop can not be used in a group with more than 1
// path", "Non FDB nexthop group cannot have fdb nexthops", "FDB nexthop group can only have
// fdb nexthops", "Number of buckets not specified for nexthop group insertion", "Can not
// replace a nexthop group with a nexthop.", "Can not replace a nexthop with a nexthop
// group.", "Replace requires nexthop id", "Invalid device index"), ENETDOWN ("Nexthop
// device is not up", "Carrier for nexthop device is down", "Device for nexthop is not up"
// for a blackhole with the loopback down), ENETUNREACH ("Nexthop has invalid gateway"),
// EHOSTUNREACH (an IPv6 gateway with no route), ENOENT ("Replace specified without create
// and no entry exists").
Result<NexthopInfo> add_nexthop(Control& ctl, Namespace& ns, const NexthopRequest& req);

// Deletes a nexthop (Linux: rtm_del_nexthop, remove_nexthop): RTM_DELNEXTHOP, then its
// routes go (IPv6 ones with RTM_DELROUTE; IPv4 ones silently, as fib_flush), then each
// group that held it is shrunk (RTM_NEWNEXTHOP) or, left empty, deleted (RTM_DELNEXTHOP).
// Context: control lock. Errors: ENOENT (no such id, no extack).
Result<void> delete_nexthop(Control& ctl, Namespace& ns, std::uint32_t id);

// One nexthop. Context: control lock. Errors: ENOENT.
Result<NexthopInfo> get_nexthop(Control& ctl, Namespace& ns, std::uint32_t id);

// What a dump selects (Linux: nh_dump_filtered): only groups; only nexthops of a family,
// on a device, or on a device with that master (each of which also drops groups). (A
// dump's NHA_FDB selects nothing in Linux 6.18: every nexthop is listed.)
struct NexthopFilter {
  int family = 0;
  int oif = 0, master = 0;
  bool groups = false;
};

// The nexthops `filter` selects, by id. Context: control lock.
std::vector<NexthopInfo> list_nexthops(Control& ctl, Namespace& ns,
                                       const NexthopFilter& filter = {});

// ---------------------------------------------------------------- resilient buckets
// A resilient group keeps a table of `buckets` buckets, each holding one member (Linux:
// struct nh_res_table). Each member wants buckets in proportion to its weight (rounded at
// the running sums' boundaries, as nh_res_group_rebalance). Buckets are assigned when the
// group is made and when its members change (a replace, a member removed): a bucket whose
// member left moves at once; a bucket of a member holding more than it wants moves only
// once idle (unused for idle_timer since it was last used; a bucket never used since its
// last move counts as idle) or once the table has been unbalanced for unbalanced_timer
// (0: never forced). Moves made later, by the group's timer on the engine's clock, are
// announced as RTM_NEWNEXTHOPBUCKET; those made during a request are not (Linux:
// nh_res_table_upkeep with notify_nl only from its delayed work). A route lookup through
// the group uses a bucket, which restarts its idle time.

// One bucket as RTM_NEWNEXTHOPBUCKET reports it.
struct NexthopBucket {
  std::uint32_t group = 0;      // NHA_ID
  std::uint8_t protocol = 0;    // the group's (nhmsg)
  std::uint32_t flags = 0;      // RTNH_F_OFFLOAD / RTNH_F_TRAP: never set by ifcore
  std::uint16_t index = 0;      // NHA_RES_BUCKET_INDEX
  std::uint32_t nhid = 0;       // NHA_RES_BUCKET_NH_ID
  std::uint64_t idle_time = 0;  // NHA_RES_BUCKET_IDLE_TIME: ticks since last used or moved
};

// What a bucket dump selects (Linux: rtm_dump_nexthop_bucket with nh_dump_filtered applied
// to each bucket's nexthop): one group or all resilient ones; buckets holding `nhid`; the
// bucket's nexthop of a family, on a device, or on a device with that master.
struct NexthopBucketFilter {
  std::uint32_t id = 0, nhid = 0;
  int family = 0, oif = 0, master = 0;
  bool groups = false;  // NHA_GROUPS: a bucket's nexthop is never a group, so none
};

// The buckets `f` selects, by group id then index. Context: control lock. Errors (only
// with f.id): ENOENT (no such nexthop, no extack), EINVAL ("Not a nexthop group",
// "Nexthop group not of type resilient").
Result<std::vector<NexthopBucket>> list_nexthop_buckets(Control& ctl, Namespace& ns,
                                                        const NexthopBucketFilter& f);

// One bucket (Linux: rtm_get_nexthop_bucket). Context: control lock. Errors: as above,
// and ENOENT "Bucket index out of bounds".
Result<NexthopBucket> get_nexthop_bucket(Control& ctl, Namespace& ns, std::uint32_t id,
                                         std::uint16_t index);

// Runs due bucket moves now (what the engine's timer does when the clock reaches them;
// tests with a FakeTime call run_timers instead). Context: control lock.
void nexthop_res_upkeep(Control& ctl);

}  // namespace ifcore::inet
