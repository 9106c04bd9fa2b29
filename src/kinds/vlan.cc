// Vlan: Linux net/8021q (vlan_netlink.c: vlan_validate, vlan_newlink, vlan_changelink,
// vlan_fill_info; vlan.c: vlan_device_event) semantics, written for ifcore.
#include "kinds/vlan.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <arpa/inet.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_vlan.h>

#include <array>
#include <cerrno>
#include <map>

#include "ifcore/frame.h"
#include "kinds/common.h"

namespace ifcore::kinds {

namespace {

constexpr std::uint16_t kVidMask = 0x0fff;  // Linux: VLAN_VID_MASK; ids 0..4094
constexpr std::uint32_t kKnownFlags = VLAN_FLAG_REORDER_HDR | VLAN_FLAG_GVRP |
                                      VLAN_FLAG_LOOSE_BINDING | VLAN_FLAG_MVRP |
                                      VLAN_FLAG_BRIDGE_BINDING;

struct VlanPriv final : DevicePriv {
  Ref lower;  // Linux: vlan_dev_real_dev, held with dev_hold
  std::uint16_t id = 0;
  std::uint16_t protocol = ETH_P_8021Q;  // host order
  std::uint32_t flags = VLAN_FLAG_REORDER_HDR;
  std::array<std::uint32_t, 8> ingress{};          // vlan priority -> skb priority
  std::map<std::uint32_t, std::uint8_t> egress;    // skb priority -> vlan priority (non-zero)
  std::uint32_t tso_max_size = Kind::kGsoMaxSize;  // its lower's when it was made
  std::uint32_t needed_headroom = 0;               // likewise
};

// IFLA_VLAN_*_QOS hold a list of IFLA_VLAN_QOS_MAPPING (struct ifla_vlan_qos_mapping);
// kept as bytes (see split_nested).
constexpr AttrPolicyEntry kPolicy[] = {
    {IFLA_VLAN_ID, AttrShape::U16},
    {IFLA_VLAN_FLAGS, AttrShape::Binary, sizeof(ifla_vlan_flags), sizeof(ifla_vlan_flags)},
    {IFLA_VLAN_EGRESS_QOS, AttrShape::Nested},
    {IFLA_VLAN_INGRESS_QOS, AttrShape::Nested},
    {IFLA_VLAN_PROTOCOL, AttrShape::Be16},
};

using QosList = std::vector<ifla_vlan_qos_mapping>;

// Linux: the vlan code reports with NL_SET_ERR_MSG_MOD, which puts the module's name
// (KBUILD_MODNAME "8021q", also when built in) before the text.
tl::unexpected<Error> fail_mod(int code, std::string_view text) {
  return fail(code, fmt::format("8021q: {}", text));
}
// The same for a shared helper's error (find_lower, check_ether_address).
tl::unexpected<Error> fail_mod(Error e) {
  if (!e.message.empty() && !e.log_only) e.message = fmt::format("8021q: {}", e.message);
  return fail(std::move(e));
}

Result<QosList> qos_list(const AttrList& data, std::uint16_t type) {
  QosList out;
  const Attr* a = find_attr(data, type);
  if (!a) return out;
  auto items = split_nested(a->bin, "vlan qos map");
  if (!items) return fail(items.error());
  for (const RawNested& it : *items) {
    // Linux: vlan_validate_qos_map (liberal nla_validate_nested: other types are passed
    // over, a mapping shorter than its struct is ERANGE), then vlan_validate names the map.
    if (it.type != IFLA_VLAN_QOS_MAPPING) continue;
    if (it.data.size() < sizeof(ifla_vlan_qos_mapping))
      return fail_mod(ERANGE, type == IFLA_VLAN_INGRESS_QOS ? "Invalid ingress QOS map"
                                                            : "Invalid egress QOS map");
    out.push_back({load_u32(it.data, 0), load_u32(it.data, 4)});
  }
  return out;
}

// Checks IFLA_INFO_DATA; Linux: vlan_validate's texts.
Result<void> check_data(const AttrList& data) {
  if (auto p = attr_num(data, IFLA_VLAN_PROTOCOL); p && *p != ETH_P_8021Q && *p != ETH_P_8021AD)
    return fail_mod(EPROTONOSUPPORT, "Invalid VLAN protocol");
  if (auto id = attr_num(data, IFLA_VLAN_ID); id && *id >= kVidMask)
    return fail_mod(ERANGE, "Invalid VLAN id");
  if (const Attr* f = find_attr(data, IFLA_VLAN_FLAGS)) {
    std::uint32_t flags = load_u32(f->bin, 0), mask = load_u32(f->bin, 4);
    if (flags & mask & ~kKnownFlags) return fail_mod(EINVAL, "Invalid VLAN flags");
  }
  IFCORE_TRY(qos_list(data, IFLA_VLAN_INGRESS_QOS));
  IFCORE_TRY(qos_list(data, IFLA_VLAN_EGRESS_QOS));
  return ok();
}

// Applies flags and qos maps (Linux: vlan_changelink). `data` was checked.
void apply_data(VlanPriv& v, const AttrList& data) {
  if (const Attr* f = find_attr(data, IFLA_VLAN_FLAGS)) {
    std::uint32_t flags = load_u32(f->bin, 0), mask = load_u32(f->bin, 4);
    v.flags = (v.flags & ~mask) | (flags & mask);
  }
  QosList ingress = qos_list(data, IFLA_VLAN_INGRESS_QOS).value_or(QosList{});
  QosList egress = qos_list(data, IFLA_VLAN_EGRESS_QOS).value_or(QosList{});
  for (const auto& m : ingress) v.ingress[m.from & 7] = m.to;
  for (const auto& m : egress) {
    if (m.to & 7)
      v.egress[m.from] = static_cast<std::uint8_t>(m.to & 7);
    else
      v.egress.erase(m.from);
  }
}

VlanPriv* vlan_of(const Device& dev) {
  return priv_of<VlanPriv>(dev);
}

// Linux: vlan_device_event: a vlan follows its lower device.
class LowerWatch final : public Subscriber {
 public:
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    Device& lower = ev.dev;
    // Concurrent: a device that is neither a vlan nor a lower (no uppers) is nothing to
    // it; the others take the plug-in lock (the vlans' state).
    if (lower.uppers_locked().empty() && !vlan_of(lower)) return ok();
    PluginGuard guard(ctl);
    // PreChangeMtu of a vlan itself: Linux vlan_dev_change_mtu refuses more than the lower's.
    if (ev.event == NetdevEvent::PreChangeMtu) {
      // The errno alone (log_only).
      if (auto* v = vlan_of(lower); v && v->lower && ev.new_mtu > v->lower->mtu())
        return fail_log_only(ERANGE,
                             "vlan \"{}\": mtu {} exceeds the mtu {} of lower device \"{}\"",
                             lower.name(), ev.new_mtu, v->lower->mtu(), v->lower->name());
      return ok();
    }
    // The rest of the subscription's events (install): ChangeMtu, Up, Down, Change.
    std::vector<Device*> vlans;
    for (Device* u : lower.uppers_locked())
      if (vlan_of(*u) && u->state() == RegState::Registered) vlans.push_back(u);
    for (Device* v : vlans) {
      bool loose = vlan_of(*v)->flags & VLAN_FLAG_LOOSE_BINDING;
      switch (ev.event) {
        case NetdevEvent::ChangeMtu:
          if (v->mtu() > lower.mtu()) (void)ctl.set_mtu(*v, lower.mtu());
          break;
        case NetdevEvent::Up:
          // Linux (vlan_device_event, NETDEV_UP): the vlans that are down come up with
          // their lower (loose ones stay down) and take its state; the others are left.
          if (v->is_up()) break;
          if (!loose) (void)ctl.change_flags(*v, v->flags() | IFF_UP);
          transfer_carrier(ctl, lower, *v);
          break;
        case NetdevEvent::Down:
          // Linux (NETDEV_DOWN): only the vlans that are up and not loose go down, and
          // take the lower's state. A vlan already down is left alone: when the lower is
          // deleted, its 1000 vlans went down in the same batch just before it.
          if (!v->is_up() || loose) break;
          (void)ctl.change_flags(*v, v->flags() & ~IFF_UP);
          transfer_carrier(ctl, lower, *v);
          break;
        case NetdevEvent::Change:  // every vlan takes the lower's state
          transfer_carrier(ctl, lower, *v);
          break;
        default:
          break;
      }
    }
    return ok();
  }
};

}  // namespace

