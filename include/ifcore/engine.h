// ifcore/engine.h — the engine: namespaces, the control lock, the notifier chain, the
// unregister batches, the finalizer, the policies and the statistics.
//
// Lock order (every file that takes locks repeats it):
//   1. Engine::control_ (the control lock, "rtnl")
//   2. Finalizer::mu_ (the todo list)
//   3. Device::Tracker::mu (debug ref tracking), RefShards::mu_ (shard registry),
//      Engine::Impl::batches_mu (the live unregister batches)
// RCU read-side sections may be entered with or without any of them, and never block.
//
// All changes go through a `Control`: a move-only handle that holds the control lock and
// offers every mutation. Reads need no lock: see Namespace::find_*_rcu and rcu.h.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ifcore/config.h"
#include "ifcore/device.h"
#include "ifcore/kind.h"
#include "ifcore/link_request.h"
#include "ifcore/namespace.h"
#include "ifcore/notifier.h"
#include "ifcore/result.h"

namespace ifcore {

class Engine;
class Finalizer;
class NotifierChain;

// Counters and cumulative time per phase. Read with Engine::stats().
struct Stats {
  std::uint64_t devices_registered = 0;
  std::uint64_t devices_unregistered = 0;
  std::uint64_t devices_released = 0;
  std::uint64_t devices_leaked = 0;   // reported at least once as waiting too long
  std::uint64_t leak_reports = 0;     // "waiting for ... to become free" lines
  std::uint64_t batches = 0;          // unregister batches committed
  std::uint64_t notifier_passes = 0;  // one per event per batch (or per device)
  std::uint64_t notifier_calls = 0;   // subscriber invocations
  std::uint64_t grace_periods = 0;
  std::uint64_t barriers = 0;
  std::uint64_t ref_waits = 0;     // callers that had to wait for references
  std::uint64_t rebroadcasts = 0;  // Unregister re-broadcasts (legacy waits)
  Duration notifier_time{};
  Duration grace_time{};
  Duration barrier_time{};
  Duration ref_wait_time{};  // time callers spent waiting for references
  Duration unlist_time{};
  Duration free_time{};
};

// Pernet hooks (Linux: pernet_operations): run for every namespace made or destroyed,
// including those that exist when the hook is added. Context: control lock.
class PernetHooks {
 public:
  virtual ~PernetHooks() = default;
  virtual Result<void> init(Control& ctl, Namespace& ns) { return ok(); }
  // Called after every device of the namespace has been unregistered.
  virtual void exit(Control& ctl, Namespace& ns) {}
  // Called before the devices are unregistered (e.g. to flush routes).
  virtual void pre_exit(Control& ctl, Namespace& ns) {}
};

// A set of devices to unregister together (Linux: unregister_netdevice_queue + _many).
//
// Membership is marked in the device itself, as Linux links dev->unreg_list: each batch
// takes a token (never reused) at its first add and writes it into the devices it adds, so
// add() and contains() are a load and a compare. A device added to a second batch while
// the first is still being built takes the second's token; any such re-marking sends every
// batch started before it to an exact look-up of its own list (rare: error paths and
// nested deletes), and so does a copy; contains() stays exact for every batch, committed
// (it is then empty) or not.
//
// A device may be listed by several batches (copies, overlapping batches). Committing one
// takes the devices it unregisters out of every other live batch of the engine (as Linux's
// list_move takes a device off the list it was on), so that no batch keeps a device that
// is freed after the commit: an older batch committed later only finds what is still
// registered.
//
// Caller must: add, commit, copy and ask contains() with the control lock held, and drop a
// batch that has devices before their engine. Moving or destroying a batch takes the
// engine's batch lock (engine_impl.h) and needs no control lock.
class UnregisterBatch {
 public:
  UnregisterBatch() = default;
  UnregisterBatch(const UnregisterBatch& o);
  UnregisterBatch(UnregisterBatch&& o) noexcept;
  UnregisterBatch& operator=(const UnregisterBatch& o);
  UnregisterBatch& operator=(UnregisterBatch&& o) noexcept;
  ~UnregisterBatch();

  // Adds `dev` once (later adds are ignored). Context: control lock.
  void add(Device& dev);
  // Context: control lock; `dev` not freed.
  bool contains(const Device& dev) const;
  std::span<Device* const> devices() const { return devices_; }
  bool empty() const { return devices_.empty(); }
  std::size_t size() const { return devices_.size(); }

