// Macvlan: Linux drivers/net/macvlan.c semantics (macvlan_validate,
// macvlan_common_newlink, macvlan_changelink, macvlan_fill_info, macvlan_device_event),
// written for ifcore.
#include "kinds/macvlan.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>

#include <algorithm>
#include <cerrno>

#include "ifcore/frame.h"
#include "kinds/common.h"

namespace ifcore::kinds {

namespace {

constexpr std::uint32_t kDefaultBcQueueLen = 1000;  // Linux: MACVLAN_DEFAULT_BC_QUEUE_LEN

struct MacvlanPriv final : DevicePriv {
  Ref lower;  // the real lower device (never a macvlan), held as Linux does
  std::uint32_t mode = MACVLAN_MODE_VEPA;
  std::uint16_t flags = 0;
  std::vector<HwAddr> sources;  // source mode's allowed source addresses
  std::uint32_t bc_queue_len = kDefaultBcQueueLen;
  std::uint32_t tso_max_size = Kind::kGsoMaxSize;  // its lower's when it was made
};

MacvlanPriv* macvlan_of(const Device& dev) {
  return priv_of<MacvlanPriv>(dev);
}

constexpr AttrPolicyEntry kPolicy[] = {
    {IFLA_MACVLAN_MODE, AttrShape::U32},
    {IFLA_MACVLAN_FLAGS, AttrShape::U16},
    {IFLA_MACVLAN_MACADDR_MODE, AttrShape::U32},
    {IFLA_MACVLAN_MACADDR, AttrShape::Binary, 6, 6},
    {IFLA_MACVLAN_MACADDR_DATA, AttrShape::Nested},  // a list of IFLA_MACVLAN_MACADDR
    {IFLA_MACVLAN_MACADDR_COUNT, AttrShape::U32},
    {IFLA_MACVLAN_BC_QUEUE_LEN, AttrShape::U32},
    {IFLA_MACVLAN_BC_QUEUE_LEN_USED, AttrShape::U32},
};

Result<std::vector<HwAddr>> address_list(const AttrList& data) {
  std::vector<HwAddr> out;
  const Attr* a = find_attr(data, IFLA_MACVLAN_MACADDR_DATA);
  if (!a) return out;
  auto items = split_nested(a->bin, "macvlan address list");
  if (!items) return fail(items.error());
  for (const RawNested& it : *items) {
    if (it.type != IFLA_MACVLAN_MACADDR || it.data.size() != 6)
      return fail_log_only(EINVAL,
                           "macvlan address list: attribute type {} of {} bytes is not an address",
                           it.type, it.data.size());
    HwAddr addr(it.data);
    if (!addr.is_valid_ether())
      return fail_log_only(EADDRNOTAVAIL, "macvlan address {} is not a valid unicast address",
                           addr.to_string());
    out.push_back(addr);
  }
  return out;
}

// Linux: macvlan_validate. Like every macvlan error, the errno alone: macvlan_validate,
// macvlan_changelink(_sources) and macvlan_common_newlink set no extack message (log_only).
Result<void> check_data(const AttrList& data) {
  if (auto f = attr_num(data, IFLA_MACVLAN_FLAGS);
      f && (*f & ~(MACVLAN_FLAG_NOPROMISC | MACVLAN_FLAG_NODST)))
    return fail_log_only(EINVAL, "macvlan flags {:#x} are not known", *f);
  if (auto m = attr_num(data, IFLA_MACVLAN_MODE)) {
    switch (*m) {
      case MACVLAN_MODE_PRIVATE:
      case MACVLAN_MODE_VEPA:
      case MACVLAN_MODE_BRIDGE:
      case MACVLAN_MODE_PASSTHRU:
      case MACVLAN_MODE_SOURCE:
        break;
      default:
        return fail_log_only(EINVAL, "macvlan mode {} is not known", *m);
    }
  }
  if (auto m = attr_num(data, IFLA_MACVLAN_MACADDR_MODE); m && *m > MACVLAN_MACADDR_SET)
    return fail_log_only(EINVAL, "macvlan address mode {} is not known", *m);
  if (const Attr* a = find_attr(data, IFLA_MACVLAN_MACADDR)) {
    HwAddr addr(a->bin);
    if (!addr.is_valid_ether())
      return fail_log_only(EADDRNOTAVAIL, "macvlan address {} is not a valid unicast address",
                           addr.to_string());
  }
  IFCORE_TRY(address_list(data));
  if (find_attr(data, IFLA_MACVLAN_MACADDR_COUNT))
    return fail_log_only(EINVAL, "macvlan address count is read-only");
  if (find_attr(data, IFLA_MACVLAN_BC_QUEUE_LEN_USED))
    return fail_log_only(EINVAL, "macvlan broadcast queue length used is read-only");
  return ok();
}

// Linux: macvlan_eth_hash — the bucket of a source address in its port's table of 256: the
// address's six bytes read as the high bytes of a little-endian u64, hashed with hash_64
// (the golden-ratio multiply, its top 8 bits).
unsigned source_bucket(const HwAddr& addr) {
  auto b = addr.bytes();
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 6 && i < b.size(); ++i) value |= std::uint64_t{b[i]} << (16 + 8 * i);
  return static_cast<unsigned>((value * 0x61C8864680B583EBull) >> 56);
}

// Linux: macvlan_changelink_sources. `data` was checked.
Result<void> change_sources(MacvlanPriv& v, std::uint32_t mode, const AttrList& data) {
  const Attr* one = find_attr(data, IFLA_MACVLAN_MACADDR);
  switch (mode) {
    case MACVLAN_MACADDR_ADD:
    case MACVLAN_MACADDR_DEL: {
      if (!one) return fail_log_only(EINVAL, "macvlan address mode {} needs an address", mode);
      HwAddr addr(one->bin);
      auto it = std::find(v.sources.begin(), v.sources.end(), addr);
      if (mode == MACVLAN_MACADDR_ADD && it == v.sources.end()) v.sources.push_back(addr);
      if (mode == MACVLAN_MACADDR_DEL && it != v.sources.end()) v.sources.erase(it);
      return ok();
    }
    case MACVLAN_MACADDR_FLUSH:
      v.sources.clear();
      return ok();
    default: {  // MACVLAN_MACADDR_SET
      auto list = address_list(data);
      if (!list) return fail(list.error());
      v.sources.clear();
      for (const HwAddr& a : *list)
        if (std::find(v.sources.begin(), v.sources.end(), a) == v.sources.end())
          v.sources.push_back(a);
      return ok();
    }
  }
}

// Macvlans on the real lower device `lower`.
std::vector<Device*> macvlans_on(const Device& lower) {
  std::vector<Device*> out;
  for (Device* u : lower.uppers_locked())
    if (macvlan_of(*u) && u->state() == RegState::Registered) out.push_back(u);
  return out;
}

// Linux: macvlan_handle_frame, the lower's rx_handler: a unicast frame goes to the
// macvlan with its destination address (or stays with the lower); a broadcast or multicast
// frame goes to every macvlan that is up, and to the lower too.
class MacvlanRx final : public RxHandler {
 public:
  bool handle(Device&, Frame& f, const std::vector<Device*>& macvlans) const override {
    HwAddr dst = frame_dst(f);
    if (is_group_address(dst)) {
      for (Device* m : macvlans)
        if (m->is_up()) receive(*m, f.copy());
      return false;
    }
    for (Device* m : macvlans)
      if (m->address() == dst) {
        receive(*m, std::move(f));
        return true;
      }
    return false;
  }
};

const MacvlanRx kRx;

// Publishes the lower's receive handler with its macvlans (none: no handler).
// Context: control lock.
void refresh_rx(Control& ctl, Device& lower) {
  std::vector<Device*> ms = macvlans_on(lower);
  const RxHandler* h = ms.empty() ? nullptr : &kRx;
  set_rx_handler(ctl, lower, h, std::move(ms));
}

// Linux: macvlan_device_event: mtu clamp and carrier transfer from the lower.
class LowerWatch final : public Subscriber {
 public:
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    // The subscription's events (install): ChangeMtu, and Up, Down, Change, after which
    // the macvlans take the lower's state. A device without uppers has no macvlan: no lock.
    if (ev.dev.uppers_locked().empty()) return ok();
    PluginGuard guard(ctl);  // the macvlans' state
    for (Device* m : macvlans_on(ev.dev)) {
      if (ev.event == NetdevEvent::ChangeMtu) {
        if (m->mtu() > ev.dev.mtu()) (void)ctl.set_mtu(*m, ev.dev.mtu());
      } else {
        transfer_carrier(ctl, ev.dev, *m);
      }
    }
    return ok();
  }
};

}  // namespace

