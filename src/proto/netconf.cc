// proto/netconf.cc — the settings Linux reports through netconf (RTM_NEWNETCONF /
// RTM_DELNETCONF, net/ipv4/devinet.c and net/ipv6/addrconf.c): what a get and a dump
// report, and the announcements of a device's protocol state and of changed settings.
//
// Lock order: control lock only.
#include <linux/netconf.h>

#include "proto/state.h"

namespace ifcore::proto {

using inet::NetconfInfo;
using inet::ProtoEvent;

namespace {

bool listened(const EngineProto& ep) {
  return !ep.listeners.empty();
}

NetconfInfo only(int family, int ifindex) {
  NetconfInfo n;
  n.family = family;
  n.ifindex = ifindex;
  return n;
}

}  // namespace

// Linux: inet_netconf_fill_devconf with NETCONFA_ALL.
NetconfInfo netconf_full4(int ifindex, const Inet4Conf& c) {
  NetconfInfo n = only(AF_INET, ifindex);
  n.forwarding = c.forwarding;
  n.rp_filter = c.rp_filter;
  n.mc_forwarding = c.mc_forwarding;
  n.bc_forwarding = c.bc_forwarding;
  n.proxy_neigh = c.proxy_arp;
  n.ignore_routes_with_linkdown = c.ignore_routes_with_linkdown;
  return n;
}

// Linux: inet6_netconf_fill_devconf with NETCONFA_ALL (no mc_forwarding: Linux 6.18 here
// is built without CONFIG_IPV6_MROUTE).
NetconfInfo netconf_full6(int ifindex, const Inet6Conf& c) {
  NetconfInfo n = only(AF_INET6, ifindex);
  n.forwarding = c.forwarding;
  n.proxy_neigh = c.proxy_ndp;
  n.ignore_routes_with_linkdown = c.ignore_routes_with_linkdown;
  return n;
}

// Linux: devinet_sysctl_register / ipv6_add_dev (addrconf_sysctl_register).
void netconf_new4(EngineProto& ep, Namespace& ns, const Device& dev, const Inet4Conf& c) {
  if (listened(ep)) notify_netconf(ep, ns, ProtoEvent::New, netconf_full4(dev.ifindex(), c));
}
void netconf_new6(EngineProto& ep, Namespace& ns, const Device& dev, const Inet6Conf& c) {
  if (listened(ep)) notify_netconf(ep, ns, ProtoEvent::New, netconf_full6(dev.ifindex(), c));
}
// Linux: devinet_sysctl_unregister / addrconf_sysctl_unregister.
void netconf_del(EngineProto& ep, Namespace& ns, int family, const Device& dev) {
  if (listened(ep)) notify_netconf(ep, ns, ProtoEvent::Del, only(family, dev.ifindex()));
}

void netconf_forwarding(EngineProto& ep, Namespace& ns, int family, int ifindex,
                        std::int32_t value) {
  if (!listened(ep)) return;
  NetconfInfo n = only(family, ifindex);
  n.forwarding = value;
  notify_netconf(ep, ns, ProtoEvent::New, n);
}

// Linux: devinet_conf_proc (rp_filter, proxy_arp, ignore_routes_with_linkdown: when the
// value changed; bc_forwarding and the rest unannounced) and devinet_sysctl_forward.
void netconf_changed4(EngineProto& ep, Namespace& ns, int ifindex, const Inet4Conf& was,
                      const Inet4Conf& now) {
  if (!listened(ep)) return;
  auto one = [&](std::optional<std::int32_t> NetconfInfo::*field, std::int32_t a, std::int32_t b) {
    if (a == b) return;
    NetconfInfo n = only(AF_INET, ifindex);
    n.*field = b;
    notify_netconf(ep, ns, ProtoEvent::New, n);
  };
  one(&NetconfInfo::forwarding, was.forwarding, now.forwarding);
  one(&NetconfInfo::rp_filter, was.rp_filter, now.rp_filter);
  one(&NetconfInfo::proxy_neigh, was.proxy_arp, now.proxy_arp);
  one(&NetconfInfo::ignore_routes_with_linkdown, was.ignore_routes_with_linkdown,
      now.ignore_routes_with_linkdown);
}

// Linux: addrconf_fixup_forwarding and addrconf_fixup_linkdown (when the setting turns on
// or off), addrconf_sysctl_proxy_ndp (when the value changed).
void netconf_changed6(EngineProto& ep, Namespace& ns, int ifindex, const Inet6Conf& was,
                      const Inet6Conf& now) {
  if (!listened(ep)) return;
  auto one = [&](std::optional<std::int32_t> NetconfInfo::*field, bool changed, std::int32_t b) {
    if (!changed) return;
    NetconfInfo n = only(AF_INET6, ifindex);
    n.*field = b;
    notify_netconf(ep, ns, ProtoEvent::New, n);
  };
  one(&NetconfInfo::forwarding, !was.forwarding != !now.forwarding, now.forwarding);
  one(&NetconfInfo::proxy_neigh, was.proxy_ndp != now.proxy_ndp, now.proxy_ndp);
  one(&NetconfInfo::ignore_routes_with_linkdown,
      !was.ignore_routes_with_linkdown != !now.ignore_routes_with_linkdown,
      now.ignore_routes_with_linkdown);
  // Linux 6.18: NETCONFA_FORCE_FORWARDING, which inet6_netconf_fill_devconf does not fill:
  // the message carries the ifindex alone.
  if (was.force_forwarding != now.force_forwarding)
    notify_netconf(ep, ns, ProtoEvent::New, only(AF_INET6, ifindex));
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

Result<NetconfInfo> get_netconf(Control& ctl, Namespace& ns, int family, int ifindex) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  if (family == AF_INET) {
    auto c = inet4_conf(ctl, ns, ifindex);
    if (!c) return fail(c.error());
    return netconf_full4(ifindex, *c);
  }
  if (family == AF_INET6) {
    auto c = inet6_conf(ctl, ns, ifindex);
    if (!c) return fail(c.error());
    return netconf_full6(ifindex, *c);
  }
  return fail(EAFNOSUPPORT, "address family {} has no netconf", family);
}

// Linux: inet_netconf_dump_devconf, inet6_netconf_dump_devconf.
std::vector<NetconfInfo> list_netconf(Control& ctl, Namespace& ns, int family) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  NetState& st = net_state(ns);
  std::vector<NetconfInfo> out;
  for (Device* d : ns.devices_locked()) {
    if (family == AF_INET)
      if (auto c = dev_conf4(ep, *d)) out.push_back(netconf_full4(d->ifindex(), *c));
    if (family == AF_INET6)
      if (auto c = dev_conf6(ep, *d)) out.push_back(netconf_full6(d->ifindex(), *c));
  }
  if (family == AF_INET) {
    out.push_back(netconf_full4(kConfAll, st.all4));
    out.push_back(netconf_full4(kConfDefault, st.default4));
  } else if (family == AF_INET6) {
    out.push_back(netconf_full6(kConfAll, st.all6));
    out.push_back(netconf_full6(kConfDefault, st.default6));
  }
  return out;
}

}  // namespace ifcore::inet
