// shim/tunnel.cc — the tunnel ioctls `ip tunnel` uses for gre and ipip (SIOCGETTUNNEL,
// SIOCADDTUNNEL, SIOCCHGTUNNEL, SIOCDELTUNNEL with a struct ip_tunnel_parm), turned into
// the rtnetlink requests of the same change (Linux: ip_tunnel_ctl and its kinds'
// ipgre_tunnel_ctl / ipip_tunnel_ctl, and ip_tunnel_parm's meaning in the IFLA_GRE_* and
// IFLA_IPTUN_* attributes). Called from the ioctl interposer (ioctl.cc).
#include "shim/tunnel.h"

#include <arpa/inet.h>
#include <net/if.h>  // before any <linux/if*.h>
#include <netinet/in.h>

#include <linux/if_link.h>
#include <linux/if_tunnel.h>
#include <linux/ip.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "rtnl/wire/netlink.h"
#include "shim/rtclient.h"
#include "shim/sockets.h"

namespace ifcore::shim {

namespace {

// The "don't fragment" bit of iphdr.frag_off (glibc's <netinet/ip.h> IP_DF, whose struct
// iphdr clashes with the uapi one that <linux/if_tunnel.h> needs).
constexpr std::uint16_t kIpDf = 0x4000;

int fail_errno(int e) {
  errno = e;
  return -1;
}

bool is_gre(const ip_tunnel_parm& p, const std::string& dev) {
  if (p.iph.protocol == IPPROTO_GRE) return true;
  if (p.iph.protocol == IPPROTO_IPIP) return false;
  return dev.rfind("gre", 0) == 0;
}

std::string name_of(const char* field) {
  return std::string(field, strnlen(field, IFNAMSIZ - 1));
}

// The kind's attributes for `p` (Linux: ipgre_netlink_parms / ipip_netlink_parms read them
// into the same ip_tunnel_parm).
AttrList attrs_of(const ip_tunnel_parm& p, bool gre) {
  bool pmtudisc = (p.iph.frag_off & htons(kIpDf)) || p.iph.ttl;  // a fixed ttl implies DF
  AttrList d;
  if (gre) {
    d.push_back(Attr::u32(IFLA_GRE_LINK, static_cast<std::uint32_t>(p.link)));
    d.push_back(Attr::be16(IFLA_GRE_IFLAGS, ntohs(p.i_flags)));
    d.push_back(Attr::be16(IFLA_GRE_OFLAGS, ntohs(p.o_flags)));
    d.push_back(Attr::be32(IFLA_GRE_IKEY, ntohl(p.i_key)));
    d.push_back(Attr::be32(IFLA_GRE_OKEY, ntohl(p.o_key)));
    d.push_back(Attr::be32(IFLA_GRE_LOCAL, ntohl(p.iph.saddr)));
    d.push_back(Attr::be32(IFLA_GRE_REMOTE, ntohl(p.iph.daddr)));
    d.push_back(Attr::u8(IFLA_GRE_TTL, p.iph.ttl));
    d.push_back(Attr::u8(IFLA_GRE_TOS, p.iph.tos));
    d.push_back(Attr::u8(IFLA_GRE_PMTUDISC, pmtudisc));
  } else {
    d.push_back(Attr::u32(IFLA_IPTUN_LINK, static_cast<std::uint32_t>(p.link)));
    d.push_back(Attr::be32(IFLA_IPTUN_LOCAL, ntohl(p.iph.saddr)));
    d.push_back(Attr::be32(IFLA_IPTUN_REMOTE, ntohl(p.iph.daddr)));
    d.push_back(Attr::u8(IFLA_IPTUN_TTL, p.iph.ttl));
    d.push_back(Attr::u8(IFLA_IPTUN_TOS, p.iph.tos));
    d.push_back(Attr::u8(IFLA_IPTUN_PMTUDISC, pmtudisc));
  }
  return d;
}

// Fills `p` from a tunnel's IFLA_INFO_DATA (read as raw TLVs: the shim has no kind policy).
void parm_of(const wire::LinkMessage& l, bool gre, ip_tunnel_parm& p) {
  std::memset(&p, 0, sizeof(p));
  std::memcpy(p.name, l.name.c_str(), std::min(l.name.size(), std::size_t{IFNAMSIZ - 1}));
  p.iph.version = 4;
  p.iph.ihl = 5;
  p.iph.protocol = gre ? IPPROTO_GRE : IPPROTO_IPIP;
  const auto& raw = l.info_data_raw;
  for (std::size_t off = 0; off + NLA_HDRLEN <= raw.size();) {
    nlattr a;
    std::memcpy(&a, raw.data() + off, sizeof(a));
    if (a.nla_len < NLA_HDRLEN || off + a.nla_len > raw.size()) break;
    const std::uint8_t* v = raw.data() + off + NLA_HDRLEN;
    std::size_t n = a.nla_len - NLA_HDRLEN;
    auto u8 = [&]() -> std::uint8_t { return n >= 1 ? v[0] : 0; };
    auto raw16 = [&]() {
      std::uint16_t x = 0;
      if (n >= 2) std::memcpy(&x, v, 2);
      return x;
    };
    auto raw32 = [&]() {
      std::uint32_t x = 0;
      if (n >= 4) std::memcpy(&x, v, 4);
      return x;
    };
    std::uint16_t t = a.nla_type & NLA_TYPE_MASK;
    // The values are kept as the wire has them: be16/be32 fields stay in network order.
    if (gre) {
      if (t == IFLA_GRE_LINK) p.link = static_cast<int>(raw32());
      if (t == IFLA_GRE_IFLAGS) p.i_flags = raw16();
      if (t == IFLA_GRE_OFLAGS) p.o_flags = raw16();
      if (t == IFLA_GRE_IKEY) p.i_key = raw32();
      if (t == IFLA_GRE_OKEY) p.o_key = raw32();
      if (t == IFLA_GRE_LOCAL) p.iph.saddr = raw32();
      if (t == IFLA_GRE_REMOTE) p.iph.daddr = raw32();
      if (t == IFLA_GRE_TTL) p.iph.ttl = u8();
      if (t == IFLA_GRE_TOS) p.iph.tos = u8();
      if (t == IFLA_GRE_PMTUDISC && u8()) p.iph.frag_off = htons(kIpDf);
    } else {
      if (t == IFLA_IPTUN_LINK) p.link = static_cast<int>(raw32());
      if (t == IFLA_IPTUN_LOCAL) p.iph.saddr = raw32();
      if (t == IFLA_IPTUN_REMOTE) p.iph.daddr = raw32();
      if (t == IFLA_IPTUN_TTL) p.iph.ttl = u8();
      if (t == IFLA_IPTUN_TOS) p.iph.tos = u8();
      if (t == IFLA_IPTUN_PMTUDISC && u8()) p.iph.frag_off = htons(kIpDf);
    }
    off += NLA_ALIGN(a.nla_len);
  }
}

Result<void> send_link(std::uint16_t type, std::uint16_t flags, const LinkRequest& req) {
  wire::MessageBuilder b;
  IFCORE_TRY(wire::encode_link_request(
      b, {type, static_cast<std::uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags), 0, 0}, req));
  auto dgs = transact(b.take());
  if (!dgs) return fail(dgs.error());
  for (const auto& dg : *dgs) {
    auto m = wire::only_message(dg);
    if (m && m->hdr.nlmsg_type == NLMSG_ERROR) {
      auto e = wire::decode_error(*m);
      if (e && e->error) return fail(e->error, "{}", e->message);
    }
  }
  return ok();
}

}  // namespace

