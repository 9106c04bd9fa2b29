// Vxlan: Linux drivers/net/vxlan/vxlan_core.c semantics (vxlan_nl2conf,
// vxlan_config_validate, vxlan_dev_configure, vxlan_changelink, vxlan_fill_info,
// vxlan_handle_lowerdev_unregister), written for ifcore.
#include "kinds/vxlan.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "ifcore/namespace.h"
#include "kinds/common.h"
#include "kinds/vxlan_priv.h"

namespace ifcore::kinds {

namespace {

using namespace vx;

// Attributes newer than this system's uapi headers (Linux 6.3+).
constexpr std::uint16_t kVxlanLocalBypass = 31;   // IFLA_VXLAN_LOCALBYPASS
constexpr std::uint16_t kVxlanLabelPolicy = 32;   // IFLA_VXLAN_LABEL_POLICY
constexpr std::uint16_t kVxlanReservedBits = 33;  // IFLA_VXLAN_RESERVED_BITS

constexpr AttrPolicyEntry kPolicy[] = {
    {IFLA_VXLAN_ID, AttrShape::U32},
    {IFLA_VXLAN_GROUP, AttrShape::Binary, 4, 4},
    {IFLA_VXLAN_LINK, AttrShape::U32},
    {IFLA_VXLAN_LOCAL, AttrShape::Binary, 4, 4},
    {IFLA_VXLAN_TTL, AttrShape::U8},
    {IFLA_VXLAN_TOS, AttrShape::U8},
    {IFLA_VXLAN_LEARNING, AttrShape::U8},
    {IFLA_VXLAN_AGEING, AttrShape::U32},
    {IFLA_VXLAN_LIMIT, AttrShape::U32},
    {IFLA_VXLAN_PORT_RANGE, AttrShape::Binary, 4, 4},
    {IFLA_VXLAN_PROXY, AttrShape::U8},
    {IFLA_VXLAN_RSC, AttrShape::U8},
    {IFLA_VXLAN_L2MISS, AttrShape::U8},
    {IFLA_VXLAN_L3MISS, AttrShape::U8},
    {IFLA_VXLAN_PORT, AttrShape::Be16},
    {IFLA_VXLAN_GROUP6, AttrShape::Binary, 16, 16},
    {IFLA_VXLAN_LOCAL6, AttrShape::Binary, 16, 16},
    {IFLA_VXLAN_UDP_CSUM, AttrShape::U8},
    {IFLA_VXLAN_UDP_ZERO_CSUM6_TX, AttrShape::U8},
    {IFLA_VXLAN_UDP_ZERO_CSUM6_RX, AttrShape::U8},
    {IFLA_VXLAN_REMCSUM_TX, AttrShape::U8},
    {IFLA_VXLAN_REMCSUM_RX, AttrShape::U8},
    {IFLA_VXLAN_GBP, AttrShape::Flag},
    {IFLA_VXLAN_REMCSUM_NOPARTIAL, AttrShape::Flag},
    {IFLA_VXLAN_COLLECT_METADATA, AttrShape::U8},
    {IFLA_VXLAN_LABEL, AttrShape::Be32},
    {IFLA_VXLAN_GPE, AttrShape::Flag},
    {IFLA_VXLAN_TTL_INHERIT, AttrShape::Flag},
    {IFLA_VXLAN_DF, AttrShape::U8},
    {IFLA_VXLAN_VNIFILTER, AttrShape::U8},
    {kVxlanLocalBypass, AttrShape::U8},
    {kVxlanLabelPolicy, AttrShape::U32},
};

tl::unexpected<Error> cannot(const char* what) {
  return fail(EOPNOTSUPP, "{}", what);
}

// Linux: vxlan_nl2flag — a boolean attribute sets or clears its bit; on a change only the
// changeable ones may appear (`message`: the extack of one that may not).
Result<void> flag(Conf& c, const AttrList& d, std::uint16_t type, std::uint32_t bit,
                  bool changelink, const char* message, bool invert = false) {
  const Attr* a = find_attr(d, type);
  if (!a) return ok();
  if (changelink && message) return cannot(message);
  bool on = a->shape == AttrShape::Flag ? true : a->num != 0;
  if (invert) on = !on;
  c.flags = on ? (c.flags | bit) : (c.flags & ~bit);
  return ok();
}

// Linux: vxlan_nl2conf, in its order. `c` starts as the device's configuration on a
// change, as the defaults on a create.
Result<void> nl2conf(Conf& c, const AttrList& d, bool changelink) {
  // Linux: vxlan_config_validate gives a device made without addresses IPv4's family; a
  // change must keep the family the device has.
  const int family = c.ipv6() ? AF_INET6 : AF_INET;
  if (auto v = attr_num(d, IFLA_VXLAN_ID)) {
    if (changelink && *v != c.vni) return cannot("Cannot change VNI");
    c.vni = static_cast<std::uint32_t>(*v);
  }
  auto address = [&](std::uint16_t t4, std::uint16_t t6, IpAddr& out,
                     const char* family_message) -> Result<void> {
    for (std::uint16_t t : {t4, t6}) {
      const Attr* a = find_attr(d, t);
      if (!a) continue;
      auto ip = IpAddr::from_bytes(t == t4 ? AF_INET : AF_INET6, a->bin);
      if (!ip) return fail(ip.error());
      if (changelink && family != ip->family()) return cannot(family_message);
      out = *ip;
    }
    return ok();
  };
  IFCORE_TRY(address(IFLA_VXLAN_GROUP, IFLA_VXLAN_GROUP6, c.remote,
                     "New group address family does not match old group"));
  IFCORE_TRY(address(IFLA_VXLAN_LOCAL, IFLA_VXLAN_LOCAL6, c.local,
                     "New local address family does not match old"));
  if (auto v = attr_num(d, IFLA_VXLAN_LINK)) c.lower = static_cast<int>(*v);
  if (auto v = attr_num(d, IFLA_VXLAN_TOS)) c.tos = static_cast<std::uint8_t>(*v);
  if (auto v = attr_num(d, IFLA_VXLAN_TTL)) c.ttl = static_cast<std::uint8_t>(*v);
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_TTL_INHERIT, kTtlInherit, changelink,
                  "vxlan: cannot change TTL_INHERIT flag"));
  if (auto v = attr_num(d, IFLA_VXLAN_LABEL)) c.label = static_cast<std::uint32_t>(*v) & 0xFFFFF;
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_LEARNING, kLearn, changelink, nullptr));
  // vxlan_config_validate: an ageing time of 0 means the default one.
  if (auto v = attr_num(d, IFLA_VXLAN_AGEING))
    c.ageing = *v ? static_cast<std::uint32_t>(*v) : kDefaultAgeing;
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_PROXY, kProxy, changelink, "vxlan: cannot change PROXY flag"));
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_RSC, kRsc, changelink, "vxlan: cannot change RSC flag"));
  IFCORE_TRY(
      flag(c, d, IFLA_VXLAN_L2MISS, kL2miss, changelink, "vxlan: cannot change L2MISS flag"));
  IFCORE_TRY(
      flag(c, d, IFLA_VXLAN_L3MISS, kL3miss, changelink, "vxlan: cannot change L3MISS flag"));
  if (auto v = attr_num(d, IFLA_VXLAN_LIMIT)) {
    if (changelink) return cannot("Cannot change limit");
    c.limit = static_cast<std::uint32_t>(*v);
  }
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_COLLECT_METADATA, kMetadata, changelink,
                  "vxlan: cannot change COLLECT_METADATA flag"));
  if (const Attr* a = find_attr(d, IFLA_VXLAN_PORT_RANGE)) {
    if (changelink) return cannot("Cannot change port range");
    std::uint16_t low = static_cast<std::uint16_t>((a->bin[0] << 8) | a->bin[1]);
    std::uint16_t high = static_cast<std::uint16_t>((a->bin[2] << 8) | a->bin[3]);
    if (low > high) return fail(EINVAL, "Invalid source port range");
    c.port_low = low;
    c.port_high = high;
  }
  if (auto v = attr_num(d, IFLA_VXLAN_PORT)) {
    if (changelink) return cannot("Cannot change port");
    c.port = static_cast<std::uint16_t>(*v);
  }
  if (find_attr(d, IFLA_VXLAN_UDP_CSUM)) {
    if (changelink) return cannot("Cannot change UDP_CSUM flag");
    IFCORE_TRY(flag(c, d, IFLA_VXLAN_UDP_CSUM, kZeroCsumTx, false, nullptr, /*invert=*/true));
  }
  IFCORE_TRY(flag(c, d, kVxlanLocalBypass, kLocalBypass, changelink,
                  "vxlan: cannot change LOCALBYPASS flag"));
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_UDP_ZERO_CSUM6_TX, kZeroCsum6Tx, changelink,
                  "vxlan: cannot change UDP_ZERO_CSUM6_TX flag"));
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_UDP_ZERO_CSUM6_RX, kZeroCsum6Rx, changelink,
                  "vxlan: cannot change UDP_ZERO_CSUM6_RX flag"));
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_REMCSUM_TX, kRemcsumTx, changelink,
                  "vxlan: cannot change REMCSUM_TX flag"));
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_REMCSUM_RX, kRemcsumRx, changelink,
                  "vxlan: cannot change REMCSUM_RX flag"));
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_GBP, kGbp, changelink, "vxlan: cannot change GBP flag"));
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_GPE, kGpe, changelink, "vxlan: cannot change GPE flag"));
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_REMCSUM_NOPARTIAL, kRemcsumNoPartial, changelink,
                  "vxlan: cannot change REMCSUM_NOPARTIAL flag"));
  if (auto v = attr_num(d, IFLA_VXLAN_DF)) {
    if (*v > 2) return fail(EINVAL, "Invalid DF attribute");
    c.df = static_cast<std::uint8_t>(*v);
  }
  IFCORE_TRY(flag(c, d, IFLA_VXLAN_VNIFILTER, kVniFilter, changelink,
                  "vxlan: cannot change VNIFILTER flag"));
  return ok();
}

