// proto/addrconf_routes.cc — the routes addrconf keeps by hand (see addrconf_routes.h).
//
// Lock order: control lock only.
#include "proto/addrconf_routes.h"

#include <chrono>

#include "proto/fib_impl.h"

namespace ifcore::proto {

namespace {

// When an address with a finite valid lifetime and its prefix routes expire.
std::optional<TimePoint> expiry_of(const AddrInfo& a) {
  if (a.valid_lft == inet::kForever) return std::nullopt;
  return a.tstamp + std::chrono::seconds(a.valid_lft);
}

std::uint32_t prefix_table(const Device& dev) {
  const std::uint32_t l3 = l3mdev_fib_table(dev);
  return l3 ? l3 : RT_TABLE_MAIN;
}

}  // namespace

Route* find_prefix_route6(Namespace& ns, const Device& dev, const IpAddr& dst, int len,
                          bool no_gw) {
  auto& tables = net_state(ns).tables(AF_INET6);
  auto t = tables.find(prefix_table(dev));
  if (t == tables.end()) return nullptr;
  auto k = t->second.find(RouteKey{prefix_of(dst, len), static_cast<std::uint8_t>(len)});
  if (k == t->second.end()) return nullptr;
  for (Route& r : k->second) {
    if (r.info.src_len || r.nh || r.dev != &dev) continue;
    if (no_gw && !r.info.gateway.empty()) continue;
    return &r;
  }
  return nullptr;
}

void add_prefix_route6(Control& ctl, Namespace& ns, Device& dev, const IpAddr& dst, int len,
                       std::uint32_t metric, std::optional<TimePoint> expires) {
  if (!dev.is_up()) return;
  if (!metric) metric = fib::kPrioAddrconf;
  auto& tables = net_state(ns).tables(AF_INET6);
  if (auto t = tables.find(prefix_table(dev)); t != tables.end()) {
    auto k = t->second.find(RouteKey{prefix_of(dst, len), static_cast<std::uint8_t>(len)});
    if (k != t->second.end())
      for (Route& r : k->second) {
        if (r.info.src_len || r.nh || r.dev != &dev || !r.info.gateway.empty() ||
            r.info.priority != metric)
          continue;
        // Linux: fib6_add_rt2node — a duplicate that expires takes the new expiry.
        if (r.info.expires) {
          r.info.expires = expires;
          if (expires) watch_route_expiry(ctl, ns, *expires);
        }
        return;
      }
  }
  RouteInfo info = fib::kernel_route(AF_INET6, prefix_table(dev), RTN_UNICAST, dst, len,
                                     RT_SCOPE_UNIVERSE, {}, metric, dev.ifindex());
  info.expires = expires;
  fib_insert_kernel(ctl, ns, dev, info, Origin::User);
  if (expires) watch_route_expiry(ctl, ns, *expires);
}

bool modify_prefix_route6(Control& ctl, Namespace& ns, Device& dev, const IpAddr& dst, int len,
                          std::uint32_t metric, std::optional<TimePoint> expires) {
  Route* r = find_prefix_route6(ns, dev, dst, len, true);
  if (!r) return false;
  if (!metric) metric = fib::kPrioAddrconf;
  if (r->info.priority != metric) {
    fib_erase(engine_proto(ctl.engine()), ns, r, true);
    add_prefix_route6(ctl, ns, dev, dst, len, metric, expires);
    return true;
  }
  r->info.expires = expires;  // Linux: fib6_set_expires / fib6_clean_expires, silently
  if (expires) watch_route_expiry(ctl, ns, *expires);
  return true;
}

void del_prefix_route6(Control& ctl, Namespace& ns, const Device& dev, const IpAddr& dst, int len,
                       bool no_gw) {
  if (Route* r = find_prefix_route6(ns, dev, dst, len, no_gw))
    fib_erase(engine_proto(ctl.engine()), ns, r, true);
}

Route* prefix_route_to_clean(Namespace& ns, const Device& dev, const Inet6Dev& in6,
                             const Ifa& ifa) {
  const AddrInfo& a = ifa.info;
  if (!(a.flags & IFA_F_PERMANENT) || (a.flags & IFA_F_NOPREFIXROUTE)) return nullptr;
  const IpAddr prefix = prefix_of(a.local, a.prefixlen);
  // Another address of the prefix keeps the route (a permanent one or one without a
  // prefix route as it is; the others give it their expiry, which fib_sync_dev does).
  for (const auto& x : in6.addrs)
    if (x.get() != &ifa && x->info.prefixlen == a.prefixlen &&
        prefix_of(x->info.local, a.prefixlen) == prefix)
      return nullptr;
  Route* r = find_prefix_route6(ns, dev, a.local, a.prefixlen, true);
  return r && r->origin == Origin::User ? r : nullptr;
}

bool has_peer(const AddrInfo& a) {
  return !a.address.empty() && a.address != a.local;
}

void add_peer_route(Control& ctl, Namespace& ns, Device& dev, const AddrInfo& a) {
  if (has_peer(a)) add_prefix_route6(ctl, ns, dev, a.address, 128, a.rt_priority);
}

void del_peer_route(Control& ctl, Namespace& ns, const Device& dev, const AddrInfo& a) {
  if (has_peer(a)) del_prefix_route6(ctl, ns, dev, a.address, 128, false);
}

void inet6_modify_addr(Control& ctl, Namespace& ns, Device& dev, Inet6Dev& in6, Ifa& ifa,
                       const AddrInfo& a) {
  EngineProto& ep = engine_proto(ctl.engine());
  AddrInfo& cur = ifa.info;
  const bool new_peer = has_peer(a) && a.address != cur.address;
  // A new peer: the old one's prefix route goes (cleanup_prefix_route with del_peer).
  if (new_peer && has_peer(cur)) del_prefix_route6(ctl, ns, dev, cur.address, cur.prefixlen, true);
  const bool had_prefixroute = (cur.flags & IFA_F_PERMANENT) && !(cur.flags & IFA_F_NOPREFIXROUTE);
  // Its prefix route goes (check_cleanup_prefix_route), a user's too.
  Route* clean = had_prefixroute && (a.flags & IFA_F_NOPREFIXROUTE)
                     ? prefix_route_to_clean(ns, dev, in6, ifa)
                     : nullptr;
  const std::uint32_t mod = IFA_F_NOPREFIXROUTE | IFA_F_HOMEADDRESS | IFA_F_NODAD |
                            IFA_F_MANAGETEMPADDR | IFA_F_MCAUTOJOIN | IFA_F_PERMANENT |
                            IFA_F_DEPRECATED;
  cur.flags = (cur.flags & ~mod) | (a.flags & mod);
  cur.valid_lft = a.valid_lft;
  cur.preferred_lft = a.preferred_lft;
  cur.tstamp = a.tstamp;
  if (a.rt_priority) cur.rt_priority = a.rt_priority;  // a metric of 0 keeps the address's
  cur.proto = a.proto;
  if (new_peer) cur.address = a.address;
  watch_lifetime(ctl, ns, dev, ifa);
  notify_addr(ep, ns, inet::ProtoEvent::New, cur);
  fib_sync_dev(ctl, ns, dev, AF_INET6, true);
  if (clean) fib_erase(ep, ns, clean, true);
  // The peer's prefix route, of the address's prefix length: changed if the address had a
  // prefix route (modify_prefix_route), else added.
  if (!(cur.flags & IFA_F_NOPREFIXROUTE) && has_peer(cur) &&
      !(had_prefixroute && modify_prefix_route6(ctl, ns, dev, cur.address, cur.prefixlen,
                                                cur.rt_priority, expiry_of(cur))))
    add_prefix_route6(ctl, ns, dev, cur.address, cur.prefixlen, cur.rt_priority, expiry_of(cur));
}

}  // namespace ifcore::proto
