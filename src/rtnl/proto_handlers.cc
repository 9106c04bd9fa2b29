// rtnl/proto_handlers.cc — addresses and routes: RTM_NEWADDR / RTM_DELADDR / RTM_GETADDR
// and RTM_NEWROUTE / RTM_DELROUTE / RTM_GETROUTE on top of ifcore/inet.h, and the
// conversions the hub's ProtoListener uses for RTNLGRP_IPV{4,6}_{IFADDR,ROUTE}.
//
// Lock order: each handler takes the control lock once.
#include "rtnl/proto.h"

#include <net/if.h>  // before any <linux/if*.h>
#include <netinet/in.h>

#include <linux/icmpv6.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>

#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl {

namespace {

// A point on the engine's clock in hundredths of a second (Linux: clock_t at USER_HZ 100).
std::uint32_t hundredths(TimePoint t) {
  return static_cast<std::uint32_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() / 10);
}

}  // namespace

wire::AddrMessage addr_message(const inet::AddrInfo& a) {
  wire::AddrMessage m;
  m.family = static_cast<std::uint8_t>(a.family);
  m.prefixlen = a.prefixlen;
  m.flags = static_cast<std::uint8_t>(a.flags & 0xff);
  m.scope = a.scope;
  m.ifindex = static_cast<std::uint32_t>(a.ifindex);
  if (a.family == AF_INET) {
    // Linux: inet_fill_ifaddr.
    if (!a.address.empty()) m.address = a.address;
    if (!a.local.empty()) m.local = a.local;
    if (!a.broadcast.empty()) m.broadcast = a.broadcast;
    if (!a.label.empty()) m.label = a.label;
  } else {
    // Linux: inet6_fill_ifaddr — IFA_LOCAL only with a peer.
    if (!a.address.empty() && a.address != a.local) {
      m.local = a.local;
      m.address = a.address;
    } else {
      m.address = a.local;
    }
  }
  if (a.proto) m.proto = a.proto;
  m.flags32 = a.flags;
  if (a.rt_priority) m.rt_priority = a.rt_priority;
  ifa_cacheinfo ci{};
  ci.ifa_prefered = a.preferred_lft;
  ci.ifa_valid = a.valid_lft;
  // Linux: cstamp_delta — hundredths of a second on the clock (since boot for the steady one).
  ci.cstamp = hundredths(a.cstamp);
  ci.tstamp = hundredths(a.tstamp);
  m.cacheinfo = ci;
  return m;
}

wire::RouteMessage route_message(const inet::RouteInfo& r, TimePoint now) {
  wire::RouteMessage m;
  m.family = static_cast<std::uint8_t>(r.family);
  m.dst_len = r.dst_len;
  if (r.src_len) {
    m.src = r.src;
    m.src_len = r.src_len;
  }
  m.tos = r.tos;
  m.table = static_cast<std::uint8_t>(r.table < 256 ? r.table : unsigned{RT_TABLE_COMPAT});
  m.table_id = r.table;
  m.protocol = r.protocol;
  m.scope = r.scope;
  m.type = r.type;
  m.flags = r.flags;
  if (r.dst_len) m.dst = r.dst;
  if (!r.nexthops.empty()) {
    // Linux: fib_add_multipath / rt6_fill_node with siblings — the hops in RTA_MULTIPATH.
    for (const inet::NextHop& nh : r.nexthops) {
      wire::RouteNexthop hop;
      hop.flags = static_cast<std::uint8_t>(nh.flags);
      hop.hops = static_cast<std::uint8_t>(nh.weight - 1);
      hop.ifindex = nh.oif;
      // A gateway of the other family (an IPv4 route through an IPv6 nexthop) is RTA_VIA.
      if (!nh.gateway.empty())
        (nh.gateway.family() == r.family ? hop.gateway : hop.via) = nh.gateway;
      m.multipath.push_back(hop);
    }
  } else {
    if (!r.gateway.empty()) (r.gateway.family() == r.family ? m.gateway : m.via) = r.gateway;
    if (r.oif) m.oif = static_cast<std::uint32_t>(r.oif);
  }
  if (r.nhid) m.nh_id = r.nhid;
  if (!r.prefsrc.empty()) m.prefsrc = r.prefsrc;
  // Linux: fib_dump_info puts RTA_PRIORITY when set; rt6_fill_node always, with RTA_PREF.
  if (r.priority || r.family == AF_INET6) m.priority = r.priority;
  if (r.family == AF_INET6) {
    rta_cacheinfo ci{};
    // Linux: rt6_fill_node — an expiring route reports the clock ticks (USER_HZ) it has left.
    if (r.expires) ci.rta_expires = *r.expires > now ? hundredths(*r.expires) - hundredths(now) : 0;
    m.cacheinfo = ci;
    m.pref = r.pref;
  }
  // Linux: rtnetlink_put_metrics, in type order, the algorithm by name.
  for (auto [type, value] : r.metrics.values) m.metrics.push_back({type, value, {}});
  if (!r.metrics.cc_algo.empty()) m.metrics.push_back({RTAX_CC_ALGO, 0, r.metrics.cc_algo});
  std::sort(m.metrics.begin(), m.metrics.end(),
            [](const wire::RouteMetric& a, const wire::RouteMetric& b) { return a.type < b.type; });
  return m;
}

