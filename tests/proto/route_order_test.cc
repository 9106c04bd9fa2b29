// Tests of routes that share a key: where each goes as its request's NLM_F_* flags say,
// and the flags and hops of the RTM_NEWROUTE / RTM_DELROUTE that announce them (Linux 6.18:
// fib_table_insert's aliases, fib6_add_rt2node's siblings, as `ip monitor` shows them).
#include <linux/rtnetlink.h>

#include "proto/helpers.h"

namespace ifcore::test {
namespace {

// Records "+ 600 gw" / "- 0 gw1,gw2": the event, the flags in hex, the hops' gateways.
struct FlagRecorder : inet::ProtoListener {
  std::vector<std::string> events;
  void on_route_flagged(Namespace&, inet::ProtoEvent ev, const inet::RouteInfo& r,
                        std::uint16_t nlflags) override {
    if (r.protocol == RTPROT_KERNEL) return;
    events.push_back(fmt::format("{} {:x} {}", ev == inet::ProtoEvent::New ? '+' : '-', nlflags,
                                 gateways_of(r)));
  }
};

class RouteOrderTest : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    auto ctl = engine->control();
    d = dummy(ctl, "d0");
    ASSERT_TRUE(ctl.open(*d));
    ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
    ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64, IFA_F_NODAD)));
    inet::add_listener(ctl, rec);
  }
  void TearDown() override {
    {
      auto ctl = engine->control();
      inet::remove_listener(ctl, rec);
    }
    EngineTest::TearDown();
  }
  // `ip route add|append|prepend|replace DST via GW` (metric `metric`).
  Result<inet::RouteInfo> add(Control& ctl, std::string_view how, std::string_view dst,
                              std::string_view gw, std::uint32_t metric = 0) {
    auto r = route_req(dst, dst.find(':') == std::string_view::npos ? 24 : 64);
    r.gateway = ip(gw);
    if (metric) r.priority = metric;
    r.create = how != "replace-only";
    r.excl = how == "add";
    r.append = how == "append";
    r.replace = how == "replace";
    return inet::add_route(ctl, ns(ctl), r);
  }
  std::vector<std::string> gateways(Control& ctl, int family) {
    std::vector<std::string> out;
    for (const inet::RouteInfo& r : inet::list_routes(ctl, ns(ctl), family)) {
      if (r.protocol != RTPROT_KERNEL) out.push_back(gateways_of(r));
    }
    return out;
  }
  Device* d = nullptr;
  FlagRecorder rec;
};

TEST_F(RouteOrderTest, Ipv4AliasesGoWhereTheFlagsSay) {
  auto ctl = engine->control();
  ASSERT_TRUE(add(ctl, "add", "10.9.0.0", "10.0.0.2"));
  ASSERT_TRUE(add(ctl, "append", "10.9.0.0", "10.0.0.3"));
  ASSERT_TRUE(add(ctl, "prepend", "10.9.0.0", "10.0.0.4"));
  EXPECT_EQ(add(ctl, "prepend", "10.9.0.0", "10.0.0.4").error().code, EEXIST);
  EXPECT_EQ(add(ctl, "add", "10.9.0.0", "10.0.0.5").error().code, EEXIST);
  EXPECT_EQ(gateways(ctl, AF_INET), (std::vector<std::string>{"10.0.0.4", "10.0.0.2", "10.0.0.3"}));
  // A replace takes the first's place; by the first's twin it does nothing; by another's,
  // EEXIST.
  ASSERT_TRUE(add(ctl, "replace", "10.9.0.0", "10.0.0.7"));
  ASSERT_TRUE(add(ctl, "replace", "10.9.0.0", "10.0.0.7"));
  EXPECT_EQ(add(ctl, "replace", "10.9.0.0", "10.0.0.3").error().code, EEXIST);
  EXPECT_EQ(gateways(ctl, AF_INET), (std::vector<std::string>{"10.0.0.7", "10.0.0.2", "10.0.0.3"}));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"+ 600 10.0.0.2", "+ c00 10.0.0.3",
                                                  "+ 400 10.0.0.4", "+ 100 10.0.0.7"}));
}

TEST_F(RouteOrderTest, Ipv6RoutesWithAGatewayJoinAsSiblings) {
  auto ctl = engine->control();
  ASSERT_TRUE(add(ctl, "add", "2001:db9::", "2001:db8::2"));
  ASSERT_TRUE(add(ctl, "append", "2001:db9::", "2001:db8::3"));
  ASSERT_TRUE(add(ctl, "prepend", "2001:db9::", "2001:db8::4"));
  EXPECT_EQ(add(ctl, "prepend", "2001:db9::", "2001:db8::3").error().code, EEXIST);
  EXPECT_EQ(add(ctl, "add", "2001:db9::", "2001:db8::5").error().code, EEXIST);
  EXPECT_EQ(gateways(ctl, AF_INET6),
            (std::vector<std::string>{"2001:db8::2,2001:db8::3,2001:db8::4"}));
  // One sibling goes by its gateway, announced alone; the route keeps the others.
  auto one = route_req("2001:db9::", 64);
  one.gateway = ip("2001:db8::3");
  ASSERT_TRUE(inet::delete_route(ctl, ns(ctl), one));
  EXPECT_EQ(gateways(ctl, AF_INET6), (std::vector<std::string>{"2001:db8::2,2001:db8::4"}));
  // A replace takes the whole route.
  ASSERT_TRUE(add(ctl, "replace", "2001:db9::", "2001:db8::9"));
  EXPECT_EQ(gateways(ctl, AF_INET6), (std::vector<std::string>{"2001:db8::9"}));
  ASSERT_TRUE(add(ctl, "append", "2001:db9::", "2001:db8::a"));
  EXPECT_EQ(rec.events, (std::vector<std::string>{
                            "+ 600 2001:db8::2", "+ c00 2001:db8::3,2001:db8::2",
                            "+ 400 2001:db8::4,2001:db8::2,2001:db8::3", "- 0 2001:db8::3",
                            "+ 100 2001:db8::9", "+ c00 2001:db8::a,2001:db8::9"}));
  // A device's delete announces the siblings one by one.
  rec.events.clear();
  ASSERT_TRUE(ctl.delete_link(*d));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"- 0 2001:db8::9", "- 0 2001:db8::a"}));
}

// Without a gateway, a delete takes every sibling, announced as one route.
TEST_F(RouteOrderTest, Ipv6DeleteWithoutAGatewayTakesTheWholeRoute) {
  auto ctl = engine->control();
  ASSERT_TRUE(add(ctl, "add", "2001:db9::", "2001:db8::2"));
  ASSERT_TRUE(add(ctl, "append", "2001:db9::", "2001:db8::3"));
  rec.events.clear();
  ASSERT_TRUE(inet::delete_route(ctl, ns(ctl), route_req("2001:db9::", 64)));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"- 0 2001:db8::2,2001:db8::3"}));
  EXPECT_TRUE(gateways(ctl, AF_INET6).empty());
}

}  // namespace
}  // namespace ifcore::test
