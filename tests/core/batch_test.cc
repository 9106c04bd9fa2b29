// Unregister batches: one notifier pass per event and ONE grace period per batch; the
// `single` policy pays per device; a namespace goes in one batch.
#include <fmt/format.h>

#include "support/engine_fixture.h"

namespace ifcore {
namespace {

using Batch = test::CoreTest;

TEST_F(Batch, TenThousandDevicesCostExactlyOneGracePeriod) {
  auto ctl = engine->control();
  std::vector<Device*> devs;
  for (int i = 0; i < 10000; ++i) devs.push_back(dummy(ctl, "d%d"));
  for (int i = 0; i < 10000; i += 2) ASSERT_TRUE(ctl.open(*devs[i]));
  Stats before = engine->stats();
  auto t0 = Clock::now();
  UnregisterBatch batch;
  for (Device* d : devs) ASSERT_TRUE(ctl.queue_unregister(*d, batch));
  ctl.commit(batch);
  auto elapsed = Clock::now() - t0;
  Stats after = engine->stats();
  // The passes took some of the commit's time, in nanoseconds (counted in ticks).
  EXPECT_GT(after.notifier_time, before.notifier_time);
  EXPECT_LE(after.notifier_time - before.notifier_time, elapsed + elapsed / 10);
  EXPECT_EQ(after.grace_periods - before.grace_periods, 1u);
  EXPECT_EQ(after.batches - before.batches, 1u);
  // GOING_DOWN, DOWN, UNREGISTER: one pass each over the whole batch.
  EXPECT_EQ(after.notifier_passes - before.notifier_passes, 3u);
  EXPECT_EQ(after.devices_unregistered - before.devices_unregistered, 10000u);
  EXPECT_EQ(ns(ctl).device_count(), 1u);  // lo
  // Names are free at once.
  EXPECT_NE(dummy(ctl, "d0"), nullptr);
}

// A batch bigger than the cache is unlisted bucket by bucket of the name table, not in the
// batch's order: every name, altname and ifindex of it is free afterwards, whatever its
// namespace or whether it was renamed, and the devices left out stay listed.
TEST_F(Batch, ABatchBeyondTheCacheFreesEveryNameAndIndex) {
  auto ctl = engine->control();
  auto other = ctl.create_namespace("other");
  ASSERT_TRUE(other);
  constexpr int kEach = 10000;  // 20 000 in all: unlisted bucket by bucket
  std::vector<Device*> doomed, kept;
  std::vector<int> indexes;
  for (int i = 0; i < kEach; ++i) {
    doomed.push_back(dummy(ctl, fmt::format("d{}", i)));
    auto o = ctl.create_link(**other, test::link_req("dummy", fmt::format("o{}", i)));
    ASSERT_TRUE(o);
    doomed.push_back(*o);
    if (i % 1000 == 0) kept.push_back(dummy(ctl, fmt::format("k{}", i)));
  }
  ASSERT_TRUE(ctl.add_altname(*doomed[0], "alt-of-d0"));
  ASSERT_TRUE(ctl.rename(*doomed[2], "renamed-d1"));
  for (Device* d : doomed) indexes.push_back(d->ifindex());
  Stats before = engine->stats();
  ASSERT_TRUE(ctl.delete_links(doomed));
  Stats after = engine->stats();
  EXPECT_EQ(after.devices_unregistered - before.devices_unregistered, doomed.size());
  EXPECT_EQ(after.batches - before.batches, 1u);
  for (int i = 0; i < kEach; ++i) {
    ASSERT_EQ(ctl.find(ns(ctl), fmt::format("d{}", i)), nullptr) << i;
    ASSERT_EQ(ctl.find(**other, fmt::format("o{}", i)), nullptr) << i;
  }
  EXPECT_EQ(ctl.find(ns(ctl), "alt-of-d0"), nullptr);
  EXPECT_EQ(ctl.find(ns(ctl), "renamed-d1"), nullptr);
  for (std::size_t i = 0; i < indexes.size(); ++i)
    ASSERT_EQ(ctl.find(i % 2 ? **other : ns(ctl), indexes[i]), nullptr) << indexes[i];
  for (Device* k : kept) {
    EXPECT_EQ(ctl.find(ns(ctl), k->name()), k);
    EXPECT_EQ(ctl.find(ns(ctl), k->ifindex()), k);
  }
  EXPECT_EQ(ns(ctl).device_count(), 1 + kept.size());  // lo and the kept
  EXPECT_EQ((*other)->device_count(), 1u);             // its lo
  // The names are free for new devices at once.
  EXPECT_NE(dummy(ctl, "d0"), nullptr);
  EXPECT_NE(dummy(ctl, "alt-of-d0"), nullptr);
}

class SingleBatch : public test::CoreTest {
  void configure(EngineConfig& cfg) override { cfg.policies.unregister = UnregisterPolicy::Single; }
};

TEST_F(SingleBatch, EachDevicePaysItsOwnGracePeriods) {
  auto ctl = engine->control();
  std::vector<Device*> devs;
  for (int i = 0; i < 50; ++i) devs.push_back(dummy(ctl, "d%d"));
  for (Device* d : devs) ASSERT_TRUE(ctl.open(*d));
  Stats before = engine->stats();
  ASSERT_TRUE(ctl.delete_links(devs));
  Stats after = engine->stats();
  EXPECT_GE(after.grace_periods - before.grace_periods, 50u);
  EXPECT_EQ(after.batches - before.batches, 50u);
}

TEST_F(Batch, DestroyingANamespaceUnregistersAllOfItsDevicesInOneBatch) {
  auto ctl = engine->control();
  auto other = ctl.create_namespace("gone");
  ASSERT_TRUE(other);
  for (int i = 0; i < 500; ++i)
    ASSERT_TRUE(ctl.create_link(**other, test::link_req("dummy", "d%d")));
  Stats before = engine->stats();
  ASSERT_TRUE(ctl.destroy_namespace(**other));
  Stats after = engine->stats();
  EXPECT_EQ(after.batches - before.batches, 1u);
  EXPECT_EQ(after.grace_periods - before.grace_periods, 1u);
  EXPECT_EQ(after.devices_unregistered - before.devices_unregistered, 501u);  // with its lo
  EXPECT_EQ(ctl.find_namespace("gone"), nullptr);
  // The default namespace is untouched.
  EXPECT_EQ(ns(ctl).device_count(), 1u);
}

TEST_F(Batch, NamespaceNamesAreCheckedAndUnique) {
  auto ctl = engine->control();
  auto dup = ctl.create_namespace("default");
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, EEXIST);
  for (const char* bad : {"", ".", "..", "a/b"}) {
    auto r = ctl.create_namespace(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, EINVAL);
  }
}

TEST_F(Batch, LoopbackCannotBeDeleted) {
  auto ctl = engine->control();
  auto r = ctl.delete_link(*ns(ctl).loopback());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EOPNOTSUPP);
  EXPECT_EQ(ns(ctl).loopback()->state(), RegState::Registered);
}

