// ifcore/device.h — a network device (Linux: struct net_device) and its references.
//
// Who may read what:
//  - Immutable after allocation: id(), kind().
//  - Atomic or RCU-published (any thread, inside an rcu::ReadGuard for the *_rcu
//    accessors and for pointers such as master()/link()): ifindex, name, flags, mtu,
//    address, group, txqlen, operstate, carrier, state, namespace.
//  - Control lock only: the upper/lower adjacency lists and the kind's private state.
// Writers hold the engine's control lock (a `Control`, see engine.h). The `set_*_locked`
// setters change a field without notifying anybody: kinds use them while setting a device
// up before registration; everything else goes through `Control`, which notifies.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ifcore/addr.h"
#include "ifcore/clock.h"
#include "ifcore/result.h"

namespace ifcore {

class Device;
class Engine;
class Kind;
class Namespace;
class Control;
struct RxHooks;  // frame.h: what intercepts frames received on a device

// Linux: enum netdev_reg_state (NETREG_*).
enum class RegState : std::uint8_t {
  Uninitialized,  // allocated, not yet visible
  Registered,     // listed and live
  Unregistering,  // in a batch being unregistered: unlisted, notifiers running
  Unregistered,   // notified; waiting for its references to drop
  Released,       // references gone; freed after a grace period
};
const char* to_string(RegState s);

// Kind-private state (Linux: netdev_priv). Kinds derive from it.
class DevicePriv {
 public:
  virtual ~DevicePriv() = default;
};

// Per-device traffic counters (IFLA_STATS64 subset). Context: any thread.
struct LinkCounters {
  std::atomic<std::uint64_t> rx_packets{0}, tx_packets{0}, rx_bytes{0}, tx_bytes{0};
  std::atomic<std::uint64_t> rx_dropped{0}, tx_dropped{0}, rx_errors{0}, tx_errors{0};
  std::atomic<std::uint64_t> multicast{0};
};

// The sizes a device offers the offloads (Linux: dev->gso_max_size, gso_max_segs,
// gro_max_size, gso_ipv4_max_size, gro_ipv4_max_size; IFLA_GSO_MAX_SIZE...). Most devices
// keep the defaults alloc_netdev gives.
struct OffloadLimits {
  std::uint32_t gso_max_size = 65536;       // GSO_LEGACY_MAX_SIZE
  std::uint32_t gso_max_segs = 65535;       // GSO_MAX_SEGS
  std::uint32_t gro_max_size = 65536;       // GRO_LEGACY_MAX_SIZE
  std::uint32_t gso_ipv4_max_size = 65536;  // GSO_LEGACY_MAX_SIZE
  std::uint32_t gro_ipv4_max_size = 65536;  // GRO_LEGACY_MAX_SIZE
  friend bool operator==(const OffloadLimits&, const OffloadLimits&) = default;
};

// A copy of a device's state at one moment, read under the control lock or RCU.
struct DeviceSnapshot {
  std::uint64_t id = 0;
  int ifindex = 0;
  std::string name;
  std::string kind;
  std::uint16_t hw_type = 0;
  std::uint32_t flags = 0;
  std::uint32_t mtu = 0, min_mtu = 0, max_mtu = 0;
  HwAddr address, broadcast, perm_address;
  std::uint32_t group = 0;
  std::uint32_t txqlen = 0;
  std::uint8_t operstate = 0;
  std::uint8_t link_mode = 0;
  bool carrier = false;
  bool activated = false;  // Device::activated()
  std::uint32_t carrier_up_count = 0, carrier_down_count = 0;
  int master_ifindex = 0;
  int link_ifindex = 0;
  std::string ns_name;
  std::string alias;
  std::uint32_t num_tx_queues = 1, num_rx_queues = 1;
  OffloadLimits offload;
  bool proto_down = false;
  std::uint32_t proto_down_reason = 0;
  RegState state = RegState::Uninitialized;
};

class Device {
 public:
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // --- identity
  std::uint64_t id() const { return id_; }  // engine-unique, never reused
  const Kind& kind() const { return *kind_; }
  Engine& engine() const { return *engine_; }
  int ifindex() const { return ifindex_.load(std::memory_order_acquire); }
  // Context: control lock, or inside an rcu::ReadGuard (the namespace may change).
  Namespace& ns() const { return *ns_.load(std::memory_order_acquire); }

