// Big batches in the name table's order: a create batch of 16 384 plain dummies or more is
// listed bucket by bucket of the table and a delete batch that big unlisted so. Nothing of
// that order shows: ifindexes follow the requests, the item at fault is the first in request
// order, a failed batch leaves the state as it was.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/registry.h"
#include "support/engine_fixture.h"

namespace ifcore {
namespace {

constexpr int kBig = 20000;  // past the 16 384 from which the bucket order is used

class TableOrder : public test::CoreTest {
 protected:
  static std::vector<LinkRequest> dummies(const std::vector<std::string>& names) {
    std::vector<LinkRequest> reqs;
    reqs.reserve(names.size());
    for (const auto& n : names) reqs.push_back(test::link_req("dummy", n));
    return reqs;
  }
  static std::vector<std::string> names(const char* prefix, int n) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) out.push_back(fmt::format("{}{}", prefix, i));
    return out;
  }
};

TEST_F(TableOrder, IsTheBitReversedHashTheTableKeepsEachEntryUnder) {
  EXPECT_EQ(Registry::split_order(1), std::uint64_t{1} << 63);
  EXPECT_EQ(Registry::split_order(std::uint64_t{1} << 63), 1u);
  EXPECT_EQ(Registry::split_order(0x00000000000000f0ull), 0x0f00000000000000ull);
  auto ctl = engine->control();
  for (const char* name : {"eth0", "d1", "a-longer-name"}) {
    Device* d = dummy(ctl, name);
    ASSERT_NE(d, nullptr);
    // What liburcu stored for the entry (its reverse_hash) is what split_order computes.
    EXPECT_EQ(Registry::table_order(*d), Registry::split_order(Registry::name_hash(name))) << name;
  }
}

// A run of names that differ in a trailing number hashes to consecutive values, so that a
// table bigger than the cache reads its buckets in memory order; any other difference in
// the name (the stem, the number's digit count) moves the hash anywhere.
TEST(NameHash, ARunOfNumberedNamesHashesToConsecutiveValues) {
  const std::uint64_t veth0 = Registry::name_hash("veth0");
  for (std::uint64_t i = 1; i < 10; ++i)
    EXPECT_EQ(Registry::name_hash(fmt::format("veth{}", i)), veth0 + i) << i;
  const std::uint64_t d100 = Registry::name_hash("d100");
  EXPECT_EQ(Registry::name_hash("d999"), d100 + 899);
  EXPECT_EQ(Registry::name_hash("d123456789"), Registry::name_hash("d100000000") + 23456789);
  // Ten digits: the first is the stem's.
  EXPECT_EQ(Registry::name_hash("d1000000005"), Registry::name_hash("d1000000000") + 5);
  EXPECT_NE(Registry::name_hash("d2000000000"), Registry::name_hash("d1000000000") + 1000000000);
  // Another stem or another count of digits is another run, far away.
  auto far = [](std::uint64_t a, std::uint64_t b) { return (a > b ? a - b : b - a) > (1u << 30); };
  EXPECT_TRUE(far(Registry::name_hash("d7"), Registry::name_hash("d007")));
  EXPECT_TRUE(far(Registry::name_hash("d7"), Registry::name_hash("e7")));
  EXPECT_TRUE(far(Registry::name_hash("eth0"), Registry::name_hash("eth")));
  EXPECT_TRUE(far(Registry::name_hash("a-name"), Registry::name_hash("b-name")));
}

