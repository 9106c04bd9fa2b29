// Engine internals shared by core's files: the control lock, namespaces, kinds, the chain,
// pernet hooks, statistics, the finalizer. Not a public header.
//
// Lock order (as in engine.h): control lock -> Finalizer::mu_ -> leaves (Tracker::mu,
// RefShards::mu_). The finalizer thread never takes the control lock while holding mu_.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/notifier_chain.h"
#include "core/timers.h"
#include "ifcore/engine.h"
#include "ifcore/mutex.h"

namespace ifcore {

class LinkWatch;  // core/linkwatch.h
struct LinkWatchDeleter {
  void operator()(LinkWatch* lw) const;
};
std::unique_ptr<LinkWatch, LinkWatchDeleter> make_link_watch(Engine::Impl& impl);
// LinkWatch::poll (core/linkwatch.h), for the files that do not see the class.
TimePoint poll_link_watch(LinkWatch& lw, Control& ctl, TimePoint now);

// Linux: validate_linkmsg's offload checks: the gso sizes against the device's TSO limit
// `tso_max_size`, the gso segments against GSO_MAX_SEGS, the gro sizes against GRO_MAX_SIZE.
// Errors: EINVAL "too big gso_max_size" (and likewise for the others).
Result<void> check_offload_limits(const LinkRequest& req, std::uint32_t tso_max_size);
// `l` after the request's limits, set in do_setlink's order and as netif_set_gso_max_size
// and its siblings set them (an IPv4 size follows a size of 64 KiB or less).
OffloadLimits apply_offload_limits(OffloadLimits l, const LinkRequest& req);

struct Device::Tracker {
  Mutex mu;  // LOCK ORDERING: a leaf
  std::uint64_t next IFCORE_GUARDED_BY(mu) = 0;
  std::map<std::uint64_t, std::string> live IFCORE_GUARDED_BY(mu);
};

// See Device::links_. Context: control lock.
struct Device::Links {
  std::vector<Device*> uppers, lowers;
  std::vector<std::string> altnames;  // see Device::altnames_locked
  // The neighbours at each level (see Device::upper_level_), counted up to 11 (link_upper
  // refuses a stack deeper than 8).
  std::array<std::uint32_t, 12> upper_levels{}, lower_levels{};
  OffloadLimits offload;
};

// Internal access to Device's private parts for core's files.
struct DeviceAccess {
  static void get(Device& d);
  static void put(Device& d);
  static void drop_exact(Device& d, std::int64_t n);
  // The same, but the caller handles the last drop itself (returns true if it was).
  static bool drop_exact_last(Device& d, std::int64_t n);
  static std::uint64_t track(Device& d, const char* holder);
  static void untrack(Device& d, std::uint64_t id);
  static std::vector<std::string> holders(const Device& d);
  // Sets the dying flag of every device, waits one grace period, folds the shards.
  static void kill_refs(Engine::Impl& impl, std::span<Device* const> devs);
  // kill_refs in steps, for a pass that visits each device once: start_dying for each
  // (the bias added, the flag set; returns the device's shard slot), then finish_dying
  // once with the slots in order: one grace period, the shards folded; returns what each
  // device's exact count must drop by to be exact (the bias less its shards' sum).
  static constexpr std::int64_t kDyingBias = std::int64_t(1) << 40;
  static std::uint32_t start_dying(Device& d);
  static std::vector<std::int64_t> finish_dying(Engine::Impl& impl,
                                                std::span<const std::uint32_t> slots);
  // Fetches for writing the line that holds the counts of the device 8 places after `i` in
  // `devs`: a pass of locked updates over a batch out of the cache would otherwise wait
  // for each device's line in turn (a locked update does not start before the one before
  // it ends).
  static void prefetch_refs(std::span<Device* const> devs, std::size_t i) {
    constexpr std::size_t kAhead = 8;
    if (i + kAhead < devs.size()) __builtin_prefetch(&devs[i + kAhead]->ref_exact_, 1);
  }
  // prefetch_refs and the line of the device's registration state, for a pass that
  // writes both.
  static void prefetch_state_and_refs(std::span<Device* const> devs, std::size_t i) {
    constexpr std::size_t kAhead = 8;
    if (i + kAhead >= devs.size()) return;
    __builtin_prefetch(&devs[i + kAhead]->state_, 1);
    __builtin_prefetch(&devs[i + kAhead]->ref_exact_, 1);
  }
  static void set_state(Device& d, RegState s) { d.state_.store(s, std::memory_order_release); }
  // The devices a legacy-policy caller waits for once `ctl` lets go of its locks.
  static std::vector<Device*>& legacy_todo(Control& ctl) { return ctl.legacy_todo_; }
  static void set_ifindex(Device& d, int i) { d.ifindex_.store(i, std::memory_order_release); }
  static void set_ns(Device& d, Namespace& ns) { d.ns_.store(&ns, std::memory_order_release); }
  static void set_master(Device& d, Device* m) { d.master_.store(m, std::memory_order_release); }
  static std::vector<Device*>& uppers(Device& d) { return d.links_locked().uppers; }
  static std::vector<Device*>& lowers(Device& d) { return d.links_locked().lowers; }
  // Updates the nesting levels after `lower` was linked under (delta 1) or unlinked from
  // (delta -1) `upper` (see Device::upper_level_). Context: control lock.
  static void count_link(Device& lower, Device& upper, int delta);
  static int upper_level(const Device& d) { return d.upper_level_; }
  static void*& name_node(Device& d) { return d.name_node_; }
  static std::vector<std::string>& altnames(Device& d) { return d.links_locked().altnames; }
  static int lower_level(const Device& d) { return d.lower_level_; }
  static TimePoint& unregistered_at(Device& d) { return d.unregistered_at_; }
  static TimePoint& next_report(Device& d) { return d.next_report_; }
  // The finalizer's intrusive links and flags (see Finalizer). Context: Finalizer::mu_.
  static Device*& fin_prev(Device& d) { return d.fin_prev_; }
  static Device*& fin_next(Device& d) { return d.fin_next_; }
  static std::uint8_t& fin_list(Device& d) { return d.fin_list_; }
  static std::uint8_t& lw_transit(Device& d) { return d.lw_transit_; }
  static std::uint8_t lw_transit(const Device& d) { return d.lw_transit_; }
  static bool& fin_caller_waits(Device& d) { return d.fin_caller_waits_; }
  static std::int64_t exact(const Device& d) {
    return d.ref_exact_.load(std::memory_order_acquire);
  }
  static Device* make(Engine& e, const Kind& k, Namespace& ns) { return new Device(e, k, ns); }
};

// Statistics as atomics; Engine::stats() copies them out.
struct StatsCounters {
  std::atomic<std::uint64_t> devices_registered{0}, devices_unregistered{0}, devices_released{0},
      devices_leaked{0}, leak_reports{0}, batches{0}, notifier_passes{0}, notifier_calls{0},
      grace_periods{0}, barriers{0}, ref_waits{0}, rebroadcasts{0};
  // The notifier passes' time in ticks (base/ticks.h): there are several passes per
  // request, and a tick costs less than half a steady_clock reading.
  std::atomic<std::uint64_t> notifier_ticks{0};
  std::atomic<std::int64_t> grace_ns{0}, barrier_ns{0}, ref_wait_ns{0}, unlist_ns{0}, free_ns{0};
  static void add(std::atomic<std::int64_t>& a, Duration d) {
    a.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(),
                std::memory_order_relaxed);
  }
  // For counters that only the control lock's holder changes (devices registered and
  // unregistered, batches, the notifier counters): a plain load and store, not a locked
  // read-modify-write, as no other writer can interleave. Readers on other threads still
  // see whole values.
  template <class T, class N>
  static void add_locked(std::atomic<T>& a, N n) {
    a.store(a.load(std::memory_order_relaxed) + static_cast<T>(n), std::memory_order_relaxed);
  }
  static void add_locked(std::atomic<std::int64_t>& a, Duration d) {
    add_locked(a, std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  }
  // The counters a control's holder changes, in the order of Control::tally_.
  enum Tally : std::size_t { Registered, Unregistered, Batches, Passes, Calls, Ticks };
  std::atomic<std::uint64_t>& of(Tally t) {
    std::atomic<std::uint64_t>* c[] = {&devices_registered, &devices_unregistered, &batches,
                                       &notifier_passes,    &notifier_calls,       &notifier_ticks};
    return *c[t];
  }
  // Counts `n` (wrapping: a negative count is its two's complement) for `ctl`'s holder: at
  // once under the engine-wide control; in the control's tally under a namespace's, added
  // when it goes (Control::flush_tally), so that two namespaces' controls do not take turns
  // at the same counters' cache line at every event.
  void count(Control& ctl, Tally t, std::uint64_t n) {
    if (ctl.scope_)
      ctl.tally_[t] += n;
    else
      add_locked(of(t), n);
  }
};

// Frees devices once their last reference drops (Linux: netdev_run_todo +
// netdev_wait_allrefs, without the polling). One thread per engine.
class Finalizer {
 public:
  explicit Finalizer(Engine::Impl& impl);
  ~Finalizer();  // stops the thread; devices still waiting are reported and leaked
  void start();
  void stop();

