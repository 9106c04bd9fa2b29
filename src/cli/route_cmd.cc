// cli/route_cmd.cc — `ifc route show|flush|get` (RTM_GETROUTE, filtered as `ip route`
// filters) and the dispatch of `ifc route`.
#include "cli/route_impl.h"

namespace ifcore::cli {

using namespace route;

namespace {

struct RouteFilter {
  std::optional<std::uint32_t> table = RT_TABLE_MAIN;
  bool cloned = false;
  int oif = 0;
  std::optional<std::uint8_t> protocol, scope, tos;
  std::uint32_t typemask = 0;
  std::optional<std::uint32_t> metric;
  std::optional<Prefix> root, match, via, prefsrc;
  std::optional<Prefix> src_root, src_match;  // `from`: the source prefix (IPv6)
  std::optional<Prefix> dst;                  // flush: the exact prefix
  int family = AF_INET;
  mutable bool ip6_multiple_tables = false;  // iproute2's static flag, per listing here

  static int bits(const Prefix& p) {
    return p.any ? 0 : p.len < 0 ? int(p.addr.size() * 8) : p.len;
  }
  // The first `n` bits of `a` are those of `p` (iproute2's inet_addr_match).
  static bool within(const std::optional<IpAddr>& a, int family, const Prefix& p, int n) {
    if (n <= 0) return true;
    IpAddr x =
        a ? *a : (family == AF_INET6 ? IpAddr::v6(std::array<std::uint8_t, 16>{}) : IpAddr::v4(0));
    return x.family() == p.addr.family() && x.masked(n) == p.addr.masked(n);
  }
  // iproute2's `root P` (the prefix is P or longer, inside P) and `match P` (P or shorter,
  // holding P) of `to` and `from`, for a route's prefix `a`/`len`.
  static bool selects(const std::optional<Prefix>& root, const std::optional<Prefix>& match,
                      int family, const std::optional<IpAddr>& a, int len) {
    if (root && (family != root->addr.family() || bits(*root) > len ||
                 !within(a, family, *root, bits(*root))))
      return false;
    return !match || (family == match->addr.family() && bits(*match) >= len &&
                      within(a, family, *match, len));
  }
  bool accepts(const wire::RouteMessage& r) const {
    if (family != AF_UNSPEC && r.family != family) return false;
    std::uint32_t t = r.table_or_id();
    if (r.family == AF_INET6 && t != RT_TABLE_MAIN) ip6_multiple_tables = true;
    if (cloned != bool(r.flags & RTM_F_CLONED)) return false;
    if (r.family == AF_INET6 && !ip6_multiple_tables) {
      if (table) {
        if (*table == RT_TABLE_LOCAL  ? r.type != RTN_LOCAL
            : *table == RT_TABLE_MAIN ? r.type == RTN_LOCAL
                                      : true)
          return false;
      }
    } else if (table && *table != t) {
      return false;
    }
    if (protocol && r.protocol != *protocol) return false;
    if (scope && r.scope != *scope) return false;
    if (typemask && !(typemask & (1u << r.type))) return false;
    if (tos && r.tos != *tos) return false;
    if (!selects(root, match, r.family, r.dst, r.dst_len)) return false;
    if (!selects(src_root, src_match, r.family, r.src, r.src_len)) return false;
    if (via && (!r.gateway || !within(r.gateway, r.family, *via, bits(*via)))) return false;
    if (prefsrc && (!r.prefsrc || !within(r.prefsrc, r.family, *prefsrc, bits(*prefsrc))))
      return false;
    if (oif && r.oif.value_or(0) != std::uint32_t(oif)) return false;
    if (metric && r.priority.value_or(0) != *metric) return false;
    if (dst) {
      int len = bits(*dst);
      if (r.dst_len != len) return false;
      if (r.family != dst->addr.family()) return false;
      if (len > 0 && !(r.dst && r.dst->masked(len) == dst->addr.masked(len))) return false;
    }
    return true;
  }
  RouteShown shown() const {
    RouteShown m;
    m.one_table = table.has_value();
    m.one_dev = oif != 0;
    m.proto = protocol.has_value();
    m.scope = scope.has_value();
    m.tos = tos.has_value();
    m.metric = metric.has_value();
    m.gateway = via && bits(*via) == int(via->addr.size() * 8);
    m.prefsrc = prefsrc && bits(*prefsrc) == int(prefsrc->addr.size() * 8);
    return m;
  }
};

Result<RouteFilter> parse_route_filter(Ctx& c, Args& a, bool flush) {
  RouteFilter f;
  int family = c.family;
  auto prefix = [&](const std::string& s) { return prefix_or_exit(s, family); };
  while (!a.done()) {
    std::string w = a.take();
    auto val = [&]() { return a.value(); };
    if (matches(w, "table")) {
      auto v = val();
      if (!v) return fail(v.error());
      if (*v == "all") {
        f.table.reset();
      } else if (*v == "cache") {
        f.cloned = true;
      } else {
        auto n = table_number(*v);
        if (!n) return invarg("table id value is invalid\n", *v);
        // Table 0 (unspec) is every table, as `all` (iproute2: filter.tb 0).
        if (*n == RT_TABLE_UNSPEC)
          f.table.reset();
        else
          f.table = *n;
      }
    } else if (matches(w, "vrf")) {
      // iproute2: the vrf's table, without its local and broadcast routes.
      auto v = val();
      if (!v) return fail(v.error());
      auto t = vrf_table(c, *v);
      if (!t) return fail(t.error());
      if (!*t) return invarg("Invalid VRF\n", *v);
      f.table = *t;
      f.typemask = ~(1u << RTN_LOCAL | 1u << RTN_BROADCAST);
    } else if (matches(w, "cached") || matches(w, "cloned")) {
      f.cloned = true;
    } else if (w == "tos" || matches(w, "dsfield")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "", 16);
      if (!n || *n > 255) return invarg("TOS value is invalid\n", *v);
      f.tos = std::uint8_t(*n);
    } else if (matches(w, "protocol")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = rt_proto_number(*v);
      if (!n) {
        if (*v != "all") return invarg("invalid \"protocol\"\n", *v);
        f.protocol.reset();
      } else {
        f.protocol = *n;
      }
    } else if (matches(w, "scope")) {
      auto v = val();
      if (!v) return fail(v.error());
      static const std::pair<const char*, std::uint8_t> kScopes[] = {{"global", RT_SCOPE_UNIVERSE},
                                                                     {"site", RT_SCOPE_SITE},
                                                                     {"link", RT_SCOPE_LINK},
                                                                     {"host", RT_SCOPE_HOST},
                                                                     {"nowhere", RT_SCOPE_NOWHERE}};
      std::optional<std::uint8_t> sc;
      for (auto [name, n] : kScopes)
        if (*v == name) sc = n;
      if (!sc)
        if (auto n = parse_u32(*v, ""); n && *n < 256) sc = std::uint8_t(*n);
      if (!sc && *v != "all") return invarg("invalid \"scope\"\n", *v);
      f.scope = sc;
    } else if (matches(w, "type")) {
      auto v = val();
      if (!v) return fail(v.error());
      int type = -1;
      for (int t = 0; t < int(std::size(kRouteTypes)); ++t)
        if (*v == kRouteTypes[t]) type = t;
      if (type < 0)
        if (auto n = parse_u32(*v, ""); n && *n < 32) type = int(*n);
      if (type < 0) return invarg("node type value is invalid\n", *v);
      f.typemask = 1u << type;
    } else if (w == "dev" || w == "oif") {
      auto v = val();
      if (!v) return fail(v.error());
      auto idx = c.client->ifindex(*v);
      if (!idx) return fail(idx.error());
      if (!*idx) return die(1, "Cannot find device \"{}\"", *v);
      f.oif = *idx;
    } else if (matches(w, "metric") || matches(w, "priority") || w == "preference") {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "");
      if (!n) return invarg("\"metric\" value is invalid\n", *v);
      f.metric = *n;
    } else if (w == "via") {
      auto v = val();
      if (!v) return fail(v.error());
      auto p = prefix(*v);
      if (!p) return fail(p.error());
      f.via = *p;
    } else if (w == "src") {
      auto v = val();
      if (!v) return fail(v.error());
      auto p = prefix(*v);
      if (!p) return fail(p.error());
      f.prefsrc = *p;
    } else if (w == "from") {
      // iproute2: `from [root|match|exact] PREFIX`, as `to` for the source prefix.
      auto v = val();
      if (!v) return fail(v.error());
      bool is_root = matches(*v, "root"), is_match = !is_root && matches(*v, "match");
      if (is_root || is_match || matches(*v, "exact")) {
        v = val();
        if (!v) return fail(v.error());
      }
      auto p = prefix(*v);
      if (!p) return fail(p.error());
      if (p->any) p->addr = family == AF_INET6 ? *IpAddr::parse("::") : IpAddr::v4(0);
      if (!is_match) f.src_root = *p;
      if (!is_root) f.src_match = *p;
    } else {
      if (matches(w, "to")) {
        auto v = val();
        if (!v) return fail(v.error());
        w = *v;
      }
      bool is_root = matches(w, "root"), is_match = !is_root && matches(w, "match");
      if (is_root || is_match || matches(w, "exact")) {
        auto v = val();
        if (!v) return fail(v.error());
        w = *v;
      }
      auto p = prefix(w);
      if (!p) return fail(p.error());
      if (p->any) p->addr = family == AF_INET6 ? *IpAddr::parse("::") : IpAddr::v4(0);
      if (is_root) {
        f.root = *p;
      } else if (is_match) {
        f.match = *p;
      } else if (flush) {
        f.dst = *p;
      } else {
        f.root = f.match = *p;
      }
    }
  }
  // iproute2: IPv4 unless a family is asked for, or every family for "table all".
  f.family = c.family ? c.family : f.table ? AF_INET : AF_UNSPEC;
  return f;
}

