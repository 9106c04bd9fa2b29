// The finalizer's leak deadlines: each device is first reported leak_report_after its
// own adoption, then every leak_report_interval, whatever the order of batches and of
// releases; devices_leaked counts each device once.
#include <algorithm>

#include "support/engine_fixture.h"

namespace ifcore {
namespace {

using std::chrono::seconds;

// Takes a Ref on every device it hears registered whose name starts with "held".
struct Holder : Subscriber {
  std::vector<Ref> refs;
  Result<void> on_event(Control&, const EventInfo& ev) override {
    if (ev.event == NetdevEvent::Register && ev.dev.name().rfind("held", 0) == 0)
      refs.emplace_back(ev.dev, "test-holder");
    return ok();
  }
  // Drops the Ref on `name` (the last reference of an unregistered device).
  void release(std::string_view name) {
    auto it = std::find_if(refs.begin(), refs.end(), [&](Ref& r) { return r->name() == name; });
    ASSERT_NE(it, refs.end()) << name;
    refs.erase(it);
  }
};

class LeakDeadlines : public test::CoreTest {
 protected:
  void configure(EngineConfig& cfg) override {
    cfg.time = clock;
    cfg.leak_report_after = seconds(10);
    cfg.leak_report_interval = seconds(4);
    cfg.background_threads = false;  // the test steps the finalizer (Engine::poll)
  }
  void SetUp() override {
    CoreTest::SetUp();
    auto ctl = engine->control();
    ctl.subscribe(holder, {"holder", 0, false});
  }
  void remove(std::vector<std::string> names) {
    auto ctl = engine->control();
    std::vector<Device*> devs;
    for (auto& n : names) devs.push_back(dummy(ctl, n));
    ASSERT_TRUE(ctl.delete_links(devs));
  }
  std::size_t reports_of(std::string_view name) {
    std::string needle = "waiting for " + std::string(name) + " to become free";
    std::size_t n = 0;
    for (auto& l : log.snapshot()) n += l.find(needle) != std::string::npos;
    return n;
  }
  // Moves the fake clock and steps the finalizer: it has made `reports` reports in all.
  void advance_and_check(Duration d, std::uint64_t reports) {
    clock->advance(d);
    (void)engine->poll(clock->now());
    EXPECT_EQ(engine->stats().leak_reports, reports);
  }
  // Steps the finalizer: `n` devices are released in all.
  void wait_released(std::uint64_t n) {
    (void)engine->poll(clock->now());
    EXPECT_EQ(engine->stats().devices_released, n);
  }
  std::vector<std::string> waiting_names() {
    std::vector<std::string> out;
    for (auto& r : engine->waiting_devices()) out.push_back(r.name);
    std::sort(out.begin(), out.end());
    return out;
  }
  void TearDown() override {
    holder.refs.clear();
    EXPECT_TRUE(engine->drain(seconds(5)));
    CoreTest::TearDown();
  }

  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
  Holder holder;
};

TEST_F(LeakDeadlines, EachBatchIsFirstReportedAfterItsOwnAdoption) {
  remove({"helda0", "helda1", "free0"});  // t = 0: due at 10
  clock->advance(seconds(3));
  remove({"heldb0"});  // t = 3: due at 13
  wait_released(1);
  EXPECT_EQ(engine->pending_finalization(), 3u);

  advance_and_check(seconds(8), 2);  // t = 11: the first batch only
  EXPECT_EQ(reports_of("helda0"), 1u);
  EXPECT_EQ(reports_of("helda1"), 1u);
  EXPECT_EQ(reports_of("heldb0"), 0u);
  EXPECT_EQ(engine->stats().devices_leaked, 2u);

  advance_and_check(seconds(3), 3);  // t = 14: the second batch; the first is due at 15
  EXPECT_EQ(reports_of("heldb0"), 1u);
  EXPECT_EQ(engine->stats().devices_leaked, 3u);

  advance_and_check(seconds(2), 5);  // t = 16: the first batch again; the second at 18
  EXPECT_EQ(reports_of("helda0"), 2u);
  EXPECT_EQ(reports_of("heldb0"), 1u);
  EXPECT_EQ(engine->stats().devices_leaked, 3u);  // counted once each

  advance_and_check(seconds(2), 6);  // t = 18
  EXPECT_EQ(reports_of("heldb0"), 2u);
  EXPECT_EQ(engine->stats().devices_leaked, 3u);

  auto waiting = engine->waiting_devices();
  ASSERT_EQ(waiting.size(), 3u);
  for (auto& r : waiting)
    EXPECT_EQ(r.waited, r.name == "heldb0" ? seconds(15) : seconds(18)) << r.name;
}

TEST_F(LeakDeadlines, ADeviceReleasedWhileOthersWaitIsNeitherReportedNorListed) {
  remove({"held0", "held1", "held2"});  // due at 10
  clock->advance(seconds(1));
  remove({"held3"});        // due at 11
  holder.release("held1");  // from the middle of the waiting devices
  wait_released(1);
  EXPECT_EQ(engine->pending_finalization(), 3u);
  EXPECT_EQ(waiting_names(), (std::vector<std::string>{"held0", "held2", "held3"}));

  advance_and_check(seconds(10), 3);  // t = 11: all three, the released one not
  EXPECT_EQ(reports_of("held1"), 0u);
  EXPECT_EQ(engine->stats().devices_leaked, 3u);

  // Released once reported, from either end of the reported devices.
  holder.release("held0");
  holder.release("held3");
  wait_released(3);
  EXPECT_EQ(waiting_names(), std::vector<std::string>{"held2"});
  advance_and_check(seconds(4), 4);  // t = 15: only the one still held
  EXPECT_EQ(reports_of("held2"), 2u);
  EXPECT_EQ(reports_of("held0"), 1u);
  EXPECT_EQ(reports_of("held3"), 1u);

  holder.release("held2");
  EXPECT_TRUE(engine->drain(seconds(5)));
  EXPECT_EQ(engine->pending_finalization(), 0u);
  EXPECT_TRUE(engine->waiting_devices().empty());
  advance_and_check(seconds(60), 4);  // nothing left to report
}

TEST_F(LeakDeadlines, ATimeSourceThatGoesBackStillReportsTheEarliestDeadlineFirst) {
  clock->advance(seconds(100));
  remove({"held0"});  // due at 110
  clock->advance(-seconds(100));
  remove({"held1"});  // due at 10, adopted later
  advance_and_check(seconds(11), 1);
  EXPECT_EQ(reports_of("held1"), 1u);
  EXPECT_EQ(reports_of("held0"), 0u);
  advance_and_check(seconds(100), 3);  // t = 111: held0 first, held1 again, once each
  EXPECT_EQ(reports_of("held0"), 1u);
  EXPECT_EQ(reports_of("held1"), 2u);
  EXPECT_EQ(engine->stats().devices_leaked, 2u);
}

}  // namespace
}  // namespace ifcore
