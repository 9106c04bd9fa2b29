// Resilient groups' buckets on the engine's (fake) clock: the table Linux 6.18 makes for a
// group (checked against it: `ip nexthop bucket show`), what a member's removal and a
// replace move at once and silently, what waits for the idle or the unbalanced timer and
// is then announced (RTM_NEWNEXTHOPBUCKET), idle times and the unbalanced time counted in
// ticks, lookups that use a bucket, the filters of a dump and the errors of a get.
#include <linux/nexthop.h>

#include <gtest/gtest.h>

#include <chrono>

#include "ifcore/timer.h"
#include "proto/helpers.h"

namespace ifcore::test {
namespace {

using namespace std::chrono_literals;

struct BucketRecorder : inet::ProtoListener {
  std::vector<std::string> events;
  void on_nexthop(Namespace&, inet::ProtoEvent ev, const inet::NexthopInfo& n) override {
    events.push_back(fmt::format("{}nh {}", ev == inet::ProtoEvent::New ? '+' : '-', n.id));
  }
  void on_nexthop_bucket(Namespace&, const inet::NexthopBucket& b) override {
    events.push_back(
        fmt::format("bucket {} {} -> {} idle {}", b.group, b.index, b.nhid, b.idle_time));
  }
};

class NexthopBucketTest : public ListeningTest<BucketRecorder> {
 protected:
  void configure(EngineConfig& cfg) override { cfg.time = clock; }
  void pass(Control& ctl, Duration d) {
    clock->advance(d);
    run_timers(ctl);
  }
  // Up dummies d1..dN (10.N.0.1/24), each with nexthop N through it.
  void singles(Control& ctl, int n) {
    for (int i = 1; i <= n; ++i) {
      Device* d = dummy(ctl, fmt::format("d{}", i));
      ASSERT_TRUE(ctl.change_flags(*d, d->flags() | IFF_UP));
      ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, fmt::format("10.{}.0.1", i), 24)));
      inet::NexthopRequest q;
      q.id = static_cast<std::uint32_t>(i);
      q.family = AF_INET;
      q.oif = d->ifindex();
      ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), q));
    }
  }
  static inet::NexthopRequest resilient(std::uint32_t id, std::vector<inet::NexthopMember> m,
                                        std::optional<std::uint16_t> buckets,
                                        std::optional<std::uint32_t> idle = std::nullopt,
                                        std::optional<std::uint32_t> unbalanced = std::nullopt) {
    inet::NexthopRequest q;
    q.id = id;
    q.group = std::move(m);
    q.group_type = NEXTHOP_GRP_TYPE_RES;
    q.buckets = buckets;
    q.idle_timer = idle;
    q.unbalanced_timer = unbalanced;
    return q;
  }
  static inet::NexthopRequest replacing(inet::NexthopRequest q) {
    q.replace = true;
    return q;
  }
  std::vector<std::uint32_t> table(Control& ctl, std::uint32_t id) {
    inet::NexthopBucketFilter f;
    f.id = id;
    auto got = inet::list_nexthop_buckets(ctl, ns(ctl), f);
    EXPECT_TRUE(got);
    std::vector<std::uint32_t> out;
    if (got)
      for (auto& b : *got) out.push_back(b.nhid);
    return out;
  }
  // Route lookups from many sources through `dst`, until every bucket was used.
  void use_every_bucket(Control& ctl, std::string_view dst) {
    for (int i = 1; i < 2000; ++i) {
      inet::Flow f;
      f.dst = ip(dst);
      f.src = IpAddr::v4(0x0a000000u + static_cast<std::uint32_t>(i));
      ASSERT_TRUE(inet::get_route(ctl, ns(ctl), f));
    }
  }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
};

using Ids = std::vector<std::uint32_t>;