 private:
  friend class Control;
  bool contains_slow(const Device& dev) const;
  // The engine's list of live batches with devices (see above). link: at the first add;
  // unlink: when the batch is destroyed, moved from or assigned. Each takes the batch lock.
  void link(Engine& e);
  void unlink();
  // Takes the devices of `gone` out of the list. Context: control lock and batch lock.
  void forget(const std::unordered_set<const Device*>& gone);

  Engine* engine_ = nullptr;  // set while linked
  UnregisterBatch* prev_ = nullptr;
  UnregisterBatch* next_ = nullptr;
  std::vector<Device*> devices_;
  std::uint64_t token_ = 0;    // 0 until the first add
  std::uint64_t remarks_ = 0;  // the global re-mark count at the first add (see add())
  bool exact_ = false;         // a copy: marks are shared, always look up the list
  // The namespace of the first device, set before the batch is linked, and whether a later
  // device is elsewhere: a commit under a namespace's control reads (and takes its devices
  // out of) only the batches that may hold devices of its namespace, which no other
  // control is filling at the time (see Control::commit).
  const Namespace* first_ns_ = nullptr;
  bool mixed_ = false;
  // Devices of devices_[0, indexed_) by address, for the exact look-up (built lazily).
  mutable std::unordered_set<const Device*> index_;
  mutable std::size_t indexed_ = 0;
};

// Devices to register together: ifcore's counterpart of UnregisterBatch (Linux registers
// one device at a time). Control::register_batch checks every item first, then registers
// them all with one notifier pass, or none of them.
//
// Caller must: fill and commit it with the control lock held. Devices not committed are
// freed with the batch.
class RegisterBatch {
 public:
  // Adds `dev` (from alloc_device or Kind::prepare_link, not registered) to be named `name`
  // (which may hold one "%d") with `ifindex` (0 = allocate). Returns its position.
  std::size_t add(std::unique_ptr<Device> dev, std::string name, int ifindex = 0);
  void reserve(std::size_t n) { items_.reserve(n); }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }

  // One device waiting in the batch (what add() was given).
  struct Item {
    std::unique_ptr<Device> dev;
    std::string name;
    int ifindex = 0;
    Namespace* ns = nullptr;  // the device's, read by add() while the new device is in cache
  };

 private:
  friend class Control;
  std::vector<Item> items_;
};

// Why a batch of creates failed: the item at fault (nullopt when the batch as a whole is
// refused, e.g. ENOSPC) and its error. Nothing of the batch was made.
struct BatchError {
  std::optional<std::size_t> item;
  Error error;
};
using BatchResult = tl::expected<std::vector<Device*>, BatchError>;

// The requests of a create batch, handed to Control::create_links one at a time, in order:
// a decoder that keeps one request in memory instead of the whole list (10^4 requests of
// about 600 bytes each would pass through the cache twice).
class LinkRequestSource {
 public:
  virtual ~LinkRequestSource() = default;
  // How many requests there are, or an estimate: room is reserved for this many.
  virtual std::size_t size_hint() const = 0;
  // The next request, valid until the next call; nullptr after the last. An error ends the
  // batch as the error of the item whose turn it was.
  virtual Result<const LinkRequest*> next() = 0;
};

// Told when namespace `ns` gives `peer` the id `id` (added) or takes it back (the peer is
// being destroyed). Context: control lock; must not change namespace ids.
using NsidObserver = std::function<void(Namespace& ns, Namespace& peer, int id, bool added)>;

// A report of a device that waits for its references too long.
struct LeakReport {
  std::string name;
  int ifindex = 0;
  std::uint64_t device_id = 0;
  std::int64_t usage_count = 0;
  std::vector<std::string> holders;  // in debug mode (track_refs)
  Duration waited{};
};

// The control handle: proof that the caller holds the engine's control lock.
// Context of every method: the lock is held by this handle's owner thread.
//
// Two scopes (docs/CONCURRENCY.md): Engine::control() holds the whole engine; a
// namespace's control (Engine::control(Namespace&)) holds that namespace alone, so that
// controls of different namespaces run at once. A namespace's control changes only its
// own namespace's devices: a request that reaches another namespace (a device moved, made
// or linked there, a veth whose peer is there, a device with an upper or lower there),
// or the engine itself (namespaces, subscribers, pernet hooks, policies), fails with
// EXDEV, changing nothing, and needs the engine-wide control.
class Control {
 public:
  Control(Control&& o) noexcept;
  Control& operator=(Control&&) = delete;
  Control(const Control&) = delete;
  ~Control();

