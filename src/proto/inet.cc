// proto/inet.cc — IPv4 addresses per device (Linux: net/ipv4/devinet.c): the in_device
// made at register, primary and secondary addresses, deletion with its secondaries or with
// promotion, the loopback's 127.0.0.1, and the IPv4 settings (forwarding,
// promote_secondaries).
//
// Lock order: control lock only. Freed addresses and in_devices drop their references in
// RCU callbacks.
#include <linux/neighbour.h>

#include "base/rcu.h"
#include "proto/fib_prefsrc.h"
#include "proto/state.h"

namespace ifcore::proto {

using inet::AddrRequest;
using inet::ProtoEvent;

std::uint32_t v4_mask(int len) {
  return len <= 0 ? 0 : ~std::uint32_t{0} << (32 - len);
}
IpAddr v4_or(const IpAddr& a, std::uint32_t bits) {
  return IpAddr::v4(a.v4_host() | bits);
}
bool addr_is_zero(const IpAddr& a) {
  return a.is_unspecified();
}
IpAddr prefix_of(const IpAddr& a, int len) {
  const int size = static_cast<int>(a.size());
  if (size == 0 || len >= size * 8) return a;
  std::array<std::uint8_t, 16> b{};
  const int keep = std::max(len, 0);
  std::copy_n(a.data(), keep / 8, b.begin());
  if (keep % 8) b[keep / 8] = a.data()[keep / 8] & static_cast<std::uint8_t>(0xff00u >> (keep % 8));
  return size == 4 ? IpAddr::v4_bytes(std::span(b).first<4>()) : IpAddr::v6(std::span(b));
}

namespace {

// Linux: devinet_copy_dflt_conf — the settings a write of the default gives the devices
// that never wrote their own, each with its Own4 bit: f(bit, member).
template <class F>
void for_each_propagated(F f) {
  f(inet::kOwn4Promote, &Inet4Conf::promote_secondaries);
  f(inet::kOwn4RpFilter, &Inet4Conf::rp_filter);
  f(inet::kOwn4ProxyArp, &Inet4Conf::proxy_arp);
  f(inet::kOwn4IgnoreLinkdown, &Inet4Conf::ignore_routes_with_linkdown);
  f(inet::kOwn4BcForwarding, &Inet4Conf::bc_forwarding);
}

// Linux: inet_ifa_match — `a` lies in the subnet of `ifa`.
bool in_subnet(const IpAddr& a, const AddrInfo& ifa) {
  return prefix_of(a, ifa.prefixlen) == prefix_of(ifa.address, ifa.prefixlen);
}

bool promote_on(NetState& st, const InDev& in) {
  return st.all4.promote_secondaries || in.conf.promote_secondaries;  // Linux: IN_DEV_ORCONF
}

void retire(Control& ctl, std::unique_ptr<Ifa> ifa) {
  retire_hooked(engine_proto(ctl.engine()), ifa.release());
}

std::vector<AddrInfo> infos_of(const InDev& in) {
  std::vector<AddrInfo> out;
  for (const auto& ifa : in.addrs) out.push_back(ifa->info);
  return out;
}

// Linux: fib_add_ifaddr's arp_invalidate(dev, brd, false) — on an up device, the entry of
// a broadcast address the address brings (its own broadcast, and a primary's prefix
// broadcast) goes unless it is valid (an incomplete, failed or none one), as `ip neigh
// del` takes it: RTM_DELNEIGH (after RTM_NEWNEIGH, turned failed, if it was incomplete).
void invalidate_broadcasts(Control& ctl, Namespace& ns, Device& dev, const AddrInfo& a) {
  if (!dev.is_up()) return;
  constexpr std::uint16_t kNudValid =
      NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY;
  std::vector<IpAddr> brd;
  if (!a.broadcast.empty() && !a.broadcast.is_unspecified() && a.broadcast.v4_host() != 0xffffffffu)
    brd.push_back(a.broadcast);
  const IpAddr prefix = prefix_of(a.address, a.prefixlen);
  if ((prefix.v4_host() >> 24) != 0 && !(a.flags & IFA_F_SECONDARY) && a.prefixlen < 31)
    brd.push_back(v4_or(prefix, ~v4_mask(a.prefixlen)));
  for (const IpAddr& b : brd) {
    inet::NeighRequest q;
    q.family = AF_INET;
    q.ifindex = dev.ifindex();
    q.dst = b;
    auto n = inet::get_neigh(ctl, ns, q);
    if (n && !(n->state & kNudValid)) (void)inet::delete_neigh(ctl, ns, q);
  }
}

// Inserts a new address (Linux: __inet_insert_ifa). Primaries go after the last primary
// of wider or equal scope, secondaries at the end.
Result<AddrInfo> insert_ifa(Control& ctl, Namespace& ns, Device& dev, InDev& in, AddrInfo a,
                            bool replace) {
  if (a.tstamp == TimePoint{}) a.cstamp = a.tstamp = ctl.engine().time().now();
  std::size_t pos = 0;
  for (std::size_t i = 0; i < in.addrs.size(); ++i) {
    AddrInfo& x = in.addrs[i]->info;
    if (!(x.flags & IFA_F_SECONDARY) && a.scope <= x.scope) pos = i + 1;
    if (x.prefixlen == a.prefixlen && in_subnet(x.address, a)) {
      if (x.local == a.local) {
        if (!replace) return fail(EEXIST, "ipv4: Address already assigned");
        // Linux: inet_rtm_newaddr with NLM_F_REPLACE — the metric, the protocol and the
        // lifetimes change; the other flags stay.
        x.rt_priority = a.rt_priority;
        x.proto = a.proto;
        set_lifetime(x, a.valid_lft, a.preferred_lft, a.tstamp);
        watch_lifetime(ctl, ns, dev, *in.addrs[i]);
        // Linux: fib_modify_prefix_metric (the new prefix route, then the old one's
        // deletion) before RTM_NEWADDR.
        fib_sync_dev(ctl, ns, dev, AF_INET, true);
        notify_addr(engine_proto(ctl.engine()), ns, ProtoEvent::New, x);
        return reported(x, a.tstamp);
      }
      if (x.scope != a.scope) return fail(EINVAL, "ipv4: Invalid scope value");
      a.flags |= IFA_F_SECONDARY;
    }
  }
  auto ifa = std::make_unique<Ifa>(dev, "inet");
  ifa->info = a;
  const Ifa& added = *ifa;
  if (a.flags & IFA_F_SECONDARY) pos = in.addrs.size();
  in.addrs.insert(in.addrs.begin() + static_cast<std::ptrdiff_t>(pos), std::move(ifa));
  net_state(ns).count_local(added.info.local);
  watch_lifetime(ctl, ns, dev, added);
  // Linux: rtmsg_ifa(RTM_NEWADDR) first, then the inetaddr chain makes the routes.
  notify_addr(engine_proto(ctl.engine()), ns, ProtoEvent::New, a);
  fib_sync_dev(ctl, ns, dev, AF_INET, true);
  invalidate_broadcasts(ctl, ns, dev, a);
  return reported(a, a.tstamp);
}

void remove_at(Control& ctl, Namespace& ns, Device& dev, InDev& in, std::size_t i) {
  std::unique_ptr<Ifa> ifa = std::move(in.addrs[i]);
  in.addrs.erase(in.addrs.begin() + static_cast<std::ptrdiff_t>(i));
  net_state(ns).uncount_local(ifa->info.local);
  notify_addr(engine_proto(ctl.engine()), ns, ProtoEvent::Del, ifa->info);
  fib_sync_dev(ctl, ns, dev, AF_INET, true);
  fib_flush_prefsrc4(ctl, ns, dev, ifa->info.local);  // Linux: fib_del_ifaddr, at its end
  retire(ctl, std::move(ifa));
}

// Deletes address `idx` (Linux: __inet_del_ifa): a primary takes its secondaries with it,
// or, with promote_secondaries, the first of them becomes primary.
void del_ifa(Control& ctl, Namespace& ns, Device& dev, InDev& in, std::size_t idx) {
  Ifa* victim = in.addrs[idx].get();
  const AddrInfo v = victim->info;
  Ifa* promote = nullptr;
  if (!(v.flags & IFA_F_SECONDARY)) {
    bool do_promote = promote_on(net_state(ns), in);
    for (std::size_t i = 0; i < in.addrs.size();) {
      AddrInfo& x = in.addrs[i]->info;
      if (!(x.flags & IFA_F_SECONDARY) || x.prefixlen != v.prefixlen || !in_subnet(x.address, v)) {
        ++i;
        continue;
      }
      if (do_promote) {
        if (!promote) promote = in.addrs[i].get();
        ++i;
        continue;
      }
      remove_at(ctl, ns, dev, in, i);
    }
  }
  // Linux: __inet_del_ifa, promoting — the subnet's secondaries lose their routes first
  // (fib_del_ifaddr while the primary is still there), and get them back with the promoted
  // address as their source.
  std::vector<std::unique_ptr<Ifa>> held;
  if (promote) {
    for (std::size_t i = 0; i < in.addrs.size();) {
      const AddrInfo& x = in.addrs[i]->info;
      if (!(x.flags & IFA_F_SECONDARY) || x.prefixlen != v.prefixlen || !in_subnet(x.address, v)) {
        ++i;
        continue;
      }
      held.push_back(std::move(in.addrs[i]));
      in.addrs.erase(in.addrs.begin() + static_cast<std::ptrdiff_t>(i));
    }
    fib_sync_dev(ctl, ns, dev, AF_INET, true);
  }
  for (std::size_t i = 0; i < in.addrs.size(); ++i)
    if (in.addrs[i].get() == victim) {
      remove_at(ctl, ns, dev, in, i);
      break;
    }
  for (auto& h : held) in.addrs.push_back(std::move(h));
  if (promote) {
    // The promoted address moves to just after the last primary.
    std::unique_ptr<Ifa> p;
    for (std::size_t i = 0; i < in.addrs.size(); ++i)
      if (in.addrs[i].get() == promote) {
        p = std::move(in.addrs[i]);
        in.addrs.erase(in.addrs.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    p->info.flags &= ~IFA_F_SECONDARY;
    std::size_t pos = 0;
    for (std::size_t i = 0; i < in.addrs.size(); ++i)
      if (!(in.addrs[i]->info.flags & IFA_F_SECONDARY)) pos = i + 1;
    AddrInfo info = p->info;
    in.addrs.insert(in.addrs.begin() + static_cast<std::ptrdiff_t>(pos), std::move(p));
    notify_addr(engine_proto(ctl.engine()), ns, ProtoEvent::New, info);
    fib_sync_dev(ctl, ns, dev, AF_INET, true);
    invalidate_broadcasts(ctl, ns, dev, info);
  }
  // Linux: fib_inetaddr_event — the last address gone, every IPv4 route through the device
  // goes too (without notifications, as fib_disable_ip).
  if (in.addrs.empty()) fib_flush_dev(ctl, ns, dev, AF_INET, Which::All, false);
}

Result<std::pair<Device*, InDev*>> find_in_dev(Control& ctl, Namespace& ns, int ifindex) {
  Device* dev = ctl.find(ns, ifindex);
  if (!dev) return fail(ENODEV, "ipv4: Device not found");
  DevState* ds = find_or_make_dev(ctl, engine_proto(ctl.engine()), *dev);
  if (!ds || !ds->in) return fail(ENODEV, "ipv4: Device not found");
  return std::pair{dev, ds->in.get()};
}

Result<AddrInfo> add_v4(Control& ctl, Namespace& ns, const AddrRequest& req) {
  if (req.prefixlen > 32) return fail(EINVAL, "ipv4: Invalid prefix length");
  if (!req.local || !req.local->is_v4()) return fail(EINVAL, "ipv4: Local address is not supplied");
  IFCORE_TRY(check_lifetime_request(AF_INET, req));
  auto found = find_in_dev(ctl, ns, req.ifindex);
  if (!found) return fail(std::move(found).error());
  auto [dev, in] = *found;
  AddrInfo a;
  a.family = AF_INET;
  a.ifindex = dev->ifindex();
  a.prefixlen = req.prefixlen;
  a.local = *req.local;
  a.address = req.address && req.address->is_v4() ? *req.address : a.local;
  if (req.broadcast && req.broadcast->is_v4()) a.broadcast = *req.broadcast;
  a.label = req.label ? *req.label : dev->name();
  a.scope = req.scope;
  // Linux: set_ifa_lifetime marks an address with infinite lifetimes permanent.
  a.flags = req.flags & ~(IFA_F_SECONDARY | IFA_F_TENTATIVE);
  set_lifetime(a, req.valid_lft, req.preferred_lft, ctl.engine().time().now());
  a.rt_priority = req.rt_priority;
  a.proto = req.proto;
  // Linux: __inet_insert_ifa drops an address of 0.0.0.0 and answers success.
  if (a.local.is_unspecified()) return a;
  return insert_ifa(ctl, ns, *dev, *in, std::move(a), req.replace);
}

Result<void> del_v4(Control& ctl, Namespace& ns, const AddrRequest& req) {
  auto found = find_in_dev(ctl, ns, req.ifindex);
  if (!found) return fail(std::move(found).error());
  auto [dev, in] = *found;
  // Linux: inet_rtm_deladdr — match the local address, the label, and the prefix.
  for (std::size_t i = 0; i < in->addrs.size(); ++i) {
    const AddrInfo& a = in->addrs[i]->info;
    if (req.local && a.local != *req.local) continue;
    if (req.label && a.label != *req.label) continue;
    if (req.address && (req.prefixlen != a.prefixlen || !in_subnet(*req.address, a))) continue;
    del_ifa(ctl, ns, *dev, *in, i);
    return ok();
  }
  return fail(EADDRNOTAVAIL, "ipv4: Address not found");
}

// Linux: devinet_sysctl_register (and addrconf's) refuses a device named as the settings'
// own entries (sysctl_dev_name_is_allowed): its registration fails, and a rename to it.
Result<void> check_settings_name(std::string_view name) {
  if (name == "all" || name == "default")
    return fail_log_only(EINVAL, "a device cannot be named \"{}\": its settings' name", name);
  return ok();
}

// Linux: inetdev_event.
class InetSubscriber final : public Subscriber {
 public:
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    if (ev.event == NetdevEvent::Register) IFCORE_TRY(check_settings_name(ev.dev.name_locked()));
    if (ev.event == NetdevEvent::PreChangeName) return check_settings_name(ev.new_name);
    EngineProto& ep = engine_proto(ctl.engine());
    if (serve_idle_locally(ctl, ep, ev.dev, ev.event, AF_INET)) return ok();
    PluginGuard guard(ctl);  // the protocols' engine-wide state
    RetireScope scope(ep, ev.batched);
    Device& dev = ev.dev;
    if (ev.event == NetdevEvent::Register) return on_register(ctl, ep, dev);
    Namespace& ns = dev.ns();
    if (const ConfSnap* idle = idle_snap(ep, dev)) {
      // Idle: no address to rename or remove; up, it gets its state (and lo its address).
      if (ev.event == NetdevEvent::Unregister) netconf_del(ep, ns, AF_INET, dev);
      if (ev.event == NetdevEvent::ChangeName)
        renew_netconf(ep, dev, idle_conf4(*idle, net_state(ns)));
      if (ev.event != NetdevEvent::Up) return ok();
    }
    DevState* ds = find_or_make_dev(ctl, ep, dev);
    if (!ds || !ds->in) return ok();
    switch (ev.event) {
      case NetdevEvent::Up:
        if (dev.flags() & IFF_LOOPBACK) {
          AddrInfo a;
          a.family = AF_INET;
          a.ifindex = dev.ifindex();
          a.prefixlen = 8;
          a.local = a.address = IpAddr::v4(0x7f000001);
          a.scope = RT_SCOPE_HOST;
          a.label = dev.name();
          a.flags = IFA_F_PERMANENT;
          (void)insert_ifa(ctl, ns, dev, *ds->in, a, false);  // EEXIST when it is there
        }
        // Linux: fib_netdev_event(NETDEV_UP) runs fib_add_ifaddr for each address.
        for (const AddrInfo& a : infos_of(*ds->in)) invalidate_broadcasts(ctl, ns, dev, a);
        mc4_up(ctl, dev, *ds->in);  // Linux: inetdev_event(NETDEV_UP) -> ip_mc_up
        break;
      case NetdevEvent::Down:
        mc4_down(ctl, dev, *ds->in);  // Linux: inetdev_event(NETDEV_DOWN) -> ip_mc_down
        break;
      case NetdevEvent::ChangeName: {
        // Linux: inetdev_changename — the first address takes the new name as its label;
        // each later one the new name and the part of its old label from ':' on, or
        // ":N" (N its place in the list) when it had none, cut to fit IFNAMSIZ; each is
        // announced again.
        std::size_t n = 0;
        for (auto& ifa : ds->in->addrs) {
          std::string& l = ifa->info.label;
          std::string name(ev.new_name);
          if (++n > 1) {
            auto colon = l.find(':');
            std::string suffix =
                colon == std::string::npos ? ":" + std::to_string(n) : l.substr(colon);
            if (name.size() + suffix.size() > IFNAMSIZ - 1)
              name.resize(suffix.size() < IFNAMSIZ - 1 ? IFNAMSIZ - 1 - suffix.size() : 0);
            name += suffix;
          }
          l = std::move(name);
          notify_addr(ep, ns, ProtoEvent::New, ifa->info);
        }
        renew_netconf(ep, dev, ds->in->conf);
        break;
      }
      case NetdevEvent::Unregister: {
        // Linux: inetdev_destroy — every address goes (RTM_DELADDR each), then the in_device,
        // whose reference drops after a grace period.
        while (!ds->in->addrs.empty()) del_ifa(ctl, ns, dev, *ds->in, 0);
        // Linux: devinet_sysctl_unregister — RTM_DELNETCONF, after the addresses.
        netconf_del(ep, ns, AF_INET, dev);
        retire_hooked(ep, ds->in.release());
        break;
      }
      default:
        break;
    }
    return ok();
  }

 private:
  // Linux: inetdev_event(NETDEV_CHANGENAME) — devinet_sysctl_unregister and
  // devinet_sysctl_register: RTM_DELNETCONF, then RTM_NEWNETCONF with every setting.
  static void renew_netconf(EngineProto& ep, Device& dev, const Inet4Conf& c) {
    netconf_del(ep, dev.ns(), AF_INET, dev);
    netconf_new4(ep, dev.ns(), dev, c);
  }
  // Linux: inetdev_init -> devinet_sysctl_register announces the settings. The device is
  // registered idle (its in_device is made when first needed), unless a device below the
  // IPv6 minimum mtu, which inet6 registers without an inet6_dev (made at once).
  static Result<void> on_register(Control& ctl, EngineProto& ep, Device& dev) {
    if (dev.mtu() >= kIpv6MinMtu && register_idle(ctl, ep, dev)) {
      netconf_new4(ep, dev.ns(), dev, idle_snap(ep, dev)->c4);
      return ok();
    }
    DevState& ds = dev_state(ctl, ep, dev);
    if (!ds.in) {
      ds.in = std::make_unique<InDev>(dev);
      ds.in->conf = fresh_conf4(ep, dev.ns());
      ds.in->conf.mc_forwarding = 0;  // Linux: inetdev_init, never inherited
      netconf_new4(ep, dev.ns(), dev, ds.in->conf);
    }
    return ok();
  }
};

}  // namespace

Inet4Conf idle_conf4(const ConfSnap& s, const NetState& st) {
  Inet4Conf c = s.c4;
  for_each_propagated([&](std::uint32_t, auto field) { c.*field = st.default4.*field; });
  return c;
}

void expire_address4(Control& ctl, Namespace& ns, Device& dev, InDev& in, std::size_t idx) {
  del_ifa(ctl, ns, dev, in, idx);  // Linux: check_lifetime's inet_del_ifa
}

IpAddr inet_select_addr(EngineProto& ep, const Device& dev) {
  DevState* ds = find_dev(ep, dev);
  if (!ds || !ds->in) return {};
  for (auto& ifa : ds->in->addrs)
    if (!(ifa->info.flags & IFA_F_SECONDARY) && ifa->info.scope < RT_SCOPE_LINK)
      return ifa->info.local;
  for (auto& ifa : ds->in->addrs)
    if (!(ifa->info.flags & IFA_F_SECONDARY)) return ifa->info.local;
  return {};
}

void inet_subscribe(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  auto sub = std::make_unique<InetSubscriber>();
  ctl.subscribe(*sub, SubscribeOptions{"inet", 0, true,
                                       events_of(NetdevEvent::Register, NetdevEvent::Up,
                                                 NetdevEvent::Down, NetdevEvent::PreChangeName,
                                                 NetdevEvent::ChangeName, NetdevEvent::Unregister),
                                       true});  // the plug-in lock taken above when needed
  ep.subscribers.push_back(std::move(sub));
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

Result<AddrInfo> add_address(Control& ctl, Namespace& ns, const AddrRequest& req) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  RetireScope scope(engine_proto(ctl.engine()));
  if (req.family == AF_INET) return add_v4(ctl, ns, req);
  if (req.family == AF_INET6) return add_address6(ctl, ns, req);
  return fail(EAFNOSUPPORT, "unsupported address family {}", req.family);
}

Result<void> delete_address(Control& ctl, Namespace& ns, const AddrRequest& req) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  RetireScope scope(engine_proto(ctl.engine()));
  if (req.family == AF_INET) return del_v4(ctl, ns, req);
  if (req.family == AF_INET6) return delete_address6(ctl, ns, req);
  return fail(EAFNOSUPPORT, "unsupported address family {}", req.family);
}

bool is_local_address(Control&, Namespace& ns, const IpAddr& a) {
  return net_state(ns).local_addrs.count(a) != 0;
}

std::vector<AddrInfo> list_addresses(Control& ctl, Namespace& ns, int family, int ifindex) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  const TimePoint now = ctl.engine().time().now();
  std::vector<AddrInfo> out;
  std::vector<Device*> devs;
  if (ifindex) {
    if (Device* d = ctl.find(ns, ifindex)) devs.push_back(d);
  } else {
    devs = ns.devices_locked();
  }
  for (int f : {AF_INET, AF_INET6}) {
    if (family && family != f) continue;
    for (Device* d : devs) {
      DevState* ds = find_dev(ep, *d);
      if (!ds) continue;
      auto* list = f == AF_INET ? (ds->in ? &ds->in->addrs : nullptr)
                                : (ds->in6 ? &ds->in6->addrs : nullptr);
      if (!list) continue;
      for (auto& ifa : *list) out.push_back(reported(ifa->info, now));
    }
  }
  return out;
}

