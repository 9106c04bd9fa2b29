// Address lifetimes on the engine's (fake) clock: the lifetimes a dump reports count down,
// an address is deprecated when its preferred lifetime ends and removed, with its routes and
// notifications, when the valid one does; a replace renews them; bad lifetimes are refused
// and change nothing.
#include <gtest/gtest.h>

#include <linux/icmpv6.h>

#include <chrono>

#include "ifcore/timer.h"
#include "proto/helpers.h"

namespace ifcore::test {
namespace {

using namespace std::chrono_literals;

class LifetimeTest : public ListeningTest<Recorder> {
 protected:
  void configure(EngineConfig& cfg) override { cfg.time = clock; }
  // Moves the clock and runs what is due, as the engine's thread would.
  void pass(Control& ctl, Duration d) {
    clock->advance(d);
    run_timers(ctl);
  }
  Device* up_dummy(Control& ctl, const std::string& name) {
    Device* d = dummy(ctl, name);
    EXPECT_TRUE(ctl.open(*d));
    return d;
  }
  std::optional<inet::AddrInfo> find(Control& ctl, std::string_view local) {
    for (auto& a : inet::list_addresses(ctl, ns(ctl)))
      if (a.local == ip(local)) return a;
    return std::nullopt;
  }
  static inet::AddrRequest timed(Device& d, std::string_view a, int plen, std::uint32_t valid,
                                 std::uint32_t preferred) {
    inet::AddrRequest r = addr_req(d, a, plen);
    r.valid_lft = valid;
    r.preferred_lft = preferred;
    return r;
  }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
};

TEST_F(LifetimeTest, Ipv4AddressIsDeprecatedThenRemovedWithItsRoutes) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  listen(ctl);
  auto made = inet::add_address(ctl, ns(ctl), timed(*d, "10.1.0.1", 24, 5, 3));
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(made->flags & (IFA_F_PERMANENT | IFA_F_DEPRECATED), 0u) << "dynamic";
  EXPECT_EQ(made->valid_lft, 5u);
  EXPECT_EQ(made->preferred_lft, 3u);
  pass(ctl, 1500ms);
  auto a = find(ctl, "10.1.0.1");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->valid_lft, 4u) << "whole seconds left, counted from the add";
  EXPECT_EQ(a->preferred_lft, 2u);
  rec.events.clear();
  pass(ctl, 1500ms);  // t = 3 s: the preferred lifetime is over
  a = find(ctl, "10.1.0.1");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->flags & IFA_F_DEPRECATED);
  EXPECT_EQ(a->preferred_lft, 0u);
  EXPECT_EQ(a->valid_lft, 2u);
  EXPECT_EQ(rec.events, std::vector<std::string>{"+addr 10.1.0.1/24"});
  rec.events.clear();
  pass(ctl, 1999ms);
  EXPECT_TRUE(find(ctl, "10.1.0.1")) << "one millisecond before the valid lifetime ends";
  EXPECT_TRUE(rec.events.empty());
  pass(ctl, 1ms);
  EXPECT_FALSE(find(ctl, "10.1.0.1"));
  ASSERT_FALSE(rec.events.empty());
  EXPECT_EQ(rec.events.front(), "-addr 10.1.0.1/24");
  EXPECT_TRUE(routes_of(ctl, ns(ctl), AF_INET, d->ifindex()).empty());
}

TEST_F(LifetimeTest, Ipv6PrefixRouteExpiresWithTheAddress) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  auto made = inet::add_address(ctl, ns(ctl), timed(*d, "2001:db8::1", 64, 100, 50));
  ASSERT_TRUE(made) << made.error().message;
  auto prefix = [&]() -> std::optional<inet::RouteInfo> {
    for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET6))
      if (r.dst == ip("2001:db8::") && r.dst_len == 64) return r;
    return std::nullopt;
  };
  ASSERT_TRUE(prefix());
  ASSERT_TRUE(prefix()->expires);
  EXPECT_EQ(*prefix()->expires, clock->now() + 100s);
  pass(ctl, 50s);
  EXPECT_TRUE(find(ctl, "2001:db8::1")->flags & IFA_F_DEPRECATED);
  pass(ctl, 50s);
  EXPECT_FALSE(find(ctl, "2001:db8::1"));
  EXPECT_FALSE(prefix());
  // The link-local address is permanent and stays.
  auto left = inet::list_addresses(ctl, ns(ctl), AF_INET6);
  EXPECT_TRUE(std::any_of(left.begin(), left.end(),
                          [](const inet::AddrInfo& a) { return a.local.is_v6_link_local(); }));
}

