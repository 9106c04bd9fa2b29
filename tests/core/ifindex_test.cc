// ifindex allocation: per namespace, monotonic, never reused until the space wraps.
#include <climits>

#include "support/engine_fixture.h"

namespace ifcore {
namespace {

using Ifindex = test::CoreTest;

TEST_F(Ifindex, LoopbackIsOneAndNumbersAreMonotonic) {
  auto ctl = engine->control();
  ASSERT_NE(ns(ctl).loopback(), nullptr);
  EXPECT_EQ(ns(ctl).loopback()->ifindex(), 1);
  EXPECT_EQ(ns(ctl).loopback()->name(), "lo");
  int last = 1;
  for (int i = 0; i < 50; ++i) {
    Device* d = dummy(ctl, "d%d");
    EXPECT_EQ(d->ifindex(), last + 1);
    last = d->ifindex();
  }
}

TEST_F(Ifindex, FreedIndexIsNotReused) {
  auto ctl = engine->control();
  Device* a = dummy(ctl, "a");
  Device* b = dummy(ctl, "b");
  int ia = a->ifindex(), ib = b->ifindex();
  ASSERT_TRUE(ctl.delete_link(*b));
  ASSERT_TRUE(ctl.delete_link(*a));
  Device* c = dummy(ctl, "c");
  EXPECT_GT(c->ifindex(), ib);
  EXPECT_NE(c->ifindex(), ia);
}

TEST_F(Ifindex, EachNamespaceHasItsOwnSequence) {
  auto ctl = engine->control();
  dummy(ctl, "x0");
  dummy(ctl, "x1");
  auto other = ctl.create_namespace("other");
  ASSERT_TRUE(other);
  EXPECT_EQ((*other)->loopback()->ifindex(), 1);
  auto d = ctl.create_link(**other, test::link_req("dummy", "x0"));  // same name: other table
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)->ifindex(), 2);
}

TEST_F(Ifindex, WrapsPastIntMaxAndSkipsIndexesInUse) {
  auto ctl = engine->control();
  Device* low = dummy(ctl, "low");  // ifindex 2
  ASSERT_EQ(low->ifindex(), 2);
  ns(ctl).set_next_ifindex_locked(INT_MAX - 1);
  EXPECT_EQ(dummy(ctl, "m1")->ifindex(), INT_MAX - 1);
  EXPECT_EQ(dummy(ctl, "m2")->ifindex(), INT_MAX);
  // Wrapped: 1 (lo) and 2 (low) are in use, so 3 is next.
  EXPECT_EQ(dummy(ctl, "m3")->ifindex(), 3);
  {
    rcu::ReadGuard g;
    EXPECT_EQ(ns(ctl).find_by_index_rcu(INT_MAX)->name_rcu(), "m2");
  }
}

TEST_F(Ifindex, RequestedIndexIsHonouredOrEbusy) {
  auto ctl = engine->control();
  LinkRequest req = test::link_req("dummy", "want");
  req.ifindex = 100;
  auto d = ctl.create_link(ns(ctl), req);
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)->ifindex(), 100);
  req.name = "want2";
  auto again = ctl.create_link(ns(ctl), req);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, EBUSY);
  EXPECT_EQ(ctl.find(ns(ctl), "want2"), nullptr);
}

TEST_F(Ifindex, ANameInUseIsReportedBeforeAnIndexInUseOrNotValid) {
  // Linux: register_netdevice looks at the name before the index.
  auto ctl = engine->control();
  LinkRequest req = test::link_req("dummy", "taken");
  req.ifindex = 200;
  ASSERT_TRUE(ctl.create_link(ns(ctl), req));
  auto both = ctl.create_link(ns(ctl), req);  // the same name and the same index
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().code, EEXIST);
  Device* d = ctl.find(ns(ctl), "taken");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->ifindex(), 200);
  req.ifindex = -1;  // the same name and an index that is not valid
  auto negative = ctl.create_link(ns(ctl), req);
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().code, EEXIST);
  req.name = "free";
  auto bad = ctl.create_link(ns(ctl), req);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, EINVAL);
  EXPECT_EQ(ctl.find(ns(ctl), "free"), nullptr);
}

TEST_F(Ifindex, OrderedScanVisitsEveryDeviceOnce) {
  auto ctl = engine->control();
  for (int i = 0; i < 5000; ++i) dummy(ctl, "s%d");
  int count = 0, last = 0;
  rcu::ReadGuard g;
  for (Device* d = ns(ctl).next_by_index_rcu(0); d; d = ns(ctl).next_by_index_rcu(d->ifindex())) {
    EXPECT_GT(d->ifindex(), last);
    last = d->ifindex();
    ++count;
  }
  EXPECT_EQ(count, 5001);  // with lo
}

// Namespace::devices_locked reads the index pages without reading the devices; it must
// list what the ordered scan visits, in the same order, across pages and holes.
TEST_F(Ifindex, DeviceListMatchesTheOrderedScanAcrossPagesAndHoles) {
  auto ctl = engine->control();
  std::vector<Device*> made;
  for (int i = 0; i < 5000; ++i) made.push_back(dummy(ctl, "s%d"));  // past the first page
  for (std::size_t i = 0; i < made.size(); i += 3) ASSERT_TRUE(ctl.delete_link(*made[i]));
  ns(ctl).set_next_ifindex_locked(3 * 4096 + 7);  // a page with nothing before it
  for (int i = 0; i < 10; ++i) dummy(ctl, "t%d");
  std::vector<Device*> scanned;
  {
    rcu::ReadGuard g;
    for (Device* d = ns(ctl).next_by_index_rcu(0); d; d = ns(ctl).next_by_index_rcu(d->ifindex()))
      scanned.push_back(d);
  }
  EXPECT_EQ(scanned.size(), 1 + 5000 - 1667 + 10u);
  EXPECT_EQ(ns(ctl).devices_locked(), scanned);
}

}  // namespace
}  // namespace ifcore
