// Address values and policy parsing.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include "ifcore/addr.h"
#include "ifcore/config.h"

namespace ifcore {
namespace {

TEST(HwAddr, ParsesAndFormatsEthernet) {
  auto a = HwAddr::parse("02:00:0a:ff:00:01");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->size(), 6u);
  EXPECT_EQ(a->to_string(), "02:00:0a:ff:00:01");
  EXPECT_TRUE(a->is_valid_ether());
}

TEST(HwAddr, RejectsBadText) {
  for (const char* bad : {"", ":", "zz:00", "00::01", "00:", "123:00"}) {
    auto a = HwAddr::parse(bad);
    ASSERT_FALSE(a) << bad;
    EXPECT_EQ(a.error().code, EINVAL) << bad;
  }
}

TEST(HwAddr, RandomIsLocalUnicast) {
  for (int i = 0; i < 100; ++i) {
    auto a = HwAddr::random_ether();
    EXPECT_TRUE(a.is_valid_ether());
    EXPECT_EQ(a[0] & 0x03, 0x02);
  }
}

TEST(IpAddr, ParsesBothFamilies) {
  auto v4 = IpAddr::parse("10.1.2.3");
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->family(), AF_INET);
  EXPECT_EQ(v4->v4_host(), 0x0a010203u);
  EXPECT_EQ(v4->masked(8).to_string(), "10.0.0.0");
  auto v6 = IpAddr::parse("2002::1");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->family(), AF_INET6);
  EXPECT_EQ(v6->masked(16).to_string(), "2002::");
  EXPECT_TRUE(IpAddr::parse("fe80::1")->is_v6_link_local());
  EXPECT_FALSE(IpAddr::parse("10.0.0.256"));
}

TEST(Policies, ParseAndPrint) {
  auto p = Policies::parse("ref-wait=poll250,unregister=single,dst-priority=0");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ref_wait, RefWaitPolicy::Poll250);
  EXPECT_EQ(p->unregister, UnregisterPolicy::Single);
  EXPECT_EQ(p->dst_priority, 0);
  auto again = Policies::parse(p->to_string());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->to_string(), p->to_string());
  auto legacy = Policies::parse("legacy");
  ASSERT_TRUE(legacy);
  EXPECT_EQ(legacy->grace, GracePolicy::Kernel);
  auto bad = Policies::parse("ref-wait=sometimes");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, EINVAL);
  EXPECT_NE(bad.error().message.find("ref-wait"), std::string::npos);
}

}  // namespace
}  // namespace ifcore
