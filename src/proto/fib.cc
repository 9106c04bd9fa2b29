// proto/fib.cc — the route tables of both families (Linux: net/ipv4/fib_*.c, the route
// part of net/ipv6): user routes, the routes that addresses make (local, broadcast,
// connected/prefix, the IPv6 multicast route), lookups, and the flushes that follow a
// device going down (IPv4) or away (both).
//
// Lock order: control lock only.
#include <linux/fib_rules.h>
#include <linux/in_route.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "proto/state.h"

namespace ifcore::proto {

using inet::ProtoEvent;
using inet::RouteRequest;

namespace {

constexpr std::uint32_t kPrioUser6 = 1024;    // Linux: IP6_RT_PRIO_USER
constexpr std::uint32_t kPrioAddrconf = 256;  // Linux: IP6_RT_PRIO_ADDRCONF

int max_len(int family) {
  return family == AF_INET ? 32 : 128;
}

RouteKey key_of(const RouteInfo& r) {
  return {r.dst, r.dst_len};
}

// ---------------------------------------------------------------- IPv6 walk order
// Linux keeps IPv6 routes in a radix tree (fib6) and lists them as fib6_walk visits it: at
// each prefix, first the routes with a source prefix (the node's source subtree, in the same
// order), then the longer prefixes below it (the 0 branch first), then its own routes by
// metric. The tables here are keyed by prefix in the tree's pre-order; these give the walk.

// True if prefix `p`/`plen` holds `a`/`alen` (the same prefix included).
bool covers(const IpAddr& p, int plen, const IpAddr& a, int alen) {
  return plen <= alen && prefix_of(a, plen) == p;
}

// The walk's order of two prefixes' own routes: the longer prefixes below a prefix come
// before it; others by their first different bit.
bool post_order_less(const IpAddr& a, int alen, const IpAddr& b, int blen) {
  if (alen == blen && a == b) return false;
  if (covers(a, alen, b, blen)) return false;
  if (covers(b, blen, a, alen)) return true;
  return a < b;
}

// Within one prefix's list: the routes with a source prefix (in the walk's order of their
// source prefixes, then by metric), then those without, by metric.
bool node_before(const RouteInfo& a, const RouteInfo& b) {
  if ((a.src_len > 0) != (b.src_len > 0)) return a.src_len > 0;
  if (a.src_len > 0 && (a.src_len != b.src_len || a.src != b.src))
    return post_order_less(a.src, a.src_len, b.src, b.src_len);
  return a.priority < b.priority;
}

// The order Linux lists two IPv6 routes of one table in (see above).
bool walk_before(const Route& a, const Route& b) {
  const RouteInfo &x = a.info, &y = b.info;
  if (x.dst_len == y.dst_len && x.dst == y.dst) {
    if (node_before(x, y)) return true;
    if (node_before(y, x)) return false;
    return a.seq < b.seq;
  }
  if (covers(x.dst, x.dst_len, y.dst, y.dst_len)) return x.src_len > 0;
  if (covers(y.dst, y.dst_len, x.dst, x.dst_len)) return y.src_len == 0;
  return x.dst < y.dst;
}

// Whether a flow from `src` (empty: ::) is one `r`'s source prefix takes.
bool from_prefix(const RouteInfo& r, const IpAddr& src) {
  if (!r.src_len) return true;
  const IpAddr from = src.empty() ? IpAddr::v6(std::array<std::uint8_t, 16>{}) : src;
  return from.family() == AF_INET6 && prefix_of(from, r.src_len) == r.src;
}

// The source prefix `req` gives an IPv6 route, masked (RTA_SRC absent: ::).
IpAddr source_of(const RouteRequest& req) {
  const IpAddr src = req.src.empty() ? IpAddr::v6(std::array<std::uint8_t, 16>{}) : req.src;
  return prefix_of(src, req.src_len);
}

void set_source(RouteInfo& i, const RouteRequest& req) {
  if (req.family != AF_INET6 || !req.src_len) return;
  i.src = source_of(req);
  i.src_len = req.src_len;
}

bool same_source(const RouteInfo& i, const RouteRequest& req) {
  return i.src_len == req.src_len && (!req.src_len || i.src == source_of(req));
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
    for (std::size_t h = 0; h < i.nexthops.size(); ++h) {
      const Device* d = h == 0 ? r.dev : (h - 1 < r.extra.size() ? r.extra[h - 1].dev : nullptr);
      if (!d) continue;
      if (!d->is_up())
        i.nexthops[h].flags |= RTNH_F_DEAD | RTNH_F_LINKDOWN;
      else if (!d->carrier())
        i.nexthops[h].flags |= RTNH_F_LINKDOWN;
    }
    return i;
  }
  if (!r.dev) return i;
  bool down = !r.dev->is_up();
  const bool never = (i.family == AF_INET && i.scope == RT_SCOPE_HOST) ||
                     (i.family == AF_INET6 && (i.type == RTN_LOCAL || i.type == RTN_ANYCAST));
  const bool linkdown = !never && (down || !r.dev->carrier());
  if (linkdown) i.flags |= RTNH_F_LINKDOWN;
  return i;
}

Route* insert(EngineProto& ep, Namespace& ns, Route&& r) {
  NetState& st = net_state(ns);
  Table& t = st.tables(r.info.family)[r.info.table];
  RouteList& v = t[key_of(r.info)];
  r.seq = st.route_seq++;
  r.table = &t;
  r.list = &v;
  // After the last route that comes before it in its node's order (see node_before).
  auto at = v.end();
  while (at != v.begin() && node_before(r.info, std::prev(at)->info)) --at;
  auto node = v.emplace(at, std::move(r));
  node->self = node;
  Route* p = &*node;
  if (p->dev) dev_state(ep, *p->dev).routes.push(p);
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
void erase(EngineProto& ep, Namespace& ns, Route* r, bool notify) {
  if (!r->list) return;
  RouteList& v = *r->list;
  std::optional<RouteInfo> gone;
  if (notify && route_news_wanted(ep, ns, r->info.family)) {
    gone = report(*r);
    const RouteInfo& i = r->info;
    if (ep.closing && r->dev == ep.closing && i.family == AF_INET6 && i.nexthops.empty() &&
        i.type != RTN_LOCAL && i.type != RTN_ANYCAST && !r->nh)
      gone->flags = (gone->flags & ~RTNH_F_LINKDOWN) | (ep.closing_linkdown ? RTNH_F_LINKDOWN : 0);
  }
  if (r->nh) std::erase(r->nh->routes, r);
  release_hops(ep, r);
  Table& t = *r->table;
  RouteKey key = key_of(r->info);
  v.erase(r->self);
  if (v.empty()) t.erase(key);
  if (gone) notify_route(ep, ns, ProtoEvent::Del, *gone);
}

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
void desired_v4(Device& dev, const InDev& in, std::vector<std::pair<RouteInfo, Origin>>& out) {
  bool up = dev.is_up();
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

constexpr std::array<std::uint8_t, 16> kLoopback6 = {0, 0, 0, 0, 0, 0, 0, 0,
                                                     0, 0, 0, 0, 0, 0, 0, 1};

// Linux: addrconf's host route (ifp->rt), prefix route and addrconf_add_mroute, each in
// the table of the device's L3 master if it has one (l3mdev_fib_table), else local / main.
void desired_v6(Device& dev, const Inet6Dev& in6, std::vector<std::pair<RouteInfo, Origin>>& out) {
  if (in6.conf.disable_ipv6) return;
  const bool up = dev.is_up();
  int oif = dev.ifindex();
  const std::uint32_t l3 = l3mdev_fib_table(dev);
  const std::uint32_t local_tb = l3 ? l3 : RT_TABLE_LOCAL, main_tb = l3 ? l3 : RT_TABLE_MAIN;
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
  // Linux: addrconf_add_mroute, from addrconf_dev_config once the link is ready or from
  // addrconf_add_dev when an address is added to an up device.
  if (up && in6.mroute && !(dev.flags() & IFF_LOOPBACK)) {
    static const IpAddr kFf00 = *IpAddr::parse("ff00::");
    out.push_back({kernel_route(AF_INET6, local_tb, RTN_MULTICAST, kFf00, 8, RT_SCOPE_UNIVERSE, {},
                                kPrioAddrconf, oif),
                   Origin::Mcast});
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

bool needs_dev(std::uint8_t type) {
  return type != RTN_BLACKHOLE && type != RTN_UNREACHABLE && type != RTN_PROHIBIT &&
         type != RTN_THROW;
}

// Resolves the next hop of a new route: its device (and validates the gateway).
Result<Device*> resolve_nexthop(Control& ctl, Namespace& ns, const RouteRequest& req,
                                std::uint32_t table, std::uint8_t type) {
  Device* dev = nullptr;
  if (req.oif) {
    dev = ctl.find(ns, req.oif);
    // Linux 6.18 answers a missing RTA_OIF with ENODEV and no extack (both families).
    if (!dev) return fail_log_only(ENODEV, "Nexthop device not found");
  }
  if (!needs_dev(type)) return nullptr;
  NetState& st = net_state(ns);
  // Linux: fib6_nh_init, after the gateway: a device that is down is ENETDOWN (routes
  // a user adds; addrconf's own pass fc_ignore_dev_down and do not come this way).
  // Before that, a device without IPv6 (an mtu below 1280) is ENODEV alone.
  auto up6 = [&](Device* d) -> Result<Device*> {
    if (!d) return d;
    DevState* ds = find_dev(engine_proto(ctl.engine()), *d);
    if (!ds || !ds->in6) return fail_log_only(ENODEV, "device \"{}\" has no IPv6", d->name());
    if (!d->is_up()) return fail(ENETDOWN, "Nexthop device is not up");
    return d;
  };
  if (req.gateway && !req.gateway->empty()) {
    const IpAddr& gw = *req.gateway;
    if (gw.family() != req.family) return fail(EINVAL, "Invalid gateway address");
    auto ok = [&](const Route& r) { return is_connected(r) && (!dev || r.dev == dev); };
    if (req.family == AF_INET) {
      // Linux: fib_check_nh_v4_gw — the gateway must be reachable through a link-scope
      // route (or the route is `onlink` on a given device).
      if (dev && (req.flags & RTNH_F_ONLINK)) {
        if (req.scope.value_or(RT_SCOPE_UNIVERSE) >= RT_SCOPE_LINK)
          return fail(EINVAL, "Nexthop has invalid scope");
        if (!dev->is_up()) return fail(ENETDOWN, "Nexthop device is not up");
        return dev;
      }
      // The route to the gateway must have a narrower scope than the new route's own
      // (fib_check_nh_v4_gw looks it up with scope + 1, at least link): a gateway route of
      // scope link needs one of scope host.
      int want = std::max<int>(req.scope.value_or(RT_SCOPE_UNIVERSE) + 1, RT_SCOPE_LINK);
      auto via = [&](const Route& x) { return ok(x) && x.info.scope >= want; };
      Route* r = lookup(st, AF_INET, table, gw, via);
      if (!r && table != RT_TABLE_MAIN) r = lookup(st, AF_INET, RT_TABLE_MAIN, gw, via);
      if (!r) return fail(ENETUNREACH, "Nexthop has invalid gateway");
      return r->dev;
    }
    // Linux: ip6_validate_gw — a link-local gateway needs the device; another one must be
    // reachable without a gateway.
    if (gw.is_v6_link_local()) {
      if (!dev) return fail(EINVAL, "Egress device not specified");
      return up6(dev);
    }
    if (dev && (req.flags & RTNH_F_ONLINK)) return up6(dev);
    Route* r = lookup(st, AF_INET6, RT_TABLE_MAIN, gw, ok);
    if (!r) r = lookup(st, AF_INET6, RT_TABLE_LOCAL, gw, ok);
    if (!r) return fail(EHOSTUNREACH);
    return up6(r->dev);
  }
  if (!dev) return fail(ENODEV, "Nexthop device not found");
  if (req.family == AF_INET6) return up6(dev);
  // Linux: fib_check_nh_nongw (the onlink gateway above says "Nexthop device is not up").
  // (fib_create_info: a route of scope host, as `ip route add local` makes, is not checked.)
  if (req.family == AF_INET && !dev->is_up() &&
      req.scope.value_or(default_scope(AF_INET, type, false)) != RT_SCOPE_HOST)
    return fail(ENETDOWN, "Device for nexthop is not up");
  return dev;
}

}  // namespace

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
  Route* p = insert(ep, ns, std::move(r));
  if (route_news_wanted(ep, ns, p->info.family)) notify_route(ep, ns, ProtoEvent::New, report(*p));
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
  // IPv6 keeps a multipath route's hops as sibling routes: an unregister takes only the
  // hop through the device (Linux: fib6_ifdown), and one hop left is an ordinary route.
  auto drop_hop = [&](Route* r) {
    std::size_t h = 0;  // index in info.nexthops
    if (r->dev == &dev) {
      if (DevState* own = find_dev(ep, dev)) own->routes.erase(r);
      dst_free(ep, *r, std::move(r->dst));
      Route::Hop next = std::move(r->extra.front());
      r->extra.erase(r->extra.begin());
      std::erase(dev_state(ep, *next.dev).extra_routes, r);
      r->dev = next.dev;
      r->dst = std::move(next.dst);
      dev_state(ep, *r->dev).routes.push(r);
    } else {
      for (std::size_t i = 0; i < r->extra.size(); ++i)
        if (r->extra[i].dev == &dev) {
          h = i + 1;
          dst_free_hop(ep, &dev, std::move(r->extra[i].dst));
          r->extra.erase(r->extra.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
      std::erase(ds->extra_routes, r);
    }
    r->info.nexthops.erase(r->info.nexthops.begin() + static_cast<std::ptrdiff_t>(h));
    const inet::NextHop& first = r->info.nexthops.front();
    r->info.gateway = first.gateway;
    r->info.oif = first.oif;
    if (r->info.nexthops.size() == 1) r->info.nexthops.clear();
  };
  if (!ds->extra_routes.empty()) {
    std::vector<Route*> extra = ds->extra_routes;
    for (Route* r : extra) {
      // A route naming a nexthop object goes with the object (nexthop.cc), not here.
      if (r->info.family != family || r->nh) continue;
      if (which == Which::All && family == AF_INET6)
        drop_hop(r);
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
      drop_hop(r);
      continue;
    }
    if (which == Which::All || (which == Which::User) == user) erase(ep, ns, r, notify);
  }
}

void fib_sync_dev(Control& ctl, Namespace& ns, Device& dev, int family, bool notify_del,
                  bool down) {
  EngineProto& ep = engine_proto(ctl.engine());
  DevState& ds = dev_state(ep, dev);
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
  Borrowed<Route*> have(ep.route_scratch);
  sorted_routes(ds, family, *have);
  for (Route* r : *have) {
    if (r->origin == Origin::User) {
      if (goes_down(*r)) erase(ep, ns, r, notify_del);
      continue;
    }
    auto it = std::find_if(want.begin(), want.end(),
                           [&](auto& u) { return same_derived(u.first, r->info); });
    if (it == want.end()) {
      // Linux: ipv6_del_addr leaves the prefix route of a dynamic address alone
      // (check_cleanup_prefix_route is for permanent ones): it stays until it expires.
      if (r->info.expires && family == AF_INET6 && dev.is_up()) {
        r->origin = Origin::User;
        watch_route_expiry(ctl, ns, *r->info.expires);
      } else {
        erase(ep, ns, r, notify_del);
      }
    } else {
      r->info.expires = it->first.expires;  // Linux: fib6_set_expires, silently
      want.erase(it);
    }
  }
  for (auto& [info, origin] : want) fib_insert_kernel(ctl, ns, dev, info, origin);
}

// ---------------------------------------------------------------- public API

namespace {

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

}  // namespace

Result<Device*> fib_resolve_hop(Control& ctl, Namespace& ns, int family, const IpAddr& gw, int oif,
                                std::uint32_t flags) {
  RouteRequest req;
  req.family = family;
  if (!gw.empty()) req.gateway = gw;
  req.oif = oif;
  req.flags = flags & RTNH_F_ONLINK;
  return resolve_nexthop(ctl, ns, req, RT_TABLE_MAIN, RTN_UNICAST);
}

void fib_bind_hops(EngineProto& ep, Route* r, const std::vector<inet::NextHop>& hops,
                   const std::vector<Device*>& devs, bool blackhole, bool group) {
  release_hops(ep, r);
  if (!blackhole && r->info.type == RTN_BLACKHOLE) r->info.type = RTN_UNICAST;
  set_route_hops(r->info, hops, blackhole, group);
  r->dev = devs.empty() ? nullptr : devs.front();
  if (r->dev) {
    r->dst = dst_alloc(ep, *r->dev);
    dev_state(ep, *r->dev).routes.push(r);
  }
  for (std::size_t h = 1; hops.size() > 1 && h < devs.size(); ++h) {
    if (!devs[h]) continue;
    r->extra.push_back(Route::Hop{devs[h], dst_alloc(ep, *devs[h])});
    dev_state(ep, *devs[h]).extra_routes.push_back(r);
  }
}

void fib_erase(EngineProto& ep, Namespace& ns, Route* r, bool notify) {
  erase(ep, ns, r, notify);
}

RouteInfo fib_report(const Route& r) {
  return report(r);
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

namespace {
Result<RouteInfo> insert_user_route(Control& ctl, Namespace& ns, const RouteRequest& req, Route&& r,
                                    const std::vector<Device*>& extra_devs);
Result<RouteInfo> add_route_nh(Control& ctl, Namespace& ns, const RouteRequest& req,
                               const IpAddr& dst, std::uint32_t table, std::uint8_t type);
}  // namespace

Result<RouteInfo> add_route(Control& ctl, Namespace& ns, const RouteRequest& req) {
  RetireScope scope(engine_proto(ctl.engine()));
  if (req.family != AF_INET && req.family != AF_INET6)
    return fail(EAFNOSUPPORT, "unsupported address family {}", req.family);
  // Linux: inet_rtm_newroute makes the table (fib_new_table) before fib_table_insert
  // looks at the route, so even a refused route leaves its table behind (a later delete
  // answers ESRCH, not "FIB table does not exist").
  if (req.family == AF_INET)
    (void)net_state(ns).tables(AF_INET)[req.table ? req.table : RT_TABLE_MAIN];
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
    bool nowhere = type == RTN_NAT || type == RTN_XRESOLVE || type == RTN_UNSPEC;
    if (nowhere && req.scope.value_or(RT_SCOPE_UNIVERSE) != RT_SCOPE_NOWHERE)
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
  // next hop would be; a single hop is an ordinary route.
  std::vector<Device*> hop_devs;
  for (const NextHop& nh : req.nexthops) {
    RouteRequest hr = req;
    hr.nexthops.clear();
    hr.gateway = nh.gateway.empty() ? std::nullopt : std::optional<IpAddr>(nh.gateway);
    hr.oif = nh.oif;
    hr.flags = nh.flags & RTNH_F_ONLINK;
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
    first.flags = (req.flags & ~std::uint32_t{RTNH_F_ONLINK}) | (nh.flags & RTNH_F_ONLINK);
    if (!multipath) return add_route(ctl, ns, first);
    has_gw = first.gateway.has_value();
  }
  auto dev = req.nexthops.empty() ? resolve_nexthop(ctl, ns, req, table, type)
                                  : Result<Device*>(hop_devs.front());
  if (!dev) return fail(std::move(dev).error());
  if (req.prefsrc && !inet::is_local_address(ctl, ns, *req.prefsrc))
    return fail(EINVAL,
                req.family == AF_INET ? "Invalid prefsrc address" : "Invalid source address");

  Route r;
  RouteInfo& i = r.info;
  i.family = req.family;
  i.table = table;
  i.dst = dst;
  i.dst_len = req.dst_len;
  set_source(i, req);
  i.tos = req.tos;
  if (multipath) {
    if (!req.nexthops.front().gateway.empty()) i.gateway = req.nexthops.front().gateway;
    for (std::size_t h = 0; h < req.nexthops.size(); ++h) {
      NextHop nh = req.nexthops[h];
      nh.oif = hop_devs[h] ? hop_devs[h]->ifindex() : 0;
      nh.flags &= RTNH_F_ONLINK;
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
  i.scope = req.scope.value_or(default_scope(req.family, type, has_gw));
  i.type = type;
  if (req.prefsrc) i.prefsrc = *req.prefsrc;
  i.flags = req.flags & RTNH_F_ONLINK;
  i.metrics = req.metrics;
  r.dev = *dev;

  return insert_user_route(ctl, ns, req, std::move(r),
                           multipath ? hop_devs : std::vector<Device*>{});
}

namespace {

// Adds the route `r` that `req` made (its info set, `r.dev` its first hop's device) to
// its table, as the request's flags say; `extra_devs` are a multipath route's hops'
// devices (the first one's included). Linux: fib_table_insert, fib6_add_rt2node.
Result<RouteInfo> insert_user_route(Control& ctl, Namespace& ns, const RouteRequest& req, Route&& r,
                                    const std::vector<Device*>& extra_devs) {
  RouteInfo& i = r.info;
  const IpAddr& dst = i.dst;
  const std::uint32_t table = i.table;
  // Existing routes with the same key (Linux: fib_table_insert, fib6_add_rt2node).
  EngineProto& ep = engine_proto(ctl.engine());
  NetState& st = net_state(ns);
  Route* same = nullptr;     // same key and metric
  Route* same_nh = nullptr;  // ... and the same next hop
  auto t = st.tables(req.family).find(table);
  if (t != st.tables(req.family).end()) {
    auto k = t->second.find(RouteKey{dst, req.dst_len});
    if (k != t->second.end())
      for (auto& x : k->second) {
        if (x.info.priority != i.priority || x.info.tos != i.tos) continue;
        if (x.info.src_len != i.src_len || x.info.src != i.src) continue;
        if (!same) same = &x;
        if (x.info.oif == i.oif && x.info.gateway == i.gateway && x.info.type == i.type) {
          same_nh = &x;
          break;
        }
      }
  }
  // IPv4 treats any route with the same key as "the same"; IPv6 the same next hop, or any
  // route of the same metric when NLM_F_EXCL is set (fib6_add_rt2node).
  Route* clash = req.family == AF_INET ? same : (req.excl && same ? same : same_nh);
  if (req.replace) {
    Route* old = req.family == AF_INET ? same : (same_nh ? same_nh : same);
    // Linux: fib_table_insert answers ENOENT alone; fib6_add_1 explains it.
    if (!old && !req.create) {
      if (req.family == AF_INET6) return fail(ENOENT, "Can not replace route - no match found");
      return fail(ENOENT);
    }
    if (old) erase(ep, ns, old, false);
  } else {
    if (clash && (req.excl || same_nh)) return fail(EEXIST);
    // Linux: IPv4 needs NLM_F_CREATE (fib_table_insert: ENOENT); IPv6 warns ("NLM_F_CREATE
    // should be set when creating new route") and adds the route all the same.
    if (!req.create && req.family == AF_INET) return fail(ENOENT);
  }
  if (r.dev) r.dst = dst_alloc(ep, *r.dev);
  for (std::size_t h = 1; h < extra_devs.size(); ++h)
    if (extra_devs[h]) r.extra.push_back(Route::Hop{extra_devs[h], dst_alloc(ep, *extra_devs[h])});
  Route* p = insert(ep, ns, std::move(r));
  for (Route::Hop& h : p->extra) dev_state(ep, *h.dev).extra_routes.push_back(p);
  if (p->nh) p->nh->routes.push_back(p);
  RouteInfo out = report(*p);
  notify_route(ep, ns, ProtoEvent::New, out);
  return out;
}

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
  if (req.prefsrc && !inet::is_local_address(ctl, ns, *req.prefsrc))
    return fail(EINVAL,
                req.family == AF_INET ? "Invalid prefsrc address" : "Invalid source address");
  std::vector<NextHop> hops;
  std::vector<Device*> devs;
  nexthop_hops(st, *nh, hops, devs);
  Route r;
  RouteInfo& i = r.info;
  i.family = req.family;
  i.table = table;
  i.dst = dst;
  i.dst_len = req.dst_len;
  i.tos = req.tos;
  i.type = type;
  set_route_hops(i, hops, nh->info.blackhole, nh->info.is_group());
  i.nhid = nh->info.id;
  i.priority = req.priority.value_or(0);
  if (req.family == AF_INET6 && i.priority == 0) i.priority = kPrioUser6;
  i.protocol = req.protocol.value_or(RTPROT_BOOT);
  i.scope = scope;
  if (req.prefsrc) i.prefsrc = *req.prefsrc;
  i.metrics = req.metrics;
  r.dev = devs.empty() ? nullptr : devs.front();
  r.nh = nh;
  return insert_user_route(ctl, ns, req, std::move(r),
                           hops.size() > 1 ? devs : std::vector<Device*>{});
}

}  // namespace

Result<void> delete_route(Control& ctl, Namespace& ns, const RouteRequest& req) {
  EngineProto& ep = engine_proto(ctl.engine());
  RetireScope scope(ep);
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
    if (req.type && *req.type && i.type != *req.type) continue;
    if (req.protocol && *req.protocol && i.protocol != *req.protocol) continue;
    if (req.scope && *req.scope != RT_SCOPE_NOWHERE && i.scope != *req.scope) continue;
    if (req.oif && i.oif != req.oif) continue;
    if (req.gateway && !req.gateway->empty() && i.gateway != *req.gateway) continue;
    if (req.prefsrc && i.prefsrc != *req.prefsrc) continue;
    if (req.nhid && i.nhid != req.nhid) continue;  // Linux: fib_nh_match, ip6_route_del
    erase(ep, ns, &x, true);
    return ok();
  }
  return fail(ESRCH);
}

std::vector<RouteInfo> list_routes(Control& ctl, Namespace& ns, int family,
                                   std::optional<std::uint32_t> table) {
  std::vector<RouteInfo> out;
  NetState& st = net_state(ns);
  for (int f : {AF_INET, AF_INET6}) {
    if (family && family != f) continue;
    for (auto& [id, tbl] : st.tables(f)) {
      if (table && *table != id) continue;
      if (f == AF_INET) {
        for (auto& [key, v] : tbl)
          for (auto& r : v) out.push_back(report(r));
        continue;
      }
      std::vector<const Route*> walk;
      for (auto& [key, v] : tbl)
        for (auto& r : v) walk.push_back(&r);
      std::stable_sort(walk.begin(), walk.end(),
                       [](const Route* a, const Route* b) { return walk_before(*a, *b); });
      for (const Route* r : walk) out.push_back(report(*r));
    }
  }
  return out;
}

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

}  // namespace

Result<RouteInfo> get_route(Control& ctl, Namespace& ns, const Flow& given) {
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
  auto usable = [&](const Route& r) {
    if (r.info.type == RTN_BROADCAST || r.info.type == RTN_MULTICAST) return false;
    if (!r.dev) return !oif;
    auto carries = [&](const Device* d) { return d->is_up() && (!oif || d->ifindex() == oif); };
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
  if (flow.fib_match) return report(*r);
  // Linux: ip_route_input_slow — a packet that came in for another host is forwarded only
  // where the input device forwards; else the answer is EHOSTUNREACH.
  if (f == AF_INET && flow.iif && r->info.type != RTN_LOCAL) {
    Device* in_dev = ctl.find(ns, flow.iif);
    DevState* ds = in_dev ? find_dev(ep, *in_dev) : nullptr;
    if (!ds || !ds->in || !ds->in->conf.forwarding) return fail(EHOSTUNREACH);
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
    int hashed = oif ? -1 : mp_select(*r, mp_hash(ep, st, flow), ctl.engine().time().now());
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
  if (out.prefsrc.empty() && hop_dev)
    out.prefsrc =
        f == AF_INET ? inet_select_addr(ep, *hop_dev) : inet6_select_addr(ep, *hop_dev, dst);
  return out;
}

}  // namespace ifcore::inet

namespace ifcore::proto {

// ---------------------------------------------------------------- the fib subscriber

namespace {

// Linux: fib_netdev_event — IPv4 routes through a device go when it goes down (the
// addresses' local routes stay) and all of them when it unregisters.
class FibSubscriber final : public Subscriber {
 public:
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    EngineProto& ep = engine_proto(ctl.engine());
    RetireScope scope(ep, ev.batched);
    DevState* ds = find_dev(ep, ev.dev);
    if (!ds) return ok();  // never seen (or a legacy re-broadcast: everything is gone)
    Namespace& ns = ev.dev.ns();
    switch (ev.event) {
      case NetdevEvent::Up:
        fib_sync_dev(ctl, ns, ev.dev, AF_INET, false);
        break;
      case NetdevEvent::Down:
        fib_flush_dev(ctl, ns, ev.dev, AF_INET, Which::User, false);
        fib_sync_dev(ctl, ns, ev.dev, AF_INET, false);
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
  ctl.subscribe(
      *sub, SubscribeOptions{"fib", 0, true,
                             events_of(NetdevEvent::Up, NetdevEvent::Down, NetdevEvent::Unregister,
                                       NetdevEvent::ChangeUpper)});
  ep.subscribers.push_back(std::move(sub));
}

}  // namespace ifcore::proto