bool is_tunnel_request(unsigned long req) {
  return req == SIOCGETTUNNEL || req == SIOCADDTUNNEL || req == SIOCCHGTUNNEL ||
         req == SIOCDELTUNNEL;
}

int tunnel_ioctl(unsigned long req, ifreq& ifr) {
  auto* p = reinterpret_cast<ip_tunnel_parm*>(ifr.ifr_ifru.ifru_data);
  if (!p) return fail_errno(EFAULT);
  std::string dev = name_of(ifr.ifr_name);
  bool gre = is_gre(*p, dev);
  // The base devices (gre0, tunl0) name the kind; the tunnel is p->name then.
  bool base = dev == "gre0" || dev == "tunl0";
  std::string target = base ? name_of(p->name) : dev;
  if (req == SIOCGETTUNNEL || req == SIOCCHGTUNNEL) {
    // An existing tunnel: its own kind decides (`ip tunnel show` asks with a zeroed parm).
    if (target.empty())
      return fail_errno(req == SIOCGETTUNNEL ? ENODEV : EINVAL);  // no fallback device
    auto l = rt::link_by_name(target);
    if (!l) return fail_errno(l.error().code);
    if (l->kind != std::string("gre") && l->kind != std::string("ipip")) return fail_errno(EINVAL);
    gre = *l->kind == "gre";
    if (req == SIOCGETTUNNEL) {
      parm_of(*l, gre, *p);
      return 0;
    }
  }
  if (req == SIOCADDTUNNEL && !base) {
    // Linux: the ioctl goes to the device named. The base devices of the kinds ifcore
    // lacks (sit0, ip_vti0, ip6tnl0, ip6gre0) do not exist: ENODEV, not an ipip tunnel
    // of that name.
    auto l = rt::link_by_name(dev);
    if (!l) return fail_errno(l.error().code);
  }
  if (req == SIOCDELTUNNEL) {
    if (target.empty()) return fail_errno(EPERM);  // Linux: the fallback device stays
    LinkRequest del;
    del.name = target;
    auto r = send_link(RTM_DELLINK, 0, del);
    return r ? 0 : fail_errno(r.error().code);
  }
  // Linux: ipgre_tunnel_ctl / ipip_tunnel_ctl check the header they are given.
  if (p->iph.version != 4 || p->iph.ihl != 5 ||
      (p->iph.frag_off & htons(static_cast<std::uint16_t>(~kIpDf))))
    return fail_errno(EINVAL);
  if (gre && ((p->i_flags | p->o_flags) & (GRE_VERSION | GRE_ROUTING))) return fail_errno(EINVAL);
  LinkRequest r;
  r.kind = gre ? "gre" : "ipip";
  r.has_info_data = true;
  r.info_data = attrs_of(*p, gre);
  if (req == SIOCADDTUNNEL) {
    r.name = target.empty() ? std::string(gre ? "gre%d" : "tunl%d") : target;
    auto made = send_link(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, r);
    return made ? 0 : fail_errno(made.error().code);
  }
  if (req == SIOCCHGTUNNEL) {
    if (target.empty()) return fail_errno(EINVAL);
    r.name = target;
    auto changed = send_link(RTM_NEWLINK, 0, r);
    return changed ? 0 : fail_errno(changed.error().code);
  }
  return fail_errno(EINVAL);
}

}  // namespace ifcore::shim
