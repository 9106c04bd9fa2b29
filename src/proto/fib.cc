// proto/fib.cc — the route tables of both families (Linux: net/ipv4/fib_*.c, the route
// part of net/ipv6): the tables themselves, the routes that addresses make (local,
// broadcast, connected/prefix, the IPv6 multicast route), and the flushes that follow a
// device going down (IPv4) or away (both). User routes: fib_user.cc (their next hops:
// fib_nexthop.cc); lookups: fib_get.cc.
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

using inet::ProtoEvent;
using inet::RouteRequest;

namespace fib {

int max_len(int family) {
  return family == AF_INET ? 32 : 128;
}

RouteKey key_of(const RouteInfo& r) {
  return {r.dst, r.dst_len};
}

// What is reported: the stored info plus the link state of the next hop. Linux: an IPv4
// host-scope (local) route's next hop has scope RT_SCOPE_NOWHERE, which fib_check_nh and
// fib_sync_down_dev (at a close or a carrier change) pass over, so it never says
// `linkdown` (only the forced pass of an unregister marks it, and the route goes with its
// address first). An IPv6 local or anycast route never does either (fib6_nh_init and
// fib6_ifdown pass RTF_LOCAL and RTF_ANYCAST over); the routes IPv6 deletes at a close
// carry the mark they had (see EngineProto::closing).
RouteInfo report(const Route& r) {
  RouteInfo i = r.info;
  // A nexthop object's hops carry no link state: a nexthop goes with its device's down
  // or carrier loss (Linux: rt6_sync_down_dev and fib_sync_down_dev pass them over).
  if (r.nh) return i;
  if (!i.nexthops.empty()) {
    // Linux: each hop of a multipath route carries its own state: `dead linkdown` when its
    // device is down, `linkdown` when it has no carrier; the route itself carries none.
    // An IPv4 route whose hops went `linkdown` together carries it too (fib_linkdown.cc).
    for (std::size_t h = 0; h < i.nexthops.size(); ++h)
      if (const Device* d = hop_device(r, h)) i.nexthops[h].flags |= hop_link_flags(r, h, *d);
    if (r.linkdown) i.flags |= RTNH_F_LINKDOWN;
    return i;
  }
  if (!r.dev) return i;
  const bool never = (i.family == AF_INET && i.scope == RT_SCOPE_HOST) ||
                     (i.family == AF_INET6 && (i.type == RTN_LOCAL || i.type == RTN_ANYCAST));
  if (!never && (hop_link_flags(r, 0, *r.dev) & RTNH_F_LINKDOWN)) i.flags |= RTNH_F_LINKDOWN;
  return i;
}

Route* insert(const Control& ctl, EngineProto& ep, Namespace& ns, Route&& r, Route* before) {
  NetState& st = net_state(ns);
  Table& t = st.tables(r.info.family)[r.info.table];
  RouteList& v = t[key_of(r.info)];
  r.seq = before ? before->seq : st.route_seq++;
  r.table = &t;
  r.list = &v;
  // Before `before`, or after the last route that comes before it in its node's order
  // (see node_before).
  auto at = before ? before->self : v.end();
  while (!before && at != v.begin() && node_before(r.info, std::prev(at)->info)) --at;
  auto node = v.emplace(at, std::move(r));
  node->self = node;
  Route* p = &*node;
  if (p->dev) dev_state(ctl, ep, *p->dev).routes.push(p);
  return p;
}

// Takes `r` off its hops' devices and releases its dst entries (it then has no hops).
void release_hops(EngineProto& ep, Route* r) {
  if (r->dev)
    if (DevState* ds = find_dev(ep, *r->dev)) ds->routes.erase(r);
  for (Route::Hop& h : r->extra) {
    if (DevState* ds = find_dev(ep, *h.dev)) std::erase(ds->extra_routes, r);
    dst_free_hop(ep, h.dev, std::move(h.dst));
  }
  r->extra.clear();
  dst_free(ep, *r, std::move(r->dst));
}

// Unlinks `r` from its table and device, frees its dst entry and then the route.
void erase(EngineProto& ep, Namespace& ns, Route* r, bool notify, bool whole) {
  if (!r->list) return;
  RouteList& v = *r->list;
  std::optional<RouteInfo> gone;
  if (notify && route_news_wanted(ep, ns, r->info.family)) {
    gone = report(*r);
    // Linux: fib6_purge_rt clears an IPv6 route's expiry before fib6_del_route announces it.
    if (gone->family == AF_INET6) gone->expires.reset();
    const RouteInfo& i = r->info;
    if (ep.closing && r->dev == ep.closing && i.family == AF_INET6 && i.nexthops.empty() &&
        i.type != RTN_LOCAL && i.type != RTN_ANYCAST && !r->nh)
      gone->flags = (gone->flags & ~RTNH_F_LINKDOWN) | (ep.closing_linkdown ? RTNH_F_LINKDOWN : 0);
  }
  std::vector<inet::RouteMetrics> hop_metrics = std::move(r->hop_metrics);
  if (r->nh) std::erase(r->nh->routes, r);
  release_hops(ep, r);
  Table& t = *r->table;
  RouteKey key = key_of(r->info);
  v.erase(r->self);
  if (v.empty()) t.erase(key);
  if (!gone) return;
  const std::vector<inet::RouteMetrics> metrics = std::move(hop_metrics);
  if (whole || gone->family != AF_INET6 || gone->nexthops.empty() || gone->nhid) {
    notify_route(ep, ns, ProtoEvent::Del, *gone);
    return;
  }
  // Linux: the siblings of a route that goes as its device closes were never marked dead.
  const int closing = ep.closing ? ep.closing->ifindex() : 0;
  for (std::size_t i = 0; i < gone->nexthops.size(); ++i) {
    inet::NextHop h = gone->nexthops[i];
    if (closing && h.oif == closing)
      h.flags = (h.flags & ~std::uint32_t{RTNH_F_DEAD | RTNH_F_LINKDOWN}) |
                (ep.closing_linkdown ? RTNH_F_LINKDOWN : 0);
    notify_route(ep, ns, ProtoEvent::Del,
                 sibling_of(*gone, h, i < metrics.size() ? &metrics[i] : nullptr));
  }
}

bool is_connected(const Route& r) {
  return r.dev && r.info.gateway.empty() &&
         (r.info.type == RTN_UNICAST || r.info.type == RTN_LOCAL);
}

bool same_derived(const RouteInfo& a, const RouteInfo& b) {
  return a.table == b.table && a.dst == b.dst && a.dst_len == b.dst_len && a.type == b.type &&
         a.priority == b.priority && a.prefsrc == b.prefsrc && a.scope == b.scope;
}

RouteInfo kernel_route(int family, std::uint32_t table, std::uint8_t type, const IpAddr& dst,
                       int len, std::uint8_t scope, const IpAddr& prefsrc, std::uint32_t prio,
                       int oif) {
  RouteInfo r;
  r.family = family;
  r.table = table;
  r.type = type;
  r.dst = prefix_of(dst, len);
  r.dst_len = static_cast<std::uint8_t>(len);
  r.scope = scope;
  r.prefsrc = prefsrc;
  r.priority = prio;
  r.protocol = RTPROT_KERNEL;
  r.oif = oif;
  return r;
}

// Linux: fib_add_ifaddr, for every address of the device. fib_magic puts them in the
// table of the device's L3 master (a vrf's), if it has one, instead of local and main.
void desired_v4(Device& dev, const InDev& in, std::vector<std::pair<RouteInfo, Origin>>& out,
                bool as_up) {
  bool up = as_up || dev.is_up();
  bool lo = dev.flags() & IFF_LOOPBACK;
  int oif = dev.ifindex();
  const std::uint32_t l3 = l3mdev_fib_table(dev);
  const std::uint32_t local_tb = l3 ? l3 : RT_TABLE_LOCAL, main_tb = l3 ? l3 : RT_TABLE_MAIN;
  for (auto& ifa : in.addrs) {
    const AddrInfo& a = ifa->info;
    const AddrInfo* prim = &a;
    if (a.flags & IFA_F_SECONDARY) {
      prim = nullptr;
      for (auto& p : in.addrs)
        if (!(p->info.flags & IFA_F_SECONDARY) && p->info.prefixlen == a.prefixlen &&
            a.address.in_prefix(prefix_of(p->info.address, a.prefixlen), a.prefixlen)) {
          prim = &p->info;
          break;
        }
      if (!prim) continue;
    }
    const IpAddr& src = prim->local;
    out.push_back(
        {kernel_route(AF_INET, local_tb, RTN_LOCAL, a.local, 32, RT_SCOPE_HOST, src, 0, oif),
         Origin::Addr});
    if (!up) continue;
    if (!a.broadcast.empty() && a.broadcast.v4_host() != 0xFFFFFFFFu)
      out.push_back({kernel_route(AF_INET, local_tb, RTN_BROADCAST, a.broadcast, 32, RT_SCOPE_LINK,
                                  src, 0, oif),
                     Origin::Addr});
    IpAddr prefix = prefix_of(a.address, a.prefixlen);
    if (addr_is_zero(prefix) || (a.flags & IFA_F_SECONDARY) ||
        (prefix == a.local && a.prefixlen == 32))
      continue;
    if (!(a.flags & IFA_F_NOPREFIXROUTE)) {
      std::uint8_t type = lo ? RTN_LOCAL : RTN_UNICAST;
      out.push_back({kernel_route(AF_INET, type == RTN_UNICAST ? main_tb : local_tb, type, prefix,
                                  a.prefixlen, type == RTN_LOCAL ? RT_SCOPE_HOST : RT_SCOPE_LINK,
                                  src, a.rt_priority, oif),
                     Origin::Addr});
    }
    if (a.prefixlen < 31)
      out.push_back(
          {kernel_route(AF_INET, local_tb, RTN_BROADCAST, v4_or(prefix, ~v4_mask(a.prefixlen)), 32,
                        RT_SCOPE_LINK, src, 0, oif),
           Origin::Addr});
  }
}

// Linux: addrconf's host route (ifp->rt), prefix route and addrconf_add_mroute, each in
// the table of the device's L3 master if it has one (l3mdev_fib_table), else local / main.
void desired_v6(Device& dev, const Inet6Dev& in6, std::vector<std::pair<RouteInfo, Origin>>& out) {
  if (in6.conf.disable_ipv6) return;
  const bool up = dev.is_up();
  int oif = dev.ifindex();
  const std::uint32_t l3 = l3mdev_fib_table(dev);
  const std::uint32_t local_tb = l3 ? l3 : RT_TABLE_LOCAL, main_tb = l3 ? l3 : RT_TABLE_MAIN;
  // Linux: addrconf_add_mroute, from addrconf_dev_config once the link is ready or from
  // addrconf_add_dev when an address is added to an up device: before the addresses' routes.
  if (up && in6.mroute && !(dev.flags() & IFF_LOOPBACK)) {
    static const IpAddr kFf00 = *IpAddr::parse("ff00::");
    out.push_back({kernel_route(AF_INET6, local_tb, RTN_MULTICAST, kFf00, 8, RT_SCOPE_UNIVERSE, {},
                                kPrioAddrconf, oif),
                   Origin::Mcast});
  }
  for (auto& ifa : in6.addrs) {
    const AddrInfo& a = ifa->info;
    // Linux: the prefix route comes with the address on an up device, tentative or not
    // (inet6_addr_add's addrconf_prefix_route, fixup_permanent_addr at NETDEV_UP); the
    // host route in table local once DAD is over, up or not (__ipv6_ifa_notify: NOARP
    // devices and IFA_F_NODAD addresses skip DAD even on a down device).
    // init_loopback's ::1 gets the host route only: Linux 6.18 has no `::1 dev lo` in main.
    bool loopback_own =
        (dev.flags() & IFF_LOOPBACK) && a.prefixlen == 128 && a.local == IpAddr::v6(kLoopback6);
    if (up && !(a.flags & IFA_F_NOPREFIXROUTE) && !loopback_own) {
      out.push_back(
          {kernel_route(AF_INET6, main_tb, RTN_UNICAST, a.local, a.prefixlen, RT_SCOPE_UNIVERSE, {},
                        a.rt_priority ? a.rt_priority : kPrioAddrconf, oif),
           Origin::Addr});
      // Linux: addrconf_prefix_route with RTF_EXPIRES for a finite valid lifetime (the
      // newest address of the prefix, first in the list, sets it).
      if (!(a.flags & IFA_F_PERMANENT) && a.valid_lft != inet::kForever)
        out.back().first.expires = a.tstamp + std::chrono::seconds(a.valid_lft);
    }
    if (!(a.flags & IFA_F_TENTATIVE))
      out.push_back(
          {kernel_route(AF_INET6, local_tb, RTN_LOCAL, a.local, 128, RT_SCOPE_UNIVERSE, {}, 0, oif),
           Origin::Addr});
  }
}

// The device's routes of `family` in table order: by table, key, metric and insertion.
void sorted_routes(const DevState& ds, int family, std::vector<Route*>& out) {
  ds.routes.for_each([&](Route* r) {
    if (r->info.family == family) out.push_back(r);
  });
  std::sort(out.begin(), out.end(), [family](Route* a, Route* b) {
    if (family == AF_INET6 && a->info.table == b->info.table) return walk_before(*a, *b);
    return std::tie(a->info.table, a->info.dst, a->info.dst_len, a->info.priority, a->seq) <
           std::tie(b->info.table, b->info.dst, b->info.dst_len, b->info.priority, b->seq);
  });
}

// One of EngineProto's scratch vectors, empty, for the length of a call.
template <class T>
class Borrowed {
 public:
  explicit Borrowed(std::vector<T>& home) : home_(home), v_(std::move(home)) { v_.clear(); }
  Borrowed(const Borrowed&) = delete;
  Borrowed& operator=(const Borrowed&) = delete;
  ~Borrowed() {
    if (v_.capacity() > home_.capacity()) home_ = std::move(v_);
  }
  std::vector<T>& operator*() { return v_; }

