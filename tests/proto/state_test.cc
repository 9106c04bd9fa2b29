// Tests of the protocols' private helpers: prefix_of against IpAddr::masked, the
// per-device route list, and when retired objects go to RCU.
#include <map>
#include <optional>
#include <random>

#include "proto/helpers.h"
#include "proto/state.h"

namespace ifcore::test {
namespace {

TEST(PrefixOfTest, MatchesMaskedAtEveryLength) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::array<std::uint8_t, 16> b;
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    IpAddr v6 = IpAddr::v6(std::span(b));
    IpAddr v4 = IpAddr::v4_bytes(std::span(b).first<4>());
    for (int len = -1; len <= 130; ++len) {
      EXPECT_EQ(proto::prefix_of(v6, len), v6.masked(len)) << v6.to_string() << "/" << len;
      EXPECT_EQ(proto::prefix_of(v4, len), v4.masked(len)) << v4.to_string() << "/" << len;
    }
  }
  EXPECT_EQ(proto::prefix_of(IpAddr(), 8), IpAddr());
  EXPECT_EQ(proto::prefix_of(IpAddr(), -1), IpAddr());
  EXPECT_EQ(proto::prefix_of(ip("ff02::1"), 8), ip("ff00::"));
  EXPECT_EQ(proto::prefix_of(ip("10.1.2.3"), 12), ip("10.0.0.0"));
}

TEST(DevRoutesTest, PushEraseAnywhereAndEraseOfAnUnlistedRoute) {
  proto::Route r[4];
  proto::DevRoutes list;
  EXPECT_TRUE(list.empty());
  for (auto& x : r) list.push(&x);
  auto listed = [&] {
    std::vector<proto::Route*> v;
    list.for_each([&](proto::Route* x) { v.push_back(x); });
    return v;
  };
  EXPECT_EQ(listed(), (std::vector<proto::Route*>{&r[3], &r[2], &r[1], &r[0]}));
  list.erase(&r[2]);  // middle
  list.erase(&r[3]);  // head
  list.erase(&r[0]);  // tail
  EXPECT_EQ(listed(), (std::vector<proto::Route*>{&r[1]}));
  list.erase(&r[0]);  // not listed: nothing happens
  EXPECT_EQ(listed(), (std::vector<proto::Route*>{&r[1]}));
  list.erase(&r[1]);
  EXPECT_TRUE(list.empty());
  proto::Route other;
  {
    proto::DevRoutes left;
    left.push(&other);
  }  // a list destroyed with routes on it unlinks them
  EXPECT_EQ(other.dev_prev, nullptr);
  EXPECT_EQ(other.dev_next, nullptr);
}

// Watches EngineProto::retired from after the protocols' subscribers (priority -20).
struct RetiredWatch final : Subscriber {
  explicit RetiredWatch(Engine& e) : ep(proto::engine_proto(e)) {}
  Result<void> on_event(Control&, const EventInfo& ev) override {
    if (ev.event == NetdevEvent::Unregister) held_during_pass.push_back(ep.retired != nullptr);
    return ok();
  }
  void on_batch(Control&, BatchEvent ev, std::span<Device* const>) override {
    if (ev == BatchEvent::UnregisterBatch) held_after_batch = ep.retired != nullptr;
  }
  proto::EngineProto& ep;
  std::vector<bool> held_during_pass;
  std::optional<bool> held_after_batch;
};

// Three devices up with an IPv4 address each, deleted in one batch while `watch` looks.
void delete_three(Control& ctl, Namespace& ns, RetiredWatch& watch) {
  struct Unsubscribe {  // also when an assertion ends the test early
    Control& ctl;
    SubscriptionId id;
    ~Unsubscribe() { ctl.unsubscribe(id); }
  } unsubscribe{ctl, ctl.subscribe(watch, {.name = "watch", .priority = -20, .replay = false})};
  std::vector<Device*> devs;
  for (int i = 0; i < 3; ++i) {
    auto d = ctl.create_link(ns, link_req("dummy", fmt::format("d{}", i)));
    ASSERT_TRUE(d);
    ASSERT_TRUE(ctl.open(**d));
    ASSERT_TRUE(inet::add_address(ctl, ns, addr_req(**d, fmt::format("10.0.{}.1", i), 24)));
    devs.push_back(*d);
  }
  EXPECT_EQ(watch.ep.retired, nullptr);
  ASSERT_TRUE(ctl.delete_links(devs));
  EXPECT_EQ(watch.ep.retired, nullptr);
  EXPECT_TRUE(inet::list_routes(ctl, ns).empty());
}

