// The link watch's internals (see ifcore/linkwatch.h for the model and the policies).
//
// Lock order: control lock -> LinkWatch::mu_ (a leaf: guards only the worker's deadline).
// Everything else is guarded by the control lock. The worker thread never holds mu_ while
// taking the control lock.
#pragma once

#include <condition_variable>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/engine_impl.h"
#include "ifcore/linkwatch.h"
#include "ifcore/mutex.h"

namespace ifcore {

class LinkWatch final : public Subscriber {
 public:
  explicit LinkWatch(Engine::Impl& impl);
  ~LinkWatch() override;  // stops the worker; unsubscribes

  // The carrier of `dev` changed (Control::set_carrier). Context: control lock.
  void fire(Control& ctl, Device& dev);
  // The kind's open of `dev` failed after PreUp: it is no longer opening, and the events
  // held for the end of its open are delivered. Context: control lock.
  void open_failed(Control& ctl, Device& dev);
  // Handles the events due now. Context: control lock.
  void run_due(Control& ctl) { run_due(ctl, impl_.engine.time().now()); }
  // Handles the events due at `now`; returns the next deadline (max: none). The worker
  // thread, when there is one (EngineConfig::background_threads), runs the same steps.
  // Context: control lock.
  TimePoint poll(Control& ctl, TimePoint now);

  std::size_t pending() const { return pending_.size(); }
  bool pending(const Device& dev) const { return pending_.count(dev.id()) != 0; }
  LinkWatchStats stats() const { return stats_; }
  LinkWatchTuning tuning() const { return tuning_; }
  void set_tuning(const LinkWatchTuning& t) { tuning_ = t; }

  // Up/GoingDown/Down/Unregister of every device. Context: control lock.
  Result<void> on_event(Control& ctl, const EventInfo& ev) override;

 private:
  // How an event waits: Linux's one-second window, or the device's token bucket.
  enum class Wait : std::uint8_t { Window, Budget };
  struct Entry {
    Ref ref;
    Wait wait = Wait::Window;
    TimePoint due{};  // Budget: when a token is back
  };
  struct Bucket {
    double tokens = 0;
    TimePoint at{};
  };

  bool adaptive_urgent(const Device& dev) const;
  bool kernel_urgent(const Device& dev) const;
  bool in_transition(const Device& dev) const;
  // Sets or clears one of the transit marks (kOpening, kClosing). Context: control lock.
  void mark(Device& dev, std::uint8_t bit, bool on);
  // Queues an event of `dev` in pending_ (and marks the device kQueued).
  void enqueue(Device& dev, Wait wait, TimePoint at);
  // Takes a token from `dev`'s bucket if one is there (making the bucket, and marking the
  // device kQueued). Sets `*back` to when one will be.
  bool take_token(Device& dev, TimePoint now, TimePoint* back);
  // Linux: linkwatch_do_dev. Removes the entry first; then delivers the events the
  // delivery fired (held while delivering_).
  void deliver(Control& ctl, Device& dev);
  void deliver_one(Control& ctl, Device& dev);
  // deliver() for an adaptive (budget) event whose turn has come: it spends a token, which
  // only paces the device's next events.
  void deliver_budgeted(Control& ctl, Device& dev, TimePoint now);
  void schedule(TimePoint at);
  void reschedule(TimePoint now);
  // Delivers the held events once no device is opening or closing and no event is being
  // delivered. Context: control lock.
  void release_held(Control& ctl, TimePoint now);
  void worker();
  void run_due(Control& ctl, TimePoint now);
  // Starts the worker if the engine has background threads and none runs. Context: mu_.
  void start_worker_locked() IFCORE_REQUIRES(mu_);

  Engine::Impl& impl_;
  SubscriptionId sub_ = 0;
  LinkWatchTuning tuning_;
  LinkWatchStats stats_;
  std::unordered_map<std::uint64_t, Entry> pending_;   // by device id
  std::unordered_map<std::uint64_t, Bucket> buckets_;  // adaptive, by device id
  // Devices between PreUp and Up, or GoingDown and Down: a mark in the device
  // (DeviceAccess::lw_transit), and how many are opening. kQueued, never cleared: the
  // device may have an entry in pending_ or buckets_; the Unregister of a device without
  // it or kOpening touches the device alone, and runs without the plug-in lock.
  static constexpr std::uint8_t kOpening = 1, kClosing = 2, kQueued = 4;
  std::size_t opening_ = 0, closing_ = 0;
  // Adaptive events of other devices fired while one opens or closes (a veth end turning
  // its peer's carrier on or off): delivered in firing order after the device's own
  // announcement, at its Up or Down.
  std::vector<std::uint64_t> held_;
  bool delivering_ = false;    // an event is being delivered: those it fires are held
  TimePoint next_full_run_{};  // Linux: linkwatch_nextevent

  Mutex mu_;  // LOCK ORDERING: a leaf, taken inside the control lock or alone
  std::condition_variable cv_;
  bool stop_ IFCORE_GUARDED_BY(mu_) = false;
  bool has_deadline_ IFCORE_GUARDED_BY(mu_) = false;
  TimePoint deadline_ IFCORE_GUARDED_BY(mu_){};
  // Started under mu_ at the first deferred event; joined once stop_ is set.
  std::thread thread_;
};

}  // namespace ifcore
