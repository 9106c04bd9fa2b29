// rtnl/wire/address.cc — ifaddrmsg + IFA_* <-> AddrMessage.
#include "rtnl/wire/address.h"

#include <sys/socket.h>

#include <cerrno>
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

void put_ip(MessageBuilder& b, std::uint16_t type, const std::optional<IpAddr>& ip) {
  if (ip) b.put_bytes(type, ip->bytes());
}

}  // namespace

Result<AddrMessage> decode_addr(const Message& m) {
  AddrMessage a;
  auto p = m.payload();
  if (p.size() < sizeof(ifaddrmsg)) {
    if (m.is_dump() && !p.empty()) {  // struct rtgenmsg
      a.family = p[0];
      return a;
    }
    return fail(EINVAL, "Invalid header length");  // Linux: __nlmsg_parse
  }
  ifaddrmsg ifa;
  std::memcpy(&ifa, p.data(), sizeof(ifa));
  a.family = ifa.ifa_family;
  a.prefixlen = ifa.ifa_prefixlen;
  a.flags = ifa.ifa_flags;
  a.scope = ifa.ifa_scope;
  a.ifindex = ifa.ifa_index;
  constexpr std::size_t start = NLMSG_ALIGN(sizeof(ifaddrmsg));
  auto attrs = parse_raw_attrs(p.subspan(start), static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& x : *attrs) {
    switch (x.type) {
      case IFA_ADDRESS:
        IFCORE_TRY(set_field(a.address, ip_of(x, a.family)));
        break;
      case IFA_LOCAL:
        IFCORE_TRY(set_field(a.local, ip_of(x, a.family)));
        break;
      case IFA_BROADCAST:
        IFCORE_TRY(set_field(a.broadcast, ip_of(x, a.family)));
        break;
      case IFA_ANYCAST:
        IFCORE_TRY(set_field(a.anycast, ip_of(x, a.family)));
        break;
      case IFA_MULTICAST:
        IFCORE_TRY(set_field(a.multicast, ip_of(x, a.family)));
        break;
      case IFA_LABEL:
        IFCORE_TRY(set_field(a.label, x.string(IFNAMSIZ - 1)));
        break;
      case IFA_FLAGS:
        IFCORE_TRY(set_field(a.flags32, x.u32()));
        break;
      case IFA_RT_PRIORITY:
        IFCORE_TRY(set_field(a.rt_priority, x.u32()));
        break;
      case IFA_PROTO:
        IFCORE_TRY(set_field(a.proto, x.u8()));
        break;
      case IFA_CACHEINFO: {
        if (x.data.size() != sizeof(ifa_cacheinfo))
          return fail_at(x.offset, EINVAL, "attribute type {}: invalid length {} (want {})", x.type,
                         x.data.size(), sizeof(ifa_cacheinfo));
        ifa_cacheinfo ci;
        std::memcpy(&ci, x.data.data(), sizeof(ci));
        a.cacheinfo = ci;
        break;
      }
      default:
        break;
    }
  }
  return a;
}

void encode_addr_body(MessageBuilder& b, const AddrMessage& a) {
  ifaddrmsg ifa{};
  ifa.ifa_family = a.family;
  ifa.ifa_prefixlen = a.prefixlen;
  ifa.ifa_flags = a.flags;
  ifa.ifa_scope = a.scope;
  ifa.ifa_index = a.ifindex;
  b.put_struct(ifa);
  auto cacheinfo = [&] {
    if (a.cacheinfo) b.put_attr(IFA_CACHEINFO, &*a.cacheinfo, sizeof(ifa_cacheinfo));
  };
  if (a.family == AF_INET6) {
    put_ip(b, IFA_LOCAL, a.local);
    put_ip(b, IFA_ADDRESS, a.address);
    put_ip(b, IFA_ANYCAST, a.anycast);
    put_ip(b, IFA_MULTICAST, a.multicast);
    if (a.rt_priority) b.put_u32(IFA_RT_PRIORITY, *a.rt_priority);
    cacheinfo();
    if (a.flags32) b.put_u32(IFA_FLAGS, *a.flags32);
    if (a.proto) b.put_u8(IFA_PROTO, *a.proto);
  } else {
    put_ip(b, IFA_ADDRESS, a.address);
    put_ip(b, IFA_LOCAL, a.local);
    put_ip(b, IFA_BROADCAST, a.broadcast);
    put_ip(b, IFA_ANYCAST, a.anycast);
    put_ip(b, IFA_MULTICAST, a.multicast);
    if (a.label) b.put_string(IFA_LABEL, *a.label);
    if (a.proto) b.put_u8(IFA_PROTO, *a.proto);
    if (a.flags32) b.put_u32(IFA_FLAGS, *a.flags32);
    if (a.rt_priority) b.put_u32(IFA_RT_PRIORITY, *a.rt_priority);
    cacheinfo();
  }
}

Result<void> encode_addr(MessageBuilder& b, const Header& h, const AddrMessage& a) {
  b.begin(h);
  encode_addr_body(b, a);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

}  // namespace ifcore::wire