TEST_F(Batch, DevicesAreReleasedWithoutWaiting) {
  Device* d;
  {
    auto ctl = engine->control();
    d = dummy(ctl, "r0");
    ASSERT_TRUE(ctl.delete_link(*d));
  }
  EXPECT_TRUE(engine->drain(std::chrono::seconds(5)));
  Stats s = engine->stats();
  EXPECT_EQ(s.devices_released, s.devices_unregistered);
  EXPECT_EQ(s.ref_wait_time, Duration::zero());
  EXPECT_EQ(s.ref_waits, 0u);
}

// UnregisterBatch marks membership in the device (Linux: dev->unreg_list); contains() must
// stay exact when batches overlap, are copied, moved, committed or dropped.
TEST_F(Batch, ContainsIsExactForTwoBatchesBuiltTogether) {
  auto ctl = engine->control();
  Device* a = dummy(ctl, "a0");
  Device* b = dummy(ctl, "b0");
  Device* c = dummy(ctl, "c0");
  UnregisterBatch first, second;
  EXPECT_FALSE(first.contains(*a));
  first.add(*a);
  first.add(*b);
  second.add(*b);  // b is now in both: its mark is the second's
  second.add(*c);
  EXPECT_TRUE(first.contains(*a));
  EXPECT_TRUE(first.contains(*b));
  EXPECT_FALSE(first.contains(*c));
  EXPECT_FALSE(second.contains(*a));
  EXPECT_TRUE(second.contains(*b));
  EXPECT_TRUE(second.contains(*c));
  // Adding again is still a no-op for both.
  first.add(*b);
  second.add(*b);
  EXPECT_EQ(first.size(), 2u);
  EXPECT_EQ(second.size(), 2u);
  ctl.commit(second);  // b and c go
  EXPECT_TRUE(second.empty());
  EXPECT_FALSE(second.contains(*a));
  // The commit took b out of the first batch (Linux: list_move): b is freed once its grace
  // period is over, and the first batch's commit must not read it.
  EXPECT_EQ(first.size(), 1u);
  EXPECT_TRUE(first.contains(*a));
  engine->drain();  // b is freed now
  ctl.commit(first);
  EXPECT_EQ(ctl.find(ns(ctl), "a0"), nullptr);
  EXPECT_EQ(ns(ctl).device_count(), 1u);  // lo
}

