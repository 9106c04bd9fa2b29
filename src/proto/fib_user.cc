// proto/fib_user.cc — the routes a user adds and deletes, and their listing (Linux:
// fib_table_insert / fib_table_delete, ip6_route_add / ip6_route_del, the route dumps):
// validation, next hops (gateways, devices, multipath, nexthop objects), NLM_F_* semantics.
//
// Lock order: control lock only.
#include <linux/fib_rules.h>
#include <linux/in_route.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "proto/fib_impl.h"
#include "proto/state.h"

namespace ifcore::proto {

using namespace fib;

// ---------------------------------------------------------------- public API

namespace fib {

// The first hop's gateway and device, and two hops or more as the multipath (Linux
// reports a group of one as a plain next hop).
void set_route_hops(RouteInfo& i, const std::vector<inet::NextHop>& hops, bool blackhole,
                    bool group) {
  i.nexthops.clear();
  i.gateway = hops.empty() ? IpAddr{} : hops.front().gateway;
  i.oif = hops.empty() ? 0 : hops.front().oif;
  i.flags = hops.empty() ? 0 : hops.front().flags & RTNH_F_ONLINK;
  // Linux: fib_dump_info lists the hops when there are two or more (nexthop_num_path);
  // rt6_fill_node whenever the nexthop is a group (nexthop_is_multipath), even of one.
  if (hops.size() > 1 || (group && i.family == AF_INET6)) i.nexthops = hops;
  // Linux: fib_dump_info / rt6_fill_node report a route through a blackhole nexthop as a
  // blackhole route.
  if (blackhole) i.type = RTN_BLACKHOLE;
}

}  // namespace fib

Result<Device*> fib_resolve_hop(Control& ctl, Namespace& ns, int family, const IpAddr& gw, int oif,
                                std::uint32_t flags) {
  RouteRequest req;
  req.family = family;
  if (!gw.empty()) req.gateway = gw;
  req.oif = oif;
  req.flags = flags & RTNH_F_ONLINK;
  return resolve_nexthop(ctl, ns, req, RT_TABLE_MAIN, RTN_UNICAST);
}

void fib_bind_hops(const Control& ctl, EngineProto& ep, Route* r,
                   const std::vector<inet::NextHop>& hops, const std::vector<Device*>& devs,
                   bool blackhole, bool group) {
  release_hops(ep, r);
  if (!blackhole && r->info.type == RTN_BLACKHOLE) r->info.type = RTN_UNICAST;
  set_route_hops(r->info, hops, blackhole, group);
  r->dev = devs.empty() ? nullptr : devs.front();
  if (r->dev) {
    r->dst = dst_alloc(ep, *r->dev);
    dev_state(ctl, ep, *r->dev).routes.push(r);
  }
  for (std::size_t h = 1; hops.size() > 1 && h < devs.size(); ++h) {
    if (!devs[h]) continue;
    r->extra.push_back(Route::Hop{devs[h], dst_alloc(ep, *devs[h])});
    dev_state(ctl, ep, *devs[h]).extra_routes.push_back(r);
  }
}

void fib_erase(EngineProto& ep, Namespace& ns, Route* r, bool notify) {
  erase(ep, ns, r, notify);
}

RouteInfo fib_report(const Route& r) {
  return report(r);
}

void shown_in(const NetState& st, RouteInfo& r) {
  if (st.nh_compat || !r.nhid) return;
  r.gateway = {};
  r.oif = 0;
  r.nexthops.clear();
  r.flags &= ~std::uint32_t{0xff};  // the hops' RTNH_F_* flags
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;
using namespace ifcore::proto::fib;

namespace {

// Linux: fib_props[type].scope — the widest scope a route of the type may have (a route
// whose scope is wider, a smaller number, is "Invalid scope").
std::uint8_t widest_scope(std::uint8_t type) {
  switch (type) {
    case RTN_LOCAL:
      return RT_SCOPE_HOST;
    case RTN_BROADCAST:
    case RTN_ANYCAST:
      return RT_SCOPE_LINK;
    case RTN_UNSPEC:
    case RTN_NAT:
    case RTN_XRESOLVE:
      return RT_SCOPE_NOWHERE;
    default:
      return RT_SCOPE_UNIVERSE;
  }
}

// Deletes the sibling of `r` through `gateway` (and `oif`), announced as a route of its own.
bool delete_sibling(Control& ctl, Namespace& ns, Route& r, const IpAddr& gateway, int oif) {
  auto gone = remove_hop(ctl, r, gateway, oif);
  if (!gone) return false;
  EngineProto& ep = engine_proto(ctl.engine());
  if (!route_news_wanted(ep, ns, r.info.family)) return true;
  notify_route(ep, ns, ProtoEvent::Del, *gone);
  return true;
}

Result<RouteInfo> add_route_nh(Control& ctl, Namespace& ns, const RouteRequest& req,
                               const IpAddr& dst, std::uint32_t table, std::uint8_t type);

// A preferred source must be an address of the namespace (Linux: fib_valid_prefsrc,
// ip6_route_info_create's ipv6_chk_addr).
Result<void> check_prefsrc(Control& ctl, Namespace& ns, const RouteRequest& req) {
  if (req.prefsrc && !inet::is_local_address(ctl, ns, *req.prefsrc))
    return fail(EINVAL,
                req.family == AF_INET ? "Invalid prefsrc address" : "Invalid source address");
  return ok();
}

// What every user route starts from: its family, table, destination and tos.
void start_user_route(RouteInfo& i, const RouteRequest& req, std::uint32_t table,
                      const IpAddr& dst) {
  i.family = req.family;
  i.table = table;
  i.dst = dst;
  i.dst_len = req.dst_len;
  i.tos = req.tos;
  if (req.family == AF_INET6) i.pref = req.pref;
}

// Linux: rtm_to_fib6_config's RTA_EXPIRES — the route ends that many seconds from now (the
// route timer deletes it then, with RTM_DELROUTE).
void set_user_expiry(Control& ctl, RouteInfo& i, const RouteRequest& req) {
  if (req.family == AF_INET6 && req.expires)
    i.expires = ctl.engine().time().now() + std::chrono::seconds(*req.expires);
}

Result<RouteInfo> watched(Control& ctl, Namespace& ns, Result<RouteInfo> added) {
  if (added && added->expires) watch_route_expiry(ctl, ns, *added->expires);
  return added;
}
}  // namespace

Result<RouteInfo> add_route(Control& ctl, Namespace& ns, const RouteRequest& req) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  RetireScope scope(engine_proto(ctl.engine()));
  if (req.family != AF_INET && req.family != AF_INET6)
    return fail(EAFNOSUPPORT, "unsupported address family {}", req.family);
  // Linux: rtm_to_fib_config says so; IPv6's rtm_to_fib6_config is EINVAL alone.
  if (req.dst_len > max_len(req.family)) {
    if (req.family == AF_INET6) return fail_log_only(EINVAL, "Invalid prefix length");
    return fail(EINVAL, "Invalid prefix length");
  }
  // Linux: rtm_to_fib_config / rtm_to_fib6_config on rtm_tos.
  if (req.family == AF_INET && (req.tos & 3))
    return fail(EINVAL, "Invalid dsfield (tos): ECN bits must be 0");
  if (req.family == AF_INET6 && req.tos)
    return fail(EINVAL, "Invalid dsfield (tos): option not available for IPv6");
  // Linux: inet_rtm_newroute makes the table (fib_new_table) once rtm_to_fib_config has
  // taken the request, before fib_table_insert looks at the route, so even a refused route
  // leaves its table behind (a later delete answers ESRCH, not "FIB table does not exist",
  // and a dump of it is empty, not ENOENT); ip6_route_info_create makes it (fib6_new_table)
  // after the prefix lengths and the nexthop object are checked, before the next hop.
  if (req.family == AF_INET)
    (void)net_state(ns).tables(AF_INET)[req.table ? req.table : RT_TABLE_MAIN];
  if (req.family == AF_INET6 && req.src_len <= 128 && !req.nhid)
    (void)net_state(ns).tables(AF_INET6)[req.table ? req.table : RT_TABLE_MAIN];
  IpAddr dst = req.dst;
  if (dst.empty()) {
    std::array<std::uint8_t, 16> zero{};
    dst = req.family == AF_INET ? IpAddr::v4(0) : IpAddr::v6(zero);
  }
  if (dst.family() != req.family) return fail(EINVAL, "Invalid prefix for given family");
  if (req.family == AF_INET && prefix_of(dst, req.dst_len) != dst)
    return fail(EINVAL, "Invalid prefix for given prefix length");
  dst = prefix_of(dst, req.dst_len);
  std::uint32_t table = req.table ? req.table : RT_TABLE_MAIN;
  std::uint8_t type = req.type.value_or(RTN_UNICAST);
  bool has_gw = req.gateway && !req.gateway->empty();
  // Linux: rtm_to_fib_config / rtm_to_fib6_config, then fib_create_info /
  // ip6_route_info_create — a route names a nexthop object or has hops of its own.
  // Linux: ip6_route_info_create (CONFIG_IPV6_SUBTREES) keeps an IPv6 route's source
  // prefix, masked; IPv4 ignores it.
  if (req.family == AF_INET6 && req.src_len > 128)
    return fail(EINVAL, "Invalid source address length");
  if (req.nhid) {
    if (req.oif || has_gw || !req.nexthops.empty())
      return fail(EINVAL, "Nexthop specification and nexthop id are mutually exclusive");
    return add_route_nh(ctl, ns, req, dst, table, type);
  }
  if (req.family == AF_INET) {
    // Linux: fib_create_info, before the next hop is looked at: a type whose scope
    // (fib_props) is wider than the route's is "Invalid scope" (nat and xresolve always
    // are); a type that answers with an error (blackhole, unreachable, prohibit, throw)
    // takes no gateway and no device.
    if (widest_scope(type) > req.scope.value_or(RT_SCOPE_UNIVERSE))
      return fail(EINVAL, "Invalid scope");
    bool reject = type == RTN_BLACKHOLE || type == RTN_UNREACHABLE || type == RTN_PROHIBIT ||
                  type == RTN_THROW;
    if (reject && (has_gw || req.oif))
      return fail(EINVAL, "Gateway, device and multipath can not be specified for this route type");
    // Then, for the others: no scope beyond host, and a host route has no gateway.
    if (!reject && req.scope && *req.scope > RT_SCOPE_HOST) return fail(EINVAL, "Invalid scope");
    if (!reject && req.scope == RT_SCOPE_HOST && has_gw)
      return fail(EINVAL, "Route with host scope can not have a gateway");
  }
  // Linux: fib_get_nhs / ip6_route_multipath_add — every hop is checked as a route's
  // next hop would be; a single hop is an ordinary route. A hop is onlink as it says
  // (fib_get_nhs takes the hop's flags alone), or, for IPv6, also when the route is
  // (ip6_route_multipath_add adds the hop's flags to the route's).
  const std::uint32_t route_onlink = req.family == AF_INET6 ? req.flags & RTNH_F_ONLINK : 0;
  std::vector<Device*> hop_devs;
  for (const NextHop& nh : req.nexthops) {
    RouteRequest hr = req;
    hr.nexthops.clear();
    hr.gateway = nh.gateway.empty() ? std::nullopt : std::optional<IpAddr>(nh.gateway);
    hr.oif = nh.oif;
    hr.flags = (nh.flags | route_onlink) & RTNH_F_ONLINK;
    auto d = resolve_nexthop(ctl, ns, hr, table, type);
    if (!d) return fail(std::move(d).error());
    hop_devs.push_back(*d);
  }
  const bool multipath = req.nexthops.size() > 1;
  if (!req.nexthops.empty()) {
    RouteRequest first = req;
    first.nexthops.clear();
    const NextHop& nh = req.nexthops.front();
    first.gateway = nh.gateway.empty() ? std::nullopt : std::optional<IpAddr>(nh.gateway);
    first.oif = nh.oif;
    first.flags =
        (req.flags & ~std::uint32_t{RTNH_F_ONLINK}) | ((nh.flags | route_onlink) & RTNH_F_ONLINK);
    if (!multipath) return add_route(ctl, ns, first);
    has_gw = first.gateway.has_value();
  }
  auto dev = req.nexthops.empty() ? resolve_nexthop(ctl, ns, req, table, type)
                                  : Result<Device*>(hop_devs.front());
  if (!dev) return fail(std::move(dev).error());
  IFCORE_TRY(check_prefsrc(ctl, ns, req));

  Route r;
  RouteInfo& i = r.info;
  start_user_route(i, req, table, dst);
  set_user_expiry(ctl, i, req);
  set_source(i, req);
  if (multipath) {
    if (!req.nexthops.front().gateway.empty()) i.gateway = req.nexthops.front().gateway;
    for (std::size_t h = 0; h < req.nexthops.size(); ++h) {
      NextHop nh = req.nexthops[h];
      nh.oif = hop_devs[h] ? hop_devs[h]->ifindex() : 0;
      nh.flags = (nh.flags | route_onlink) & RTNH_F_ONLINK;
      i.nexthops.push_back(nh);
    }
  } else if (has_gw && *dev) {
    i.gateway = *req.gateway;
  }
  i.oif = *dev ? (*dev)->ifindex() : 0;
  // Linux: fib6_nh_init gives an IPv6 reject route (blackhole, unreachable, prohibit,
  // throw) the loopback device: `ip -6 route` shows `dev lo`.
  if (req.family == AF_INET6 && !needs_dev(type) && !*dev && ns.loopback())
    i.oif = ns.loopback()->ifindex();
  i.priority = req.priority.value_or(0);
  if (req.family == AF_INET6 && i.priority == 0) i.priority = kPrioUser6;
  i.protocol = req.protocol.value_or(RTPROT_BOOT);
  // Linux: an IPv6 route keeps no scope (rt6_fill_node reports RT_SCOPE_UNIVERSE).
  i.scope = req.family == AF_INET6 ? std::uint8_t{RT_SCOPE_UNIVERSE}
                                   : req.scope.value_or(default_scope(req.family, type, has_gw));
  i.type = type;
  if (req.prefsrc) i.prefsrc = *req.prefsrc;
  // (Linux: rt6_fill_node gives a multipath route no flags of its own, only its hops'.)
  i.flags = multipath && req.family == AF_INET6 ? 0 : req.flags & RTNH_F_ONLINK;
  i.metrics = req.metrics;
  r.dev = *dev;
  link_state_made(r, hop_devs);

  return watched(
      ctl, ns,
      insert_user_route(ctl, ns, req, std::move(r), multipath ? hop_devs : std::vector<Device*>{}));
}

namespace {

// A route that names a nexthop object (Linux: fib_create_info with fc_nh_id, then
// fib_check_nexthop; ip6_route_info_create, fib6_check_nexthop).
Result<RouteInfo> add_route_nh(Control& ctl, Namespace& ns, const RouteRequest& req,
                               const IpAddr& dst, std::uint32_t table, std::uint8_t type) {
  NetState& st = net_state(ns);
  if (req.family == AF_INET6 && req.src_len)
    return fail(EINVAL, "Nexthops can not be used with source routing");
  Nexthop* nh = nexthop_find(st, req.nhid);
  if (!nh) return fail(EINVAL, "Nexthop id does not exist");
  std::uint8_t scope = req.scope.value_or(RT_SCOPE_UNIVERSE);
  IFCORE_TRY(nexthop_check_route(st, *nh, req.family, scope, false));
  IFCORE_TRY(check_prefsrc(ctl, ns, req));
  std::vector<NextHop> hops;
  std::vector<Device*> devs;
  nexthop_hops(st, *nh, hops, devs);
  Route r;
  RouteInfo& i = r.info;
  start_user_route(i, req, table, dst);
  set_user_expiry(ctl, i, req);
  i.type = type;
  set_route_hops(i, hops, nh->info.blackhole, nh->info.is_group());
  i.nhid = nh->info.id;
  i.priority = req.priority.value_or(0);
  if (req.family == AF_INET6 && i.priority == 0) i.priority = kPrioUser6;
  i.protocol = req.protocol.value_or(RTPROT_BOOT);
  i.scope = req.family == AF_INET6 ? std::uint8_t{RT_SCOPE_UNIVERSE} : scope;
  if (req.prefsrc) i.prefsrc = *req.prefsrc;
  i.metrics = req.metrics;
  r.dev = devs.empty() ? nullptr : devs.front();
  r.nh = nh;
  return watched(ctl, ns,
                 insert_user_route(ctl, ns, req, std::move(r),
                                   hops.size() > 1 ? devs : std::vector<Device*>{}));
}

}  // namespace

namespace {

// Linux: fib_nh_match — whether the next hops `req` names (a device, a gateway, or an
// RTA_MULTIPATH list) are those of the IPv4 route `i`. A route through a nexthop object
// matches only a request that names none; a device or gateway is compared with the first
// hop; a list hop by hop (a field left out matches anything), and it must name at least
// as many hops as the route has (more are not looked at).
bool v4_hops_match(const RouteInfo& i, const RouteRequest& req) {
  const bool gw = req.gateway && !req.gateway->empty();
  if (i.nhid) return !req.oif && !gw && req.nexthops.empty();
  if (req.oif || gw) return (!req.oif || i.oif == req.oif) && (!gw || i.gateway == *req.gateway);
  if (req.nexthops.empty()) return true;
  const std::vector<NextHop> own =
      i.nexthops.empty() ? std::vector<NextHop>{NextHop{i.gateway, i.oif}} : i.nexthops;
  if (req.nexthops.size() < own.size()) return false;
  for (std::size_t h = 0; h < own.size(); ++h) {
    const NextHop& q = req.nexthops[h];
    if (q.oif && q.oif != own[h].oif) return false;
    if (!q.gateway.empty() && q.gateway != own[h].gateway) return false;
  }
  return true;
}

// Deletes the first route `req` names, its next hops as one route's (no RTA_MULTIPATH for
// IPv6: see delete_route).
Result<void> delete_one(Control& ctl, Namespace& ns, const RouteRequest& req) {
  EngineProto& ep = engine_proto(ctl.engine());
  NetState& st = net_state(ns);
  std::uint32_t table = req.table ? req.table : RT_TABLE_MAIN;
  IpAddr dst = req.dst;
  if (dst.empty()) {
    std::array<std::uint8_t, 16> zero{};
    dst = req.family == AF_INET ? IpAddr::v4(0) : IpAddr::v6(zero);
  }
  if (dst.family() != req.family) return fail(EINVAL, "Invalid prefix for given family");
  auto t = st.tables(req.family).find(table);
  // Linux: inet_rtm_delroute and ip6_route_del, for a table that was never made (IPv4
  // makes even main and local with their first route; IPv6 has them from the start).
  if (t == st.tables(req.family).end()) {
    if (req.family == AF_INET6 && (table == RT_TABLE_MAIN || table == RT_TABLE_LOCAL))
      return fail(ESRCH);
    return fail(ESRCH, "FIB table does not exist");
  }
  auto k = t->second.find(RouteKey{prefix_of(dst, req.dst_len), req.dst_len});
  if (k == t->second.end()) return fail(ESRCH);
  for (auto& x : k->second) {
    const RouteInfo& i = x.info;
    if (req.family == AF_INET && i.tos != req.tos) continue;
    // Linux: fib6_locate finds the source prefix exactly (none: the routes without one).
    if (req.family == AF_INET6 && !same_source(i, req)) continue;
    if (req.priority && *req.priority && i.priority != *req.priority) continue;
    // (ip6_route_del compares no type: `del unreachable P` deletes the route at P.)
    if (req.family == AF_INET && req.type && *req.type && i.type != *req.type) continue;
    if (req.protocol && *req.protocol && i.protocol != *req.protocol) continue;
    if (req.family == AF_INET && req.scope && *req.scope != RT_SCOPE_NOWHERE &&
        i.scope != *req.scope)
      continue;
    if (req.prefsrc && i.prefsrc != *req.prefsrc) continue;
    if (req.nhid && i.nhid != req.nhid) continue;  // Linux: fib_nh_match, ip6_route_del
    if (req.family == AF_INET) {
      if (!v4_hops_match(i, req)) continue;
      erase(ep, ns, &x, true);
      return ok();
    }
    // Linux: ip6_route_del deletes a route through a nexthop object whatever device or
    // gateway the request names.
    if (i.nhid) {
      erase(ep, ns, &x, true);
      return ok();
    }
    // Linux: ip6_route_del looks at each sibling of a multipath route: a gateway deletes
    // that one alone, a device without one the whole route.
    if (i.nexthops.size() > 1) {
      if (req.gateway && !req.gateway->empty()) {
        if (delete_sibling(ctl, ns, x, *req.gateway, req.oif)) return ok();
        continue;
      }
      if (req.oif && std::none_of(i.nexthops.begin(), i.nexthops.end(),
                                  [&](const NextHop& h) { return h.oif == req.oif; }))
        continue;
      erase(ep, ns, &x, true, true);
      return ok();
    }
    if (req.oif && i.oif != req.oif) continue;
    if (req.gateway && !req.gateway->empty() && i.gateway != *req.gateway) continue;
    erase(ep, ns, &x, true);
    return ok();
  }
  return fail(ESRCH);
}

}  // namespace

Result<void> delete_route(Control& ctl, Namespace& ns, const RouteRequest& req) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  RetireScope scope(engine_proto(ctl.engine()));
  if (req.family != AF_INET6 || req.nexthops.empty()) return delete_one(ctl, ns, req);
  // Linux: ip6_route_multipath_del — each hop of RTA_MULTIPATH is a delete of its own (its
  // device and gateway in place of the request's), each done as it is found; the answer is
  // the last failure, so a request may delete some hops and still answer ESRCH.
  Result<void> last = ok();
  for (const NextHop& nh : req.nexthops) {
    RouteRequest one = req;
    one.nexthops.clear();
    if (nh.oif) one.oif = nh.oif;
    if (!nh.gateway.empty()) one.gateway = nh.gateway;
    if (auto done = delete_one(ctl, ns, one); !done) last = std::move(done);
  }
  return last;
}