// Linux keeps the prefix route of a dynamic IPv6 address that is deleted, until the route
// itself expires; a permanent address takes its prefix route with it.
TEST_F(LifetimeTest, ADeletedDynamicIpv6AddressLeavesItsPrefixRouteToExpire) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), timed(*d, "2001:db8:7::1", 64, 30, 30)));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8:8::1", 64)));
  auto has_prefix = [&](std::string_view p) {
    for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET6))
      if (r.dst == ip(p) && r.dst_len == 64) return true;
    return false;
  };
  pass(ctl, 10s);
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "2001:db8:7::1", 64)));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "2001:db8:8::1", 64)));
  EXPECT_TRUE(has_prefix("2001:db8:7::"));
  EXPECT_FALSE(has_prefix("2001:db8:8::"));
  listen(ctl);
  pass(ctl, 19s);
  EXPECT_TRUE(has_prefix("2001:db8:7::"));
  pass(ctl, 1s);
  EXPECT_FALSE(has_prefix("2001:db8:7::"));
  EXPECT_EQ(rec.events, std::vector<std::string>{"-route 2001:db8:7::/64 t254"});
}

TEST_F(LifetimeTest, ReplaceRenewsTheLifetimesAndForeverMakesItPermanent) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  for (std::string_view a : {"10.2.0.1", "2001:db8:2::1"}) {
    int plen = ip(a).is_v4() ? 24 : 64;
    ASSERT_TRUE(inet::add_address(ctl, ns(ctl), timed(*d, a, plen, 5, 5)));
  }
  pass(ctl, 4s);
  for (std::string_view a : {"10.2.0.1", "2001:db8:2::1"}) {
    inet::AddrRequest r = timed(*d, a, ip(a).is_v4() ? 24 : 64, 10, 0);
    r.replace = true;
    auto renewed = inet::add_address(ctl, ns(ctl), r);
    ASSERT_TRUE(renewed) << renewed.error().message;
    EXPECT_EQ(renewed->valid_lft, 10u);
    EXPECT_TRUE(renewed->flags & IFA_F_DEPRECATED) << "a zero preferred lifetime";
  }
  pass(ctl, 9s);  // 13 s after the add: the first lifetimes would have ended long ago
  EXPECT_TRUE(find(ctl, "10.2.0.1"));
  EXPECT_TRUE(find(ctl, "2001:db8:2::1"));
  inet::AddrRequest forever = addr_req(*d, "10.2.0.1", 24);
  forever.replace = true;
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), forever));
  pass(ctl, 1s);
  auto kept = find(ctl, "10.2.0.1");
  ASSERT_TRUE(kept);
  EXPECT_TRUE(kept->flags & IFA_F_PERMANENT);
  EXPECT_EQ(kept->valid_lft, inet::kForever);
  EXPECT_FALSE(find(ctl, "2001:db8:2::1"));
  pass(ctl, std::chrono::hours(24));
  EXPECT_TRUE(find(ctl, "10.2.0.1"));
}

TEST_F(LifetimeTest, BadLifetimesAreRefusedAndChangeNothing) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), timed(*d, "10.3.0.1", 24, 50, 40)));
  auto before = inet::list_addresses(ctl, ns(ctl));
  struct Case {
    std::string_view addr;
    std::uint32_t valid, preferred;
    bool replace;
    const char* message;
  };
  for (const Case& c : {Case{"10.3.0.2", 0, 0, false, "ipv4: address lifetime invalid"},
                        Case{"10.3.0.2", 5, 10, false, "ipv4: address lifetime invalid"},
                        Case{"10.3.0.1", 0, 0, true, "ipv4: address lifetime invalid"},
                        Case{"2001:db8:3::1", 0, 0, false, "ipv6: address lifetime invalid"},
                        Case{"2001:db8:3::1", 5, 6, false, "ipv6: address lifetime invalid"}}) {
    inet::AddrRequest r = timed(*d, c.addr, ip(c.addr).is_v4() ? 24 : 64, c.valid, c.preferred);
    r.replace = c.replace;
    auto got = inet::add_address(ctl, ns(ctl), r);
    ASSERT_FALSE(got) << c.addr;
    EXPECT_EQ(got.error().code, EINVAL);
    EXPECT_EQ(got.error().message, c.message);
  }
  auto after = inet::list_addresses(ctl, ns(ctl));
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].local, before[i].local);
    EXPECT_EQ(after[i].valid_lft, before[i].valid_lft);
    EXPECT_EQ(after[i].flags, before[i].flags);
  }
}

