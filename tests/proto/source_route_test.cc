// Tests of IPv6 source routes (Linux's CONFIG_IPV6_SUBTREES): a route keeps its source
// prefix, is found by destination then source, is deleted only by its own source prefix,
// and is listed in fib6's walk order.
#include "proto/helpers.h"

namespace ifcore::test {
namespace {

class SourceRouteTest : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    auto ctl = engine->control();
    dev = dummy(ctl, "d0");
    ASSERT_TRUE(ctl.open(*dev));
    ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*dev, "2001:db8::1", 64, IFA_F_NODAD)));
  }
  inet::RouteRequest req(std::string_view dst, int len, std::string_view src, int src_len,
                         std::uint32_t metric = 1024) {
    auto r = route_req(dst, len);
    r.oif = dev->ifindex();
    if (src_len) r.src = ip(src);
    r.src_len = static_cast<std::uint8_t>(src_len);
    r.priority = metric;
    return r;
  }
  // The metric of the route a flow to `dst` from `src` takes, or the lookup's errno < 0.
  int metric_for(Control& ctl, std::string_view dst, std::string_view src) {
    inet::Flow f;
    f.dst = ip(dst);
    if (!src.empty()) f.src = ip(src);
    auto r = inet::get_route(ctl, ns(ctl), f);
    return r ? static_cast<int>(r->priority) : -r.error().code;
  }
  // "dst/len from src/len metric" of the routes through d0 that are not the kernel's.
  std::vector<std::string> listed(Control& ctl) {
    std::vector<std::string> out;
    for (const auto& r : inet::list_routes(ctl, ns(ctl), AF_INET6))
      if (r.oif == dev->ifindex() && r.protocol == RTPROT_BOOT)
        out.push_back(fmt::format("{}/{} from {}/{} {}", r.dst.to_string(), r.dst_len,
                                  r.src_len ? r.src.to_string() : "any", r.src_len, r.priority));
    return out;
  }
  Device* dev = nullptr;
};

TEST_F(SourceRouteTest, KeptMaskedAndDistinctBySource) {
  auto ctl = engine->control();
  auto a = inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "2001:db8:2::9", 64));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->src, ip("2001:db8:2::"));
  EXPECT_EQ(a->src_len, 64);
  // Another source prefix, or none, is another route; the same one again exists.
  EXPECT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "2001:db8:3::", 64)));
  EXPECT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "", 0)));
  auto dup = inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "2001:db8:2::", 64));
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, EEXIST);
  auto bad = inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "2001:db8:2::", 129));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, EINVAL);
  EXPECT_EQ(bad.error().message, "Invalid source address length");
  // IPv4 ignores a source prefix, as Linux does.
  auto v4 = route_req("10.9.0.0", 16);
  v4.oif = dev->ifindex();
  v4.src = ip("10.1.0.0");
  v4.src_len = 16;
  auto r4 = inet::add_route(ctl, ns(ctl), v4);
  ASSERT_TRUE(r4) << r4.error().message;
  EXPECT_EQ(r4->src_len, 0);
}

TEST_F(SourceRouteTest, LookupBySourceAndPassingOverAPrefixWithNoMatch) {
  auto ctl = engine->control();
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "", 0, 3)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8::", 32, "", 0, 9)));
  EXPECT_EQ(metric_for(ctl, "2001:db8:1::5", ""), 3);
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "2001:db8:2::", 48, 7)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "2001:db8:2::", 64, 8)));
  EXPECT_EQ(metric_for(ctl, "2001:db8:1::5", "2001:db8:2::7"), 8);    // the longest source
  EXPECT_EQ(metric_for(ctl, "2001:db8:1::5", "2001:db8:2:1::7"), 7);  // the /48 only
  // No source prefix matches: the /64 is passed over, its own route without a source too.
  EXPECT_EQ(metric_for(ctl, "2001:db8:1::5", "2001:db8:9::7"), 9);
  EXPECT_EQ(metric_for(ctl, "2001:db8:1::5", ""), 9);
}

TEST_F(SourceRouteTest, DeletedOnlyByItsOwnSourcePrefix) {
  auto ctl = engine->control();
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "2001:db8:2::", 64)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "", 0)));
  auto other = inet::delete_route(ctl, ns(ctl), req("2001:db8:1::", 64, "2001:db8:9::", 64));
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, ESRCH);
  ASSERT_TRUE(inet::delete_route(ctl, ns(ctl), req("2001:db8:1::", 64, "", 0)));
  EXPECT_EQ(listed(ctl), std::vector<std::string>{"2001:db8:1::/64 from 2001:db8:2::/64 1024"});
  auto again = inet::delete_route(ctl, ns(ctl), req("2001:db8:1::", 64, "", 0));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ESRCH);
  ASSERT_TRUE(inet::delete_route(ctl, ns(ctl), req("2001:db8:1::", 64, "2001:db8:2::", 64)));
  EXPECT_TRUE(listed(ctl).empty());
}

TEST_F(SourceRouteTest, ListedInTheWalkOrderOfFib6) {
  auto ctl = engine->control();
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8::", 32, "", 0, 9)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "", 0)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "2001:db8:3::", 64, 5)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8:1::", 64, "2001:db8:2::", 64)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), req("2001:db8::", 32, "2001:db8:7::", 64)));
  // At each prefix its source routes come first, then the longer prefixes under it, then
  // its own routes.
  EXPECT_EQ(listed(ctl), (std::vector<std::string>{
                             "2001:db8::/32 from 2001:db8:7::/64 1024",
                             "2001:db8:1::/64 from 2001:db8:2::/64 1024",
                             "2001:db8:1::/64 from 2001:db8:3::/64 5",
                             "2001:db8:1::/64 from any/0 1024",
                             "2001:db8::/32 from any/0 9",
                         }));
}

}  // namespace
}  // namespace ifcore::test
