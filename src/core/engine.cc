// The engine: construction and teardown, grace periods, the chain calls, statistics.
//
// Lock order: control lock -> Finalizer::mu_ -> leaves (see engine.h).
#include "ifcore/engine.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <shared_mutex>
#include <thread>

#include "base/prefetch.h"
#include "base/rcu.h"
#include "base/ticks.h"
#include "core/engine_impl.h"

namespace ifcore {

namespace {

std::atomic<std::uint64_t> next_engine_serial{1};

}  // namespace

Engine::Impl::Impl(Engine& e)
    : engine(e),
      serial(next_engine_serial.fetch_add(1, std::memory_order_relaxed)),
      finalizer(*this) {}

Engine::Impl::~Impl() = default;

std::uint64_t Engine::Impl::take_device_id() {
  // A thread's run of ids: engine-unique (each run is taken whole from the counter), in
  // order within a thread, not across threads.
  struct Run {
    std::uint64_t serial = 0, next = 0, end = 0;
  };
  thread_local Run run;
  if (run.serial != serial || run.next == run.end) {
    run.serial = serial;
    run.next = next_device_id.fetch_add(kIdRun, std::memory_order_relaxed);
    run.end = run.next + kIdRun;
  }
  return run.next++;
}

void Engine::Impl::grace_period() {
  auto t0 = Clock::now();
  rcu::synchronize();
  if (policies.grace == GracePolicy::Kernel)
    std::this_thread::sleep_until(t0 + policies.grace_floor);
  stats.grace_periods.fetch_add(1, std::memory_order_relaxed);
  StatsCounters::add(stats.grace_ns, Clock::now() - t0);
}

void Engine::Impl::barrier() {
  barrier(policies);
}

void Engine::Impl::barrier(const Policies& p) {
  auto t0 = Clock::now();
  rcu::barrier();
  if (p.grace == GracePolicy::Kernel) std::this_thread::sleep_until(t0 + p.grace_floor);
  stats.barriers.fetch_add(1, std::memory_order_relaxed);
  StatsCounters::add(stats.barrier_ns, Clock::now() - t0);
}

namespace {

// One pass of the chain, from its start to its end: the subscriber list held (counted only
// under the engine's control: under a namespace's, the chain cannot change), the plug-in
// lock when a subscriber the pass reaches is not concurrent (PluginGuard does nothing
// under the engine's control), and the engine's statistics once it ends. `event` nullopt:
// every subscriber is reached (on_batch), and the pass is not counted as one.
class Pass {
 public:
  Pass(Engine::Impl& impl, Control& ctl, std::optional<NetdevEvent> event)
      : impl_(impl),
        ctl_(ctl),
        counted_(event.has_value()),
        t0_(ticks::now()),
        call_(impl.chain, !ctl.scope()),
        guard_(ctl, ctl.scope() && reaches_shared(call_.list(), event)) {}
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;
  ~Pass() {
    impl_.stats.count(ctl_, StatsCounters::Calls, calls);
    if (counted_) impl_.stats.count(ctl_, StatsCounters::Passes, 1);
    impl_.stats.count(ctl_, StatsCounters::Ticks, ticks::now() - t0_);
  }
  const NotifierChain::List& list() const { return call_.list(); }
  // The subscribers that take `event`, in the chain's order, picked once for a pass over
  // many devices.
  std::vector<const NotifierChain::Entry*> takers(NetdevEvent event) const {
    std::vector<const NotifierChain::Entry*> out;
    out.reserve(list().size());
    for (const auto& e : list())
      if (e.wants(event)) out.push_back(&e);
    return out;
  }
  std::uint64_t calls = 0;  // subscriber calls made (an undo's are not counted)

