// proto/inet6_conf.cc — the IPv6 settings of a namespace's "all" and "default" scopes and of
// each device (Linux: addrconf's sysctls, addrconf_fixup_forwarding, addrconf_disable_ipv6,
// addrconf_fixup_linkdown), and their announcements.
//
// Lock order: control lock only.
#include "proto/state.h"

namespace ifcore::inet {

using namespace ifcore::proto;

Result<Inet6Conf> inet6_conf(Control& ctl, Namespace& ns, int ifindex) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  NetState& st = net_state(ns);
  if (ifindex == kConfAll) return st.all6;
  if (ifindex == kConfDefault) return st.default6;
  Device* dev = ctl.find(ns, ifindex);
  auto conf = dev ? dev_conf6(engine_proto(ctl.engine()), *dev) : std::nullopt;
  if (!conf) return fail(ENODEV, "ipv6: device not found");
  return *conf;
}

Result<void> set_inet6_conf(Control& ctl, Namespace& ns, int ifindex, const Inet6Conf& c,
                            unsigned copy) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  NetState& st = net_state(ns);
  EngineProto& ep = engine_proto(ctl.engine());
  RetireScope scope(ep);
  if (ifindex == kConfDefault) {
    Inet6Conf was = st.default6;
    st.default6 = c;
    conf_snap_reset(ep, st);  // idle devices keep theirs (Linux does not propagate)
    netconf_changed6(ep, ns, kConfDefault, was, c);
    return ok();
  }
  if (ifindex == kConfAll) {
    // Linux: writing "all" disable_ipv6 / forwarding / ignore_routes_with_linkdown sets
    // every device and the default (addrconf_fixup_forwarding, addrconf_disable_ipv6,
    // addrconf_fixup_linkdown). keep_addr_on_down on "all" is ORed with the device's,
    // never copied. Announced: the default's forwarding (not its
    // ignore_routes_with_linkdown), each device, then "all".
    Inet6Conf was_all = st.all6;
    st.all6 = c;
    // force_forwarding: "all" first, then the devices that changed, and only when "all"
    // changed (addrconf_sysctl_force_forwarding, addrconf_force_forward_change).
    if (was_all.force_forwarding == c.force_forwarding) copy &= ~unsigned{kCopyForceForwarding};
    Inet6Conf announced_all = was_all;
    if (was_all.force_forwarding != c.force_forwarding) {
      Inet6Conf f = was_all;
      f.force_forwarding = c.force_forwarding;
      netconf_changed6(ep, ns, kConfAll, was_all, f);
      announced_all.force_forwarding = c.force_forwarding;
    }
    auto copy_to = [&](Inet6Conf& to) {
      if (copy & kCopyDisableIpv6) to.disable_ipv6 = c.disable_ipv6;
      if (copy & kCopyForwarding) to.forwarding = c.forwarding;
      if (copy & kCopyAddrGenMode) to.addr_gen_mode = c.addr_gen_mode;
      if (copy & kCopyIgnoreLinkdown)
        to.ignore_routes_with_linkdown = c.ignore_routes_with_linkdown;
    };
    auto copy_to_dev = [&](Inet6Conf& to) {
      copy_to(to);
      if (copy & kCopyForceForwarding) to.force_forwarding = c.force_forwarding;
    };
    Inet6Conf dflt_was = st.default6;
    copy_to(st.default6);
    conf_snap_reset(ep, st);
    dflt_was.ignore_routes_with_linkdown = st.default6.ignore_routes_with_linkdown;
    netconf_changed6(ep, ns, kConfDefault, dflt_was, st.default6);
    // Each device takes the copy: an idle one gets its state (Linux walks them all too).
    if (copy != kCopyNone)
      for (Device* d : ns.devices_locked())
        if (DevState* ds = find_or_make_dev(ctl, ep, *d); ds && ds->in6) {
          Inet6Conf was = ds->in6->conf;
          Inet6Conf dc = was;
          copy_to_dev(dc);
          apply_conf6(ctl, ns, *d, *ds->in6, dc);
          netconf_changed6(ep, ns, d->ifindex(), was, dc);
        }
    netconf_changed6(ep, ns, kConfAll, announced_all, c);
    return ok();
  }
  Device* dev = ctl.find(ns, ifindex);
  DevState* ds = dev ? find_or_make_dev(ctl, ep, *dev) : nullptr;
  if (!ds || !ds->in6) return fail(ENODEV, "ipv6: device not found");
  Inet6Conf was = ds->in6->conf;
  apply_conf6(ctl, ns, *dev, *ds->in6, c);
  netconf_changed6(ep, ns, ifindex, was, c);
  return ok();
}

}  // namespace ifcore::inet