// Names of one run 2^20 apart share their bucket in any table of up to 2^20 buckets, and
// runs of many stems with the same number spread as their stems do: each is still found.
TEST_F(TableOrder, NamesInTheSameBucketAreToldApart) {
  auto ctl = engine->control();
  std::vector<std::string> wanted;
  for (int i = 0; i < 64; ++i) wanted.push_back(fmt::format("x{}", i * 1024 * 1024));
  for (int i = 0; i < 64; ++i) wanted.push_back(fmt::format("s{}-0", i));
  for (const auto& n : wanted) ASSERT_NE(dummy(ctl, n), nullptr) << n;
  for (const auto& n : wanted) {
    Device* d = ctl.find(ns(ctl), n);
    ASSERT_NE(d, nullptr) << n;
    EXPECT_EQ(d->name(), n);
  }
  auto again = ctl.create_link(ns(ctl), test::link_req("dummy", "x1048576"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, EEXIST);
  EXPECT_EQ(ns(ctl).device_count(), 1u + wanted.size());
}

TEST_F(TableOrder, ABigBatchGetsItsIfindexesInRequestOrder) {
  auto ctl = engine->control();
  const int before = listing(ctl).back().second;
  const auto wanted = names("b", kBig);
  auto made = ctl.create_links(ns(ctl), dummies(wanted));
  ASSERT_TRUE(made) << made.error().error.message;
  ASSERT_EQ(made->size(), wanted.size());
  for (int i = 0; i < kBig; ++i) {
    Device* d = (*made)[i];
    ASSERT_EQ(d->name(), wanted[i]);
    ASSERT_EQ(d->ifindex(), before + 1 + i) << wanted[i];
    ASSERT_EQ(ctl.find(ns(ctl), wanted[i]), d);
    ASSERT_EQ(ctl.find(ns(ctl), d->ifindex()), d);
  }
  // And they all go in one batch, bucket by bucket: every name free again.
  ASSERT_TRUE(ctl.delete_links(*made));
  for (const auto& n : wanted) ASSERT_EQ(ctl.find(ns(ctl), n), nullptr) << n;
  EXPECT_EQ(ns(ctl).device_count(), 1u);  // lo
}

// A name in use at item 12 345 and a name repeated at item 15 000: whichever the table's
// order lists first, the item reported is the first at fault in request order, and
// nothing is left of the batch.
TEST_F(TableOrder, AFailedBigBatchNamesItsFirstFaultAndChangesNothing) {
  auto ctl = engine->control();
  ASSERT_NE(dummy(ctl, "in-use"), nullptr);
  const auto state = listing(ctl);
  Stats before = engine->stats();
  auto wanted = names("f", kBig);
  wanted[15000] = wanted[100];
  wanted[12345] = "in-use";
  auto made = ctl.create_links(ns(ctl), dummies(wanted));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(12345));
  EXPECT_EQ(made.error().error.code, EEXIST);
  EXPECT_EQ(made.error().error.message, "device \"in-use\" already exists");
  EXPECT_EQ(engine->stats().notifier_passes, before.notifier_passes);
  EXPECT_EQ(listing(ctl), state);
  EXPECT_EQ(ctl.find(ns(ctl), "f0"), nullptr);
  EXPECT_EQ(ctl.find(ns(ctl), "f19999"), nullptr);
  // Without the name in use, the repeated name is the fault.
  wanted[12345] = "f12345";
  made = ctl.create_links(ns(ctl), dummies(wanted));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(15000));
  EXPECT_EQ(listing(ctl), state);
  // Without either, the batch is made, its ifindexes from where they were.
  wanted[15000] = "f15000";
  made = ctl.create_links(ns(ctl), dummies(wanted));
  ASSERT_TRUE(made) << made.error().error.message;
  EXPECT_EQ(made->front()->ifindex(), state.back().second + 1);
  EXPECT_EQ(made->back()->ifindex(), state.back().second + kBig);
}

