// Single changes to a device, each with its notifications (Linux: dev_open, dev_close,
// dev_change_flags, dev_set_mtu, dev_set_mac_address, dev_change_name, the adjacency
// lists, dev_change_net_namespace).
//
// Lock order: every function here runs under the control lock (a Control).
#include <net/if.h>

#include <linux/if.h>

#include <algorithm>
#include <cassert>
#include <cerrno>

#include "base/rcu.h"
#include "core/engine_impl.h"
#include "core/linkwatch.h"
#include "core/registry.h"

namespace ifcore {

namespace {

// Linux: MAX_NEST_DEV, the deepest stack of upper devices.
constexpr int kMaxNestDepth = 8;
constexpr std::size_t kMaxAltNameLen = 127;  // Linux: ALTIFNAMSIZ - 1

// Whether `upper` is already `lower` or above it, asked from whichever side has fewer
// neighbours (a lower with a thousand vlans is asked from the new vlan's side).
bool is_above_or_same(const Device& lower, const Device& upper) {
  if (lower.uppers_locked().size() <= upper.lowers_locked().size())
    return lower.is_upper_or_self_locked(upper);
  return upper.is_lower_or_self_locked(lower);
}

}  // namespace

Result<void> Control::open(Device& dev, std::uint32_t announce) {
  IFCORE_TRY(check_covers(dev));
  PluginGuard guard(*this, !dev.kind().concurrent());  // the kind's own state
  if (dev.is_up()) return ok();
  auto& impl = engine_->impl();
  IFCORE_TRY(impl.call_chain(*this, EventInfo{NetdevEvent::PreUp, dev}));
  dev.set_flags_locked(*this, dev.flags() | IFF_UP);
  auto r = dev.kind().open(*this, dev);
  if (!r) {
    dev.set_flags_locked(*this, dev.flags() & ~IFF_UP);
    PluginGuard lw(*this);
    impl.linkwatch->open_failed(*this, dev);
    return r;
  }
  dev.set_activated_locked(*this);
  EventInfo up{NetdevEvent::Up, dev};
  up.flags_changed = announce;
  (void)impl.call_chain(*this, up);
  return ok();
}

Result<void> Control::close(Device& dev, std::uint32_t announce) {
  IFCORE_TRY(check_covers(dev));
  PluginGuard guard(*this, !dev.kind().concurrent());  // the kind's own state
  if (!dev.is_up()) return ok();
  auto& impl = engine_->impl();
  Device* one = &dev;
  impl.call_chain_many(*this, NetdevEvent::GoingDown, std::span<Device* const>(&one, 1));
  dev.kind().stop(*this, dev);
  dev.set_flags_locked(*this, dev.flags() & ~IFF_UP);
  impl.call_chain_many(*this, NetdevEvent::Down, std::span<Device* const>(&one, 1), false,
                       announce);
  return ok();
}

Result<void> Control::change_flags(Device& dev, std::uint32_t flags) {
  IFCORE_TRY(check_covers(dev));
  // Linux: __dev_change_flags. Only these flags are the user's to set; IFF_UP goes
  // through open/close; the rest are kept.
  constexpr std::uint32_t kUserFlags = IFF_DEBUG | IFF_NOTRAILERS | IFF_NOARP | IFF_DYNAMIC |
                                       IFF_MULTICAST | IFF_PORTSEL | IFF_AUTOMEDIA | IFF_PROMISC |
                                       IFF_ALLMULTI;
  std::uint32_t old = dev.flags();
  std::uint32_t next = (old & ~kUserFlags) | (flags & kUserFlags);
  // Linux: __dev_notify_flags announces what changed at once, in one message, up or down
  // (with NETDEV_UP or NETDEV_DOWN when IFF_UP changed).
  std::uint32_t announce = (old ^ next) & ~IFF_UP;
  if ((flags ^ old) & IFF_UP) {
    if (flags & IFF_UP) {
      dev.set_flags_locked(*this, next & ~IFF_UP);
      auto r = open(dev, announce | IFF_UP);
      if (!r) {
        dev.set_flags_locked(*this, old);
        return r;
      }
    } else {
      dev.set_flags_locked(*this, next | IFF_UP);
      IFCORE_TRY(close(dev, announce | IFF_UP));
    }
  } else {
    dev.set_flags_locked(*this, next);
    if (announce) {
      EventInfo ev{NetdevEvent::NotifyFlags, dev};
      ev.flags_changed = announce;
      (void)engine_->impl().call_chain(*this, ev);
    }
  }
  // ... then NETDEV_CHANGE for an up device, unless only PROMISC and ALLMULTI changed.
  std::uint32_t changed = (old ^ dev.flags()) & ~(IFF_UP | IFF_PROMISC | IFF_ALLMULTI);
  if (changed) notify_change(dev, changed);
  return ok();
}

Result<void> Control::set_mtu(Device& dev, std::uint32_t mtu) {
  IFCORE_TRY(check_covers(dev));
  PluginGuard guard(*this, !dev.kind().concurrent());  // the kind's own state
  IFCORE_TRY(dev.validate_mtu(mtu));
  std::uint32_t old = dev.mtu();
  if (mtu == old) return ok();
  IFCORE_TRY(dev.kind().change_mtu(*this, dev, mtu));
  auto& impl = engine_->impl();
  EventInfo pre{NetdevEvent::PreChangeMtu, dev};
  pre.old_mtu = old;
  pre.new_mtu = mtu;
  IFCORE_TRY(impl.call_chain(*this, pre));
  dev.set_mtu_locked(*this, mtu);
  EventInfo ev{NetdevEvent::ChangeMtu, dev};
  ev.old_mtu = old;
  ev.new_mtu = mtu;
  (void)impl.call_chain(*this, ev);
  return ok();
}

Result<void> Control::set_address(Device& dev, const HwAddr& addr) {
  IFCORE_TRY(check_covers(dev));
  PluginGuard guard(*this, !dev.kind().concurrent());  // the kind's own state
  HwAddr old = dev.address();
  if (addr.size() != old.size())
    return fail_log_only(EINVAL, "address of {} bytes does not match the device's {}", addr.size(),
                         old.size());
  if (dev.hw_type() == 1 /* ARPHRD_ETHER */ && !addr.is_valid_ether())
    return fail_log_only(EADDRNOTAVAIL, "address {} is not a valid unicast Ethernet address",
                         addr.to_string());
  IFCORE_TRY(dev.kind().check_address(dev, addr));
  // Linux: netif_set_mac_address sends NETDEV_CHANGEADDR for the same address too (the
  // device's address is then the user's, announced up or down).
  auto& impl = engine_->impl();
  EventInfo pre{NetdevEvent::PreChangeAddr, dev};
  pre.new_addr = &addr;
  IFCORE_TRY(impl.call_chain(*this, pre));
  dev.kind().set_address(*this, dev, addr);
  EventInfo ev{NetdevEvent::ChangeAddr, dev};
  ev.new_addr = &addr;
  (void)impl.call_chain(*this, ev);
  return ok();
}

Result<void> Control::set_address_from_kind(Device& dev, const HwAddr& addr) {
  if (addr.size() != dev.address().size())
    return fail(EINVAL, "address of {} bytes does not match the device's {}", addr.size(),
                dev.address().size());
  if (addr == dev.address()) return ok();
  dev.set_address_locked(*this, addr);
  EventInfo ev{NetdevEvent::ChangeAddr, dev};
  ev.new_addr = &addr;
  (void)engine_->impl().call_chain(*this, ev);
  return ok();
}

Result<void> Control::set_broadcast(Device& dev, const HwAddr& addr) {
  IFCORE_TRY(check_covers(dev));
  if (addr.size() != dev.broadcast().size())
    return fail_log_only(EINVAL, "broadcast address of {} bytes does not match the device's {}",
                         addr.size(), dev.broadcast().size());
  dev.set_broadcast_locked(*this, addr);
  // Linux: do_setlink sends NETDEV_CHANGEADDR for it (announced up or down); new_addr stays
  // null: the hardware address is unchanged.
  (void)engine_->impl().call_chain(*this, EventInfo{NetdevEvent::ChangeAddr, dev});
  return ok();
}

Result<void> Control::rename(Device& dev, std::string_view name) {
  IFCORE_TRY(check_covers(dev));
  std::string old = dev.name();
  if (name == old) return ok();
  Registry& reg = dev.ns().registry();
  std::string next(name);
  if (name.find('%') != std::string_view::npos) {
    auto n = reg.resolve_pattern(name);
    if (!n) return fail(n.error());
    next = std::move(*n);
  }
  IFCORE_TRY(validate_device_name(next));
  // Linux 6.18: dev_change_name renames a running device too (it once answered EBUSY) and
  // announces it with one RTM_NEWLINK.
  if (reg.name_taken(next)) return fail_log_only(EEXIST, "device \"{}\" already exists", next);
  auto& impl = engine_->impl();
  EventInfo pre{NetdevEvent::PreChangeName, dev};
  pre.old_name = old;
  pre.new_name = next;
  IFCORE_TRY(impl.call_chain(*this, pre));
  IFCORE_TRY(reg.rename(dev, old, next));
  dev.set_name_locked(*this, next);
  EventInfo ev{NetdevEvent::ChangeName, dev};
  ev.old_name = old;
  ev.new_name = next;
  (void)impl.call_chain(*this, ev);
  return ok();
}

Result<void> Control::set_alias(Device& dev, std::string_view alias) {
  IFCORE_TRY(check_covers(dev));
  // Linux: IFALIASZ is 256 bytes including the NUL.
  if (alias.size() >= 256) return fail(EINVAL, "alias is longer than 255 bytes");
  dev.set_alias_locked(*this, alias);
  notify_change(dev);
  return ok();
}

Result<void> Control::add_altname(Device& dev, std::string_view name) {
  IFCORE_TRY(check_covers(dev));
  // Linux: rtnl_alt_ifname's policy (IFLA_ALT_IFNAME, ALTIFNAMSIZ - 1) and
  // netdev_name_node_alt_create, which checks nothing but that the name is free: "a:b",
  // "." and "x%d" are altnames Linux accepts, and so is "" (an attribute holding a NUL).
  if (name.size() > kMaxAltNameLen || name.find('\0') != std::string_view::npos)
    return fail(EINVAL, "altname \"{}\" is not valid", name);
  return dev.ns().registry().add_alt_name(dev, name);
}

Result<void> Control::del_altname(Device& dev, std::string_view name) {
  IFCORE_TRY(check_covers(dev));
  return dev.ns().registry().del_alt_name(dev, name);
}

Result<void> Control::set_group(Device& dev, std::uint32_t group) {
  IFCORE_TRY(check_covers(dev));
  if (dev.group() == group) return ok();
  dev.set_group_locked(*this, group);
  notify_change(dev);
  return ok();
}

Result<void> Control::set_txqlen(Device& dev, std::uint32_t txqlen) {
  IFCORE_TRY(check_covers(dev));
  if (dev.txqlen() == txqlen) return ok();
  dev.set_txqlen_locked(*this, txqlen);
  // Linux: dev_change_tx_queue_len — announced up or down (rtnetlink_event).
  (void)engine_->impl().call_chain(*this, EventInfo{NetdevEvent::ChangeTxQueueLen, dev});
  return ok();
}

Result<void> check_offload_limits(const LinkRequest& req, std::uint32_t tso_max_size) {
  constexpr std::uint32_t kGroMaxSize = 8 * 65535;  // Linux: GRO_MAX_SIZE
  constexpr std::uint32_t kTsoMaxSegs = 65535;      // Linux: GSO_MAX_SEGS, TSO_MAX_SEGS
  auto above = [](const std::optional<std::uint32_t>& v, std::uint32_t max) {
    return v && *v > max;
  };
  if (above(req.gso_max_size, tso_max_size)) return fail(EINVAL, "too big gso_max_size");
  if (above(req.gso_max_segs, kTsoMaxSegs)) return fail(EINVAL, "too big gso_max_segs");
  if (above(req.gro_max_size, kGroMaxSize)) return fail(EINVAL, "too big gro_max_size");
  if (above(req.gso_ipv4_max_size, tso_max_size)) return fail(EINVAL, "too big gso_ipv4_max_size");
  if (above(req.gro_ipv4_max_size, kGroMaxSize)) return fail(EINVAL, "too big gro_ipv4_max_size");
  return ok();
}

OffloadLimits apply_offload_limits(OffloadLimits l, const LinkRequest& req) {
  constexpr std::uint32_t kLegacyMaxSize = 65536;  // Linux: GSO_ and GRO_LEGACY_MAX_SIZE
  // do_setlink sets a size only when it differs; a size of 64 KiB or less is the IPv4
  // one too.
  auto set_size = [&](const std::optional<std::uint32_t>& v, std::uint32_t& size,
                      std::uint32_t& ipv4) {
    if (!v || *v == size) return;
    size = *v;
    if (size <= kLegacyMaxSize) ipv4 = size;
  };
  set_size(req.gso_max_size, l.gso_max_size, l.gso_ipv4_max_size);
  if (req.gso_max_segs) l.gso_max_segs = *req.gso_max_segs;
  set_size(req.gro_max_size, l.gro_max_size, l.gro_ipv4_max_size);
  if (req.gso_ipv4_max_size) l.gso_ipv4_max_size = *req.gso_ipv4_max_size;
  if (req.gro_ipv4_max_size) l.gro_ipv4_max_size = *req.gro_ipv4_max_size;
  return l;
}

Result<void> Control::set_offload_limits(Device& dev, const OffloadLimits& limits) {
  IFCORE_TRY(check_covers(dev));
  if (dev.offload_limits_locked() == limits) return ok();
  dev.set_offload_limits_locked(*this, limits);
  return ok();
}

Result<void> Control::link_upper(Device& lower, Device& upper, bool master) {
  IFCORE_TRY(check_covers(lower));
  IFCORE_TRY(check_covers(upper));
  // Linux: __netdev_upper_dev_link.
  if (&lower == &upper) return fail(EBUSY, "device \"{}\" cannot be its own upper", lower.name());
  bool loop = is_above_or_same(upper, lower);  // `lower` is `upper` or above it
  if (loop || is_above_or_same(lower, upper)) {
    if (lower.has_upper_locked(upper))
      return fail(EEXIST, "device \"{}\" is already linked to \"{}\"", lower.name(), upper.name());
    if (loop)
      return fail_log_only(EBUSY, "device \"{}\" is an upper of \"{}\": that would make a loop",
                           lower.name(), upper.name());
  }
  if (master && lower.master())
    return fail(EBUSY, "device \"{}\" already has a master", lower.name());
  // Linux: __netdev_upper_dev_link — the chain below `lower` and the one above `upper`
  // together (their cached levels) may not be longer than MAX_NEST_DEV.
  if (DeviceAccess::lower_level(lower) + DeviceAccess::upper_level(upper) > kMaxNestDepth)
    return fail(EMLINK, "too many levels of upper devices");
  auto& impl = engine_->impl();
  EventInfo pre{NetdevEvent::PreChangeUpper, lower};
  pre.upper = &upper;
  pre.linking = true;
  pre.upper_is_master = master;
  IFCORE_TRY(impl.call_chain(*this, pre));
  DeviceAccess::uppers(lower).push_back(&upper);
  DeviceAccess::lowers(upper).push_back(&lower);
  DeviceAccess::count_link(lower, upper, 1);
  if (master) DeviceAccess::set_master(lower, &upper);
  EventInfo ev = pre;
  ev.event = NetdevEvent::ChangeUpper;
  (void)impl.call_chain(*this, ev);
  return ok();
}

void Control::unlink_upper(Device& lower, Device& upper) {
  auto& ups = DeviceAccess::uppers(lower);
  // From the back: a device going away unlinks its uppers last first (1000 vlans on one
  // lower device made a search from the front quadratic).
  auto rit = std::find(ups.rbegin(), ups.rend(), &upper);
  if (rit == ups.rend()) return;
  auto it = std::next(rit).base();
  bool master = lower.master() == &upper;
  auto& impl = engine_->impl();
  EventInfo pre{NetdevEvent::PreChangeUpper, lower};
  pre.upper = &upper;
  pre.linking = false;
  pre.upper_is_master = master;
  (void)impl.call_chain(*this, pre);
  ups.erase(it);
  auto& lows = DeviceAccess::lowers(upper);
  lows.erase(std::remove(lows.begin(), lows.end(), &lower), lows.end());
  DeviceAccess::count_link(lower, upper, -1);
  if (master) DeviceAccess::set_master(lower, nullptr);
  EventInfo ev = pre;
  ev.event = NetdevEvent::ChangeUpper;
  (void)impl.call_chain(*this, ev);
}

Result<void> Control::set_master(Device& port, Device* master) {
  IFCORE_TRY(check_covers(port));
  if (master) IFCORE_TRY(check_covers(*master));
  PluginGuard guard(*this, !port.kind().concurrent() || (master && !master->kind().concurrent()));
  // Linux: do_set_master.
  Device* cur = port.master();
  if (cur == master) return ok();
  if (cur) IFCORE_TRY(cur->kind().del_port(*this, *cur, port));
  if (master) {
    auto r = master->kind().add_port(*this, *master, port);
    if (!r) {
      if (cur) (void)cur->kind().add_port(*this, *cur, port);  // put it back
      return r;
    }
  }
  return ok();
}

void Control::set_carrier(Device& dev, bool on) {
  set_carriers({&dev}, on);
}

void Control::fire_link_watch(Device& dev) {
  PluginGuard guard(*this);  // the link watch's queue is the engine's
  engine_->impl().linkwatch->fire(*this, dev);
}

void Control::set_proto_down(Device& dev, std::optional<bool> down,
                             std::optional<LinkRequest::ProtoDownReason> reason, bool notify) {
  if (reason)
    dev.proto_down_reason_.store(reason->apply(dev.proto_down_reason()), std::memory_order_relaxed);
  if (down) {
    set_carrier(dev, !*down);
    dev.proto_down_.store(*down, std::memory_order_relaxed);
  }
  if (notify) notify_change(dev);  // Linux: do_setlink's DO_SETLINK_NOTIFY
}

void Control::set_carriers(std::initializer_list<Device*> devs, bool on) {
  // Linux: netif_carrier_on/off flip the bit and count the change at once; the link watch
  // sets the operstate, (de)activates the transmit path and notifies Change, at once or
  // later per the policy (core/linkwatch.h). Every carrier is set before the watch hears of
  // any; the ones that changed are noted in a mask, not a list (a carrier change allocates
  // nothing).
  assert(devs.size() <= 64);
  std::uint64_t changed = 0;
  std::size_t i = 0;
  for (Device* d : devs) changed |= std::uint64_t{d->set_carrier_locked(*this, on)} << i++;
  if (!changed) return;
  PluginGuard guard(*this);  // the link watch's queue is the engine's
  i = 0;
  for (Device* d : devs)
    if (changed >> i++ & 1) engine_->impl().linkwatch->fire(*this, *d);
}

void Control::set_operstate(Device& dev, std::uint8_t operstate) {
  if (dev.operstate() == operstate) return;
  dev.set_operstate_locked(*this, operstate);
  notify_change(dev);
}

Result<void> Control::move_to_namespace(Device& dev, Namespace& to, std::string_view new_name) {
  IFCORE_TRY(check_engine_wide("moving a device to another namespace"));
  // Linux: __dev_change_net_namespace.
  if (&dev.ns() == &to) return ok();
  // Linux 6.18's extack for a netns_immutable device (lo, a vrf).
  if (!dev.kind().can_move_namespace()) return fail(EINVAL, "The interface netns is immutable");
  if (dev.state() != RegState::Registered)
    return fail(EINVAL, "device \"{}\" is not registered", dev.name());
  IFCORE_TRY(check_device_room(to, 1));
  Registry& dst = to.registry();
  std::string name = new_name.empty() ? dev.name() : std::string(new_name);
  if (name.find('%') != std::string::npos) {
    auto n = dst.resolve_pattern(name);
    if (!n) return fail(n.error());
    name = *n;
  }
  IFCORE_TRY(validate_device_name(name));
  if (dst.name_taken(name)) {
    if (!new_name.empty())
      return fail_log_only(EEXIST, "device \"{}\" already exists in namespace \"{}\"", name,
                           to.name());
    return fail(EEXIST, "An interface with the same name exists in the target netns");
  }
  // Linux 6.18: __dev_change_net_namespace — none of the altnames may be in use there.
  for (const std::string& alt : dev.altnames_locked())
    if (dst.name_taken(alt))
      return fail(EEXIST, "An interface with the altname {} exists in the target netns", alt);
  int ifindex = dev.ifindex();
  if (dst.index_taken(ifindex)) {
    auto i = dst.alloc_ifindex();
    if (!i) return fail(i.error());
    ifindex = *i;
  }
  auto& impl = engine_->impl();
  (void)close(dev);
  // Tell everybody the device leaves (routes, addresses, masters go), then arrives.
  Device* one = &dev;
  // Linux: __dev_change_net_namespace gives the new namespace an id in the old one
  // (peernet2id_alloc) for the device's RTM_DELLINK.
  (void)dev.ns().peer_id_alloc_locked(to);
  DeviceAccess::set_state(dev, RegState::Unregistering);
  impl.call_chain_many(*this, NetdevEvent::Unregister, std::span<Device* const>(&one, 1));
  dev.ns().registry().erase(dev, dev.ifindex());
  DeviceAccess::set_ns(dev, to);
  DeviceAccess::set_ifindex(dev, ifindex);
  dev.set_name_locked(*this, name);
  auto ins = dst.insert(dev, name, ifindex);
  DeviceAccess::set_state(dev, RegState::Registered);
  if (!ins) return ins;  // cannot happen: checked above under the same lock
  (void)impl.call_chain(*this, EventInfo{NetdevEvent::Register, dev});
  return ok();
}

}  // namespace ifcore
