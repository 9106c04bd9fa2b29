// rtnl/wire/route.cc — rtmsg + RTA_* <-> RouteMessage.
#include "rtnl/wire/route.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "rtnl/wire/field.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

Result<IpAddr> ip_of(const RawAttr& a, int family) {
  auto ip = IpAddr::from_bytes(family, a.data);
  if (!ip) return fail_at(a.offset, EINVAL, "attribute type {}: {}", a.type, ip.error().message);
  return ip;
}

// struct rtvia: a 2-byte family, then the address (Linux: fib_gw_from_via; no policy).
Result<IpAddr> via_of(const RawAttr& a) {
  if (a.data.size() < sizeof(rtvia)) return fail(EINVAL, "Invalid attribute length for RTA_VIA");
  std::uint16_t fam;
  std::memcpy(&fam, a.data.data(), sizeof(fam));
  const std::size_t alen = a.data.size() - sizeof(rtvia);
  if (fam == AF_INET && alen != 4) return fail(EINVAL, "Invalid IPv4 address in RTA_VIA");
  if (fam == AF_INET6 && alen != 16) return fail(EINVAL, "Invalid IPv6 address in RTA_VIA");
  if (fam != AF_INET && fam != AF_INET6)
    return fail(EINVAL, "Unsupported address family in RTA_VIA");
  return IpAddr::from_bytes(fam, a.data.subspan(sizeof(rtvia)));
}

void put_via(MessageBuilder& b, const IpAddr& ip) {
  std::uint8_t buf[sizeof(rtvia) + 16] = {};
  std::uint16_t fam = static_cast<std::uint16_t>(ip.family());
  std::memcpy(buf, &fam, sizeof(fam));
  std::memcpy(buf + sizeof(rtvia), ip.data(), ip.size());
  b.put_attr(RTA_VIA, buf, sizeof(rtvia) + ip.size());
}

void put_ip(MessageBuilder& b, std::uint16_t type, const std::optional<IpAddr>& ip) {
  if (ip) b.put_bytes(type, ip->bytes());
}

Result<void> decode_metrics(const RawAttr& a, RouteMessage& r) {
  auto inner = parse_nested(a);
  if (!inner) return fail(inner.error());
  for (const RawAttr& x : *inner) {
    RouteMetric m;
    m.type = x.type;
    if (x.type == RTAX_CC_ALGO) {
      auto s = x.string(15);  // TCP_CA_NAME_MAX - 1
      if (!s) return fail(s.error());
      m.str = std::move(*s);
    } else {
      auto v = x.u32();
      if (!v) return fail(v.error());
      m.value = *v;
    }
    r.metrics.push_back(std::move(m));
  }
  return ok();
}

Result<void> decode_multipath(const RawAttr& a, RouteMessage& r) {
  std::size_t off = 0;
  auto d = a.data;
  while (off < d.size()) {
    int at = a.offset + NLA_HDRLEN + static_cast<int>(off);
    std::size_t left = d.size() - off;
    if (left < sizeof(rtnexthop))
      return fail_at(at, EINVAL, "rtnexthop truncated ({} bytes left)", left);
    rtnexthop nh;
    std::memcpy(&nh, d.data() + off, sizeof(nh));
    if (nh.rtnh_len < sizeof(rtnexthop) || nh.rtnh_len > left)
      return fail_at(at, EINVAL, "rtnexthop length {} invalid ({} bytes left)", nh.rtnh_len, left);
    RouteNexthop hop;
    hop.flags = nh.rtnh_flags;
    hop.hops = nh.rtnh_hops;
    hop.ifindex = nh.rtnh_ifindex;
    std::size_t attrs_at = RTNH_ALIGN(sizeof(rtnexthop));
    auto attrs = parse_raw_attrs(d.subspan(off + attrs_at, nh.rtnh_len - attrs_at),
                                 at + static_cast<int>(attrs_at));
    if (!attrs) return fail(attrs.error());
    for (const RawAttr& x : *attrs) {
      if (x.type == RTA_GATEWAY) IFCORE_TRY(set_field(hop.gateway, ip_of(x, r.family)));
      // (Linux's IPv6 reads no RTA_VIA in a hop: kept when well formed, never refused.)
      if (x.type == RTA_VIA && r.family != AF_INET6) IFCORE_TRY(set_field(hop.via, via_of(x)));
      if (x.type == RTA_VIA && r.family == AF_INET6)
        if (auto v = via_of(x)) hop.via = *v;
    }
    r.multipath.push_back(std::move(hop));
    off += std::min<std::size_t>(RTNH_ALIGN(nh.rtnh_len), left);
  }
  return ok();
}

}  // namespace