// Linux: macvlan_change_mtu — above the lower device's mtu is EINVAL, no extack.
Result<void> Macvlan::change_mtu(Control&, Device& dev, std::uint32_t mtu) const {
  const MacvlanPriv* m = macvlan_of(dev);
  if (m && m->lower && mtu > m->lower->mtu())
    return fail_log_only(EINVAL, "macvlan mtu {} exceeds the mtu {} of lower device \"{}\"", mtu,
                         m->lower->mtu(), m->lower->name());
  return ok();
}

AttrPolicy Macvlan::policy() const {
  return kPolicy;
}

bool Macvlan::has_macvlans(const Device& dev) {
  return !macvlans_on(dev).empty();
}

Result<void> Macvlan::validate(Control&, const LinkRequest& req) const {
  IFCORE_TRY(check_ether_address(req));
  return check_data(req.info_data);
}

Result<Device*> Macvlan::new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const {
  auto found = find_lower(ctl, ns, req);
  // Linux: macvlan_common_newlink answers a missing or unknown link with its errno alone
  // (a vlan's explains it: find_lower's messages are vlan_newlink's).
  if (!found) return fail_log_only(found.error());
  Device* lower = *found;
  // Linux: a macvlan on a macvlan goes on the real lower device.
  if (auto* lv = macvlan_of(*lower); lv && lv->lower) lower = lv->lower.get();
  // Linux: macvlan_port_create: Ethernet and not loopback (EINVAL); the lower's receive
  // path must be free (a bridge port's is taken: EBUSY); macvlan_common_newlink: an mtu
  // above the lower's is EINVAL. All three are the errno alone (log_only).
  if (lower->hw_type() != ARPHRD_ETHER || (lower->flags() & IFF_LOOPBACK))
    return fail_log_only(EINVAL, "device \"{}\" cannot be a macvlan lower device", lower->name());
  if (lower->master())
    return fail_log_only(EBUSY, "device \"{}\" is a port of \"{}\"", lower->name(),
                         lower->master()->name());
  if (req.mtu && *req.mtu > lower->mtu())
    return fail_log_only(EINVAL, "macvlan mtu {} exceeds the mtu {} of lower device \"{}\"",
                         *req.mtu, lower->mtu(), lower->name());
  auto priv = std::make_unique<MacvlanPriv>();
  priv->mode = static_cast<std::uint32_t>(
      attr_num(req.info_data, IFLA_MACVLAN_MODE).value_or(MACVLAN_MODE_VEPA));
  priv->flags = static_cast<std::uint16_t>(attr_num(req.info_data, IFLA_MACVLAN_FLAGS).value_or(0));
  if (auto q = attr_num(req.info_data, IFLA_MACVLAN_BC_QUEUE_LEN))
    priv->bc_queue_len = static_cast<std::uint32_t>(*q);
  // Linux: only one macvlan in passthru mode, and only when it is alone on the lower.
  auto siblings = macvlans_on(*lower);
  for (Device* s : siblings)
    if (macvlan_of(*s)->mode == MACVLAN_MODE_PASSTHRU)
      return fail_log_only(EINVAL, "device \"{}\" already has a passthru macvlan \"{}\"",
                           lower->name(), s->name());
  if (priv->mode == MACVLAN_MODE_PASSTHRU && !siblings.empty())
    return fail_log_only(EINVAL, "device \"{}\" has macvlans: passthru mode needs it alone",
                         lower->name());
  if (auto mm = attr_num(req.info_data, IFLA_MACVLAN_MACADDR_MODE)) {
    if (priv->mode != MACVLAN_MODE_SOURCE)
      return fail_log_only(EINVAL, "macvlan address mode needs source mode");
    // Linux: macvlan_common_newlink applies any address mode (add, del, flush, set) to the
    // new device's empty list, as macvlan_changelink_sources does on a change.
    IFCORE_TRY(change_sources(*priv, static_cast<std::uint32_t>(*mm), req.info_data));
  }

  auto dev = ctl.alloc_device(*this, ns);
  // Linux: mtu defaults to the lower's; range 68..the lower's maximum.
  dev->set_mtu_range_locked(ctl, 68, lower->max_mtu());
  dev->set_mtu_locked(ctl, lower->mtu());
  if (priv->mode == MACVLAN_MODE_PASSTHRU) dev->set_address_locked(ctl, lower->address());
  dev->set_carrier_locked(ctl, lower->carrier() && lower->is_up());
  dev->set_link_locked(ctl, lower);
  priv->lower = Ref(*lower, "macvlan");
  priv->tso_max_size = lower->kind().tso_max_size(*lower);  // Linux: macvlan_init
  dev->set_priv(std::move(priv));
  IFCORE_TRY(ctl.apply_create_attrs(*dev, req));
  auto r = ctl.register_device(std::move(dev), req.name.value_or("macvlan%d"), req.ifindex);
  if (!r) return r;
  if (auto l = ctl.link_upper(*lower, **r, /*master=*/false); !l) {
    (void)ctl.delete_link(**r);
    return fail(l.error());
  }
  refresh_rx(ctl, *lower);
  ctl.fire_link_watch(**r);  // Linux: macvlan_common_newlink, after the carrier's transfer
  return r;
}

