// cli/link_vxlan.cc — `type vxlan ...` of `link add` / `link set` turned into
// IFLA_VXLAN_* attributes, with iproute2's words, defaults and errors.
#include <arpa/inet.h>
#include <net/if.h>

#include <linux/if_link.h>

#include <algorithm>
#include <cstring>

#include "cli/commands.h"
#include "cli/link_build.h"
#include "rtnl/wire/link.h"

namespace ifcore::cli {

namespace {

// ip 6.1's vxlan usage, printed after an unknown word and for `help`.
constexpr const char* kVxlanUsage =
    "Usage: ... vxlan id VNI\n"
    "\t\t[ { group | remote } IP_ADDRESS ]\n"
    "\t\t[ local ADDR ]\n"
    "\t\t[ ttl TTL ]\n"
    "\t\t[ tos TOS ]\n"
    "\t\t[ df DF ]\n"
    "\t\t[ flowlabel LABEL ]\n"
    "\t\t[ dev PHYS_DEV ]\n"
    "\t\t[ dstport PORT ]\n"
    "\t\t[ srcport MIN MAX ]\n"
    "\t\t[ [no]learning ]\n"
    "\t\t[ [no]proxy ]\n"
    "\t\t[ [no]rsc ]\n"
    "\t\t[ [no]l2miss ]\n"
    "\t\t[ [no]l3miss ]\n"
    "\t\t[ ageing SECONDS ]\n"
    "\t\t[ maxaddress NUMBER ]\n"
    "\t\t[ [no]udpcsum ]\n"
    "\t\t[ [no]udp6zerocsumtx ]\n"
    "\t\t[ [no]udp6zerocsumrx ]\n"
    "\t\t[ [no]remcsumtx ] [ [no]remcsumrx ]\n"
    "\t\t[ [no]external ] [ gbp ] [ gpe ]\n"
    "\t\t[ [no]vnifilter ]\n"
    "\n"
    "Where:\tVNI\t:= 0-16777215\n"
    "\tADDR\t:= { IP_ADDRESS | any }\n"
    "\tTOS\t:= { NUMBER | inherit }\n"
    "\tTTL\t:= { 1..255 | auto | inherit }\n"
    "\tDF\t:= { unset | set | inherit }\n"
    "\tLABEL := 0-1048575";

// An address word as ip reads it for vxlan: "any"/"default"/"all" are "unspecified" (the
// zero address is not), a family already chosen by the other address must be kept.
struct VxAddr {
  std::optional<IpAddr> ip;
  bool unspec = false;
  bool multi = false;
  bool inet_not_multi() const { return ip && !unspec && !multi; }
  bool inet_multi() const { return ip && !unspec && multi; }
};

Result<VxAddr> vx_addr(const std::string& s, int family) {
  VxAddr r;
  if (s == "any" || s == "default" || s == "all") {
    r.unspec = true;
    return r;
  }
  auto ip = IpAddr::parse(s);
  if (!ip || (family && ip->family() != family))
    return die(1, "Error: {} address is expected rather than \"{}\".",
               family == AF_INET    ? "inet"
               : family == AF_INET6 ? "inet6"
                                    : "any valid",
               s);
  r.ip = *ip;
  auto b = ip->bytes();
  r.multi = ip->is_v4() ? (b[0] & 0xf0) == 0xe0 : b[0] == 0xff;
  return r;
}

}  // namespace

// iproute2's vxlan options (iplink_vxlan.c's parser): every word checked for a second use,
// the addresses kept to the end so that group/remote/local agree on a family, the VNI,
// learning and the destination port added last; `set_op` (a change, no NLM_F_CREATE) sends
// only what was given. The kernel's semantics are vxlan_nl2conf's (drivers/net/vxlan).
Result<void> parse_vxlan(Ctx& c, wire::MessageBuilder& b, Args& a, bool set_op) {
  auto data = b.begin_nest(IFLA_INFO_DATA);
  std::uint64_t seen = 0;
  // iproute2's check_duparg: the second word for the same attribute is an error.
  auto once = [&](int type, const std::string& key, const std::string& arg) -> Result<void> {
    if (seen & (std::uint64_t(1) << type)) return duparg(key, arg);
    seen |= std::uint64_t(1) << type;
    return ok();
  };
  auto has = [&](int type) { return (seen & (std::uint64_t(1) << type)) != 0; };
  auto num = [](const std::string& s, std::uint64_t max) -> std::optional<std::uint64_t> {
    auto n = parse_u32(s, "");
    if (!n || *n > max) return std::nullopt;
    return *n;
  };
  VxAddr saddr, daddr;
  std::uint32_t vni = 0;
  std::uint16_t dstport = 0;
  bool learning = true, metadata = false, vnifilter = false;
  auto flag8 = [&](int type, const std::string& w, std::uint8_t v) -> Result<void> {
    IFCORE_TRY(once(type, w, w));
    b.put_u8(std::uint16_t(type), v);
    return ok();
  };
  while (!a.done()) {
    std::string w = a.take();
    if (matches(w, "id") || matches(w, "vni")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(once(IFLA_VXLAN_ID, "id", *v));
      auto n = num(*v, (1u << 24) - 1);
      if (!n) return invarg("invalid id", *v);
      vni = std::uint32_t(*n);
    } else if (matches(w, "group") || matches(w, "remote")) {
      bool group = matches(w, "group");
      if (group ? daddr.inet_not_multi() : daddr.inet_multi())
        return die(1, "vxlan: both group and remote cannot be specified");
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(once(IFLA_VXLAN_GROUP, group ? "group" : "remote", *v));
      auto d = vx_addr(*v, saddr.ip ? saddr.ip->family() : 0);
      if (!d) return fail(d.error());
      daddr = *d;
      if (group && !daddr.inet_multi()) return invarg("invalid group address", *v);
      if (!group && !daddr.inet_not_multi()) return invarg("invalid remote address", *v);
    } else if (matches(w, "local")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(once(IFLA_VXLAN_LOCAL, "local", *v));
      auto s = vx_addr(*v, daddr.ip ? daddr.ip->family() : 0);
      if (!s) return fail(s.error());
      saddr = *s;
      if (!saddr.inet_not_multi()) return invarg("invalid local address", *v);
    } else if (matches(w, "dev")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(once(IFLA_VXLAN_LINK, "dev", *v));
      auto idx = c.client->ifindex(*v);
      if (!idx) return fail(idx.error());
      if (*idx == 0) return die(255, "Cannot find device \"{}\"", *v);
      b.put_u32(IFLA_VXLAN_LINK, std::uint32_t(*idx));
    } else if (matches(w, "ttl") || matches(w, "hoplimit")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(once(IFLA_VXLAN_TTL, "ttl", *v));
      if (*v == "inherit") {
        b.put_flag(IFLA_VXLAN_TTL_INHERIT);
      } else if (*v == "auto") {
        b.put_u8(IFLA_VXLAN_TTL, 0);
      } else {
        auto n = parse_u32(*v, "invalid TTL");
        if (!n) return fail(n.error());
        if (*n > 255) return invarg("TTL must be <= 255", *v);
        b.put_u8(IFLA_VXLAN_TTL, std::uint8_t(*n));
      }
    } else if (matches(w, "tos") || matches(w, "dsfield")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(once(IFLA_VXLAN_TOS, "tos", *v));
      std::uint8_t tos = 1;  // inherit
      if (*v != "inherit") {
        auto n = parse_u32(*v, "bad TOS value", 16);
        if (!n || *n > 255) return invarg("bad TOS value", *v);
        tos = std::uint8_t(*n);
      }
      b.put_u8(IFLA_VXLAN_TOS, tos);
    } else if (matches(w, "df")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(once(IFLA_VXLAN_DF, "df", *v));
      std::uint8_t df = 0;
      if (*v == "unset")
        df = VXLAN_DF_UNSET;
      else if (*v == "set")
        df = VXLAN_DF_SET;
      else if (*v == "inherit")
        df = VXLAN_DF_INHERIT;
      else
        return invarg("DF must be 'unset', 'set' or 'inherit'", *v);
      b.put_u8(IFLA_VXLAN_DF, df);
    } else if (matches(w, "label") || matches(w, "flowlabel")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(once(IFLA_VXLAN_LABEL, "flowlabel", *v));
      auto n = num(*v, 0xfffff);
      if (!n) return invarg("invalid flowlabel", *v);
      b.put_be32(IFLA_VXLAN_LABEL, std::uint32_t(*n));
    } else if (matches(w, "ageing")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(once(IFLA_VXLAN_AGEING, "ageing", *v));
      std::uint32_t age = 0;
      if (*v != "none") {
        auto n = parse_u32(*v, "ageing timer");
        if (!n) return fail(n.error());
        age = *n;
      }
      b.put_u32(IFLA_VXLAN_AGEING, age);
    } else if (matches(w, "maxaddress")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(once(IFLA_VXLAN_LIMIT, "maxaddress", *v));
      std::uint32_t lim = 0;
      if (*v != "unlimited") {
        auto n = parse_u32(*v, "max addresses");
        if (!n) return fail(n.error());
        lim = *n;
      }
      b.put_u32(IFLA_VXLAN_LIMIT, lim);
    } else if (matches(w, "port") || matches(w, "srcport")) {
      auto lo = a.value();
      if (!lo) return fail(lo.error());
      IFCORE_TRY(once(IFLA_VXLAN_PORT_RANGE, "srcport", *lo));
      auto l = num(*lo, 0xffff);
      if (!l) return invarg("min port", *lo);
      auto hi = a.value();
      if (!hi) return fail(hi.error());
      auto h = num(*hi, 0xffff);
      if (!h) return invarg("max port", *hi);
      if (*l || *h) {
        ifla_vxlan_port_range r{htons(std::uint16_t(*l)), htons(std::uint16_t(*h))};
        b.put_bytes(IFLA_VXLAN_PORT_RANGE, {reinterpret_cast<const std::uint8_t*>(&r), sizeof r});
      }
    } else if (matches(w, "dstport")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(once(IFLA_VXLAN_PORT, "dstport", *v));
      auto n = num(*v, 0xffff);
      if (!n) return invarg("dst port", *v);
      dstport = std::uint16_t(*n);
    } else if (matches(w, "nolearning") || matches(w, "learning")) {
      IFCORE_TRY(once(IFLA_VXLAN_LEARNING, w, w));
      learning = !matches(w, "nolearning");
    } else if (matches(w, "noproxy") || matches(w, "proxy")) {
      IFCORE_TRY(flag8(IFLA_VXLAN_PROXY, w, !matches(w, "noproxy")));
    } else if (matches(w, "norsc") || matches(w, "rsc")) {
      IFCORE_TRY(flag8(IFLA_VXLAN_RSC, w, !matches(w, "norsc")));
    } else if (matches(w, "nol2miss") || matches(w, "l2miss")) {
      IFCORE_TRY(flag8(IFLA_VXLAN_L2MISS, w, !matches(w, "nol2miss")));
    } else if (matches(w, "nol3miss") || matches(w, "l3miss")) {
      IFCORE_TRY(flag8(IFLA_VXLAN_L3MISS, w, !matches(w, "nol3miss")));
    } else if (matches(w, "udpcsum") || matches(w, "noudpcsum")) {
      IFCORE_TRY(flag8(IFLA_VXLAN_UDP_CSUM, w, matches(w, "udpcsum")));
    } else if (matches(w, "udp6zerocsumtx") || matches(w, "noudp6zerocsumtx")) {
      IFCORE_TRY(flag8(IFLA_VXLAN_UDP_ZERO_CSUM6_TX, w, matches(w, "udp6zerocsumtx")));
    } else if (matches(w, "udp6zerocsumrx") || matches(w, "noudp6zerocsumrx")) {
      IFCORE_TRY(flag8(IFLA_VXLAN_UDP_ZERO_CSUM6_RX, w, matches(w, "udp6zerocsumrx")));
    } else if (matches(w, "remcsumtx") || matches(w, "noremcsumtx")) {
      IFCORE_TRY(flag8(IFLA_VXLAN_REMCSUM_TX, w, matches(w, "remcsumtx")));
    } else if (matches(w, "remcsumrx") || matches(w, "noremcsumrx")) {
      IFCORE_TRY(flag8(IFLA_VXLAN_REMCSUM_RX, w, matches(w, "remcsumrx")));
    } else if (matches(w, "external") || matches(w, "noexternal")) {
      metadata = matches(w, "external");
      if (metadata) learning = false;
      IFCORE_TRY(flag8(IFLA_VXLAN_COLLECT_METADATA, w, metadata));
    } else if (matches(w, "gbp")) {
      IFCORE_TRY(once(IFLA_VXLAN_GBP, w, w));
      b.put_flag(IFLA_VXLAN_GBP);
    } else if (matches(w, "gpe")) {
      IFCORE_TRY(once(IFLA_VXLAN_GPE, w, w));
      b.put_flag(IFLA_VXLAN_GPE);
    } else if (w == "vnifilter" || w == "novnifilter") {
      vnifilter = w == "vnifilter";
      IFCORE_TRY(flag8(IFLA_VXLAN_VNIFILTER, w, vnifilter));
    } else if (matches(w, "help")) {
      return die(1, "{}", kVxlanUsage);
    } else {
      return die(1, "vxlan: unknown command \"{}\"?\n{}", w, kVxlanUsage);
    }
  }
  if (!metadata && vnifilter)
    return die(1, "vxlan: vnifilter is valid only when 'external' is set");
  if (metadata && has(IFLA_VXLAN_ID))
    return die(1, "vxlan: both 'external' and vni cannot be specified");
  if (!metadata && !vnifilter && !has(IFLA_VXLAN_ID) && !set_op)
    return die(1, "vxlan: missing virtual network identifier");
  if (daddr.inet_multi() && !has(IFLA_VXLAN_LINK))
    return die(1, "vxlan: 'group' requires 'dev' to be specified");
  if (!has(IFLA_VXLAN_PORT) && has(IFLA_VXLAN_GPE))
    dstport = 4790;
  else if (!has(IFLA_VXLAN_PORT) && !set_op)
    std::fprintf(stderr,
                 "vxlan: destination port not specified\n"
                 "Will use Linux kernel default (non-standard value)\n"
                 "Use 'dstport 4789' to get the IANA assigned value\n"
                 "Use 'dstport 0' to get default and quiet this message\n");
  if (has(IFLA_VXLAN_ID)) b.put_u32(IFLA_VXLAN_ID, vni);
  bool family_set = false;
  if (saddr.ip) {
    b.put_bytes(saddr.ip->is_v4() ? IFLA_VXLAN_LOCAL : IFLA_VXLAN_LOCAL6, saddr.ip->bytes());
    family_set = true;
  }
  if (daddr.ip) {
    b.put_bytes(daddr.ip->is_v4() ? IFLA_VXLAN_GROUP : IFLA_VXLAN_GROUP6, daddr.ip->bytes());
    family_set = true;
  }
  if (!family_set && c.family == AF_INET) b.put_u32(IFLA_VXLAN_GROUP, 0);
  if (!family_set && c.family == AF_INET6) {
    std::uint8_t zero[16] = {};
    b.put_bytes(IFLA_VXLAN_GROUP6, zero);
  }
  if (!set_op || has(IFLA_VXLAN_LEARNING)) b.put_u8(IFLA_VXLAN_LEARNING, learning);
  if (dstport) b.put_be16(IFLA_VXLAN_PORT, dstport);
  b.end_nest(data);
  return ok();
}

}  // namespace ifcore::cli
