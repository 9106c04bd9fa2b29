// proto/fib_insert.cc — where a user's route goes among the routes of its key, as the
// request's NLM_F_* flags say (Linux: fib_table_insert for IPv4's aliases,
// fib6_add_rt2node and ip6_route_multipath_add for IPv6's siblings), what the
// RTM_NEWROUTE that announces it carries, and the removal of one IPv6 sibling.
//
// Lock order: control lock only.
#include <linux/rtnetlink.h>

#include <algorithm>

#include "proto/fib_impl.h"
#include "proto/state.h"

namespace ifcore::proto::fib {

namespace {

constexpr std::uint16_t kNew = NLM_F_CREATE | NLM_F_EXCL;  // the first route of its key

std::uint32_t onlink(std::uint32_t flags) {
  return flags & RTNH_F_ONLINK;
}

bool same_hop(const inet::NextHop& a, const inet::NextHop& b) {
  return a.gateway == b.gateway && a.oif == b.oif && onlink(a.flags) == onlink(b.flags);
}

// Linux: fib_table_insert's exact match, the same type and the same fib_info (which
// fib_create_info shares between routes that say the same).
bool same_alias(const RouteInfo& a, const RouteInfo& b) {
  auto hops_equal = [](const inet::NextHop& x, const inet::NextHop& y) {
    return same_hop(x, y) && x.weight == y.weight;
  };
  return a.type == b.type && a.protocol == b.protocol && a.scope == b.scope &&
         a.prefsrc == b.prefsrc && a.gateway == b.gateway && a.oif == b.oif &&
         onlink(a.flags) == onlink(b.flags) && a.metrics == b.metrics && a.nhid == b.nhid &&
         std::equal(a.nexthops.begin(), a.nexthops.end(), b.nexthops.begin(), b.nexthops.end(),
                    hops_equal);
}

// Linux: rt6_qualify_for_ecmp — a route with a gateway of its own joins the others of
// its key and metric that have one as a sibling (one multipath route).
bool ecmp_able(const RouteInfo& i) {
  return !i.nhid && !i.gateway.empty() && i.type == RTN_UNICAST;
}

// A route's hops, one for a route with a single next hop (Linux gives it weight 1).
std::vector<inet::NextHop> hops_of(const RouteInfo& i) {
  if (!i.nexthops.empty()) return i.nexthops;
  return {inet::NextHop{i.gateway, i.oif, 1, onlink(i.flags)}};
}

// The devices of `r`'s hops, in the hops' order.
std::vector<Device*> devs_of(const Route& r) {
  std::vector<Device*> out{r.dev};
  for (const Route::Hop& h : r.extra) out.push_back(h.dev);
  return out;
}

// Linux: rt6_duplicate_nexthop — a hop of `i` that a route of the same metric has.
bool has_hop_of(const RouteInfo& x, const RouteInfo& i) {
  if (x.nhid || i.nhid) return x.nhid == i.nhid;
  auto theirs = hops_of(x);
  for (const inet::NextHop& h : hops_of(i))
    if (std::any_of(theirs.begin(), theirs.end(),
                    [&](const inet::NextHop& t) { return same_hop(t, h); }))
      return true;
  return false;
}

// Adds `r` to its table (before `before`, in the place of `replaced`, which goes without
// an RTM_DELROUTE) and announces it with `nlflags`.
RouteInfo place(Control& ctl, Namespace& ns, Route&& r, const std::vector<Device*>& extra_devs,
                Route* before, Route* replaced, std::uint16_t nlflags) {
  EngineProto& ep = engine_proto(ctl.engine());
  if (r.dev) r.dst = dst_alloc(ep, *r.dev);
  for (std::size_t h = 1; h < extra_devs.size(); ++h)
    if (extra_devs[h]) r.extra.push_back(Route::Hop{extra_devs[h], dst_alloc(ep, *extra_devs[h])});
  Route* p = insert(ctl, ep, ns, std::move(r), replaced ? replaced : before);
  for (Route::Hop& h : p->extra) dev_state(ctl, ep, *h.dev).extra_routes.push_back(p);
  if (p->nh) p->nh->routes.push_back(p);
  if (replaced) erase(ep, ns, replaced, false);
  RouteInfo out = report(*p);
  notify_route(ep, ns, inet::ProtoEvent::New, out, nlflags);
  return out;
}

// Linux: fib_table_insert. The aliases of one key keep the order the requests gave them:
// NLM_F_APPEND after the last, otherwise before the first; NLM_F_REPLACE takes the
// first's place (and does nothing when the first is the same route).
Result<RouteInfo> insert_v4(Control& ctl, Namespace& ns, const RouteRequest& req, Route&& r,
                            const std::vector<Device*>& extra_devs,
                            const std::vector<Route*>& same) {
  auto exact = std::find_if(same.begin(), same.end(),
                            [&](const Route* x) { return same_alias(x->info, r.info); });
  Route* match = exact == same.end() ? nullptr : *exact;
  Route* first = same.empty() ? nullptr : same.front();
  if (req.replace) {
    if (match) {
      if (match != first) return fail(EEXIST);
      return report(*match);
    }
    if (first) return place(ctl, ns, std::move(r), extra_devs, nullptr, first, NLM_F_REPLACE);
  } else if (match) {
    return fail(EEXIST);
  }
  if (!req.create) return fail(ENOENT);
  if (!first) return place(ctl, ns, std::move(r), extra_devs, nullptr, nullptr, kNew);
  if (req.append)
    return place(ctl, ns, std::move(r), extra_devs, nullptr, nullptr, NLM_F_CREATE | NLM_F_APPEND);
  return place(ctl, ns, std::move(r), extra_devs, first, nullptr, NLM_F_CREATE);
}

// A route with a gateway joins `group` as its last hops (Linux: fib6_add_rt2node links a
// sibling at the end of the first's list). The RTM_NEWROUTE shows the whole route: a
// single route added first and then the others (rt6_fill_node from the new sibling), a
// multipath request's in the route's order (ip6_route_multipath_add).
RouteInfo join(Control& ctl, Namespace& ns, Route& group, const Route& r,
               const std::vector<Device*>& extra_devs, std::uint16_t nlflags) {
  EngineProto& ep = engine_proto(ctl.engine());
  std::vector<inet::NextHop> hops = hops_of(group.info);
  std::vector<Device*> devs = devs_of(group);
  std::vector<inet::RouteMetrics> metrics = group.hop_metrics;
  if (metrics.empty()) metrics.assign(hops.size(), group.info.metrics);
  const bool multipath = !r.info.nexthops.empty();
  for (const inet::NextHop& h : hops_of(r.info)) {
    hops.push_back(h);
    metrics.push_back(r.info.metrics);
  }
  if (multipath)
    devs.insert(devs.end(), extra_devs.begin(), extra_devs.end());
  else
    devs.push_back(r.dev);
  fib_bind_hops(ctl, ep, &group, hops, devs, false, false);
  group.hop_metrics = std::move(metrics);
  RouteInfo out = report(group);
  if (!multipath) {  // rt6_fill_node of the new sibling: its own metrics
    std::rotate(out.nexthops.rbegin(), out.nexthops.rbegin() + 1, out.nexthops.rend());
    out.metrics = r.info.metrics;
  }
  notify_route(ep, ns, inet::ProtoEvent::New, out, nlflags);
  return report(group);
}

// Linux: fib6_add_rt2node. A route with a gateway joins the routes of its key and metric
// that have one (as siblings: one multipath route); a hop that one of them has already is
// EEXIST; NLM_F_REPLACE replaces the first of the same kind (siblings or not), all its
// hops with it.
Result<RouteInfo> insert_v6(Control& ctl, Namespace& ns, const RouteRequest& req, Route&& r,
                            const std::vector<Device*>& extra_devs,
                            const std::vector<Route*>& same) {
  const bool multipath = !r.info.nexthops.empty();
  // Linux: ip6_route_multipath_add announces the route once, without NLM_F_EXCL.
  const std::uint16_t added = NLM_F_CREATE | (req.append ? NLM_F_APPEND : 0) |
                              (same.empty() && !multipath ? NLM_F_EXCL : 0);
  if (req.replace) {
    auto kind = std::find_if(same.begin(), same.end(), [&](const Route* x) {
      return ecmp_able(x->info) == ecmp_able(r.info);
    });
    Route* old = kind != same.end() ? *kind : same.empty() ? nullptr : same.front();
    if (old) return place(ctl, ns, std::move(r), extra_devs, nullptr, old, NLM_F_REPLACE);
    if (!req.create) return fail(ENOENT, "Can not replace route - no match found");
    return place(ctl, ns, std::move(r), extra_devs, nullptr, nullptr, added);
  }
  if (std::any_of(same.begin(), same.end(),
                  [&](const Route* x) { return has_hop_of(x->info, r.info); }))
    return fail(EEXIST);
  if (ecmp_able(r.info)) {
    auto group =
        std::find_if(same.begin(), same.end(), [](const Route* x) { return ecmp_able(x->info); });
    if (group != same.end()) return join(ctl, ns, **group, r, extra_devs, added);
  }
  return place(ctl, ns, std::move(r), extra_devs, nullptr, nullptr, added);
}

}  // namespace

Result<RouteInfo> insert_user_route(Control& ctl, Namespace& ns, const RouteRequest& req, Route&& r,
                                    const std::vector<Device*>& extra_devs) {
  const std::vector<Route*> same = same_key_routes(net_state(ns), r.info);
  // Linux: fib_table_insert and fib6_add_rt2node refuse any route of the same key and
  // metric first.
  if (req.excl && !same.empty()) return fail(EEXIST);
  if (r.info.family == AF_INET) return insert_v4(ctl, ns, req, std::move(r), extra_devs, same);
  return insert_v6(ctl, ns, req, std::move(r), extra_devs, same);
}

std::vector<Route*> same_key_routes(NetState& st, const RouteInfo& i) {
  std::vector<Route*> out;
  auto t = st.tables(i.family).find(i.table);
  if (t == st.tables(i.family).end()) return out;
  auto k = t->second.find(key_of(i));
  if (k == t->second.end()) return out;
  for (Route& x : k->second)
    if (x.info.priority == i.priority && x.info.tos == i.tos && x.info.src_len == i.src_len &&
        x.info.src == i.src)
      out.push_back(&x);
  return out;
}

RouteInfo sibling_of(const RouteInfo& r, const inet::NextHop& h,
                     const inet::RouteMetrics* metrics) {
  RouteInfo out = r;
  if (metrics) out.metrics = *metrics;
  out.nexthops.clear();
  out.gateway = h.gateway;
  out.oif = h.oif;
  out.flags = h.flags;
  return out;
}

namespace {

// Keeps the hops of `r` that `keep(i)` takes (their devices bound again, their siblings'
// metrics kept) and returns the others, each as the sibling Linux announces; `r` keeps one
// hop at least, and its hops have their devices.
template <class Keep>
std::vector<RouteInfo> keep_hops(Control& ctl, Route& r, Keep keep) {
  const RouteInfo shown = report(r);
  std::vector<inet::NextHop> hops = hops_of(shown), kept;
  std::vector<Device*> devs = devs_of(r), kept_devs;
  std::vector<inet::RouteMetrics> metrics = r.hop_metrics, kept_metrics;
  if (metrics.size() != hops.size()) metrics.assign(hops.size(), r.info.metrics);
  std::vector<RouteInfo> gone;
  for (std::size_t i = 0; i < hops.size(); ++i) {
    if (!keep(i, devs[i])) {
      gone.push_back(sibling_of(shown, hops[i], &metrics[i]));
      continue;
    }
    hops[i].flags = onlink(hops[i].flags);
    kept.push_back(hops[i]);
    kept_devs.push_back(devs[i]);
    kept_metrics.push_back(std::move(metrics[i]));
  }
  if (gone.empty()) return gone;
  fib_bind_hops(ctl, engine_proto(ctl.engine()), &r, kept, kept_devs, false, false);
  r.info.metrics = kept_metrics.front();
  if (kept.size() < 2) kept_metrics.clear();
  r.hop_metrics = std::move(kept_metrics);
  return gone;
}

bool hops_bound(const Route& r) {
  return devs_of(r).size() == hops_of(r.info).size();
}

}  // namespace

void drop_hops_through(Control& ctl, Namespace& ns, Route* r, const Device& dev, bool notify) {
  EngineProto& ep = engine_proto(ctl.engine());
  const std::vector<Device*> devs = devs_of(*r);
  if (!hops_bound(*r) || std::find(devs.begin(), devs.end(), &dev) == devs.end()) return;
  if (std::all_of(devs.begin(), devs.end(), [&](const Device* d) { return d == &dev; }))
    return erase(ep, ns, r, notify);
  auto gone = keep_hops(ctl, *r, [&](std::size_t, const Device* d) { return d != &dev; });
  if (!notify || !route_news_wanted(ep, ns, AF_INET6)) return;
  for (const RouteInfo& g : gone) notify_route(ep, ns, inet::ProtoEvent::Del, g);
}

std::optional<RouteInfo> remove_hop(Control& ctl, Route& r, const IpAddr& gateway, int oif) {
  const std::vector<inet::NextHop> hops = hops_of(r.info);
  if (hops.size() < 2 || !hops_bound(r)) return std::nullopt;
  auto it = std::find_if(hops.begin(), hops.end(), [&](const inet::NextHop& h) {
    return h.gateway == gateway && (!oif || h.oif == oif);
  });
  if (it == hops.end()) return std::nullopt;
  const auto at = static_cast<std::size_t>(it - hops.begin());
  return keep_hops(ctl, r, [&](std::size_t i, const Device*) { return i != at; }).front();
}

}  // namespace ifcore::proto::fib