Result<Inet4Conf> inet4_conf(Control& ctl, Namespace& ns, int ifindex) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  NetState& st = net_state(ns);
  if (ifindex == kConfAll) return st.all4;
  if (ifindex == kConfDefault) return st.default4;
  Device* dev = ctl.find(ns, ifindex);
  auto conf = dev ? dev_conf4(engine_proto(ctl.engine()), *dev) : std::nullopt;
  if (!conf) return fail(ENODEV, "ipv4: Device not found");
  return *conf;
}

Result<void> set_inet4_conf(Control& ctl, Namespace& ns, int ifindex, const Inet4Conf& c,
                            unsigned copy, unsigned own) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  NetState& st = net_state(ns);
  EngineProto& ep = engine_proto(ctl.engine());
  // Linux: IPV4_DEVCONF_MC_FORWARDING is the multicast router's, read-only to sysctl.
  Inet4Conf want = c;
  if (ifindex == kConfDefault) {
    Inet4Conf was = st.default4;
    want.mc_forwarding = was.mc_forwarding;
    st.default4 = want;
    netconf_changed4(ep, ns, kConfDefault, was, want);
    // Linux: devinet_conf_proc -> devinet_copy_dflt_conf — a default written goes to the
    // devices that never wrote their own (forwarding, devinet_sysctl_forward, does not).
    // Silently: Linux announces only the scope written.
    // Idle devices read these from the default (idle_conf4); the others' change is not
    // announced, and the new default is a new snapshot for devices registered later.
    conf_snap_reset(ep, st);
    for_each_propagated([&](std::uint32_t bit, auto field) {
      if (was.*field == want.*field) return;
      for (Device* d : ns.devices_locked())
        if (DevState* ds = find_dev(ep, *d); ds && ds->in && !(ds->in->own & bit))
          ds->in->conf.*field = want.*field;
    });
    return ok();
  }
  if (ifindex == kConfAll) {
    // Linux: devinet_sysctl_forward -> inet_forward_change — "all" forwarding is copied
    // to the default and to every device (each then has its own), announced for "all",
    // the default and each device in that order, whatever they had; the other settings of
    // "all" stay its own (promote_secondaries is an OR of "all" and the device's value).
    Inet4Conf was = st.all4;
    want.mc_forwarding = was.mc_forwarding;
    st.all4 = want;
    netconf_changed4(ep, ns, kConfAll, was, want);
    if (!(copy & kCopyForwarding) || was.forwarding == want.forwarding) return ok();
    st.default4.forwarding = want.forwarding;
    conf_snap_reset(ep, st);
    netconf_forwarding(ep, ns, AF_INET, kConfDefault, want.forwarding);
    // Each device gets its own value: an idle one its state (Linux walks them all too).
    for (Device* d : ns.devices_locked()) {
      DevState* ds = find_or_make_dev(ctl, ep, *d);
      if (!ds || !ds->in) continue;
      ds->in->conf.forwarding = want.forwarding;
      ds->in->own |= kOwn4Forwarding;
      netconf_forwarding(ep, ns, AF_INET, d->ifindex(), want.forwarding);
    }
    return ok();
  }
  auto found = find_in_dev(ctl, ns, ifindex);
  if (!found) return fail(std::move(found).error());
  InDev& in = *found->second;
  Inet4Conf was = in.conf;
  want.mc_forwarding = was.mc_forwarding;
  in.conf = want;
  // Linux: devinet_conf_proc sets the setting's bit in ipv4_devconf.state on every write,
  // changed or not: `own` names the settings written, and a changed one counts too.
  in.own |= own;
  if (was.forwarding != want.forwarding) in.own |= kOwn4Forwarding;
  if (was.promote_secondaries != want.promote_secondaries) in.own |= kOwn4Promote;
  if (was.rp_filter != want.rp_filter) in.own |= kOwn4RpFilter;
  if (was.proxy_arp != want.proxy_arp) in.own |= kOwn4ProxyArp;
  if (was.ignore_routes_with_linkdown != want.ignore_routes_with_linkdown)
    in.own |= kOwn4IgnoreLinkdown;
  if (was.bc_forwarding != want.bc_forwarding) in.own |= kOwn4BcForwarding;
  netconf_changed4(ep, ns, ifindex, was, want);
  return ok();
}

}  // namespace ifcore::inet

namespace ifcore::proto {}  // namespace ifcore::proto