  // --- name. name_rcu(): Context: inside an rcu::ReadGuard; the view ends with it.
  std::string_view name_rcu() const;
  std::string name() const;  // Context: any thread (takes a read-side section)
  // Context: control lock; the view ends with it, or with a rename made under it.
  std::string_view name_locked() const { return name_rcu(); }

  // --- scalar state. Context: any thread.
  std::uint32_t flags() const { return flags_.load(std::memory_order_relaxed); }
  bool is_up() const;
  std::uint32_t mtu() const { return mtu_.load(std::memory_order_relaxed); }
  std::uint32_t min_mtu() const { return min_mtu_; }
  std::uint32_t max_mtu() const { return max_mtu_; }
  std::uint16_t hw_type() const { return hw_type_; }
  std::uint32_t group() const { return group_.load(std::memory_order_relaxed); }
  std::uint32_t txqlen() const { return txqlen_.load(std::memory_order_relaxed); }
  std::uint8_t operstate() const { return operstate_.load(std::memory_order_relaxed); }
  std::uint8_t link_mode() const { return link_mode_.load(std::memory_order_relaxed); }
  bool carrier() const { return carrier_.load(std::memory_order_relaxed); }
  std::uint32_t carrier_up_count() const { return carrier_up_.load(std::memory_order_relaxed); }
  std::uint32_t carrier_down_count() const { return carrier_down_.load(std::memory_order_relaxed); }
  // Linux: dev->proto_down and dev->proto_down_reason (IFLA_PROTO_DOWN[_REASON]).
  bool proto_down() const { return proto_down_.load(std::memory_order_relaxed); }
  std::uint32_t proto_down_reason() const {
    return proto_down_reason_.load(std::memory_order_relaxed);
  }
  RegState state() const { return state_.load(std::memory_order_acquire); }
  std::uint32_t num_tx_queues() const { return num_tx_queues_; }
  std::uint32_t num_rx_queues() const { return num_rx_queues_; }

  // What rtnetlink reports (Linux: dev_get_flags adds IFF_RUNNING, IFF_LOWER_UP and
  // IFF_DORMANT from the running state; rtnl_fill_ifinfo reports DOWN when not running).
  std::uint32_t reported_flags() const;
  std::uint8_t reported_operstate() const;

  // --- addresses. Context: any thread (copies under a read-side section).
  HwAddr address() const;
  HwAddr broadcast() const;
  HwAddr perm_address() const;
  std::string alias() const;
  // The device's alternative names in the order they were added (Linux: the name nodes
  // on dev->name_node->list, see netdev_name_node_alt_create). Every one of them is also
  // in the namespace's name table: a lookup by name finds the device by any of them.
  // Context: control lock. Changed by Control::add_altname / del_altname.
  const std::vector<std::string>& altnames_locked() const;

  // --- offload limits. Context: control lock. Changed by Control::set_offload_limits.
  const OffloadLimits& offload_limits_locked() const;

  // --- relations. Pointers: Context: control lock, or inside an rcu::ReadGuard.
  Device* master() const { return master_.load(std::memory_order_acquire); }
  // The device IFLA_LINK names: the lower device of a vlan/macvlan, a veth's peer.
  Device* link() const { return link_.load(std::memory_order_acquire); }
  // Context: control lock.
  const std::vector<Device*>& uppers_locked() const;
  const std::vector<Device*>& lowers_locked() const;
  bool has_upper_locked(const Device& d) const;
  // True if `d` is this device or (transitively) above it. Context: control lock.
  bool is_upper_or_self_locked(const Device& d) const;
  // True if `d` is this device or (transitively) below it. Context: control lock.
  bool is_lower_or_self_locked(const Device& d) const;

