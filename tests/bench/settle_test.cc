// tests/bench/settle_test.cc — the quiet-machine wait's /proc/stat reading.
#include "bench/scenarios/settle.h"

#include <gtest/gtest.h>

namespace ifcore::bench {
namespace {

TEST(SettleTest, ParsesTheAggregateCpuLine) {
  auto t =
      parse_proc_stat("cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 50 2 25 400 10 1 1 5 3 0\nintr 1\n");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->idle, 820u);   // idle + iowait
  EXPECT_EQ(t->total, 990u);  // the first eight fields (guest time is inside user)
  auto old = parse_proc_stat("cpu 1 2 3 4 5 6 7 8");  // a kernel without guest fields
  ASSERT_TRUE(old);
  EXPECT_EQ(old->total, 36u);
}

TEST(SettleTest, RejectsWhatIsNotAnAggregateCpuLine) {
  EXPECT_EQ(parse_proc_stat("cpu0 1 2 3 4 5 6 7 8").error().code, EINVAL);
  EXPECT_EQ(parse_proc_stat("").error().code, EINVAL);
  EXPECT_EQ(parse_proc_stat("cpu 1 2 3").error().code, EINVAL);
  EXPECT_EQ(parse_proc_stat("cpu 1 2 x 4 5 6 7 8").error().code, EINVAL);
}

TEST(SettleTest, IdleFractionBetweenSamples) {
  CpuTimes a{800, 1000}, b{890, 1100};
  EXPECT_DOUBLE_EQ(idle_fraction(a, b), 0.9);
  EXPECT_DOUBLE_EQ(idle_fraction(a, a), 1.0);  // no tick passed
  EXPECT_DOUBLE_EQ(idle_fraction(b, a), 1.0);  // a counter that went back counts as quiet
}

TEST(SettleTest, GivesUpAtItsLimitOnABusyMachine) {
  // No machine is ever 101% idle: settle waits for its limit and says so.
  SettleOptions o;
  o.idle = 1.01;
  o.window = std::chrono::milliseconds(5);
  o.limit = std::chrono::milliseconds(30);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(settle(o));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, o.limit);
}

}  // namespace
}  // namespace ifcore::bench
