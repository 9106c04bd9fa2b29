// proto/inet6.cc — IPv6 addresses per device (Linux: net/ipv6/addrconf.c): the inet6_dev
// made at register, addresses with their flags, the link-local address from the hardware
// address when the device comes up, the loopback's ::1, the multicast and anycast entries
// the device joins, and the settings disable_ipv6, forwarding and addr_gen_mode.
//
// Releasing an inet6_dev takes two grace periods in a chain (Linux 5.x: aca_free_rcu and
// fib6_info_destroy_rcu, seed 001): the first callback frees the anycast and multicast
// entries and queues the second, which drops the device reference. One rcu barrier is
// therefore not enough for a waiter that polls the reference count.
//
// Lock order: control lock only.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>

#include <random>

#include "base/rcu.h"
#include "proto/addrconf_routes.h"
#include "proto/state.h"

namespace ifcore::proto {

using inet::AddrRequest;
using inet::ProtoEvent;

namespace {

constexpr std::uint8_t kGenEui64 = 0, kGenNone = 1;

IpAddr v6_from(const std::array<std::uint8_t, 16>& b) {
  return IpAddr::v6(std::span(b));
}

// Linux: ipv6_addr_scope, as reported in ifa_scope.
std::uint8_t v6_scope(const IpAddr& a) {
  const std::uint8_t* p = a.data();
  // Linux: ipv6_addr_scope of a multicast address: its scope field, node-, link- and
  // site-local; the others universe.
  const std::uint8_t mc = p[0] == 0xff ? p[1] & 0x0f : 0;
  if (mc)
    return mc == 1   ? RT_SCOPE_HOST
           : mc == 2 ? RT_SCOPE_LINK
           : mc == 5 ? RT_SCOPE_SITE
                     : RT_SCOPE_UNIVERSE;
  static const std::array<std::uint8_t, 16> loop{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  if (std::equal(loop.begin(), loop.end(), p)) return RT_SCOPE_HOST;
  if (p[0] == 0xfe && (p[1] & 0xc0) == 0x80) return RT_SCOPE_LINK;
  if (p[0] == 0xfe && (p[1] & 0xc0) == 0xc0) return RT_SCOPE_SITE;
  return RT_SCOPE_UNIVERSE;
}

// Linux: ipv6_addr_src_scope — IPV6_ADDR_SCOPE_* (node-local 1, link-local 2, site-local
// 5, global 14): larger is wider; a multicast address's is its scope field.
int src_scope(const IpAddr& a) {
  if (a.data()[0] == 0xff) return a.data()[1] & 0x0f;
  switch (v6_scope(a)) {
    case RT_SCOPE_HOST:
      return 0x01;
    case RT_SCOPE_LINK:
      return 0x02;
    case RT_SCOPE_SITE:
      return 0x05;
    default:
      return 0x0e;
  }
}

Inet6Dev* from_rcu(rcu_head* h) {
  return static_cast<Inet6Dev*>(reinterpret_cast<RcuHook*>(h));  // rcu is RcuHook's first
}

// The second stage of an inet6_dev's release: the device reference goes with it.
void teardown_stage2(rcu_head* h) {
  delete from_rcu(h);
}

void teardown_stage1(RcuHook* h) {
  auto* in6 = static_cast<Inet6Dev*>(h);
  in6->ac_list.clear();  // Linux: aca_free_rcu
  in6->mc_list.clear();
  rcu::call(&in6->rcu, teardown_stage2);  // the second generation (seed 001)
}

// The inet6_dev itself carries its release through both grace periods (its addresses are
// gone already); nothing is allocated for it. The first grace period is the one of
// everything else the protocols retire in the same call (or in the same unregister batch:
// one rcu::call for 10 000 devices, not one each).
void release_inet6_dev(EngineProto& ep, std::unique_ptr<Inet6Dev> in6) {
  retire_hooked_then(ep, in6.release(), teardown_stage1);
}

bool dad_ready(const Device& dev) {
  return dev.is_up() && dev.carrier();
}

// Whether DAD is over as soon as it starts (Linux: addrconf_dad_begin tests these before
// IF_READY): on NOARP and loopback devices, for IFA_F_NODAD and with accept_dad below 1.
bool dad_skipped(Namespace& ns, const Device& dev, const Inet6Dev& in6, std::uint32_t flags) {
  return (flags & IFA_F_NODAD) || (dev.flags() & (IFF_NOARP | IFF_LOOPBACK)) ||
         (net_state(ns).all6.accept_dad < 1 && in6.conf.accept_dad < 1);
}

// DAD of `ifa` is over (Linux: addrconf_dad_completed -> ipv6_ifa_notify(RTM_NEWADDR)):
// RTM_NEWADDR, then its local route (__ipv6_ifa_notify's ip6_ins_rt) and its peer's route.
void dad_complete(Control& ctl, Namespace& ns, Device& dev, Ifa& ifa) {
  ifa.info.flags &= ~(IFA_F_TENTATIVE | IFA_F_OPTIMISTIC);
  notify_addr(engine_proto(ctl.engine()), ns, ProtoEvent::New, ifa.info);
  fib_sync_dev(ctl, ns, dev, AF_INET6, true);
  add_peer_route(ctl, ns, dev, ifa.info);
}

// Who adds an address: a user (Linux: inet6_addr_add, which announces it while tentative
// unless it is optimistic or nodad), or the kernel (init_loopback, which announces it once
// DAD is over; addrconf_add_linklocal too, but the caller ends its DAD).
enum class By : std::uint8_t { User, Kernel, LinkLocal };

Result<AddrInfo> insert6(Control& ctl, Namespace& ns, Device& dev, Inet6Dev& in6, AddrInfo a,
                         bool replace, By by) {
  EngineProto& ep = engine_proto(ctl.engine());
  if (a.tstamp == TimePoint{}) a.cstamp = a.tstamp = ctl.engine().time().now();
  for (auto& ifa : in6.addrs)
    if (ifa->info.local == a.local) {
      if (!replace) return fail(EEXIST, "ipv6: address already assigned");
      inet6_modify_addr(ctl, ns, dev, in6, *ifa, a);
      return reported(ifa->info, a.tstamp);
    }
  // Linux: ipv6_add_addr makes every address but a nodad one tentative; DAD begins once the
  // device is up with carrier, and is over at once, ready or not, when dad_skipped. ifcore
  // does not time DAD: on a ready device it is over at once for every address.
  const bool done = dad_ready(dev) || dad_skipped(ns, dev, in6, a.flags);
  const bool announce_tentative = by == By::User && !(a.flags & (IFA_F_OPTIMISTIC | IFA_F_NODAD));
  a.flags |= IFA_F_TENTATIVE;  // its local route waits for the end of DAD
  auto owned = std::make_unique<Ifa>(dev, "inet6");
  Ifa& ifa = *owned;
  ifa.info = a;
  ifa.rt = dst_alloc(ep, dev);
  watch_lifetime(ctl, ns, dev, ifa);
  // Linux: ipv6_link_dev_addr — before the first address of a narrower or equal source
  // scope: wider scopes first, and within a scope the newest first.
  int scope = src_scope(a.local);
  auto pos = std::find_if(in6.addrs.begin(), in6.addrs.end(),
                          [&](const auto& x) { return scope >= src_scope(x->info.local); });
  in6.addrs.insert(pos, std::move(owned));
  // Linux: addrconf_dad_begin joins the solicited-node group (not for the loopback's ::1).
  if (a.proto != IFAPROT_KERNEL_LO) join_solicited(ctl, dev, in6, a.local);
  net_state(ns).count_local(a.local);
  // Linux: inet6_addr_add and addrconf_add_linklocal add the prefix route (after
  // addrconf_add_dev's ff00::/8) before DAD starts.
  fib_sync_dev(ctl, ns, dev, AF_INET6, true);
  if (announce_tentative) notify_addr(ep, ns, ProtoEvent::New, ifa.info);
  if (done && by != By::LinkLocal) dad_complete(ctl, ns, dev, ifa);
  refresh_anycast(in6, dev.is_up(), in6.conf.forwarding);
  return reported(ifa.info, a.tstamp);
}

// Linux: ipv6_del_addr — RTM_DELADDR, then (__ipv6_ifa_notify) the peer's route and the
// local route, then (cleanup_prefix_route) the prefix route.
void remove6(Control& ctl, Namespace& ns, Device& dev, Inet6Dev& in6, std::size_t i) {
  EngineProto& ep = engine_proto(ctl.engine());
  AddrInfo& a = in6.addrs[i]->info;
  notify_addr(ep, ns, ProtoEvent::Del, a);
  del_peer_route(ctl, ns, dev, a);
  // Its local route goes first (__ipv6_ifa_notify's ip6_del_rt of ifp->rt), alone: a
  // sync now would also bring back a prefix route deleted by hand.
  Route* local = nullptr;
  if (DevState* ds = find_dev(ep, dev))
    ds->routes.for_each([&](Route* r) {
      if (r->origin == Origin::Addr && r->info.family == AF_INET6 && r->info.type == RTN_LOCAL &&
          r->info.dst_len == 128 && r->info.dst == a.local)
        local = r;
    });
  if (local) fib_erase(ep, ns, local, true);
  std::unique_ptr<Ifa> ifa = std::move(in6.addrs[i]);
  in6.addrs.erase(in6.addrs.begin() + static_cast<std::ptrdiff_t>(i));
  net_state(ns).uncount_local(ifa->info.local);
  leave_solicited(ctl, dev, in6, ifa->info.local);  // Linux: __ipv6_ifa_notify(RTM_DELADDR)
  Route* clean = prefix_route_to_clean(ns, dev, in6, *ifa);
  fib_sync_dev(ctl, ns, dev, AF_INET6, true);
  if (clean) fib_erase(ep, ns, clean, true);
  fib_remove_prefsrc6(ctl, ns, ifa->info.local);  // Linux: ipv6_del_addr's rt6_remove_prefsrc
  dst_free_ifa(ep, *ifa, std::move(ifa->rt));
  retire_hooked(ep, ifa.release());
}

AddrInfo make6(const Device& dev, const IpAddr& addr, int plen, std::uint32_t flags) {
  AddrInfo a;
  a.family = AF_INET6;
  a.ifindex = dev.ifindex();
  a.prefixlen = static_cast<std::uint8_t>(plen);
  a.local = a.address = addr;
  a.scope = v6_scope(addr);
  a.flags = flags;
  return a;
}

// Linux: addrconf_notify at NETDEV_UP and NETDEV_CHANGE — the prefix routes of the
// addresses (addrconf_permanent_addr); once the link is ready, the first time since the
// device came up (IF_READY), addrconf_dev_config / addrconf_addr_gen / init_loopback; then
// the end of DAD for the addresses added while the link was not ready.
void addrconf_up(Control& ctl, Namespace& ns, Device& dev, Inet6Dev& in6) {
  if (in6.conf.disable_ipv6 || !dev.is_up()) return;
  fib_sync_dev(ctl, ns, dev, AF_INET6, true);
  // Linux: addrconf_link_ready (netif_oper_up): a device that is up without carrier gets
  // its link-local address when the carrier comes (NETDEV_CHANGE), not before.
  std::uint8_t op = dev.operstate();
  if (!(dev.flags() & IFF_LOOPBACK) && op != IF_OPER_UP && op != IF_OPER_UNKNOWN) return;
  Ifa* lla_made = nullptr;
  if (!in6.ready) {
    in6.ready = true;
    in6.mroute = true;
    mc6_up(ctl, dev, in6);  // Linux: addrconf_add_dev's ipv6_find_idev, before the link-local
    if (dev.flags() & IFF_LOOPBACK) {
      std::array<std::uint8_t, 16> one{};
      one[15] = 1;
      // Linux: init_loopback adds it with IFAPROT_KERNEL_LO, reported as IFA_PROTO.
      AddrInfo lo = make6(dev, v6_from(one), 128, IFA_F_PERMANENT);
      lo.proto = IFAPROT_KERNEL_LO;
      (void)insert6(ctl, ns, dev, in6, lo, false, By::Kernel);
    } else if (in6.conf.addr_gen_mode != kGenNone && !is_l3mdev_master(dev)) {
      // (Linux: addrconf_addr_gen — no link-local address on an L3 master device.)
      HwAddr hw = dev.address();
      std::array<std::uint8_t, 16> ll{0xfe, 0x80};
      if (in6.conf.addr_gen_mode == kGenEui64 && hw.size() == 6 && !hw.is_zero()) {
        // Linux: addrconf_ifid_eui48 — flip the universal/local bit, insert ff:fe.
        const std::uint8_t iid[8] = {
            static_cast<std::uint8_t>(hw[0] ^ 2), hw[1], hw[2], 0xff, 0xfe, hw[3], hw[4], hw[5]};
        std::copy(iid, iid + 8, ll.begin() + 8);
      } else if (in6.conf.addr_gen_mode != kGenEui64) {
        // Random and stable-privacy modes: a random interface identifier.
        std::random_device rd;
        for (int i = 8; i < 16; ++i) ll[i] = static_cast<std::uint8_t>(rd());
      } else {
        ll[0] = 0;  // no usable hardware address: no link-local address
      }
      // Linux: addrconf_add_linklocal makes it IFA_F_PERMANENT, of IFAPROT_KERNEL_LL.
      if (ll[0] == 0xfe) {
        AddrInfo lla = make6(dev, v6_from(ll), 64, IFA_F_PERMANENT);
        lla.proto = IFAPROT_KERNEL_LL;
        if (insert6(ctl, ns, dev, in6, lla, false, By::LinkLocal))
          for (auto& x : in6.addrs)
            if (x->info.local == lla.local) lla_made = x.get();
      }
    }
    fib_sync_dev(ctl, ns, dev, AF_INET6, true);  // ff00::/8 without a link-local address
  }
  // Linux: the DAD work of the addresses kept over a down starts at NETDEV_UP
  // (fixup_permanent_addr), before the link-local address's: theirs ends first.
  for (std::size_t i = 0; i < in6.addrs.size(); ++i)
    if (in6.addrs[i].get() != lla_made && (in6.addrs[i]->info.flags & IFA_F_TENTATIVE) &&
        dad_ready(dev))
      dad_complete(ctl, ns, dev, *in6.addrs[i]);
  if (lla_made && (lla_made->info.flags & IFA_F_TENTATIVE) &&
      (dad_ready(dev) || dad_skipped(ns, dev, in6, lla_made->info.flags)))
    dad_complete(ctl, ns, dev, *lla_made);
  refresh_anycast(in6, true, in6.conf.forwarding);
}

// Linux: addrconf_ifdown — the routes the addresses made go (at unregister, every route
// through the device), then the addresses (unless keep_addr_on_down keeps the permanent
// ones, tentative and unannounced, on a down).
void addrconf_ifdown(Control& ctl, Namespace& ns, Device& dev, Inet6Dev& in6, bool unregister,
                     bool may_keep = true) {
  bool keep = !unregister && may_keep &&
              (net_state(ns).all6.keep_addr_on_down || in6.conf.keep_addr_on_down);
  EngineProto& ep = engine_proto(ctl.engine());
  // Linux: addrconf_ifdown takes the device's routes down first (rt6_disable_ip: every
  // RTM_DELROUTE comes before the first RTM_DELADDR), then goes through the addresses in
  // list order. So the addresses that go leave the list at once (one sync finds all the
  // routes they made), and are announced after the routes.
  std::vector<std::unique_ptr<Ifa>> gone;
  gone.reserve(in6.addrs.size());
  std::size_t stay = 0;
  for (std::size_t i = 0; i < in6.addrs.size(); ++i) {
    std::unique_ptr<Ifa>& ifa = in6.addrs[i];
    AddrInfo& a = ifa->info;
    if (keep && (a.flags & IFA_F_PERMANENT) && !a.local.is_v6_link_local()) {
      a.flags |= IFA_F_TENTATIVE;  // Linux 6.18: not announced (its state skips the notifier)
      in6.addrs[stay++] = std::move(ifa);
      continue;
    }
    net_state(ns).uncount_local(a.local);
    gone.push_back(std::move(ifa));
  }
  in6.addrs.resize(stay);
  in6.mroute = false;  // before the sync: an up device linked to an L3 master loses it too
  const bool was_ready = std::exchange(in6.ready, false);
  if (unregister) {
    fib_sync_dev(ctl, ns, dev, AF_INET6, true);
    fib_flush_dev(ctl, ns, dev, AF_INET6, Which::All, true);
  } else {
    ep.closing = &dev;
    ep.closing_linkdown = in6.carrier_lost;
    fib_sync_dev(ctl, ns, dev, AF_INET6, true, true);
    ep.closing = nullptr;
  }
  for (std::unique_ptr<Ifa>& ifa : gone) {
    notify_addr(ep, ns, ProtoEvent::Del, ifa->info);
    leave_solicited(ctl, dev, in6, ifa->info.local);
    dst_free_ifa(ep, *ifa, std::move(ifa->rt));
    retire_hooked(ep, ifa.release());
  }
  refresh_anycast(in6, false, false);
  // Linux: addrconf_ifdown's step 5 — ipv6_mc_down if the device was ready.
  if (!unregister && was_ready) mc6_down(ctl, dev, in6);
}

Result<std::pair<Device*, Inet6Dev*>> find_in6_dev(Control& ctl, Namespace& ns, int ifindex) {
  Device* dev = ctl.find(ns, ifindex);
  if (!dev) return fail(ENODEV, "ipv6: device not found");
  DevState* ds = find_or_make_dev(ctl, engine_proto(ctl.engine()), *dev);
  if (!ds || !ds->in6) return fail(ENODEV, "ipv6: device not found");
  return std::pair{dev, ds->in6.get()};
}

class Inet6Subscriber final : public Subscriber {
 public:
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    EngineProto& ep = engine_proto(ctl.engine());
    if (serve_idle_locally(ctl, ep, ev.dev, ev.event, AF_INET6)) return ok();
    PluginGuard guard(ctl);  // the protocols' engine-wide state
    RetireScope scope(ep, ev.batched);
    Device& dev = ev.dev;
    if (ev.event == NetdevEvent::Register) {
      // Linux: addrconf_notify(NETDEV_REGISTER) -> ipv6_add_dev when the mtu allows IPv6
      // (announced as the idle device's settings when inet registered it idle).
      if (const ConfSnap* idle = idle_snap(ep, dev)) {
        netconf_new6(ep, dev.ns(), dev, idle->c6);
        return ok();
      }
      DevState& ds = dev_state(ctl, ep, dev);
      if (!ds.in6 && dev.mtu() >= kIpv6MinMtu) {
        ds.in6 = std::make_unique<Inet6Dev>(dev);
        ds.in6->conf = fresh_conf6(ep, dev.ns());
        mc6_init(ctl, dev, *ds.in6);
        // Linux: ipv6_add_dev -> addrconf_sysctl_register announces the settings.
        netconf_new6(ep, dev.ns(), dev, ds.in6->conf);
      }
      return ok();
    }
    Namespace& ns = dev.ns();
    // Linux: addrconf_notify(NETDEV_CHANGENAME) — addrconf_sysctl_unregister and
    // addrconf_sysctl_register: RTM_DELNETCONF, then RTM_NEWNETCONF with every setting.
    if (ev.event == NetdevEvent::ChangeName) {
      if (auto c = dev_conf6(ep, dev)) {
        netconf_del(ep, ns, AF_INET6, dev);
        netconf_new6(ep, ns, dev, *c);
      }
      return ok();
    }
    if (idle_snap(ep, dev)) {
      // Idle (down, no address, no route): unregistered as if its inet6_dev had nothing
      // to take down; any other event gives it its state first.
      if (ev.event == NetdevEvent::Unregister) {
        netconf_del(ep, ns, AF_INET6, dev);
        drop_dev_state(ctl, ep, dev);
        return ok();
      }
      if (ev.event == NetdevEvent::Down) return ok();
    }
    DevState* ds = find_or_make_dev(ctl, ep, dev);
    if (!ds) return ok();  // a legacy re-broadcast: everything is gone already
    switch (ev.event) {
      case NetdevEvent::Up:
      case NetdevEvent::Change:
        if (ds->in6) {
          ds->in6->carrier_lost = dev.is_up() && !dev.carrier();
          addrconf_up(ctl, ns, dev, *ds->in6);
        }
        break;
      case NetdevEvent::ChangeMtu:
        // Linux: addrconf_notify(NETDEV_CHANGEMTU) — below IPV6_MIN_MTU the device loses
        // IPv6 whole (addrconf_ifdown as at unregister: every address and route); back at
        // 1280 or more it gets a fresh inet6_dev with the default settings, configured as
        // at NETDEV_UP.
        // Both announced as at register and unregister (RTM_DELNETCONF, RTM_NEWNETCONF).
        if (dev.mtu() < kIpv6MinMtu && ds->in6) {
          addrconf_ifdown(ctl, ns, dev, *ds->in6, true);
          mc6_destroy(ctl, dev, *ds->in6);
          netconf_del(ep, ns, AF_INET6, dev);
          release_inet6_dev(ep, std::move(ds->in6));
        } else if (dev.mtu() >= kIpv6MinMtu && !ds->in6) {
          ds->in6 = std::make_unique<Inet6Dev>(dev);
          ds->in6->conf = fresh_conf6(ep, dev.ns());
          mc6_init(ctl, dev, *ds->in6);
          netconf_new6(ep, ns, dev, ds->in6->conf);
          addrconf_up(ctl, ns, dev, *ds->in6);
        }
        break;
      case NetdevEvent::Down:
        if (ds->in6) addrconf_ifdown(ctl, ns, dev, *ds->in6, false);
        break;
      case NetdevEvent::ChangeUpper:
        // Linux: addrconf_notify(NETDEV_CHANGEUPPER) — linked to or unlinked from an L3
        // master, the device is taken down as at NETDEV_DOWN (its routes and, unless
        // keep_addr_on_down keeps them, its addresses); an up device is cycled by its
        // master and configured again in the new table.
        if (ds->in6 && ev.upper && is_l3mdev_master(*ev.upper))
          addrconf_ifdown(ctl, ns, dev, *ds->in6, false);
        break;
      case NetdevEvent::Unregister:
        if (ds->in6) {
          addrconf_ifdown(ctl, ns, dev, *ds->in6, true);
          // Linux: addrconf_ifdown ends with addrconf_sysctl_unregister (RTM_DELNETCONF).
          netconf_del(ep, ns, AF_INET6, dev);
          release_inet6_dev(ep, std::move(ds->in6));
        }
        // inet6 is the last protocol subscriber at priority 0: the device's state goes.
        fib_flush_dev(ctl, ns, dev, AF_INET, Which::All, false);
        drop_dev_state(ctl, ep, dev);
        break;
      default:
        break;
    }
    return ok();
  }
  void on_batch(Control& ctl, BatchEvent ev, std::span<Device* const> devs) override {
    // The end of an unregister batch's pass: what its callbacks retired (they deferred,
    // see RetireScope) goes to RCU in one callback. Nothing retired: no lock.
    EngineProto& ep = engine_proto(ctl.engine());
    if (ev != BatchEvent::UnregisterBatch || !ep.retired.load(std::memory_order_relaxed)) return;
    PluginGuard guard(ctl);
    retire_flush(ep);
  }
};

}  // namespace

Result<AddrInfo> add_address6(Control& ctl, Namespace& ns, const AddrRequest& req) {
  if (req.prefixlen > 128) return fail(EINVAL, "ipv6: Invalid prefix length");
  const std::optional<IpAddr>& pfx = req.local ? req.local : req.address;
  if (!pfx || !pfx->is_v6()) return fail_log_only(EINVAL, "ipv6: missing address");
  // Linux: ipv6_add_addr's texts (NL_SET_ERR_MSG_MOD: "ipv6: "), all EADDRNOTAVAIL. With
  // IFA_F_MCAUTOJOIN, inet6_addr_add joins the group first (ipv6_mc_config), and a multicast
  // address is an address like the others (ifcore keeps no groups but the all-nodes ones).
  if (pfx->is_unspecified()) return fail(EADDRNOTAVAIL, "ipv6: Invalid address");
  if (pfx->is_multicast() && !(req.flags & IFA_F_MCAUTOJOIN))
    return fail(EADDRNOTAVAIL,
                "ipv6: Cannot assign multicast address without \"IFA_F_MCAUTOJOIN\" flag");
  // Linux: inet6_rtm_newaddr; ipv6_find_idev refuses a device with an mtu below 1280
  // (ipv6_add_dev) with EINVAL alone.
  Device* named = ctl.find(ns, req.ifindex);
  if (!named) return fail(ENODEV, "ipv6: Unable to find the interface");
  auto found = find_in6_dev(ctl, ns, req.ifindex);
  if (!found)
    return fail_log_only(EINVAL, "device \"{}\" has no IPv6 (mtu below 1280)", named->name());
  auto [dev, in6] = *found;
  if (in6->conf.disable_ipv6) return fail(EACCES, "IPv6 is disabled on this device");
  std::array<std::uint8_t, 16> loopback{};
  loopback[15] = 1;
  if (*pfx == IpAddr::v6(loopback) && !(dev->flags() & IFF_LOOPBACK))
    return fail(EADDRNOTAVAIL, "ipv6: Cannot assign loopback address on this device");
  const std::uint32_t allowed = IFA_F_NODAD | IFA_F_NOPREFIXROUTE | IFA_F_HOMEADDRESS |
                                IFA_F_OPTIMISTIC | IFA_F_MANAGETEMPADDR | IFA_F_MCAUTOJOIN;
  IFCORE_TRY(check_lifetime_request(AF_INET6, req));
  // Linux: an address given by the user with infinite lifetimes is permanent.
  AddrInfo a = make6(*dev, *pfx, req.prefixlen, req.flags & allowed);
  set_lifetime(a, req.valid_lft, req.preferred_lft, ctl.engine().time().now());
  if (req.local && req.address && *req.address != *req.local) a.address = *req.address;
  a.rt_priority = req.rt_priority;
  a.proto = req.proto;
  // Linux: addrconf_add_dev gives an up device its ff00::/8 route (addrconf_add_mroute).
  bool had_mroute = in6->mroute;
  if (dev->is_up()) in6->mroute = true;
  if (dev->is_up()) mc6_up(ctl, *dev, *in6);  // Linux: addrconf_add_dev -> ipv6_find_idev
  auto added = insert6(ctl, ns, *dev, *in6, std::move(a), req.replace, By::User);
  if (!added) in6->mroute = had_mroute;
  return added;
}

Result<void> delete_address6(Control& ctl, Namespace& ns, const AddrRequest& req) {
  const std::optional<IpAddr>& pfx = req.local ? req.local : req.address;
  if (!pfx || !pfx->is_v6()) return fail_log_only(EINVAL, "ipv6: missing address");
  auto found = find_in6_dev(ctl, ns, req.ifindex);
  if (!found) return fail(std::move(found).error());
  auto [dev, in6] = *found;
  // Linux: inet6_addr_del — the address and its prefix length must both match.
  for (std::size_t i = 0; i < in6->addrs.size(); ++i) {
    const AddrInfo& a = in6->addrs[i]->info;
    if (a.local != *pfx || a.prefixlen != req.prefixlen) continue;
    remove6(ctl, ns, *dev, *in6, i);
    refresh_anycast(*in6, dev->is_up(), in6->conf.forwarding);
    return ok();
  }
  return fail(EADDRNOTAVAIL, "ipv6: address not found");
}

void expire_address6(Control& ctl, Namespace& ns, Device& dev, Inet6Dev& in6, std::size_t idx) {
  // Linux: addrconf_verify_rtnl's ipv6_del_addr.
  remove6(ctl, ns, dev, in6, idx);
  refresh_anycast(in6, dev.is_up(), in6.conf.forwarding);
}

IpAddr inet6_select_addr(EngineProto& ep, const Device& dev, const IpAddr& dst) {
  DevState* ds = find_dev(ep, dev);
  if (!ds || !ds->in6) return {};
  // Linux: __ipv6_dev_get_saddr leaves tentative and multicast addresses out; rule 1 of
  // RFC 6724 (IPV6_SADDR_RULE_LOCAL) prefers the destination itself.
  auto candidate = [](const Ifa& ifa) {
    return !(ifa.info.flags & IFA_F_TENTATIVE) && !ifa.info.local.is_multicast();
  };
  for (auto& ifa : ds->in6->addrs)
    if (candidate(*ifa) && ifa->info.local == dst) return dst;
  std::uint8_t want = dst.is_v6_link_local() ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
  for (auto& ifa : ds->in6->addrs)
    if (candidate(*ifa) && ifa->info.scope == want) return ifa->info.local;
  for (auto& ifa : ds->in6->addrs)
    if (candidate(*ifa)) return ifa->info.local;
  return {};
}

bool inet6_enabled(EngineProto& ep, const Device& dev) {
  auto conf = dev_conf6(ep, dev);
  return conf && !conf->disable_ipv6;
}

void inet6_subscribe(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  auto sub = std::make_unique<Inet6Subscriber>();
  ctl.subscribe(*sub, SubscribeOptions{"inet6", 0, true,
                                       events_of(NetdevEvent::Register, NetdevEvent::Up,
                                                 NetdevEvent::Change, NetdevEvent::ChangeMtu,
                                                 NetdevEvent::Down, NetdevEvent::Unregister,
                                                 NetdevEvent::ChangeUpper, NetdevEvent::ChangeName),
                                       true});  // the plug-in lock taken in on_event when needed
  ep.subscribers.push_back(std::move(sub));
}

// Applies a device's new settings (Linux: addrconf_disable_ipv6, addrconf_fixup_forwarding).
void apply_conf6(Control& ctl, Namespace& ns, Device& dev, Inet6Dev& in6, const Inet6Conf& c) {
  bool was_disabled = in6.conf.disable_ipv6, was_forwarding = in6.conf.forwarding != 0;
  in6.conf = c;
  // Linux: addrconf_fixup_forwarding — dev_forward_change when it turns on or off.
  if (was_forwarding != (c.forwarding != 0)) mc6_forwarding(ctl, dev, in6, c.forwarding != 0);
  if (c.disable_ipv6 && !was_disabled) addrconf_ifdown(ctl, ns, dev, in6, false, false);
  if (!c.disable_ipv6 && was_disabled) addrconf_up(ctl, ns, dev, in6);
  refresh_anycast(in6, dev.is_up() && !c.disable_ipv6, c.forwarding);
}

}  // namespace ifcore::proto