 private:
  std::vector<T>& home_;
  std::vector<T> v_;
};

std::uint8_t default_scope(int family, std::uint8_t type, bool has_gw) {
  if (family == AF_INET6) return RT_SCOPE_UNIVERSE;
  switch (type) {
    case RTN_LOCAL:
    case RTN_NAT:
      return RT_SCOPE_HOST;
    case RTN_BROADCAST:
    case RTN_MULTICAST:
    case RTN_ANYCAST:
      return RT_SCOPE_LINK;
    case RTN_UNICAST:
      return has_gw ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
    default:
      return RT_SCOPE_UNIVERSE;
  }
}

}  // namespace fib

using namespace fib;

// ---------------------------------------------------------------- internal API

// Linux: fib6_run_gc's fib6_age — the IPv6 routes whose time is up go, with RTM_DELROUTE.
void expire_routes(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  RetireScope scope(ep);
  const TimePoint now = ctl.engine().time().now();
  std::optional<TimePoint> next;
  std::vector<Route*> due;
  for (auto it = ep.expiring_ns.begin(); it != ep.expiring_ns.end();) {
    Namespace* ns = ctl.find_namespace_by_id(*it);
    bool any = false;
    due.clear();
    if (ns)
      for (auto& [id, t] : net_state(*ns).tables6)
        for (auto& [k, list] : t)
          for (Route& r : list) {
            if (!r.info.expires) continue;
            if (*r.info.expires <= now) {
              due.push_back(&r);
            } else {
              any = true;
              if (!next || *r.info.expires < *next) next = r.info.expires;
            }
          }
    for (Route* r : due) erase(ep, *ns, r, true);
    it = any ? std::next(it) : ep.expiring_ns.erase(it);
  }
  if (next) arm_timer(ctl, ep.route_timer, *next);
}

