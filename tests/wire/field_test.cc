// tests/wire/field_test.cc — set_field: a decoded value into its field, never cut to fit.
#include "rtnl/wire/field.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace ifcore::wire {
namespace {

TEST(Field, ValueThatFitsIsSet) {
  std::optional<std::uint8_t> f;
  ASSERT_TRUE(set_field(f, Result<std::uint32_t>(200u)));
  EXPECT_EQ(f, 200);
  std::optional<std::uint64_t> wide;
  ASSERT_TRUE(set_field(wide, Result<std::uint32_t>(0xffffffffu)));
  EXPECT_EQ(wide, 0xffffffffu);
}

TEST(Field, ValueThatDoesNotFitIsRefusedAndLeavesTheField) {
  std::optional<std::uint8_t> f = 7;
  auto r = set_field(f, Result<std::uint32_t>(256u));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ERANGE);
  EXPECT_EQ(f, 7);
  std::optional<int> s;
  EXPECT_FALSE(set_field(s, Result<std::uint32_t>(0x80000000u)));
  EXPECT_FALSE(s);
  std::optional<std::uint32_t> u;
  EXPECT_FALSE(set_field(u, Result<int>(-1)));
}

TEST(Field, ErrorOfTheReadIsPassedOn) {
  std::optional<std::uint32_t> f;
  auto r = set_field(f, Result<std::uint32_t>(fail(EINVAL, "short attribute")));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_FALSE(f);
  std::optional<std::string> s;
  ASSERT_TRUE(set_field(s, Result<std::string>(std::string("eth0"))));
  EXPECT_EQ(s, "eth0");
}

}  // namespace
}  // namespace ifcore::wire
