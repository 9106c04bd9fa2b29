// rtnl/wire/netconf.cc — netconfmsg + NETCONFA_* <-> NetconfMessage.
#include "rtnl/wire/netconf.h"

#include <cerrno>
#include <cstring>

#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

constexpr std::size_t kHdr = NLMSG_ALIGN(sizeof(netconfmsg));  // 4

const char* prefix(int family) {
  return family == AF_INET6 ? "ipv6" : "ipv4";
}

// Linux: devconf_ipv4_policy / devconf_ipv6_policy — the types given a minimum length
// (sizeof(int)); the others are not checked.
bool in_policy(int family, std::uint16_t type) {
  switch (type) {
    case NETCONFA_IFINDEX:
    case NETCONFA_FORWARDING:
    case NETCONFA_PROXY_NEIGH:
    case NETCONFA_IGNORE_ROUTES_WITH_LINKDOWN:
      return true;
    case NETCONFA_RP_FILTER:
      return family == AF_INET;
    default:
      return false;
  }
}

std::int32_t s32_of(std::span<const std::uint8_t> d) {
  std::int32_t v;
  std::memcpy(&v, d.data(), sizeof(v));
  return v;
}

}  // namespace

Result<void> encode_netconf(MessageBuilder& b, const Header& h, const NetconfMessage& n) {
  b.begin(h);
  netconfmsg ncm{};
  ncm.ncm_family = n.family;
  b.put_struct(ncm);
  if (n.ifindex) b.put_s32(NETCONFA_IFINDEX, *n.ifindex);
  if (n.forwarding) b.put_s32(NETCONFA_FORWARDING, *n.forwarding);
  if (n.rp_filter) b.put_s32(NETCONFA_RP_FILTER, *n.rp_filter);
  if (n.mc_forwarding) b.put_s32(NETCONFA_MC_FORWARDING, *n.mc_forwarding);
  if (n.bc_forwarding) b.put_s32(NETCONFA_BC_FORWARDING, *n.bc_forwarding);
  if (n.proxy_neigh) b.put_s32(NETCONFA_PROXY_NEIGH, *n.proxy_neigh);
  if (n.ignore_routes_with_linkdown)
    b.put_s32(NETCONFA_IGNORE_ROUTES_WITH_LINKDOWN, *n.ignore_routes_with_linkdown);
  if (n.input) b.put_s32(NETCONFA_INPUT, *n.input);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

Result<NetconfMessage> decode_netconf(const Message& m) {
  auto p = m.payload();
  if (p.empty()) return fail(EINVAL, "netconfmsg payload too short (0 bytes, need 1)");
  NetconfMessage n;
  n.family = p[0];
  auto attrs =
      parse_raw_attrs(p.subspan(std::min(kHdr, p.size())), static_cast<int>(NLMSG_HDRLEN + kHdr));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& x : *attrs) {
    if (x.data.size() < 4) continue;
    std::int32_t v = s32_of(x.data);
    switch (x.type) {
      case NETCONFA_IFINDEX:
        n.ifindex = v;
        break;
      case NETCONFA_FORWARDING:
        n.forwarding = v;
        break;
      case NETCONFA_RP_FILTER:
        n.rp_filter = v;
        break;
      case NETCONFA_MC_FORWARDING:
        n.mc_forwarding = v;
        break;
      case NETCONFA_BC_FORWARDING:
        n.bc_forwarding = v;
        break;
      case NETCONFA_PROXY_NEIGH:
        n.proxy_neigh = v;
        break;
      case NETCONFA_IGNORE_ROUTES_WITH_LINKDOWN:
        n.ignore_routes_with_linkdown = v;
        break;
      case NETCONFA_INPUT:
        n.input = v;
        break;
      default:
        break;
    }
  }
  return n;
}

Result<NetconfMessage> decode_netconf_get(const Message& m, int family, bool strict) {
  auto p = m.payload();
  if (p.size() < sizeof(netconfmsg))
    return fail(EINVAL, "{}: Invalid header for netconf get request", prefix(family));
  NetconfMessage n;
  n.family = p[0];
  // Linux: __nla_validate_parse over nlmsg_attrlen (negative, as for a 1-byte payload:
  // nothing); the deprecated parses stop at a malformed attribute.
  std::span<const std::uint8_t> rest = p.size() > kHdr ? p.subspan(kHdr) : p.subspan(p.size());
  bool other = false;
  auto left = walk_linux(rest, static_cast<int>(NLMSG_HDRLEN + kHdr),
                         [&](const RawAttr& a) -> Result<void> {
                           if (a.type == 0 || a.type > kNetconfaMax) {
                             if (strict) return fail_at(a.offset, EINVAL, "Unknown attribute type");
                             return ok();
                           }
                           if (in_policy(family, a.type) && a.data.size() < sizeof(std::int32_t))
                             return fail_at(a.offset, ERANGE, "{}", kPolicyFailed);
                           if (a.type == NETCONFA_IFINDEX)
                             n.ifindex = s32_of(a.data);
                           else
                             other = true;
                           return ok();
                         });
  if (!left) return fail(left.error());
  if (*left) {
    if (strict) return fail(EINVAL, "bytes leftover after parsing attributes");
    n.leftover = true;
  }
  if (strict && other)
    return fail(EINVAL, "{}: Unsupported attribute in netconf get request", prefix(family));
  return n;
}

Result<void> check_netconf_dump(const Message& m, int family) {
  auto p = m.payload();
  if (p.size() < sizeof(netconfmsg))
    return fail(EINVAL, "{}: Invalid header for netconf dump request", prefix(family));
  // Linux: nlmsg_attrlen(nlh, sizeof(*ncm)) — the bytes past the padded header, negative
  // for a 1-3 byte payload, and neither is allowed.
  if (p.size() != kHdr)
    return fail(EINVAL, "{}: Invalid data after header in netconf dump request", prefix(family));
  return ok();
}

}  // namespace ifcore::wire
