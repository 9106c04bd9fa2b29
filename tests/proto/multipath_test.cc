// Multipath hop selection (Linux: fib_select_multipath, fib6_select_path,
// nexthop_select_path): the hash's exact values are ifcore's own, so these check the
// properties Linux guarantees: weights shared out over many flows, the policy deciding
// which of the flow's fields count, a dead hop never chosen, a seed fixing the choice, an
// output device bypassing the hash, and the sysctls' ranges.
#include <linux/nexthop.h>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "proto/helpers.h"

namespace ifcore::test {
namespace {

class MultipathHashTest : public EngineTest {
 protected:
  // Up dummies a0 (10.1.0.1/24) and b0 (10.2.0.1/24) and 192.0.2.0/24 through both.
  void two_hops(Control& ctl, std::uint8_t wa, std::uint8_t wb) {
    a = dummy(ctl, "a0");
    b = dummy(ctl, "b0");
    for (auto [d, n] : {std::pair{a, 1}, std::pair{b, 2}}) {
      ASSERT_TRUE(ctl.change_flags(*d, d->flags() | IFF_UP));
      ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, fmt::format("10.{}.0.1", n), 24)));
    }
    auto r = route_req("192.0.2.0", 24);
    inet::NextHop ha, hb;
    ha.gateway = ip("10.1.0.2");
    ha.oif = a->ifindex();
    ha.weight = wa;
    hb.gateway = ip("10.2.0.2");
    hb.oif = b->ifindex();
    hb.weight = wb;
    r.nexthops = {ha, hb};
    auto made = inet::add_route(ctl, ns(ctl), r);
    ASSERT_TRUE(made) << made.error().message;
  }
  inet::Flow flow(std::uint32_t src, std::uint16_t sport = 1000) {
    inet::Flow f;
    f.dst = ip("192.0.2.7");
    f.src = IpAddr::v4(0x0a630000u + src);
    f.ip_proto = 6;
    f.sport = sport;
    f.dport = 80;
    return f;
  }
  int oif_of(Control& ctl, const inet::Flow& f) {
    auto r = inet::get_route(ctl, ns(ctl), f);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->oif : 0;
  }
  void set_policy(Control& ctl, std::uint8_t policy, std::uint32_t fields = 7) {
    auto c = inet::multipath_hash_conf(ctl, ns(ctl));
    c.policy4 = policy;
    c.fields4 = fields;
    ASSERT_TRUE(inet::set_multipath_hash_conf(ctl, ns(ctl), c));
  }
  Device* a = nullptr;
  Device* b = nullptr;
};

TEST_F(MultipathHashTest, WeightsAreRespectedOverManyFlows) {
  auto ctl = engine->control();
  two_hops(ctl, 1, 3);
  std::map<int, int> seen;
  const int n = 8000;
  for (int i = 0; i < n; ++i) ++seen[oif_of(ctl, flow(static_cast<std::uint32_t>(i)))];
  EXPECT_EQ(seen.size(), 2u);
  // 1:3 — a quarter of the flows through a0, within a few standard deviations.
  EXPECT_NEAR(seen[a->ifindex()], n / 4, 250);
  EXPECT_NEAR(seen[b->ifindex()], 3 * n / 4, 250);
}

TEST_F(MultipathHashTest, ThePolicyDecidesWhichFieldsAreHashed) {
  auto ctl = engine->control();
  two_hops(ctl, 1, 1);
  // L3 (0): the ports do not count, the source does.
  std::set<std::uint32_t> hashes;
  for (std::uint16_t p = 1; p < 100; ++p)
    hashes.insert(inet::multipath_hash(ctl, ns(ctl), flow(1, p)));
  EXPECT_EQ(hashes.size(), 1u);
  EXPECT_NE(inet::multipath_hash(ctl, ns(ctl), flow(1)),
            inet::multipath_hash(ctl, ns(ctl), flow(2)));
  // L4 (1): the ports count.
  set_policy(ctl, 1);
  hashes.clear();
  std::set<int> oifs;
  for (std::uint16_t p = 1; p < 100; ++p) {
    hashes.insert(inet::multipath_hash(ctl, ns(ctl), flow(1, p)));
    oifs.insert(oif_of(ctl, flow(1, p)));
  }
  EXPECT_GT(hashes.size(), 90u);
  EXPECT_EQ(oifs.size(), 2u) << "one source spreads over both hops by its ports";
  // Custom (3) with only the destination address: nothing of this flow's source counts.
  set_policy(ctl, 3, inet::kMpHashDstIp);
  hashes.clear();
  for (std::uint32_t s = 1; s < 100; ++s)
    hashes.insert(inet::multipath_hash(ctl, ns(ctl), flow(s, static_cast<std::uint16_t>(s))));
  EXPECT_EQ(hashes.size(), 1u);
  // Custom with the source port only.
  set_policy(ctl, 3, inet::kMpHashSrcPort);
  EXPECT_EQ(inet::multipath_hash(ctl, ns(ctl), flow(1, 5)),
            inet::multipath_hash(ctl, ns(ctl), flow(2, 5)));
  EXPECT_NE(inet::multipath_hash(ctl, ns(ctl), flow(1, 5)),
            inet::multipath_hash(ctl, ns(ctl), flow(1, 6)));
}

