// ifcore/frame.h — the frame path: enough of a data plane that carrier matters and frames
// in flight hold references.
//
// A Frame is Ethernet bytes plus a Ref on the device it is on. transmit() sends it on a
// device: dropped and counted (tx_dropped) unless the device is up, has carrier and its
// transmit path is active (the link watch activates it, see linkwatch.h); otherwise the
// device's kind hands it on (Kind::xmit): a veth to its peer, a vlan tagged to its lower, a
// macvlan to its lower, a bridge by its forwarding table. receive() is a frame arriving at
// a device: vlans on it take their tagged frames (untagged), then its receive handler (a
// bridge for its ports, macvlans for their lower) may take it, and what is left ends at
// the device: in its RxQueue if one is open (bounded; each queued frame holds a Ref), else
// consumed. Counters (device.h LinkCounters) follow Linux: tx on the sender, rx on every
// device the frame arrives at.
//
// Context: every function here may be called from any thread without the control lock,
// except those that say "Context: control lock". None may be called inside an
// rcu::ReadGuard (queues and forwarding tables take leaf mutexes).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "ifcore/device.h"
#include "ifcore/mutex.h"
#include "ifcore/result.h"

namespace ifcore {

class Control;
class Engine;

struct Frame {
  std::vector<std::uint8_t> bytes;  // from the destination address on
  Ref dev;                          // the device the frame is on
  std::uint8_t hops = 0;            // devices crossed; past kMaxFrameHops it is dropped

  Frame copy() const;  // the same bytes and hops, no device
};

constexpr std::uint8_t kMaxFrameHops = 16;

// Ethernet helpers.
HwAddr frame_dst(const Frame& f);
HwAddr frame_src(const Frame& f);
std::uint16_t frame_ethertype(const Frame& f);  // the outer type (0x8100 when tagged)
bool is_group_address(const HwAddr& a);         // broadcast or multicast

// Sends `bytes` on `dev`. Returns true if the device took the frame (carrier, transmit
// path, kind). Context: any thread; the caller holds a Ref on `dev` (or found it in an
// rcu::ReadGuard and holds one now).
bool transmit(Device& dev, std::vector<std::uint8_t> bytes);
// The same for a frame already in flight (kinds forwarding it); `f.dev` becomes `dev`.
bool transmit(Device& dev, Frame&& f);
// A frame arrives at `dev` (from a veth peer, a lower device, a bridge). Context: as
// transmit.
void receive(Device& dev, Frame&& f);

// A Ref on the device `get()` returns, if it is registered; empty otherwise.
// Context: any thread (opens its own read-side section around `get`).
template <class F>
Ref hold_registered(F get, const char* holder = "frame");

// Frames that end at a device, kept until read. Bounded: a full queue drops (rx_dropped).
class RxQueue {
 public:
  explicit RxQueue(std::size_t capacity) : capacity_(capacity) {}
  bool push(Frame&& f);
  std::optional<Frame> pop();
  std::size_t size() const;
  void clear();  // drops every frame (and its Ref)

 private:
  mutable Mutex mu_;  // LOCK ORDERING: a leaf
  std::deque<Frame> q_ IFCORE_GUARDED_BY(mu_);
  std::size_t capacity_;
};

// Takes frames that arrived on a device before they end there (Linux: rx_handler).
class RxHandler {
 public:
  virtual ~RxHandler() = default;
  // `dev` received `f` (counted). Return true if the frame was taken (moved from).
  // `devs`: the devices the handler was set with that are still registered (a bridge;
  // the macvlans on a lower), each held by a Ref for the call.
  virtual bool handle(Device& dev, Frame& f, const std::vector<Device*>& devs) const = 0;
};

struct VlanHook {
  std::uint16_t protocol = 0x8100;  // host order
  std::uint16_t id = 0;
  Device* vlan = nullptr;
};

// The vlans on one lower device by protocol (802.1Q, 802.1ad) and id (Linux: struct
// vlan_group): 4096 slots per protocol in lazily made parts of 512, so adding the
// thousandth vlan costs what adding the first did. Slots change in place: readers see a
// vlan or nullptr, never a torn value.
class VlanTable {
 public:
  VlanTable() = default;
  ~VlanTable();
  VlanTable(const VlanTable&) = delete;
  VlanTable& operator=(const VlanTable&) = delete;

