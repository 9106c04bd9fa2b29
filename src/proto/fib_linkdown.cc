// proto/fib_linkdown.cc — the link state of IPv4 routes' next hops where Linux keeps it
// rather than reading it from the device: fib_check_nh sets a hop's RTNH_F_LINKDOWN when it
// is made only for an IPv4 gateway or none (fib_check_nh_v4_gw, fib_check_nh_nongw), not
// for an IPv6 one (fib_check_nh_v6_gw); fib_create_info marks a route whose hops are all
// `linkdown` so; fib_sync_down_dev and fib_sync_up change both at the device's events.
// Everything else is read from the devices when a route is reported (fib.cc: report).
//
// Lock order: control lock only.
#include <linux/rtnetlink.h>

#include "proto/fib_impl.h"
#include "proto/state.h"

namespace ifcore::proto::fib {

namespace {

constexpr std::uint32_t bit(std::size_t h) {
  return h < 32 ? std::uint32_t{1} << h : 0;
}

std::size_t hop_count(const Route& r) {
  return r.info.nexthops.empty() ? 1 : r.info.nexthops.size();
}

const IpAddr& hop_gateway(const RouteInfo& i, std::size_t h) {
  return i.nexthops.empty() ? i.gateway : i.nexthops[h].gateway;
}

}  // namespace

const Device* hop_device(const Route& r, std::size_t h) {
  if (h == 0) return r.dev;
  return h - 1 < r.extra.size() ? r.extra[h - 1].dev : nullptr;
}

std::uint32_t hop_link_flags(const Route& r, std::size_t h, const Device& d) {
  if (!d.is_up()) return RTNH_F_DEAD | RTNH_F_LINKDOWN;
  if (!d.carrier() && !(r.quiet_hops & bit(h))) return RTNH_F_LINKDOWN;
  return 0;
}

void link_state_made(Route& r, const std::vector<Device*>& hop_devs) {
  if (r.info.family != AF_INET || r.nh) return;
  const std::size_t n = hop_count(r);
  std::size_t linkdown = 0;
  for (std::size_t h = 0; h < n; ++h) {
    const Device* d = n > 1 ? (h < hop_devs.size() ? hop_devs[h] : nullptr) : r.dev;
    if (!d || d->carrier()) continue;
    if (hop_gateway(r.info, h).is_v6())
      r.quiet_hops |= bit(h);
    else
      ++linkdown;
  }
  r.linkdown = n > 1 && linkdown == n;
}

void sync_link_state(DevState& ds, const Device& dev, NetdevEvent event) {
  const bool carrier = dev.is_up() && dev.carrier();
  auto visit = [&](Route* r) {
    if (r->info.family != AF_INET || r->nh) return;
    const std::size_t n = hop_count(*r);
    std::uint32_t on = 0;
    for (std::size_t h = 0; h < n; ++h)
      if (hop_device(*r, h) == &dev) on |= bit(h);
    // The device's event gives its hops the state Linux's sync gives them, which is what
    // the device says from now on.
    r->quiet_hops &= ~on;
    if (n < 2) return;
    if (event == NetdevEvent::Down || (event == NetdevEvent::Change && !carrier)) {
      // fib_sync_down_dev: the hops counted dead are the dead ones and the device's.
      std::size_t dead = 0;
      for (std::size_t h = 0; h < n; ++h) {
        const Device* d = hop_device(*r, h);
        if ((on & bit(h)) || (d && !d->is_up())) ++dead;
      }
      if (dead == n) r->linkdown = true;
    } else if (carrier && (event == NetdevEvent::Change || event == NetdevEvent::Up)) {
      r->linkdown = false;  // fib_sync_up: the device's hops are alive
    }
  };
  ds.routes.for_each(visit);
  for (Route* r : ds.extra_routes) visit(r);
}

}  // namespace ifcore::proto::fib