Result<void> check_family(int family) {
  if (family != AF_INET && family != AF_INET6)
    return fail(EAFNOSUPPORT, "address family {} not supported", family);
  return ok();
}

// Linux: rtnetlink_rcv_msg — only IPv4 and IPv6 register a doit for addresses and routes,
// and PF_UNSPEC, which a family without one falls back to, has none: EOPNOTSUPP alone,
// before the message is parsed.
Result<void> check_doit_family(const Request& r) {
  auto p = r.m.payload();
  const int family = p.empty() ? AF_UNSPEC : p[0];
  if (family != AF_INET && family != AF_INET6)
    return fail_log_only(EOPNOTSUPP, "no handler of message type {} for address family {}",
                         r.m.hdr.nlmsg_type, family);
  return ok();
}

inet::AddrRequest addr_request(const wire::AddrMessage& a, std::uint16_t flags) {
  inet::AddrRequest q;
  q.family = a.family;
  q.ifindex = static_cast<int>(a.ifindex);
  q.prefixlen = a.prefixlen;
  q.local = a.local;
  q.address = a.address;
  q.broadcast = a.broadcast;
  q.label = a.label;
  q.scope = a.scope;
  q.flags = a.all_flags();
  q.rt_priority = a.rt_priority.value_or(0);
  q.proto = a.proto.value_or(0);
  if (a.cacheinfo) {
    q.valid_lft = a.cacheinfo->ifa_valid;
    q.preferred_lft = a.cacheinfo->ifa_prefered;
  }
  q.replace = (flags & NLM_F_REPLACE) != 0;
  return q;
}

namespace {

unsigned addr_group(int family) {
  return family == AF_INET6 ? RTNLGRP_IPV6_IFADDR : RTNLGRP_IPV4_IFADDR;
}
unsigned route_group(int family) {
  return family == AF_INET6 ? RTNLGRP_IPV6_ROUTE : RTNLGRP_IPV4_ROUTE;
}

}  // namespace

// ---- listener (hub.cc registers it)

void ProtoPublisher::on_addr(Namespace& ns, inet::ProtoEvent ev, const inet::AddrInfo& a) {
  unsigned group = addr_group(a.family);
  if (!hub_.wanted(ns.id(), group)) return;
  std::uint16_t type =
      ev == inet::ProtoEvent::New ? std::uint16_t{RTM_NEWADDR} : std::uint16_t{RTM_DELADDR};
  wire::Header h = hub_.notify_header(ns.id(), type);
  wire::MessageBuilder b;
  if (wire::encode_addr(b, h, addr_message(a))) hub_.publish(ns.id(), group, b.bytes());
}

void ProtoPublisher::on_route_flagged(Namespace& ns, inet::ProtoEvent ev, const inet::RouteInfo& r,
                                      std::uint16_t nlflags) {
  unsigned group = route_group(r.family);
  if (!hub_.wanted(ns.id(), group)) return;
  std::uint16_t type =
      ev == inet::ProtoEvent::New ? std::uint16_t{RTM_NEWROUTE} : std::uint16_t{RTM_DELROUTE};
  wire::Header h = hub_.notify_header(ns.id(), type, nlflags);
  wire::MessageBuilder b;
  if (wire::encode_route(b, h, route_message(r, hub_.engine().time().now())))
    hub_.publish(ns.id(), group, b.bytes());
}

bool ProtoPublisher::wants_routes(Namespace& ns, int family) const {
  return hub_.wanted(ns.id(), route_group(family));
}

// ---- handlers

Result<void> handle_newaddr(Request& r) {
  IFCORE_TRY(check_doit_family(r));
  auto a = wire::decode_addr(r.m);
  if (!a) return fail(a.error());
  IFCORE_TRY(check_family(a->family));
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  auto made = inet::add_address(ctl, **ns, addr_request(*a, r.flags()));
  if (!made) return fail(made.error());
  return ok();
}