TEST_F(LifetimeTest, PermanentIpv6AddressWithAPreferredLifetimeIsOnlyDeprecated) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), timed(*d, "2001:db8:4::1", 64, inet::kForever, 5)));
  auto a = find(ctl, "2001:db8:4::1");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->flags & IFA_F_PERMANENT);
  EXPECT_EQ(a->preferred_lft, 5u) << "Linux reports a finite preferred lifetime beside forever";
  pass(ctl, 5s);
  a = find(ctl, "2001:db8:4::1");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->flags & IFA_F_DEPRECATED);
  EXPECT_EQ(a->valid_lft, inet::kForever);
  pass(ctl, std::chrono::hours(1000));
  EXPECT_TRUE(find(ctl, "2001:db8:4::1"));
}

TEST_F(LifetimeTest, AddressesGoneBeforeTheirTimeAreForgotten) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  Device* e = up_dummy(ctl, "d1");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), timed(*d, "10.5.0.1", 24, 5, 5)));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), timed(*d, "10.5.0.2", 24, 7, 7)));  // secondary
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), timed(*d, "2001:db8:5::1", 64, 5, 5)));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), timed(*e, "10.6.0.1", 24, 5, 5)));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "2001:db8:5::1", 64)));
  ASSERT_TRUE(ctl.delete_link(*e));
  listen(ctl);
  pass(ctl, 5s);
  // The primary's end takes its secondary with it (promote_secondaries is off).
  EXPECT_FALSE(find(ctl, "10.5.0.1"));
  EXPECT_FALSE(find(ctl, "10.5.0.2"));
  EXPECT_EQ(std::count_if(rec.events.begin(), rec.events.end(),
                          [](const std::string& s) { return s.rfind("-addr", 0) == 0; }),
            2);
  rec.events.clear();
  pass(ctl, 10s);
  EXPECT_TRUE(rec.events.empty());
}

// The engine's own thread ages addresses on the real clock.
TEST(LifetimeThread, AnAddressExpiresWithoutAnyoneAsking) {
  Engine engine{EngineConfig{}};
  kinds::install_all(engine);
  proto::install_all(engine);
  auto name_gone = [&] {
    auto ctl = engine.control();
    for (auto& a : inet::list_addresses(ctl, *ctl.find_namespace("default"), AF_INET))
      if (a.local == ip("10.9.0.1")) return false;
    return true;
  };
  {
    auto ctl = engine.control();
    auto d = ctl.create_link(*ctl.find_namespace("default"), link_req("dummy", "d0"));
    ASSERT_TRUE(d);
    inet::AddrRequest r = addr_req(**d, "10.9.0.1", 24);
    r.valid_lft = r.preferred_lft = 1;
    ASSERT_TRUE(inet::add_address(ctl, *ctl.find_namespace("default"), r));
  }
  EXPECT_FALSE(name_gone());
  bool gone = false;
  for (int i = 0; i < 1000 && !(gone = name_gone()); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(gone) << "still there 10 s after its valid lifetime of 1 s";
}

// A user's IPv6 route with RTA_EXPIRES (`ip -6 route add … expires 30`) ends then, announced
// with RTM_DELROUTE; its preference (RTA_PREF) is kept and reported.
TEST_F(LifetimeTest, AUsersIpv6RouteWithALifetimeEnds) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  inet::RouteRequest r = route_req("2001:db8:9::", 64);
  r.oif = d->ifindex();
  r.expires = 30;
  r.pref = ICMPV6_ROUTER_PREF_HIGH;
  auto made = inet::add_route(ctl, ns(ctl), r);
  ASSERT_TRUE(made) << made.error().message;
  ASSERT_TRUE(made->expires);
  EXPECT_EQ(*made->expires, clock->now() + 30s);
  EXPECT_EQ(made->pref, ICMPV6_ROUTER_PREF_HIGH);
  auto has = [&] {
    for (auto& x : inet::list_routes(ctl, ns(ctl), AF_INET6))
      if (x.dst == ip("2001:db8:9::") && x.dst_len == 64) return true;
    return false;
  };
  listen(ctl);
  pass(ctl, 29s);
  EXPECT_TRUE(has());
  pass(ctl, 1s);
  EXPECT_FALSE(has());
  EXPECT_FALSE(rec.events.empty());
}

}  // namespace
}  // namespace ifcore::test