void watch_route_expiry(Control& ctl, Namespace& ns, TimePoint at) {
  EngineProto& ep = engine_proto(ctl.engine());
  if (!ep.route_timer) ep.route_timer = add_timer(ctl, [](Control& c) { expire_routes(c); });
  ep.expiring_ns.insert(ns.id());
  auto armed = timer_deadline(ctl, ep.route_timer);
  if (!armed || at < *armed) arm_timer(ctl, ep.route_timer, at);
}

void fib_insert_kernel(Control& ctl, Namespace& ns, Device& dev, const RouteInfo& info,
                       Origin origin) {
  EngineProto& ep = engine_proto(ctl.engine());
  Route r;
  r.info = info;
  r.origin = origin;
  r.dev = &dev;
  r.dst = dst_alloc(ep, dev);
  // Linux: fib_magic asks NLM_F_CREATE | NLM_F_APPEND; addrconf's routes ask nothing, so
  // that IPv6 says NLM_F_CREATE alone beside a route of the same key.
  const bool first = same_key_routes(net_state(ns), r.info).empty();
  std::uint16_t flags = NLM_F_CREATE | (first ? NLM_F_EXCL : 0);
  if (!first && info.family == AF_INET) flags |= NLM_F_APPEND;
  Route* p = insert(ctl, ep, ns, std::move(r));
  if (route_news_wanted(ep, ns, p->info.family))
    notify_route(ep, ns, ProtoEvent::New, report(*p), flags);
}

