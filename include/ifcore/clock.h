// ifcore/clock.h — time, injectable so that tests use a fake instead of sleeping.
#pragma once

#include <atomic>
#include <chrono>

namespace ifcore {

using Clock = std::chrono::steady_clock;
using Duration = Clock::duration;
using TimePoint = Clock::time_point;

// A source of time. The engine reads time only through this interface.
class TimeSource {
 public:
  virtual ~TimeSource() = default;
  virtual TimePoint now() const = 0;
};

class SteadyTime final : public TimeSource {
 public:
  TimePoint now() const override { return Clock::now(); }
};

// A clock that moves only when told to. Context: any thread.
class FakeTime final : public TimeSource {
 public:
  TimePoint now() const override { return TimePoint(Duration(ns_.load())); }
  void advance(Duration d) { ns_.fetch_add(d.count()); }
  void set(TimePoint t) { ns_.store(t.time_since_epoch().count()); }

 private:
  std::atomic<Duration::rep> ns_{Duration(std::chrono::hours(1)).count()};
};

}  // namespace ifcore
