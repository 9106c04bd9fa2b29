// Device names: Linux's validation rules, "%d" allocation, rename, reuse after delete.
#include "support/engine_fixture.h"

#include "core/registry.h"

namespace ifcore {
namespace {

struct NameCase {
  const char* name;
  bool valid;
};

class NameValidation : public ::testing::TestWithParam<NameCase> {};

TEST_P(NameValidation, FollowsLinuxRules) {
  auto [name, valid] = GetParam();
  auto r = validate_device_name(name);
  EXPECT_EQ(bool(r), valid) << '"' << name << '"';
  if (!r) {
    EXPECT_EQ(r.error().code, EINVAL);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, NameValidation,
    ::testing::Values(NameCase{"eth0", true}, NameCase{"a", true},
                      NameCase{"123456789012345", true},    // 15 bytes: the maximum
                      NameCase{"1234567890123456", false},  // 16 bytes
                      NameCase{"", false}, NameCase{".", false}, NameCase{"..", false},
                      NameCase{"...", true}, NameCase{".a", true}, NameCase{"a/b", false},
                      NameCase{"a:b", false}, NameCase{"a b", false}, NameCase{"a\tb", false},
                      NameCase{"a\nb", false}, NameCase{"a\vb", false}, NameCase{"a\rb", false},
                      NameCase{"a\fb", false}, NameCase{"eth0.100", true},
                      NameCase{"veth-x_y@z", true}, NameCase{"a\xa0", false},
                      NameCase{"\xc3\xa9t\xc3\xa9", true}));

TEST(NameValidationBytes, EveryByteValueInTheMiddleOfAName) {
  // Linux: dev_valid_name refuses '/', ':', NUL and what the kernel's isspace() calls
  // space (' ', '\t' to '\r', and 0xa0 in its Latin-1 table).
  for (unsigned c = 0; c < 256; ++c) {
    bool bad = c == '/' || c == ':' || c == 0 || c == ' ' || (c >= 9 && c <= 13) || c == 0xa0;
    std::string name = "a";
    name += static_cast<char>(c);
    name += "b";
    auto r = validate_device_name(name);
    EXPECT_EQ(bool(r), !bad) << "byte " << c;
  }
}

TEST(NamePattern, OnlyOnePercentD) {
  EXPECT_TRUE(is_name_pattern("dummy%d"));
  EXPECT_TRUE(is_name_pattern("%dx"));
  EXPECT_FALSE(is_name_pattern("dummy"));
  EXPECT_FALSE(is_name_pattern("d%s"));
  EXPECT_FALSE(is_name_pattern("d%d%d"));
  EXPECT_FALSE(is_name_pattern("d%"));
}

using Names = test::CoreTest;

TEST_F(Names, PatternTakesLowestFreeNumber) {
  auto ctl = engine->control();
  EXPECT_EQ(dummy(ctl, "dummy%d")->name(), "dummy0");
  EXPECT_EQ(dummy(ctl, "dummy%d")->name(), "dummy1");
  Device* two = dummy(ctl, "dummy%d");
  EXPECT_EQ(two->name(), "dummy2");
  dummy(ctl, "dummy4");  // taken by hand
  ASSERT_TRUE(ctl.delete_link(*ctl.find(ns(ctl), "dummy1")));
  EXPECT_EQ(dummy(ctl, "dummy%d")->name(), "dummy1");  // freed: lowest again
  EXPECT_EQ(dummy(ctl, "dummy%d")->name(), "dummy3");
  EXPECT_EQ(dummy(ctl, "dummy%d")->name(), "dummy5");  // 4 skipped
}

TEST_F(Names, BadPatternIsEinval) {
  auto ctl = engine->control();
  auto r = ctl.create_link(ns(ctl), test::link_req("dummy", "d%d%d"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  r = ctl.create_link(ns(ctl), test::link_req("dummy", "d%s"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
}

TEST_F(Names, DuplicateIsEexistAndChangesNothing) {
  auto ctl = engine->control();
  dummy(ctl, "d0");
  auto before = ns(ctl).device_count();
  auto r = ctl.create_link(ns(ctl), test::link_req("dummy", "d0"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EEXIST);
  EXPECT_EQ(ns(ctl).device_count(), before);
}

TEST_F(Names, NameFreedByDeleteIsReusableAtOnce) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "x0");
  int old_index = d->ifindex();
  ASSERT_TRUE(ctl.delete_link(*d));
  Device* again = dummy(ctl, "x0");
  ASSERT_NE(again, nullptr);
  EXPECT_GT(again->ifindex(), old_index);
}

TEST_F(Names, RenameMovesTheName) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "a0");
  ASSERT_TRUE(ctl.rename(*d, "b0"));
  EXPECT_EQ(d->name(), "b0");
  EXPECT_EQ(ctl.find(ns(ctl), "a0"), nullptr);
  EXPECT_EQ(ctl.find(ns(ctl), "b0"), d);
  dummy(ctl, "a0");  // the old name is free
  auto r = ctl.rename(*d, "a0");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EEXIST);
  EXPECT_EQ(d->name(), "b0");
  r = ctl.rename(*d, "bad/name");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
}

// Linux 6.18: dev_change_name renames a running device (it once answered EBUSY).
TEST_F(Names, AnUpDeviceIsRenamedAndFoundByItsNewName) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "up0");
  ASSERT_TRUE(ctl.open(*d));
  ASSERT_TRUE(ctl.rename(*d, "up1"));
  EXPECT_EQ(d->name(), "up1");
  EXPECT_TRUE(d->is_up());
  rcu::ReadGuard g;
  EXPECT_EQ(d->ns().find_by_name_rcu("up1"), d);
  EXPECT_EQ(d->ns().find_by_name_rcu("up0"), nullptr);
}

}  // namespace
}  // namespace ifcore

namespace ifcore {
namespace {

using NamespaceIds = test::CoreTest;

// A namespace takes the next id, or the one it is given (a restored namespace keeps its
// own); a taken or negative id is refused and changes nothing.
TEST_F(NamespaceIds, ANamespaceTakesTheNextIdOrTheOneItIsGiven) {
  auto ctl = engine->control();
  auto a = ctl.create_namespace("a");
  ASSERT_TRUE(a);
  auto c = ctl.create_namespace("c", (*a)->id() + 5);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ((*c)->id(), (*a)->id() + 5);
  auto taken = ctl.create_namespace("d", (*c)->id());
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().code, EEXIST);
  EXPECT_EQ(ctl.create_namespace("d", -2).error().code, EINVAL);
  EXPECT_EQ(ctl.find_namespace("d"), nullptr);
  auto next = ctl.create_namespace("d");
  ASSERT_TRUE(next);
  EXPECT_EQ((*next)->id(), (*c)->id() + 1);
}

}  // namespace
}  // namespace ifcore
