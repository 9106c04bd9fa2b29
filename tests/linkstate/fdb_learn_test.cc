// Entries the bridge learns from frames show in fdb::dump as dynamic (reachable) entries of
// their port, turn stale once aged, and never replace a local or a sticky entry; each entry
// made or moved is announced (RTNLGRP_NEIGH), as Linux's br_fdb_update does.
#include <linux/neighbour.h>
#include <linux/netlink.h>

#include <chrono>

#include "ifcore/fdb.h"
#include "ifcore/timer.h"
#include "kinds/bridge.h"
#include "linkstate_fixture.h"

namespace ifcore::test {
namespace {

using namespace std::chrono_literals;

class FdbLearnTest : public LinkStateTest {
 protected:
  void configure(EngineConfig& cfg) override { cfg.time = clock; }
  std::pair<Device*, Device*> pair(Control& ctl, std::string a, std::string b) {
    Device* x = must(ctl.create_link(def(ctl), veth(a, b)));
    Device* y = ctl.find(def(ctl), b);
    EXPECT_TRUE(ctl.open(*x));
    EXPECT_TRUE(ctl.open(*y));
    return {x, y};
  }
  const fdb::Entry* find(const std::vector<fdb::Entry>& rows, const HwAddr& a) {
    for (const auto& e : rows)
      if (e.lladdr == a && e.master) return &e;
    return nullptr;
  }
  // An up bridge br0 with the up veth ends p0 and p1 as ports; h0 and h1 their peers.
  struct TwoPorts {
    Device *br, *p0, *h0, *p1, *h1;
  };
  TwoPorts two_ports(Control& ctl) {
    Device* br = must(ctl.create_link(def(ctl), link_req("bridge", "br0")));
    EXPECT_TRUE(ctl.open(*br));
    auto [p0, h0] = pair(ctl, "p0", "h0");
    auto [p1, h1] = pair(ctl, "p1", "h1");
    EXPECT_TRUE(ctl.set_master(*p0, br));
    EXPECT_TRUE(ctl.set_master(*p1, br));
    return {br, p0, h0, p1, h1};
  }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
};

TEST_F(FdbLearnTest, LearnedEntriesAreDumpedAgeAndRespectStickyEntries) {
  auto ctl = engine->control();
  auto [br, p0, h0, p1, h1] = two_ports(ctl);
  EXPECT_TRUE(transmit(*h0, frame(h1->address(), h0->address())));
  auto rows = fdb::dump(ctl, def(ctl), br->ifindex(), 0, {});
  ASSERT_TRUE(rows);
  const fdb::Entry* e = find(*rows, h0->address());
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->ifindex, p0->ifindex());
  EXPECT_EQ(e->state, NUD_REACHABLE);
  clock->advance(301s);
  rows = fdb::dump(ctl, def(ctl), br->ifindex(), 0, {});
  e = find(*rows, h0->address());
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->state, NUD_STALE);
  // A sticky entry stays on its port whatever the frames say.
  fdb::Request q;
  q.ifindex = p1->ifindex();
  q.lladdr = h0->address();
  q.flags = NTF_MASTER | NTF_STICKY;
  q.state = NUD_NOARP | NUD_REACHABLE;
  q.nlflags = NLM_F_CREATE | NLM_F_REPLACE;
  ASSERT_TRUE(fdb::add(ctl, def(ctl), q));
  EXPECT_TRUE(transmit(*h0, frame(h1->address(), h0->address())));
  rows = fdb::dump(ctl, def(ctl), br->ifindex(), 0, {});
  e = find(*rows, h0->address());
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->ifindex, p1->ifindex());
  EXPECT_EQ(e->flags, NTF_STICKY);
  // A frame from the port's own address does not move its local entry.
  EXPECT_TRUE(transmit(*h1, frame(h0->address(), p0->address())));
  rows = fdb::dump(ctl, def(ctl), br->ifindex(), 0, {});
  e = find(*rows, p0->address());
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->ifindex, p0->ifindex());
  EXPECT_EQ(e->state, NUD_PERMANENT);
}

struct FdbEvents : fdb::Listener {
  std::vector<std::pair<bool, fdb::Entry>> seen;
  void on_fdb(Namespace&, bool added, const fdb::Entry& e) override { seen.emplace_back(added, e); }
};

