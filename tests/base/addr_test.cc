// Address values and policy parsing.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <set>
#include <string>
#include <vector>

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

TEST(HwAddr, RandomAddressesDoNotRepeat) {
  // 20 000 draws of 46 free bits: a repeat has odds of about 1 in 350 000 for a good
  // generator, and is certain for one that cycles early or leaves bytes constant.
  std::set<std::string> seen;
  std::array<std::set<int>, 6> byte_values;
  for (int i = 0; i < 20000; ++i) {
    auto a = HwAddr::random_ether();
    EXPECT_TRUE(seen.insert(a.to_string()).second) << a.to_string();
    for (int b = 0; b < 6; ++b) byte_values[b].insert(a[b]);
  }
  EXPECT_EQ(byte_values[0].size(), 64u);  // the two low bits are fixed
  for (int b = 1; b < 6; ++b) EXPECT_EQ(byte_values[b].size(), 256u) << "byte " << b;
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

// masked() keeps the first prefix_len bits and clears the rest, at every length of both
// families (and clamps lengths outside them), as a bit-by-bit reference does.
TEST(IpAddr, MaskedKeepsExactlyThePrefixBits) {
  for (const char* text : {"255.255.255.255", "10.129.66.3",
                           "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8:8000:1:ff00::ff"}) {
    auto ip = IpAddr::parse(text);
    ASSERT_TRUE(ip);
    const int bits = static_cast<int>(ip->size()) * 8;
    for (int len = -1; len <= bits + 1; ++len) {
      std::vector<std::uint8_t> b(ip->bytes().begin(), ip->bytes().end());
      for (int i = std::max(len, 0); i < bits; ++i)
        b[i / 8] &= static_cast<std::uint8_t>(~(0x80u >> (i % 8)));
      auto want = IpAddr::from_bytes(ip->family(), b);
      ASSERT_TRUE(want);
      EXPECT_EQ(ip->masked(len), *want) << text << "/" << len;
      EXPECT_TRUE(ip->in_prefix(*want, std::max(len, 0))) << text << "/" << len;
    }
  }
}

TEST(IpAddr, OrderIsFamilyThenBytesAsMemcmpOrdersThem) {
  // Every pair of a set that differs in each byte position, high bits and low bits.
  std::vector<IpAddr> all;
  for (const char* t :
       {"::", "::1", "::ff", "0:0:0:1::", "0:0:0:0:1::", "fe80::1", "fe80::1:0", "ff02::1",
        "8000::", "7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::80", "2001:db8::7f",
        "0.0.0.0", "10.0.0.1", "10.0.1.0", "255.255.255.255", "128.0.0.0"})
    all.push_back(*IpAddr::parse(t));
  all.push_back(IpAddr{});
  for (const IpAddr& a : all)
    for (const IpAddr& b : all) {
      auto want = a.family() != b.family() ? a.family() <=> b.family()
                                           : std::memcmp(a.data(), b.data(), 16) <=> 0;
      EXPECT_EQ(a <=> b, want) << a.to_string() << " vs " << b.to_string();
      EXPECT_EQ(a == b, want == 0) << a.to_string() << " vs " << b.to_string();
    }
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

TEST(Policies, LimitsParseAndPrint) {
  auto p = Policies::parse("max-devices=8,max-namespaces=3");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->max_devices, 8u);
  EXPECT_EQ(p->max_namespaces, 3u);
  auto again = Policies::parse(p->to_string());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->max_devices, 8u);
  EXPECT_EQ(again->max_namespaces, 3u);
  EXPECT_EQ(Policies::parse("default")->max_devices, 0u);  // no limit
  auto neg = Policies::parse("max-devices=-1");
  ASSERT_FALSE(neg);
  EXPECT_EQ(neg.error().code, EINVAL);
  EXPECT_NE(neg.error().message.find("max-devices"), std::string::npos);
}

}  // namespace
}  // namespace ifcore
