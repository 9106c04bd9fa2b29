// rtnl/netconf_handlers.cc — RTM_GETNETCONF (get and dump) on top of ifcore/inet.h, and the
// RTNLGRP_IPV4_NETCONF / RTNLGRP_IPV6_NETCONF notifications (Linux:
// inet_netconf_get_devconf, inet_netconf_dump_devconf, inet6_netconf_get_devconf,
// inet6_netconf_dump_devconf, inet_netconf_notify_devconf, inet6_netconf_notify_devconf;
// rtnl_dump_all for a dump of no family).
//
// Lock order: each handler takes the control lock once.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/rtnetlink.h>

#include <cerrno>

#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/proto.h"

namespace ifcore::rtnl {

wire::NetconfMessage netconf_message(const inet::NetconfInfo& n) {
  wire::NetconfMessage m;
  m.family = static_cast<std::uint8_t>(n.family);
  m.ifindex = n.ifindex;
  m.forwarding = n.forwarding;
  m.rp_filter = n.rp_filter;
  m.mc_forwarding = n.mc_forwarding;
  m.bc_forwarding = n.bc_forwarding;
  m.proxy_neigh = n.proxy_neigh;
  m.ignore_routes_with_linkdown = n.ignore_routes_with_linkdown;
  return m;
}

void ProtoPublisher::on_netconf(Namespace& ns, inet::ProtoEvent ev, const inet::NetconfInfo& n) {
  const unsigned group = n.family == AF_INET6 ? RTNLGRP_IPV6_NETCONF : RTNLGRP_IPV4_NETCONF;
  // Linux: rtnl_notify(skb, net, 0, group, NULL, ...) — no request header: seq 0, port 0,
  // never echoed.
  if (!hub_.wanted(ns.id(), group, false)) return;
  std::uint16_t type =
      ev == inet::ProtoEvent::New ? std::uint16_t{RTM_NEWNETCONF} : std::uint16_t{RTM_DELNETCONF};
  wire::MessageBuilder b;
  if (wire::encode_netconf(b, {type, 0, 0, 0}, netconf_message(n)))
    hub_.publish(ns.id(), group, b.bytes(), false);
}

Result<void> handle_getnetconf(Request& r) {
  // The dispatcher passed at least a struct rtgenmsg: the family byte.
  const int family = r.m.payload()[0];
  const bool known = family == AF_INET || family == AF_INET6;
  if (!r.dump()) {
    // Linux: only AF_INET and AF_INET6 register a doit; others fall back to AF_UNSPEC,
    // which has none.
    if (!known) return fail(EOPNOTSUPP);
    auto m = wire::decode_netconf_get(r.m, family, r.s.strict_check());
    if (!m) return fail(m.error());
    if (!m->ifindex) return fail_log_only(EINVAL, "netconf get request without NETCONFA_IFINDEX");
    if (m->leftover) r.warning = "bytes leftover after parsing attributes";
    Control ctl = r.s.hub().engine().control();
    auto ns = session_ns(ctl, r.s);
    if (!ns) return fail(ns.error());
    auto got = inet::get_netconf(ctl, **ns, family, *m->ifindex);
    // Linux: IPv4 answers a missing device ENODEV, IPv6 EINVAL; neither says more.
    if (!got)
      return fail_log_only(family == AF_INET ? ENODEV : EINVAL,
                           "netconf: no device {} with {} state", *m->ifindex,
                           family == AF_INET ? "IPv4" : "IPv6");
    return emit(r.out, [&](wire::MessageBuilder& b) {
      return wire::encode_netconf(b, {RTM_NEWNETCONF, 0, r.seq(), r.port()}, netconf_message(*got));
    });
  }
  // A dump of another family falls back to AF_UNSPEC (rtnl_dump_all): IPv4, then IPv6.
  const int first = known ? family : AF_INET;
  if (r.s.strict_check()) {
    if (auto c = wire::check_netconf_dump(r.m, first); !c) {
      end_dump_error(r, c.error());
      return ok();
    }
  }
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  for (int f : {AF_INET, AF_INET6}) {
    if (known && f != family) continue;
    IFCORE_TRY(
        dump_items(r, RTM_NEWNETCONF, inet::list_netconf(ctl, **ns, f),
                   [](wire::MessageBuilder& b, const wire::Header& h, const inet::NetconfInfo& n) {
                     return wire::encode_netconf(b, h, netconf_message(n));
                   }));
  }
  end_dump(r);
  return ok();
}

}  // namespace ifcore::rtnl