AttrPolicy Vlan::policy() const {
  return kPolicy;
}

Result<void> Vlan::validate(Control&, const LinkRequest& req) const {
  if (auto a = check_ether_address(req); !a) return fail_mod(std::move(a).error());
  if (!req.has_info_data) return fail_mod(EINVAL, "VLAN properties not specified");
  return check_data(req.info_data);
}

Result<Device*> Vlan::new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const {
  auto id = attr_num(req.info_data, IFLA_VLAN_ID);
  if (!id) return fail_mod(EINVAL, "VLAN id not specified");
  auto found = find_lower(ctl, ns, req);
  if (!found) return fail_mod(found.error());
  Device& lower = **found;
  auto proto =
      static_cast<std::uint16_t>(attr_num(req.info_data, IFLA_VLAN_PROTOCOL).value_or(ETH_P_8021Q));
  // Linux: vlan_check_real_dev. Loopback is VLAN-challenged; ifcore also refuses devices
  // that are not Ethernet (the vlan takes its lower's 6-byte address).
  if ((lower.flags() & IFF_LOOPBACK) || lower.hw_type() != ARPHRD_ETHER)
    return fail_mod(EOPNOTSUPP, "VLANs not supported on device");
  if (find_vlan_hook(lower, proto, static_cast<std::uint16_t>(*id)))
    return fail_mod(EEXIST, "VLAN device already exists");
  // Linux: mtu defaults to the lower's and may not exceed it (vlan_newlink: EINVAL alone).
  if (req.mtu && *req.mtu > lower.mtu())
    return fail_log_only(EINVAL, "vlan mtu {} exceeds the mtu {} of lower device \"{}\"", *req.mtu,
                         lower.mtu(), lower.name());

  auto dev = ctl.alloc_device(*this, ns);
  // Linux: vlan_setup (mtu range 0..ETH_MAX_MTU) and vlan_dev_init (lower's flags and
  // address, carrier from the lower).
  dev->set_mtu_range_locked(ctl, 0, 65535);
  dev->set_mtu_locked(ctl, lower.mtu());
  dev->set_flags_locked(
      ctl, lower.flags() & ~(IFF_UP | IFF_PROMISC | IFF_ALLMULTI | IFF_MASTER | IFF_SLAVE));
  dev->set_address_locked(ctl, lower.address());
  dev->set_broadcast_locked(ctl, lower.broadcast());
  // The operstate is left as registration makes it (Linux: linkwatch_init_dev derives it
  // only for a device without carrier; one with carrier keeps IF_OPER_UNKNOWN until a
  // carrier change reaches the link watch, and an up vlan on a dummy says `state UNKNOWN`).
  dev->set_carrier_locked(ctl, lower.carrier() && lower.is_up());
  dev->set_link_locked(ctl, &lower);
  auto priv = std::make_unique<VlanPriv>();
  priv->lower = Ref(lower, "vlan");
  priv->tso_max_size = lower.kind().tso_max_size(lower);  // Linux: vlan_dev_init
  priv->needed_headroom = lower.kind().needed_headroom(lower);
  priv->id = static_cast<std::uint16_t>(*id);
  priv->protocol = proto;
  apply_data(*priv, req.info_data);
  dev->set_priv(std::move(priv));
  IFCORE_TRY(ctl.apply_create_attrs(*dev, req));
  auto r = ctl.register_device(std::move(dev), req.name.value_or("vlan%d"), req.ifindex);
  if (!r) return r;
  if (auto l = ctl.link_upper(lower, **r, /*master=*/false); !l) {
    (void)ctl.delete_link(**r);
    return fail(l.error());
  }
  // Linux: vlan_vid_add / vlan_group_set_device: the lower's receive path finds it.
  add_vlan_hook(ctl, lower, VlanHook{proto, static_cast<std::uint16_t>(*id), *r});
  return r;
}