  // Hands unregistered devices over (their registry reference not yet dropped).
  // `caller_waits`: a legacy-policy caller will wait for and release them itself. Does not
  // wake the thread: call settle() once the batch's own references are dropped.
  void adopt(std::span<Device* const> devs, bool caller_waits);
  // Drops the registry's reference of each of `devs` (unregistered) and adopts those
  // someone else still holds, under the finalizer's lock, so that a holder whose last drop
  // comes after finds its device adopted (ready() takes the same lock). Returns those that
  // nobody holds, to be freed by the caller (release_dropped); none when `caller_waits`
  // (a legacy-policy caller waits for and releases them all itself, and all are adopted).
  // Does not wake the thread: call settle().
  // Each device is marked Unregistered first, and its count drops by `drops[i]` (what
  // DeviceAccess::finish_dying returned) with the registry's reference, in one step.
  std::vector<Device*> adopt_held(std::span<Device* const> devs,
                                  std::span<const std::int64_t> drops, bool caller_waits);
  // Frees devices whose last reference the caller itself dropped (see adopt_held), in the
  // caller's thread: no wake-up, no hand-over.
  // Context: control lock allowed; not inside an rcu::ReadGuard.
  void release_dropped(std::vector<Device*>& devs) { release_locked_out(devs, false); }
  // Wakes the thread only if a leak deadline is now earlier than the one it sleeps until.
  void settle();
  // The last reference of `d` dropped. Context: any thread, any lock, RCU callbacks too.
  void ready(Device& d);
  // For legacy waits: frees `d` now (its count is zero). Context: no control lock.
  void release_now(Device& d);
  // Checks leak deadlines now (the thread also does so at each deadline).
  void check_deadlines();
  // Frees the devices whose last reference dropped and makes the leak reports due at
  // `now`; returns the next report's deadline (max: none). The thread is a loop around
  // the same steps. Context: no control lock needed; not inside an rcu::ReadGuard.
  TimePoint poll(TimePoint now);
  bool drain(Duration timeout);
  std::size_t pending() const;
  std::vector<LeakReport> waiting() const;

