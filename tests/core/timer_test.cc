// The engine's timers: armed, moved, cancelled and removed under the control lock, run
// when the engine's clock reaches them (run_timers with a fake clock, the engine's own
// thread with the real one), and never after the engine is gone.
#include "ifcore/timer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "support/engine_fixture.h"

namespace ifcore::test {
namespace {

using namespace std::chrono_literals;

class TimerTest : public EngineTest {
 protected:
  void configure(EngineConfig& cfg) override { cfg.time = clock; }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
};

TEST_F(TimerTest, RunsOnceWhenItsDeadlineComes) {
  auto ctl = engine->control();
  int runs = 0;
  TimerId t = add_timer(ctl, [&](Control&) { ++runs; });
  run_timers(ctl);
  EXPECT_EQ(runs, 0) << "a timer never armed does not run";
  arm_timer(ctl, t, clock->now() + 5s);
  EXPECT_EQ(timer_deadline(ctl, t), clock->now() + 5s);
  clock->advance(4s);
  run_timers(ctl);
  EXPECT_EQ(runs, 0);
  clock->advance(1s);
  run_timers(ctl);
  EXPECT_EQ(runs, 1);
  EXPECT_FALSE(timer_deadline(ctl, t)) << "a timer that ran is disarmed";
  clock->advance(10s);
  run_timers(ctl);
  EXPECT_EQ(runs, 1);
}

TEST_F(TimerTest, ArmingAgainMovesTheDeadlineAndCancelStopsIt) {
  auto ctl = engine->control();
  int runs = 0;
  TimerId t = add_timer(ctl, [&](Control&) { ++runs; });
  arm_timer(ctl, t, clock->now() + 2s);
  arm_timer(ctl, t, clock->now() + 8s);
  clock->advance(3s);
  run_timers(ctl);
  EXPECT_EQ(runs, 0);
  cancel_timer(ctl, t);
  clock->advance(10s);
  run_timers(ctl);
  EXPECT_EQ(runs, 0);
  arm_timer(ctl, t, clock->now());
  remove_timer(ctl, t);
  run_timers(ctl);
  EXPECT_EQ(runs, 0);
  EXPECT_FALSE(timer_deadline(ctl, t));
}

TEST_F(TimerTest, ACallbackMayArmItsOwnTimerAgainOrRemoveAnother) {
  auto ctl = engine->control();
  int a_runs = 0, b_runs = 0;
  TimerId a = 0, b = 0;
  a = add_timer(ctl, [&](Control& c) {
    ++a_runs;
    arm_timer(c, a, clock->now() + 1s);
    remove_timer(c, b);
  });
  b = add_timer(ctl, [&](Control&) { ++b_runs; });
  arm_timer(ctl, a, clock->now());
  arm_timer(ctl, b, clock->now());
  run_timers(ctl);
  EXPECT_EQ(a_runs, 1);
  EXPECT_EQ(b_runs, 0) << "removed by the first callback before its turn";
  EXPECT_EQ(timer_deadline(ctl, a), clock->now() + 1s);
  clock->advance(1s);
  run_timers(ctl);
  EXPECT_EQ(a_runs, 2);
}

// With the real clock the engine's own thread runs the timer; the engine going stops it.
TEST(TimerThread, RunsDueTimersByItselfAndStopsWithTheEngine) {
  auto runs = std::make_shared<std::atomic<int>>(0);
  auto ran = std::make_shared<std::promise<void>>();
  std::future<void> first = ran->get_future();
  {
    Engine engine{EngineConfig{}};
    {
      auto ctl = engine.control();
      TimerId t = add_timer(ctl, [runs, ran](Control&) {
        runs->fetch_add(1);
        ran->set_value();
      });
      arm_timer(ctl, t, engine.time().now() + 20ms);
      TimerId later = add_timer(ctl, [runs](Control&) { runs->fetch_add(100); });
      arm_timer(ctl, later, engine.time().now() + std::chrono::hours(1));
    }
    // Waits for the timer's own signal (no polling sleep); 10 s only bounds a broken run.
    EXPECT_EQ(first.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(runs->load(), 1);
  }
  EXPECT_EQ(runs->load(), 1) << "the hour-long timer never ran: it stopped with the engine";
}

}  // namespace
}  // namespace ifcore::test