Result<void> handle_deladdr(Request& r) {
  IFCORE_TRY(check_doit_family(r));
  auto a = wire::decode_addr(r.m);
  if (!a) return fail(a.error());
  IFCORE_TRY(check_family(a->family));
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  return inet::delete_address(ctl, **ns, addr_request(*a, r.flags()));
}

// Linux: inet_valid_dump_ifaddr_req / inet6_valid_dump_ifaddr_req (a dump of no family is
// IPv4's first).
Result<void> strict_addr_dump_checks(const Request& r) {
  auto p = r.m.payload();
  const char* who = !p.empty() && p[0] == AF_INET6 ? "ipv6" : "ipv4";
  if (p.size() < sizeof(ifaddrmsg))
    return fail(EINVAL, "{}: Invalid header for address dump request", who);
  ifaddrmsg ifa;
  std::memcpy(&ifa, p.data(), sizeof ifa);
  if (ifa.ifa_prefixlen || ifa.ifa_flags || ifa.ifa_scope)
    return fail(EINVAL, "{}: Invalid values in header for address dump request", who);
  auto attrs = wire::parse_raw_attrs(p.subspan(std::min(p.size(), NLMSG_ALIGN(sizeof(ifaddrmsg)))),
                                     NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifaddrmsg)));
  if (!attrs) return fail(attrs.error());
  for (const wire::RawAttr& a : *attrs)
    if (a.type != IFA_TARGET_NETNSID)
      return fail(EINVAL, "{}: Unsupported attribute in dump request", who);
  return ok();
}

