// The frame path (see ifcore/frame.h): transmit and receive, receive hooks, queues.
//
// Lock order: RxQueue::mu_ is a leaf. The hooks are RCU-published (copy on write under
// the control lock, old copies retired after a grace period); no function here holds a
// read-side section while it takes a mutex or calls a kind.
#include "ifcore/frame.h"

#include <net/if.h>

#include <linux/if_ether.h>

#include <algorithm>
#include <cerrno>

#include "base/rcu.h"
#include "ifcore/engine.h"
#include "ifcore/kind.h"

namespace ifcore {

namespace {

constexpr std::size_t kEthHeader = 14;

// Publishes `next` (nothing if empty) and retires the old hooks. Context: control lock.
void publish_hooks(const Control& ctl, Device& dev, std::unique_ptr<RxHooks> next) {
  if (next && !next->vlans && !next->handler && !next->queue) next.reset();
  const RxHooks* old = dev.exchange_rx_hooks_locked(ctl, next.release());
  rcu::retire(const_cast<RxHooks*>(old));
}

// A copy of the hooks of `dev`, to change. Context: control lock.
std::unique_ptr<RxHooks> copy_hooks(const Device& dev) {
  const RxHooks* cur = dev.rx_hooks_rcu();
  return cur ? std::make_unique<RxHooks>(*cur) : std::make_unique<RxHooks>();
}

std::uint16_t load_be16(const std::vector<std::uint8_t>& b, std::size_t off) {
  return static_cast<std::uint16_t>((b[off] << 8) | b[off + 1]);
}

}  // namespace

// ---------------------------------------------------------------- frames

Frame Frame::copy() const {
  Frame f;
  f.bytes = bytes;
  f.hops = hops;
  return f;
}

HwAddr frame_dst(const Frame& f) {
  if (f.bytes.size() < 6) return HwAddr{};
  return HwAddr(std::span<const std::uint8_t>(f.bytes.data(), 6));
}

HwAddr frame_src(const Frame& f) {
  if (f.bytes.size() < 12) return HwAddr{};
  return HwAddr(std::span<const std::uint8_t>(f.bytes.data() + 6, 6));
}

std::uint16_t frame_ethertype(const Frame& f) {
  return f.bytes.size() < kEthHeader ? 0 : load_be16(f.bytes, 12);
}

bool is_group_address(const HwAddr& a) {
  return a.size() == 6 && (a.bytes()[0] & 1);
}

bool Kind::xmit(Device&, Frame&&) const {
  return true;  // the frame leaves the device (Linux: dummy_xmit counts and frees it)
}

bool transmit(Device& dev, std::vector<std::uint8_t> bytes) {
  Frame f;
  f.bytes = std::move(bytes);
  return transmit(dev, std::move(f));
}

bool transmit(Device& dev, Frame&& f) {
  LinkCounters& c = dev.counters();
  // Linux: a device without carrier, or whose link watch event has not activated the
  // transmit path yet, sends through the noop qdisc: the frame is dropped and counted.
  if (dev.state() != RegState::Registered || !dev.is_up() || !dev.carrier() || !dev.tx_active() ||
      ++f.hops > kMaxFrameHops) {
    c.tx_dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (f.bytes.size() < kEthHeader) {
    c.tx_errors.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::size_t len = f.bytes.size();
  f.dev = Ref(dev, "frame");
  if (!dev.kind().xmit(dev, std::move(f))) {
    c.tx_dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  c.tx_packets.fetch_add(1, std::memory_order_relaxed);
  c.tx_bytes.fetch_add(len, std::memory_order_relaxed);
  return true;
}

void receive(Device& dev, Frame&& f) {
  LinkCounters& c = dev.counters();
  if (dev.state() != RegState::Registered || !dev.is_up() || ++f.hops > kMaxFrameHops) {
    c.rx_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (f.bytes.size() < kEthHeader) {
    c.rx_errors.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  f.dev = Ref(dev, "frame");
  c.rx_packets.fetch_add(1, std::memory_order_relaxed);
  c.rx_bytes.fetch_add(f.bytes.size(), std::memory_order_relaxed);
  if (is_group_address(frame_dst(f))) c.multicast.fetch_add(1, std::memory_order_relaxed);

  // A snapshot of the hooks, with a Ref on the vlan that takes a tagged frame.
  std::uint16_t type = frame_ethertype(f);
  bool tagged = (type == ETH_P_8021Q || type == ETH_P_8021AD) && f.bytes.size() >= 18;
  std::uint16_t vid = tagged ? load_be16(f.bytes, 14) & 0x0fff : 0;
  Ref vlan;
  const RxHandler* handler = nullptr;
  std::vector<Ref> handler_refs;  // keep the handler's devices beyond the read section
  std::shared_ptr<RxQueue> queue;
  {
    rcu::ReadGuard g;
    if (const RxHooks* h = dev.rx_hooks_rcu()) {
      if (tagged && h->vlans)
        if (Device* v = h->vlans->find(type, vid); v && v->state() == RegState::Registered)
          vlan = Ref(*v, "frame");
      handler = h->handler;
      for (Device* d : h->handler_devs)
        if (d->state() == RegState::Registered) handler_refs.emplace_back(*d, "frame");
      queue = h->queue;
    }
  }
  // Linux: vlan_do_receive: the vlan with the frame's id takes it, untagged.
  if (vlan) {
    f.bytes.erase(f.bytes.begin() + 12, f.bytes.begin() + 16);
    receive(*vlan, std::move(f));
    return;
  }
  // Linux: the rx_handler (bridge port, macvlan lower) may take it.
  if (handler) {
    std::vector<Device*> devs;
    for (Ref& r : handler_refs) devs.push_back(r.get());
    if (handler->handle(dev, f, devs)) return;
  }
  if (queue && !queue->push(std::move(f))) c.rx_dropped.fetch_add(1, std::memory_order_relaxed);
  // Without a queue the frame is consumed here (delivered to the stack).
}

// ---------------------------------------------------------------- queues

bool RxQueue::push(Frame&& f) {
  MutexLock lk(mu_);
  if (q_.size() >= capacity_) return false;
  q_.push_back(std::move(f));
  return true;
}

std::optional<Frame> RxQueue::pop() {
  std::optional<Frame> out;
  {
    MutexLock lk(mu_);
    if (q_.empty()) return out;
    out.emplace(std::move(q_.front()));
    q_.pop_front();
  }
  return out;
}

std::size_t RxQueue::size() const {
  MutexLock lk(mu_);
  return q_.size();
}

void RxQueue::clear() {
  std::deque<Frame> gone;
  {
    MutexLock lk(mu_);
    gone.swap(q_);
  }
  // The frames' Refs drop here, outside the lock: the last may wake the finalizer.
}

// ---------------------------------------------------------------- hooks

VlanTable::~VlanTable() {
  for (auto& p : parts_) delete p.load(std::memory_order_relaxed);
}

long VlanTable::index(std::uint16_t protocol, std::uint16_t id) {
  if (id >= kIds) return -1;
  if (protocol == ETH_P_8021Q) return id;
  if (protocol == ETH_P_8021AD) return long(kIds) + id;
  return -1;
}

Device* VlanTable::find(std::uint16_t protocol, std::uint16_t id) const {
  long i = index(protocol, id);
  if (i < 0) return nullptr;
  const Part* part = parts_[i / kPartIds].load(std::memory_order_acquire);
  return part ? part->slots[i % kPartIds].load(std::memory_order_acquire) : nullptr;
}

void VlanTable::set(std::uint16_t protocol, std::uint16_t id, Device* vlan) {
  long i = index(protocol, id);
  if (i < 0) return;
  Part* part = parts_[i / kPartIds].load(std::memory_order_relaxed);
  if (!part) {
    if (!vlan) return;
    part = new Part;
    parts_[i / kPartIds].store(part, std::memory_order_release);
  }
  auto& slot = part->slots[i % kPartIds];
  Device* old = slot.load(std::memory_order_relaxed);
  count_ += (vlan != nullptr) - (old != nullptr);
  slot.store(vlan, std::memory_order_release);
}

Device* find_vlan_hook(const Device& lower, std::uint16_t protocol, std::uint16_t id) {
  const RxHooks* h = lower.rx_hooks_rcu();
  return h && h->vlans ? h->vlans->find(protocol, id) : nullptr;
}

void add_vlan_hook(Control& ctl, Device& lower, const VlanHook& h) {
  const RxHooks* cur = lower.rx_hooks_rcu();
  if (cur && cur->vlans) {  // in place: no copy of the hooks
    cur->vlans->set(h.protocol, h.id, h.vlan);
    return;
  }
  auto next = copy_hooks(lower);
  next->vlans = std::make_shared<VlanTable>();
  next->vlans->set(h.protocol, h.id, h.vlan);
  publish_hooks(ctl, lower, std::move(next));
}

void remove_vlan_hook(Control& ctl, Device& lower, const VlanHook& h) {
  const RxHooks* cur = lower.rx_hooks_rcu();
  if (!cur || !cur->vlans) return;
  VlanTable& t = *cur->vlans;
  if (t.find(h.protocol, h.id) == h.vlan) t.set(h.protocol, h.id, nullptr);
  if (t.size() > 0) return;
  auto next = copy_hooks(lower);  // the last vlan went: drop the table
  next->vlans.reset();
  publish_hooks(ctl, lower, std::move(next));
}

void set_rx_handler(Control& ctl, Device& dev, const RxHandler* h, std::vector<Device*> devs) {
  auto next = copy_hooks(dev);
  next->handler = h;
  next->handler_devs = h ? std::move(devs) : std::vector<Device*>{};
  publish_hooks(ctl, dev, std::move(next));
}

Result<std::shared_ptr<RxQueue>> open_rx_queue(Control& ctl, Device& dev, std::size_t capacity) {
  if (dev.state() != RegState::Registered)
    return fail(ENODEV, "device \"{}\" is not registered", dev.name());
  auto q = std::make_shared<RxQueue>(capacity);
  auto next = copy_hooks(dev);
  next->queue = q;
  publish_hooks(ctl, dev, std::move(next));
  return q;
}

void close_rx_queue(Control& ctl, Device& dev) {
  if (!dev.rx_hooks_rcu()) return;
  auto next = copy_hooks(dev);
  next->queue.reset();
  publish_hooks(ctl, dev, std::move(next));
}

void clear_rx_hooks(Control& ctl, Device& dev) {
  publish_hooks(ctl, dev, nullptr);
}

}  // namespace ifcore