  // --- a plug-in's state for this device (Linux: dev->ip_ptr, dev->ip6_ptr), in a slot
  // that Engine::claim_device_slot() handed out: one load instead of a table lookup. The
  // plug-in owns the state and clears the slot before freeing it. Context: control lock
  // (the setter takes the caller's Control as proof).
  static constexpr int kPluginSlots = 4;
  void* plugin_slot_locked(int slot) const { return plugin_slots_[slot]; }
  void set_plugin_slot_locked(const Control&, int slot, void* p) { plugin_slots_[slot] = p; }

  // --- kind-private state. Context: control lock (or the kind's own rules).
  DevicePriv* priv() const { return priv_.get(); }
  template <class T>
  T& priv_as() const {
    return static_cast<T&>(*priv_);
  }

  // --- counters (frame path). Context: any thread. A device's counters are made when it
  // first counts a frame (most devices never do); counters_if_any() is null until then.
  LinkCounters& counters() const {
    LinkCounters* c = counters_.load(std::memory_order_acquire);
    return c ? *c : make_counters();
  }
  const LinkCounters* counters_if_any() const { return counters_.load(std::memory_order_acquire); }

  // --- frame path (frame.h). The transmit path is activated by the link watch when it
  // handles carrier on, or at open when carrier is already on (Linux: dev_activate), and
  // deactivated at close or carrier off (dev_deactivate). Context: any thread to read;
  // control lock to set (the Control is the proof).
  bool tx_active() const { return tx_active_.load(std::memory_order_acquire); }
  void set_tx_active_locked(const Control&, bool on) {
    tx_active_.store(on, std::memory_order_release);
  }
  // The device has been opened once (Linux: the first dev_activate attaches its default
  // qdisc, `noqueue` for a virtual device, which stays after a close). Context: any thread
  // to read; control lock to set (the Control is the proof).
  bool activated() const { return activated_.load(std::memory_order_relaxed); }
  void set_activated_locked(const Control&) { activated_.store(true, std::memory_order_relaxed); }
  // Receive hooks (vlans on this device, a bridge or macvlan handler; Linux: vlan_info,
  // rx_handler). RCU-published: read inside an rcu::ReadGuard; written by frame.cc.
  const RxHooks* rx_hooks_rcu() const { return rx_hooks_.load(std::memory_order_acquire); }
  // Publishes new hooks and returns the old ones (to retire after a grace period).
  // Context: control lock (the Control is the proof).
  const RxHooks* exchange_rx_hooks_locked(const Control&, const RxHooks* h) {
    return rx_hooks_.exchange(h, std::memory_order_acq_rel);
  }

  // --- references. An approximation while live (the sum of shards), exact once
  // unregistering. Context: any thread.
  std::int64_t refcount() const;

  // A consistent copy. Context: control lock.
  DeviceSnapshot snapshot_locked() const;