 private:
  static bool reaches_shared(const NotifierChain::List& list, std::optional<NetdevEvent> event) {
    return std::any_of(list.begin(), list.end(), [&](const NotifierChain::Entry& e) {
      return !e.concurrent && (!event || e.wants(*event));
    });
  }
  Engine::Impl& impl_;
  Control& ctl_;
  bool counted_;
  std::uint64_t t0_;
  NotifierChain::Call call_;
  PluginGuard guard_;
};

}  // namespace

Result<void> Engine::Impl::call_chain(Control& ctl, const EventInfo& ev, const EventInfo* undo) {
  Pass pass(*this, ctl, ev.event);
  std::size_t reached = 0;
  Result<void> result;
  for (const auto& e : pass.list()) {
    ++reached;
    if (!e.wants(ev.event)) continue;
    ++pass.calls;
    auto r = e.sub->on_event(ctl, ev);
    if (!r) {
      if (is_vetoable(ev.event)) {
        --reached;
        result = fail(std::move(r).error());
        break;
      }
      engine.log(LogLevel::Warning,
                 fmt::format("subscriber \"{}\" failed {} for \"{}\": {}", e.name,
                             to_string(ev.event), ev.dev.name(), r.error().message));
    }
  }
  if (!result && undo) {
    const auto& list = pass.list();
    for (std::size_t i = 0; i < reached; ++i)
      if (list[i].wants(ev.event) && list[i].wants(undo->event) && chain.find(list[i].id))
        (void)list[i].sub->on_event(ctl, *undo);  // (one that left since hears nothing)
  }
  return result;
}

namespace {

constexpr std::size_t kDeviceAhead = 4, kSlotsAhead = 2;

void prefetch_device(const Device& d) {
  prefetch_lines(&d, 3 * kCacheLine);
}

void prefetch_slots(const Device& d) {
  for (int k = 0; k < Device::kPluginSlots; ++k)
    if (const void* s = d.plugin_slot_locked(k)) __builtin_prefetch(s);
}

}  // namespace

namespace {

// Tells `ev` to the takers of one pass (their errors logged: `ev` is not vetoable).
void tell(Engine& engine, Control& ctl, const std::vector<const NotifierChain::Entry*>& takers,
          const EventInfo& ev, std::uint64_t& calls) {
  for (const auto* e : takers) {
    ++calls;
    auto r = e->sub->on_event(ctl, ev);
    if (!r)
      engine.log(LogLevel::Warning,
                 fmt::format("subscriber \"{}\" failed {} for \"{}\": {}", e->name,
                             to_string(ev.event), ev.dev.name(), r.error().message));
  }
}

}  // namespace

void Engine::Impl::call_chain_many(Control& ctl, NetdevEvent event, std::span<Device* const> devs,
                                   bool batched, std::uint32_t flags_changed) {
  if (devs.empty()) return;
  Pass pass(*this, ctl, event);
  const auto takers = pass.takers(event);
  const std::size_t n = devs.size();
  for (std::size_t i = 0; i < n; ++i) {
    // A batch of 10 000 devices does not fit in the cache, and every subscriber reads the
    // device's first lines and its plug-ins' state: those of the devices a few places
    // ahead are fetched while this one is served (the slots a step later, once their line
    // is in).
    if (i + kDeviceAhead < n) prefetch_device(*devs[i + kDeviceAhead]);
    if (i + kSlotsAhead < n) prefetch_slots(*devs[i + kSlotsAhead]);
    EventInfo ev{event, *devs[i]};
    ev.batched = batched;
    ev.flags_changed = flags_changed;
    tell(engine, ctl, takers, ev, pass.calls);
  }
}

void Engine::Impl::call_unregister_many(Control& ctl, std::span<Device* const> devs, bool batched,
                                        const std::function<void(Device&)>& uninit) {
  if (devs.empty()) return;
  Pass pass(*this, ctl, NetdevEvent::Unregister);
  const auto takers = pass.takers(NetdevEvent::Unregister);
  const auto last = pass.takers(NetdevEvent::Uninit);
  const std::size_t n = devs.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kDeviceAhead < n) prefetch_device(*devs[i + kDeviceAhead]);
    if (i + kSlotsAhead < n) prefetch_slots(*devs[i + kSlotsAhead]);
    Device& d = *devs[i];
    EventInfo ev{NetdevEvent::Unregister, d};
    ev.batched = batched;
    ev.uninit_follows = true;
    tell(engine, ctl, takers, ev, pass.calls);
    uninit(d);
    tell(engine, ctl, last, EventInfo{NetdevEvent::Uninit, d}, pass.calls);
  }
}

