// A vxlan device's dynamic forwarding entries age out as Linux 6.18's vxlan_cleanup ages
// them: while the device is up, every 10 s or at the first entry's timeout, an entry not
// updated for the device's ageing time is deleted and announced (RTM_DELNEIGH, state
// STALE); permanent, static and externally learned entries stay; a down device ages
// nothing (its dynamic entries went as it stopped).
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>

#include <chrono>

#include "ifcore/fdb.h"
#include "ifcore/timer.h"
#include "kinds_fixture.h"

namespace ifcore::test {
namespace {

using namespace std::chrono_literals;

struct Recorder final : fdb::Listener {
  std::vector<std::pair<bool, fdb::Entry>> events;
  void on_fdb(Namespace&, bool added, const fdb::Entry& e) override {
    events.emplace_back(added, e);
  }
};

class VxlanAgeingTest : public KindsTest {
 protected:
  void configure(EngineConfig& cfg) override { cfg.time = clock; }
  Device* vxlan(Control& ctl, std::uint32_t ageing, const char* name = "vx10",
                std::uint32_t vni = 1010) {
    std::array<std::uint8_t, 4> remote{10, 0, 0, 2};
    return must(ctl.create_link(
        def(ctl), with_data("vxlan", name,
                            {Attr::u32(IFLA_VXLAN_ID, vni), Attr::binary(IFLA_VXLAN_GROUP, remote),
                             Attr::be16(IFLA_VXLAN_PORT, 4789), Attr::u8(IFLA_VXLAN_LEARNING, 0),
                             Attr::u32(IFLA_VXLAN_AGEING, ageing)})));
  }
  void add(Control& ctl, Device* vx, std::uint8_t last, std::uint16_t state,
           std::uint8_t flags = NTF_SELF) {
    fdb::Request q;
    q.ifindex = vx->ifindex();
    q.lladdr = HwAddr::ethernet({0x02, 0, 0, 0, 0, last});
    q.flags = flags;
    q.state = state;
    q.nlflags = NLM_F_CREATE | NLM_F_EXCL;
    q.dst = *IpAddr::parse(fmt::format("10.0.0.{}", last));
    ASSERT_TRUE(fdb::add(ctl, def(ctl), q));
  }
  std::vector<std::uint8_t> listed(Control& ctl, Device* vx) {
    auto rows = fdb::dump(ctl, def(ctl), 0, vx->ifindex(), {});
    EXPECT_TRUE(rows);
    std::vector<std::uint8_t> out;
    for (const auto& e : *rows)
      if (!e.lladdr.is_zero()) out.push_back(e.lladdr.bytes()[5]);
    std::sort(out.begin(), out.end());
    return out;
  }
  void pass(Control& ctl, std::chrono::seconds s) {
    clock->advance(s);
    run_timers(ctl);
  }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
};

TEST_F(VxlanAgeingTest, DynamicEntriesGoAtTheFirstRunAfterTheirAgeingTime) {
  auto ctl = engine->control();
  Device* vx = vxlan(ctl, 3);
  ASSERT_TRUE(ctl.open(*vx));
  add(ctl, vx, 0x18, NUD_REACHABLE);                              // dynamic
  add(ctl, vx, 0x19, NUD_NOARP | NUD_REACHABLE);                  // static
  add(ctl, vx, 0x1a, NUD_PERMANENT);                              // permanent
  add(ctl, vx, 0x1b, NUD_REACHABLE, NTF_SELF | NTF_EXT_LEARNED);  // learned elsewhere
  Recorder rec;
  fdb::add_listener(ctl, rec);
  // The first run is 10 s after the open, whatever the ageing time.
  pass(ctl, 9s);
  EXPECT_EQ(listed(ctl, vx), (std::vector<std::uint8_t>{0x18, 0x19, 0x1a, 0x1b}));
  pass(ctl, 1s);
  EXPECT_EQ(listed(ctl, vx), (std::vector<std::uint8_t>{0x19, 0x1a, 0x1b}));
  ASSERT_EQ(rec.events.size(), 1u);
  EXPECT_FALSE(rec.events[0].first);
  EXPECT_EQ(rec.events[0].second.lladdr.bytes()[5], 0x18);
  EXPECT_EQ(rec.events[0].second.state, NUD_STALE);
  EXPECT_EQ(rec.events[0].second.dst->to_string(), "10.0.0.24");
  // An entry added after a run waits for the next, 10 s later, even if it is due before.
  add(ctl, vx, 0x20, NUD_REACHABLE);
  pass(ctl, 9s);
  EXPECT_EQ(listed(ctl, vx).size(), 4u);
  pass(ctl, 1s);
  EXPECT_EQ(listed(ctl, vx), (std::vector<std::uint8_t>{0x19, 0x1a, 0x1b}));
  // A run that finds an entry due before the next 10 s comes again at its timeout.
  Device* slow = vxlan(ctl, 15, "vx11", 1011);
  ASSERT_TRUE(ctl.open(*slow));
  add(ctl, slow, 0x30, NUD_REACHABLE);  // due 15 s from now; the first run is at 10 s
  pass(ctl, 14s);
  EXPECT_EQ(listed(ctl, slow), (std::vector<std::uint8_t>{0x30}));
  pass(ctl, 1s);
  EXPECT_TRUE(listed(ctl, slow).empty());
  fdb::remove_listener(ctl, rec);
}

TEST_F(VxlanAgeingTest, ADownDeviceAgesNothingAndItsTimerGoesWithIt) {
  auto ctl = engine->control();
  Device* vx = vxlan(ctl, 300);
  add(ctl, vx, 0x18, NUD_REACHABLE);  // added while down: kept until the device stops
  pass(ctl, 400s);
  EXPECT_EQ(listed(ctl, vx), (std::vector<std::uint8_t>{0x18}));
  ASSERT_TRUE(ctl.open(*vx));
  pass(ctl, 10s);  // updated 410 s ago: the first run takes it
  EXPECT_TRUE(listed(ctl, vx).empty());
  add(ctl, vx, 0x19, NUD_REACHABLE);
  ASSERT_TRUE(ctl.close(*vx));  // Linux: vxlan_stop flushes it
  EXPECT_TRUE(listed(ctl, vx).empty());
  ASSERT_TRUE(ctl.delete_link(*vx));
  pass(ctl, 600s);  // no timer of the device's is left to run
}

}  // namespace
}  // namespace ifcore::test