  // --- setters that do not notify. Each takes the caller's Control as its proof that the
  // control lock is held (a device not yet registered is set under it too): a setter cannot
  // be called where no Control is in reach. Use `Control` for changes that others must
  // hear about.
  void set_name_locked(const Control&, std::string_view name);
  void set_flags_locked(const Control&, std::uint32_t f) {
    flags_.store(f, std::memory_order_relaxed);
  }
  void set_mtu_locked(const Control&, std::uint32_t v) { mtu_.store(v, std::memory_order_relaxed); }
  void set_mtu_range_locked(const Control&, std::uint32_t min, std::uint32_t max) {
    min_mtu_ = min;
    max_mtu_ = max;
  }
  void set_hw_type_locked(const Control&, std::uint16_t t) { hw_type_ = t; }
  void set_address_locked(const Control&, const HwAddr& a);
  void set_broadcast_locked(const Control&, const HwAddr& a);
  void set_perm_address_locked(const Control&, const HwAddr& a);
  void set_alias_locked(const Control&, std::string_view alias);
  void set_group_locked(const Control&, std::uint32_t g) {
    group_.store(g, std::memory_order_relaxed);
  }
  void set_txqlen_locked(const Control&, std::uint32_t q) {
    txqlen_.store(q, std::memory_order_relaxed);
  }
  void set_operstate_locked(const Control&, std::uint8_t s) {
    operstate_.store(s, std::memory_order_relaxed);
  }
  void set_link_mode_locked(const Control&, std::uint8_t m) {
    link_mode_.store(m, std::memory_order_relaxed);
  }
  // Sets carrier and counts the transition (IFLA_CARRIER_CHANGES). Returns true if it changed.
  bool set_carrier_locked(const Control&, bool on);
  // Validates an mtu for this device (Linux: dev_validate_mtu). Errors: EINVAL.
  Result<void> validate_mtu(std::uint32_t mtu) const;
  void set_link_locked(const Control&, Device* d) { link_.store(d, std::memory_order_release); }
  void set_queues_locked(const Control&, std::uint32_t tx, std::uint32_t rx) {
    num_tx_queues_ = tx;
    num_rx_queues_ = rx;
  }
  void set_offload_limits_locked(const Control&, const OffloadLimits& l);
  void set_priv(std::unique_ptr<DevicePriv> p) { priv_ = std::move(p); }

 private:
  friend class Engine;
  friend class Control;
  friend class Namespace;
  friend class Ref;
  friend struct DeviceAccess;  // core internals
  friend class UnregisterBatch;
  // An Ethernet device (Linux: alloc_netdev + ether_setup): a random address, the
  // broadcast address, IFF_BROADCAST | IFF_MULTICAST, mtu 1500 (68..65535), txqlen 1000.
  Device(Engine& engine, const Kind& kind, Namespace& ns);

  // RCU-published values. A device carries a box of each of its name, address and
  // broadcast: what it is given before registration is written into them, with no
  // allocation; later changes publish new boxes (device.cc).
  struct NameBox {
    char s[16] = {};
    std::uint8_t len = 0;
  };
  struct AddrBox {
    HwAddr a;
  };
  struct TextBox;
  // Adjacency, alternative names and changed offload limits, which most devices never
  // have: made at the first upper, lower, altname or limit changed (control lock), so that
  // a plain device carries one pointer.
  struct Links;
  Links& links_locked();
  LinkCounters& make_counters() const;