// Seed 002's per-device policy imitates a kernel that tore each device down on its own:
// nothing is deferred, each callback hands over what it retired as it returns (the legacy
// figures of seeds 001 and 004 depend on when the inet6 teardown begins).
class SingleUnregisterTest : public EngineTest {
  void configure(EngineConfig& cfg) override { cfg.policies.unregister = UnregisterPolicy::Single; }
};
TEST_F(SingleUnregisterTest, CallbacksHandOverWhatTheyRetiredAtOnce) {
  RetiredWatch watch(*engine);
  auto ctl = engine->control();
  delete_three(ctl, ns(ctl), watch);
  EXPECT_EQ(watch.held_during_pass, (std::vector<bool>{false, false, false}));
}

// An unregister batch's callbacks defer what they retire (the devices' IPv4 state here)
// to the UnregisterBatch event, which hands it to RCU at once: nothing is left behind
// after it, and a change outside a batch hands its retired objects over as it returns.
TEST_F(EngineTest, UnregisterBatchHandsWhatItRetiredToRcuAtItsEnd) {
  RetiredWatch watch(*engine);
  {
    auto ctl = engine->control();
    delete_three(ctl, ns(ctl), watch);
  }
  EXPECT_EQ(watch.held_during_pass, (std::vector<bool>{true, true, true}));
  EXPECT_EQ(watch.held_after_batch, std::optional<bool>(false));
  // Outside a batch: an address removed is handed over when the call returns.
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d9");
  ASSERT_TRUE(d);
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.9.0.1", 24)));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "10.9.0.1", 24)));
  EXPECT_EQ(watch.ep.retired, nullptr);
}

// The namespace's count of local addresses (NetState::local_addrs, for prefsrc checks)
// always equals what its devices hold: after adds, an address on two devices, downs that
// keep some (keep_addr_on_down) and drop others, deletes with secondaries, a move and an
// unregister.
class LocalAddrsTest : public EngineTest {
 protected:
  static std::map<IpAddr, std::uint32_t> held(Control& ctl, Namespace& n) {
    std::map<IpAddr, std::uint32_t> m;
    for (const auto& a : inet::list_addresses(ctl, n)) ++m[a.local];
    return m;
  }
  void expect_counts_match(Control& ctl, Namespace& n) {
    EXPECT_EQ(proto::net_state(n).local_addrs, held(ctl, n)) << n.name();
  }
};

TEST_F(LocalAddrsTest, TheCountFollowsEveryChange) {
  auto ctl = engine->control();
  Device* a = dummy(ctl, "a0");
  Device* b = dummy(ctl, "b0");
  ASSERT_TRUE(ctl.open(*a));
  ASSERT_TRUE(ctl.open(*b));
  for (Device* d : {a, b}) {
    ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
    ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64)));
  }
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*a, "10.0.0.2", 24)));  // secondary
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*a, "2001:db8:2::1", 64)));
  expect_counts_match(ctl, ns(ctl));
  EXPECT_EQ(proto::net_state(ns(ctl)).local_addrs.at(ip("10.0.0.1")), 2u);
  // b0 keeps its IPv6 addresses over a down; a0 loses them.
  auto conf = inet::inet6_conf(ctl, ns(ctl), b->ifindex());
  ASSERT_TRUE(conf);
  conf->keep_addr_on_down = true;
  ASSERT_TRUE(inet::set_inet6_conf(ctl, ns(ctl), b->ifindex(), *conf));
  ASSERT_TRUE(ctl.close(*a));
  ASSERT_TRUE(ctl.close(*b));
  expect_counts_match(ctl, ns(ctl));
  ASSERT_TRUE(ctl.open(*a));
  ASSERT_TRUE(ctl.open(*b));
  expect_counts_match(ctl, ns(ctl));
  // The primary goes and takes its secondary.
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*a, "10.0.0.1", 24)));
  expect_counts_match(ctl, ns(ctl));
  auto other = ctl.create_namespace("other");
  ASSERT_TRUE(other);
  ASSERT_TRUE(ctl.move_to_namespace(*b, **other));
  expect_counts_match(ctl, ns(ctl));
  expect_counts_match(ctl, **other);
  ASSERT_TRUE(ctl.delete_link(*a));
  expect_counts_match(ctl, ns(ctl));
}

}  // namespace
}  // namespace ifcore::test