Result<RouteMessage> decode_route(const Message& m) {
  RouteMessage r;
  auto p = m.payload();
  if (p.size() < sizeof(rtmsg)) {
    if (m.is_dump() && !p.empty()) {  // struct rtgenmsg
      r.family = p[0];
      return r;
    }
    // Linux: rtm_to_fib_config and rtm_to_fib6_config answer EINVAL alone.
    return fail_log_only(EINVAL, "rtmsg payload too short ({} bytes, need {})", p.size(),
                         sizeof(rtmsg));
  }
  rtmsg rtm;
  std::memcpy(&rtm, p.data(), sizeof(rtm));
  r.family = rtm.rtm_family;
  r.dst_len = rtm.rtm_dst_len;
  r.src_len = rtm.rtm_src_len;
  r.tos = rtm.rtm_tos;
  r.table = rtm.rtm_table;
  r.protocol = rtm.rtm_protocol;
  r.scope = rtm.rtm_scope;
  r.type = rtm.rtm_type;
  r.flags = rtm.rtm_flags;
  constexpr std::size_t start = NLMSG_ALIGN(sizeof(rtmsg));
  auto attrs = parse_raw_attrs(p.subspan(start), static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& x : *attrs) {
    switch (x.type) {
      case RTA_TABLE:
        IFCORE_TRY(set_field(r.table_id, x.u32()));
        break;
      case RTA_DST:
        IFCORE_TRY(set_field(r.dst, ip_of(x, r.family)));
        break;
      case RTA_SRC:
        IFCORE_TRY(set_field(r.src, ip_of(x, r.family)));
        break;
      case RTA_IIF:
        IFCORE_TRY(set_field(r.iif, x.u32()));
        break;
      case RTA_OIF:
        IFCORE_TRY(set_field(r.oif, x.u32()));
        break;
      case RTA_GATEWAY:
        IFCORE_TRY(set_field(r.gateway, ip_of(x, r.family)));
        break;
      case RTA_VIA:
        // IPv6 refuses any RTA_VIA unread (rtm_to_fib6_config).
        if (r.family == AF_INET6) {
          r.has_via = true;
          if (auto v = via_of(x)) r.via = *v;
        } else {
          IFCORE_TRY(set_field(r.via, via_of(x)));
        }
        break;
      case RTA_PRIORITY:
        IFCORE_TRY(set_field(r.priority, x.u32()));
        break;
      case RTA_PREFSRC:
        IFCORE_TRY(set_field(r.prefsrc, ip_of(x, r.family)));
        break;
      case RTA_METRICS:
        IFCORE_TRY(decode_metrics(x, r));
        break;
      case RTA_MULTIPATH:
        IFCORE_TRY(decode_multipath(x, r));
        break;
      case RTA_NH_ID:
        IFCORE_TRY(set_field(r.nh_id, x.u32()));
        break;
      case RTA_UID:
        IFCORE_TRY(set_field(r.uid, x.u32()));
        break;
      case RTA_MARK:
        IFCORE_TRY(set_field(r.mark, x.u32()));
        break;
      case RTA_IP_PROTO:
        IFCORE_TRY(set_field(r.ip_proto, x.u8()));
        break;
      case RTA_SPORT:
      case RTA_DPORT: {
        auto v = x.u16();
        if (!v) return fail(v.error());
        std::uint16_t host = static_cast<std::uint16_t>((*v >> 8) | (*v << 8));  // be16
        (x.type == RTA_SPORT ? r.sport : r.dport) = host;
        break;
      }
      case RTA_PREF:
        IFCORE_TRY(set_field(r.pref, x.u8()));
        break;
      case RTA_EXPIRES:
        if (x.data.size() == 4) {
          IFCORE_TRY(set_field(r.expires, x.u32()));
        } else {
          IFCORE_TRY(set_field(r.expires, x.u64()));
        }
        break;
      case RTA_CACHEINFO: {
        if (x.data.size() != sizeof(rta_cacheinfo))
          return fail_at(x.offset, EINVAL, "attribute type {}: invalid length {} (want {})", x.type,
                         x.data.size(), sizeof(rta_cacheinfo));
        rta_cacheinfo ci;
        std::memcpy(&ci, x.data.data(), sizeof(ci));
        r.cacheinfo = ci;
        break;
      }
      case RTA_ENCAP:
      case RTA_ENCAP_TYPE:
        r.has_encap = true;
        break;
      default:
        break;
    }
  }
  return r;
}