  Engine& engine() const { return *engine_; }
  // The namespace this control holds alone; nullptr for the engine-wide control.
  Namespace* scope() const { return scope_; }
  // Whether this control may change `ns`, or `dev` (its namespace, and every device it
  // is linked to: its uppers and lowers, and its link(), a veth's peer or a vlan's lower).
  bool covers(const Namespace& ns) const { return !scope_ || scope_ == &ns; }
  bool covers(const Device& dev) const;
  // ok() if covers(dev) (or ns); else EXDEV with a message that says what it needs.
  Result<void> check_covers(const Device& dev) const;
  Result<void> check_covers(const Namespace& ns) const;
  // ok() for the engine-wide control; EXDEV for a namespace's (`what` needs the engine).
  Result<void> check_engine_wide(std::string_view what) const;
  // The same for what cannot fail: a namespace's control here is the caller's bug, logged
  // (LogLevel::Error), then abort().
  void require_engine_wide(std::string_view what) const;

  // ---- namespaces
  Namespace* find_namespace(std::string_view name) const;
  Namespace* find_namespace_by_id(int id) const;
  std::vector<Namespace*> namespaces() const;  // in order of creation
  // `id`: the namespace's id (its netnsid as others see it), if not the next one (a
  // restored namespace takes the one it had). Errors: EEXIST (name or id taken), EINVAL
  // (bad name, negative id), ENOSPC (Policies::max_namespaces).
  Result<Namespace*> create_namespace(std::string_view name, std::optional<int> id = std::nullopt);
  // Takes back the ids other namespaces gave it (telling the nsid observers; Linux:
  // unhash_nsid), unregisters every device of the namespace in ONE batch, then frees it.
  Result<void> destroy_namespace(Namespace& ns);
  // Calls `fn` whenever a namespace id is given or taken back (Namespace::peer_id_locked).
  // Returns a handle for remove_nsid_observer. Context: engine-wide control.
  std::uint64_t add_nsid_observer(NsidObserver fn);
  void remove_nsid_observer(std::uint64_t handle);

  // ---- lookups (no RCU section needed: the lock keeps the tables still)
  Device* find(Namespace& ns, std::string_view name) const;
  Device* find(Namespace& ns, int ifindex) const;

  // ---- kinds and plug-ins
  const Kind* find_kind(std::string_view name) const;
  SubscriptionId subscribe(Subscriber& s, SubscribeOptions opts);
  // replay_down: send GoingDown/Down (for up devices) and Unregister for existing devices.
  void unsubscribe(SubscriptionId id, bool replay_down = false);
  // Changes a subscriber's priority (keeps its registration order among equals).
  void set_priority(SubscriptionId id, int priority);
  // The engine's policies as they are now (Engine::policies() would deadlock here).
  const Policies& policies() const;
  // Calls `fn` (under the control lock) every time Engine::set_policies changes them.
  void on_policies_changed(std::function<void(Control&, const Policies&)> fn);
  Result<void> add_pernet(PernetHooks& hooks);
  void remove_pernet(PernetHooks& hooks);
  // Runs the chain for one event. Vetoable events stop at the first error and return it.
  Result<void> notify(const EventInfo& ev);
  // Tells subscribers that state changed (NetdevEvent::Change) with the changed flags,
  // for an up device only (Linux: netdev_state_change; nothing for a down one).
  void notify_change(Device& dev, std::uint32_t flags_changed = 0);

