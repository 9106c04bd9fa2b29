// The engine's timers (see ifcore/timer.h and core/timers.h).
#include "core/timers.h"

#include <algorithm>
#include <vector>

#include "core/engine_impl.h"

namespace ifcore {

TimerId Timers::add(std::function<void(Control&)> fn) {
  TimerId id = next_id_++;
  timers_.emplace(id, Entry{std::move(fn), std::nullopt});
  return id;
}

void Timers::arm(TimerId id, TimePoint at) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  it->second.at = at;
  reschedule();
}

void Timers::cancel(TimerId id) {
  auto it = timers_.find(id);
  if (it == timers_.end() || !it->second.at) return;
  it->second.at.reset();
  reschedule();
}

void Timers::remove(TimerId id) {
  if (timers_.erase(id)) reschedule();
}

std::optional<TimePoint> Timers::deadline(TimerId id) const {
  auto it = timers_.find(id);
  return it == timers_.end() ? std::nullopt : it->second.at;
}

void Timers::post(TimerId id) {
  MutexLock lk(mu_);
  if (stop_) return;
  posted_.push_back(id);
  if (!thread_.joinable()) thread_ = std::thread([this] { worker(); });
  cv_.notify_all();
}

void Timers::run_due(Control& ctl) {
  const TimePoint now = engine_.time().now();
  std::vector<TimerId> posted;
  {
    MutexLock lk(mu_);
    posted.swap(posted_);
  }
  for (TimerId id : posted)
    if (auto it = timers_.find(id); it != timers_.end() && (!it->second.at || *it->second.at > now))
      it->second.at = now;
  std::vector<std::pair<TimePoint, TimerId>> due;  // run in deadline order
  // A callback may arm another timer for now (an address that expires leaves a route to
  // expire at the same moment): those run too, in a few more rounds at most.
  for (int round = 0; round < 4; ++round) {
    due.clear();
    for (auto& [id, e] : timers_)
      if (e.at && *e.at <= now) due.emplace_back(*e.at, id);
    if (due.empty()) break;
    std::sort(due.begin(), due.end());
    for (auto [at, id] : due) {
      auto it = timers_.find(id);  // an earlier callback may have removed or re-armed it
      if (it == timers_.end() || !it->second.at || *it->second.at > now) continue;
      it->second.at.reset();
      auto fn = it->second.fn;  // a copy: the callback may remove its own timer
      fn(ctl);
    }
  }
  reschedule();
}

void Timers::reschedule() {
  std::optional<TimePoint> next;
  for (auto& [id, e] : timers_)
    if (e.at && (!next || *e.at < *next)) next = e.at;
  MutexLock lk(mu_);
  if (stop_) return;
  wake_at_ = next;
  if (next && !thread_.joinable()) thread_ = std::thread([this] { worker(); });
  cv_.notify_all();
}

void Timers::stop() {
  {
    MutexLock lk(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void Timers::worker() {
  MutexLock lk(mu_);
  while (!stop_) {
    const bool posted = !posted_.empty();
    if (!wake_at_ && !posted) {
      lk.wait(cv_);
      continue;
    }
    TimePoint now = engine_.time().now();
    if (!posted && *wake_at_ > now) {
      // Real time stands in for the TimeSource while waiting: with a FakeTime the tests
      // run the timers themselves, and the worker finds nothing due.
      lk.wait_for(cv_, *wake_at_ - now);
      continue;
    }
    wake_at_.reset();
    lk.unlock();
    {
      auto ctl = engine_.control();
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

TimerId add_timer(Control& ctl, std::function<void(Control&)> fn) {
  PluginGuard guard(ctl);  // the engine's timers
  return ctl.engine().impl().timers.add(std::move(fn));
}

void arm_timer(Control& ctl, TimerId id, TimePoint at) {
  PluginGuard guard(ctl);  // the engine's timers
  ctl.engine().impl().timers.arm(id, at);
}

void post_timer(Engine& engine, TimerId id) {
  engine.impl().timers.post(id);
}

void cancel_timer(Control& ctl, TimerId id) {
  PluginGuard guard(ctl);  // the engine's timers
  ctl.engine().impl().timers.cancel(id);
}

void remove_timer(Control& ctl, TimerId id) {
  PluginGuard guard(ctl);  // the engine's timers
  ctl.engine().impl().timers.remove(id);
}

std::optional<TimePoint> timer_deadline(Control& ctl, TimerId id) {
  PluginGuard guard(ctl);  // the engine's timers
  return ctl.engine().impl().timers.deadline(id);
}

void run_timers(Control& ctl) {
  PluginGuard guard(ctl);  // the engine's timers
  ctl.engine().impl().timers.run_due(ctl);
}

}  // namespace ifcore