// The per-namespace list behind net_devices (a namespace's plug-in data).
struct NetList {
  std::vector<Device*> devs;
};
const char kNetListTag = 0;

NetList& net_list(Namespace& net) {
  if (auto* l = net.data_locked<NetList>(&kNetListTag)) return *l;
  auto l = std::make_shared<NetList>();
  NetList& ref = *l;
  net.set_data_locked(&kNetListTag, std::move(l));
  return ref;
}

// Linux: vxlan_config_validate, in the link namespace `net` (its lower device and the
// other devices of that namespace's list); `home` is where the device lives.
Result<void> check_conf(Control& ctl, Namespace& net, Namespace& home, const Conf& c,
                        const Device* self, Device** lower_out) {
  PluginGuard guard(ctl);  // the link namespace's list, maybe not this control's
  if (c.flags & kGpe) {
    const std::uint32_t allowed = kGpe | kZeroCsumTx | kZeroCsum6Tx | kZeroCsum6Rx | kMetadata |
                                  kTtlInherit | kLocalBypass | kVniFilter;
    if ((c.flags & ~allowed) || !(c.flags & kMetadata))
      return fail(EINVAL, "VXLAN GPE does not support this combination of attributes");
  }
  if (!c.remote.empty() && !c.local.empty() && c.remote.family() != c.local.family())
    return fail(EINVAL, "Local and remote address must be from the same family");
  if (!c.local.empty() && c.local.is_multicast())
    return fail(EINVAL, "Local address cannot be multicast");
  if (c.label && !c.ipv6())
    return fail(EINVAL, "Label attribute only applies to IPv6 VXLAN devices");
  Device* lower = nullptr;
  if (c.lower) {
    lower = ctl.find(net, c.lower);
    if (!lower) return fail(ENODEV, "Invalid local interface, device not found");
    // ifcore: an upper device in another namespace than its lower is not supported.
    if (&net != &home)
      return fail(EOPNOTSUPP, "a lower device in another namespace is not supported");
  } else if (!c.remote.empty() && c.remote.is_multicast() && !(c.flags & kMetadata)) {
    return fail(EINVAL, "Local interface required for multicast remote destination");
  }
  // Linux: vxlan_vni_in_use — one device per VNI, port and receive flags. A device that
  // filters VNIs holds those of its VNI table.
  for (Device* d : net_devices(net)) {
    const VxlanPriv* o = d != self ? vxlan_of(*d) : nullptr;
    if (!o || o->conf.port != c.port) continue;
    if ((o->conf.flags & kVniFilter) ? !o->has_vni(c.vni) : o->conf.vni != c.vni) continue;
    if ((o->conf.flags & kRcvFlags) != (c.flags & kRcvFlags) || o->conf.ipv6() != c.ipv6())
      continue;
    return fail(EEXIST, "A VXLAN device with the specified VNI already exists");
  }
  *lower_out = lower;
  return ok();
}