void fib_flush_dev(Control& ctl, Namespace& ns, Device& dev, int family, Which which, bool notify) {
  EngineProto& ep = engine_proto(ctl.engine());
  DevState* ds = find_dev(ep, dev);
  if (!ds) return;
  // A multipath route goes when the device of any of its hops is unregistered (Linux:
  // fib_sync_down_dev with force), or when a down leaves none of its hops' devices up;
  // until then a hop on a down device is only `dead`.
  auto hops_up = [&](const Route& r) {
    if (r.dev && r.dev != &dev && r.dev->is_up()) return true;
    for (const Route::Hop& h : r.extra)
      if (h.dev != &dev && h.dev->is_up()) return true;
    return false;
  };
  if (!ds->extra_routes.empty()) {
    std::vector<Route*> extra = ds->extra_routes;
    for (Route* r : extra) {
      // A route naming a nexthop object goes with the object (nexthop.cc), not here.
      if (r->info.family != family || r->nh) continue;
      if (which == Which::All && family == AF_INET6)
        drop_hops_through(ctl, ns, r, dev, notify);
      else if (which == Which::All || (which == Which::User && !hops_up(*r)))
        erase(ep, ns, r, notify);
    }
  }
  if (ds->routes.empty()) return;
  Borrowed<Route*> routes(ep.route_scratch);
  sorted_routes(*ds, family, *routes);
  for (Route* r : *routes) {
    if (r->nh) continue;
    bool user = r->origin == Origin::User;
    if (which == Which::User && user && !r->extra.empty() && hops_up(*r)) continue;
    if (which == Which::All && family == AF_INET6 && !r->extra.empty()) {
      drop_hops_through(ctl, ns, r, dev, notify);
      continue;
    }
    if (which == Which::All || (which == Which::User) == user) erase(ep, ns, r, notify);
  }
}

