// The engine's timers (see ifcore/timer.h). Not a public header.
//
// Lock order: control lock -> Timers::mu_ (a leaf: guards only the worker's deadline, its
// stop flag and the timers posted from other threads). The timers themselves are guarded by
// the control lock. The worker thread never holds mu_ while taking the control lock.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "ifcore/mutex.h"
#include "ifcore/timer.h"

namespace ifcore {

class Timers {
 public:
  explicit Timers(Engine& engine) : engine_(engine) {}
  Timers(const Timers&) = delete;
  Timers& operator=(const Timers&) = delete;
  ~Timers() { stop(); }

  // Context: control lock (all four).
  TimerId add(std::function<void(Control&)> fn);
  void arm(TimerId id, TimePoint at);
  void cancel(TimerId id);
  void remove(TimerId id);
  std::optional<TimePoint> deadline(TimerId id) const;
  void run_due(Control& ctl);
  // Arms timer `id` for now from any thread (the control lock held or not): the worker
  // runs it as soon as it gets the control lock. Unknown or removed ids are ignored then.
  void post(TimerId id);

  // Stops the worker and waits for it: no timer runs after. Context: not under the
  // control lock (the worker may be waiting for it).
  void stop();

 private:
  struct Entry {
    std::function<void(Control&)> fn;
    std::optional<TimePoint> at;
  };
  // Tells the worker the earliest deadline (starting it if needed). Context: control lock.
  void reschedule();
  void worker();

  Engine& engine_;
  std::map<TimerId, Entry> timers_;  // control lock
  TimerId next_id_ = 1;              // control lock

  Mutex mu_;  // LOCK ORDERING: a leaf, taken inside the control lock or alone
  std::condition_variable cv_;
  std::thread thread_;  // started under mu_; joined once stop_ is set
  std::optional<TimePoint> wake_at_ IFCORE_GUARDED_BY(mu_);
  bool stop_ IFCORE_GUARDED_BY(mu_) = false;
  std::vector<TimerId> posted_ IFCORE_GUARDED_BY(mu_);
};

}  // namespace ifcore
