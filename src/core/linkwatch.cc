// The link watch (Linux: net/core/link_watch.c semantics, written for ifcore): carrier
// changes become operstate, an active transmit path and Change notifications, at once or
// after a wait chosen by the policy. See ifcore/linkwatch.h.
//
// Lock order: control lock -> LinkWatch::mu_ (leaf). The worker takes the control lock
// without holding mu_.
#include "core/linkwatch.h"

#include <net/if.h>

#include <linux/if.h>

#include <algorithm>

#include "ifcore/frame.h"
#include "ifcore/rcu.h"

namespace ifcore {

namespace {

// Runs after every other subscriber, so that Change follows the Up others have seen.
constexpr int kPriority = -1000000;

double seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

void LinkWatchDeleter::operator()(LinkWatch* lw) const {
  delete lw;
}

std::unique_ptr<LinkWatch, LinkWatchDeleter> make_link_watch(Engine::Impl& impl) {
  return std::unique_ptr<LinkWatch, LinkWatchDeleter>(new LinkWatch(impl));
}

std::uint8_t derived_operstate(const Device& d) {
  // Linux: default_operstate, then rfc2863_policy's link_mode rule.
  // Without carrier: LOWERLAYERDOWN when the device its link names (looked up in the
  // device's own namespace, as Linux does) has no carrier either (or is down: the carrier
  // an upper takes from its lower, kinds/common.cc transfer_carrier).
  if (!d.carrier()) {
    int link = d.kind().link_ifindex(d);
    if (!link || link == d.ifindex()) return IF_OPER_DOWN;
    rcu::ReadGuard guard;
    const Device* lower = d.ns().find_by_index_rcu(link);
    return lower && !(lower->carrier() && lower->is_up()) ? IF_OPER_LOWERLAYERDOWN : IF_OPER_DOWN;
  }
  if (d.link_mode() == IF_LINK_MODE_DORMANT) return IF_OPER_DORMANT;
  if (d.link_mode() == IF_LINK_MODE_TESTING) return IF_OPER_TESTING;
  return IF_OPER_UP;
}

LinkWatch::LinkWatch(Engine::Impl& impl) : impl_(impl) {
  // Made with the engine, before anybody else can reach the chain: no lock needed yet.
  sub_ = impl_.chain.add(
      *this, SubscribeOptions{
                 "linkwatch", kPriority, false,
                 events_of(NetdevEvent::Register, NetdevEvent::PreUp, NetdevEvent::Up,
                           NetdevEvent::GoingDown, NetdevEvent::Down, NetdevEvent::Unregister),
                 true});  // on_event takes the plug-in lock when it needs the queue
}

LinkWatch::~LinkWatch() {
  {
    MutexLock lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  impl_.chain.remove(sub_);
  pending_.clear();
}

bool LinkWatch::in_transition(const Device& dev) const {
  std::uint8_t t = DeviceAccess::lw_transit(dev);
  return ((t & kOpening) && dev.is_up()) || (t & kClosing);
}

void LinkWatch::mark(Device& dev, std::uint8_t bit, bool on) {
  std::uint8_t& t = DeviceAccess::lw_transit(dev);
  if (bool(t & bit) == on) return;
  t = on ? t | bit : t & ~bit;
  std::size_t& count = bit == kOpening ? opening_ : closing_;
  on ? ++count : --count;
}

bool LinkWatch::adaptive_urgent(const Device& dev) const {
  return impl_.policies.linkwatch == LinkWatchPolicy::Adaptive && dev.kind().is_virtual();
}

bool LinkWatch::kernel_urgent(const Device& dev) const {
  // Linux before 4.1 (linkwatch_urgent_event): urgent only if running and ifindex !=
  // iflink, i.e. stacked on a lower (vlan, macvlan); veth had no iflink then. The third
  // clause (carrier on while the qdisc changes) is not modelled: ifcore has no qdiscs.
  return dev.is_up() && !in_transition(dev) && dev.kind().dies_with_lower();
}

void LinkWatch::enqueue(Device& dev, Wait wait, TimePoint at) {
  DeviceAccess::lw_transit(dev) |= kQueued;
  pending_.emplace(dev.id(), Entry{Ref(dev, "linkwatch"), wait, at});
}

bool LinkWatch::take_token(Device& dev, TimePoint now, TimePoint* back) {
  DeviceAccess::lw_transit(dev) |= kQueued;
  Bucket& b = buckets_[dev.id()];
  double burst = std::max<double>(1.0, tuning_.burst);
  if (b.at == TimePoint{}) {
    b.tokens = burst;
  } else if (now > b.at) {
    b.tokens = std::min(burst, b.tokens + tuning_.per_second * seconds(now - b.at));
  }
  b.at = std::max(b.at, now);
  if (b.tokens >= 1.0) {
    b.tokens -= 1.0;
    return true;
  }
  double rate = tuning_.per_second > 0 ? tuning_.per_second : 1.0;
  *back = now + std::chrono::duration_cast<Duration>(
                    std::chrono::duration<double>((1.0 - b.tokens) / rate));
  return false;
}

void LinkWatch::fire(Control& ctl, Device& dev) {
  ++stats_.fired;
  // Linux: no event before registration; an unregistering device is forgotten.
  if (dev.state() != RegState::Registered) return;
  // Read only where an event waits or spends a token: not for a device that is down (each
  // new veth end), whose event is delivered at once.
  auto now = [this] { return impl_.engine.time().now(); };
  bool adaptive = adaptive_urgent(dev);
  auto it = pending_.find(dev.id());
  if (it != pending_.end()) {
    // Coalesced: the pending event will report the state of the moment it runs.
    ++stats_.coalesced;
    if (!adaptive && kernel_urgent(dev)) deliver(ctl, dev);
    return;
  }
  if (adaptive) {
    if (in_transition(dev)) {  // delivered by the Up/Down that ends the transition
      enqueue(dev, Wait::Budget, now());
      return;
    }
    if (!dev.is_up()) {  // nothing to notify: only the operstate changes
      deliver(ctl, dev);
      return;
    }
    if (opening_ != 0 || closing_ != 0 || delivering_) {
      // Linux: the events an open fires (veth_open: carrier on for the device, then its
      // peer) are run by the link watch after the open, in the order they fired: the
      // opening device's first. Held until its Up, or until its open fails (open_failed);
      // no timer, so that the worker thread is not woken for them. Likewise those a close
      // fires (veth_close: the peer's carrier off; a bridge's, with its last forwarding
      // port): after the closing device's own announcement, at its Down. And those an
      // event's delivery fires (a port's carrier turning its bridge's on): after the events
      // being delivered (Linux: queued for the watch's next run).
      enqueue(dev, Wait::Budget, now());
      held_.push_back(dev.id());
      return;
    }
    TimePoint back{};
    if (take_token(dev, now(), &back)) {
      deliver(ctl, dev);
      return;
    }
    ++stats_.deferred;
    enqueue(dev, Wait::Budget, back);
    schedule(back);
    return;
  }
  TimePoint at = now();
  enqueue(dev, Wait::Window, at);
  if (kernel_urgent(dev)) {
    deliver(ctl, dev);
    return;
  }
  // Linux: linkwatch_schedule_work: wait until a second after the last full run.
  ++stats_.deferred;
  schedule(std::max(at, next_full_run_));
}

void LinkWatch::deliver(Control& ctl, Device& dev) {
  const bool outer = !delivering_;
  delivering_ = true;
  deliver_one(ctl, dev);
  if (!outer) return;
  delivering_ = false;
  release_held(ctl, impl_.engine.time().now());
}

void LinkWatch::deliver_one(Control& ctl, Device& dev) {
  Ref keep;
  if (auto it = pending_.find(dev.id()); it != pending_.end()) {
    keep = std::move(it->second.ref);
    pending_.erase(it);
  }
  if (dev.state() != RegState::Registered) return;
  ++stats_.delivered;
  // Linux: linkwatch_do_dev: rfc2863_policy, then for an up device dev_activate or
  // dev_deactivate and netdev_state_change.
  std::uint8_t op = derived_operstate(dev);
  if (op != dev.operstate()) dev.set_operstate_locked(ctl, op);
  if (dev.is_up() && !(DeviceAccess::lw_transit(dev) & kClosing)) {
    dev.set_tx_active_locked(ctl, dev.carrier());
    ++stats_.notified;
    ctl.notify_change(dev);
  }
}

TimePoint LinkWatch::poll(Control& ctl, TimePoint now) {
  run_due(ctl, now);
  MutexLock lk(mu_);
  return has_deadline_ ? deadline_ : TimePoint::max();
}

void LinkWatch::run_due(Control& ctl, TimePoint now) {
  ++stats_.runs;
  bool full = next_full_run_ <= now;
  bool window_run = false;
  std::vector<Ref> due;
  for (auto& [id, e] : pending_) {
    Device& d = *e.ref;
    if (in_transition(d)) continue;
    if (e.wait == Wait::Window) {
      if (full || kernel_urgent(d)) {
        window_run = window_run || full;
        due.emplace_back(d, "linkwatch");
      }
    } else if (e.due <= now) {
      due.emplace_back(d, "linkwatch");
    }
  }
  // Linux: __linkwatch_run_queue: a full run opens the next one-second window.
  if (window_run) next_full_run_ = now + tuning_.kernel_window;
  delivering_ = true;
  for (Ref& r : due) {
    auto it = pending_.find(r->id());
    if (it == pending_.end()) continue;  // delivered meanwhile by a nested change
    if (it->second.wait == Wait::Budget)
      deliver_budgeted(ctl, *r, now);
    else
      deliver(ctl, *r);
  }
  delivering_ = false;
  release_held(ctl, now);
  reschedule(now);
}

void LinkWatch::deliver_budgeted(Control& ctl, Device& dev, TimePoint now) {
  TimePoint back{};
  (void)take_token(dev, now, &back);
  deliver(ctl, dev);
}

void LinkWatch::open_failed(Control& ctl, Device& dev) {
  mark(dev, kOpening, false);
  release_held(ctl, impl_.engine.time().now());
}

void LinkWatch::release_held(Control& ctl, TimePoint now) {
  if (opening_ != 0 || closing_ != 0 || delivering_) return;
  // The events these deliveries fire are held in turn, and delivered after them.
  while (!held_.empty()) {
    std::vector<std::uint64_t> held;
    held.swap(held_);
    delivering_ = true;
    for (std::uint64_t id : held) {
      auto it = pending_.find(id);
      if (it != pending_.end() && it->second.wait == Wait::Budget)
        deliver_budgeted(ctl, *it->second.ref, now);
    }
    delivering_ = false;
  }
}

Result<void> LinkWatch::on_event(Control& ctl, const EventInfo& ev) {
  // Register touches the device alone, and so does the Unregister of a device that was
  // never queued and is not opening (kQueued); the rest, the watch's queue (the engine's).
  Device& dev = ev.dev;
  const bool alone = ev.event == NetdevEvent::Register ||
                     (ev.event == NetdevEvent::Unregister &&
                      !(DeviceAccess::lw_transit(dev) & (kQueued | kOpening)));
  PluginGuard guard(ctl, !alone);
  const std::uint64_t id = dev.id();
  switch (ev.event) {
    case NetdevEvent::Register:
      // Linux: linkwatch_init_dev: a device registered without carrier gets its operstate.
      if (!dev.carrier() || dev.link_mode() != IF_LINK_MODE_DEFAULT)
        dev.set_operstate_locked(ctl, derived_operstate(dev));
      break;
    case NetdevEvent::PreUp:
      mark(dev, kOpening, true);
      break;
    case NetdevEvent::Up: {
      mark(dev, kOpening, false);
      // Linux: __dev_open runs dev_activate: with carrier the transmit path starts now.
      if (dev.carrier()) dev.set_tx_active_locked(ctl, true);
      TimePoint now = impl_.engine.time().now();
      if (auto it = pending_.find(id); it != pending_.end()) {
        if (it->second.wait == Wait::Budget ? it->second.due <= now : kernel_urgent(dev)) {
          if (it->second.wait == Wait::Budget)
            deliver_budgeted(ctl, dev, now);
          else
            deliver(ctl, dev);
        } else {
          reschedule(now);
        }
      }
      release_held(ctl, now);
      break;
    }
    case NetdevEvent::GoingDown:
      // Linux: dev_close runs dev_deactivate: frames are dropped from now on.
      mark(dev, kClosing, true);
      dev.set_tx_active_locked(ctl, false);
      break;
    case NetdevEvent::Down: {
      mark(dev, kClosing, false);
      if (pending_.empty()) break;
      TimePoint now = impl_.engine.time().now();
      auto it = pending_.find(id);
      if (it != pending_.end() && it->second.wait == Wait::Budget)
        deliver(ctl, dev);  // silent: the device is down
      else if (it != pending_.end())
        reschedule(now);
      release_held(ctl, now);
      break;
    }
    case NetdevEvent::Unregister:
      // Linux: linkwatch_forget_dev; drops the event's reference.
      if (!alone) {  // a device never queued is in neither map
        pending_.erase(id);
        buckets_.erase(id);
      }
      mark(dev, kOpening, false);
      mark(dev, kClosing, false);
      dev.set_tx_active_locked(ctl, false);
      clear_rx_hooks(ctl, dev);  // frame.h: no frame reaches it from now on
      break;
    default:
      break;
  }
  return ok();
}

void LinkWatch::schedule(TimePoint at) {
  MutexLock lk(mu_);
  if (stop_) return;
  start_worker_locked();
  if (!has_deadline_ || at < deadline_) {
    deadline_ = at;
    has_deadline_ = true;
    cv_.notify_all();
  }
}

void LinkWatch::reschedule(TimePoint now) {
  bool any = false;
  TimePoint next{};
  for (auto& [id, e] : pending_) {
    if (in_transition(*e.ref)) continue;  // the Up/Down handler takes it
    TimePoint t = e.wait == Wait::Window ? std::max(now, next_full_run_) : e.due;
    if (!any || t < next) next = t;
    any = true;
  }
  MutexLock lk(mu_);
  has_deadline_ = any;
  deadline_ = next;
  if (any && !stop_) start_worker_locked();
  cv_.notify_all();
}

void LinkWatch::start_worker_locked() {
  if (thread_.joinable() || !impl_.engine.config().background_threads) return;
  thread_ = std::thread([this] { worker(); });
}

void LinkWatch::worker() {
  MutexLock lk(mu_);
  while (!stop_) {
    if (!has_deadline_) {
      lk.wait(cv_);
      continue;
    }
    TimePoint now = impl_.engine.time().now();
    if (deadline_ > now) {
      // Real time stands in for the TimeSource: with a FakeTime the tests run the queue
      // themselves (run_link_watch) and the worker finds nothing due.
      lk.wait_for(cv_, deadline_ - now);
      continue;
    }
    has_deadline_ = false;
    lk.unlock();
    {
      auto ctl = impl_.engine.control();
      bool stopping;
      {
        MutexLock g(mu_);
        stopping = stop_;
      }
      if (!stopping) run_due(ctl);
    }
    lk.lock();
  }
}

// ---------------------------------------------------------------- public functions

TimePoint poll_link_watch(LinkWatch& lw, Control& ctl, TimePoint now) {
  return lw.poll(ctl, now);
}

void run_link_watch(Control& ctl) {
  PluginGuard guard(ctl);  // the link watch's queue
  ctl.engine().impl().linkwatch->run_due(ctl);
}

std::size_t link_watch_pending(Control& ctl) {
  PluginGuard guard(ctl);  // the link watch's queue
  return ctl.engine().impl().linkwatch->pending();
}

bool link_watch_pending(Control& ctl, const Device& dev) {
  PluginGuard guard(ctl);  // the link watch's queue
  return ctl.engine().impl().linkwatch->pending(dev);
}

LinkWatchStats link_watch_stats(Control& ctl) {
  PluginGuard guard(ctl);  // the link watch's queue
  return ctl.engine().impl().linkwatch->stats();
}

LinkWatchTuning link_watch_tuning(Control& ctl) {
  PluginGuard guard(ctl);  // the link watch's queue
  return ctl.engine().impl().linkwatch->tuning();
}

void set_link_watch_tuning(Control& ctl, const LinkWatchTuning& t) {
  PluginGuard guard(ctl);  // the link watch's queue
  ctl.engine().impl().linkwatch->set_tuning(t);
}

}  // namespace ifcore