namespace {

// Linux: fib6_add_rt2node — an IPv6 prefix route addrconf adds where a route of its key and
// metric through the same device without a gateway is (a user's, or one its address left
// behind) is EEXIST: that one stays, and takes the new one's expiry if it expires. It is the
// address's route from then on.
bool adopt_duplicate(Control& ctl, Namespace& ns, const Device& dev, const RouteInfo& info) {
  if (info.family != AF_INET6 || info.type != RTN_UNICAST) return false;
  for (Route* r : same_key_routes(net_state(ns), info)) {
    if (r->origin != Origin::User || r->dev != &dev || r->nh || !r->info.gateway.empty() ||
        !r->extra.empty())
      continue;
    r->origin = Origin::Addr;
    if (r->info.expires) {
      r->info.expires = info.expires;
      if (info.expires) watch_route_expiry(ctl, ns, *info.expires);
    }
    return true;
  }
  return false;
}

}  // namespace

void fib_sync_dev(Control& ctl, Namespace& ns, Device& dev, int family, bool notify_del,
                  bool down) {
  EngineProto& ep = engine_proto(ctl.engine());
  DevState& ds = dev_state(ctl, ep, dev);
  Borrowed<std::pair<RouteInfo, Origin>> borrowed(ep.want_scratch);
  auto& want = *borrowed;
  if (family == AF_INET && ds.in) desired_v4(dev, *ds.in, want);
  if (family == AF_INET6 && ds.in6) desired_v6(dev, *ds.in6, want);
  if (want.empty() && ds.routes.empty()) return;  // a down or bare device: nothing to do
  // Linux: fib6_ifdown at NETDEV_DOWN — a user's route through the device goes in the same
  // walk as the derived ones (a nexthop object's routes went with the nexthop); a
  // multipath route only once none of its other hops' devices is up.
  auto goes_down = [&](const Route& r) {
    if (!down || r.nh) return false;
    for (const Route::Hop& h : r.extra)
      if (h.dev != &dev && h.dev->is_up()) return false;
    return true;
  };
  // Duplicates (two addresses with the same local route) collapse into the first.
  std::size_t n = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (std::none_of(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(n),
                     [&](auto& u) { return same_derived(u.first, want[i].first); })) {
      if (n != i) want[n] = std::move(want[i]);
      ++n;
    }
  want.resize(n);
  // Linux: fib_sync_down_dev without force spares next hops of scope host, so a down
  // loopback keeps the prefix routes its addresses gave it while up (`local 127.0.0.0/8`,
  // scope host); they go with their addresses, and a down device gets none.
  std::vector<std::pair<RouteInfo, Origin>> keep;
  if (family == AF_INET && ds.in && !dev.is_up() && (dev.flags() & IFF_LOOPBACK))
    desired_v4(dev, *ds.in, keep, true);
  auto kept = [&](const RouteInfo& i) {
    return i.scope == RT_SCOPE_HOST &&
           std::any_of(keep.begin(), keep.end(), [&](auto& u) { return same_derived(u.first, i); });
  };
  Borrowed<Route*> have(ep.route_scratch);
  sorted_routes(ds, family, *have);
  // IPv4's derived routes that go are deleted after the new ones are added (Linux:
  // fib_modify_prefix_metric adds the prefix route of the new metric first), in
  // fib_del_ifaddr's order: the prefix route, the broadcast ones, then the local one.
  std::vector<Route*> gone4;
  auto erase_derived = [&](Route* r) {
    if (family == AF_INET)
      gone4.push_back(r);
    else
      erase(ep, ns, r, notify_del);
  };
  for (Route* r : *have) {
    if (r->origin == Origin::User) {
      if (goes_down(*r)) erase(ep, ns, r, notify_del);
      continue;
    }
    auto it = std::find_if(want.begin(), want.end(),
                           [&](auto& u) { return same_derived(u.first, r->info); });
    if (it == want.end() && kept(r->info)) continue;
    if (it == want.end()) {
      // Linux: ipv6_del_addr leaves the prefix route of a dynamic address alone
      // (check_cleanup_prefix_route is for permanent ones): it stays until it expires.
      if (r->info.expires && family == AF_INET6 && dev.is_up()) {
        r->origin = Origin::User;
        watch_route_expiry(ctl, ns, *r->info.expires);
      } else {
        erase_derived(r);
      }
    } else {
      r->info.expires = it->first.expires;  // Linux: fib6_set_expires, silently
      want.erase(it);
    }
  }
  for (auto& [info, origin] : want)
    if (!adopt_duplicate(ctl, ns, dev, info)) fib_insert_kernel(ctl, ns, dev, info, origin);
  auto rank = [](const Route* r) {
    if (r->info.type == RTN_LOCAL && r->info.dst_len == 32) return 2;
    return r->info.type == RTN_BROADCAST ? 1 : 0;
  };
  std::stable_sort(gone4.begin(), gone4.end(),
                   [&](const Route* a, const Route* b) { return rank(a) < rank(b); });
  for (Route* r : gone4) erase(ep, ns, r, notify_del);
}

}  // namespace ifcore::proto