// A copy, an original and a batch moved from another each lose the devices another
// commit unregistered, however they were made; a batch left empty commits nothing.
TEST_F(Batch, ACommitTakesItsDevicesOutOfCopiesAndMovedBatches) {
  auto ctl = engine->control();
  Device* a = dummy(ctl, "a0");
  Device* b = dummy(ctl, "b0");
  Device* c = dummy(ctl, "c0");
  UnregisterBatch orig;
  orig.add(*a);
  orig.add(*b);
  UnregisterBatch copy(orig);
  UnregisterBatch moved_from;
  moved_from.add(*b);
  moved_from.add(*c);
  UnregisterBatch moved(std::move(moved_from));
  UnregisterBatch assigned;
  assigned = moved;  // b and c
  ctl.commit(copy);  // a and b go
  EXPECT_TRUE(copy.empty());
  EXPECT_EQ(orig.size(), 0u);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved.devices()[0], c);
  ASSERT_EQ(assigned.size(), 1u);
  EXPECT_EQ(assigned.devices()[0], c);
  engine->drain();   // a and b are freed
  ctl.commit(orig);  // nothing left: a no-op
  EXPECT_EQ(ctl.find(ns(ctl), "c0"), c);
  ctl.commit(moved);
  EXPECT_EQ(ctl.find(ns(ctl), "c0"), nullptr);
  EXPECT_EQ(assigned.size(), 0u);
  ctl.commit(assigned);
  EXPECT_EQ(ns(ctl).device_count(), 1u);  // lo
}

TEST_F(Batch, ContainsForgetsADroppedBatch) {
  auto ctl = engine->control();
  Device* a = dummy(ctl, "a0");
  {
    UnregisterBatch dropped;
    dropped.add(*a);
    EXPECT_TRUE(dropped.contains(*a));
  }
  UnregisterBatch next;
  EXPECT_FALSE(next.contains(*a));
  ASSERT_TRUE(ctl.queue_unregister(*a, next));
  EXPECT_TRUE(next.contains(*a));
  EXPECT_EQ(next.size(), 1u);
  ctl.commit(next);
  EXPECT_EQ(ctl.find(ns(ctl), "a0"), nullptr);
}

TEST_F(Batch, ContainsFollowsMovesAndCopies) {
  auto ctl = engine->control();
  Device* a = dummy(ctl, "a0");
  Device* b = dummy(ctl, "b0");
  UnregisterBatch orig;
  orig.add(*a);
  UnregisterBatch copy(orig);
  EXPECT_TRUE(copy.contains(*a));
  copy.add(*b);  // only the copy holds b
  EXPECT_TRUE(copy.contains(*b));
  EXPECT_FALSE(orig.contains(*b));
  UnregisterBatch moved(std::move(orig));
  EXPECT_TRUE(moved.contains(*a));
  EXPECT_FALSE(moved.contains(*b));
  EXPECT_FALSE(orig.contains(*a));  // NOLINT(bugprone-use-after-move): moved-from is empty
  orig.add(*b);
  EXPECT_TRUE(orig.contains(*b));
  EXPECT_FALSE(orig.contains(*a));
  EXPECT_TRUE(copy.contains(*b));
  UnregisterBatch assigned;
  assigned = copy;
  EXPECT_TRUE(assigned.contains(*a));
  EXPECT_TRUE(assigned.contains(*b));
  ctl.commit(assigned);
  EXPECT_EQ(ns(ctl).device_count(), 1u);  // lo
}

TEST_F(Batch, ADeviceQueuedTwiceIsUnregisteredOnce) {
  auto ctl = engine->control();
  Device* a = dummy(ctl, "a0");
  Device* b = dummy(ctl, "b0");
  Stats before = engine->stats();
  std::vector<Device*> devs{a, b, a, b, a};
  ASSERT_TRUE(ctl.delete_links(devs));
  Stats after = engine->stats();
  EXPECT_EQ(after.devices_unregistered - before.devices_unregistered, 2u);
  EXPECT_EQ(ns(ctl).device_count(), 1u);
}

}  // namespace
}  // namespace ifcore