namespace {

void put_nexthops(MessageBuilder& b, const RouteMessage& r) {
  if (r.multipath.empty()) {
    put_ip(b, RTA_GATEWAY, r.gateway);
    if (r.via) put_via(b, *r.via);
    if (r.oif) b.put_u32(RTA_OIF, *r.oif);
    return;
  }
  // RTA_MULTIPATH: rtnexthop headers are raw payload; their rtnh_len is patched after the
  // hop's attributes are written, like a nest.
  auto mp = b.begin_nest(RTA_MULTIPATH);
  for (const RouteNexthop& hop : r.multipath) {
    std::size_t at = b.begin_nest(0);  // reserve 4 bytes, patched below
    std::int32_t ifindex = hop.ifindex;
    b.put_raw(&ifindex, sizeof(ifindex));
    put_ip(b, RTA_GATEWAY, hop.gateway);
    if (hop.via) put_via(b, *hop.via);
    b.end_nest(at);
    b.patch(at + offsetof(rtnexthop, rtnh_flags), &hop.flags, 1);
    b.patch(at + offsetof(rtnexthop, rtnh_hops), &hop.hops, 1);
  }
  b.end_nest(mp);
}

}  // namespace

Result<void> encode_route(MessageBuilder& b, const Header& h, const RouteMessage& r) {
  b.begin(h);
  rtmsg rtm{};
  rtm.rtm_family = r.family;
  rtm.rtm_dst_len = r.dst_len;
  rtm.rtm_src_len = r.src_len;
  rtm.rtm_tos = r.tos;
  rtm.rtm_table = r.table;
  rtm.rtm_protocol = r.protocol;
  rtm.rtm_scope = r.scope;
  rtm.rtm_type = r.type;
  rtm.rtm_flags = r.flags;
  b.put_struct(rtm);
  auto metrics = [&] {
    if (r.metrics.empty()) return;
    auto n = b.begin_nest(RTA_METRICS);
    for (const RouteMetric& m : r.metrics) {
      if (m.type == RTAX_CC_ALGO)
        b.put_string(m.type, m.str);
      else
        b.put_u32(m.type, m.value);
    }
    b.end_nest(n);
  };
  if (r.table_id) b.put_u32(RTA_TABLE, *r.table_id);
  put_ip(b, RTA_DST, r.dst);
  put_ip(b, RTA_SRC, r.src);
  if (r.family == AF_INET && r.uid) {
    // Linux: rt_fill_info (inet_rtm_getroute's reply).
    if (r.oif) b.put_u32(RTA_OIF, *r.oif);
    put_ip(b, RTA_PREFSRC, r.prefsrc);
    put_ip(b, RTA_GATEWAY, r.gateway);
    if (r.via) put_via(b, *r.via);  // an IPv6 gateway (rt_gw_family AF_INET6)
    metrics();
    if (r.mark) b.put_u32(RTA_MARK, *r.mark);
    if (!r.iif) b.put_u32(RTA_UID, *r.uid);  // an input route has none
    if (r.iif) b.put_u32(RTA_IIF, *r.iif);
    if (r.cacheinfo) b.put_attr(RTA_CACHEINFO, &*r.cacheinfo, sizeof(rta_cacheinfo));
    auto e = b.end();
    if (!e) return fail(e.error());
    return ok();
  }
  if (r.iif) b.put_u32(RTA_IIF, *r.iif);
  // A lookup's flow (requests only).
  if (r.mark) b.put_u32(RTA_MARK, *r.mark);
  if (r.ip_proto) b.put_u8(RTA_IP_PROTO, *r.ip_proto);
  if (r.sport) b.put_be16(RTA_SPORT, *r.sport);
  if (r.dport) b.put_be16(RTA_DPORT, *r.dport);
  if (r.family == AF_INET6) {
    put_ip(b, RTA_PREFSRC, r.prefsrc);
    metrics();
    if (r.priority) b.put_u32(RTA_PRIORITY, *r.priority);
  } else {
    if (r.priority) b.put_u32(RTA_PRIORITY, *r.priority);
    metrics();
    put_ip(b, RTA_PREFSRC, r.prefsrc);
  }
  if (r.nh_id) b.put_u32(RTA_NH_ID, *r.nh_id);
  put_nexthops(b, r);
  if (r.expires) {
    if (*r.expires <= UINT32_MAX)
      b.put_u32(RTA_EXPIRES, static_cast<std::uint32_t>(*r.expires));
    else
      b.put_u64(RTA_EXPIRES, *r.expires);
  }
  if (r.cacheinfo) b.put_attr(RTA_CACHEINFO, &*r.cacheinfo, sizeof(rta_cacheinfo));
  if (r.pref) b.put_u8(RTA_PREF, *r.pref);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

Result<void> check_route_get(const Message& m, int family, bool strict) {
  const bool v4 = family == AF_INET;
  auto p = m.payload();
  if (p.size() < sizeof(rtmsg))
    return fail(EINVAL, v4 ? "ipv4: Invalid header for route get request"
                           : "ipv6: Invalid header for get route request");
  if (!strict) return ok();
  rtmsg rtm;
  std::memcpy(&rtm, p.data(), sizeof(rtm));
  const unsigned full = v4 ? 32 : 128;
  const bool bad_len =
      (rtm.rtm_src_len && rtm.rtm_src_len != full) || (rtm.rtm_dst_len && rtm.rtm_dst_len != full);
  if (v4 && (bad_len || rtm.rtm_table || rtm.rtm_protocol || rtm.rtm_scope || rtm.rtm_type))
    return fail(EINVAL, "ipv4: Invalid values in header for route get request");
  if (!v4 && bad_len) return fail(EINVAL, "ipv6: Invalid prefix for get route request");
  if (v4 && (rtm.rtm_flags & ~(RTM_F_NOTIFY | RTM_F_LOOKUP_TABLE | RTM_F_FIB_MATCH)))
    return fail(EINVAL, "ipv4: Unsupported rtm_flags for route get request");
  if (!v4 && (rtm.rtm_flags & ~RTM_F_FIB_MATCH))
    return fail(EINVAL, "ipv6: Invalid flags for get route request");
  // Linux: nlmsg_parse_deprecated_strict — types up to RTA_MAX (RTA_FLOWLABEL, 31, in 6.18).
  constexpr std::uint16_t kRtaMax = 31;
  bool src = false, dst = false, other = false;
  auto left = walk_linux(p.subspan(NLMSG_ALIGN(sizeof(rtmsg))),
                         static_cast<int>(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(rtmsg))),
                         [&](const RawAttr& a) -> Result<void> {
                           if (a.type == 0 || a.type > kRtaMax)
                             return fail_at(a.offset, EINVAL, "Unknown attribute type");
                           src |= a.type == RTA_SRC;
                           dst |= a.type == RTA_DST;
                           switch (a.type) {
                             case RTA_IIF:
                             case RTA_OIF:
                             case RTA_SRC:
                             case RTA_DST:
                             case RTA_IP_PROTO:
                             case RTA_SPORT:
                             case RTA_DPORT:
                             case RTA_MARK:
                             case RTA_UID:
                               break;
                             default:
                               other = true;
                           }
                           return ok();
                         });
  if (!left) return fail(left.error());
  if (*left) return fail(EINVAL, "bytes leftover after parsing attributes");
  if ((src && !rtm.rtm_src_len) || (dst && !rtm.rtm_dst_len))
    return fail(EINVAL, v4 ? "ipv4: rtm_src_len and rtm_dst_len must be 32 for IPv4"
                           : "ipv6: rtm_src_len and rtm_dst_len must be 128 for IPv6");
  if (other)
    return fail(EINVAL, v4 ? "ipv4: Unsupported attribute in route get request"
                           : "ipv6: Unsupported attribute in get route request");
  return ok();
}

}  // namespace ifcore::wire