 private:
  void run();
  // Moves the waiting devices whose report is due at `now` to again_ and reports them;
  // returns the next deadline.
  TimePoint report_due_locked(TimePoint now) IFCORE_REQUIRES(mu_);
  // drain() without a thread: polls until nothing waits or `until` passes.
  bool drain_polling(std::chrono::steady_clock::time_point until);
  // Called without mu_. `listed`: some of `devs` may wait in the deadline lists.
  void release_locked_out(std::vector<Device*>& devs, bool listed = true);
  void report(Device& d, TimePoint now);

  Engine::Impl& impl_;
  // LOCK ORDERING: inside the control lock (or alone); takes only the leaves (a device's
  // reference tracker, the shard registry) inside it. Also guards the list links in the
  // devices it holds (DeviceAccess::fin_prev, fin_next, fin_list, next_report).
  mutable Mutex mu_;
  std::condition_variable cv_;       // wakes the thread
  std::condition_variable idle_cv_;  // wakes drain()
  // Devices waiting for their references, in two lists linked through the devices
  // themselves (DeviceAccess::fin_prev/fin_next), each ordered by next leak-report
  // deadline: `first_` holds the devices not yet reported (deadline: adoption +
  // leak_report_after), `again_` the reported ones (deadline: last report +
  // leak_report_interval). Each kind of deadline grows with time, so an insert appends and
  // the earliest deadline is at one of the two heads: no allocation or lookup per device.
  enum ListId : std::uint8_t { kNotWaiting = 0, kFirst = 1, kAgain = 2 };
  struct List {
    Device* head = nullptr;
    Device* tail = nullptr;
  };
  // Inserts `d` by its next_report (from the tail: O(1) while time only moves forward).
  void link_locked(ListId id, Device& d) IFCORE_REQUIRES(mu_);
  // Lists `d`, unregistered at `now`, as waiting for its references (first report `due`).
  void wait_locked(Device& d, TimePoint now, TimePoint due, bool caller_waits) IFCORE_REQUIRES(mu_);
  void unlink_locked(Device& d) IFCORE_REQUIRES(mu_);
  // The waiting device with the earliest deadline, or null.
  Device* earliest_locked() const IFCORE_REQUIRES(mu_);
  List first_ IFCORE_GUARDED_BY(mu_), again_ IFCORE_GUARDED_BY(mu_);
  std::size_t waiting_ IFCORE_GUARDED_BY(mu_) = 0;  // devices in first_ and again_
  std::vector<Device*> ready_ IFCORE_GUARDED_BY(mu_);
  bool stop_ IFCORE_GUARDED_BY(mu_) = false;
  bool kick_ IFCORE_GUARDED_BY(mu_) = false;
  // When the sleeping thread wakes by itself (max: never); min while it is awake.
  TimePoint sleep_until_ IFCORE_GUARDED_BY(mu_) = TimePoint::min();
  bool threaded_ = false;  // start() ran (set before any other thread sees the finalizer)
  std::thread thread_;
};

// The plug-in lock (Engine::Impl::plugins): recursive, as plug-ins call back into the
// chain. A waiter spins a little, then yields: a holder keeps it for one chain call or one
// protocol request, about a microsecond, which is less than a futex's sleep and wake-up.
class PluginLock {
 public:
  void lock() {
    const std::uintptr_t me = self();
    if (owner_.load(std::memory_order_relaxed) == me) {
      ++depth_;
      return;
    }
    for (int spins = 0;; ++spins) {
      std::uintptr_t none = 0;
      if (owner_.load(std::memory_order_relaxed) == 0 &&
          owner_.compare_exchange_weak(none, me, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        depth_ = 1;
        return;
      }
      if (spins < 100)
        pause();
      else
        std::this_thread::yield();
    }
  }
  void unlock() {
    if (--depth_ == 0) owner_.store(0, std::memory_order_release);
  }

 private:
  static std::uintptr_t self() {
    thread_local const char tag = 0;
    return reinterpret_cast<std::uintptr_t>(&tag);
  }
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  // Its own cache line: the plug-ins' state it guards is read beside it.
  alignas(64) std::atomic<std::uintptr_t> owner_{0};
  int depth_ = 0;  // written by the owner alone
};

struct Engine::Impl {
  explicit Impl(Engine& e);
  ~Impl();