std::vector<std::uint8_t> port_range_bytes(const Conf& c) {
  return {std::uint8_t(c.port_low >> 8), std::uint8_t(c.port_low), std::uint8_t(c.port_high >> 8),
          std::uint8_t(c.port_high)};
}

// Linux: vxlan_config_apply's needed_headroom — the lower's link header and headroom (an
// Ethernet header's without a lower), and the device's own headers, a metadata device's
// sized for IPv6.
void set_needed_headroom(VxlanPriv& v, const Device* lower) {
  std::uint32_t below = ETH_HLEN;
  if (lower) {
    const bool ether = lower->hw_type() == ARPHRD_ETHER || lower->hw_type() == ARPHRD_LOOPBACK;
    below = (ether ? ETH_HLEN : 0) + lower->kind().needed_headroom(*lower);
  }
  v.needed_headroom = below + v.conf.headroom(v.conf.ipv6() || (v.conf.flags & kMetadata));
}

}  // namespace

const std::vector<Device*>& vx::net_devices(Namespace& net) {
  return net_list(net).devs;
}

AttrPolicy Vxlan::policy() const {
  return kPolicy;
}

Result<void> Vxlan::validate(Control&, const LinkRequest& req) const {
  IFCORE_TRY(check_ether_address(req));
  // Linux: vxlan_validate — the mtu in range, and a create or a change that names the kind
  // needs its data.
  if (req.mtu && (*req.mtu < 68 || *req.mtu > 65535))
    return fail(EINVAL, "MTU must be between 68 and 65535");
  if (!req.has_info_data)
    return fail(EINVAL, "Required attributes not provided to perform the operation");
  return ok();
}