// The routes that pass `f`, each as its dump message.
Result<void> dump_routes(
    Ctx& c, const RouteFilter& f,
    const std::function<void(const wire::Message&, const wire::RouteMessage&)>& each) {
  wire::MessageBuilder b(1 << 16);
  b.begin({RTM_GETROUTE, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
  rtmsg rtm{};
  rtm.rtm_family = std::uint8_t(f.family);
  b.put_struct(rtm);
  IFCORE_TRY(finish(b));
  return c.client->dump(b, [&](const wire::Message& m) {
    if (m.hdr.nlmsg_type != RTM_NEWROUTE) return;
    auto r = wire::decode_route(m);
    if (r && f.accepts(*r)) each(m, *r);
  });
}

Result<void> route_show(Ctx& c, Args& a) {
  auto f = parse_route_filter(c, a, false);
  if (!f) return fail(f.error());
  c.out->open_array();
  IFCORE_TRY(dump_routes(c, *f, [&](const wire::Message& m, const wire::RouteMessage& r) {
    print_route(c, m, r, f->shown());
    c.out->flush();
  }));
  c.out->close();
  return ok();
}

// iproute2 (iproute_flush): dump what passes the filter and send each route back as an
// RTM_DELROUTE, round after round until a dump finds none (at most 10 rounds); `-s` counts.
Result<void> route_flush(Ctx& c, Args& a) {
  if (a.done()) return die(1, "\"ip route flush\" requires arguments.");
  auto f = parse_route_filter(c, a, true);
  if (!f) return fail(f.error());
  for (int round = 0; round < 10; ++round) {
    std::vector<std::vector<std::uint8_t>> doomed;  // each route's rtmsg and attributes
    IFCORE_TRY(dump_routes(c, *f, [&](const wire::Message& m, const wire::RouteMessage&) {
      doomed.emplace_back(m.payload().begin(), m.payload().end());
    }));
    if (doomed.empty()) {
      print_flush_done(c, round);
      c.out->flush();
      return ok();
    }
    for (const auto& body : doomed) {
      wire::MessageBuilder b(body.size() + 64);
      b.begin({RTM_DELROUTE, NLM_F_REQUEST, c.client->next_seq(), 0});
      b.put_raw(body.data(), body.size());
      IFCORE_TRY(finish(b));
      int err = 0;
      std::string ext;
      IFCORE_TRY(c.client->talk_raw(b, {}, err, ext));
      // A route that went with another (its device's, its nexthop's) is no error.
      if (err && err != ESRCH) return die(2, "{}", rtnl_error_text(err, ext));
    }
    if (c.stats) {
      c.out->text(
          fmt::format("\n*** Round {}, deleting {} entries ***\n", round + 1, doomed.size()));
      c.out->flush();
    }
  }
  return die(1, "*** Flush remains incomplete after 10 rounds. ***");
}

Result<void> route_get(Ctx& c, Args& a) {
  // iproute2's iproute_get: the flow's words, then the destination.
  wire::RouteMessage r;
  r.family = std::uint8_t(c.family == AF_INET || c.family == AF_INET6 ? c.family : 0);
  std::string idev, odev;
  std::uint32_t mark = 0;
  bool address_found = false;
  while (!a.done()) {
    std::string w = a.take();
    auto val = [&]() { return a.value(); };
    if (w == "tos" || matches(w, "dsfield")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "TOS value is invalid\n", 16);
      if (!n || *n > 255) return invarg("TOS value is invalid\n", *v);
      r.tos = std::uint8_t(*n);
    } else if (matches(w, "from")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto p = prefix_or_exit(*v, r.family);
      if (!p) return fail(p.error());
      if (!r.family) r.family = std::uint8_t(p->addr.family());
      if (!p->any) r.src = p->addr;
      r.src_len = std::uint8_t(p->len < 0 ? (p->any ? 0 : int(p->addr.size() * 8)) : p->len);
    } else if (matches(w, "iif")) {
      auto v = val();
      if (!v) return fail(v.error());
      idev = *v;
    } else if (matches(w, "mark")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "invalid mark value");
      if (!n) return fail(n.error());
      mark = *n;
    } else if (matches(w, "oif") || w == "dev") {
      auto v = val();
      if (!v) return fail(v.error());
      odev = *v;
    } else if (matches(w, "vrf")) {
      // iproute2: the vrf is the output device.
      auto v = val();
      if (!v) return fail(v.error());
      auto is = name_is_vrf(c, *v);
      if (!is) return fail(is.error());
      if (!*is) return invarg("Invalid VRF\n", *v);
      odev = *v;
    } else if (matches(w, "notify")) {
      r.flags |= RTM_F_NOTIFY;
    } else if (matches(w, "uid")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "invalid UID\n");
      if (!n) return fail(n.error());
      r.uid = *n;
    } else if (matches(w, "fibmatch")) {
      r.flags |= RTM_F_FIB_MATCH;
    } else if (matches(w, "sport") || matches(w, "dport")) {
      const bool s = matches(w, "sport");
      auto v = val();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, s ? "invalid sport\n" : "invalid dport\n");
      if (!n || *n > 0xffff) return invarg(s ? "invalid sport\n" : "invalid dport\n", *v);
      (s ? r.sport : r.dport) = std::uint16_t(*n);
    } else if (matches(w, "ipproto")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "");
      std::optional<std::uint8_t> p;
      if (*v == "tcp")
        p = IPPROTO_TCP;
      else if (*v == "udp")
        p = IPPROTO_UDP;
      else if (*v == "icmp")
        p = IPPROTO_ICMP;
      else if (*v == "sctp")
        p = IPPROTO_SCTP;
      else if (*v == "ipv6-icmp")
        p = IPPROTO_ICMPV6;
      else if (n && *n < 256)
        p = std::uint8_t(*n);
      if (!p) return invarg("Invalid \"ipproto\" value\n", *v);
      r.ip_proto = *p;
    } else {
      if (w == "to") {
        auto v = val();
        if (!v) return fail(v.error());
        w = *v;
      }
      auto p = prefix_or_exit(w, r.family);
      if (!p) return fail(p.error());
      if (!r.family) r.family = std::uint8_t(p->addr.family());
      int full = int(p->addr.size() * 8);
      int len = p->len < 0 ? full : p->len;
      if (!p->any) r.dst = p->addr;
      if (len != full)
        std::fprintf(stderr,
                     "Warning: /%d as prefix is invalid, only /%d (or none) is supported.\n", len,
                     full);
      r.dst_len = std::uint8_t(full);
      address_found = true;
    }
  }
  if (!address_found) return die(1, "need at least a destination address");
  if (!idev.empty()) {
    auto idx = dev_index(c, idev);
    if (!idx) return fail(idx.error());
    r.iif = std::uint32_t(*idx);
  }
  if (!odev.empty()) {
    auto idx = dev_index(c, odev);
    if (!idx) return fail(idx.error());
    r.oif = std::uint32_t(*idx);
  }
  if (mark) r.mark = mark;
  if (!r.family) r.family = AF_INET;
  if (r.family == AF_INET) r.flags |= RTM_F_LOOKUP_TABLE;  // iproute2: IPv4 only
  wire::MessageBuilder b;
  auto e = wire::encode_route(b, {RTM_GETROUTE, NLM_F_REQUEST, c.client->next_seq(), 0}, r);
  if (!e) return die(2, "{}", e.error().message);
  c.out->open_array();
  IFCORE_TRY(c.client->talk(b, [&](const wire::Message& m) {
    auto rr = wire::decode_route(m);
    if (rr) print_route(c, m, *rr, RouteShown{});
  }));
  c.out->close();
  return ok();
}

}  // namespace

Result<void> do_route(Ctx& c, Args& a) {
  if (a.done()) return route_show(c, a);
  std::string cmd = a.take();
  if (matches(cmd, "add")) return route_modify(c, a, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL);
  if (matches(cmd, "change")) return route_modify(c, a, RTM_NEWROUTE, NLM_F_REPLACE);
  if (matches(cmd, "replace"))
    return route_modify(c, a, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE);
  if (matches(cmd, "prepend")) return route_modify(c, a, RTM_NEWROUTE, NLM_F_CREATE);
  if (matches(cmd, "append")) return route_modify(c, a, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_APPEND);
  if (matches(cmd, "delete")) return route_modify(c, a, RTM_DELROUTE, 0);
  if (matches(cmd, "show") || matches(cmd, "list")) return route_show(c, a);
  if (matches(cmd, "get")) return route_get(c, a);
  if (matches(cmd, "flush")) return route_flush(c, a);
  return die(255, "Command \"{}\" is unknown, try \"ip route help\".", cmd);
}

}  // namespace ifcore::cli