bool has_table(Control& ctl, Namespace& ns, int family, std::uint32_t table) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  // Linux: IPv6 has main and local from the namespace's start (fib6_net_init); IPv4 makes
  // every table, main and local too, with its first route or rule (fib_new_table).
  if (family == AF_INET6 && (table == RT_TABLE_MAIN || table == RT_TABLE_LOCAL)) return true;
  return net_state(ns).tables(family).count(table) != 0;
}

std::vector<RouteInfo> list_routes(Control& ctl, Namespace& ns, int family,
                                   std::optional<std::uint32_t> table) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  std::vector<RouteInfo> out;
  NetState& st = net_state(ns);
  for (int f : {AF_INET, AF_INET6}) {
    if (family && family != f) continue;
    auto& tables = st.tables(f);
    for (std::uint32_t id : tables.dump_order()) {
      if (table && *table != id) continue;
      auto& tbl = tables.find(id)->second;
      if (f == AF_INET) {
        // Linux: a trie leaf holds the prefixes of one key, its aliases sorted by suffix
        // length (fib_insert_alias, fa_slen): the longest prefix of a key comes first.
        for (auto k = tbl.begin(); k != tbl.end();) {
          auto end =
              std::find_if(k, tbl.end(), [&](auto& e) { return e.first.dst != k->first.dst; });
          for (auto j = end; j != k;)
            for (auto& r : (--j)->second) shown_in(st, out.emplace_back(report(r)));
          k = end;
        }
        continue;
      }
      std::vector<const Route*> walk;
      for (auto& [key, v] : tbl)
        for (auto& r : v) walk.push_back(&r);
      std::stable_sort(walk.begin(), walk.end(),
                       [](const Route* a, const Route* b) { return walk_before(*a, *b); });
      for (const Route* r : walk) shown_in(st, out.emplace_back(report(*r)));
    }
  }
  return out;
}

}  // namespace ifcore::inet