namespace {

// Tells the takers of `list` before `until` that `dev` is gone again.
void undo_register(Control& ctl, const std::vector<const NotifierChain::Entry*>& takers,
                   std::size_t until, NotifierChain& chain, Device& dev) {
  EventInfo un{NetdevEvent::Unregister, dev};
  for (std::size_t j = 0; j < until; ++j)
    if (takers[j]->wants(NetdevEvent::Unregister) && chain.find(takers[j]->id))
      (void)takers[j]->sub->on_event(ctl, un);
}

}  // namespace

Result<void> Engine::Impl::call_register_many(Control& ctl, std::span<Device* const> devs,
                                              std::size_t& vetoed) {
  Pass pass(*this, ctl, NetdevEvent::Register);
  const auto takers = pass.takers(NetdevEvent::Register);
  Result<void> result;
  const std::size_t n = devs.size();
  for (std::size_t i = 0; i < n && result; ++i) {
    if (i + kDeviceAhead < n) prefetch_device(*devs[i + kDeviceAhead]);
    if (i + kSlotsAhead < n) prefetch_slots(*devs[i + kSlotsAhead]);
    EventInfo ev{NetdevEvent::Register, *devs[i]};
    for (std::size_t j = 0; j < takers.size(); ++j) {
      ++pass.calls;
      auto r = takers[j]->sub->on_event(ctl, ev);
      if (r) continue;
      vetoed = i;
      result = fail(std::move(r).error());
      undo_register(ctl, takers, j, chain, *devs[i]);
      break;
    }
  }
  if (!result)
    for (std::size_t i = vetoed; i-- > 0;)
      undo_register(ctl, takers, takers.size(), chain, *devs[i]);
  return result;
}

void Engine::Impl::call_batch(Control& ctl, BatchEvent event, std::span<Device* const> devs) {
  if (devs.empty()) return;
  Pass pass(*this, ctl, std::nullopt);
  for (const auto& e : pass.list()) e.sub->on_batch(ctl, event, devs);
  pass.calls = pass.list().size();
}

// ---------------------------------------------------------------- Engine

Engine::Engine(EngineConfig cfg) : cfg_(std::move(cfg)) {
  time_ = cfg_.time ? cfg_.time : std::make_shared<SteadyTime>();
  rcu::register_thread();
  impl_ = std::make_unique<Impl>(*this);
  impl_->policies = cfg_.policies;
  if (cfg_.background_threads) impl_->finalizer.start();
  if (!cfg_.default_namespace.empty()) {
    auto ctl = control();
    auto ns = ctl.create_namespace(cfg_.default_namespace);
    if (!ns) log(LogLevel::Error, "cannot create the default namespace: " + ns.error().message);
  }
}

Engine::~Engine() {
  impl_->timers.stop();  // no timer runs while the namespaces and the plug-ins go
  {
    auto ctl = control();
    auto all = ctl.namespaces();
    for (auto it = all.rbegin(); it != all.rend(); ++it) (void)ctl.destroy_namespace(**it);
    for (auto* h : std::vector<PernetHooks*>(impl_->pernet)) ctl.remove_pernet(*h);
  }
  if (!impl_->finalizer.drain(cfg_.leak_report_after)) {
    for (auto& r : impl_->finalizer.waiting())
      log(LogLevel::Error, fmt::format("engine destroyed while {} still has {} references; "
                                       "leaking it",
                                       r.name, r.usage_count));
  }
  impl_->finalizer.stop();
  rcu::barrier();  // run every pending free before the engine's memory goes
  // Plug-in state last: callbacks that the barrier ran may have used it. Callbacks
  // queued by those callbacks (chains) are flushed by a second barrier.
  rcu::barrier();
  impl_->plugin_data.clear();
}

Control Engine::control() {
  return Control(*this);
}

Control Engine::control(Namespace& ns) {
  return Control(*this, ns);
}