TEST_F(FdbLearnTest, WhatIsLearnedOrMovedIsAnnouncedOnceAfterTheFramePath) {
  auto ctl = engine->control();
  auto [br, p0, h0, p1, h1] = two_ports(ctl);
  FdbEvents ev;
  fdb::add_listener(ctl, ev);
  const HwAddr mac = h0->address();
  EXPECT_TRUE(transmit(*h0, frame(h1->address(), mac)));
  EXPECT_TRUE(ev.seen.empty()) << "the frame path announces nothing itself";
  run_timers(ctl);
  ASSERT_EQ(ev.seen.size(), 1u);
  EXPECT_TRUE(ev.seen[0].first);
  EXPECT_EQ(ev.seen[0].second.lladdr, mac);
  EXPECT_EQ(ev.seen[0].second.ifindex, p0->ifindex());
  EXPECT_EQ(ev.seen[0].second.master, static_cast<std::uint32_t>(br->ifindex()));
  EXPECT_EQ(ev.seen[0].second.state, NUD_REACHABLE);
  // Seen again on the same port: refreshed, not announced.
  EXPECT_TRUE(transmit(*h0, frame(h1->address(), mac)));
  run_timers(ctl);
  EXPECT_EQ(ev.seen.size(), 1u);
  // Seen on the other port: moved, and announced with its new port.
  EXPECT_TRUE(transmit(*h1, frame(h0->address(), mac)));
  run_timers(ctl);
  ASSERT_EQ(ev.seen.size(), 2u);
  EXPECT_EQ(ev.seen[1].second.ifindex, p1->ifindex());
  // The port it is on stops forwarding: the entry goes, announced (Linux:
  // br_fdb_delete_by_port from br_stp_disable_port).
  ASSERT_TRUE(ctl.close(*p1));
  ASSERT_EQ(ev.seen.size(), 3u);
  EXPECT_FALSE(ev.seen[2].first);
  EXPECT_EQ(ev.seen[2].second.lladdr, mac);
  EXPECT_EQ(ev.seen[2].second.ifindex, p1->ifindex());
  // Learned, then gone with its port before the announcement: nothing is announced.
  EXPECT_TRUE(transmit(*h0, frame(h1->address(), HwAddr::ethernet({2, 0, 0, 0, 0, 9}))));
  ASSERT_TRUE(ctl.set_master(*p0, nullptr));
  const std::size_t before = ev.seen.size();
  run_timers(ctl);
  for (std::size_t i = before; i < ev.seen.size(); ++i)
    EXPECT_NE(ev.seen[i].second.lladdr, HwAddr::ethernet({2, 0, 0, 0, 0, 9}));
  fdb::remove_listener(ctl, ev);
}

// Linux: br_fdb_cleanup, run while the bridge is up: an entry not refreshed for the
// ageing time goes, announced as stale; a refreshed one stays.
TEST_F(FdbLearnTest, AgedOutEntriesAreCollectedAndAnnouncedStale) {
  auto ctl = engine->control();
  auto [br, p0, h0, p1, h1] = two_ports(ctl);
  const HwAddr a = h0->address(), b = h1->address();
  EXPECT_TRUE(transmit(*h0, frame(b, a)));
  EXPECT_TRUE(transmit(*h1, frame(a, b)));
  run_timers(ctl);
  FdbEvents ev;
  fdb::add_listener(ctl, ev);
  clock->advance(200s);
  EXPECT_TRUE(transmit(*h1, frame(a, b)));  // b refreshed
  run_timers(ctl);
  clock->advance(100s);  // a: 300 s old
  run_timers(ctl);
  auto rows = fdb::dump(ctl, def(ctl), br->ifindex(), 0, {});
  ASSERT_TRUE(rows);
  EXPECT_EQ(find(*rows, a), nullptr);
  ASSERT_NE(find(*rows, b), nullptr);
  ASSERT_EQ(ev.seen.size(), 1u);
  EXPECT_FALSE(ev.seen[0].first);
  EXPECT_EQ(ev.seen[0].second.lladdr, a);
  EXPECT_EQ(ev.seen[0].second.state, NUD_STALE);
  clock->advance(200s);  // b's turn, at its own timeout
  run_timers(ctl);
  rows = fdb::dump(ctl, def(ctl), br->ifindex(), 0, {});
  EXPECT_EQ(find(*rows, b), nullptr);
  EXPECT_EQ(ev.seen.size(), 2u);
  fdb::remove_listener(ctl, ev);
}

TEST_F(FdbLearnTest, ABridgeDeletedWithAnnouncementsPendingAnnouncesNothing) {
  auto ctl = engine->control();
  Device* br = must(ctl.create_link(def(ctl), link_req("bridge", "br0")));
  ASSERT_TRUE(ctl.open(*br));
  auto [p0, h0] = pair(ctl, "p0", "h0");
  ASSERT_TRUE(ctl.set_master(*p0, br));
  FdbEvents ev;
  fdb::add_listener(ctl, ev);
  EXPECT_TRUE(transmit(*h0, frame(HwAddr::ethernet({2, 0, 0, 0, 0, 1}), h0->address())));
  ASSERT_TRUE(ctl.delete_link(*br));
  ev.seen.clear();
  run_timers(ctl);
  EXPECT_TRUE(ev.seen.empty());
  fdb::remove_listener(ctl, ev);
}

}  // namespace
}  // namespace ifcore::test