Kind::Undo Macvlan::save_link(Device& dev) const {
  const MacvlanPriv& cur = *macvlan_of(dev);
  Device* d = &dev;
  return [d, mode = cur.mode, flags = cur.flags, sources = cur.sources,
          bc = cur.bc_queue_len](Control& ctl) -> Result<void> {
    MacvlanPriv& v = *macvlan_of(*d);
    v.mode = mode;
    v.flags = flags;
    v.sources = sources;
    v.bc_queue_len = bc;
    (void)ctl.notify(EventInfo{NetdevEvent::ChangeInfoData, *d});
    return ok();
  };
}

Result<void> Macvlan::change_link(Control& ctl, Device& dev, const LinkRequest& req) const {
  // Linux: macvlan_changelink. Checked whole first, then applied to a copy.
  IFCORE_TRY(check_data(req.info_data));
  MacvlanPriv& cur = *macvlan_of(dev);
  std::uint32_t mode = cur.mode;
  if (auto m = attr_num(req.info_data, IFLA_MACVLAN_MODE)) {
    mode = static_cast<std::uint32_t>(*m);
    if ((mode == MACVLAN_MODE_PASSTHRU) != (cur.mode == MACVLAN_MODE_PASSTHRU))
      return fail_log_only(EINVAL, "macvlan \"{}\": passthru mode cannot be set or cleared",
                           dev.name());
  }
  std::vector<HwAddr> sources = cur.sources;
  if (cur.mode == MACVLAN_MODE_SOURCE && mode != MACVLAN_MODE_SOURCE) sources.clear();
  if (auto mm = attr_num(req.info_data, IFLA_MACVLAN_MACADDR_MODE)) {
    if (mode != MACVLAN_MODE_SOURCE)
      return fail_log_only(EINVAL, "macvlan \"{}\": address mode needs source mode", dev.name());
    MacvlanPriv tmp;
    tmp.sources = sources;
    IFCORE_TRY(change_sources(tmp, static_cast<std::uint32_t>(*mm), req.info_data));
    sources = std::move(tmp.sources);
  }
  cur.mode = mode;
  cur.sources = std::move(sources);
  if (auto f = attr_num(req.info_data, IFLA_MACVLAN_FLAGS))
    cur.flags = static_cast<std::uint16_t>(*f);
  if (auto q = attr_num(req.info_data, IFLA_MACVLAN_BC_QUEUE_LEN))
    cur.bc_queue_len = static_cast<std::uint32_t>(*q);
  (void)ctl.notify(EventInfo{NetdevEvent::ChangeInfoData, dev});
  return ok();
}