Result<Device*> Vxlan::new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const {
  Conf c;
  IFCORE_TRY(nl2conf(c, req.info_data, false));
  // Linux: vxlan_newlink — the link namespace (rtnl_newlink_link_net).
  Namespace* net = &ns;
  if (req.link_ns_name) {
    net = ctl.find_namespace(*req.link_ns_name);
    if (!net) return fail(EINVAL, "namespace \"{}\" does not exist", *req.link_ns_name);
    IFCORE_TRY(ctl.check_covers(*net));
  }
  Device* lower = nullptr;
  IFCORE_TRY(check_conf(ctl, *net, ns, c, nullptr, &lower));
  auto dev = ctl.alloc_device(*this, ns);
  dev->set_mtu_range_locked(ctl, 68, 65535);
  // Linux: vxlan_dev_configure — under a lower device, its mtu less the headers.
  if (lower) {
    std::uint32_t room = c.headroom();
    dev->set_mtu_locked(ctl, lower->mtu() > room + 68 ? lower->mtu() - room : 68);
  }
  // Linux: a vxlan device keeps its carrier on and has no link state (operstate UNKNOWN).
  dev->set_operstate_locked(ctl, IF_OPER_UNKNOWN);
  auto priv = std::make_unique<VxlanPriv>();
  priv->conf = c;
  priv->net = net;
  if (lower) priv->lower = Ref(*lower, "vxlan");
  set_needed_headroom(*priv, lower);
  dev->set_priv(std::move(priv));
  IFCORE_TRY(ctl.apply_create_attrs(*dev, req));
  // Linux: vxlan_config_apply — an mtu given at creation comes under the lower's too.
  if (lower) {
    std::uint32_t room = c.headroom();
    std::uint32_t max = lower->mtu() > room + 68 ? lower->mtu() - room : 68;
    if (dev->mtu() > max) dev->set_mtu_locked(ctl, max);
  }
  auto r = ctl.register_device(std::move(dev), req.name.value_or("vxlan%d"), req.ifindex);
  if (!r) return r;
  net_list(*net).devs.push_back(*r);  // out again in uninit
  if (lower) {
    if (auto l = ctl.link_upper(*lower, **r, /*master=*/false); !l) {
      (void)ctl.delete_link(**r);
      return fail(l.error());
    }
  }
  // Linux: __vxlan_dev_create configures the device (rtnl_configure_link: announced now),
  // then adds and announces its default entry.
  (void)ctl.notify(EventInfo{NetdevEvent::Configured, **r});
  vx::fdb_add_default(ctl, **r, *vxlan_of(**r));
  return r;
}

