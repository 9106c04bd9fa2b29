// Tests for base/ticks.h: the tick clock moves forward, and its conversion to nanoseconds
// agrees with steady_clock over the same interval.
#include "base/ticks.h"

#include <gtest/gtest.h>

#include <thread>

namespace ifcore {
namespace {

TEST(Ticks, NeverGoBack) {
  std::uint64_t prev = ticks::now();
  for (int i = 0; i < 100000; ++i) {
    std::uint64_t t = ticks::now();
    ASSERT_GE(t, prev);
    prev = t;
  }
}

TEST(Ticks, NoTicksAreNoTime) {
  EXPECT_EQ(ticks::to_ns(0), 0);
}

TEST(Ticks, ConvertToTheNanosecondsSteadyClockMeasures) {
  // The same 20 ms measured with both clocks. The tolerance is wide (a busy machine may
  // run another thread between the two readings at either end); a wrong unit (ticks taken
  // for nanoseconds, at a rate of gigahertz) is off by a factor of two or more.
  using Steady = std::chrono::steady_clock;
  std::uint64_t t0 = ticks::now();
  auto s0 = Steady::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::uint64_t t1 = ticks::now();
  auto s1 = Steady::now();
  double steady_ns = std::chrono::duration<double, std::nano>(s1 - s0).count();
  double tick_ns = static_cast<double>(ticks::to_ns(t1 - t0));
  EXPECT_NEAR(tick_ns / steady_ns, 1.0, 0.25)
      << tick_ns << " ns by ticks, " << steady_ns << " ns by steady_clock";
}

}  // namespace
}  // namespace ifcore