std::uint32_t Macvlan::tso_max_size(const Device& dev) const {
  const MacvlanPriv* v = macvlan_of(dev);
  return v ? v->tso_max_size : kGsoMaxSize;
}

AttrList Macvlan::fill_info(const Device& dev) const {
  // Linux: macvlan_fill_info.
  const MacvlanPriv& v = *macvlan_of(dev);
  AttrList out;
  out.push_back(Attr::u32(IFLA_MACVLAN_MODE, v.mode));
  out.push_back(Attr::u16(IFLA_MACVLAN_FLAGS, v.flags));
  out.push_back(
      Attr::u32(IFLA_MACVLAN_MACADDR_COUNT, static_cast<std::uint32_t>(v.sources.size())));
  if (!v.sources.empty()) {
    // Linux: macvlan_fill_info_macaddr walks the port's source hash bucket by bucket, each
    // bucket newest first (hlist_add_head_rcu).
    std::vector<std::size_t> order(v.sources.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return source_bucket(v.sources[a]) < source_bucket(v.sources[b]);
    });
    AttrList list;
    for (std::size_t i : order)
      list.push_back(Attr::binary(IFLA_MACVLAN_MACADDR, v.sources[i].bytes()));
    out.push_back(Attr::nest(IFLA_MACVLAN_MACADDR_DATA, std::move(list)));
  }
  out.push_back(Attr::u32(IFLA_MACVLAN_BC_QUEUE_LEN, v.bc_queue_len));
  // Linux: the port's queue is as long as the longest any of its macvlans asked for.
  std::uint32_t used = v.bc_queue_len;
  if (v.lower)
    for (Device* s : macvlans_on(*v.lower)) used = std::max(used, macvlan_of(*s)->bc_queue_len);
  out.push_back(Attr::u32(IFLA_MACVLAN_BC_QUEUE_LEN_USED, used));
  return out;
}