TEST_F(MultipathHashTest, ADeadHopIsNeverChosen) {
  auto ctl = engine->control();
  two_hops(ctl, 200, 1);
  ASSERT_TRUE(ctl.change_flags(*a, a->flags() & ~IFF_UP));
  for (std::uint32_t i = 0; i < 500; ++i) EXPECT_EQ(oif_of(ctl, flow(i)), b->ifindex());
  ASSERT_TRUE(ctl.change_flags(*a, a->flags() | IFF_UP));
  // Back in the hash once up: with 200 of the 201 shares nearly every flow is a0's (the
  // light b0 may see none of 500 flows, about one seed in twelve, so it is not asked for).
  int through_a = 0;
  for (std::uint32_t i = 0; i < 500; ++i) through_a += oif_of(ctl, flow(i)) == a->ifindex();
  EXPECT_GT(through_a, 450) << "back in the hash once up";
}

TEST_F(MultipathHashTest, AnOutputDeviceBypassesTheHash) {
  auto ctl = engine->control();
  two_hops(ctl, 1, 1);
  for (std::uint32_t i = 0; i < 200; ++i) {
    auto f = flow(i);
    f.oif = b->ifindex();
    EXPECT_EQ(oif_of(ctl, f), b->ifindex());
  }
}

TEST_F(MultipathHashTest, ASeedFixesTheHashAndTheRangesAreLinuxs) {
  auto ctl = engine->control();
  two_hops(ctl, 1, 1);
  auto c = inet::multipath_hash_conf(ctl, ns(ctl));
  EXPECT_EQ(c, inet::MultipathHashConf{}) << "Linux's defaults: L3, fields 7, no seed";
  EXPECT_EQ(c.fields4, 7u);
  c.seed = 1234;
  ASSERT_TRUE(inet::set_multipath_hash_conf(ctl, ns(ctl), c));
  const std::uint32_t h = inet::multipath_hash(ctl, ns(ctl), flow(9));
  auto made = ctl.create_namespace("other");
  ASSERT_TRUE(made);
  Namespace& other = **made;
  ASSERT_TRUE(inet::set_multipath_hash_conf(ctl, other, c));
  EXPECT_EQ(inet::multipath_hash(ctl, other, flow(9)), h) << "the same seed, the same hash";
  c.seed = 1235;
  ASSERT_TRUE(inet::set_multipath_hash_conf(ctl, other, c));
  EXPECT_NE(inet::multipath_hash(ctl, other, flow(9)), h);
  EXPECT_LT(h, 1u << 31);
  auto bad = [&](auto change) {
    auto x = inet::multipath_hash_conf(ctl, ns(ctl));
    change(x);
    auto r = inet::set_multipath_hash_conf(ctl, ns(ctl), x);
    return !r && r.error().code == EINVAL;
  };
  EXPECT_TRUE(bad([](auto& x) { x.policy4 = 4; }));
  EXPECT_TRUE(bad([](auto& x) { x.policy6 = 4; }));
  EXPECT_TRUE(bad([](auto& x) { x.fields4 = 0; }));
  EXPECT_TRUE(bad([](auto& x) { x.fields6 = 0x1000; }));
  EXPECT_EQ(inet::multipath_hash_conf(ctl, ns(ctl)).seed, 1234u)
      << "a refused write changes nothing";
}

