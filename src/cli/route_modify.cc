// cli/route_modify.cc — `ifc route add|change|replace|append|prepend|delete`: the words
// of `ip route` parsed into RTM_NEWROUTE / RTM_DELROUTE.
#include "cli/route_impl.h"

namespace ifcore::cli::route {

Result<void> route_modify(Ctx& c, Args& a, std::uint16_t type, std::uint16_t flags) {
  wire::RouteMessage r;
  bool del = type == RTM_DELROUTE;
  r.table = RT_TABLE_MAIN;
  if (!del) {
    r.protocol = RTPROT_BOOT;
    r.scope = RT_SCOPE_UNIVERSE;
    r.type = RTN_UNICAST;
  } else {
    r.scope = RT_SCOPE_NOWHERE;
  }
  bool have_dst = false, have_scope = false, nexthops = false;
  int family = c.family;
  std::uint32_t lock = 0;  // RTAX_LOCK: the metrics given `lock`
  bool table_given = false;
  while (!a.done()) {
    std::string w = a.take();
    auto val = [&]() { return a.value(); };
    if (w == "via") {
      auto v = val();
      if (!v) return fail(v.error());
      if (*v == "inet" || *v == "inet6") v = val();  // iproute2's read_family
      if (!v) return fail(v.error());
      auto ip = IpAddr::parse(*v);
      if (!ip) return invarg("invalid gateway address", *v);
      r.gateway = *ip;
    } else if (w == "dev" || w == "oif") {
      auto v = val();
      if (!v) return fail(v.error());
      auto idx = dev_index(c, *v);
      if (!idx) return fail(idx.error());
      r.oif = std::uint32_t(*idx);
    } else if (w == "metric" || w == "priority" || w == "preference") {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "\"metric\" value is invalid\n");
      if (!n) return fail(n.error());
      r.priority = *n;
    } else if (w == "table") {
      table_given = true;
      auto v = val();
      if (!v) return fail(v.error());
      auto tn = table_number(*v);
      if (!tn) return invarg("\"table\" value is invalid\n", *v);
      std::uint32_t t = *tn;
      if (t < 256)
        r.table = std::uint8_t(t);
      else
        r.table = RT_TABLE_UNSPEC, r.table_id = t;
    } else if (matches(w, "vrf")) {
      // iproute2: the vrf's table, as `table` would name it.
      table_given = true;
      auto v = val();
      if (!v) return fail(v.error());
      auto t = vrf_table(c, *v);
      if (!t) return fail(t.error());
      if (!*t) return invarg("Invalid VRF\n", *v);
      if (*t < 256)
        r.table = std::uint8_t(*t);
      else
        r.table = RT_TABLE_UNSPEC, r.table_id = *t;
    } else if (w == "proto" || w == "protocol") {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = rt_proto_number(*v);
      if (!n) return invarg("\"protocol\" value is invalid\n", *v);
      std::uint8_t p = *n;
      r.protocol = p;
    } else if (w == "scope") {
      auto v = val();
      if (!v) return fail(v.error());
      std::uint8_t s = *v == "global" ? RT_SCOPE_UNIVERSE
                       : *v == "link" ? RT_SCOPE_LINK
                       : *v == "host" ? RT_SCOPE_HOST
                       : *v == "site" ? RT_SCOPE_SITE
                                      : RT_SCOPE_NOWHERE;
      if (s == RT_SCOPE_NOWHERE && *v != "nowhere") return invarg("invalid \"scope\" value\n", *v);
      r.scope = s;
      have_scope = true;
    } else if (w == "src") {
      auto v = val();
      if (!v) return fail(v.error());
      auto ip = IpAddr::parse(*v);
      if (!ip) return invarg("invalid source address", *v);
      r.prefsrc = *ip;
    } else if (auto mx = metric_of(w)) {
      // iproute2 (iproute_modify): `NAME [lock] VALUE`, into RTA_METRICS.
      auto v = val();
      if (!v) return fail(v.error());
      if (*v == "lock") {
        lock |= 1u << mx->type;
        v = val();
        if (!v) return fail(v.error());
      }
      auto got = metric_value(*mx, *v);
      if (!got) return fail(got.error());
      r.metrics.push_back(*got);
    } else if (w == "onlink") {
      r.flags |= RTNH_F_ONLINK;
    } else if (w == "nhid") {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "\"id\" value is invalid\n");
      if (!n) return fail(n.error());
      r.nh_id = *n;
    } else if (w == "from") {
      // iproute2: a source prefix (RTA_SRC), IPv6 only in the kernel.
      auto v = val();
      if (!v) return fail(v.error());
      auto p = prefix_or_exit(*v, family);
      if (!p) return fail(p.error());
      if (!family) family = p->addr.family();
      r.src_len = std::uint8_t(p->len >= 0 ? p->len : p->any ? 0 : int(p->addr.size() * 8));
      if (!p->any) r.src = p->addr;
    } else if (w == "nexthop") {
      // iproute2's parse_nexthops: the rest of the line is hops, each after "nexthop".
      nexthops = true;
      for (;;) {
        wire::RouteNexthop hop;
        while (!a.done() && a.peek() != "nexthop") {
          std::string k = a.take();
          auto v = [&]() { return a.value(); };
          if (k == "via") {
            auto x = v();
            if (!x) return fail(x.error());
            int hop_family = family;
            if (*x == "inet" || *x == "inet6") {
              hop_family = *x == "inet" ? AF_INET : AF_INET6;
              auto y = v();
              if (!y) return fail(y.error());
              x = y;
            }
            auto p = prefix_or_exit(*x, hop_family);
            if (!p) return fail(p.error());
            if (!family) family = p->addr.family();
            hop.gateway = p->addr;
          } else if (k == "dev") {
            auto x = v();
            if (!x) return fail(x.error());
            auto idx = dev_index(c, *x);
            if (!idx) {
              std::fprintf(stderr, "%s\n", idx.error().message.c_str());
              return die(255, "Error: cannot parse nexthop");
            }
            hop.ifindex = *idx;
          } else if (k == "weight") {
            auto x = v();
            if (!x) return fail(x.error());
            auto n = parse_u32(*x, "\"weight\" is invalid\n");
            if (!n || *n == 0 || *n > 256) return invarg("\"weight\" is invalid\n", *x);
            hop.hops = std::uint8_t(*n - 1);
          } else if (k == "onlink") {
            hop.flags |= RTNH_F_ONLINK;
          } else if (k == "pervasive") {
            hop.flags |= RTNH_F_PERVASIVE;
          } else {
            return die(255, "Error: \"nexthop\" or end of line is expected instead of \"{}\"", k);
          }
        }
        r.multipath.push_back(hop);
        if (a.done()) break;
        a.take();  // the next "nexthop"
      }
    } else {
      bool typed = false;
      for (std::uint8_t t = 1; t < std::size(kRouteTypes); ++t)
        if (w == kRouteTypes[t]) {
          r.type = t;
          typed = true;
        }
      if (typed) {
        auto v = val();
        if (!v) return fail(v.error());
        w = *v;
      } else if (w == "to") {
        auto v = val();
        if (!v) return fail(v.error());
        w = *v;
      }
      if (have_dst) return duparg("to", w);
      auto p = prefix_or_exit(w, family);
      if (!p) return fail(p.error());
      have_dst = true;
      if (!p->any || family) {
        family = p->addr.family();
        r.dst_len = std::uint8_t(p->len >= 0 ? p->len : int(p->addr.size() * 8));
        if (!p->any) r.dst = p->addr;
      }
    }
  }
  if (!have_dst) return die(1, "Not enough information: destination is required.");
  if (lock) r.metrics.insert(r.metrics.begin(), {RTAX_LOCK, lock, {}});
  if (!family) family = r.gateway ? r.gateway->family() : AF_INET;
  r.family = std::uint8_t(family);
  if (!del && !have_scope) {
    if (r.type == RTN_LOCAL)
      r.scope = RT_SCOPE_HOST;
    else if (r.type == RTN_UNICAST && !r.gateway && !nexthops && !r.nh_id && family == AF_INET &&
             !(r.flags & RTNH_F_ONLINK))
      r.scope = RT_SCOPE_LINK;
  }
  // iproute2: a gateway of the route's own family is RTA_GATEWAY, of the other RTA_VIA.
  if (r.gateway && r.gateway->family() != family) std::swap(r.via, r.gateway);
  for (wire::RouteNexthop& hop : r.multipath)
    if (hop.gateway && hop.gateway->family() != family) std::swap(hop.via, hop.gateway);
  // iproute2: local, broadcast, nat and anycast routes go to table local unless named.
  if (!del && !table_given &&
      (r.type == RTN_LOCAL || r.type == RTN_BROADCAST || r.type == RTN_NAT ||
       r.type == RTN_ANYCAST))
    r.table = RT_TABLE_LOCAL;
  if (r.table_id == std::nullopt && r.table != RT_TABLE_MAIN) r.table_id = r.table;
  wire::MessageBuilder b;
  auto e = wire::encode_route(
      b, {type, std::uint16_t(NLM_F_REQUEST | flags), c.client->next_seq(), 0}, r);
  if (!e) return die(2, "{}", e.error().message);
  return c.client->talk(b);
}

// What `route show` and `route flush` select, as iproute2's filter_nlmsg tests it: a table
// (main unless named; `all`; `cache`), a device, protocol, scope, type, tos, metric, a
// gateway and a source (by prefix), and the destination: `root P` (routes inside P),
// `match P` (routes that cover P), `exact P` or a bare P (that prefix).

}  // namespace ifcore::cli::route
