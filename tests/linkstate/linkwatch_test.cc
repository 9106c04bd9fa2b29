// The link watch's policies: adaptive delivers a veth's carrier at once, kernel waits for
// the one-second window (seed 003, with an injected clock), flapping is bounded.
#include <chrono>
#include <tuple>

#include "linkstate_fixture.h"

namespace ifcore::test {
namespace {

using namespace std::chrono_literals;

class LinkWatchTest : public LinkStateTest {
 protected:
  void configure(EngineConfig& cfg) override {
    cfg.time = clock;
    cfg.policies.linkwatch = policy;
  }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
  LinkWatchPolicy policy = LinkWatchPolicy::Adaptive;
};

class KernelLinkWatchTest : public LinkWatchTest {
 protected:
  KernelLinkWatchTest() { policy = LinkWatchPolicy::Kernel; }
};

TEST_F(LinkWatchTest, AdaptiveVethEndsReportCarrierAsSoonAsTheSecondEndIsUp) {
  auto ctl = engine->control();
  auto [a, b] = veth_ab(ctl);
  ASSERT_TRUE(ctl.open(*a));
  auto t0 = Clock::now();
  ASSERT_TRUE(ctl.open(*b));
  auto took = Clock::now() - t0;
  // No timer, no run of the queue: both ends are UP with an active transmit path.
  EXPECT_EQ(a->reported_operstate(), IF_OPER_UP);
  EXPECT_EQ(b->reported_operstate(), IF_OPER_UP);
  EXPECT_TRUE(a->tx_active());
  EXPECT_TRUE(b->tx_active());
  EXPECT_EQ(link_watch_pending(ctl), 0u);
  RecordProperty(
      "carrier_latency_us",
      std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(took).count()));
}

// Linux: veth_open turns the carrier on for the end being opened, then for its peer, and
// the link watch runs those events after the open, in that order. So the end opened second
// reports its Change (and gets its IPv6 routes) before the end that was already up.
TEST_F(LinkWatchTest, TheEndOpenedSecondReportsCarrierFirstThenItsPeer) {
  ChangeRecorder rec;
  auto ctl = engine->control();
  SubscriptionId id = ctl.subscribe(rec, SubscribeOptions{"recorder", 0, false});
  auto [a, b] = veth_ab(ctl);
  ASSERT_TRUE(ctl.open(*a));
  rec.seen.clear();
  ASSERT_TRUE(ctl.open(*b));
  ASSERT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(rec.seen[0].dev, "b");
  EXPECT_EQ(rec.seen[1].dev, "a");
  EXPECT_EQ(rec.seen[0].operstate, IF_OPER_UP);
  EXPECT_EQ(rec.seen[1].operstate, IF_OPER_UP);
  EXPECT_EQ(link_watch_pending(ctl), 0u);
  ctl.unsubscribe(id);
}

TEST_F(KernelLinkWatchTest, VethCarrierWaitsForTheOneSecondWindow) {
  auto ctl = engine->control();
  auto [a, b] = veth_ab(ctl);
  // Creation turned both carriers off: not urgent; this run is a full one (as the first
  // work in a quiet second is) and opens the window.
  EXPECT_EQ(link_watch_pending(ctl), 2u);
  run_link_watch(ctl);
  EXPECT_EQ(link_watch_pending(ctl), 0u);
  ASSERT_TRUE(ctl.open(*a));
  ASSERT_TRUE(ctl.open(*b));
  run_link_watch(ctl);  // what the worker would do at once: only urgent events run
  // The carrier bit is on at once (LOWER_UP), the operstate waits: seed 003.
  EXPECT_TRUE(a->carrier());
  EXPECT_TRUE(b->carrier());
  EXPECT_EQ(a->reported_operstate(), IF_OPER_LOWERLAYERDOWN);
  EXPECT_EQ(b->reported_operstate(), IF_OPER_LOWERLAYERDOWN);
  EXPECT_FALSE(a->reported_flags() & IFF_RUNNING);
  EXPECT_TRUE(link_watch_pending(ctl, *a));
  // `a` was up before its carrier came: its transmit path waits for the link watch;
  // `b` got carrier in its own open, which activates it (Linux: dev_activate).
  EXPECT_FALSE(a->tx_active());
  EXPECT_TRUE(b->tx_active());
  EXPECT_FALSE(transmit(*a, frame(b->address(), a->address())));
  EXPECT_EQ(tx_dropped(a), 1u);

  clock->advance(999ms);
  run_link_watch(ctl);
  EXPECT_EQ(a->reported_operstate(), IF_OPER_LOWERLAYERDOWN);
  clock->advance(1ms);
  run_link_watch(ctl);
  EXPECT_EQ(a->reported_operstate(), IF_OPER_UP);
  EXPECT_EQ(b->reported_operstate(), IF_OPER_UP);
  EXPECT_TRUE(a->tx_active());
  EXPECT_TRUE(transmit(*a, frame(b->address(), a->address())));
  EXPECT_EQ(rx(b), 1u);
}

// Without background threads nothing runs the queue but Engine::poll, which does what is
// due and says when to be called next: at the window's end.
class SteppedLinkWatchTest : public KernelLinkWatchTest {
 protected:
  void configure(EngineConfig& cfg) override {
    KernelLinkWatchTest::configure(cfg);
    cfg.background_threads = false;
  }
};

TEST_F(SteppedLinkWatchTest, PollDeliversWhatIsDueAndNamesTheNextDeadline) {
  Device* a = nullptr;
  Device* b = nullptr;
  {
    auto ctl = engine->control();
    std::tie(a, b) = veth_ab(ctl);
  }
  // The creation events run in a full run, which opens the window; nothing is left.
  EXPECT_EQ(engine->poll(clock->now()), TimePoint::max());
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.open(*a));
    ASSERT_TRUE(ctl.open(*b));
  }
  TimePoint next = engine->poll(clock->now());
  EXPECT_EQ(next, clock->now() + 1s);
  EXPECT_EQ(a->reported_operstate(), IF_OPER_LOWERLAYERDOWN);
  clock->advance(999ms);
  EXPECT_EQ(engine->poll(clock->now()), next);  // not yet
  EXPECT_EQ(a->reported_operstate(), IF_OPER_LOWERLAYERDOWN);
  clock->advance(1ms);
  EXPECT_EQ(engine->poll(clock->now()), TimePoint::max());
  EXPECT_EQ(a->reported_operstate(), IF_OPER_UP);
  EXPECT_EQ(b->reported_operstate(), IF_OPER_UP);
}

