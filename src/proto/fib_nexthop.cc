// proto/fib_nexthop.cc — the next hop of a route a user adds, checked as Linux checks it
// (fib_check_nh for IPv4, fib6_nh_init's ip6_validate_gw for IPv6): its device, its gateway's
// reach, the gateways and devices refused.
//
// Lock order: control lock only.
#include <linux/rtnetlink.h>

#include <algorithm>

#include "proto/fib_impl.h"
#include "proto/state.h"

namespace ifcore::proto::fib {

using inet::RouteRequest;

bool needs_dev(std::uint8_t type) {
  return type != RTN_BLACKHOLE && type != RTN_UNREACHABLE && type != RTN_PROHIBIT &&
         type != RTN_THROW;
}

namespace {

// Linux: ip6_route_check_nh_onlink — the route to an onlink gateway in the device's table
// (its L3 master's, or main), if it is not a reject route or a default one, must be a
// unicast route through the device.
Result<void> check_onlink6(NetState& st, const Device& dev, const IpAddr& gw) {
  const std::uint32_t table = l3mdev_fib_table(dev) ? l3mdev_fib_table(dev) : RT_TABLE_MAIN;
  Route* r = lookup(st, AF_INET6, table, gw, [](const Route&) { return true; });
  if (!r || !needs_dev(r->info.type) || r->info.dst.is_unspecified()) return ok();
  if (r->info.type != RTN_UNICAST || r->dev != &dev)
    return fail(EINVAL, "Nexthop has invalid gateway or device mismatch");
  return ok();
}

}  // namespace

// Resolves the next hop of a new route: its device (and validates the gateway).
Result<Device*> resolve_nexthop(Control& ctl, Namespace& ns, const RouteRequest& req,
                                std::uint32_t table, std::uint8_t type) {
  Device* dev = nullptr;
  if (req.oif) {
    dev = ctl.find(ns, req.oif);
    // Linux 6.18 answers a missing RTA_OIF with ENODEV and no extack (both families).
    if (!dev) return fail_log_only(ENODEV, "Nexthop device not found");
  }
  // An IPv4 route's IPv6 gateway (RTA_VIA) is checked as an IPv6 route's (Linux:
  // fib_check_nh_v6_gw calls fib6_nh_init with the route's table).
  const bool gw6 = req.gateway && req.gateway->is_v6();
  // Linux: fib6_nh_init — an onlink next hop needs its device, up, before anything else
  // is looked at.
  if ((req.family == AF_INET6 || gw6) && (req.flags & RTNH_F_ONLINK)) {
    if (!dev) return fail(ENODEV, "Nexthop device required for onlink");
    if (!dev->is_up()) return fail(ENETDOWN, "Nexthop device is not up");
  }
  if (!needs_dev(type)) return nullptr;
  NetState& st = net_state(ns);
  // Linux: fib6_nh_init, after the gateway: a device that is down is ENETDOWN (routes
  // a user adds; addrconf's own pass fc_ignore_dev_down and do not come this way).
  // Before that, a device without IPv6 (an mtu below 1280) is ENODEV alone.
  auto up6 = [&](Device* d) -> Result<Device*> {
    if (!d) return d;
    if (!dev_conf6(engine_proto(ctl.engine()), *d))
      return fail_log_only(ENODEV, "device \"{}\" has no IPv6", d->name());
    if (!d->is_up()) return fail(ENETDOWN, "Nexthop device is not up");
    return d;
  };
  if (req.gateway && !req.gateway->empty()) {
    const IpAddr& gw = *req.gateway;
    if (gw.family() != req.family && !(req.family == AF_INET && gw6))
      return fail(EINVAL, "Invalid gateway address");
    auto ok = [&](const Route& r) { return is_connected(r) && (!dev || r.dev == dev); };
    if (!gw6) {
      // Linux: fib_check_nh_v4_gw — the gateway must be reachable through a link-scope
      // route (or the route is `onlink` on a given device).
      if (req.flags & RTNH_F_ONLINK) {
        if (req.scope.value_or(RT_SCOPE_UNIVERSE) >= RT_SCOPE_LINK)
          return fail(EINVAL, "Nexthop has invalid scope");
        if (!dev) return fail(ENODEV, "Nexthop device required for onlink");
        if (!dev->is_up()) return fail(ENETDOWN, "Nexthop device is not up");
        // (inet_addr_type_dev_table: the gateway must be a unicast address, not one's own.)
        if (st.local_addrs.count(gw) || gw.is_multicast() || gw.v4_host() == 0xffffffffu)
          return fail(EINVAL, "Nexthop has invalid gateway");
        return dev;
      }
      // The route to the gateway must have a narrower scope than the new route's own
      // (fib_check_nh_v4_gw looks it up with scope + 1, at least link): a gateway route of
      // scope link needs one of scope host.
      int want = std::max<int>(req.scope.value_or(RT_SCOPE_UNIVERSE) + 1, RT_SCOPE_LINK);
      // The lookup sees the local table first: a gateway that is a broadcast (or another
      // type but unicast and local) is EINVAL "Nexthop has invalid gateway".
      auto odd = [&](const Route& x) {
        return x.info.scope >= want && (!dev || x.dev == dev) && x.info.type != RTN_UNICAST &&
               x.info.type != RTN_LOCAL;
      };
      if (lookup(st, AF_INET, RT_TABLE_LOCAL, gw, odd))
        return fail(EINVAL, "Nexthop has invalid gateway");
      // The route's own table, then the full lookup (local, then main): a gateway that
      // is a local address (127.0.0.2 on lo) is reached through its local route.
      auto via = [&](const Route& x) { return ok(x) && x.info.scope >= want; };
      Route* r = table != RT_TABLE_MAIN ? lookup(st, AF_INET, table, gw, via) : nullptr;
      if (!r) r = lookup(st, AF_INET, RT_TABLE_LOCAL, gw, via);
      if (!r) r = lookup(st, AF_INET, RT_TABLE_MAIN, gw, via);
      if (!r) return fail(ENETUNREACH, "Nexthop has invalid gateway");
      return r->dev;
    }
    // Linux: ip6_validate_gw — not an address of the device (a link-local gateway) or of
    // the namespace (another); a link-local gateway needs the device; another is unicast
    // (or IPv4-mapped) and reachable without a gateway; the device is not the loopback.
    const bool link_local = gw.is_v6_link_local();
    auto own = [&](const Device& d) {
      if (!link_local) return st.local_addrs.count(gw) > 0;
      DevState* ds = find_dev(engine_proto(ctl.engine()), d);
      if (!ds || !ds->in6) return false;
      return std::any_of(ds->in6->addrs.begin(), ds->in6->addrs.end(),
                         [&](const auto& a) { return a->info.local == gw; });
    };
    if (dev && own(*dev)) return fail(EINVAL, "Gateway can not be a local address");
    Device* out = dev;
    if (!link_local) {
      if (gw.is_multicast() || gw.is_unspecified()) return fail(EINVAL, "Invalid gateway address");
      if (req.flags & RTNH_F_ONLINK) {
        IFCORE_TRY(check_onlink6(st, *dev, gw));
      } else {
        // Linux: ip6_route_check_nh — the route's own table first, then the full lookup.
        Route* r = table != RT_TABLE_MAIN ? lookup(st, AF_INET6, table, gw, ok) : nullptr;
        if (!r) r = lookup(st, AF_INET6, RT_TABLE_MAIN, gw, ok);
        if (!r) r = lookup(st, AF_INET6, RT_TABLE_LOCAL, gw, ok);
        if (!r) return fail(EHOSTUNREACH);
        out = r->dev;
      }
    }
    if (!out) return fail(EINVAL, "Egress device not specified");
    if (out->flags() & IFF_LOOPBACK)
      return fail(EINVAL, "Egress device can not be loopback device for this route");
    if (!dev && own(*out)) return fail(EINVAL, "Gateway can not be a local address");
    return up6(out);
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

}  // namespace ifcore::proto::fib