void Engine::register_kind(const Kind& kind) {
  auto ctl = control();
  impl_->set_kind(kind);
}

void Engine::add_kind(std::unique_ptr<Kind> kind) {
  auto ctl = control();
  impl_->set_kind(*kind);
  impl_->owned_kinds.push_back(std::move(kind));
}

Policies Engine::policies() const {
  std::shared_lock lk(impl_->control.native());  // they change under the exclusive lock
  return impl_->policies;
}

void Engine::set_policies(const Policies& p) {
  auto ctl = control();
  impl_->policies = p;
  for (auto& fn : impl_->policy_observers) fn(ctl, impl_->policies);
}

void Engine::set_plugin_data(const void* tag, std::shared_ptr<void> data) {
  for (auto& [t, d] : impl_->plugin_data)
    if (t == tag) {
      d = std::move(data);
      return;
    }
  impl_->plugin_data.emplace_back(tag, std::move(data));
}

int Engine::claim_device_slot() {
  if (impl_->device_slots >= Device::kPluginSlots) return -1;
  return impl_->device_slots++;
}

void* Engine::plugin_data_raw(const void* tag) const {
  for (auto& [t, d] : impl_->plugin_data)
    if (t == tag) return d.get();
  return nullptr;
}

Stats Engine::stats() const {
  auto& c = impl_->stats;
  auto ns = [](const std::atomic<std::int64_t>& a) {
    return Duration(std::chrono::nanoseconds(a.load()));
  };
  Stats s;
  s.devices_registered = c.devices_registered.load();
  s.devices_unregistered = c.devices_unregistered.load();
  s.devices_released = c.devices_released.load();
  s.devices_leaked = c.devices_leaked.load();
  s.leak_reports = c.leak_reports.load();
  s.batches = c.batches.load();
  s.notifier_passes = c.notifier_passes.load();
  s.notifier_calls = c.notifier_calls.load();
  s.grace_periods = c.grace_periods.load();
  s.barriers = c.barriers.load();
  s.ref_waits = c.ref_waits.load();
  s.rebroadcasts = c.rebroadcasts.load();
  s.notifier_time = Duration(std::chrono::nanoseconds(ticks::to_ns(c.notifier_ticks.load())));
  s.grace_time = ns(c.grace_ns);
  s.barrier_time = ns(c.barrier_ns);
  s.ref_wait_time = ns(c.ref_wait_ns);
  s.unlist_time = ns(c.unlist_ns);
  s.free_time = ns(c.free_ns);
  return s;
}

void Engine::reset_stats() {
  auto& c = impl_->stats;
  for (auto* a :
       {&c.devices_registered, &c.devices_unregistered, &c.devices_released, &c.devices_leaked,
        &c.leak_reports, &c.batches, &c.notifier_passes, &c.notifier_calls, &c.grace_periods,
        &c.barriers, &c.ref_waits, &c.rebroadcasts, &c.notifier_ticks})
    a->store(0);
  for (auto* a : {&c.grace_ns, &c.barrier_ns, &c.ref_wait_ns, &c.unlist_ns, &c.free_ns})
    a->store(0);
}

void Engine::log(LogLevel level, std::string_view text) const {
  if (cfg_.log) {
    cfg_.log(level, text);
    return;
  }
  static const char* names[] = {"debug", "info", "warning", "error"};
  std::fprintf(stderr, "ifcore: %s: %.*s\n", names[static_cast<int>(level)],
               static_cast<int>(text.size()), text.data());
}

bool Engine::drain(Duration timeout) {
  return impl_->finalizer.drain(timeout);
}
void Engine::check_leaks() {
  impl_->finalizer.check_deadlines();
}
TimePoint Engine::poll(TimePoint now) {
  TimePoint next = impl_->finalizer.poll(now);
  auto ctl = control();
  return std::min(next, poll_link_watch(*impl_->linkwatch, ctl, now));
}
std::size_t Engine::pending_finalization() const {
  return impl_->finalizer.pending();
}
std::vector<LeakReport> Engine::waiting_devices() const {
  return impl_->finalizer.waiting();
}

}  // namespace ifcore