Kind::Undo Vlan::save_link(Device& dev) const {
  const VlanPriv& v = *vlan_of(dev);
  Device* d = &dev;
  return
      [d, flags = v.flags, ingress = v.ingress, egress = v.egress](Control& ctl) -> Result<void> {
        VlanPriv& w = *vlan_of(*d);
        w.flags = flags;
        w.ingress = ingress;
        w.egress = egress;
        (void)ctl.notify(EventInfo{NetdevEvent::ChangeInfoData, *d});
        return ok();
      };
}

Result<void> Vlan::change_link(Control& ctl, Device& dev, const LinkRequest& req) const {
  // Linux: vlan_changelink changes flags and qos maps; the id and protocol stay.
  IFCORE_TRY(check_data(req.info_data));
  apply_data(*vlan_of(dev), req.info_data);
  (void)ctl.notify(EventInfo{NetdevEvent::ChangeInfoData, dev});
  return ok();
}

std::uint32_t Vlan::tso_max_size(const Device& dev) const {
  const VlanPriv* v = vlan_of(dev);
  return v ? v->tso_max_size : kGsoMaxSize;
}

std::uint32_t Vlan::needed_headroom(const Device& dev) const {
  const VlanPriv* v = vlan_of(dev);
  return v ? v->needed_headroom : 0;
}