TEST_F(MultipathHashTest, AHashThresholdGroupSharesByWeight) {
  auto ctl = engine->control();
  two_hops(ctl, 1, 1);
  for (auto [id, d] : {std::pair{1u, a}, std::pair{2u, b}}) {
    inet::NexthopRequest q;
    q.id = id;
    q.family = AF_INET;
    q.oif = d->ifindex();
    ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), q));
  }
  inet::NexthopRequest g;
  g.id = 10;
  g.group = {{1, 3}, {2, 1}};
  g.group_type = NEXTHOP_GRP_TYPE_MPATH;
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), g));
  auto r = route_req("198.51.100.0", 24);
  r.nhid = 10;
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), r));
  std::map<int, int> seen;
  const int n = 8000;
  for (int i = 0; i < n; ++i) {
    auto f = flow(static_cast<std::uint32_t>(i));
    f.dst = ip("198.51.100.9");
    ++seen[oif_of(ctl, f)];
  }
  EXPECT_NEAR(seen[a->ifindex()], 3 * n / 4, 250);
  EXPECT_NEAR(seen[b->ifindex()], n / 4, 250);
}

// Linux: nexthop_select_path_hthr passes over a group member whose gateway's neighbour is
// in no valid state (an absent entry is fine), and takes the first member when none is
// good; fib_select_multipath does the same for a route's own hops only with
// net.ipv4.fib_multipath_use_neigh.
TEST_F(MultipathHashTest, HopsWithAFailedNeighbourArePassedOver) {
  auto ctl = engine->control();
  two_hops(ctl, 1, 1);
  for (auto [id, d, gw] : {std::tuple{1u, a, "10.1.0.2"}, std::tuple{2u, b, "10.2.0.2"}}) {
    inet::NexthopRequest q;
    q.id = id;
    q.family = AF_INET;
    q.gateway = ip(gw);
    q.oif = d->ifindex();
    ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), q));
  }
  inet::NexthopRequest g;
  g.id = 10;
  g.group = {{1, 1}, {2, 1}};
  g.group_type = NEXTHOP_GRP_TYPE_MPATH;
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), g));
  auto r = route_req("198.51.100.0", 24);
  r.nhid = 10;
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), r));
  auto neigh = [&](Device* d, const char* gw, std::uint16_t state) {
    inet::NeighRequest q;
    q.family = AF_INET;
    q.ifindex = d->ifindex();
    q.dst = ip(gw);
    q.state = state;
    q.create = true;
    q.excl = false;
    q.replace = true;
    auto made = inet::add_neigh(ctl, ns(ctl), q);
    ASSERT_TRUE(made) << made.error().message;
  };
  auto forget = [&](Device* d, const char* gw) {
    inet::NeighRequest q;
    q.family = AF_INET;
    q.ifindex = d->ifindex();
    q.dst = ip(gw);
    ASSERT_TRUE(inet::delete_neigh(ctl, ns(ctl), q));
  };
  // A flow through each member, found by trying sources.
  std::map<int, inet::Flow> through;
  for (std::uint32_t i = 0; i < 1000 && through.size() < 2; ++i) {
    auto f = flow(i);
    f.dst = ip("198.51.100.9");
    through.emplace(oif_of(ctl, f), f);
  }
  ASSERT_EQ(through.size(), 2u);
  const inet::Flow fa = through[a->ifindex()], fb = through[b->ifindex()];
  neigh(a, "10.1.0.2", NUD_FAILED);
  EXPECT_EQ(oif_of(ctl, fa), b->ifindex());
  EXPECT_EQ(oif_of(ctl, fb), b->ifindex());
  forget(a, "10.1.0.2");
  neigh(b, "10.2.0.2", NUD_INCOMPLETE);
  EXPECT_EQ(oif_of(ctl, fb), a->ifindex());
  neigh(a, "10.1.0.2", NUD_REACHABLE);  // valid: a stays usable
  EXPECT_EQ(oif_of(ctl, fa), a->ifindex());
  neigh(a, "10.1.0.2", NUD_FAILED);  // none good: the first member
  EXPECT_EQ(oif_of(ctl, fb), a->ifindex());
  // The route's own hops (192.0.2.0/24 through a0 and b0) look at neighbours only with
  // fib_multipath_use_neigh.
  forget(b, "10.2.0.2");
  std::map<int, inet::Flow> plain;
  for (std::uint32_t i = 0; i < 1000 && plain.size() < 2; ++i)
    plain.emplace(oif_of(ctl, flow(i)), flow(i));
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(oif_of(ctl, plain[a->ifindex()]), a->ifindex());
  auto c = inet::multipath_hash_conf(ctl, ns(ctl));
  c.use_neigh = true;
  ASSERT_TRUE(inet::set_multipath_hash_conf(ctl, ns(ctl), c));
  EXPECT_EQ(oif_of(ctl, plain[a->ifindex()]), b->ifindex());
}

}  // namespace
}  // namespace ifcore::test
