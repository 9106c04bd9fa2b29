// proto/addrconf_routes.h — the IPv6 routes addrconf adds and removes by hand beside
// an address's own (Linux: addrconf_prefix_route, addrconf_get_prefix_route): the routes to
// an address's peer, and the prefix routes an address change or delete finds by their key.
// These are kept as routes of their own (Origin::User), not derived from the addresses:
// Linux leaves them where they are when the address changes or goes.
#pragma once

#include <optional>

#include "proto/state.h"

namespace ifcore::proto {

// Linux: addrconf_get_prefix_route — the first route of `dst`/`len` through `dev` in the
// device's prefix table (its L3 master's, else main), without a source prefix or a nexthop
// object; `no_gw`: one without a gateway too. Null if none. Context: control lock.
Route* find_prefix_route6(Namespace& ns, const Device& dev, const IpAddr& dst, int len, bool no_gw);

// Linux: addrconf_prefix_route — a kernel route of `dst`/`len` through `dev` in its prefix
// table, metric `metric` (0: 256), expiring at `expires` if set; nothing on a down device
// (fib6_nh_init refuses it, and addrconf ignores the error). A route of that key, device and
// metric without a gateway is there already (fib6_add_rt2node's EEXIST, ignored): it keeps
// its place, and takes `expires` if it expires. Context: control lock.
void add_prefix_route6(Control& ctl, Namespace& ns, Device& dev, const IpAddr& dst, int len,
                       std::uint32_t metric, std::optional<TimePoint> expires = {});

// Linux: modify_prefix_route — the route find_prefix_route6 finds without a gateway takes
// the metric `metric` (0: 256; a route of another metric is replaced by a new one) and the
// expiry `expires`. False if there is none. Context: control lock.
bool modify_prefix_route6(Control& ctl, Namespace& ns, Device& dev, const IpAddr& dst, int len,
                          std::uint32_t metric, std::optional<TimePoint> expires);

// Removes the route find_prefix_route6 finds, if any (RTM_DELROUTE). Context: control lock.
void del_prefix_route6(Control& ctl, Namespace& ns, const Device& dev, const IpAddr& dst, int len,
                       bool no_gw);

// Linux: check_cleanup_prefix_route and cleanup_prefix_route — `ifa`, a permanent address
// with a prefix route, goes or stops having one: if no other address of `in6` has its
// prefix, the first route of the prefix through `dev` without a gateway goes, whatever its
// protocol or metric. Returned if it is not the address's own (which fib_sync_dev takes
// away), for the caller to erase with fib_erase once the device's routes are in sync;
// null otherwise. Context: control lock.
Route* prefix_route_to_clean(Namespace& ns, const Device& dev, const Inet6Dev& in6, const Ifa& ifa);

// Whether `a` has a peer (IFA_ADDRESS other than IFA_LOCAL).
bool has_peer(const AddrInfo& a);
// Linux: __ipv6_ifa_notify(RTM_NEWADDR) once DAD is over — a route to the peer, /128 (see
// add_prefix_route6); RTM_DELADDR takes the first route of the peer /128 away.
void add_peer_route(Control& ctl, Namespace& ns, Device& dev, const AddrInfo& a);
void del_peer_route(Control& ctl, Namespace& ns, const Device& dev, const AddrInfo& a);
// Linux: inet6_addr_modify — the address `ifa` takes `a`'s flags, lifetimes, metric,
// protocol and peer (`a.address`, if it differs from `a.local`), and announces it; its
// prefix routes follow. Context: control lock.
void inet6_modify_addr(Control& ctl, Namespace& ns, Device& dev, Inet6Dev& in6, Ifa& ifa,
                       const AddrInfo& a);

// Linux: ipv6_del_addr's rt6_remove_prefsrc — the IPv6 address `addr` is gone: each IPv6
// route of any table (not one through a nexthop object) with `addr` as its preferred source
// loses it, unless its device can still use it (a global address of any device, a
// link-local one of the route's own device, neither tentative: ipv6_chk_addr). Nothing is
// announced (fib_prefsrc.cc). Context: control lock.
void fib_remove_prefsrc6(Control& ctl, Namespace& ns, const IpAddr& addr);

}  // namespace ifcore::proto