// Into a namespace of 65 536 devices or more, a batch of 4 096 goes in bulk too: its
// fault is still the first in request order, and nothing is left of it.
TEST_F(TableOrder, ThousandsIntoABigNamespaceFailOrSucceedAsAWhole) {
  auto ctl = engine->control();
  auto many = ctl.create_links(ns(ctl), dummies(names("m", 66000)));
  ASSERT_TRUE(many) << many.error().error.message;
  const auto state = listing(ctl);
  auto wanted = names("t", 5000);
  wanted[4321] = "m17";
  wanted[4500] = wanted[10];
  auto made = ctl.create_links(ns(ctl), dummies(wanted));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(4321));
  EXPECT_EQ(made.error().error.code, EEXIST);
  EXPECT_EQ(listing(ctl), state);
  EXPECT_EQ(ctl.find(ns(ctl), "t0"), nullptr);
  wanted[4321] = "t4321";
  wanted[4500] = "t4500";
  made = ctl.create_links(ns(ctl), dummies(wanted));
  ASSERT_TRUE(made) << made.error().error.message;
  for (int i = 0; i < 5000; ++i) {
    ASSERT_EQ(ctl.find(ns(ctl), wanted[i]), (*made)[i]) << wanted[i];
    ASSERT_EQ((*made)[i]->ifindex(), state.back().second + 1 + i) << wanted[i];
  }
}

// A batch of devices of two namespaces as big is listed item by item, each device in its
// own namespace's tables (the bucket order is one namespace's).
TEST_F(TableOrder, ABigBatchOfTwoNamespacesListsEachDeviceInItsOwn) {
  auto ctl = engine->control();
  auto other = ctl.create_namespace("other");
  ASSERT_TRUE(other);
  const Kind* kind = ctl.find_kind("dummy");
  ASSERT_NE(kind, nullptr);
  RegisterBatch batch;
  for (int i = 0; i < kBig; ++i)
    batch.add(ctl.alloc_device(*kind, i % 2 ? **other : ns(ctl)), fmt::format("t{}", i));
  auto made = ctl.register_batch(batch);
  ASSERT_TRUE(made) << made.error().error.message;
  ASSERT_EQ(made->size(), std::size_t{kBig});
  for (int i = 0; i < kBig; ++i) {
    Namespace& own = i % 2 ? **other : ns(ctl);
    Namespace& not_own = i % 2 ? ns(ctl) : **other;
    const std::string name = fmt::format("t{}", i);
    ASSERT_EQ(ctl.find(own, name), (*made)[i]) << name;
    ASSERT_EQ(ctl.find(own, (*made)[i]->ifindex()), (*made)[i]) << name;
    ASSERT_EQ(ctl.find(not_own, name), nullptr) << name;
  }
  EXPECT_EQ((**other).device_count(), std::size_t{kBig / 2 + 1});  // and its lo
  ASSERT_TRUE(ctl.delete_links(*made));
  EXPECT_EQ(ns(ctl).device_count(), 1u);
}

// A pattern or an ifindex asked for keeps the batch in request order: the pattern's
// numbers and the indexes handed out are those of a batch listed item by item.
TEST_F(TableOrder, PatternsAndIfindexesKeepRequestOrder) {
  auto ctl = engine->control();
  std::vector<LinkRequest> reqs(kBig, test::link_req("dummy", "p%d"));
  reqs[5].ifindex = 100000;
  auto made = ctl.create_links(ns(ctl), reqs);
  ASSERT_TRUE(made) << made.error().error.message;
  for (int i = 0; i < kBig; ++i) ASSERT_EQ((*made)[i]->name(), fmt::format("p{}", i));
  EXPECT_EQ((*made)[5]->ifindex(), 100000);
  EXPECT_EQ((*made)[6]->ifindex(), (*made)[4]->ifindex() + 1);
  // Deleted in one batch (bucket by bucket), all but the last: the pattern's lowest
  // free number is the lowest freed.
  ASSERT_TRUE(ctl.delete_links(std::vector<Device*>(made->begin(), made->end() - 1)));
  Device* again = dummy(ctl, "p%d");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->name(), "p0");
  EXPECT_EQ(ns(ctl).device_count(), 3u);  // lo, p19999 and p0
}

}  // namespace
}  // namespace ifcore