  Engine& engine;
  // The control lock ("rtnl"), held by a Control (LOCK ORDERING: first of all): exclusively
  // by an engine-wide one, shared by a namespace's, which then takes that namespace's lock
  // (Namespace::mu_, LOCK ORDERING: second). What it guards takes a Control& (the analysis
  // cannot follow a lock held across calls).
  SharedMutex control;
  // The plug-ins' engine-wide state (the protocols' tables of every device, the link
  // watch's queue, the kinds' watches, rtnetlink's hub...) under namespaces' controls:
  // taken (PluginGuard, engine.h) by a namespace's Control around a call into what is not
  // declared concurrent. Recursive: a plug-in may call back into the chain. An
  // engine-wide Control never takes it, as no other Control can run beside it.
  // LOCK ORDERING: third, after the namespace's lock; before every lock below.
  PluginLock plugins;
  Policies policies;                                   // control lock to write; copied under it
  std::vector<std::unique_ptr<Namespace>> namespaces;  // control lock
  int next_ns_id = 0;
  // By name; a handful, so a list (a request looks its kind up twice; a map compared
  // four strings each time).
  std::vector<std::pair<std::string, const Kind*>> kinds;
  void set_kind(const Kind& k) {
    for (auto& [name, kind] : kinds)
      if (name == k.name()) {
        kind = &k;
        return;
      }
    kinds.emplace_back(std::string(k.name()), &k);
  }
  std::vector<std::unique_ptr<Kind>> owned_kinds;
  NotifierChain chain;
  std::vector<PernetHooks*> pernet;
  std::vector<std::function<void(Control&, const Policies&)>> policy_observers;
  // Control::add_nsid_observer, by the id it returned (control lock).
  std::map<std::uint64_t, NsidObserver> nsid_observers;
  std::uint64_t next_nsid_observer = 1;
  void tell_nsid_observers(Namespace& ns, Namespace& peer, int id, bool added) {
    for (auto& [k, fn] : nsid_observers) fn(ns, peer, id, added);
  }
  // Plug-in state (set once per tag under the control lock; read lock-free after).
  std::vector<std::pair<const void*, std::shared_ptr<void>>> plugin_data;
  int device_slots = 0;  // Engine::claim_device_slot
  StatsCounters stats;
  // Device ids: taken by each thread in runs of kIdRun (Engine::Impl::take_device_id), so
  // that writers of two namespaces do not write one counter at every device. `serial`
  // tells the runs of this engine from those of one that had its address before.
  static constexpr std::uint64_t kIdRun = 64;
  std::atomic<std::uint64_t> next_device_id{1};
  const std::uint64_t serial;
  std::uint64_t take_device_id();
  Finalizer finalizer;
  // The live UnregisterBatches that hold devices of this engine, linked through their
  // prev_/next_ (engine.h). The batch lock guards the links, and the lists of the batches
  // while a commit takes its devices out of them; it nests inside the control lock and
  // takes nothing else.
  Mutex batches_mu;  // LOCK ORDERING: a leaf, inside the control lock or alone
  UnregisterBatch* live_batches IFCORE_GUARDED_BY(batches_mu) = nullptr;
  // The engine's timers (ifcore/timer.h); stopped first when the engine goes.
  Timers timers{engine};
  // The link watch (core/linkwatch.h); last, so it is made after and stopped before the
  // rest. Subscribes to `chain` when made.
  std::unique_ptr<LinkWatch, LinkWatchDeleter> linkwatch{make_link_watch(*this)};

