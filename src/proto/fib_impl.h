// proto/fib_impl.h — internal to the fib files (fib.cc: tables, kernel routes and device
// sync; fib_user.cc: user routes; fib_get.cc: lookups as `ip route get`; fib_order.cc:
// IPv6's walk order and source prefixes): the helpers they share, in proto::fib.
#pragma once

#include <linux/rtnetlink.h>

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "proto/state.h"

namespace ifcore::proto::fib {

using inet::RouteRequest;

inline constexpr std::uint32_t kPrioUser6 = 1024;    // Linux: IP6_RT_PRIO_USER
inline constexpr std::uint32_t kPrioAddrconf = 256;  // Linux: IP6_RT_PRIO_ADDRCONF
inline constexpr std::array<std::uint8_t, 16> kLoopback6 = {0, 0, 0, 0, 0, 0, 0, 0,
                                                            0, 0, 0, 0, 0, 0, 0, 1};

int max_len(int family);
RouteKey key_of(const RouteInfo& r);
bool covers(const IpAddr& p, int plen, const IpAddr& a, int alen);
bool post_order_less(const IpAddr& a, int alen, const IpAddr& b, int blen);
bool node_before(const RouteInfo& a, const RouteInfo& b);
bool walk_before(const Route& a, const Route& b);
bool from_prefix(const RouteInfo& r, const IpAddr& src);
IpAddr source_of(const RouteRequest& req);
void set_source(RouteInfo& i, const RouteRequest& req);
bool same_source(const RouteInfo& i, const RouteRequest& req);
RouteInfo report(const Route& r);
// Hop h's device (fib_linkdown.cc: IPv4 link state kept as Linux keeps it): the first's is
// r.dev, the others' r.extra's; null if it has none.
const Device* hop_device(const Route& r, std::size_t h);
// Hop h's RTNH_F_DEAD / RTNH_F_LINKDOWN as reported, through device `d`.
std::uint32_t hop_link_flags(const Route& r, std::size_t h, const Device& d);
// A new IPv4 route's kept state (its hops' devices in `hop_devs` for a multipath one).
void link_state_made(Route& r, const std::vector<Device*>& hop_devs);
// `dev`'s Up, Down or Change (carrier) for the IPv4 routes through it.
void sync_link_state(DevState& ds, const Device& dev, NetdevEvent event);
// Adds `r` to its table: before `before` (a route of its key and metric, whose place and
// order it takes), or after the routes of its key that come before it or with it.
Route* insert(const Control& ctl, EngineProto& ep, Namespace& ns, Route&& r,
              Route* before = nullptr);
// The routes of `i`'s table with its key and metric (IPv4: and tos; IPv6: and source
// prefix), in their order (Linux: fib_find_alias's run of aliases, the routes of a fib6
// node at one metric).
std::vector<Route*> same_key_routes(NetState& st, const RouteInfo& i);
void release_hops(EngineProto& ep, Route* r);
// Unlinks `r` from its table and device, frees its dst entries and then the route;
// `notify`: announces it, an IPv6 multipath route sibling by sibling, each as a route of
// its own (Linux: fib6_del_route), or with `whole` as one (__ip6_del_rt_siblings, a
// user's delete without a gateway).
void erase(EngineProto& ep, Namespace& ns, Route* r, bool notify, bool whole = false);
// `r` (a multipath route) as its hop `h` alone: an IPv6 sibling as Linux reports it.
// `metrics`: the sibling's own, if it has them (Route::hop_metrics).
RouteInfo sibling_of(const RouteInfo& r, const inet::NextHop& h,
                     const inet::RouteMetrics* metrics = nullptr);
// Takes the hops through `dev` out of the IPv6 multipath route `r` (an unregister: Linux's
// fib6_ifdown deletes those siblings, `notify`: each announced); none left, the route.
void drop_hops_through(Control& ctl, Namespace& ns, Route* r, const Device& dev, bool notify);
bool is_connected(const Route& r);
bool same_derived(const RouteInfo& a, const RouteInfo& b);
RouteInfo kernel_route(int family, std::uint32_t table, std::uint8_t type, const IpAddr& dst,
                       int len, std::uint8_t scope, const IpAddr& prefsrc, std::uint32_t prio,
                       int oif);
// `as_up`: the routes the addresses would give the device if it were up.
void desired_v4(Device& dev, const InDev& in, std::vector<std::pair<RouteInfo, Origin>>& out,
                bool as_up = false);
void desired_v6(Device& dev, const Inet6Dev& in6, std::vector<std::pair<RouteInfo, Origin>>& out);
void sorted_routes(const DevState& ds, int family, std::vector<Route*>& out);
std::uint8_t default_scope(int family, std::uint8_t type, bool has_gw);
bool needs_dev(std::uint8_t type);
// The first hop's gateway and device, and two hops or more as the multipath.
void set_route_hops(RouteInfo& i, const std::vector<inet::NextHop>& hops, bool blackhole,
                    bool group);
// Adds the route `r` that `req` made (its info set, `r.dev` its first hop's device; a
// multipath route's hops' devices in `extra_devs`, the first one's included) among the
// routes of its key, as the request's flags say, and announces it (fib_insert.cc).
Result<RouteInfo> insert_user_route(Control& ctl, Namespace& ns, const RouteRequest& req, Route&& r,
                                    const std::vector<Device*>& extra_devs);
// Takes the hop through `gateway` (and device `oif`, if not 0) out of the multipath route
// `r`, which keeps the others (one left: a plain route); the sibling taken, as a route of
// its own, or nullopt if `r` has no such hop or only one (Linux: ip6_route_del deletes one
// sibling).
std::optional<RouteInfo> remove_hop(Control& ctl, Route& r, const IpAddr& gateway, int oif);
Result<Device*> resolve_nexthop(Control& ctl, Namespace& ns, const RouteRequest& req,
                                std::uint32_t table, std::uint8_t type);

// The most specific route to `dst` (from `src`; empty: ::) in `table` that `ok` accepts.
// IPv6 (Linux: fib6_node_lookup_1): a prefix that has routes with a source prefix looks
// the source up among them, longest first; with no match it is passed over, its routes
// without a source included, for the shorter prefixes.
template <class Pred>
Route* lookup(NetState& st, int family, std::uint32_t table, const IpAddr& dst, Pred ok,
              const IpAddr& src = {}) {
  auto& tables = st.tables(family);
  auto t = tables.find(table);
  if (t == tables.end()) return nullptr;
  for (int len = max_len(family); len >= 0; --len) {
    auto k = t->second.find(RouteKey{prefix_of(dst, len), static_cast<std::uint8_t>(len)});
    if (k == t->second.end()) continue;
    const bool subtree = k->second.front().info.src_len > 0;
    for (auto& r : k->second) {
      if (subtree && !r.info.src_len) break;
      if (subtree && !from_prefix(r.info, src)) continue;
      if (ok(r)) return &r;
    }
  }
  return nullptr;
}

}  // namespace ifcore::proto::fib
