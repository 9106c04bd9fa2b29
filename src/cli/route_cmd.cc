// cli/route_cmd.cc — `ifc route add|delete|show|get`: RTM_NEWROUTE / RTM_DELROUTE /
// RTM_GETROUTE, printed as `ip route` prints them.
#include <net/if.h>

#include <linux/rtnetlink.h>

#include <functional>

#include "cli/commands.h"
#include "rtnl/wire/raw_attrs.h"
#include "rtnl/wire/route.h"

namespace ifcore::cli {
namespace {

const char* kTypes[] = {"none",      "unicast",     "local",    "broadcast", "anycast", "multicast",
                        "blackhole", "unreachable", "prohibit", "throw",     "nat",     "xresolve"};

std::string table_name(std::uint32_t t) {
  if (t == RT_TABLE_MAIN) return "main";
  if (t == RT_TABLE_LOCAL) return "local";
  if (t == RT_TABLE_DEFAULT) return "default";
  return std::to_string(t);
}

std::string proto_name(std::uint8_t p) {
  return rt_proto_name(p);
}

std::string rt_scope_name(std::uint8_t s) {
  switch (s) {
    case RT_SCOPE_UNIVERSE:
      return "global";
    case RT_SCOPE_SITE:
      return "site";
    case RT_SCOPE_LINK:
      return "link";
    case RT_SCOPE_HOST:
      return "host";
    case RT_SCOPE_NOWHERE:
      return "nowhere";
    default:
      return std::to_string(s);
  }
}

std::optional<std::uint32_t> raw_u32(const wire::Message& m, std::uint16_t type) {
  auto p = m.payload();
  if (p.size() < sizeof(rtmsg)) return std::nullopt;
  auto attrs = wire::parse_raw_attrs(p.subspan(sizeof(rtmsg)), int(NLMSG_HDRLEN + sizeof(rtmsg)));
  if (!attrs) return std::nullopt;
  const auto* a = wire::find_raw(*attrs, type);
  if (!a) return std::nullopt;
  auto v = a->u32();
  return v ? std::optional<std::uint32_t>(*v) : std::nullopt;
}

Result<void> finish(wire::MessageBuilder& b) {
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  return ok();
}

}  // namespace

void print_route(Ctx& c, const wire::Message& msg, const wire::RouteMessage& r, bool one_table,
                 bool one_dev) {
  Out& o = *c.out;
  o.open_object();
  if (msg.hdr.nlmsg_type == RTM_DELROUTE) o.kv("deleted", true, "Deleted ");
  if (r.type != RTN_UNICAST || c.details) {
    std::string t = r.type < 12 ? kTypes[r.type] : std::to_string(r.type);
    o.kv("type", t, t + " ");
  }
  int full = r.family == AF_INET6 ? 128 : 32;
  if (r.dst) {
    std::string d = r.dst->to_string();
    if (r.dst_len != full) d += "/" + std::to_string(r.dst_len);
    o.kv("dst", d, d + " ");
  } else if (r.dst_len) {
    o.kv("dst", fmt::format("0/{}", r.dst_len), fmt::format("0/{} ", r.dst_len));
  } else {
    o.kv("dst", "default", "default ");
  }
  if (r.src) {
    std::string s = r.src->to_string() + (r.src_len != full ? "/" + std::to_string(r.src_len) : "");
    o.kv("src", s, "from " + s + " ");
  }
  if (r.gateway) o.kv("gateway", r.gateway->to_string(), "via " + r.gateway->to_string() + " ");
  // iproute2: a listing of one device does not name it (filter.oifmask).
  if (r.oif && !one_dev) {
    std::string d = c.client->ifname(int(*r.oif));
    o.kv("dev", d, "dev " + d + " ");
  }
  std::uint32_t table = r.table_or_id();
  // iproute2: a listing of one table does not name it.
  if (table != RT_TABLE_MAIN && !one_table)
    o.kv("table", table_name(table), "table " + table_name(table) + " ");
  if ((r.protocol != RTPROT_BOOT && r.protocol != RTPROT_UNSPEC) || c.details)
    o.kv("protocol", proto_name(r.protocol), "proto " + proto_name(r.protocol) + " ");
  if (r.scope != RT_SCOPE_UNIVERSE || c.details)
    o.kv("scope", rt_scope_name(r.scope), "scope " + rt_scope_name(r.scope) + " ");
  if (r.prefsrc) o.kv("prefsrc", r.prefsrc->to_string(), "src " + r.prefsrc->to_string() + " ");
  if (r.priority) o.kv("metric", *r.priority, fmt::format("metric {} ", *r.priority));
  Json flags = Json::array();
  std::string tf;
  static const std::pair<std::uint32_t, const char*> kFlags[] = {
      {RTNH_F_DEAD, "dead"},    {RTNH_F_ONLINK, "onlink"},     {RTNH_F_PERVASIVE, "pervasive"},
      {RTM_F_NOTIFY, "notify"}, {RTNH_F_LINKDOWN, "linkdown"}, {RTNH_F_UNRESOLVED, "unresolved"}};
  for (auto [bit, name] : kFlags)
    if (r.flags & bit) flags.push_back(name), tf += std::string(name) + " ";
  o.kv("flags", flags, tf);
  for (const auto& m : r.metrics)
    if (m.type == RTAX_MTU) o.kv("mtu", m.value, fmt::format("mtu {} ", m.value));
  if (auto uid = raw_u32(msg, RTA_UID)) o.kv("uid", *uid, fmt::format("uid {} ", *uid));
  for (const auto& nh : r.multipath) {
    o.text("\n\tnexthop ");
    if (nh.gateway) o.text("via " + nh.gateway->to_string() + " ");
    if (nh.ifindex) o.text("dev " + c.client->ifname(nh.ifindex) + " ");
    o.text(fmt::format("weight {} ", nh.hops + 1));
  }
  if (r.flags & RTM_F_CLONED) {
    o.open_array("cache");
    o.close();
    o.text("\n    cache ");
  }
  if (r.pref) {
    const char* p = *r.pref == 0   ? "medium"
                    : *r.pref == 1 ? "high"
                    : *r.pref == 3 ? "low"
                                   : "unknown";
    o.kv("pref", p, std::string("pref ") + p);
  }
  o.text("\n");
  o.close();
}

namespace {

struct RouteArgs {
  wire::RouteMessage r;
  bool have_dst = false;
};

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
  bool have_dst = false, have_scope = false;
  int family = c.family;
  while (!a.done()) {
    std::string w = a.take();
    auto val = [&]() { return a.value(); };
    if (w == "via") {
      auto v = val();
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
      auto v = val();
      if (!v) return fail(v.error());
      std::uint32_t t = 0;
      if (*v == "main")
        t = RT_TABLE_MAIN;
      else if (*v == "local")
        t = RT_TABLE_LOCAL;
      else if (*v == "default")
        t = RT_TABLE_DEFAULT;
      if (!t) {
        auto n = parse_u32(*v, "\"table\" value is invalid\n");
        if (!n) return fail(n.error());
        t = *n;
      }
      if (t < 256)
        r.table = std::uint8_t(t);
      else
        r.table = RT_TABLE_UNSPEC, r.table_id = t;
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
    } else if (w == "mtu") {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "\"mtu\" value is invalid\n");
      if (!n) return fail(n.error());
      r.metrics.push_back({RTAX_MTU, *n, {}});
    } else if (w == "onlink") {
      r.flags |= RTNH_F_ONLINK;
    } else {
      bool typed = false;
      for (std::uint8_t t = 1; t < 12; ++t)
        if (w == kTypes[t]) {
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
  if (!family) family = r.gateway ? r.gateway->family() : AF_INET;
  r.family = std::uint8_t(family);
  if (!del && !have_scope) {
    if (r.type == RTN_LOCAL)
      r.scope = RT_SCOPE_HOST;
    else if (r.type == RTN_UNICAST && !r.gateway && family == AF_INET && !(r.flags & RTNH_F_ONLINK))
      r.scope = RT_SCOPE_LINK;
  }
  if (r.table_id == std::nullopt && r.table != RT_TABLE_MAIN) r.table_id = r.table;
  wire::MessageBuilder b;
  auto e = wire::encode_route(
      b, {type, std::uint16_t(NLM_F_REQUEST | flags), c.client->next_seq(), 0}, r);
  if (!e) return die(2, "{}", e.error().message);
  return c.client->talk(b);
}

// What `route show` and `route flush` select: a table (main unless named), a device, and
// for flush an exact prefix.
struct RouteFilter {
  std::optional<std::uint32_t> table = RT_TABLE_MAIN;
  int oif = 0;
  std::optional<Prefix> dst;
  int family = AF_INET;
  bool match(const wire::RouteMessage& r) const {
    if (family != AF_UNSPEC && r.family != family) return false;
    if (table && r.table_or_id() != *table) return false;
    if (r.flags & RTM_F_CLONED) return false;
    if (oif && r.oif.value_or(0) != std::uint32_t(oif)) return false;
    if (dst) {
      int len = dst->len < 0 ? int(dst->addr.size() * 8) : dst->len;
      if (r.dst_len != len) return false;
      if (r.family != dst->addr.family()) return false;
      if (len > 0 && !(r.dst && r.dst->masked(len) == dst->addr.masked(len))) return false;
    }
    return true;
  }
};

Result<RouteFilter> parse_route_filter(Ctx& c, Args& a, bool flush) {
  RouteFilter f;
  while (!a.done()) {
    std::string w = a.take();
    // iproute2: `table` by any prefix of it (`ip r s t all`), dev and oif in full.
    bool table = matches(w, "table");
    if (table || w == "dev" || w == "oif") {
      auto v = a.value();
      if (!v) return fail(v.error());
      if (!table) {
        auto idx = dev_index(c, *v);
        if (!idx) return fail(idx.error());
        f.oif = *idx;
      } else if (*v == "all") {
        f.table.reset();
      } else if (*v == "main") {
        f.table = RT_TABLE_MAIN;
      } else if (*v == "local") {
        f.table = RT_TABLE_LOCAL;
      } else {
        auto n = parse_u32(*v, "table id value is invalid\n");
        if (!n) return fail(n.error());
        f.table = *n;
      }
    } else if (flush) {
      // iproute2: a bare word is the prefix to flush (get_prefix: exit(1) if it is none).
      auto p = prefix_or_exit(w, c.family);
      if (!p) return fail(p.error());
      f.dst = *p;
    } else {
      auto v = a.value();
      if (!v) return fail(v.error());
      return die(255, "Error: either \"to\" is duplicate, or \"{}\" is a garbage.", w);
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
    if (r && f.match(*r)) each(m, *r);
  });
}

Result<void> route_show(Ctx& c, Args& a) {
  auto f = parse_route_filter(c, a, false);
  if (!f) return fail(f.error());
  c.out->open_array();
  IFCORE_TRY(dump_routes(c, *f, [&](const wire::Message& m, const wire::RouteMessage& r) {
    print_route(c, m, r, f->table.has_value(), f->oif != 0);
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
  std::optional<IpAddr> dst;
  int oif = 0;
  while (!a.done()) {
    std::string w = a.take();
    if (w == "oif" || w == "dev") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto idx = dev_index(c, *v);
      if (!idx) return fail(idx.error());
      oif = *idx;
      continue;
    }
    if (w == "to") {
      auto v = a.value();
      if (!v) return fail(v.error());
      w = *v;
    }
    auto p = parse_prefix(w, c.family, "invalid destination");
    if (!p) return fail(p.error());
    dst = p->addr;
  }
  if (!dst) return die(1, "need at least a destination address");
  wire::RouteMessage r;
  r.family = std::uint8_t(dst->family());
  r.dst = *dst;
  r.dst_len = std::uint8_t(dst->size() * 8);
  if (oif) r.oif = std::uint32_t(oif);
  wire::MessageBuilder b;
  auto e = wire::encode_route(b, {RTM_GETROUTE, NLM_F_REQUEST, c.client->next_seq(), 0}, r);
  if (!e) return die(2, "{}", e.error().message);
  c.out->open_array();
  IFCORE_TRY(c.client->talk(b, [&](const wire::Message& m) {
    auto rr = wire::decode_route(m);
    if (rr) print_route(c, m, *rr, false, false);
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
  if (matches(cmd, "delete")) return route_modify(c, a, RTM_DELROUTE, 0);
  if (matches(cmd, "show") || matches(cmd, "list")) return route_show(c, a);
  if (matches(cmd, "get")) return route_get(c, a);
  if (matches(cmd, "flush")) return route_flush(c, a);
  return die(255, "Command \"{}\" is unknown, try \"ip route help\".", cmd);
}

}  // namespace ifcore::cli
