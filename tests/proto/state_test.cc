// Tests of the protocols' private helpers: prefix_of against IpAddr::masked, and the
// per-device route list.
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

}  // namespace
}  // namespace ifcore::test