Result<void> handle_getaddr(Request& r) {
  if (!r.dump()) return fail(EOPNOTSUPP);  // Linux: no doit for RTM_GETADDR in IPv4
  if (r.s.strict_check()) IFCORE_TRY(strict_addr_dump_checks(r));
  auto a = wire::decode_addr(r.m);
  if (!a) return fail(a.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  // Linux: the ifindex filter applies only to strict dumps, which mark their messages and
  // their end filtered (cb->answer_flags).
  int ifindex = r.s.strict_check() ? static_cast<int>(a->ifindex) : 0;
  const std::uint16_t filtered = ifindex ? NLM_F_DUMP_FILTERED : 0;
  for (const auto& info : inet::list_addresses(ctl, **ns, a->family, ifindex)) {
    auto e = emit(r.out, [&](wire::MessageBuilder& b) {
      return wire::encode_addr(
          b, {RTM_NEWADDR, std::uint16_t(NLM_F_MULTI | filtered), r.seq(), r.port()},
          addr_message(info));
    });
    if (!e) {
      end_dump(r, -e.error().code, filtered);
      return e;
    }
  }
  end_dump(r, 0, filtered);
  return ok();
}

Result<void> handle_newroute(Request& r) {
  IFCORE_TRY(check_doit_family(r));
  auto m = wire::decode_route(r.m);
  if (!m) return fail(m.error());
  IFCORE_TRY(check_family(m->family));
  auto q = route_request(*m, r.flags(), false);
  if (!q) return fail(q.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  auto made = inet::add_route(ctl, **ns, *q);
  if (!made) return fail(made.error());
  return ok();
}

Result<void> handle_delroute(Request& r) {
  IFCORE_TRY(check_doit_family(r));
  auto m = wire::decode_route(r.m);
  if (!m) return fail(m.error());
  IFCORE_TRY(check_family(m->family));
  auto q = route_request(*m, r.flags(), true);
  if (!q) return fail(q.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  return inet::delete_route(ctl, **ns, *q);
}

namespace {

// What a route dump asks for (Linux: struct fib_dump_filter).
struct RouteFilter {
  std::uint32_t flags = 0;  // RTM_F_CLONED, RTM_F_PREFIX
  std::uint32_t table = 0;
  std::uint8_t protocol = 0, type = 0;
  int oif = 0;
  bool set() const { return flags || table || protocol || type || oif; }
};

// Linux: ip_valid_fib_dump_req, for a strict request (both families use it); otherwise
// only the header's RTM_F_CLONED and RTM_F_PREFIX count.
Result<RouteFilter> route_filter(Request& r, Control& ctl, Namespace& ns,
                                 const wire::RouteMessage& m) {
  RouteFilter f;
  auto p = r.m.payload();
  if (!r.s.strict_check()) {
    if (p.size() >= sizeof(rtmsg)) f.flags = m.flags & (RTM_F_CLONED | RTM_F_PREFIX);
    return f;
  }
  if (p.size() < sizeof(rtmsg)) return fail(EINVAL, "Invalid header for FIB dump request");
  if (m.dst_len || m.src_len || m.tos || m.scope)
    return fail(EINVAL, "Invalid values in header for FIB dump request");
  if (m.flags & ~std::uint32_t{RTM_F_CLONED | RTM_F_PREFIX})
    return fail(EINVAL, "Invalid flags for FIB dump request");
  f.flags = m.flags;
  f.protocol = m.protocol;
  f.type = m.type;
  f.table = m.table;
  auto attrs = wire::parse_raw_attrs(p.subspan(NLMSG_ALIGN(sizeof(rtmsg))),
                                     static_cast<int>(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(rtmsg))));
  if (!attrs) return fail(attrs.error());
  for (const wire::RawAttr& a : *attrs) {
    if (a.type != RTA_TABLE && a.type != RTA_OIF)
      return fail(EINVAL, "Unsupported attribute in dump request");
  }
  if (m.table_id) f.table = *m.table_id;
  if (m.oif) {
    if (!ctl.find(ns, static_cast<int>(*m.oif)))
      return fail_log_only(ENODEV, "no device {}", *m.oif);
    f.oif = static_cast<int>(*m.oif);
  }
  return f;
}

// Linux: fib_dump_info's filter (fn_trie_dump_leaf, fib6_dump_table): type, protocol and
// a next hop on the device.
bool route_passes(const RouteFilter& f, const inet::RouteInfo& i) {
  if (f.type && i.type != f.type) return false;
  if (f.protocol && i.protocol != f.protocol) return false;
  if (!f.oif) return true;
  if (i.nexthops.empty()) return i.oif == f.oif;
  return std::any_of(i.nexthops.begin(), i.nexthops.end(),
                     [&](const inet::NextHop& h) { return h.oif == f.oif; });
}

// RTM_GETROUTE's dump: Linux inet_dump_fib, then inet6_dump_fib for AF_UNSPEC. A table
// asked for that does not exist is ENOENT for its own family's request, and nothing from
// that family for an AF_UNSPEC one. RTM_F_CLONED asks for the cached exceptions (ifcore
// keeps none), RTM_F_PREFIX for IPv6's routes of a prefix from a router advertisement
// (none either): both dump nothing.
Result<void> dump_routes(Request& r, Control& ctl, Namespace& ns, const wire::RouteMessage& m) {
  auto f = route_filter(r, ctl, ns, m);
  if (!f) {
    end_dump_error(r, f.error());
    return fail(f.error());
  }
  const std::uint16_t flags = NLM_F_MULTI | (f->set() ? NLM_F_DUMP_FILTERED : 0);
  const TimePoint now = ctl.engine().time().now();
  // A family without a dump of its own gets PF_UNSPEC's (rtnl_dump_all: every family's);
  // the multicast routing families have theirs, and ifcore no multicast routes.
  const bool all = m.family != AF_INET && m.family != AF_INET6;
  if (m.family == RTNL_FAMILY_IPMR || m.family == RTNL_FAMILY_IP6MR) {
    end_dump(r);
    return ok();
  }
  for (int family : {AF_INET, AF_INET6}) {
    if (!all && m.family != family) continue;
    if (f->flags & (RTM_F_CLONED | RTM_F_PREFIX)) continue;
    std::optional<std::uint32_t> table;
    if (f->table) {
      if (!inet::has_table(ctl, ns, family, f->table)) {
        if (m.family != family) continue;
        Error e{ENOENT, family == AF_INET ? "ipv4: FIB table does not exist"
                                          : "ipv6: FIB table does not exist"};
        end_dump_error(r, e);
        return fail(e);
      }
      table = f->table;
    }
    for (const auto& info : inet::list_routes(ctl, ns, family, table)) {
      if (!route_passes(*f, info)) continue;
      auto e = emit(r.out, [&](wire::MessageBuilder& b) {
        return wire::encode_route(b, {RTM_NEWROUTE, flags, r.seq(), r.port()},
                                  route_message(info, now));
      });
      if (!e) {
        end_dump(r, -e.error().code);
        return e;
      }
    }
  }
  end_dump(r);
  return ok();
}

}  // namespace

Result<void> handle_getroute(Request& r) {
  if (!r.dump()) {
    IFCORE_TRY(check_doit_family(r));
    IFCORE_TRY(wire::check_route_get(r.m, r.m.payload()[0], r.s.strict_check()));
  }
  auto m = wire::decode_route(r.m);
  if (!m) return fail(m.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  if (r.dump()) return dump_routes(r, ctl, **ns, *m);
  // `ip route get`: Linux inet_rtm_getroute / inet6_rtm_getroute.
  // Linux: rtm_getroute_parse_ip_proto — TCP, UDP and the family's ICMP only.
  if (m->ip_proto) {
    const int p = *m->ip_proto;
    const int icmp = m->family == AF_INET ? int{IPPROTO_ICMP} : int{IPPROTO_ICMPV6};
    if (p != IPPROTO_TCP && p != IPPROTO_UDP && p != icmp)
      return fail(EOPNOTSUPP, "Unsupported ip proto");
  }
  if (!m->dst) return fail(EINVAL, "missing destination address");
  if (m->family == AF_INET) {
    bool from = m->src && !m->src->is_unspecified();
    // Linux: inet_rtm_getroute with RTA_IIF takes the input path, where a source of
    // 0.0.0.0 is a martian (ip_route_input_slow): EINVAL alone.
    if (m->iif && !from)
      return fail_log_only(EINVAL, "route get: input on ifindex {} from 0.0.0.0 is a martian",
                           *m->iif);
    // Linux: ip_route_output_key_hash_rcu refuses a source that is no local address with
    // ENETUNREACH alone.
    if (from && !m->iif) {
      if (!inet::is_local_address(ctl, **ns, *m->src))
        return fail_log_only(ENETUNREACH, "route get: source {} is not a local address",
                             m->src->to_string());
    }
  }
  inet::Flow flow;
  flow.dst = *m->dst;
  if (m->src) flow.src = *m->src;
  flow.iif = m->iif ? static_cast<int>(*m->iif) : 0;
  flow.oif = m->oif ? static_cast<int>(*m->oif) : 0;
  flow.mark = m->mark.value_or(0);
  flow.uid = m->uid.value_or(0);
  flow.tos = m->tos;
  flow.ip_proto = m->ip_proto.value_or(0);
  flow.sport = m->sport.value_or(0);
  flow.dport = m->dport.value_or(0);
  flow.fib_match = m->flags & RTM_F_FIB_MATCH;
  auto got = inet::get_route(ctl, **ns, flow);
  if (!got) return fail(got.error());
  if (flow.fib_match) {
    // Linux: fib_dump_info / rt6_fill_node of the matched entry, as a dump shows it.
    return emit(r.out, [&](wire::MessageBuilder& b) {
      return wire::encode_route(b, {RTM_NEWROUTE, 0, r.seq(), r.port()},
                                route_message(*got, ctl.engine().time().now()));
    });
  }
  wire::RouteMessage out = route_message(*got, ctl.engine().time().now());
  if (out.family == AF_INET6) {
    // Linux: inet6_rtm_getroute reports the flow's source, :: when none was asked (`from ::`).
    out.src = m->src ? *m->src : IpAddr::v6(std::array<std::uint8_t, 16>{});
    out.src_len = 128;
    // The lookup's answer is a copy of the route (a per-cpu rt6_info) that carries no
    // expiry: Linux reports none, though the route it came from expires.
    if (out.cacheinfo) out.cacheinfo->rta_expires = 0;
    if (m->iif) {
      // rt6_fill_node for an input lookup: the input device, and no preferred source.
      out.iif = *m->iif;
      out.prefsrc.reset();
    }
  }
  if (out.family == AF_INET) {
    // Linux: rt_fill_info — no metric, the uid the lookup was for (ifcore's clients are
    // not told apart by uid: 0), and the cached dst's RTA_CACHEINFO (ifcore keeps no
    // per-lookup cache entry, so its counters are 0).
    out.priority.reset();
    out.uid = m->uid.value_or(0);
    if (m->mark && *m->mark) out.mark = *m->mark;
    if (m->iif) {
      // An input route (rt_is_input_route): the device it came in on, no preferred source
      // and no uid (rt_fill_info).
      out.iif = *m->iif;
      out.prefsrc.reset();
    }
    out.cacheinfo = rta_cacheinfo{};
    // A source asked for (`from A`, a local address: checked above) is the flow's source:
    // reported as RTA_SRC, and RTA_PREFSRC only when the route's differs from it, which
    // the flow's own cannot (`local A from A dev lo`, no `src`).
    if (m->src && !m->src->is_unspecified()) {
      out.src = *m->src;
      out.src_len = 32;
      out.prefsrc.reset();
    }
  }
  return emit(r.out, [&](wire::MessageBuilder& b) {
    return wire::encode_route(b, {RTM_NEWROUTE, 0, r.seq(), r.port()}, out);
  });
}

}  // namespace ifcore::rtnl
