// Device fields: RCU-published boxes for names and addresses, snapshots, adjacency checks.
#include "ifcore/device.h"

#include <net/if.h>

#include <linux/if.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <tuple>

#include "base/rcu.h"
#include "core/engine_impl.h"
#include "core/ref_shards.h"
#include "ifcore/kind.h"
#include "ifcore/namespace.h"

namespace ifcore {

struct Device::TextBox {
  std::string s;
};

namespace {

// Publishes a new box; the old one is freed after a grace period, or at once while the
// device is not yet visible to any reader.
//
// Before the device is visible, a load and a store: an exchange is a locked instruction
// that waits for every store before it, here those that fill the freshly allocated device.
template <class Box>
void publish(const Device& d, std::atomic<const Box*>& slot, const Box* next) {
  if (d.state() == RegState::Uninitialized) {
    delete slot.load(std::memory_order_relaxed);
    slot.store(next, std::memory_order_release);
    return;
  }
  const Box* old = slot.exchange(next, std::memory_order_acq_rel);
  rcu::retire(const_cast<Box*>(old));
}

// Publishes `value` for a field that has a box of its own in the device (`own`): while no
// reader can see the device, the value is written into it; afterwards a new box is
// published, and the old one is freed after a grace period unless it is the device's own
// (freed with the device, itself after a grace period).
template <class Box>
void publish_value(const Device& d, std::atomic<const Box*>& slot, Box& own, const Box& value) {
  if (d.state() == RegState::Uninitialized) {
    own = value;
    const Box* old = slot.load(std::memory_order_relaxed);
    slot.store(&own, std::memory_order_release);
    if (old != &own) delete old;
    return;
  }
  const Box* old = slot.exchange(new const Box(value), std::memory_order_acq_rel);
  if (old != &own) rcu::retire(const_cast<Box*>(old));
}

template <class Box>
void delete_unless_own(const std::atomic<const Box*>& slot, const Box& own) {
  const Box* b = slot.load();
  if (b != &own) delete b;
}

}  // namespace

const char* to_string(RegState s) {
  switch (s) {
    case RegState::Uninitialized:
      return "uninitialized";
    case RegState::Registered:
      return "registered";
    case RegState::Unregistering:
      return "unregistering";
    case RegState::Unregistered:
      return "unregistered";
    case RegState::Released:
      return "released";
  }
  return "?";
}

namespace {
const HwAddr kEtherBroadcast = HwAddr::ethernet({0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
}  // namespace

Device::Device(Engine& engine, const Kind& kind, Namespace& ns)
    : id_(engine.impl().take_device_id()),
      engine_(&engine),
      kind_(&kind),
      ns_(&ns),
      // Initialisations, not (fenced) stores; the address is made in its box, not copied
      // from a temporary just written (see set_name_locked).
      name_(&name0_),
      flags_(IFF_BROADCAST | IFF_MULTICAST),
      address_(&address0_),
      broadcast_(&broadcast0_),
      address0_{HwAddr::random_ether()},
      broadcast0_{kEtherBroadcast},
      ref_slot_(RefShards::instance().alloc_slot()) {
  if (engine.config().track_refs) tracker_ = std::make_unique<Tracker>();
}

Device::~Device() {
  // Context: no reader can reach the device (released after a grace period, or never
  // registered). The slot reads zero in every arena: folded at kill, or never used live
  // by others (an unregistered device's Refs must all be dropped before it is freed).
  if (!ref_dying_.load()) RefShards::instance().fold(ref_slot_);
  RefShards::instance().free_slot(ref_slot_);
  delete_unless_own(name_, name0_);
  delete_unless_own(address_, address0_);
  delete_unless_own(broadcast_, broadcast0_);
  delete perm_address_.load();
  delete alias_.load();
  delete counters_.load();
}

std::string_view Device::name_rcu() const {
  const NameBox* b = name_.load(std::memory_order_acquire);
  return {b->s, b->len};
}

std::string Device::name() const {
  rcu::ReadGuard g;
  return std::string(name_rcu());
}

bool Device::is_up() const {
  return flags() & IFF_UP;
}

std::uint32_t Device::reported_flags() const {
  std::uint32_t f =
      flags() & ~std::uint32_t(IFF_RUNNING | unsigned(IFF_LOWER_UP) | unsigned(IFF_DORMANT));
  // Linux: IFF_DORMANT is a driver's mark (netif_dormant), which no ifcore kind sets; a
  // DORMANT operstate (link mode, IFLA_OPERSTATE) does not show it.
  if (is_up()) {
    std::uint8_t op = operstate();
    if (op == IF_OPER_UP || op == IF_OPER_UNKNOWN) f |= IFF_RUNNING;
    if (carrier()) f |= unsigned(IFF_LOWER_UP);
  }
  return f;
}

std::uint8_t Device::reported_operstate() const {
  return is_up() ? operstate() : std::uint8_t(IF_OPER_DOWN);
}

void Device::set_name_locked(const Control&, std::string_view name) {
  const auto len = static_cast<std::uint8_t>(std::min<std::size_t>(name.size(), 15));
  if (state() == RegState::Uninitialized && name_.load(std::memory_order_relaxed) == &name0_) {
    // No reader yet: written in place. A box built aside and copied in would be read back
    // while its bytes still wait in the store buffer behind the new device's stores.
    std::memcpy(name0_.s, name.data(), len);
    std::memset(name0_.s + len, 0, sizeof name0_.s - len);
    name0_.len = len;
    return;
  }
  NameBox b;
  b.len = len;
  std::memcpy(b.s, name.data(), b.len);
  publish_value(*this, name_, name0_, b);
}

HwAddr Device::address() const {
  rcu::ReadGuard g;
  const AddrBox* b = address_.load(std::memory_order_acquire);
  return b ? b->a : HwAddr{};
}

HwAddr Device::broadcast() const {
  rcu::ReadGuard g;
  const AddrBox* b = broadcast_.load(std::memory_order_acquire);
  return b ? b->a : HwAddr{};
}

HwAddr Device::perm_address() const {
  rcu::ReadGuard g;
  const AddrBox* b = perm_address_.load(std::memory_order_acquire);
  return b ? b->a : HwAddr{};
}

std::string Device::alias() const {
  rcu::ReadGuard g;
  const TextBox* b = alias_.load(std::memory_order_acquire);
  return b ? b->s : std::string{};
}

void Device::set_address_locked(const Control&, const HwAddr& a) {
  publish_value(*this, address_, address0_, AddrBox{a});
}
void Device::set_broadcast_locked(const Control&, const HwAddr& a) {
  publish_value(*this, broadcast_, broadcast0_, AddrBox{a});
}
void Device::set_perm_address_locked(const Control&, const HwAddr& a) {
  publish(*this, perm_address_, new const AddrBox{a});
}
void Device::set_alias_locked(const Control&, std::string_view alias) {
  publish(*this, alias_, alias.empty() ? nullptr : new const TextBox{std::string(alias)});
}

bool Device::set_carrier_locked(const Control&, bool on) {
  if (carrier_.exchange(on, std::memory_order_relaxed) == on) return false;
  // Linux: netif_carrier_on/off do not count changes of a device not yet registered.
  if (state() != RegState::Uninitialized)
    (on ? carrier_up_ : carrier_down_).fetch_add(1, std::memory_order_relaxed);
  return true;
}

Result<void> Device::validate_mtu(std::uint32_t mtu) const {
  // Linux: dev_validate_mtu's messages; max_mtu 0 means no maximum.
  if (mtu < min_mtu_) return fail(EINVAL, "mtu less than device minimum");
  if (max_mtu_ > 0 && mtu > max_mtu_) return fail(EINVAL, "mtu greater than device maximum");
  return ok();
}

namespace {
const std::vector<Device*> kNoDevices;
const std::vector<std::string> kNoNames;
}  // namespace

Device::Links& Device::links_locked() {
  if (!links_) links_ = std::make_unique<Links>();
  return *links_;
}

const std::vector<Device*>& Device::uppers_locked() const {
  return links_ ? links_->uppers : kNoDevices;
}

const std::vector<Device*>& Device::lowers_locked() const {
  return links_ ? links_->lowers : kNoDevices;
}

const std::vector<std::string>& Device::altnames_locked() const {
  return links_ ? links_->altnames : kNoNames;
}

const OffloadLimits& Device::offload_limits_locked() const {
  static const OffloadLimits kDefaults;
  return links_ ? links_->offload : kDefaults;
}

void Device::set_offload_limits_locked(const Control&, const OffloadLimits& l) {
  if (!links_ && l == OffloadLimits{}) return;
  links_locked().offload = l;
}

LinkCounters& Device::make_counters() const {
  auto made = std::make_unique<LinkCounters>();
  LinkCounters* expected = nullptr;
  if (counters_.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel))
    return *made.release();
  return *expected;  // another thread counted first
}

bool Device::has_upper_locked(const Device& d) const {
  for (Device* u : uppers_locked())
    if (u == &d) return true;
  return false;
}

bool Device::is_upper_or_self_locked(const Device& d) const {
  // Depth-first over the upper graph; the graph is acyclic (link_upper refuses loops)
  // and bounded, so this terminates.
  if (&d == this) return true;
  for (Device* u : uppers_locked())
    if (u->is_upper_or_self_locked(d)) return true;
  return false;
}

bool Device::is_lower_or_self_locked(const Device& d) const {
  if (&d == this) return true;
  for (Device* l : lowers_locked())
    if (l->is_lower_or_self_locked(d)) return true;
  return false;
}

void DeviceAccess::count_link(Device& lower, Device& upper, int delta) {
  // `lower` gains or loses an upper at upper.upper_level_ (and `upper` a lower at
  // lower.lower_level_); a device whose own level changes moves in the counts of its
  // neighbours on the far side, and so on along the chain.
  using Counts = decltype(Device::Links::upper_levels);
  // 1 + the highest level with a neighbour (1 when there is none).
  auto level_of = [](const Counts& c) -> std::uint8_t {
    for (std::size_t i = c.size(); i-- > 0;)
      if (c[i]) return static_cast<std::uint8_t>(i + 1);
    return 1;
  };
  auto slot = [](int level) {
    return std::min(static_cast<std::size_t>(level), std::tuple_size_v<Counts> - 1);
  };
  using Links = Device::Links;
  auto move = [&](auto& self, Device& d, Counts Links::*counts, std::uint8_t Device::*level,
                  std::vector<Device*> Links::*far, int from, int to) -> void {
    Links& links = d.links_locked();
    Counts& c = links.*counts;
    if (from) c[slot(from)] -= 1;
    if (to) c[slot(to)] += 1;
    std::uint8_t before = d.*level;
    d.*level = level_of(c);
    if (d.*level != before)
      for (Device* n : links.*far) self(self, *n, counts, level, far, before, d.*level);
  };
  int up = upper.upper_level_, low = lower.lower_level_;
  bool add = delta > 0;
  move(move, lower, &Links::upper_levels, &Device::upper_level_, &Links::lowers, add ? 0 : up,
       add ? up : 0);
  move(move, upper, &Links::lower_levels, &Device::lower_level_, &Links::uppers, add ? 0 : low,
       add ? low : 0);
}

DeviceSnapshot Device::snapshot_locked() const {
  DeviceSnapshot s;
  s.id = id_;
  s.ifindex = ifindex();
  s.name = name();
  s.kind = std::string(kind_->name());
  s.hw_type = hw_type_;
  s.flags = flags();
  s.mtu = mtu();
  s.min_mtu = min_mtu_;
  s.max_mtu = max_mtu_;
  s.address = address();
  s.broadcast = broadcast();
  s.perm_address = perm_address();
  s.group = group();
  s.txqlen = txqlen();
  s.operstate = operstate();
  s.link_mode = link_mode();
  s.carrier = carrier();
  s.activated = activated();
  s.carrier_up_count = carrier_up_count();
  s.carrier_down_count = carrier_down_count();
  s.master_ifindex = master() ? master()->ifindex() : 0;
  s.link_ifindex = kind_->link_ifindex(*this);
  s.ns_name = ns().name();
  s.alias = alias();
  s.num_tx_queues = num_tx_queues_;
  s.num_rx_queues = num_rx_queues_;
  s.offload = offload_limits_locked();
  s.proto_down = proto_down();
  s.proto_down_reason = proto_down_reason();
  s.state = state();
  return s;
}

}  // namespace ifcore