  // ---- device lifecycle, for kinds
  // A new device of `kind` in `ns`, set up with Ethernet defaults (mtu 1500, random
  // address). Not visible until registered.
  std::unique_ptr<Device> alloc_device(const Kind& kind, Namespace& ns);
  // Names, indexes, lists and notifies (Register). `name` may hold one "%d".
  // `ifindex` 0 = allocate. Errors: EINVAL/ENAMETOOLONG (name), EEXIST (name taken),
  // EBUSY (ifindex taken), ENFILE (no free %d number), ENOSPC (Policies::max_devices), a
  // subscriber's veto.
  Result<Device*> register_device(std::unique_ptr<Device> dev, std::string_view name,
                                  int ifindex = 0);
  // Registers every device of `batch`, in order, or none (the batch is emptied either
  // way). First every item is checked: ifindex not negative (EINVAL), names valid and
  // unique in the batch and their namespace (EEXIST), ifindexes likewise (EBUSY), room
  // (ENOSPC, for the batch as a whole); then all are named, indexed and listed, and the
  // chain is walked ONCE for Register with the whole list. A veto of one device unlists
  // them all again (the subscribers that saw a device hear Unregister for it) and restores
  // the ifindex allocator: a failed batch leaves the state as it found it. Returns the
  // devices in batch order. Errors: as register_device's, with the item at fault: the first
  // in batch order, as if every check had been made before listing (a name in use is found
  // when it is listed, and the batch's checks are then made again to report that item).
  BatchResult register_batch(RegisterBatch& batch);
  // Whether `count` more devices fit in `ns` under Policies::max_devices. A kind that
  // registers several devices asks for them all before registering the first, so that a
  // refusal changes nothing. Errors: ENOSPC, naming the namespace and the limit.
  Result<void> check_device_room(const Namespace& ns, std::size_t count) const;
  // Applies the generic attributes of a create request (mtu, address, txqlen, group...)
  // to an unregistered device. Errors: EINVAL, ERANGE with a message.
  Result<void> apply_create_attrs(Device& dev, const LinkRequest& req);

  // ---- requests (what RTM_NEWLINK/SETLINK/DELLINK do)
  // Create: kind validate + new_link, then flags and master. Both-or-neither.
  // Errors: EOPNOTSUPP (unknown kind), EEXIST, EINVAL, ENODEV...
  Result<Device*> create_link(Namespace& ns, const LinkRequest& req);
  // Create many devices in `ns` at once, all or nothing: each request is checked (kind,
  // generic attributes, the kind's validate) and prepared (Kind::prepare_link) before any is
  // registered, then one register_batch; then the flags each asks for (IFF_UP...). A failure
  // of the flags unregisters the whole batch in one UnregisterBatch. Requests may not name a
  // master or another namespace. Errors: EOPNOTSUPP "kind \"K\" cannot be created in a
  // batch", the errors of create_link and register_batch, with the item at fault.
  BatchResult create_links(Namespace& ns, std::span<const LinkRequest> reqs);
  // The same, reading each request once from `source` (each checked and prepared before the
  // next is read); the source's error for an item is that item's.
  BatchResult create_links(Namespace& ns, LinkRequestSource& source);
  // Change an existing device. Validates everything first; if a step fails, the steps
  // already made are undone, the kind's and a master's port attributes included
  // (Kind::save_link, Kind::save_slave), so a failed request changes nothing; an undo that
  // itself fails is logged (LogLevel::Error) beside the request's error. Errors: as the
  // single operations below.
  // The settings Linux announces at the end of the request (do_setlink's
  // DO_SETLINK_NOTIFY: group, alias, link mode, protodown, kind and port data) are
  // announced once, at the end, if the device is up; with `state_changed` the caller is
  // told whether to and does it itself (after changes of its own, as IFLA_AF_SPEC's).
  Result<void> change_link(Device& dev, const LinkRequest& req, bool* state_changed = nullptr);
  // Delete: the kind's del_link (cascade) and one batch.
  Result<void> delete_link(Device& dev);
  // Delete many devices in one batch (each with its cascade). Fails (changing nothing) if
  // any of them refuses.
  Result<void> delete_links(std::span<Device* const> devs);

