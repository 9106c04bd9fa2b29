// References: a held Ref delays only its own device, the last put frees it with no sleep,
// leaks are reported with their holder, sharded counts stay exact across threads.
#include <atomic>
#include <condition_variable>
#include <thread>

#include "support/engine_fixture.h"

namespace ifcore {
namespace {

// Takes a Ref on every device it hears registered whose name starts with `prefix`.
struct Holder : Subscriber {
  std::string prefix;
  std::vector<Ref> refs;
  explicit Holder(std::string p) : prefix(std::move(p)) {}
  Result<void> on_event(Control&, const EventInfo& ev) override {
    if (ev.event == NetdevEvent::Register && ev.dev.name().rfind(prefix, 0) == 0)
      refs.emplace_back(ev.dev, "test-holder");
    return ok();
  }
};

class Refs : public test::CoreTest {
 protected:
  void configure(EngineConfig& cfg) override {
    cfg.track_refs = true;
    cfg.time = clock;
    cfg.leak_report_after = std::chrono::seconds(10);
    cfg.leak_report_interval = std::chrono::seconds(10);
    cfg.background_threads = false;  // the test steps the finalizer (Engine::poll)
  }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
  // Members outlive the engine (destroyed in TearDown), which still notifies them.
  Holder holder{"held"};
};

TEST_F(Refs, HeldRefDelaysOnlyItsDeviceAndItsDropFreesIt) {
  std::vector<std::uint64_t> ids;
  {
    auto ctl = engine->control();
    ctl.subscribe(holder, {"holder", 0, false});
    std::vector<Device*> devs = {dummy(ctl, "held0"), dummy(ctl, "free0"), dummy(ctl, "free1")};
    ASSERT_EQ(holder.refs.size(), 1u);
    ASSERT_TRUE(ctl.delete_links(devs));
  }
  // The two free devices are released; the held one waits, and nobody slept.
  EXPECT_EQ(engine->poll(clock->now()), clock->now() + std::chrono::seconds(10));
  EXPECT_EQ(engine->stats().devices_released, 2u);
  EXPECT_EQ(engine->pending_finalization(), 1u);
  auto waiting = engine->waiting_devices();
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(waiting[0].name, "held0");
  EXPECT_EQ(waiting[0].usage_count, 1);
  EXPECT_EQ(waiting[0].holders, std::vector<std::string>{"test-holder"});
  Device* held = holder.refs[0].get();
  EXPECT_EQ(held->state(), RegState::Unregistered);
  holder.refs.clear();  // the last put
  EXPECT_TRUE(engine->drain(std::chrono::seconds(5)));
  EXPECT_EQ(engine->stats().devices_released, 3u);
  EXPECT_EQ(engine->stats().ref_wait_time, Duration::zero());
}

TEST_F(Refs, LeakedRefIsReportedWithItsHolderAndOthersAreFreed) {
  holder.prefix = "leak";
  {
    auto ctl = engine->control();
    ctl.subscribe(holder, {"holder", 0, false});
    std::vector<Device*> devs = {dummy(ctl, "leak0"), dummy(ctl, "ok0"), dummy(ctl, "ok1")};
    ASSERT_TRUE(ctl.delete_links(devs));
  }
  clock->advance(std::chrono::seconds(11));
  engine->check_leaks();
  EXPECT_TRUE(
      log.contains("waiting for leak0 to become free, usage count 1, holders: test-holder"));
  EXPECT_EQ(engine->stats().devices_released, 2u);
  EXPECT_EQ(engine->stats().devices_leaked, 1u);
  // Reported again after the interval, not before.
  auto reports = engine->stats().leak_reports;
  clock->advance(std::chrono::seconds(5));
  engine->check_leaks();
  EXPECT_EQ(engine->stats().leak_reports, reports);
  clock->advance(std::chrono::seconds(6));
  EXPECT_EQ(engine->poll(clock->now()), clock->now() + std::chrono::seconds(10));
  EXPECT_EQ(engine->stats().leak_reports, reports + 1);
  holder.refs.clear();
  EXPECT_TRUE(engine->drain(std::chrono::seconds(5)));
}

TEST_F(Refs, CountsStayExactAcrossThreads) {
  Device* d;
  {
    auto ctl = engine->control();
    d = dummy(ctl, "t0");
  }
  const std::int64_t base = d->refcount();
  std::vector<std::thread> threads;
  std::vector<std::vector<Ref>> held(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) {
        Ref r(*d, "churn");
        if (i % 100 == 0) held[t].push_back(std::move(r));
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(d->refcount(), base + 4 * 200);
  // Refs taken on one thread and dropped on another still balance.
  std::thread dropper([&] {
    for (auto& v : held) v.clear();
  });
  dropper.join();
  EXPECT_EQ(d->refcount(), base);
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.delete_link(*d));
  }
  EXPECT_TRUE(engine->drain(std::chrono::seconds(5)));
}

TEST_F(Refs, RefsTakenWhileDyingAreCountedExactly) {
  holder.prefix = "dy";
  {
    auto ctl = engine->control();
    ctl.subscribe(holder, {"holder", 0, false});
    Device* d = dummy(ctl, "dy0");
    ASSERT_TRUE(ctl.delete_link(*d));
    EXPECT_EQ(d->refcount(), 1);
    Ref extra(*d, "late");  // a Ref on an unregistered device is allowed
    EXPECT_EQ(d->refcount(), 2);
  }
  EXPECT_EQ(engine->pending_finalization(), 1u);
  holder.refs.clear();
  EXPECT_TRUE(engine->drain(std::chrono::seconds(5)));
}

// The batch drops the registry's reference of each device while another thread lets go of
// its own: whichever drop is the last, every device is freed once, and none is left
// waiting or freed twice.
TEST_F(Refs, AHolderLettingGoDuringTheBatchLosesNoDevice) {
  constexpr int kEach = 300;
  std::vector<Device*> devs;
  {
    auto ctl = engine->control();
    ctl.subscribe(holder, {"holder", 0, false});
    for (int i = 0; i < kEach; ++i) {
      devs.push_back(dummy(ctl, "held" + std::to_string(i)));
      devs.push_back(dummy(ctl, "free" + std::to_string(i)));
    }
  }
  ASSERT_EQ(holder.refs.size(), static_cast<std::size_t>(kEach));
  std::atomic<bool> go{false};
  std::thread letting_go([&] {
    while (!go.load()) std::this_thread::yield();
    for (Ref& r : holder.refs) r.reset();
  });
  {
    auto ctl = engine->control();
    go.store(true);
    ASSERT_TRUE(ctl.delete_links(devs));
  }
  letting_go.join();
  EXPECT_TRUE(engine->drain(std::chrono::seconds(5)));
  EXPECT_EQ(engine->stats().devices_released, 2u * kEach);
  EXPECT_EQ(engine->pending_finalization(), 0u);
  EXPECT_TRUE(engine->waiting_devices().empty());
}

}  // namespace
}  // namespace ifcore