namespace ifcore::proto {

// ---------------------------------------------------------------- the fib subscriber

namespace {

// Linux: fib_netdev_event — IPv4 routes through a device go when it goes down (the
// addresses' local routes stay) and all of them when it unregisters.
class FibSubscriber final : public Subscriber {
 public:
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    EngineProto& ep = engine_proto(ctl.engine());
    // A device without state was never seen (or this is a legacy re-broadcast: everything
    // is gone); the others' routes are the protocols' engine-wide state.
    if (auto local = find_dev_locally(ep, ev.dev); local && !*local) return ok();
    PluginGuard guard(ctl);
    RetireScope scope(ep, ev.batched);
    DevState* ds = find_dev(ep, ev.dev);
    if (!ds) return ok();
    Namespace& ns = ev.dev.ns();
    switch (ev.event) {
      case NetdevEvent::Up:
        fib_sync_dev(ctl, ns, ev.dev, AF_INET, false);
        fib::sync_link_state(*ds, ev.dev, ev.event);
        break;
      case NetdevEvent::Down:
        fib_flush_dev(ctl, ns, ev.dev, AF_INET, Which::User, false);
        fib_sync_dev(ctl, ns, ev.dev, AF_INET, false);
        fib::sync_link_state(*ds, ev.dev, ev.event);
        break;
      case NetdevEvent::Change:  // Linux: the carrier's fib_sync_up / fib_sync_down_dev
        fib::sync_link_state(*ds, ev.dev, ev.event);
        break;
      case NetdevEvent::Unregister:
        fib_flush_dev(ctl, ns, ev.dev, AF_INET, Which::All, false);
        break;
      case NetdevEvent::ChangeUpper:
        // Linux: fib_netdev_event(NETDEV_CHANGEUPPER) — a device linked to or unlinked
        // from an L3 master loses every IPv4 route through it (fib_disable_ip with force:
        // the local ones too); they come back in the new table when it comes up.
        if (ev.upper && is_l3mdev_master(*ev.upper))
          fib_flush_dev(ctl, ns, ev.dev, AF_INET, Which::All, false);
        break;
      default:
        break;
    }
    return ok();
  }
};

}  // namespace

void fib_subscribe(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  auto sub = std::make_unique<FibSubscriber>();
  ctl.subscribe(*sub,
                SubscribeOptions{"fib", 0, true,
                                 events_of(NetdevEvent::Up, NetdevEvent::Down, NetdevEvent::Change,
                                           NetdevEvent::Unregister, NetdevEvent::ChangeUpper),
                                 true});  // the plug-in lock taken above when needed
  ep.subscribers.push_back(std::move(sub));
}

}  // namespace ifcore::proto