Kind::Undo Vxlan::save_link(Device& dev) const {
  const VxlanPriv& v = *vxlan_of(dev);
  Device* d = &dev;
  return [d, conf = v.conf, lower = v.lower.get(), mtu = dev.mtu(),
          headroom = v.needed_headroom](Control& ctl) -> Result<void> {
    VxlanPriv& w = *vxlan_of(*d);
    d->set_mtu_locked(ctl, mtu);
    if (w.lower.get() != lower) {
      if (w.lower) ctl.unlink_upper(*w.lower, *d);
      w.lower.reset();
      if (lower) {  // the lower it had: still registered, as the request's steps took no device
        IFCORE_TRY(ctl.link_upper(*lower, *d, /*master=*/false));
        w.lower = Ref(*lower, "vxlan");
      }
    }
    w.conf = conf;
    w.needed_headroom = headroom;
    (void)ctl.notify(EventInfo{NetdevEvent::ChangeInfoData, *d});
    return ok();
  };
}

Result<void> Vxlan::change_link(Control& ctl, Device& dev, const LinkRequest& req) const {
  VxlanPriv& v = *vxlan_of(dev);
  Conf c = v.conf;
  IFCORE_TRY(nl2conf(c, req.info_data, true));
  Device* lower = nullptr;
  IFCORE_TRY(check_conf(ctl, *v.net, dev.ns(), c, &dev, &lower));
  if (lower != v.lower.get()) {
    if (v.lower) ctl.unlink_upper(*v.lower, dev);
    v.lower.reset();
    if (lower) {
      IFCORE_TRY(ctl.link_upper(*lower, dev, /*master=*/false));
      v.lower = Ref(*lower, "vxlan");
    }
  }
  v.conf = c;
  set_needed_headroom(v, lower);
  // Linux: vxlan_config_apply on a change — under a lower device, an mtu above its less
  // the headers comes down to it (set directly: no NETDEV_CHANGEMTU).
  if (lower) {
    const std::uint32_t room = c.headroom();
    const std::uint32_t max = lower->mtu() > room + 68 ? lower->mtu() - room : 68;
    if (dev.mtu() > max) dev.set_mtu_locked(ctl, max);
  }
  (void)ctl.notify(EventInfo{NetdevEvent::ChangeInfoData, dev});
  return ok();
}

// Linux: vxlan_change_mtu — under a lower device, at most its mtu less the headers the
// device adds (EINVAL alone); without one, the device's range alone.
Result<void> Vxlan::change_mtu(Control&, Device& dev, std::uint32_t mtu) const {
  const VxlanPriv* v = vxlan_of(dev);
  if (!v || !v->lower) return ok();
  const std::uint32_t room = v->conf.headroom();
  if (mtu + room > v->lower->mtu())
    return fail_log_only(EINVAL, "vxlan mtu {} exceeds the mtu {} of lower device \"{}\" less {}",
                         mtu, v->lower->mtu(), v->lower->name(), room);
  return ok();
}

// Linux: vxlan_setup keeps the legacy limit; vxlan_dev_configure inherits its lower's.
std::uint32_t Vxlan::tso_max_size(const Device& dev) const {
  const auto& lowers = dev.lowers_locked();
  return lowers.empty() ? kLegacyTsoMaxSize : lowers.front()->kind().tso_max_size(*lowers.front());
}