  // Layout: the first two cache lines hold what every pass of an unregister batch (and
  // the frame path) reads: identity, name and its registry entry, flags, state, the frame
  // hooks. Frame counters, written by every frame, are kept apart from them.
  const std::uint64_t id_;
  Engine* const engine_;
  const Kind* const kind_;
  std::atomic<Namespace*> ns_;
  std::array<void*, kPluginSlots> plugin_slots_{};  // control lock; every protocol's state
  std::atomic<int> ifindex_{0};
  std::uint16_t hw_type_ = 1;  // ARPHRD_ETHER
  std::atomic<const NameBox*> name_{nullptr};
  std::atomic<std::uint32_t> flags_{0};
  std::atomic<std::uint32_t> mtu_{1500};
  void* name_node_ = nullptr;                      // the registry's entry (control lock)
  std::atomic<const RxHooks*> rx_hooks_{nullptr};  // frame path: RCU-published
  std::atomic<const AddrBox*> address_{nullptr};
  std::atomic<const AddrBox*> broadcast_{nullptr};
  std::atomic<const AddrBox*> perm_address_{nullptr};
  std::atomic<const TextBox*> alias_{nullptr};
  std::atomic<std::uint32_t> group_{0};
  std::atomic<std::uint32_t> txqlen_{1000};
  std::atomic<std::uint8_t> operstate_{0};
  std::atomic<std::uint8_t> link_mode_{0};
  std::atomic<bool> carrier_{true};  // Linux: carrier is on until a driver says otherwise
  std::atomic<std::uint32_t> carrier_up_{0}, carrier_down_{0};
  std::atomic<RegState> state_{RegState::Uninitialized};
  std::atomic<bool> tx_active_{false};  // frame path: see tx_active()
  std::atomic<bool> activated_{false};  // see activated()
  std::uint32_t num_tx_queues_ = 1, num_rx_queues_ = 1;
  std::uint32_t min_mtu_ = 68, max_mtu_ = 65535;
  std::atomic<Device*> master_{nullptr};
  std::atomic<Device*> link_{nullptr};
  // The token of the UnregisterBatch that added it last (0: none; see engine.h), beside
  // the lists queue_unregister reads. Control lock. Linux: dev->unreg_list.
  std::uint64_t batch_token_ = 0;
  // The link watch's mark while the device opens (PreUp..Up) or closes (GoingDown..Down);
  // see core/linkwatch.cc. Control lock.
  std::uint8_t lw_transit_ = 0;
  // Linux: upper_level / lower_level: 1 + the longest chain of uppers above (lowers below),
  // kept with a count of the neighbours at each level (in Links) so a link or unlink
  // updates them without walking a device's thousand vlans. Control lock.
  std::uint8_t upper_level_ = 1, lower_level_ = 1;
  // Linux: dev->proto_down, dev->proto_down_reason (Control::set_proto_down), in the
  // padding after the levels.
  std::atomic<bool> proto_down_{false};
  std::atomic<std::uint32_t> proto_down_reason_{0};
  std::unique_ptr<Links> links_;      // control lock; null: none of what Links holds
  std::unique_ptr<DevicePriv> priv_;  // control lock
  mutable std::atomic<LinkCounters*> counters_{nullptr};  // see counters()
  NameBox name0_;                                         // see NameBox
  AddrBox address0_, broadcast0_;                         // see NameBox

  // References (see ref.cc): shard slot, mode, exact count once unregistering.
  std::uint32_t ref_slot_ = 0;
  std::atomic<bool> ref_dying_{false};
  std::atomic<std::int64_t> ref_exact_{1};  // 1 = the registry's own reference
  struct Tracker;
  std::unique_ptr<Tracker> tracker_;  // debug mode only

  // Finalizer bookkeeping (control lock / finalizer lock; see core/finalizer.cc): when the
  // device was handed over, its next leak-report deadline, and its links in the
  // finalizer's intrusive deadline lists (no allocation per device).
  TimePoint unregistered_at_{};
  TimePoint next_report_{};
  Device* fin_prev_ = nullptr;
  Device* fin_next_ = nullptr;
  std::uint8_t fin_list_ = 0;  // which list holds it; 0: none (not waiting)
  bool fin_caller_waits_ = false;
};

// A counted reference on a device (Linux: dev_hold/dev_put with a netdev_tracker).
// Move-only; the destructor drops it. `holder` names who holds it (a string with static
// storage, e.g. "inet6"), listed in leak reports in debug mode.
//
// Context: any thread; never blocks; the device must not be Released. Taking a Ref on a
// device found by an RCU lookup is allowed inside the read-side section; the Ref then keeps
// the device alive beyond it. The Ref that drops the last reference of an unregistered
// device wakes the finalizer.
class [[nodiscard]] Ref {
 public:
  Ref() = default;
  Ref(Device& dev, const char* holder);
  Ref(Ref&& o) noexcept : dev_(o.dev_), holder_(o.holder_), track_id_(o.track_id_) {
    o.dev_ = nullptr;
  }
  Ref& operator=(Ref&& o) noexcept;
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  ~Ref() { reset(); }

  void reset();
  Device* get() const { return dev_; }
  Device* operator->() const { return dev_; }
  Device& operator*() const { return *dev_; }
  explicit operator bool() const { return dev_ != nullptr; }
  const char* holder() const { return holder_; }

 private:
  Device* dev_ = nullptr;
  const char* holder_ = nullptr;
  std::uint64_t track_id_ = 0;
};

}  // namespace ifcore