  // The vlan with this protocol (host order) and id, or nullptr.
  // Context: RCU read side or control lock; the pointer is valid inside either.
  Device* find(std::uint16_t protocol, std::uint16_t id) const;
  // Sets or clears (nullptr) a slot. Context: control lock.
  void set(std::uint16_t protocol, std::uint16_t id, Device* vlan);
  // Context: control lock.
  std::size_t size() const { return count_; }

 private:
  static constexpr std::size_t kIds = 4096, kPartIds = 512, kParts = 2 * kIds / kPartIds;
  struct Part {
    std::atomic<Device*> slots[kPartIds] = {};
  };
  // Slot index of (protocol, id); -1 for a protocol vlans do not use.
  static long index(std::uint16_t protocol, std::uint16_t id);
  std::atomic<Part*> parts_[kParts] = {};
  std::size_t count_ = 0;  // control lock
};

// What a device's receive path consults; immutable once published (copy on write), except
// the vlan table, which snapshots share and which changes slot by slot.
struct RxHooks {
  std::shared_ptr<VlanTable> vlans;    // nullptr: no vlans
  const RxHandler* handler = nullptr;  // static storage
  std::vector<Device*> handler_devs;
  std::shared_ptr<RxQueue> queue;
};

// The vlan on `lower` with this protocol and id, or nullptr (Linux: vlan_find_dev).
// Context: control lock or RCU read side.
Device* find_vlan_hook(const Device& lower, std::uint16_t protocol, std::uint16_t id);

// Editing the hooks. Context: control lock; `dev` registered. Pointers must be removed
// before the devices they name are unregistered (kinds do it in uninit/del_port).
void add_vlan_hook(Control& ctl, Device& lower, const VlanHook& h);
void remove_vlan_hook(Control& ctl, Device& lower, const VlanHook& h);  // if still h.vlan's
void set_rx_handler(Control& ctl, Device& dev, const RxHandler* h, std::vector<Device*> devs);
// Opens a queue for the frames that end at `dev` (replacing any). Errors: ENODEV if `dev`
// is not registered.
Result<std::shared_ptr<RxQueue>> open_rx_queue(Control& ctl, Device& dev,
                                               std::size_t capacity = 1024);
void close_rx_queue(Control& ctl, Device& dev);
// Drops every hook of `dev` (the link watch calls it at Unregister). Context: control lock.
void clear_rx_hooks(Control& ctl, Device& dev);

// ---- probe: what `ifc probe FROM TO [count N]` reports.
struct ProbeOptions {
  std::uint32_t count = 1;                           // stop once this many frames arrived
  std::uint32_t max_attempts = 0;                    // 0: until `timeout`
  Duration interval = std::chrono::milliseconds(1);  // real time between attempts
  Duration timeout = std::chrono::seconds(3);
  std::size_t size = 64;  // frame length in bytes (>= 60)
};
struct ProbeResult {
  std::uint64_t attempts = 0;             // frames handed to transmit()
  std::uint64_t sent = 0;                 // of those, taken by FROM (not dropped at once)
  std::uint64_t received = 0;             // arrived at TO
  std::optional<Duration> first_arrival;  // from the first attempt (steady clock)
};
// Sends probe frames (to TO's address, from FROM's) until `count` arrived, `max_attempts`
// were made or `timeout` passed. Context: no control lock held by the caller (takes it
// briefly); sleeps `interval` between attempts. Errors: ENOENT (namespace), ENODEV
// (device), EBUSY (TO already has an RxQueue).
Result<ProbeResult> probe(Engine& engine, std::string_view ns, std::string_view from,
                          std::string_view to, const ProbeOptions& opts = {});

}  // namespace ifcore

#include "ifcore/rcu.h"

namespace ifcore {

template <class F>
Ref hold_registered(F get, const char* holder) {
  rcu::ReadGuard g;
  Device* d = get();
  if (!d || d->state() != RegState::Registered) return Ref();
  return Ref(*d, holder);
}

}  // namespace ifcore