TEST_F(NexthopBucketTest, AGroupsTableIsFilledAsLinuxFillsIt) {
  auto ctl = engine->control();
  singles(ctl, 3);
  listen(ctl);
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), resilient(10, {{1, 1}, {2, 1}}, 8)));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), resilient(11, {{1, 3}, {2, 1}, {3, 2}}, 10)));
  // Linux 6.18: the member listed last among those short of buckets is filled first.
  EXPECT_EQ(table(ctl, 10), (Ids{2, 2, 2, 2, 1, 1, 1, 1}));
  EXPECT_EQ(table(ctl, 11), (Ids{3, 3, 3, 2, 2, 1, 1, 1, 1, 1}));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"+nh 10", "+nh 11"}))
      << "a new group's buckets are not announced one by one";
  auto g = inet::get_nexthop(ctl, ns(ctl), 11);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->resilient.unbalanced_time, 0u) << "balanced from the start";
}

TEST_F(NexthopBucketTest, IdleTimeCountsTicksOnTheEnginesClock) {
  auto ctl = engine->control();
  singles(ctl, 2);
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), resilient(10, {{1, 1}, {2, 1}}, 4)));
  clock->advance(1530ms);
  auto b = inet::get_nexthop_bucket(ctl, ns(ctl), 10, 3);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->group, 10u);
  EXPECT_EQ(b->index, 3);
  EXPECT_EQ(b->nhid, 1u);
  EXPECT_EQ(b->idle_time, 153u);
}

TEST_F(NexthopBucketTest, AMemberThatGoesGivesItsBucketsAwayAtOnceAndSilently) {
  auto ctl = engine->control();
  singles(ctl, 3);
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), resilient(10, {{1, 1}, {2, 1}, {3, 1}}, 6)));
  EXPECT_EQ(table(ctl, 10), (Ids{3, 3, 2, 2, 1, 1}));
  listen(ctl);
  ASSERT_TRUE(inet::delete_nexthop(ctl, ns(ctl), 2));
  // 1 and 3 now want 3 each: the freed buckets go to 3 (listed last), then to 1.
  EXPECT_EQ(table(ctl, 10), (Ids{3, 3, 3, 1, 1, 1}));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"-nh 2", "+nh 10"}));
  // A device going down takes its nexthop, and the group's buckets follow.
  Device* d3 = ctl.find(ns(ctl), "d3");
  ASSERT_TRUE(d3);
  ASSERT_TRUE(ctl.change_flags(*d3, d3->flags() & ~IFF_UP));
  EXPECT_EQ(table(ctl, 10), (Ids{1, 1, 1, 1, 1, 1}));
}

TEST_F(NexthopBucketTest, AReplaceMovesUnusedBucketsAtOnce) {
  auto ctl = engine->control();
  singles(ctl, 2);
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), resilient(10, {{1, 1}, {2, 1}}, 8)));
  listen(ctl);
  ASSERT_TRUE(
      inet::add_nexthop(ctl, ns(ctl), replacing(resilient(10, {{1, 3}, {2, 1}}, std::nullopt))));
  // 1 wants 6, 2 wants 2: 2's first two buckets were never used since they were filled.
  EXPECT_EQ(table(ctl, 10), (Ids{1, 1, 2, 2, 1, 1, 1, 1}));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"+nh 10"}));
  auto bad = inet::add_nexthop(ctl, ns(ctl), replacing(resilient(10, {{1, 1}}, 4)));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "Can not change number of buckets of a resilient nexthop group.");
}

