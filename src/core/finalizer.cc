// The finalizer: frees a device the moment its last reference drops, reports devices that
// wait too long, and never lets one stuck device delay another.
//
// Lock order: control lock -> Finalizer::mu_ -> leaves. The thread releases devices
// without holding mu_, and never takes the control lock. mu_ also guards the waiting
// devices' finalizer fields (DeviceAccess::next_report, fin_prev, fin_next, fin_list,
// fin_caller_waits).
#include <algorithm>

#include "base/prefetch.h"
#include "base/rcu.h"
#include "core/engine_impl.h"

namespace ifcore {

Finalizer::Finalizer(Engine::Impl& impl) : impl_(impl) {}

Finalizer::~Finalizer() {
  stop();
}

void Finalizer::start() {
  threaded_ = true;
  thread_ = std::thread([this] { run(); });
}

void Finalizer::stop() {
  {
    MutexLock lk(mu_);
    if (!thread_.joinable()) return;
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Finalizer::adopt(std::span<Device* const> devs, bool caller_waits) {
  TimePoint now = impl_.engine.time().now();
  TimePoint due = now + impl_.engine.config().leak_report_after;
  MutexLock lk(mu_);
  for (Device* d : devs) wait_locked(*d, now, due, caller_waits);
}

std::vector<Device*> Finalizer::adopt_held(std::span<Device* const> devs,
                                           std::span<const std::int64_t> drops, bool caller_waits) {
  TimePoint now = impl_.engine.time().now();
  TimePoint due = now + impl_.engine.config().leak_report_after;
  std::vector<Device*> free_now;
  if (!caller_waits) free_now.reserve(devs.size());
  MutexLock lk(mu_);
  for (std::size_t i = 0; i < devs.size(); ++i) {
    DeviceAccess::prefetch_state_and_refs(devs, i);
    Device* d = devs[i];
    // Marked before its count can run out: then another holder's last drop may free it.
    DeviceAccess::set_state(*d, RegState::Unregistered);
    // The usual case, nobody else holding it: freed without ever being listed here. (The
    // registry's reference keeps the count above `drops[i]`: it reaches zero here or later.)
    if (DeviceAccess::drop_exact_last(*d, drops[i] + 1) && !caller_waits) {
      free_now.push_back(d);
      continue;
    }
    wait_locked(*d, now, due, caller_waits);
  }
  return free_now;
}

void Finalizer::wait_locked(Device& d, TimePoint now, TimePoint due, bool caller_waits) {
  DeviceAccess::unregistered_at(d) = now;
  DeviceAccess::next_report(d) = due;
  DeviceAccess::fin_caller_waits(d) = caller_waits;
  link_locked(kFirst, d);
  ++waiting_;
}

void Finalizer::link_locked(ListId id, Device& d) {
  List& l = id == kFirst ? first_ : again_;
  TimePoint due = DeviceAccess::next_report(d);
  // After the last device due no later than `d`: equal deadlines keep their arrival order.
  Device* prev = l.tail;
  while (prev && DeviceAccess::next_report(*prev) > due) prev = DeviceAccess::fin_prev(*prev);
  Device* next = prev ? DeviceAccess::fin_next(*prev) : l.head;
  DeviceAccess::fin_prev(d) = prev;
  DeviceAccess::fin_next(d) = next;
  (prev ? DeviceAccess::fin_next(*prev) : l.head) = &d;
  (next ? DeviceAccess::fin_prev(*next) : l.tail) = &d;
  DeviceAccess::fin_list(d) = id;
}

void Finalizer::unlink_locked(Device& d) {
  List& l = DeviceAccess::fin_list(d) == kFirst ? first_ : again_;
  Device* prev = DeviceAccess::fin_prev(d);
  Device* next = DeviceAccess::fin_next(d);
  (prev ? DeviceAccess::fin_next(*prev) : l.head) = next;
  (next ? DeviceAccess::fin_prev(*next) : l.tail) = prev;
  DeviceAccess::fin_prev(d) = nullptr;
  DeviceAccess::fin_next(d) = nullptr;
  DeviceAccess::fin_list(d) = kNotWaiting;
}

Device* Finalizer::earliest_locked() const {
  Device* a = first_.head;
  Device* b = again_.head;
  if (!a || !b) return a ? a : b;
  return DeviceAccess::next_report(*b) < DeviceAccess::next_report(*a) ? b : a;
}

void Finalizer::settle() {
  {
    MutexLock lk(mu_);
    Device* first = earliest_locked();
    if (!first || DeviceAccess::next_report(*first) >= sleep_until_) return;
    kick_ = true;
  }
  cv_.notify_all();
}

void Finalizer::ready(Device& d) {
  bool wake;
  {
    MutexLock lk(mu_);
    // A legacy caller polls for it.
    if (DeviceAccess::fin_list(d) != kNotWaiting && DeviceAccess::fin_caller_waits(d)) return;
    wake = ready_.empty();  // the thread takes the whole list at once: one wake-up is enough
    ready_.push_back(&d);
  }
  if (wake) cv_.notify_all();
}

void Finalizer::release_now(Device& d) {
  std::vector<Device*> one{&d};
  release_locked_out(one);
}

void Finalizer::release_locked_out(std::vector<Device*>& devs, bool listed) {
  auto t0 = Clock::now();
  for (Device* d : devs) {
    DeviceAccess::set_state(*d, RegState::Released);
    d->kind().destruct(*d);
  }
  // Counted before they stop waiting: whoever drain() wakes sees them released.
  impl_.stats.devices_released.fetch_add(devs.size(), std::memory_order_relaxed);
  if (listed) {
    MutexLock lk(mu_);
    for (Device* d : devs) {
      if (DeviceAccess::fin_list(*d) == kNotWaiting) continue;
      unlink_locked(*d);
      --waiting_;
    }
  }
  // Freed after readers that may still see them: one callback for the whole list.
  struct Released {
    std::vector<Device*> devs;
    ~Released() { delete_prefetched(std::span<Device* const>(devs)); }
  };
  rcu::retire(new Released{devs});
  StatsCounters::add(impl_.stats.free_ns, Clock::now() - t0);
  idle_cv_.notify_all();
}

void Finalizer::report(Device& d, TimePoint now) {
  LeakReport r;
  r.name = d.name();
  r.usage_count = DeviceAccess::exact(d);
  r.holders = DeviceAccess::holders(d);
  std::string holders;
  for (auto& h : r.holders) holders += (holders.empty() ? "" : ", ") + h;
  if (holders.empty()) holders = "(unknown: enable ref tracking to list them)";
  impl_.engine.log(LogLevel::Warning,
                   fmt::format("waiting for {} to become free, usage count {}, holders: {}", r.name,
                               r.usage_count, holders));
  impl_.stats.leak_reports.fetch_add(1, std::memory_order_relaxed);
}

void Finalizer::check_deadlines() {
  {
    MutexLock lk(mu_);
    if (threaded_) {
      kick_ = true;
      cv_.notify_all();
      return;
    }
  }
  (void)poll(impl_.engine.time().now());
}

TimePoint Finalizer::poll(TimePoint now) {
  std::vector<Device*> batch;
  {
    MutexLock lk(mu_);
    batch.swap(ready_);
  }
  if (!batch.empty()) release_locked_out(batch);
  MutexLock lk(mu_);
  return report_due_locked(now);
}

TimePoint Finalizer::report_due_locked(TimePoint now) {
  // Leak reports: never block on a stuck device, only note it.
  std::vector<Device*> due;
  for (Device* d; (d = earliest_locked()) && DeviceAccess::next_report(*d) <= now;) {
    // A device is counted as leaked once: at its first report, which moves it to again_.
    if (DeviceAccess::fin_list(*d) == kFirst)
      impl_.stats.devices_leaked.fetch_add(1, std::memory_order_relaxed);
    unlink_locked(*d);
    DeviceAccess::next_report(*d) = now + impl_.engine.config().leak_report_interval;
    link_locked(kAgain, *d);
    due.push_back(d);
  }
  for (Device* d : due) report(*d, now);
  Device* first = earliest_locked();
  return first ? DeviceAccess::next_report(*first) : TimePoint::max();
}

void Finalizer::run() {
  rcu::register_thread();
  MutexLock lk(mu_);
  for (;;) {
    if (!ready_.empty()) {
      std::vector<Device*> batch;
      batch.swap(ready_);
      lk.unlock();
      release_locked_out(batch);
      lk.lock();
      continue;
    }
    TimePoint now = impl_.engine.time().now();
    TimePoint next = report_due_locked(now);
    if (stop_) return;
    kick_ = false;
    sleep_until_ = next;
    if (next == TimePoint::max()) {
      while (!stop_ && !kick_ && ready_.empty()) lk.wait(cv_);
    } else {
      // The time source may be fake; wait in real time for the same span.
      auto until = std::chrono::steady_clock::now() + (next - now);
      while (!stop_ && !kick_ && ready_.empty())
        if (lk.wait_until(cv_, until) == std::cv_status::timeout) break;
    }
    sleep_until_ = TimePoint::min();
  }
}

bool Finalizer::drain(Duration timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  if (!threaded_) return drain_polling(until);
  MutexLock lk(mu_);
  while (waiting_ != 0 || !ready_.empty())
    if (lk.wait_until(idle_cv_, until) == std::cv_status::timeout)
      return waiting_ == 0 && ready_.empty();
  return true;
}

bool Finalizer::drain_polling(std::chrono::steady_clock::time_point until) {
  for (;;) {
    (void)poll(impl_.engine.time().now());
    MutexLock lk(mu_);
    // The last references may drop in other threads (RCU callbacks): ready() wakes cv_.
    while (ready_.empty()) {
      if (waiting_ == 0) return true;
      if (lk.wait_until(cv_, until) == std::cv_status::timeout)
        return waiting_ == 0 && ready_.empty();
    }
  }
}

std::size_t Finalizer::pending() const {
  MutexLock lk(mu_);
  return waiting_;
}

std::vector<LeakReport> Finalizer::waiting() const {
  std::vector<LeakReport> out;
  TimePoint now = impl_.engine.time().now();
  MutexLock lk(mu_);
  for (const List* l : {&first_, &again_}) {
    for (Device* d = l->head; d; d = DeviceAccess::fin_next(*d)) {
      LeakReport r;
      r.name = d->name();
      r.ifindex = d->ifindex();
      r.device_id = d->id();
      r.usage_count = DeviceAccess::exact(*d);
      r.holders = DeviceAccess::holders(*d);
      r.waited = now - DeviceAccess::unregistered_at(*d);
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace ifcore