std::uint32_t Vxlan::needed_headroom(const Device& dev) const {
  const VxlanPriv* v = vxlan_of(dev);
  return v ? v->needed_headroom : 0;
}

AttrList Vxlan::fill_info(const Device& dev) const {
  const Conf& c = vxlan_of(dev)->conf;
  auto bit = [&](std::uint32_t b) { return static_cast<std::uint8_t>((c.flags & b) != 0); };
  AttrList out;
  out.push_back(Attr::u32(IFLA_VXLAN_ID, c.vni));
  if (!c.remote.empty())
    out.push_back(
        Attr::binary(c.remote.is_v4() ? IFLA_VXLAN_GROUP : IFLA_VXLAN_GROUP6, c.remote.bytes()));
  if (c.lower) out.push_back(Attr::u32(IFLA_VXLAN_LINK, static_cast<std::uint32_t>(c.lower)));
  if (!c.local.empty())
    out.push_back(
        Attr::binary(c.local.is_v4() ? IFLA_VXLAN_LOCAL : IFLA_VXLAN_LOCAL6, c.local.bytes()));
  out.push_back(Attr::u8(IFLA_VXLAN_TTL, c.ttl));
  out.push_back(Attr::u8(IFLA_VXLAN_TTL_INHERIT, bit(kTtlInherit)));
  out.push_back(Attr::u8(IFLA_VXLAN_TOS, c.tos));
  out.push_back(Attr::u8(IFLA_VXLAN_DF, c.df));
  out.push_back(Attr::be32(IFLA_VXLAN_LABEL, c.label));
  out.push_back(Attr::u32(kVxlanLabelPolicy, 0));
  out.push_back(Attr::u8(IFLA_VXLAN_LEARNING, bit(kLearn)));
  out.push_back(Attr::u8(IFLA_VXLAN_PROXY, bit(kProxy)));
  out.push_back(Attr::u8(IFLA_VXLAN_RSC, bit(kRsc)));
  out.push_back(Attr::u8(IFLA_VXLAN_L2MISS, bit(kL2miss)));
  out.push_back(Attr::u8(IFLA_VXLAN_L3MISS, bit(kL3miss)));
  out.push_back(Attr::u8(IFLA_VXLAN_COLLECT_METADATA, bit(kMetadata)));
  out.push_back(Attr::u32(IFLA_VXLAN_AGEING, c.ageing));
  out.push_back(Attr::u32(IFLA_VXLAN_LIMIT, c.limit));
  out.push_back(Attr::be16(IFLA_VXLAN_PORT, c.port));
  out.push_back(Attr::u8(IFLA_VXLAN_UDP_CSUM, static_cast<std::uint8_t>(!(c.flags & kZeroCsumTx))));
  out.push_back(Attr::u8(IFLA_VXLAN_UDP_ZERO_CSUM6_TX, bit(kZeroCsum6Tx)));
  out.push_back(Attr::u8(IFLA_VXLAN_UDP_ZERO_CSUM6_RX, bit(kZeroCsum6Rx)));
  out.push_back(Attr::u8(IFLA_VXLAN_REMCSUM_TX, bit(kRemcsumTx)));
  out.push_back(Attr::u8(IFLA_VXLAN_REMCSUM_RX, bit(kRemcsumRx)));
  out.push_back(Attr::u8(kVxlanLocalBypass, bit(kLocalBypass)));
  out.push_back(Attr::binary(IFLA_VXLAN_PORT_RANGE, port_range_bytes(c)));
  if (c.flags & kGbp) out.push_back(Attr::flag(IFLA_VXLAN_GBP));
  if (c.flags & kGpe) out.push_back(Attr::flag(IFLA_VXLAN_GPE));
  if (c.flags & kRemcsumNoPartial) out.push_back(Attr::flag(IFLA_VXLAN_REMCSUM_NOPARTIAL));
  if (c.flags & kVniFilter) out.push_back(Attr::u8(IFLA_VXLAN_VNIFILTER, 1));
  // Linux 6.18: IFLA_VXLAN_RESERVED_BITS, the header bits a packet may not set (struct
  // vxlanhdr, network order): by default all but those the VNI and the extensions asked
  // for use (vxlan_nl2conf; the values as this kernel reports them).
  std::array<std::uint8_t, 8> used = {0x08, 0, 0, 0, 0xff, 0xff, 0xff, 0};
  auto use = [&used](std::array<std::uint8_t, 8> more) {
    for (std::size_t i = 0; i < used.size(); ++i) used[i] |= more[i];
  };
  if (c.flags & kGbp) use({0x88, 0xff, 0xff, 0xff, 0, 0, 0, 0});
  if (c.flags & kGpe) use({0x3d, 0, 0, 0xff, 0, 0, 0, 0});
  if (c.flags & kRemcsumRx) use({0, 0x20, 0, 0, 0, 0, 0, 0xff});
  for (std::uint8_t& b : used) b = static_cast<std::uint8_t>(~b);
  out.push_back(Attr::binary(kVxlanReservedBits, used));
  return out;
}

