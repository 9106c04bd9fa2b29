// rtnl/wire/addrlabel.cc — ifaddrlblmsg + IFAL_* <-> AddrLabelMessage.
#include "rtnl/wire/addrlabel.h"

#include <cerrno>
#include <cstring>

#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

constexpr std::size_t kHdr = NLMSG_ALIGN(sizeof(ifaddrlblmsg));  // 12

AddrLabelMessage header_of(std::span<const std::uint8_t> p) {
  ifaddrlblmsg h;
  std::memcpy(&h, p.data(), sizeof(h));
  AddrLabelMessage m;
  m.family = h.ifal_family;
  m.reserved = h.__ifal_reserved;
  m.prefix_len = h.ifal_prefixlen;
  m.flags = h.ifal_flags;
  m.ifindex = h.ifal_index;
  m.seq = h.ifal_seq;
  return m;
}

// Linux: ifal_policy — NLA_UNSPEC entries with a minimum length.
std::size_t min_len(std::uint16_t type) {
  return type == IFAL_ADDRESS ? 16 : type == IFAL_LABEL ? 4 : 0;
}

void take(AddrLabelMessage& m, std::uint16_t type, std::span<const std::uint8_t> data) {
  if (type == IFAL_ADDRESS) {
    std::array<std::uint8_t, 16> a;
    std::memcpy(a.data(), data.data(), a.size());
    m.address = a;
  } else if (type == IFAL_LABEL) {
    std::uint32_t v;
    std::memcpy(&v, data.data(), sizeof(v));
    m.label = v;
  }
}

}  // namespace

Result<void> encode_addrlabel(MessageBuilder& b, const Header& h, const AddrLabelMessage& m) {
  b.begin(h);
  ifaddrlblmsg ifal{};
  ifal.ifal_family = m.family;
  ifal.ifal_prefixlen = m.prefix_len;
  ifal.ifal_flags = m.flags;
  ifal.ifal_index = m.ifindex;
  ifal.ifal_seq = m.seq;
  b.put_struct(ifal);
  if (m.address) b.put_attr(IFAL_ADDRESS, m.address->data(), m.address->size());
  if (m.label) b.put_u32(IFAL_LABEL, *m.label);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

Result<AddrLabelMessage> decode_addrlabel(const Message& msg) {
  auto p = msg.payload();
  if (p.size() < sizeof(ifaddrlblmsg))
    return fail(EINVAL, "ifaddrlblmsg payload too short ({} bytes, need {})", p.size(),
                sizeof(ifaddrlblmsg));
  AddrLabelMessage m = header_of(p);
  auto attrs = parse_raw_attrs(p.subspan(kHdr), static_cast<int>(NLMSG_HDRLEN + kHdr));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& x : *attrs)
    if (x.data.size() >= min_len(x.type)) take(m, x.type, x.data);
  return m;
}

Result<AddrLabelMessage> decode_addrlabel_request(const Message& msg, bool get, bool strict) {
  auto p = msg.payload();
  if (p.size() < sizeof(ifaddrlblmsg)) {
    if (get) return fail(EINVAL, "ipv6: Invalid header for addrlabel get request");
    return fail(EINVAL, "Invalid header length");
  }
  AddrLabelMessage m = header_of(p);
  if (strict && (m.reserved || m.flags || m.seq))
    return fail(EINVAL, "ipv6: Invalid values in header for addrlabel get request");
  // Linux: __nla_validate_parse — each attribute's type (strict) and its policy's length.
  auto left = walk_linux(p.subspan(kHdr), static_cast<int>(NLMSG_HDRLEN + kHdr),
                         [&](const RawAttr& a) -> Result<void> {
                           if (a.type == 0 || a.type > IFAL_MAX) {
                             if (strict) return fail_at(a.offset, EINVAL, "Unknown attribute type");
                             return ok();
                           }
                           if (a.data.size() < min_len(a.type))
                             return fail_at(a.offset, ERANGE, "{}", kPolicyFailed);
                           take(m, a.type, a.data);
                           return ok();
                         });
  if (!left) return fail(left.error());
  if (*left) {
    if (strict) return fail(EINVAL, "bytes leftover after parsing attributes");
    m.leftover = true;
  }
  if (strict && m.label)
    return fail(EINVAL, "ipv6: Unsupported attribute in addrlabel get request");
  return m;
}

Result<void> check_addrlabel_dump(const Message& msg) {
  auto p = msg.payload();
  if (p.size() < sizeof(ifaddrlblmsg))
    return fail(EINVAL, "ipv6: Invalid header for address label dump request");
  AddrLabelMessage m = header_of(p);
  if (m.reserved || m.prefix_len || m.flags || m.ifindex || m.seq)
    return fail(EINVAL, "ipv6: Invalid values in header for address label dump request");
  if (p.size() > kHdr)
    return fail(EINVAL, "ipv6: Invalid data after header for address label dump request");
  return ok();
}

}  // namespace ifcore::wire
