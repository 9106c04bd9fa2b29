// The finalizer: frees a device the moment its last reference drops, reports devices that
// wait too long, and never lets one stuck device delay another.
//
// Lock order: control lock -> Finalizer::mu_ -> leaves. The thread releases devices
// without holding mu_, and never takes the control lock.
#include <algorithm>

#include "base/rcu.h"
#include "core/engine_impl.h"

namespace ifcore {

Finalizer::Finalizer(Engine::Impl& impl) : impl_(impl) {}

Finalizer::~Finalizer() {
  stop();
}

void Finalizer::start() {
  thread_ = std::thread([this] { run(); });
}

void Finalizer::stop() {
  {
    std::lock_guard lk(mu_);
    if (!thread_.joinable()) return;
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Finalizer::adopt(std::span<Device* const> devs, bool caller_waits) {
  TimePoint now = impl_.engine.time().now();
  TimePoint due = now + impl_.engine.config().leak_report_after;
  std::lock_guard lk(mu_);
  waiting_.reserve(waiting_.size() + devs.size());
  for (Device* d : devs) {
    DeviceAccess::unregistered_at(*d) = now;
    DeviceAccess::next_report(*d) = due;
    auto at = deadlines_.emplace_hint(deadlines_.end(), due, d);
    waiting_.emplace(d, Waiting{caller_waits, at});
  }
}

void Finalizer::settle() {
  {
    std::lock_guard lk(mu_);
    if (deadlines_.empty() || deadlines_.begin()->first >= sleep_until_) return;
    kick_ = true;
  }
  cv_.notify_all();
}

void Finalizer::ready(Device& d) {
  bool wake;
  {
    std::lock_guard lk(mu_);
    auto it = waiting_.find(&d);
    if (it != waiting_.end() && it->second.caller_waits) {  // a legacy caller polls for it
      return;
    }
    wake = ready_.empty();  // the thread takes the whole list at once: one wake-up is enough
    ready_.push_back(&d);
  }
  if (wake) cv_.notify_all();
}

void Finalizer::release_now(Device& d) {
  std::vector<Device*> one{&d};
  release_locked_out(one);
}

void Finalizer::release_locked_out(std::vector<Device*>& devs) {
  auto t0 = Clock::now();
  for (Device* d : devs) {
    DeviceAccess::set_state(*d, RegState::Released);
    d->kind().destruct(*d);
  }
  {
    std::lock_guard lk(mu_);
    for (Device* d : devs) {
      auto it = waiting_.find(d);
      if (it == waiting_.end()) continue;
      deadlines_.erase(it->second.deadline);
      waiting_.erase(it);
    }
  }
  // Freed after readers that may still see them: one callback for the whole list.
  struct Released {
    std::vector<Device*> devs;
    ~Released() {
      for (Device* d : devs) delete d;
    }
  };
  rcu::retire(new Released{devs});
  impl_.stats.devices_released.fetch_add(devs.size(), std::memory_order_relaxed);
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
  std::lock_guard lk(mu_);
  kick_ = true;
  cv_.notify_all();
}

void Finalizer::run() {
  rcu::register_thread();
  std::unique_lock lk(mu_);
  for (;;) {
    if (!ready_.empty()) {
      std::vector<Device*> batch;
      batch.swap(ready_);
      lk.unlock();
      release_locked_out(batch);
      lk.lock();
      continue;
    }
    // Leak reports: never block on a stuck device, only note it.
    TimePoint now = impl_.engine.time().now();
    std::vector<Device*> due;
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      Device* d = deadlines_.begin()->second;
      TimePoint& at = DeviceAccess::next_report(*d);
      if (at == DeviceAccess::unregistered_at(*d) + impl_.engine.config().leak_report_after)
        impl_.stats.devices_leaked.fetch_add(1, std::memory_order_relaxed);
      at = now + impl_.engine.config().leak_report_interval;
      deadlines_.erase(deadlines_.begin());
      waiting_.at(d).deadline = deadlines_.emplace(at, d);
      due.push_back(d);
    }
    TimePoint next = deadlines_.empty() ? TimePoint::max() : deadlines_.begin()->first;
    for (Device* d : due) report(*d, now);
    if (stop_) return;
    kick_ = false;
    auto pred = [&] { return stop_ || kick_ || !ready_.empty(); };
    sleep_until_ = next;
    if (next == TimePoint::max()) {
      cv_.wait(lk, pred);
    } else {
      // The time source may be fake; wait in real time for the same span.
      cv_.wait_for(lk, next - now, pred);
    }
    sleep_until_ = TimePoint::min();
  }
}

bool Finalizer::drain(Duration timeout) {
  std::unique_lock lk(mu_);
  return idle_cv_.wait_for(lk, timeout, [&] { return waiting_.empty() && ready_.empty(); });
}

std::size_t Finalizer::pending() const {
  std::lock_guard lk(mu_);
  return waiting_.size();
}

std::vector<LeakReport> Finalizer::waiting() const {
  std::vector<LeakReport> out;
  TimePoint now = impl_.engine.time().now();
  std::lock_guard lk(mu_);
  for (auto& [d, w] : waiting_) {
    LeakReport r;
    r.name = d->name();
    r.ifindex = d->ifindex();
    r.device_id = d->id();
    r.usage_count = DeviceAccess::exact(*d);
    r.holders = DeviceAccess::holders(*d);
    r.waited = now - DeviceAccess::unregistered_at(*d);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace ifcore