  // ---- single changes (each notifies; vetoes leave state unchanged)
  // IFF_UP on (dev_open) and off (dev_close). `announce` is the ifi_change Up or Down is
  // announced with (0: IFF_UP | IFF_RUNNING, as dev_open and dev_close do).
  Result<void> open(Device& dev, std::uint32_t announce = 0);
  Result<void> close(Device& dev, std::uint32_t announce = 0);
  // Linux: dev_change_flags: UP via open/close, others (PROMISC, ALLMULTI, NOARP...) set.
  Result<void> change_flags(Device& dev, std::uint32_t flags);
  Result<void> set_mtu(Device& dev, std::uint32_t mtu);
  Result<void> set_address(Device& dev, const HwAddr& addr);
  // The address a kind gives its own device (Linux: eth_hw_addr_set, then
  // NETDEV_CHANGEADDR, as br_stp_change_bridge_id does): no validity check and no
  // PreChangeAddr, so an address a user may not set (a bridge's all-zero one) is allowed.
  // Errors: EINVAL (length differs from the device's).
  Result<void> set_address_from_kind(Device& dev, const HwAddr& addr);
  Result<void> set_broadcast(Device& dev, const HwAddr& addr);
  Result<void> rename(Device& dev, std::string_view name);
  Result<void> set_alias(Device& dev, std::string_view alias);
  // Alternative names (Linux: netdev_name_node_alt_create / _destroy). An altname is up to
  // 127 bytes (ALTIFNAMSIZ - 1) of any bytes but NUL (Linux accepts even an empty one); names and
  // altnames are unique together in a namespace. Neither notifies: rtnetlink announces the device
  // once after a whole property list (Linux: rtnl_linkprop -> netdev_state_change). add_altname:
  // Errors: EINVAL (too long, or a NUL), EEXIST (a name or altname in use). del_altname: Errors:
  // ENOENT (no device has the name), EINVAL (the device's own name, or another device's).
  Result<void> add_altname(Device& dev, std::string_view name);
  Result<void> del_altname(Device& dev, std::string_view name);
  Result<void> set_group(Device& dev, std::uint32_t group);
  Result<void> set_txqlen(Device& dev, std::uint32_t txqlen);
  // Linux: netif_set_gso_max_size and its siblings, as do_setlink calls them. Notifies
  // nothing (Linux announces no offload limit). The caller has checked them (RTM_NEWLINK's checks
  // are in Control::change_link).
  Result<void> set_offload_limits(Device& dev, const OffloadLimits& limits);
  // Enslave `port` to `master`, or release it from its master (`master` == nullptr).
  // Errors: EOPNOTSUPP (master's kind has no ports), ELOOP/EBUSY (loops), EINVAL.
  Result<void> set_master(Device& port, Device* master);
  // Adjacency (Linux: netdev_upper_dev_link). Errors: EBUSY (already linked, or a second
  // master), ELOOP (the upper is already below the lower).
  Result<void> link_upper(Device& lower, Device& upper, bool master);
  void unlink_upper(Device& lower, Device& upper);
  // Moves a device to another namespace (Linux: dev_change_net_namespace): notifies
  // Unregister in the old one and Register in the new one; keeps the ifindex if free.
  // Its altnames go with it. Errors: EINVAL (kind cannot move), EEXIST (name taken there,
  // no new name given; or one of its altnames taken there).
  Result<void> move_to_namespace(Device& dev, Namespace& to, std::string_view new_name = {});
  // Carrier and operstate (the link watch calls these). Notifies Change if changed.
  void set_carrier(Device& dev, bool on);
  // The carrier of several devices at once (a veth's two ends): every carrier set before
  // the link watch derives any operstate, which may depend on another's carrier
  // (LOWERLAYERDOWN), as Linux's deferred link watch sees them.
  void set_carriers(std::initializer_list<Device*> devs, bool on);
  void set_operstate(Device& dev, std::uint8_t operstate);
  // Linux: linkwatch_fire_event — the link watch derives the device's operstate and
  // notifies, as after a carrier change (a stacked device's kind calls it once registered,
  // its carrier taken from its lower).
  void fire_link_watch(Device& dev);
  // Linux: dev_change_proto_down_reason then dev_change_proto_down: the reasons' bits, and
  // protodown, which turns the carrier off (on when cleared). Notifies Change unless
  // `notify` is false (the caller does). The caller has checked the kind takes it
  // (Kind::can_change_proto_down).
  void set_proto_down(Device& dev, std::optional<bool> down,
                      std::optional<LinkRequest::ProtoDownReason> reason, bool notify = true);

  // ---- unregister
  // The kind's del_link: adds `dev` and its cascade to `batch`. Errors: EOPNOTSUPP.
  Result<void> queue_unregister(Device& dev, UnregisterBatch& batch);
  // Unregisters every device of the batch: close the up ones, unlist them, one notifier
  // pass per event, one grace period, hand them to the finalizer. Never fails.
  void commit(UnregisterBatch& batch);

