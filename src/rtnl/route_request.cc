// rtnl/route_request.cc — an RTM_NEWROUTE / RTM_DELROUTE message read as the request
// ifcore/inet.h takes (Linux: rtm_to_fib_config, rtm_to_fib6_config, ip_metrics_convert).
#include <netinet/in.h>

#include <linux/icmpv6.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <map>
#include <string_view>

#include "rtnl/proto.h"

namespace ifcore::rtnl {

namespace {

// Linux: ip_metrics_convert: unknown types are refused, a few values are clamped, the
// algorithm must be one the system has (here the two Linux always builds in).
Result<inet::RouteMetrics> route_metrics(const std::vector<wire::RouteMetric>& in) {
  std::map<std::uint16_t, std::uint32_t> values;
  inet::RouteMetrics out;
  for (const wire::RouteMetric& x : in) {
    if (x.type == 0) continue;
    if (x.type > RTAX_MAX) return fail(EINVAL, "Invalid metric type");
    if (x.type == RTAX_CC_ALGO) {
      if (x.str != "reno" && x.str != "cubic")
        return fail(EINVAL, "Unknown tcp congestion algorithm");
      out.cc_algo = x.str;
      continue;
    }
    std::uint32_t v = x.value;
    if (x.type == RTAX_ADVMSS) v = std::min<std::uint32_t>(v, 65535 - 40);
    if (x.type == RTAX_MTU) v = std::min<std::uint32_t>(v, 65535 - 15);
    if (x.type == RTAX_HOPLIMIT) v = std::min<std::uint32_t>(v, 255);
    if (x.type == RTAX_FEATURES && (v & ~std::uint32_t{RTAX_FEATURE_MASK}))
      return fail(EINVAL, "Unknown flag set in feature mask in metrics attribute");
    values[x.type] = v;
  }
  for (auto [type, v] : values)
    if (v) out.values.emplace_back(type, v);
  return out;
}

}  // namespace

Result<inet::RouteRequest> route_request(const wire::RouteMessage& m, std::uint16_t flags,
                                         bool del) {
  // Linux: rtm_to_fib6_config refuses RTA_VIA; rtm_to_fib_config and fib_get_nhs take it
  // as the gateway (of either family), but not beside RTA_GATEWAY.
  if (m.has_via) return fail(EINVAL, "IPv6 does not support RTA_VIA attribute");
  constexpr std::string_view kGatewayAndVia =
      "Nexthop configuration can not contain both GATEWAY and VIA";
  if (m.gateway && m.via) return fail(EINVAL, kGatewayAndVia);
  for (const wire::RouteNexthop& hop : m.multipath)
    if (hop.gateway && hop.via && m.family == AF_INET) return fail(EINVAL, kGatewayAndVia);
  if (m.has_encap) return fail(EOPNOTSUPP, "encapsulation is not supported");
  inet::RouteRequest q;
  q.family = m.family;
  q.table = m.table_or_id();
  if (q.table == RT_TABLE_UNSPEC && !del) q.table = RT_TABLE_MAIN;
  if (m.dst) q.dst = *m.dst;
  q.dst_len = m.dst_len;
  q.tos = m.tos;
  q.gateway = m.gateway;
  // Linux: rtm_to_fib_config — an IPv4 gateway of 0.0.0.0 is no gateway.
  if (q.gateway && q.gateway->is_v4() && q.gateway->v4_host() == 0) q.gateway.reset();
  if (m.via && m.family == AF_INET) q.gateway = m.via;
  q.oif = m.oif ? static_cast<int>(*m.oif) : 0;
  q.priority = m.priority;
  q.prefsrc = m.prefsrc;
  q.flags = m.flags & RTNH_F_ONLINK;
  q.nhid = m.nh_id.value_or(0);
  q.src_len = m.src_len;
  if (m.src) q.src = *m.src;
  if (m.family == AF_INET6) {
    // Linux: rtm_to_fib6_config — a preference other than high or low is medium; an
    // infinite lifetime (0xffffffff) is none.
    if (m.pref && (*m.pref == ICMPV6_ROUTER_PREF_HIGH || *m.pref == ICMPV6_ROUTER_PREF_LOW))
      q.pref = *m.pref;
    if (m.expires && static_cast<std::uint32_t>(*m.expires) != 0xffffffffu)
      q.expires = static_cast<std::uint32_t>(*m.expires);
  }
  for (const wire::RouteNexthop& hop : m.multipath) {
    inet::NextHop nh;
    if (hop.gateway) nh.gateway = *hop.gateway;
    if (hop.via && m.family == AF_INET) nh.gateway = *hop.via;
    nh.oif = hop.ifindex;
    nh.weight = static_cast<std::uint8_t>(hop.hops + 1);
    nh.flags = hop.flags;
    q.nexthops.push_back(nh);
  }
  if (del) {
    // Linux: fib_table_delete matches protocol, scope and type only when given.
    if (m.protocol) q.protocol = m.protocol;
    if (m.scope != RT_SCOPE_NOWHERE && m.scope) q.scope = m.scope;
    if (m.type) q.type = m.type;
  } else {
    q.protocol = m.protocol;
    q.scope = m.scope;
    q.type = m.type ? m.type : std::uint8_t{RTN_UNICAST};
    auto metrics = route_metrics(m.metrics);
    if (!metrics) return fail(metrics.error());
    q.metrics = std::move(*metrics);
  }
  q.create = flags & NLM_F_CREATE;
  q.excl = flags & NLM_F_EXCL;
  q.replace = flags & NLM_F_REPLACE;
  q.append = flags & NLM_F_APPEND;
  return q;
}

}  // namespace ifcore::rtnl
