// proto/fib_get.cc — a lookup as `ip route get` makes it (Linux: inet_rtm_getroute,
// inet6_rtm_getroute): the rules, the tables, the input path's checks, and the answers made
// without a table entry.
//
// Lock order: control lock only.
#include <linux/fib_rules.h>
#include <linux/in_route.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "proto/fib_impl.h"
#include "proto/multipath.h"
#include "proto/state.h"

namespace ifcore::inet {

using namespace ifcore::proto;
using namespace ifcore::proto::fib;

namespace {

// An IPv4 lookup's answer made without a table entry (Linux: a route-cache entry of
// ip_route_output_key_hash_rcu's own): a host route in main, universe scope.
RouteInfo cached_route4(const IpAddr& dst, std::uint8_t type, int oif, std::uint32_t flags) {
  RouteInfo out;
  out.family = AF_INET;
  out.table = RT_TABLE_MAIN;
  out.dst = dst;
  out.dst_len = 32;
  out.type = type;
  out.scope = RT_SCOPE_UNIVERSE;
  out.oif = oif;
  out.flags = flags;
  return out;
}

// Linux: inet_select_addr(dev, 0, scope) — the first primary address of `dev` of `scope` or
// wider, else the first primary address of any device that is of `scope` or wider and not
// of link scope (in_dev_select_addr).
IpAddr select_scoped4(EngineProto& ep, Namespace& ns, const Device& dev, std::uint8_t scope) {
  auto first = [&](const Device& d, bool other) -> IpAddr {
    DevState* ds = find_dev(ep, d);
    if (!ds || !ds->in) return {};
    for (auto& ifa : ds->in->addrs)
      if (!(ifa->info.flags & IFA_F_SECONDARY) && ifa->info.scope <= scope &&
          !(other && ifa->info.scope == RT_SCOPE_LINK))
        return ifa->info.local;
    return {};
  };
  IpAddr a = first(dev, false);
  for (Device* d : ns.devices_locked()) {
    if (!a.empty()) break;
    a = first(*d, true);
  }
  return a;
}

}  // namespace

Result<RouteInfo> get_route(Control& ctl, Namespace& ns, const Flow& given) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  const IpAddr& dst = given.dst;
  int oif = given.oif;
  if (dst.empty()) return fail(EINVAL, "missing destination address");
  EngineProto& ep = engine_proto(ctl.engine());
  NetState& st = net_state(ns);
  int f = dst.family();
  // Linux: ip_route_output_key_hash_rcu answers a destination of 0.0.0.0 without a lookup:
  // the flow goes to 127.0.0.1 through the loopback device, local (`local 0.0.0.0 dev lo
  // src 127.0.0.1 … cache <local>`), whether lo is up or not.
  if (f == AF_INET && dst.v4_host() == 0 && !oif && ns.loopback()) {
    if (given.fib_match) return fail(EHOSTUNREACH);
    RouteInfo out =
        cached_route4(dst, RTN_LOCAL, ns.loopback()->ifindex(), RTM_F_CLONED | RTCF_LOCAL);
    out.prefsrc = IpAddr::v4(0x7f000001);
    return out;
  }
  // Linux: ip_route_input_slow's martians, before any lookup: a multicast or limited
  // broadcast source, a source or destination of 0.0.0.0 (0.0.0.0/8 is unicast since Linux
  // 5.3), a loopback destination or source (route_localnet is off): EINVAL alone.
  if (f == AF_INET && given.iif && !given.src.empty() && dst.v4_host() != 0xffffffffu) {
    auto loopback = [](std::uint32_t a) { return (a >> 24) == 127; };
    const std::uint32_t s = given.src.v4_host(), d = dst.v4_host();
    if (given.src.is_multicast() || s == 0xffffffffu || s == 0 || d == 0 || loopback(d) ||
        loopback(s))
      return fail_log_only(EINVAL, "route get: a martian on the input path");
  }
  // Linux: l3mdev_update_flow — the flow's L3 master comes from its output device (an L3
  // master given as the output device sends the lookup to its table, through any of the
  // table's devices), else from its input device; l3mdev rules look up that master's table.
  Flow flow = given;
  int l3_master = 0;
  if (Device* od = oif ? ctl.find(ns, oif) : nullptr) {
    l3_master = l3mdev_master_ifindex(*od);
    if (is_l3mdev_master(*od)) flow.oif = oif = 0;
  } else if (flow.iif > 1) {  // LOOPBACK_IFINDEX
    if (Device* id = ctl.find(ns, flow.iif)) l3_master = l3mdev_master_ifindex(*id);
  }
  Device* l3_dev = l3_master ? ctl.find(ns, l3_master) : nullptr;
  const std::uint32_t l3_table = l3_dev ? l3_dev->kind().l3mdev_table(*l3_dev) : 0;
  // Linux: ip6_route_input_lookup — an input lookup of a loopback, link-local or multicast
  // destination (rt6_need_strict) takes only routes through the input device.
  static const IpAddr kLoopback6 = *IpAddr::parse("::1");
  const bool strict6 = f == AF_INET6 && flow.iif &&
                       (dst.is_multicast() || dst.is_v6_link_local() || dst == kLoopback6);
  auto usable = [&](const Route& r) {
    if (r.info.type == RTN_BROADCAST || r.info.type == RTN_MULTICAST) return false;
    if (!r.dev) return !oif;
    if (strict6 && r.dev->ifindex() != flow.iif) return false;
    // An IPv4 local route is there while its address is, the device down or not (Linux:
    // fib_add_ifaddr adds it whatever the device's state; a device that goes down takes it).
    const bool any_state = f == AF_INET && r.info.type == RTN_LOCAL;
    auto carries = [&](const Device* d) {
      return (any_state || d->is_up()) && (!oif || d->ifindex() == oif);
    };
    if (carries(r.dev)) return true;
    for (const Route::Hop& h : r.extra)
      if (carries(h.dev)) return true;
    return false;
  };
  // Linux: fib_rules_lookup — the rules in order; a table that has no answer (or answers
  // `throw`, or one a suppress selector rejects) passes the lookup to the next rule.
  const std::vector<Rule>& rules = f == AF_INET ? st.rules4 : st.rules6;
  auto looked = [&]() -> Result<Route*> {
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const Rule& rule = rules[i];
      if (!rule_matches(rule, flow, l3_table)) continue;
      switch (rule.info.action) {
        case FR_ACT_GOTO: {
          const Rule* target = goto_target(rules, rule);
          if (target) i = static_cast<std::size_t>(target - rules.data()) - 1;
          continue;
        }
        case FR_ACT_NOP:
          continue;
        case FR_ACT_TO_TBL:
          break;
        // Linux: fib4_rule_action / fib6_rule_action (IPv6 answers with its null entries).
        case FR_ACT_UNREACHABLE:
          return fail_log_only(ENETUNREACH, "Network is unreachable");
        case FR_ACT_PROHIBIT:
          return fail(EACCES);
        case FR_ACT_BLACKHOLE:
        default:
          return fail(EINVAL);
      }
      Route* got =
          lookup(st, f, rule.info.l3mdev ? l3_table : rule.info.table, dst, usable, flow.src);
      if (!got || got->info.type == RTN_THROW) continue;
      // Linux: fib4_rule_suppress / fib6_rule_suppress.
      if (static_cast<int>(got->info.dst_len) <= rule.info.suppress_prefixlen) continue;
      if (rule.info.suppress_ifgroup != -1 && got->dev &&
          got->dev->group() == static_cast<std::uint32_t>(rule.info.suppress_ifgroup))
        continue;
      switch (got->info.type) {
        case RTN_UNREACHABLE:
          return fail(EHOSTUNREACH);
        case RTN_BLACKHOLE:
          return fail(EINVAL);
        case RTN_PROHIBIT:
          return fail(EACCES);
        default:
          return got;
      }
    }
    return fail_log_only(ENETUNREACH, "Network is unreachable");  // Linux: no extack
  }();
  if (!looked && f == AF_INET && flow.iif && looked.error().code == ENETUNREACH) {
    // Linux: ip_route_input_slow — no route, on an input device that does not forward, is
    // EHOSTUNREACH.
    Device* in_dev = ctl.find(ns, flow.iif);
    auto conf = in_dev ? dev_conf4(ep, *in_dev) : std::nullopt;
    if (!conf || !conf->forwarding) return fail_log_only(EHOSTUNREACH, "No route to host");
  }
  if (!looked) {
    // Linux: ip_route_output_key_hash_rcu — with an output device given, a failed lookup
    // means the destination is on that device's link (`8.8.8.8 dev v0 src ...`), unless
    // the flow has an L3 master (`!fl4->flowi4_l3mdev`).
    Device* out_dev = f == AF_INET && oif && !flow.iif && !l3_master ? ctl.find(ns, oif) : nullptr;
    if (!out_dev || !out_dev->is_up()) return fail(looked.error());
    if (flow.fib_match) return fail(EHOSTUNREACH);  // Linux: no fib_info to show
    RouteInfo out =
        cached_route4(dst, RTN_UNICAST, oif,
                      RTM_F_CLONED | ((out_dev->flags() & IFF_LOOPBACK) ? RTCF_LOCAL : 0u));
    // Linux: inet_select_addr(dev, 0, RT_SCOPE_LINK) — the device's first primary address
    // of link scope or wider, else the first such address of any device of the namespace.
    auto select = [&](const Device& d) -> IpAddr {
      DevState* ds = find_dev(ep, d);
      if (!ds || !ds->in) return {};
      for (auto& ifa : ds->in->addrs)
        if (!(ifa->info.flags & IFA_F_SECONDARY) && ifa->info.scope <= RT_SCOPE_LINK)
          return ifa->info.local;
      return {};
    };
    out.prefsrc = select(*out_dev);
    for (Device* d : ns.devices_locked()) {
      if (!out.prefsrc.empty()) break;
      out.prefsrc = select(*d);
    }
    return out;
  }
  Route* r = *looked;
  // Linux: fib_validate_source for a local destination on the input path: a source that is
  // one of the namespace's own addresses is a martian (accept_local off).
  if (f == AF_INET && flow.iif && r->info.type == RTN_LOCAL && st.local_addrs.count(flow.src))
    return fail_log_only(EINVAL, "route get: a martian source {}", flow.src.to_string());
  if (flow.fib_match) {
    // Linux: the matched entry as its table holds it, but the table is the one the lookup
    // ran in: while no IPv4 rule was ever added, local and main are one (main).
    RouteInfo matched = report(*r);
    shown_in(st, matched);
    if (f == AF_INET && !st.custom_rules4) matched.table = RT_TABLE_MAIN;
    return matched;
  }
  // Linux: ip_route_input_slow — a packet that came in for another host is forwarded only
  // where the input device forwards; else the answer is EHOSTUNREACH.
  if (f == AF_INET && flow.iif && r->info.type != RTN_LOCAL) {
    Device* in_dev = ctl.find(ns, flow.iif);
    auto conf = in_dev ? dev_conf4(ep, *in_dev) : std::nullopt;
    if (!conf || !conf->forwarding) return fail(EHOSTUNREACH);
  }
  // A lookup's answer carries no next-hop flags (no `linkdown`): the route's own fields.
  RouteInfo out = r->info;
  Device* hop_dev = r->dev;
  if (!out.nexthops.empty()) {
    // Linux: fib_select_path / fib6_select_path — without an output device, the flow's
    // hash picks the hop (multipath.cc); with one, or when no hop is live, the first hop
    // whose device can carry the flow.
    std::size_t pick = 0;
    auto device_of = [&](std::size_t h) -> Device* {
      return h == 0 ? r->dev : (h - 1 < r->extra.size() ? r->extra[h - 1].dev : nullptr);
    };
    // Linux: whether each hop's gateway has a valid neighbour (or none), for a group always,
    // for an IPv4 route's own hops with fib_multipath_use_neigh.
    std::vector<char> good(out.nexthops.size(), 1);
    const bool use_neigh = f == AF_INET && st.mp_hash.use_neigh;
    if (r->nh || use_neigh)
      for (std::size_t h = 0; h < out.nexthops.size(); ++h)
        if (const Device* d = device_of(h)) good[h] = neigh_usable(ep, *d, out.nexthops[h].gateway);
    int hashed =
        oif ? -1 : mp_select(*r, mp_hash(ep, st, flow), ctl.engine().time().now(), good, use_neigh);
    if (hashed >= 0 && static_cast<std::size_t>(hashed) < out.nexthops.size()) {
      pick = static_cast<std::size_t>(hashed);
      hop_dev = device_of(pick);
    } else {
      for (std::size_t h = 0; h < out.nexthops.size(); ++h) {
        Device* d = device_of(h);
        if (d && d->is_up() && d->carrier() && (!oif || d->ifindex() == oif)) {
          pick = h;
          hop_dev = d;
          break;
        }
      }
    }
    out.gateway = out.nexthops[pick].gateway;
    out.oif = out.nexthops[pick].oif;
    out.nexthops.clear();
  }
  out.dst = dst;
  out.dst_len = static_cast<std::uint8_t>(max_len(f));
  // Linux: a gateway reached through a local route (fib_check_nh_v4_gw takes RTN_LOCAL:
  // 127.0.0.2 on lo) makes a next hop of scope host, and rt_set_nexthop uses a gateway of
  // scope link only: the answer has no gateway, and the source inet_select_addr finds for
  // the route's own scope (fib_result_prefsrc).
  const bool host_gw = f == AF_INET && !out.gateway.empty() &&
                       lookup(st, AF_INET, RT_TABLE_LOCAL, out.gateway,
                              [](const Route& x) { return x.info.type == RTN_LOCAL; }) != nullptr;
  if (host_gw) out.gateway = {};
  bool local = out.type == RTN_LOCAL;
  // Linux: a local destination is delivered through the loopback device (`dev lo`), or
  // through the L3 master of the route's device, the loopback of its domain
  // (ip_route_output_key_hash_rcu; IPv6: ip6_rt_get_dev_rcu, where a link-local or
  // multicast destination on an enslaved device stays on lo).
  if (local) {
    Device* master = nullptr;
    if (hop_dev && (f == AF_INET || is_l3mdev_master(*hop_dev) ||
                    !(dst.is_v6_link_local() || dst.is_multicast())))
      if (int m = l3mdev_master_ifindex(*hop_dev)) master = ctl.find(ns, m);
    if (master)
      out.oif = master->ifindex();
    else if (ns.loopback())
      out.oif = ns.loopback()->ifindex();
  }
  if (f == AF_INET) {
    // Linux: rt_fill_info for the cached route: the main table (local and main are one
    // table while no rule was ever added; after, the table the rules found it in),
    // universe scope, no protocol or metric, RTM_F_CLONED, and RTCF_LOCAL for a local
    // destination or one reached through the loopback device (`cache <local>`).
    out.table = st.custom_rules4 ? r->info.table : RT_TABLE_MAIN;
    out.scope = RT_SCOPE_UNIVERSE;
    out.protocol = 0;
    out.priority = 0;
    bool via_lo = hop_dev && (hop_dev->flags() & IFF_LOOPBACK);
    out.flags = RTM_F_CLONED | (local || via_lo ? RTCF_LOCAL : 0u);
  } else {
    // Linux: rt6_fill_node for the lookup's route: its table, protocol and metric, no flags.
    out.flags = 0;
  }
  // Linux: ip_route_output_key_hash_rcu — a local route without a preferred source sends
  // from the destination itself.
  if (f == AF_INET && local && out.prefsrc.empty()) out.prefsrc = dst;
  if (out.prefsrc.empty() && hop_dev && host_gw)
    out.prefsrc = select_scoped4(ep, ns, *hop_dev, r->info.scope);
  else if (out.prefsrc.empty() && hop_dev)
    out.prefsrc =
        f == AF_INET ? inet_select_addr(ep, *hop_dev) : inet6_select_addr(ep, *hop_dev, dst);
  return out;
}

}  // namespace ifcore::inet