 private:
  friend class Engine;
  friend class PluginGuard;
  friend struct StatsCounters;
  friend struct DeviceAccess;
  explicit Control(Engine& e);
  Control(Engine& e, Namespace& ns);
  void flush_tally();
  Engine* engine_;
  std::unique_lock<std::shared_mutex> lock_;    // engine-wide
  std::shared_lock<std::shared_mutex> shared_;  // a namespace's: the control lock shared...
  std::unique_lock<std::mutex> ns_lock_;        // ...and the namespace's own
  Namespace* scope_ = nullptr;
  // A namespace's control counts the engine's statistics here (Stats: registered,
  // unregistered, batches, notifier passes, calls, ticks) and adds them once when it goes,
  // so that controls of two namespaces do not write the same counters at every event.
  std::array<std::uint64_t, 6> tally_{};
  // Devices whose references a legacy-policy caller waits for once this control lets go
  // of its locks (Linux: the todo list that rtnl_unlock runs).
  std::vector<Device*> legacy_todo_;
};

// Held around a call into a plug-in's engine-wide state (what is not declared concurrent:
// Kind::concurrent, SubscribeOptions::concurrent) under a namespace's control: takes the
// engine's plug-in lock, which keeps controls of other namespaces out of that state.
// Nothing under the engine-wide control, which no other control runs beside. Recursive.
class PluginGuard {
 public:
  explicit PluginGuard(const Control& ctl, bool needed = true);
  ~PluginGuard();
  PluginGuard(const PluginGuard&) = delete;
  PluginGuard& operator=(const PluginGuard&) = delete;

 private:
  Engine* engine_ = nullptr;  // set when it holds the lock
};

class Engine {
 public:
  explicit Engine(EngineConfig cfg = {});
  ~Engine();  // destroys every namespace, waits for the finalizer (reports leaks)
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Takes the control lock for the whole engine. Context: not inside an rcu::ReadGuard;
  // not re-entrant (a thread holds at most one Control).
  Control control();
  // Takes the control lock for `ns` alone (shared with other namespaces' controls, then
  // the namespace's own lock): changes inside `ns` run beside those of other namespaces.
  // `ns` must stay alive (only the engine-wide control destroys a namespace). Context: as
  // control().
  Control control(Namespace& ns);

  // Plug-ins. Kinds must outlive the engine (use static instances or add_kind).
  void register_kind(const Kind& kind);
  void add_kind(std::unique_ptr<Kind> kind);

  const EngineConfig& config() const { return cfg_; }
  // Context: takes the control lock (inside a Control, use Control::policies()).
  Policies policies() const;
  // Context: takes the control lock; runs the on_policies_changed observers under it.
  void set_policies(const Policies& p);

  // Plug-in state kept for the engine's life, keyed by the plug-in's own tag address;
  // freed after every namespace is gone and every RCU callback has run.
  // Context: set under the control lock (once, at install); read from any thread after.
  void set_plugin_data(const void* tag, std::shared_ptr<void> data);
  template <class T>
  T* plugin_data(const void* tag) const {
    return static_cast<T*>(plugin_data_raw(tag));
  }
  void* plugin_data_raw(const void* tag) const;
  // A per-device slot for a plug-in's state (Device::plugin_slot_locked), or -1 once all
  // Device::kPluginSlots are taken. Context: control lock (at install).
  int claim_device_slot();

  // Context: any thread. The counters that the control lock's holder changes (devices
  // registered and unregistered, batches, notifier passes, calls and time) are updated
  // without a locked read-modify-write: a reset from another thread during such a change
  // may leave that change's counts.
  Stats stats() const;
  void reset_stats();
  TimeSource& time() const { return *time_; }
  void log(LogLevel level, std::string_view text) const;

  // Waits until every device unregistered so far is released, or `timeout` passes.
  // Returns true if none is left waiting. Context: not holding the control lock.
  bool drain(Duration timeout = std::chrono::seconds(10));
  // Checks the finalizer's leak-report deadlines now (with the steady clock the finalizer
  // wakes at each deadline; without background threads this is poll(time().now()) for
  // the finalizer alone).
  void check_leaks();
  // Does the finalizer's and the link watch's work that is due at `now` (devices whose last
  // reference dropped are freed, leak reports made, link events delivered) and returns
  // the next deadline (TimePoint::max(): none). With EngineConfig::background_threads off,
  // nothing else does it. Context: not holding the control lock (it takes it).
  TimePoint poll(TimePoint now);
  std::size_t pending_finalization() const;
  // Devices waiting for their references, with holders in debug mode.
  std::vector<LeakReport> waiting_devices() const;

  // ---- internals shared by core's files (not for embedders)
  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  friend class Control;
  EngineConfig cfg_;
  std::shared_ptr<TimeSource> time_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ifcore