TEST_F(NexthopBucketTest, BusyBucketsWaitForTheIdleTimerThenMoveAnnounced) {
  auto ctl = engine->control();
  singles(ctl, 2);
  // idle_timer 1 s (100 ticks).
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), resilient(10, {{1, 1}, {2, 1}}, 4, 100)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), [] {
    auto r = route_req("192.0.2.0", 24);
    r.nhid = 10;
    return r;
  }()));
  clock->advance(10ms);  // a bucket used at the moment it was filled counts as unused
  use_every_bucket(ctl, "192.0.2.1");
  listen(ctl);
  ASSERT_TRUE(
      inet::add_nexthop(ctl, ns(ctl), replacing(resilient(10, {{1, 3}, {2, 1}}, std::nullopt))));
  EXPECT_EQ(table(ctl, 10), (Ids{2, 2, 1, 1})) << "every bucket was just used: none moves";
  pass(ctl, 500ms);
  auto g = inet::get_nexthop(ctl, ns(ctl), 10);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->resilient.unbalanced_time, 50u) << "unbalanced since the replace";
  EXPECT_EQ(table(ctl, 10), (Ids{2, 2, 1, 1}));
  pass(ctl, 500ms);
  EXPECT_EQ(table(ctl, 10), (Ids{1, 2, 1, 1})) << "idle for idle_timer: the first moves";
  EXPECT_EQ(rec.events, (std::vector<std::string>{"+nh 10", "bucket 10 0 -> 1 idle 0"}));
  g = inet::get_nexthop(ctl, ns(ctl), 10);
  EXPECT_EQ(g->resilient.unbalanced_time, 0u);
}

TEST_F(NexthopBucketTest, TheUnbalancedTimerForcesBusyBucketsToMove) {
  auto ctl = engine->control();
  singles(ctl, 2);
  // idle_timer 120 s, unbalanced_timer 2 s.
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), resilient(10, {{1, 1}, {2, 1}}, 4, 12000, 200)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), [] {
    auto r = route_req("192.0.2.0", 24);
    r.nhid = 10;
    return r;
  }()));
  listen(ctl);
  clock->advance(10ms);
  for (int i = 0; i < 3; ++i) {
    use_every_bucket(ctl, "192.0.2.1");
    if (i == 0) {
      ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl),
                                    replacing(resilient(10, {{1, 1}, {2, 3}}, std::nullopt))));
    }
    pass(ctl, 900ms);
    if (i < 2) {
      EXPECT_EQ(table(ctl, 10), (Ids{2, 2, 1, 1})) << "still waiting at " << i;
    }
  }
  // 2.7 s after the replace, past the unbalanced timer: one bucket of 1 moves, busy or not.
  EXPECT_EQ(table(ctl, 10), (Ids{2, 2, 2, 1}));
  ASSERT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(rec.events[1].rfind("bucket 10 2 -> 2", 0), 0u) << rec.events[1];
}

TEST_F(NexthopBucketTest, DumpFiltersAndGetErrors) {
  auto ctl = engine->control();
  singles(ctl, 3);
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), resilient(10, {{1, 1}, {2, 1}}, 4)));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), resilient(11, {{3, 1}}, 2)));
  inet::NexthopRequest mp;
  mp.id = 12;
  mp.group = {{1, 1}, {3, 1}};
  mp.group_type = NEXTHOP_GRP_TYPE_MPATH;
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), mp));
  auto all = inet::list_nexthop_buckets(ctl, ns(ctl), {});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 6u) << "resilient groups only, by id then index";
  inet::NexthopBucketFilter f;
  f.nhid = 3;
  EXPECT_EQ(inet::list_nexthop_buckets(ctl, ns(ctl), f)->size(), 2u);
  f = {};
  f.oif = ctl.find(ns(ctl), "d2")->ifindex();
  EXPECT_EQ(inet::list_nexthop_buckets(ctl, ns(ctl), f)->size(), 2u);
  f = {};
  f.family = AF_INET6;
  EXPECT_TRUE(inet::list_nexthop_buckets(ctl, ns(ctl), f)->empty());
  f = {};
  f.id = 12;
  auto e = inet::list_nexthop_buckets(ctl, ns(ctl), f);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, EINVAL);
  EXPECT_EQ(e.error().message, "Nexthop group not of type resilient");
  f.id = 1;
  EXPECT_EQ(inet::list_nexthop_buckets(ctl, ns(ctl), f).error().message, "Not a nexthop group");
  f.id = 99;
  EXPECT_EQ(inet::list_nexthop_buckets(ctl, ns(ctl), f).error().code, ENOENT);
  auto out = inet::get_nexthop_bucket(ctl, ns(ctl), 10, 4);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, ENOENT);
  EXPECT_EQ(out.error().message, "Bucket index out of bounds");
}

}  // namespace
}  // namespace ifcore::test