TEST_F(KernelLinkWatchTest, AfterAQuietSecondTheFirstEventRunsAtOnce) {
  auto ctl = engine->control();
  auto [a, b] = veth_ab(ctl);
  run_link_watch(ctl);
  clock->advance(2s);  // the script waited: the window is closed
  ASSERT_TRUE(ctl.open(*a));
  ASSERT_TRUE(ctl.open(*b));
  run_link_watch(ctl);
  EXPECT_EQ(a->reported_operstate(), IF_OPER_UP);
  EXPECT_EQ(b->reported_operstate(), IF_OPER_UP);
}

TEST_F(KernelLinkWatchTest, StackedDevicesAreUrgent) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* v = must(ctl.create_link(def(ctl), vlan("d0.5", d->ifindex(), 5)));
  ASSERT_TRUE(ctl.open(*d));
  ctl.set_carrier(*d, false);  // dummy: not urgent under the kernel policy
  EXPECT_TRUE(v->carrier());   // the vlan follows at the lower's Change: not yet
  clock->advance(1s);
  run_link_watch(ctl);  // the lower's event; the vlan's (stacked) follows at once
  EXPECT_EQ(d->reported_operstate(), IF_OPER_DOWN);
  EXPECT_EQ(v->reported_operstate(), IF_OPER_LOWERLAYERDOWN);
  EXPECT_EQ(link_watch_pending(ctl), 0u);
}

TEST_F(LinkWatchTest, AMillionFlapsGiveBoundedEventsAndTheLastStateArrives) {
  ChangeRecorder rec;
  auto ctl = engine->control();
  SubscriptionId id = ctl.subscribe(rec, SubscribeOptions{"recorder", 0, false});
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.open(*d));
  LinkWatchTuning t = link_watch_tuning(ctl);
  constexpr int kFlaps = 1'000'000;
  for (int i = 0; i < kFlaps; ++i) ctl.set_carrier(*d, i % 2 == 1);
  ctl.set_carrier(*d, false);  // the last state
  // The burst went out at once; the rest is one pending event.
  EXPECT_LE(rec.count("d0"), t.burst);
  EXPECT_EQ(link_watch_pending(ctl), 1u);
  EXPECT_EQ(d->carrier_down_count(), kFlaps / 2u + 1);  // exact: counted at once
  EXPECT_EQ(d->carrier_up_count(), kFlaps / 2u);
  clock->advance(1s);
  run_link_watch(ctl);
  EXPECT_EQ(link_watch_pending(ctl), 0u);
  EXPECT_LE(rec.count("d0"), t.burst + 1u);
  ASSERT_TRUE(rec.last("d0"));
  EXPECT_FALSE(rec.last("d0")->carrier);
  EXPECT_EQ(rec.last("d0")->operstate, IF_OPER_DOWN);
  EXPECT_EQ(d->reported_operstate(), IF_OPER_DOWN);
  EXPECT_FALSE(d->tx_active());
  LinkWatchStats s = link_watch_stats(ctl);
  EXPECT_EQ(s.fired, std::uint64_t(kFlaps) + 1);
  EXPECT_GE(s.coalesced, std::uint64_t(kFlaps) - t.burst - 1);
  ctl.unsubscribe(id);
}

TEST_F(LinkWatchTest, TheBudgetRefills) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.open(*d));
  LinkWatchTuning t = link_watch_tuning(ctl);
  for (std::uint32_t i = 0; i < 2 * t.burst; ++i) ctl.set_carrier(*d, i % 2 == 1);
  EXPECT_EQ(link_watch_pending(ctl), 1u);
  clock->advance(1s);  // refilled: the pending one runs, and the next goes out at once
  run_link_watch(ctl);
  ctl.set_carrier(*d, false);
  EXPECT_EQ(link_watch_pending(ctl), 0u);
  EXPECT_EQ(d->reported_operstate(), IF_OPER_DOWN);
}

}  // namespace
}  // namespace ifcore::test
