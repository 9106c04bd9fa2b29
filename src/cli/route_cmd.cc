// cli/route_cmd.cc — `ifc route add|delete|show|get`: RTM_NEWROUTE / RTM_DELROUTE /
// RTM_GETROUTE, printed as `ip route` prints them.
#include <net/if.h>

#include <linux/in_route.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "cli/commands.h"
#include "cli/vrf.h"
#include "rtnl/wire/raw_attrs.h"
#include "rtnl/wire/route.h"

namespace ifcore::cli {
namespace {

const char* kTypes[] = {"none",      "unicast",     "local",    "broadcast", "anycast", "multicast",
                        "blackhole", "unreachable", "prohibit", "throw",     "nat",     "xresolve"};

// iproute2's metric names (mx_names), by RTAX_*.
struct MetricName {
  std::uint16_t type;
  const char* name;
  const char* what;  // iproute2's invarg text
};
const MetricName kMetrics[] = {
    {RTAX_MTU, "mtu", "\"mtu\" value is invalid\n"},
    {RTAX_WINDOW, "window", "\"window\" value is invalid\n"},
    {RTAX_RTT, "rtt", "\"rtt\" value is invalid\n"},
    {RTAX_RTTVAR, "rttvar", "\"rttvar\" value is invalid\n"},
    {RTAX_SSTHRESH, "ssthresh", "\"ssthresh\" value is invalid\n"},
    {RTAX_CWND, "cwnd", "\"cwnd\" value is invalid\n"},
    {RTAX_ADVMSS, "advmss", "\"mss\" value is invalid\n"},
    {RTAX_REORDERING, "reordering", "\"reordering\" value is invalid\n"},
    {RTAX_HOPLIMIT, "hoplimit", "\"hoplimit\" value is invalid\n"},
    {RTAX_INITCWND, "initcwnd", "\"initcwnd\" value is invalid\n"},
    {RTAX_FEATURES, "features", "\"features\" value is invalid\n"},
    {RTAX_RTO_MIN, "rto_min", "\"rto_min\" value is invalid\n"},
    {RTAX_INITRWND, "initrwnd", "\"initrwnd\" value is invalid\n"},
    {RTAX_QUICKACK, "quickack", "\"quickack\" value is invalid\n"},
    {RTAX_CC_ALGO, "congctl", ""},
    {RTAX_FASTOPEN_NO_COOKIE, "fastopen_no_cookie", "\"fastopen_no_cookie\" value is invalid\n"}};

const MetricName* metric_of(const std::string& w) {
  for (const auto& m : kMetrics)
    if (w == m.name) return &m;
  return nullptr;
}

// A metric's value as iproute2 reads it: times in ms (or with s/ms) for rtt (kept ×8),
// rttvar (×4) and rto_min; `ecn` for features; a name for congctl; a number otherwise.
Result<wire::RouteMetric> metric_value(const MetricName& m, const std::string& v) {
  wire::RouteMetric out{m.type, 0, {}};
  if (m.type == RTAX_CC_ALGO) {
    out.str = v;
    return out;
  }
  if (m.type == RTAX_FEATURES) {
    if (v != "ecn") return invarg("\"features\" value not valid\n", v);
    out.value = RTAX_FEATURE_ECN;
    return out;
  }
  if (m.type == RTAX_RTT || m.type == RTAX_RTTVAR || m.type == RTAX_RTO_MIN) {
    std::string num = v;
    double scale = 1;
    if (num.size() > 2 && num.compare(num.size() - 2, 2, "ms") == 0) {
      num.resize(num.size() - 2);
    } else if (num.size() > 1 && num.back() == 's') {
      num.pop_back();
      scale = 1000;
    }
    char* end = nullptr;
    double d = std::strtod(num.c_str(), &end);
    if (num.empty() || *end || d < 0) return invarg(m.what, v);
    std::uint32_t ms = std::uint32_t(d * scale);
    out.value = m.type == RTAX_RTT ? ms * 8 : m.type == RTAX_RTTVAR ? ms * 4 : ms;
    return out;
  }
  auto n = parse_u32(v, "");
  if (!n || (m.type == RTAX_HOPLIMIT && *n > 255)) return invarg(m.what, v);
  if (m.type == RTAX_QUICKACK && *n > 1) return invarg(m.what, v);
  out.value = *n;
  return out;
}

// iproute2's print_rta_metrics: every metric but the lock, by type, `lock` before a locked
// one's value; rtt and rttvar in ms (or s).
void print_metrics(Out& o, const std::vector<wire::RouteMetric>& metrics) {
  std::uint32_t lock = 0;
  for (const auto& m : metrics)
    if (m.type == RTAX_LOCK) lock = m.value;
  bool any = false;
  for (const auto& m : metrics) any = any || m.type != RTAX_LOCK;
  if (!any) return;
  o.open_array("metrics");
  o.open_object();
  for (const auto& m : kMetrics) {
    auto it = std::find_if(metrics.begin(), metrics.end(),
                           [&](const wire::RouteMetric& x) { return x.type == m.type; });
    if (it == metrics.end() && !(lock & (1u << m.type))) continue;
    std::uint32_t v = it == metrics.end() ? 0 : it->value;
    if (m.type == RTAX_HOPLIMIT && v == 0xffffffffu) continue;
    o.text(std::string(m.name) + " ");
    if (lock & (1u << m.type)) o.text("lock ");
    if (m.type == RTAX_CC_ALGO) {
      std::string algo = it == metrics.end() ? "" : it->str;
      o.kv("congestion", algo, algo + " ");
    } else if (m.type == RTAX_RTT || m.type == RTAX_RTTVAR || m.type == RTAX_RTO_MIN) {
      std::uint32_t ms = m.type == RTAX_RTT ? v / 8 : m.type == RTAX_RTTVAR ? v / 4 : v;
      o.jkv(m.name, ms);
      o.text(ms >= 1000 ? fmt::format("{}s ", ms / 1e3) : fmt::format("{}ms ", ms));
    } else if (m.type == RTAX_FEATURES) {
      Json f = Json::array();
      if (v & RTAX_FEATURE_ECN) f.push_back("ecn");
      o.kv("features", f, (v & RTAX_FEATURE_ECN) ? "ecn " : "");
    } else {
      o.kv(m.name, v, fmt::format("{} ", v));
    }
  }
  o.close();
  o.close();
}

std::string table_name(std::uint32_t t) {
  if (t == RT_TABLE_MAIN) return "main";
  if (t == RT_TABLE_LOCAL) return "local";
  if (t == RT_TABLE_DEFAULT) return "default";
  return std::to_string(t);
}

std::string proto_name(std::uint8_t p) {
  return rt_proto_name(p);
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

// iproute2's print_rta_via: a gateway of another family (an IPv4 route through an IPv6
// nexthop).
void print_via(Out& o, const IpAddr& via) {
  const char* family = via.family() == AF_INET6 ? "inet6" : "inet";
  o.open_object("via");
  o.jkv("family", family);
  o.jkv("host", via.to_string());
  o.close();
  o.text(fmt::format("via {} {} ", family, via.to_string()));
}

}  // namespace

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

void print_rt_flags(Out& o, std::uint32_t flags) {
  static constexpr std::pair<std::uint32_t, const char*> kFlags[] = {
      {RTNH_F_DEAD, "dead"},
      {RTNH_F_ONLINK, "onlink"},
      {RTNH_F_PERVASIVE, "pervasive"},
      {RTNH_F_OFFLOAD, "offload"},
      {RTNH_F_TRAP, "trap"},
      {RTM_F_NOTIFY, "notify"},
      {RTNH_F_LINKDOWN, "linkdown"},
      {RTNH_F_UNRESOLVED, "unresolved"},
      {RTM_F_OFFLOAD, "rt_offload"},
      {RTM_F_TRAP, "rt_trap"},
      {RTM_F_OFFLOAD_FAILED, "rt_offload_failed"}};
  Json names = Json::array();
  std::string text;
  for (auto [bit, name] : kFlags)
    if (flags & bit) names.push_back(name), text += std::string(name) + " ";
  o.kv("flags", names, text);
}

void print_route(Ctx& c, const wire::Message& msg, const wire::RouteMessage& r,
                 const RouteShown& shown) {
  const bool one_table = shown.one_table, one_dev = shown.one_dev;
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
    o.kv("from", s, "from " + s + " ");
  }
  if (r.nh_id) o.kv("nhid", *r.nh_id, fmt::format("nhid {} ", *r.nh_id));
  // iproute2: what the filter names whole is not printed (tos, via, dev, proto, scope,
  // src, metric: filter.*mask == -1 or a full-length prefix).
  if (r.tos && !shown.tos)
    o.kv("tos", fmt::format("{:#x}", r.tos), fmt::format("tos {:#x} ", r.tos));
  if (r.gateway && !shown.gateway)
    o.kv("gateway", r.gateway->to_string(), "via " + r.gateway->to_string() + " ");
  if (r.via) print_via(o, *r.via);
  // iproute2: a listing of one device does not name it (filter.oifmask).
  if (r.oif && !one_dev) {
    std::string d = c.client->ifname(int(*r.oif));
    o.kv("dev", d, "dev " + d + " ");
  }
  std::uint32_t table = r.table_or_id();
  // iproute2: a listing of one table does not name it.
  if (table && (table != RT_TABLE_MAIN || c.details) && !one_table)
    o.kv("table", table_name(table), "table " + table_name(table) + " ");
  // iproute2: a cached (looked-up) route has no protocol or scope of its own to show.
  const bool cloned = r.flags & RTM_F_CLONED;
  if (((r.protocol != RTPROT_BOOT && r.protocol != RTPROT_UNSPEC) || c.details) && !shown.proto &&
      !cloned)
    o.kv("protocol", proto_name(r.protocol), "proto " + proto_name(r.protocol) + " ");
  if ((r.scope != RT_SCOPE_UNIVERSE || c.details) && !shown.scope && !cloned)
    o.kv("scope", rt_scope_name(r.scope), "scope " + rt_scope_name(r.scope) + " ");
  if (r.prefsrc && !shown.prefsrc)
    o.kv("prefsrc", r.prefsrc->to_string(), "src " + r.prefsrc->to_string() + " ");
  if (r.priority && !shown.metric)
    o.kv("metric", *r.priority, fmt::format("metric {} ", *r.priority));
  print_rt_flags(o, r.flags);
  if (r.mark && *r.mark) {
    // iproute2: in hex from 16 on.
    o.kv("mark", *r.mark,
         *r.mark >= 16 ? fmt::format("mark {:#x} ", *r.mark) : fmt::format("mark {} ", *r.mark));
  }
  if (auto uid = raw_u32(msg, RTA_UID)) o.kv("uid", *uid, fmt::format("uid {} ", *uid));
  if (r.family == AF_INET && (r.flags & RTM_F_CLONED)) {
    // iproute2's print_cache_flags: the RTCF_* bits above the low 16.
    static const std::pair<std::uint32_t, const char*> kCache[] = {{RTCF_LOCAL, "local"},
                                                                   {RTCF_REJECT, "reject"},
                                                                   {RTCF_MULTICAST, "mc"},
                                                                   {RTCF_BROADCAST, "brd"},
                                                                   {RTCF_DNAT, "dst-nat"},
                                                                   {RTCF_SNAT, "src-nat"},
                                                                   {RTCF_MASQ, "masq"},
                                                                   {RTCF_DIRECTDST, "dst-direct"},
                                                                   {RTCF_DIRECTSRC, "src-direct"},
                                                                   {RTCF_REDIRECTED, "redirected"},
                                                                   {RTCF_DOREDIRECT, "redirect"},
                                                                   {RTCF_FAST, "fastroute"},
                                                                   {RTCF_NOTIFY, "notify"},
                                                                   {RTCF_TPROXY, "proxy"}};
    std::uint32_t cf = r.flags & ~0xffffu;
    o.open_array("cache");
    std::vector<std::string> names;
    for (auto [bit, name] : kCache)
      if (cf & bit) {
        o.push(name);
        names.push_back(name);
      }
    o.close();
    std::string text = "\n    cache ";
    for (std::size_t i = 0; i < names.size(); ++i)
      text += (i ? "," : "<") + names[i] + (i + 1 == names.size() ? "> " : "");
    o.text(text);
  }
  if (r.cacheinfo && (r.family == AF_INET || r.family == AF_INET6)) {
    // iproute2's print_rta_cacheinfo (clock ticks at USER_HZ 100).
    const rta_cacheinfo& ci = *r.cacheinfo;
    constexpr std::uint32_t kHz = 100;
    if (ci.rta_expires) {
      int secs = static_cast<std::int32_t>(ci.rta_expires) / static_cast<int>(kHz);
      o.kv("expires", secs, fmt::format("expires {}sec ", secs));
    }
    if (ci.rta_error) o.kv("error", ci.rta_error, fmt::format("error {} ", ci.rta_error));
    if (c.stats) {
      if (ci.rta_clntref) o.kv("users", ci.rta_clntref, fmt::format("users {} ", ci.rta_clntref));
      if (ci.rta_used) o.kv("used", ci.rta_used, fmt::format("used {} ", ci.rta_used));
      if (ci.rta_lastuse)
        o.kv("age", ci.rta_lastuse / kHz, fmt::format("age {}sec ", ci.rta_lastuse / kHz));
    }
  }
  print_metrics(o, r.metrics);
  if (r.iif) {
    std::string dev = c.client->ifname(static_cast<int>(*r.iif));
    o.kv("iif", dev, "iif " + dev + " ");
  }
  if (r.pref) {
    const char* p = *r.pref == 0   ? "medium"
                    : *r.pref == 1 ? "high"
                    : *r.pref == 3 ? "low"
                                   : "unknown";
    o.kv("pref", p, std::string("pref ") + p);
  }
  if (r.nh_id && c.details) print_nh_info(c, *r.nh_id);
  // iproute2's print_rta_multipath: last, one line per hop.
  if (!r.multipath.empty()) {
    o.open_array("nexthops");
    for (const auto& nh : r.multipath) {
      o.open_object();
      o.text("\n\tnexthop ");
      if (nh.gateway)
        o.kv("gateway", nh.gateway->to_string(), "via " + nh.gateway->to_string() + " ");
      if (nh.via) print_via(o, *nh.via);
      std::string dev = c.client->ifname(nh.ifindex);
      o.kv("dev", dev, "dev " + dev + " ");
      o.kv("weight", nh.hops + 1, fmt::format("weight {} ", nh.hops + 1));
      print_rt_flags(o, nh.flags);
      o.close();
    }
    o.close();
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
            if (*x == "inet" || *x == "inet6") {
              auto y = v();
              if (!y) return fail(y.error());
              x = y;
            }
            auto p = prefix_or_exit(*x, family);
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
      } else if (*v == "main") {
        f.table = RT_TABLE_MAIN;
      } else if (*v == "local") {
        f.table = RT_TABLE_LOCAL;
      } else if (*v == "default") {
        f.table = RT_TABLE_DEFAULT;
      } else {
        auto n = parse_u32(*v, "");
        if (!n) return invarg("table id value is invalid\n", *v);
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
      for (int t = 0; t < 12; ++t)
        if (*v == kTypes[t]) type = t;
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
  if (matches(cmd, "append")) return route_modify(c, a, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_APPEND);
  if (matches(cmd, "replace"))
    return route_modify(c, a, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE);
  if (matches(cmd, "delete")) return route_modify(c, a, RTM_DELROUTE, 0);
  if (matches(cmd, "show") || matches(cmd, "list")) return route_show(c, a);
  if (matches(cmd, "get")) return route_get(c, a);
  if (matches(cmd, "flush")) return route_flush(c, a);
  return die(255, "Command \"{}\" is unknown, try \"ip route help\".", cmd);
}

}  // namespace ifcore::cli