namespace {

// Linux: macvlan_addr_busy — the lower's own address, or that of another macvlan of the
// lower that is up (those in the port's hash); never in passthru mode.
Result<void> check_addr_free(const Device& dev, const HwAddr& addr) {
  const MacvlanPriv* v = macvlan_of(dev);
  if (!v || !v->lower || v->mode == MACVLAN_MODE_PASSTHRU) return ok();
  bool busy = v->lower->address() == addr;
  for (const Device* m : macvlans_on(*v->lower))
    busy = busy || (m != &dev && m->is_up() && m->address() == addr);
  if (busy)
    return fail_log_only(EADDRINUSE, "address {} is in use on \"{}\"", addr.to_string(),
                         v->lower->name());
  return ok();
}

}  // namespace

Result<void> Macvlan::check_address(const Device& dev, const HwAddr& addr) const {
  return check_addr_free(dev, addr);  // Linux: macvlan_set_mac_address
}

Result<void> Macvlan::open(Control& ctl, Device& dev) const {
  IFCORE_TRY(check_addr_free(dev, dev.address()));  // Linux: macvlan_open
  if (auto* v = macvlan_of(dev); v && v->lower) transfer_carrier(ctl, *v->lower, dev);
  return ok();
}

bool Macvlan::xmit(Device& dev, Frame&& f) const {
  // Linux: macvlan_start_xmit; ifcore sends every frame down the lower (VEPA), whatever
  // the mode: a macvlan reaches its siblings through what is beyond the lower.
  Ref lower = hold_registered([&] { return dev.link(); });
  if (!lower) return false;
  return transmit(*lower, std::move(f));
}

void Macvlan::uninit(Control& ctl, Device& dev) const {
  if (auto* v = macvlan_of(dev); v && v->lower && v->lower->state() == RegState::Registered)
    refresh_rx(ctl, *v->lower);  // `dev` is unregistering: macvlans_on leaves it out
  dev.set_link_locked(ctl, nullptr);
  if (auto* v = macvlan_of(dev)) v->lower.reset();
}

void Macvlan::install(Engine& engine) {
  static Macvlan kind;
  static LowerWatch watch;
  engine.register_kind(kind);
  auto ctl = engine.control();
  (void)ctl.subscribe(
      watch, SubscribeOptions{"macvlan", 0, false,
                              events_of(NetdevEvent::PreChangeMtu, NetdevEvent::ChangeMtu,
                                        NetdevEvent::Up, NetdevEvent::Down, NetdevEvent::Change),
                              true});  // the plug-in lock taken above for a lower
}

}  // namespace ifcore::kinds