  // A grace period per the policy (counted). Context: not in a read-side section.
  void grace_period();
  // Waits for queued RCU callbacks per the policy (counted). Context: control lock held;
  // without it, pass a copy of the policies.
  void barrier();
  void barrier(const Policies& p);
  void last_ref_dropped(Device& d) { finalizer.ready(d); }

  // Runs the chain for one event on one device (counts calls). Vetoable events stop at
  // the first error; then, given `undo`, the subscribers this call reached before the one
  // that vetoed (those whose mask took `ev`) hear `undo` if their mask takes it, walked on
  // the very list of the call: a subscriber that joined the chain during the call heard
  // nothing, so it is not told to undo anything.
  Result<void> call_chain(Control& ctl, const EventInfo& ev, const EventInfo* undo = nullptr);
  // One pass of `event` over many devices (counted as one pass): each of `devs` to every
  // subscriber that takes the event. `batched`: an unregister batch's pass, which
  // call_batch(UnregisterBatch) follows (EventInfo::batched).
  void call_chain_many(Control& ctl, NetdevEvent event, std::span<Device* const> devs,
                       bool batched = false, std::uint32_t flags_changed = 0);
  // An unregister's pass (counted as one), device by device as Linux's
  // unregister_netdevice_many_notify: Unregister to its takers, then `uninit` (the kind's
  // uninit, what is left of its links), then Uninit to its takers.
  void call_unregister_many(Control& ctl, std::span<Device* const> devs, bool batched,
                            const std::function<void(Device&)>& uninit);
  void call_batch(Control& ctl, BatchEvent event, std::span<Device* const> devs);
  // One Register pass over many new devices (counted as one pass), device by device as
  // call_chain_many. A veto stops it: `vetoed` is then the device's position, and every
  // subscriber that saw a device of the batch (the ones before, all; the vetoed one, those
  // the vetoing subscriber's predecessors saw) hears Unregister for it.
  Result<void> call_register_many(Control& ctl, std::span<Device* const> devs, std::size_t& vetoed);
  // Takes registered devices that nobody was told about for good (a vetoed Register) out of
  // their registries and frees them after one grace period, or when their last reference
  // goes. Context: control lock.
  void discard_registered(Control& ctl, std::span<Device* const> devs);
  // The legacy wait for one device, run by the caller after dropping the control lock.
  void legacy_wait(Device& d);
};

}  // namespace ifcore