AttrList Vlan::fill_info(const Device& dev) const {
  // Linux: vlan_fill_info.
  const VlanPriv& v = *vlan_of(dev);
  AttrList out;
  out.push_back(Attr::be16(IFLA_VLAN_PROTOCOL, v.protocol));
  out.push_back(Attr::u16(IFLA_VLAN_ID, v.id));
  if (v.flags) {
    std::vector<std::uint8_t> f;
    store_u32(f, v.flags);
    store_u32(f, ~0u);
    out.push_back(Attr::binary(IFLA_VLAN_FLAGS, f));
  }
  auto mapping = [](std::uint32_t from, std::uint32_t to) {
    std::vector<std::uint8_t> b;
    store_u32(b, from);
    store_u32(b, to);
    return Attr::binary(IFLA_VLAN_QOS_MAPPING, b);
  };
  AttrList ingress, egress;
  for (std::uint32_t i = 0; i < v.ingress.size(); ++i)
    if (v.ingress[i]) ingress.push_back(mapping(i, v.ingress[i]));
  for (auto [from, to] : v.egress) egress.push_back(mapping(from, to));
  if (!ingress.empty()) out.push_back(Attr::nest(IFLA_VLAN_INGRESS_QOS, std::move(ingress)));
  if (!egress.empty()) out.push_back(Attr::nest(IFLA_VLAN_EGRESS_QOS, std::move(egress)));
  return out;
}

Result<void> Vlan::open(Control& ctl, Device& dev) const {
  // Linux: vlan_dev_open: ENETDOWN while the lower is down (unless loose binding), alone.
  const VlanPriv& v = *vlan_of(dev);
  if (v.lower && !v.lower->is_up() && !(v.flags & VLAN_FLAG_LOOSE_BINDING))
    return fail_log_only(ENETDOWN, "vlan \"{}\": lower device \"{}\" is down", dev.name(),
                         v.lower->name());
  if (v.lower) transfer_carrier(ctl, *v.lower, dev);
  return ok();
}

bool Vlan::xmit(Device& dev, Frame&& f) const {
  // Linux: vlan_dev_hard_start_xmit: insert the tag (id and protocol are fixed at
  // creation, so they are read without the lock) and send on the lower device.
  const VlanPriv* v = vlan_of(dev);
  Ref lower = hold_registered([&] { return dev.link(); });
  if (!v || !lower) return false;
  const std::uint8_t tag[4] = {
      static_cast<std::uint8_t>(v->protocol >> 8), static_cast<std::uint8_t>(v->protocol),
      static_cast<std::uint8_t>(v->id >> 8), static_cast<std::uint8_t>(v->id)};
  f.bytes.insert(f.bytes.begin() + 12, tag, tag + 4);
  return transmit(*lower, std::move(f));
}

void Vlan::uninit(Control& ctl, Device& dev) const {
  if (auto* v = vlan_of(dev); v && v->lower)
    remove_vlan_hook(ctl, *v->lower, VlanHook{v->protocol, v->id, &dev});
  dev.set_link_locked(ctl, nullptr);
  if (auto* v = vlan_of(dev)) v->lower.reset();
}

void Vlan::install(Engine& engine) {
  static Vlan kind;
  static LowerWatch watch;
  engine.register_kind(kind);
  auto ctl = engine.control();
  (void)ctl.subscribe(
      watch, SubscribeOptions{"vlan", 0, false,
                              events_of(NetdevEvent::PreChangeMtu, NetdevEvent::ChangeMtu,
                                        NetdevEvent::Up, NetdevEvent::Down, NetdevEvent::Change),
                              true});  // the plug-in lock taken above
}

}  // namespace ifcore::kinds