Result<void> Vxlan::open(Control& ctl, Device& dev) const {
  if (auto* v = vxlan_of(dev)) vx::fdb_start_ageing(ctl, dev, *v);  // Linux: vxlan_open
  return ok();
}

void Vxlan::stop(Control& ctl, Device& dev) const {
  if (auto* v = vxlan_of(dev)) {  // Linux: vxlan_stop
    vx::fdb_stop_ageing(ctl, *v);
    vx::fdb_flush(ctl, dev, *v, v->flush_all_at_stop);
  }
}

Result<void> Vxlan::del_link(Control& ctl, Device& dev, UnregisterBatch& batch) const {
  // Linux: vxlan_dellink — every entry flushed (announced before the device goes), the
  // device queued, its lower unlinked (announced; not a lower that goes in the same batch,
  // whose messages stop once it is queued). Queued with its lower, it is flushed later, as
  // Linux's runs from the lower's NETDEV_UNREGISTER: when its own batch closes it (stop),
  // or as it goes (uninit) if it is down.
  VxlanPriv* v = vxlan_of(dev);
  const bool with_lower = v && v->lower && batch.contains(*v->lower);
  if (v && !with_lower) vx::fdb_flush(ctl, dev, *v, true);
  if (v) v->flush_all_at_stop = with_lower;
  batch.add(dev);
  if (v && v->lower && !with_lower) ctl.unlink_upper(*v->lower, dev);
  return ok();
}

void Vxlan::uninit(Control& ctl, Device& dev) const {
  if (auto* v = vxlan_of(dev)) {
    vx::fdb_flush(ctl, dev, *v, true);  // Linux: vxlan_dellink's flush, then vxlan_uninit
    vx::vni_uninit(ctl, dev, *v);
    if (v->age_timer) remove_timer(ctl, v->age_timer);
    v->age_timer = 0;
    v->lower.reset();
    if (v->net) {
      PluginGuard guard(ctl);  // the link namespace's list, maybe not this control's
      auto& devs = net_list(*v->net).devs;
      devs.erase(std::remove(devs.begin(), devs.end(), &dev), devs.end());
    }
  }
}

Result<void> Vxlan::init(Control&, Namespace& ns) {
  (void)net_list(ns);  // made now, under the engine's control, so that no other adds it later
  return ok();
}

Namespace* Vxlan::link_ns(const Device& dev) const {
  const VxlanPriv* v = vxlan_of(dev);
  return v ? v->net : nullptr;
}

void Vxlan::pre_exit(Control& ctl, Namespace& ns) {
  std::vector<Device*> elsewhere;
  for (Device* d : net_devices(ns))
    if (&d->ns() != &ns) elsewhere.push_back(d);
  if (!elsewhere.empty()) (void)ctl.delete_links(elsewhere);
}

void Vxlan::install(Engine& engine) {
  static Vxlan kind;
  engine.register_kind(kind);
  auto ctl = engine.control();
  auto r = ctl.add_pernet(kind);
  if (!r) engine.log(LogLevel::Error, "vxlan: " + r.error().message);
}

}  // namespace ifcore::kinds
