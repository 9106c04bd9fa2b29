// cli/route_print.cc — routes printed as `ip route` prints them (text and JSON): types,
// tables, protocols, scopes, flags, metrics and next hops.
#include "cli/route_impl.h"

namespace ifcore::cli {
namespace route {

// iproute2's metric names (mx_names), by RTAX_*.
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

}  // namespace route

using namespace route;

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
    std::string t = r.type < std::size(kRouteTypes) ? kRouteTypes[r.type] : std::to_string(r.type);
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

}  // namespace ifcore::cli
