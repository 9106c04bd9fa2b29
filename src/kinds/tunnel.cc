// Ipip and gre: Linux net/ipv4/ip_tunnel.c (ip_tunnel_newlink, ip_tunnel_changelink,
// ip_tunnel_find, ip_tunnel_bind_dev), ipip.c and ip_gre.c (their netlink parms, validate
// and fill_info) semantics, written for ifcore.
#include "kinds/tunnel.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <arpa/inet.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/if_tunnel.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>

#include "kinds/common.h"

namespace ifcore::kinds {

namespace {

constexpr std::uint32_t kIpHeader = 20;        // sizeof(struct iphdr)
constexpr std::uint32_t kIpMaxMtu = 0xffff;    // Linux: IP_MAX_MTU
constexpr std::uint32_t kMinMtu = 68;          // Linux: ETH_MIN_MTU / IPV4_MIN_MTU
const std::uint16_t kGreKey = ntohs(GRE_KEY);  // GRE_* are big endian in the uapi
const std::uint16_t kGreCsum = ntohs(GRE_CSUM);
const std::uint16_t kGreSeq = ntohs(GRE_SEQ);
const std::uint16_t kGreBad = ntohs(GRE_VERSION) | ntohs(GRE_ROUTING);

// Linux: struct ip_tunnel_parm plus the netlink-only fields. Addresses in host order.
struct Params {
  std::uint32_t link = 0, local = 0, remote = 0;
  std::uint8_t ttl = 0, tos = 0, proto = IPPROTO_IPIP;
  bool pmtudisc = true;
  std::uint16_t iflags = 0, oflags = 0;  // gre, host order
  std::uint32_t ikey = 0, okey = 0;      // gre, host order
  std::uint32_t fwmark = 0;
  std::uint16_t encap_type = 0, encap_flags = 0, encap_sport = 0, encap_dport = 0;
  bool collect_md = false;
  std::uint8_t ignore_df = 0;
};

struct TunnelPriv final : DevicePriv {
  Params p;
};

TunnelPriv* tunnel_of(const Device& dev) {
  return priv_of<TunnelPriv>(dev);
}

constexpr AttrPolicyEntry kIpipPolicy[] = {
    {IFLA_IPTUN_LINK, AttrShape::U32},         {IFLA_IPTUN_LOCAL, AttrShape::Be32},
    {IFLA_IPTUN_REMOTE, AttrShape::Be32},      {IFLA_IPTUN_TTL, AttrShape::U8},
    {IFLA_IPTUN_TOS, AttrShape::U8},           {IFLA_IPTUN_PROTO, AttrShape::U8},
    {IFLA_IPTUN_PMTUDISC, AttrShape::U8},      {IFLA_IPTUN_ENCAP_TYPE, AttrShape::U16},
    {IFLA_IPTUN_ENCAP_FLAGS, AttrShape::U16},  {IFLA_IPTUN_ENCAP_SPORT, AttrShape::Be16},
    {IFLA_IPTUN_ENCAP_DPORT, AttrShape::Be16}, {IFLA_IPTUN_COLLECT_METADATA, AttrShape::Flag},
    {IFLA_IPTUN_FWMARK, AttrShape::U32},
};

constexpr AttrPolicyEntry kGrePolicy[] = {
    {IFLA_GRE_LINK, AttrShape::U32},
    {IFLA_GRE_IFLAGS, AttrShape::Be16},
    {IFLA_GRE_OFLAGS, AttrShape::Be16},
    {IFLA_GRE_IKEY, AttrShape::Be32},
    {IFLA_GRE_OKEY, AttrShape::Be32},
    {IFLA_GRE_LOCAL, AttrShape::Be32},
    {IFLA_GRE_REMOTE, AttrShape::Be32},
    {IFLA_GRE_TTL, AttrShape::U8},
    {IFLA_GRE_TOS, AttrShape::U8},
    {IFLA_GRE_PMTUDISC, AttrShape::U8},
    {IFLA_GRE_ENCAP_TYPE, AttrShape::U16},
    {IFLA_GRE_ENCAP_FLAGS, AttrShape::U16},
    {IFLA_GRE_ENCAP_SPORT, AttrShape::Be16},
    {IFLA_GRE_ENCAP_DPORT, AttrShape::Be16},
    {IFLA_GRE_COLLECT_METADATA, AttrShape::Flag},
    {IFLA_GRE_IGNORE_DF, AttrShape::U8},
    {IFLA_GRE_FWMARK, AttrShape::U32},
};

template <class T>
void take(const AttrList& d, std::uint16_t type, T& out) {
  if (auto v = attr_num(d, type)) out = static_cast<T>(*v);
}

// Reads `data` over `p` (Linux: ipip_netlink_parms / ipgre_netlink_parms). Every tunnel
// error is the errno alone, as ipip_tunnel_validate, ipgre_tunnel_validate, the parms
// readers and ip_tunnel_newlink/changelink (EEXIST) send it: log_only.
Result<void> parse(Tunnel::Flavor f, const AttrList& d, Params& p) {
  if (f == Tunnel::Flavor::Ipip) {
    if (auto v = attr_num(d, IFLA_IPTUN_PROTO);
        v && *v != IPPROTO_IPIP && *v != IPPROTO_MPLS && *v != 0)
      return fail_log_only(EINVAL, "ipip protocol {} is not IPIP or MPLS", *v);
    take(d, IFLA_IPTUN_LINK, p.link);
    take(d, IFLA_IPTUN_LOCAL, p.local);
    take(d, IFLA_IPTUN_REMOTE, p.remote);
    take(d, IFLA_IPTUN_TTL, p.ttl);
    take(d, IFLA_IPTUN_TOS, p.tos);
    take(d, IFLA_IPTUN_PROTO, p.proto);
    if (auto v = attr_num(d, IFLA_IPTUN_PMTUDISC)) p.pmtudisc = *v != 0;
    take(d, IFLA_IPTUN_FWMARK, p.fwmark);
    take(d, IFLA_IPTUN_ENCAP_TYPE, p.encap_type);
    take(d, IFLA_IPTUN_ENCAP_FLAGS, p.encap_flags);
    take(d, IFLA_IPTUN_ENCAP_SPORT, p.encap_sport);
    take(d, IFLA_IPTUN_ENCAP_DPORT, p.encap_dport);
    if (find_attr(d, IFLA_IPTUN_COLLECT_METADATA)) p.collect_md = true;
    return ok();
  }
  // Linux: ipgre_tunnel_validate: no routing, version 0.
  std::uint16_t fl = static_cast<std::uint16_t>(attr_num(d, IFLA_GRE_IFLAGS).value_or(0) |
                                                attr_num(d, IFLA_GRE_OFLAGS).value_or(0));
  if (fl & kGreBad)
    return fail_log_only(EINVAL, "gre flags {:#06x} ask for routing or a version", fl);
  take(d, IFLA_GRE_LINK, p.link);
  take(d, IFLA_GRE_IFLAGS, p.iflags);
  take(d, IFLA_GRE_OFLAGS, p.oflags);
  take(d, IFLA_GRE_IKEY, p.ikey);
  take(d, IFLA_GRE_OKEY, p.okey);
  take(d, IFLA_GRE_LOCAL, p.local);
  take(d, IFLA_GRE_REMOTE, p.remote);
  take(d, IFLA_GRE_TTL, p.ttl);
  take(d, IFLA_GRE_TOS, p.tos);
  take(d, IFLA_GRE_FWMARK, p.fwmark);
  take(d, IFLA_GRE_ENCAP_TYPE, p.encap_type);
  take(d, IFLA_GRE_ENCAP_FLAGS, p.encap_flags);
  take(d, IFLA_GRE_ENCAP_SPORT, p.encap_sport);
  take(d, IFLA_GRE_ENCAP_DPORT, p.encap_dport);
  if (find_attr(d, IFLA_GRE_COLLECT_METADATA)) p.collect_md = true;
  // Linux: ignore_df and path mtu discovery exclude each other.
  if (auto v = attr_num(d, IFLA_GRE_PMTUDISC)) {
    if (!*v && p.ignore_df)
      return fail_log_only(EINVAL, "gre: pmtudisc off conflicts with ignore_df");
    p.pmtudisc = *v != 0;
  }
  if (auto v = attr_num(d, IFLA_GRE_IGNORE_DF)) {
    if (*v && p.pmtudisc) return fail_log_only(EINVAL, "gre: ignore_df needs pmtudisc off");
    p.ignore_df = *v ? 1 : 0;
  }
  return ok();
}

// Linux: ip_tunnel_key_match on the input key.
bool key_match(const Params& a, const Params& b) {
  bool ka = a.iflags & kGreKey, kb = b.iflags & kGreKey;
  return ka == kb && (!ka || a.ikey == b.ikey);
}

// Linux: ip_tunnel_find (same kind, local, remote, link, key) and the one collect_md
// tunnel per namespace.
Device* find_same(Control& ctl, Namespace& ns, const Kind& kind, const Params& p,
                  const Device* except) {
  for (Device* d : ns.devices_of_kind_locked(kind)) {
    if (d == except) continue;
    const Params& q = tunnel_of(*d)->p;
    if (p.collect_md || q.collect_md) {
      if (p.collect_md && q.collect_md) return d;
      continue;
    }
    if (q.local == p.local && q.remote == p.remote && q.link == p.link && key_match(p, q)) return d;
  }
  return nullptr;
}

// Linux: the tunnel header (t_hlen): iphdr plus, for gre, its header with options.
std::uint32_t header_len(Tunnel::Flavor f, const Params& p) {
  std::uint32_t h = kIpHeader;
  if (f == Tunnel::Flavor::Gre) {
    h += 4;
    if (p.oflags & kGreCsum) h += 4;
    if (p.oflags & kGreKey) h += 4;
    if (p.oflags & kGreSeq) h += 4;
  }
  return h;
}

// Linux: ip_tunnel_bind_dev: the lower device's mtu (1500 without one) less the header.
std::uint32_t bound_mtu(Control& ctl, Namespace& ns, Tunnel::Flavor f, const Params& p) {
  std::uint32_t base = 1500;
  if (p.link)
    if (Device* l = ctl.find(ns, static_cast<int>(p.link))) base = l->mtu();
  std::uint32_t h = header_len(f, p);
  return std::max(base > h ? base - h : 0, kMinMtu);
}

std::uint32_t flags_for(const Params& p) {
  return IFF_NOARP | (p.remote ? IFF_POINTOPOINT : 0);
}

}  // namespace

AttrPolicy Tunnel::policy() const {
  return flavor_ == Flavor::Ipip ? AttrPolicy(kIpipPolicy) : AttrPolicy(kGrePolicy);
}

Result<void> Tunnel::validate(Control&, const LinkRequest& req) const {
  Params p;
  return parse(flavor_, req.info_data, p);
}

Result<Device*> Tunnel::new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const {
  Params p;
  IFCORE_TRY(parse(flavor_, req.info_data, p));
  if (Device* other = find_same(ctl, ns, *this, p, nullptr))
    return fail_log_only(EEXIST, "tunnel \"{}\" has the same endpoints, link and key",
                         other->name());
  auto dev = ctl.alloc_device(*this, ns);
  // Linux: ipip_tunnel_setup / ipgre_tunnel_setup: no Ethernet header, a 4-byte address
  // (the local end) and broadcast (the remote end), NOARP.
  dev->set_hw_type_locked(ctl, flavor_ == Flavor::Ipip ? ARPHRD_TUNNEL : ARPHRD_IPGRE);
  dev->set_address_locked(ctl, ipv4_hwaddr(p.local));
  dev->set_broadcast_locked(ctl, ipv4_hwaddr(p.remote));
  dev->set_perm_address_locked(ctl, ipv4_hwaddr(p.local));
  dev->set_flags_locked(ctl, flags_for(p));
  std::uint32_t h = header_len(flavor_, p);
  dev->set_mtu_range_locked(ctl, kMinMtu, kIpMaxMtu - h);
  dev->set_mtu_locked(ctl, bound_mtu(ctl, ns, flavor_, p));
  dev->set_operstate_locked(ctl, IF_OPER_UNKNOWN);
  auto priv = std::make_unique<TunnelPriv>();
  priv->p = p;
  dev->set_priv(std::move(priv));
  // Linux: ip_tunnel_newlink clamps a requested mtu into the range instead of failing.
  LinkRequest clamped = req;
  if (clamped.mtu) clamped.mtu = std::clamp(*clamped.mtu, kMinMtu, kIpMaxMtu - h);
  IFCORE_TRY(ctl.apply_create_attrs(*dev, clamped));
  return ctl.register_device(std::move(dev), req.name.value_or(std::string(name()) + "%d"),
                             req.ifindex);
}

Kind::Undo Tunnel::save_link(Device& dev) const {
  Device* d = &dev;
  return [d, p = tunnel_of(dev)->p, address = dev.address(), broadcast = dev.broadcast(),
          mtu = dev.mtu(), p2p = dev.flags() & IFF_POINTOPOINT](Control& ctl) -> Result<void> {
    TunnelPriv& t = *tunnel_of(*d);
    t.p = p;
    d->set_flags_locked(ctl, (d->flags() & ~IFF_POINTOPOINT) | p2p);
    if (d->address() != address) IFCORE_TRY(ctl.set_address(*d, address));
    if (d->broadcast() != broadcast) IFCORE_TRY(ctl.set_broadcast(*d, broadcast));
    if (d->mtu() != mtu) IFCORE_TRY(ctl.set_mtu(*d, mtu));
    (void)ctl.notify(EventInfo{NetdevEvent::ChangeInfoData, *d});
    return ok();
  };
}

Result<void> Tunnel::change_link(Control& ctl, Device& dev, const LinkRequest& req) const {
  // Linux: ip_tunnel_changelink: new parameters over the old; EEXIST if another tunnel
  // has them; the addresses follow; a new link rebinds the mtu (unless one is given).
  TunnelPriv& t = *tunnel_of(dev);
  Params next = t.p;
  IFCORE_TRY(parse(flavor_, req.info_data, next));
  if (find_same(ctl, dev.ns(), *this, next, &dev))
    return fail_log_only(EEXIST, "another tunnel has the same endpoints, link and key");
  if (next.local != t.p.local) IFCORE_TRY(ctl.set_address(dev, ipv4_hwaddr(next.local)));
  if (next.remote != t.p.remote) (void)ctl.set_broadcast(dev, ipv4_hwaddr(next.remote));
  bool rebind = next.link != t.p.link || header_len(flavor_, next) != header_len(flavor_, t.p);
  t.p = next;
  dev.set_flags_locked(ctl, (dev.flags() & ~IFF_POINTOPOINT) | flags_for(next));
  if (rebind && !req.mtu) (void)ctl.set_mtu(dev, bound_mtu(ctl, dev.ns(), flavor_, next));
  (void)ctl.notify(EventInfo{NetdevEvent::ChangeInfoData, dev});
  return ok();
}

AttrList Tunnel::fill_info(const Device& dev) const {
  const Params& p = tunnel_of(dev)->p;
  AttrList out;
  if (flavor_ == Flavor::Ipip) {
    // Linux: ipip_fill_info.
    out.push_back(Attr::u32(IFLA_IPTUN_LINK, p.link));
    out.push_back(Attr::be32(IFLA_IPTUN_LOCAL, p.local));
    out.push_back(Attr::be32(IFLA_IPTUN_REMOTE, p.remote));
    out.push_back(Attr::u8(IFLA_IPTUN_TTL, p.ttl));
    out.push_back(Attr::u8(IFLA_IPTUN_TOS, p.tos));
    out.push_back(Attr::u8(IFLA_IPTUN_PROTO, p.proto));
    out.push_back(Attr::u8(IFLA_IPTUN_PMTUDISC, p.pmtudisc));
    out.push_back(Attr::u32(IFLA_IPTUN_FWMARK, p.fwmark));
    out.push_back(Attr::u16(IFLA_IPTUN_ENCAP_TYPE, p.encap_type));
    out.push_back(Attr::be16(IFLA_IPTUN_ENCAP_SPORT, p.encap_sport));
    out.push_back(Attr::be16(IFLA_IPTUN_ENCAP_DPORT, p.encap_dport));
    out.push_back(Attr::u16(IFLA_IPTUN_ENCAP_FLAGS, p.encap_flags));
    if (p.collect_md) out.push_back(Attr::flag(IFLA_IPTUN_COLLECT_METADATA));
    return out;
  }
  // Linux: ipgre_fill_info.
  out.push_back(Attr::u32(IFLA_GRE_LINK, p.link));
  out.push_back(Attr::be16(IFLA_GRE_IFLAGS, p.iflags));
  out.push_back(Attr::be16(IFLA_GRE_OFLAGS, p.oflags));
  out.push_back(Attr::be32(IFLA_GRE_IKEY, p.ikey));
  out.push_back(Attr::be32(IFLA_GRE_OKEY, p.okey));
  out.push_back(Attr::be32(IFLA_GRE_LOCAL, p.local));
  out.push_back(Attr::be32(IFLA_GRE_REMOTE, p.remote));
  out.push_back(Attr::u8(IFLA_GRE_TTL, p.ttl));
  out.push_back(Attr::u8(IFLA_GRE_TOS, p.tos));
  out.push_back(Attr::u8(IFLA_GRE_PMTUDISC, p.pmtudisc));
  out.push_back(Attr::u32(IFLA_GRE_FWMARK, p.fwmark));
  out.push_back(Attr::u16(IFLA_GRE_ENCAP_TYPE, p.encap_type));
  out.push_back(Attr::be16(IFLA_GRE_ENCAP_SPORT, p.encap_sport));
  out.push_back(Attr::be16(IFLA_GRE_ENCAP_DPORT, p.encap_dport));
  out.push_back(Attr::u16(IFLA_GRE_ENCAP_FLAGS, p.encap_flags));
  out.push_back(Attr::u8(IFLA_GRE_IGNORE_DF, p.ignore_df));
  if (p.collect_md) out.push_back(Attr::flag(IFLA_GRE_COLLECT_METADATA));
  return out;
}

int Tunnel::link_ifindex(const Device& dev) const {
  // Linux: ip_tunnel_get_iflink reports parms.link.
  const TunnelPriv* t = tunnel_of(dev);
  return t ? static_cast<int>(t->p.link) : 0;
}

void Tunnel::install(Engine& engine) {
  static Tunnel ipip(Flavor::Ipip);
  static Tunnel gre(Flavor::Gre);
  engine.register_kind(ipip);
  engine.register_kind(gre);
}

}  // namespace ifcore::kinds
