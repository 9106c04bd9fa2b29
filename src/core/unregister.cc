// Unregister: batches (Linux: unregister_netdevice_many), and the legacy waits for
// references (Linux: netdev_wait_allrefs) that the seeds measured.
//
// Lock order: commit() runs under the control lock and takes the engine's batch lock
// inside it; legacy_wait() runs without it and takes it only to re-broadcast.
#include <net/if.h>

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "base/rcu.h"
#include "core/engine_impl.h"
#include "core/registry.h"

namespace ifcore {

namespace {

// What one walk over a batch learns before anything changes, so that the steps after it
// need not read every device again (10^6 of them are far past the cache).
struct BatchFacts {
  std::vector<Device*> up;  // the devices up, in the batch's order
  bool may_nest = false;    // one of them dies with a lower device (see split_nested)
  Registry* one = nullptr;  // the registry of them all, unless they are in several
  bool several = false, seen_one = false;

  void note(Device& d) {
    if (d.is_up()) up.push_back(&d);
    may_nest = may_nest || (d.kind().dies_with_lower() && !d.lowers_locked().empty());
    Registry* r = &d.ns().registry();
    if (seen_one && r != one) several = true;
    one = several ? nullptr : r;
    seen_one = true;
  }
  static BatchFacts of(std::span<Device* const> devs) {
    BatchFacts f;
    for (Device* d : devs) f.note(*d);
    return f;
  }
};

// 1. Close the up ones, all together (Linux: dev_close_many).
void close_many(Control& ctl, Engine::Impl& impl, const std::vector<Device*>& up, bool single,
                bool defer) {
  if (up.empty()) return;
  impl.call_chain_many(ctl, NetdevEvent::GoingDown, up, defer);
  for (Device* d : up) {
    d->kind().stop(ctl, *d);
    d->set_flags_locked(ctl, d->flags() & ~IFF_UP);
  }
  impl.call_chain_many(ctl, NetdevEvent::Down, up, defer);
  // The kernel of seed 002 deactivated each device with its own grace period.
  if (single) impl.grace_period();
}

// 2. Unlist: names and indexes are free at once. Each device's own name is taken out
// through the entry it notes, without reading the name; the entries are freed by one RCU
// callback. (A batch that does not fit in the cache: unlist_all.)
void unlist_in_order(std::span<Device* const> devs) {
  Registry::RetiredNames names(devs.size());
  const std::size_t n = devs.size();
  for (std::size_t from = 0; from < n; from += Registry::kReadSection) {
    rcu::ReadGuard g;  // left every kReadSection devices
    for (std::size_t i = from; i < std::min(n, from + Registry::kReadSection); ++i) {
      Registry::prefetch_unlisting(devs, i);
      Device* d = devs[i];
      DeviceAccess::set_state(*d, RegState::Unregistering);
      d->ns().registry().erase(*d, d->ifindex(), &names);
    }
  }
}

// A batch this big is unlisted namespace by namespace with Registry::erase_many, its names'
// entries erased bucket by bucket of the name table: in the batch's own order (random in
// the table) each erase misses on its bucket and the bucket's entries once the table
// outgrows the cache (10^6 dummies: a quarter of their batch delete). `one`: the registry
// of every device of `devs`, if they are in one namespace.
void unlist_all(std::span<Device* const> devs, Registry* one) {
  constexpr std::size_t kOrderFrom = std::size_t{1} << 14;
  if (devs.size() < kOrderFrom) return unlist_in_order(devs);
  Registry::RetiredNames names(devs.size());
  if (one) return one->erase_many(devs, names);
  std::unordered_map<Registry*, std::vector<Device*>> by_namespace;
  for (Device* d : devs) by_namespace[&d->ns().registry()].push_back(d);
  for (auto& [registry, group] : by_namespace) registry->erase_many(group, names);
}

// unlist_all, timed with the names' retirement.
void unlist(Engine::Impl& impl, std::span<Device* const> devs, Registry* one) {
  auto t0 = Clock::now();
  unlist_all(devs, one);
  StatsCounters::add(impl.stats.unlist_ns, Clock::now() - t0);
}

// 3. Device by device: the subscribers told, the kind lets it go and adjacency left over
// is unlinked, then the subscribers told it is gone (rtnetlink's RTM_DELLINK); its
// references start dying. Then the batch event (Linux: unregister_netdevice_many_notify's
// loop, NETDEV_UNREGISTER to ndo_uninit to the RTM_DELLINK sent). One walk over the batch:
// a device is read once while it is in the cache.
// Returns the devices' shard slots (DeviceAccess::start_dying), in order.
std::vector<std::uint32_t> announce_and_unlink(Control& ctl, Engine::Impl& impl,
                                               std::span<Device* const> devs, bool defer) {
  std::vector<std::uint32_t> slots;
  slots.reserve(devs.size());
  impl.call_unregister_many(ctl, devs, defer, [&](Device& d) {
    d.kind().uninit(ctl, d);
    while (!d.uppers_locked().empty()) ctl.unlink_upper(d, *d.uppers_locked().back());
    while (!d.lowers_locked().empty()) ctl.unlink_upper(*d.lowers_locked().back(), d);
    slots.push_back(DeviceAccess::start_dying(d));
  });
  impl.call_batch(ctl, BatchEvent::UnregisterBatch, devs);
  return slots;
}

// 5. To the finalizer; the registry's reference dropped.
void hand_over(Control& ctl, Engine::Impl& impl, std::span<Device* const> devs,
               std::span<const std::int64_t> drops, const Policies& p) {
  bool caller_waits = p.ref_wait != RefWaitPolicy::Event;
  impl.stats.count(ctl, StatsCounters::Unregistered, devs.size());
  if (caller_waits) {
    auto& todo = DeviceAccess::legacy_todo(ctl);
    todo.insert(todo.end(), devs.begin(), devs.end());
  }
  // The devices nobody else holds are freed here and now (Linux: netdev_run_todo finds
  // them at refcount 1 at once); the others when their last holder lets go. A legacy
  // caller waits for and releases its devices itself.
  std::vector<Device*> free_now = impl.finalizer.adopt_held(devs, drops, caller_waits);
  if (!free_now.empty()) impl.finalizer.release_dropped(free_now);
  impl.finalizer.settle();
}

// The devices of `devs` that die with a lower device also in `devs` (Kind::
// dies_with_lower): Linux's vlan, macvlan and vxlan unregister them in a batch of their own
// from their lower's NETDEV_UNREGISTER, inside the lower's batch. Split off into `nested`,
// the others left in `outer`, both in their order.
void split_nested(std::span<Device* const> devs, std::vector<Device*>& outer,
                  std::vector<Device*>& nested) {
  std::unordered_set<const Device*> all;
  for (Device* d : devs) {
    bool dies = false;
    if (d->kind().dies_with_lower() && !d->lowers_locked().empty()) {
      if (all.empty()) all.insert(devs.begin(), devs.end());
      for (Device* low : d->lowers_locked()) dies = dies || (low != d && all.count(low));
    }
    (dies ? nested : outer).push_back(d);
  }
}

void commit_one_batch(Control& ctl, Engine::Impl& impl, std::span<Device* const> devs,
                      const BatchFacts& facts, const Policies& p) {
  bool single = p.unregister == UnregisterPolicy::Single;
  // Linux: the uppers that die with a lower go in the lower's NETDEV_UNREGISTER, after the
  // lower is closed and unlisted and before its RTM_DELLINK (not under seed 002's
  // per-device policy, whose batches are of one device).
  std::vector<Device*> outer, nested;
  if (!single && facts.may_nest) split_nested(devs, outer, nested);
  impl.stats.count(ctl, StatsCounters::Batches, 1);
  // Subscribers may defer per-device cleanup to the UnregisterBatch event (EventInfo::
  // batched). Not under seed 002's per-device policy: there each device's cleanup starts
  // before its own grace periods, as in the kernel it imitates (the legacy figures of
  // seeds 001 and 004 depend on when the inet6 teardown begins).
  bool defer = !single;
  // The nested devices that follow their lower down (Kind::closes_with_lower: a vlan) are
  // closed with the others, their cleanup not deferred to a batch they are not in; the
  // rest (a macvlan, a vxlan) first thing in their own batch, below.
  const std::vector<Device*>* up = &facts.up;
  std::vector<Device*> up_now;
  if (!nested.empty()) {
    std::unordered_set<const Device*> later;
    for (Device* d : nested)
      if (!d->kind().closes_with_lower()) later.insert(d);
    for (Device* d : facts.up)
      if (!later.count(d)) up_now.push_back(d);
    up = &up_now;
  }
  close_many(ctl, impl, *up, single, defer && nested.empty());
  if (!nested.empty()) devs = outer;
  unlist(impl, devs, facts.one);
  // Seed 002's kernel: synchronize_net after unlisting, per device.
  if (single) impl.grace_period();
  if (!nested.empty()) commit_one_batch(ctl, impl, nested, BatchFacts::of(nested), p);
  std::vector<std::uint32_t> slots = announce_and_unlink(ctl, impl, devs, defer);
  // 4. One grace period for the batch: references switch to exact counting.
  std::vector<std::int64_t> drops = DeviceAccess::finish_dying(impl, slots);
  hand_over(ctl, impl, devs, drops, p);
}

}  // namespace

Result<void> Control::queue_unregister(Device& dev, UnregisterBatch& batch) {
  if (batch.contains(dev)) return ok();
  if (dev.state() != RegState::Registered)
    return fail(ENODEV, "device \"{}\" is not registered", dev.name());
  IFCORE_TRY(check_covers(dev));
  PluginGuard guard(*this, !dev.kind().concurrent());  // the kind's own state
  const std::size_t before = batch.size();
  IFCORE_TRY(dev.kind().del_link(*this, dev, batch));
  // Uppers stacked on this device, or on another the kind queued with it (a veth's peer),
  // die with it, in the same batch (Linux: vlan, macvlan and vxlan queue themselves from
  // their lower's NETDEV_UNREGISTER into the same list).
  std::vector<Device*> queued(batch.devices().begin() + static_cast<std::ptrdiff_t>(before),
                              batch.devices().end());
  for (Device* d : queued)
    for (Device* up : d->uppers_locked())
      if (up->kind().dies_with_lower() && up->state() == RegState::Registered)
        IFCORE_TRY(queue_unregister(*up, batch));
  return ok();
}

void Control::commit(UnregisterBatch& batch) {
  if (batch.empty()) return;
  auto& impl = engine_->impl();
  Policies p = impl.policies;
  // One walk over the batch (each device read once: 10^6 of them are far past the cache).
  // Devices already gone (e.g. queued twice through cascades) are skipped. A namespace's
  // control commits its own devices only (queue_unregister checks them; one added to the
  // batch by hand is the caller's bug), under the plug-in lock if a kind of theirs is not
  // concurrent. The namespaces are noted before the commit: once committed, a device may
  // be freed at any moment.
  std::vector<Device*> devs;
  devs.reserve(batch.size());
  std::vector<Namespace*> touched;
  bool shared = false;
  BatchFacts facts;
  for (Device* d : batch.devices()) {
    if (d->state() != RegState::Registered) continue;
    if (auto r = check_covers(*d); !r) {
      engine_->log(LogLevel::Error, r.error().message);
      std::abort();
    }
    shared = shared || !d->kind().concurrent();
    if (touched.empty() || touched.back() != &d->ns())
      if (std::find(touched.begin(), touched.end(), &d->ns()) == touched.end())
        touched.push_back(&d->ns());
    devs.push_back(d);
    facts.note(*d);
  }
  PluginGuard guard(*this, shared);
  // The other live batches that list these devices lose them now (Linux: list_move takes
  // a device off the list it was on): they are freed once the commit is over, and a batch
  // committed later would read them. Under a namespace's control, only the batches that
  // may hold its devices: one that another namespace's control is filling holds none of
  // them, and is not read while it grows.
  {
    MutexLock lk(impl.batches_mu);
    std::vector<UnregisterBatch*> others;
    for (UnregisterBatch* b = impl.live_batches; b; b = b->next_)
      if (b != &batch && (!scope_ || b->first_ns_ == scope_ || b->mixed_)) others.push_back(b);
    if (!others.empty()) {
      std::unordered_set<const Device*> gone(devs.begin(), devs.end());
      for (UnregisterBatch* b : others) b->forget(gone);
    }
  }
  if (p.unregister == UnregisterPolicy::Single) {
    for (Device* d : devs) {
      std::span<Device* const> one(&d, 1);
      commit_one_batch(*this, impl, one, BatchFacts::of(one), p);
    }
  } else {
    commit_one_batch(*this, impl, devs, facts, p);
  }
  for (Namespace* ns : touched) ns->registry().maybe_resize();
  batch = UnregisterBatch{};
}

Result<void> Control::delete_link(Device& dev) {
  UnregisterBatch batch;
  IFCORE_TRY(queue_unregister(dev, batch));
  commit(batch);
  return ok();
}

Result<void> Control::delete_links(std::span<Device* const> devs) {
  UnregisterBatch batch;
  for (Device* d : devs) IFCORE_TRY(queue_unregister(*d, batch));
  commit(batch);
  return ok();
}

void Engine::Impl::legacy_wait(Device& d) {
  // Linux: netdev_wait_allrefs — check, re-broadcast UNREGISTER every second, sleep.
  Policies p;
  {
    std::shared_lock lk(control.native());  // policies change under the exclusive lock
    p = policies;
  }
  auto t0 = Clock::now();
  auto rebroadcast_at = t0 + p.rebroadcast_interval;
  int wait_ms = 0;
  bool waited = false;
  while (DeviceAccess::exact(d) != 0) {
    waited = true;
    if (Clock::now() >= rebroadcast_at) {
      {
        Control ctl = engine.control();
        EventInfo ev{NetdevEvent::Unregister, d};
        ev.replay = true;
        (void)call_chain(ctl, ev);
        stats.rebroadcasts.fetch_add(1, std::memory_order_relaxed);
      }
      barrier(p);
      rebroadcast_at = Clock::now() + p.rebroadcast_interval;
    }
    if (p.ref_wait == RefWaitPolicy::Backoff) {
      if (wait_ms == 0) {
        barrier(p);
        wait_ms = 1;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
        wait_ms = std::min(wait_ms * 2, 250);
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
  if (waited) {
    stats.ref_waits.fetch_add(1, std::memory_order_relaxed);
    StatsCounters::add(stats.ref_wait_ns, Clock::now() - t0);
  }
  finalizer.release_now(d);
}

}  // namespace ifcore
