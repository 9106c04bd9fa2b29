// Control: the lock holder's handle. Namespaces, plug-ins, registration.
//
// Lock order: control lock -> Finalizer::mu_ -> leaves (see engine.h).
#include <net/if.h>

#include <linux/if_arp.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <utility>

#include "base/rcu.h"
#include "core/engine_impl.h"
#include "core/registry.h"

namespace ifcore {

// The analysis cannot follow a lock held from one call to another: Control takes the
// control lock natively, and everything that needs it takes a Control&.
Control::Control(Engine& e) : engine_(&e), lock_(e.impl().control.native()) {}

Control::Control(Engine& e, Namespace& ns)
    : engine_(&e), shared_(e.impl().control.native()), ns_lock_(ns.mu_.native()), scope_(&ns) {}

Control::Control(Control&& o) noexcept
    : engine_(o.engine_),
      lock_(std::move(o.lock_)),
      shared_(std::move(o.shared_)),
      ns_lock_(std::move(o.ns_lock_)),
      scope_(o.scope_),
      tally_(std::exchange(o.tally_, {})),
      legacy_todo_(std::move(o.legacy_todo_)) {}

Control::~Control() {
  if (!lock_.owns_lock() && !ns_lock_.owns_lock()) return;
  // Linux: rtnl_unlock runs the todo list. Under the legacy policies the caller waits
  // here, without the lock, for each device's references, as netdev_run_todo did.
  auto& impl = engine_->impl();
  std::vector<Device*> todo = std::move(legacy_todo_);
  Policies p = impl.policies;
  flush_tally();
  if (lock_.owns_lock()) lock_.unlock();
  if (ns_lock_.owns_lock()) ns_lock_.unlock();
  if (shared_.owns_lock()) shared_.unlock();
  if (todo.empty()) return;
  // Linux (netdev_run_todo): one barrier for the whole list, then wait per device.
  impl.barrier(p);
  for (Device* d : todo) impl.legacy_wait(*d);
}

void Control::flush_tally() {
  if (!scope_) return;
  auto& st = engine_->impl().stats;
  for (std::size_t i = 0; i < tally_.size(); ++i)
    if (tally_[i])
      st.of(static_cast<StatsCounters::Tally>(i))
          .fetch_add(std::exchange(tally_[i], 0), std::memory_order_relaxed);
}

bool Control::covers(const Device& dev) const {
  if (!scope_) return true;
  if (&dev.ns() != scope_) return false;
  for (const Device* d : dev.uppers_locked())
    if (&d->ns() != scope_) return false;
  for (const Device* d : dev.lowers_locked())
    if (&d->ns() != scope_) return false;
  const Device* other = dev.link();
  return !other || &other->ns() == scope_;
}

Result<void> Control::check_covers(const Device& dev) const {
  if (covers(dev)) return ok();
  return fail(EXDEV,
              "device \"{}\" reaches beyond namespace \"{}\": this needs the engine's control",
              dev.name(), scope_->name());
}

Result<void> Control::check_covers(const Namespace& ns) const {
  if (covers(ns)) return ok();
  return fail(EXDEV, "namespace \"{}\" is not under this control (it holds \"{}\")", ns.name(),
              scope_->name());
}

Result<void> Control::check_engine_wide(std::string_view what) const {
  if (!scope_) return ok();
  return fail(EXDEV, "{} needs the engine's control (this one holds namespace \"{}\")", what,
              scope_->name());
}

void Control::require_engine_wide(std::string_view what) const {
  auto r = check_engine_wide(what);
  if (r) return;
  engine_->log(LogLevel::Error, r.error().message);
  std::abort();
}

PluginGuard::PluginGuard(const Control& ctl, bool needed) {
  if (!needed || !ctl.scope_) return;
  engine_ = &ctl.engine();
  engine_->impl().plugins.lock();
}

PluginGuard::~PluginGuard() {
  if (engine_) engine_->impl().plugins.unlock();
}

// ---------------------------------------------------------------- namespaces

Namespace* Control::find_namespace(std::string_view name) const {
  for (auto& ns : engine_->impl().namespaces)
    if (ns->name() == name) return ns.get();
  return nullptr;
}

Namespace* Control::find_namespace_by_id(int id) const {
  for (auto& ns : engine_->impl().namespaces)
    if (ns->id() == id) return ns.get();
  return nullptr;
}

std::vector<Namespace*> Control::namespaces() const {
  std::vector<Namespace*> out;
  for (auto& ns : engine_->impl().namespaces) out.push_back(ns.get());
  return out;
}

Result<Namespace*> Control::create_namespace(std::string_view name, std::optional<int> id) {
  IFCORE_TRY(check_engine_wide("creating a namespace"));
  if (name.empty() || name.size() > 255 || name == "." || name == ".." ||
      name.find('/') != std::string_view::npos)
    return fail(EINVAL, "namespace name \"{}\" is not valid", name);
  if (find_namespace(name)) return fail(EEXIST, "namespace \"{}\" already exists", name);
  if (id && *id < 0) return fail(EINVAL, "namespace id {} is not valid", *id);
  if (id && find_namespace_by_id(*id)) return fail(EEXIST, "namespace id {} is taken", *id);
  auto& impl = engine_->impl();
  // Linux: copy_net_ns refuses a namespace past the user's max_net_namespaces with ENOSPC.
  if (std::size_t max = impl.policies.max_namespaces; max && impl.namespaces.size() >= max)
    return fail(ENOSPC, "namespace \"{}\": the limit of {} namespaces is reached", name, max);
  const int nid = id.value_or(impl.next_ns_id);
  impl.next_ns_id = std::max(impl.next_ns_id, nid + 1);
  auto* ns = new Namespace(*engine_, std::string(name), nid);
  impl.namespaces.emplace_back(ns);
  for (std::size_t i = 0; i < impl.pernet.size(); ++i) {
    auto r = impl.pernet[i]->init(*this, *ns);
    if (!r) {
      for (std::size_t j = i; j-- > 0;) impl.pernet[j]->exit(*this, *ns);
      (void)destroy_namespace(*ns);
      return fail(std::move(r).error());
    }
  }
  return ns;
}

Result<void> Control::destroy_namespace(Namespace& ns) {
  IFCORE_TRY(check_engine_wide("destroying a namespace"));
  auto& impl = engine_->impl();
  auto it = std::find_if(impl.namespaces.begin(), impl.namespaces.end(),
                         [&](auto& p) { return p.get() == &ns; });
  if (it == impl.namespaces.end()) return fail(ENOENT, "namespace is not known");
  ns.dying_ = true;
  // Linux: cleanup_net unhashes the dying namespace's ids in the others (RTM_DELNSID in each)
  // before the pernet exits unregister its devices.
  for (auto& other : impl.namespaces) {
    if (other.get() == &ns) continue;
    int id = other->peer_id_locked(ns);
    if (id < 0) continue;
    other->peer_ids_.erase(id);
    impl.tell_nsid_observers(*other, ns, id, false);
  }
  for (auto h = impl.pernet.rbegin(); h != impl.pernet.rend(); ++h) (*h)->pre_exit(*this, ns);
  // Linux: default_device_exit_batch — every device in ONE batch. Devices that can move
  // would go back to the initial namespace in Linux; in ifcore they are deleted with it.
  UnregisterBatch batch;
  for (Device* d : ns.devices_locked()) {
    // Cascades (veth peers in other namespaces, vlans on these devices) come along; the
    // loopback device, which refuses a user's delete, goes too.
    if (!queue_unregister(*d, batch)) batch.add(*d);
  }
  commit(batch);
  for (auto h = impl.pernet.rbegin(); h != impl.pernet.rend(); ++h) (*h)->exit(*this, ns);
  std::unique_ptr<Namespace> owned = std::move(*it);
  impl.namespaces.erase(it);
  // Readers that found the namespace's devices are gone after the batch's grace period;
  // the namespace itself is reached only under the control lock.
  owned.reset();
  return ok();
}

std::uint64_t Control::add_nsid_observer(NsidObserver fn) {
  require_engine_wide("an nsid observer");
  auto& impl = engine_->impl();
  std::uint64_t h = impl.next_nsid_observer++;
  impl.nsid_observers.emplace(h, std::move(fn));
  return h;
}

void Control::remove_nsid_observer(std::uint64_t handle) {
  require_engine_wide("an nsid observer");
  engine_->impl().nsid_observers.erase(handle);
}

Device* Control::find(Namespace& ns, std::string_view name) const {
  rcu::ReadGuard g;
  return ns.find_by_name_rcu(name);
}

Device* Control::find(Namespace& ns, int ifindex) const {
  rcu::ReadGuard g;
  return ns.find_by_index_rcu(ifindex);
}

// ---------------------------------------------------------------- plug-ins

const Kind* Control::find_kind(std::string_view name) const {
  for (const auto& [n, kind] : engine_->impl().kinds)
    if (n == name) return kind;
  return nullptr;
}

SubscriptionId Control::subscribe(Subscriber& s, SubscribeOptions opts) {
  require_engine_wide("subscribing");
  auto& impl = engine_->impl();
  bool replay = opts.replay;
  EventMask events = opts.events;
  SubscriptionId id = impl.chain.add(s, opts);
  if (!replay) return id;
  // Linux: register_netdevice_notifier replays REGISTER and UP for existing devices.
  for (auto& ns : impl.namespaces) {
    for (Device* d : ns->devices_locked()) {
      EventInfo reg{NetdevEvent::Register, *d};
      reg.replay = true;
      if (takes(events, NetdevEvent::Register)) (void)s.on_event(*this, reg);
      if (d->is_up() && takes(events, NetdevEvent::Up)) {
        EventInfo up{NetdevEvent::Up, *d};
        up.replay = true;
        (void)s.on_event(*this, up);
      }
    }
  }
  return id;
}

void Control::unsubscribe(SubscriptionId id, bool replay_down) {
  require_engine_wide("unsubscribing");
  auto& impl = engine_->impl();
  const NotifierChain::Entry* entry = impl.chain.find(id);
  EventMask events = entry ? entry->events : 0;
  Subscriber* s = impl.chain.remove(id);
  if (!s || !replay_down) return;
  // Linux: unregister_netdevice_notifier sends DOWN and UNREGISTER for existing devices.
  for (auto& ns : impl.namespaces) {
    for (Device* d : ns->devices_locked()) {
      if (d->is_up()) {
        EventInfo gd{NetdevEvent::GoingDown, *d};
        gd.replay = true;
        if (takes(events, gd.event)) (void)s->on_event(*this, gd);
        EventInfo down{NetdevEvent::Down, *d};
        down.replay = true;
        if (takes(events, down.event)) (void)s->on_event(*this, down);
      }
      EventInfo un{NetdevEvent::Unregister, *d};
      un.replay = true;
      if (takes(events, un.event)) (void)s->on_event(*this, un);
    }
  }
}

void Control::set_priority(SubscriptionId id, int priority) {
  require_engine_wide("a subscriber's priority");
  engine_->impl().chain.set_priority(id, priority);
}

const Policies& Control::policies() const {
  return engine_->impl().policies;
}

void Control::on_policies_changed(std::function<void(Control&, const Policies&)> fn) {
  require_engine_wide("a policies observer");
  engine_->impl().policy_observers.push_back(std::move(fn));
}

Result<void> Control::add_pernet(PernetHooks& hooks) {
  IFCORE_TRY(check_engine_wide("a pernet hook"));
  auto& impl = engine_->impl();
  std::vector<Namespace*> done;
  for (auto& ns : impl.namespaces) {
    auto r = hooks.init(*this, *ns);
    if (!r) {
      for (Namespace* d : done) hooks.exit(*this, *d);
      return r;
    }
    done.push_back(ns.get());
  }
  impl.pernet.push_back(&hooks);
  return ok();
}

void Control::remove_pernet(PernetHooks& hooks) {
  require_engine_wide("a pernet hook");
  auto& v = engine_->impl().pernet;
  auto it = std::find(v.begin(), v.end(), &hooks);
  if (it == v.end()) return;
  v.erase(it);
  for (auto& ns : engine_->impl().namespaces) hooks.exit(*this, *ns);
}

Result<void> Control::notify(const EventInfo& ev) {
  return engine_->impl().call_chain(*this, ev);
}

void Control::notify_change(Device& dev, std::uint32_t flags_changed) {
  // Linux: netdev_state_change and __dev_notify_flags tell of an up device only.
  if (!dev.is_up()) return;
  EventInfo ev{NetdevEvent::Change, dev};
  ev.flags_changed = flags_changed;
  (void)engine_->impl().call_chain(*this, ev);
}

// ---------------------------------------------------------------- registration

std::unique_ptr<Device> Control::alloc_device(const Kind& kind, Namespace& ns) {
  // Linux: alloc_netdev + ether_setup defaults, which the constructor sets.
  return std::unique_ptr<Device>(DeviceAccess::make(*engine_, kind, ns));
}

Result<void> Control::apply_create_attrs(Device& dev, const LinkRequest& req) {
  // Linux: rtnl_create_link applies these before register_netdevice, after
  // validate_linkmsg, which finds the limit the kind's setup left.
  IFCORE_TRY(check_offload_limits(req, dev.kind().setup_tso_max_size()));
  if (req.mtu) IFCORE_TRY(dev.validate_mtu(*req.mtu));
  if (req.address && req.address->size() != dev.address().size())
    return fail(EINVAL, "address of {} bytes does not match the device's {}", req.address->size(),
                dev.address().size());
  if (req.address && dev.hw_type() == ARPHRD_ETHER && !req.address->is_valid_ether())
    return fail_log_only(EADDRNOTAVAIL, "address {} is not a valid unicast Ethernet address",
                         req.address->to_string());
  if (req.mtu) dev.set_mtu_locked(*this, *req.mtu);
  if (req.address) {
    dev.set_address_locked(*this, *req.address);
  }
  if (req.broadcast) dev.set_broadcast_locked(*this, *req.broadcast);
  if (req.txqlen) dev.set_txqlen_locked(*this, *req.txqlen);
  if (req.group) dev.set_group_locked(*this, *req.group);
  if (req.num_tx_queues || req.num_rx_queues)
    dev.set_queues_locked(*this, req.num_tx_queues.value_or(dev.num_tx_queues()),
                          req.num_rx_queues.value_or(dev.num_rx_queues()));
  if (req.operstate) dev.set_operstate_locked(*this, *req.operstate);
  if (req.link_mode) dev.set_link_mode_locked(*this, *req.link_mode);
  dev.set_offload_limits_locked(*this, apply_offload_limits(OffloadLimits{}, req));
  // (Not IFLA_IFALIAS: rtnl_create_link ignores it; only a change sets an alias.)
  return ok();
}

Result<void> Control::check_device_room(const Namespace& ns, std::size_t count) const {
  // ifcore: Linux has no such limit; ENOSPC as for its per-user namespace limits.
  std::size_t max = engine_->impl().policies.max_devices;
  if (max && ns.device_count() + count > max)
    return fail(ENOSPC, "namespace \"{}\": the limit of {} devices is reached", ns.name(), max);
  return ok();
}

Result<Device*> Control::register_device(std::unique_ptr<Device> dev, std::string_view name,
                                         int ifindex) {
  IFCORE_TRY(check_covers(dev->ns()));
  auto& impl = engine_->impl();
  Namespace& ns = dev->ns();
  IFCORE_TRY(check_device_room(ns, 1));
  Registry& reg = ns.registry();
  std::string final_name(name);
  if (name.find('%') != std::string_view::npos) {
    auto n = reg.resolve_pattern(name);
    if (!n) return fail(n.error());
    final_name = std::move(*n);
  }
  IFCORE_TRY(validate_device_name(final_name));
  // Linux: register_netdevice checks the name (dev_get_valid_name) before the index
  // (dev_index_reserve). Registry::insert below does both in that order; the errors
  // before it look the name up themselves.
  auto name_first = [&](Error e) -> Result<Device*> {
    if (reg.name_taken(final_name))
      return fail_log_only(EEXIST, "device \"{}\" already exists", final_name);
    return fail(std::move(e));
  };
  if (ifindex < 0)
    return name_first(Error{EINVAL, "ifindex can't be negative"});  // Linux: rtnl_newlink
  if (ifindex == 0) {
    auto i = reg.alloc_ifindex();
    if (!i) return name_first(std::move(i).error());
    ifindex = *i;
  }
  Device* d = dev.release();
  d->set_name_locked(*this, final_name);
  DeviceAccess::set_ifindex(*d, ifindex);
  // Linux: only drivers with a hardware address set perm_addr (NET_ADDR_PERM); random and
  // user-set addresses leave it empty, so IFLA_PERM_ADDRESS is not reported for them.
  auto ins = reg.insert(*d, final_name, ifindex);
  if (!ins) {
    delete d;
    return fail(ins.error());
  }
  reg.maybe_resize();
  DeviceAccess::set_state(*d, RegState::Registered);
  impl.stats.count(*this, StatsCounters::Registered, 1);
  // Linux: register_netdevice sends REGISTER; a veto unregisters the device again.
  EventInfo ev{NetdevEvent::Register, *d};
  EventInfo un{NetdevEvent::Unregister, *d};
  auto r = impl.call_chain(*this, ev, &un);
  if (!r) {
    impl.discard_registered(*this, std::span<Device* const>(&d, 1));
    return fail(std::move(r).error());
  }
  return d;
}

void Engine::Impl::discard_registered(Control& ctl, std::span<Device* const> devs) {
  for (Device* d : devs) {
    d->ns().registry().erase(*d, d->ifindex());
    DeviceAccess::set_state(*d, RegState::Unregistered);
  }
  stats.count(ctl, StatsCounters::Registered, -static_cast<std::uint64_t>(devs.size()));
  // Nobody else saw them for long: one grace period, then free.
  DeviceAccess::kill_refs(*this, devs);
  std::vector<Device*> held;
  for (Device* d : devs) {
    if (DeviceAccess::exact(*d) == 1)
      rcu::retire(d);
    else
      held.push_back(d);
  }
  if (held.empty()) return;
  finalizer.adopt(held, false);
  for (Device* d : held) DeviceAccess::drop_exact(*d, 1);
  finalizer.settle();
}

// ---------------------------------------------------------------- batches

namespace {

// Tokens are never reused, so a device marked by a batch that was committed or destroyed
// matches no live batch. Atomic: batches of different engines (different control locks)
// draw from the same counters.
std::atomic<std::uint64_t> next_batch_token{1};
// How many times add() re-marked a device that carried another batch's token. A batch that
// started before a re-marking may have lost a mark and looks its list up instead.
std::atomic<std::uint64_t> batch_remarks{0};

}  // namespace

// A copy holds devices marked with the original's token: it takes a token of its own (for
// the devices it adds later) and always looks its list up.
UnregisterBatch::UnregisterBatch(const UnregisterBatch& o)
    : devices_(o.devices_),
      token_(o.token_ == 0 ? 0 : next_batch_token.fetch_add(1, std::memory_order_relaxed)),
      remarks_(batch_remarks.load(std::memory_order_relaxed)),
      exact_(o.token_ != 0),
      first_ns_(o.first_ns_),
      mixed_(o.mixed_) {
  if (o.engine_ && !devices_.empty()) link(*o.engine_);
}

UnregisterBatch::UnregisterBatch(UnregisterBatch&& o) noexcept {
  *this = std::move(o);
}

UnregisterBatch::~UnregisterBatch() {
  unlink();
}

UnregisterBatch& UnregisterBatch::operator=(const UnregisterBatch& o) {
  if (this != &o) *this = UnregisterBatch(o);
  return *this;
}

UnregisterBatch& UnregisterBatch::operator=(UnregisterBatch&& o) noexcept {
  if (this == &o) return *this;
  unlink();
  auto take = [&] {
    devices_ = std::move(o.devices_);
    token_ = o.token_;
    remarks_ = o.remarks_;
    exact_ = o.exact_;
    first_ns_ = std::exchange(o.first_ns_, nullptr);
    mixed_ = std::exchange(o.mixed_, false);
    index_ = std::move(o.index_);
    indexed_ = o.indexed_;
    engine_ = std::exchange(o.engine_, nullptr);
    prev_ = std::exchange(o.prev_, nullptr);
    next_ = std::exchange(o.next_, nullptr);
    o.devices_.clear();
    o.token_ = 0;
    o.exact_ = false;
    o.index_.clear();
    o.indexed_ = 0;
  };
  Engine* e = o.engine_;
  if (!e) {
    take();
    return *this;
  }
  // `o` hands its place in its engine's list over to this batch, under the batch lock: a
  // commit may be taking devices out of its list.
  MutexLock lk(e->impl().batches_mu);
  take();
  (prev_ ? prev_->next_ : e->impl().live_batches) = this;
  if (next_) next_->prev_ = this;
  return *this;
}

void UnregisterBatch::link(Engine& e) {
  MutexLock lk(e.impl().batches_mu);
  engine_ = &e;
  prev_ = nullptr;
  next_ = std::exchange(e.impl().live_batches, this);
  if (next_) next_->prev_ = this;
}

void UnregisterBatch::unlink() {
  if (!engine_) return;
  MutexLock lk(engine_->impl().batches_mu);
  (prev_ ? prev_->next_ : engine_->impl().live_batches) = next_;
  if (next_) next_->prev_ = prev_;
  engine_ = nullptr;
  prev_ = next_ = nullptr;
}

void UnregisterBatch::forget(const std::unordered_set<const Device*>& gone) {
  auto kept = std::remove_if(devices_.begin(), devices_.end(),
                             [&](const Device* d) { return gone.count(d) != 0; });
  if (kept == devices_.end()) return;
  devices_.erase(kept, devices_.end());
  index_.clear();
  indexed_ = 0;
}

void UnregisterBatch::add(Device& dev) {
  if (token_ == 0) {
    token_ = next_batch_token.fetch_add(1, std::memory_order_relaxed);
    remarks_ = batch_remarks.load(std::memory_order_relaxed);
  }
  if (contains(dev)) return;
  // Linux: unregister_netdevice_queue links dev->unreg_list into the caller's list.
  if (dev.batch_token_ != 0) batch_remarks.fetch_add(1, std::memory_order_relaxed);
  dev.batch_token_ = token_;
  if (!engine_) {
    if (devices_.empty()) first_ns_ = &dev.ns();
    link(dev.engine());
  }
  if (&dev.ns() != first_ns_) mixed_ = true;
  devices_.push_back(&dev);
}

bool UnregisterBatch::contains(const Device& dev) const {
  if (token_ == 0) return false;
  if (!exact_) {
    if (dev.batch_token_ == token_) return true;
    if (batch_remarks.load(std::memory_order_relaxed) == remarks_) return false;
  }
  return contains_slow(dev);
}

bool UnregisterBatch::contains_slow(const Device& dev) const {
  for (; indexed_ < devices_.size(); ++indexed_) index_.insert(devices_[indexed_]);
  return index_.count(&dev) != 0;
}

}  // namespace ifcore
