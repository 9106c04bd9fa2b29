// Veth: pairs made and deleted together, peers in other namespaces, carrier rules.
#include <linux/veth.h>

#include <memory>

#include "kinds/veth.h"
#include "kinds_fixture.h"

namespace ifcore::test {
namespace {

class VethTest : public KindsTest {
 protected:
  static LinkRequest pair(std::string name, std::string peer, std::string peer_ns = {}) {
    auto p = std::make_shared<LinkRequest>();
    p->name = std::move(peer);
    if (!peer_ns.empty()) p->net_ns_name = std::move(peer_ns);
    Attr a{VETH_INFO_PEER, AttrShape::LinkMsg};
    a.link = std::move(p);
    return with_data("veth", std::move(name), {a});
  }
};

TEST_F(VethTest, CreatesBothEndsEachTheOthersLink) {
  auto ctl = engine->control();
  Device* a = must(ctl.create_link(def(ctl), pair("va", "vb")));
  ASSERT_TRUE(a);
  Device* b = ctl.find(def(ctl), "vb");
  ASSERT_TRUE(b);
  EXPECT_EQ(kinds::Veth::peer(*a), b);
  EXPECT_EQ(a->snapshot_locked().link_ifindex, b->ifindex());
  EXPECT_EQ(b->snapshot_locked().link_ifindex, a->ifindex());
  EXPECT_EQ(b->kind().name(), "veth");
  EXPECT_TRUE(a->kind().fill_info(*a).empty());  // Linux veth has no fill_info
  EXPECT_FALSE(a->carrier());                    // Linux: carrier off at creation
  EXPECT_FALSE(b->carrier());
}

TEST_F(VethTest, DefaultNames) {
  auto ctl = engine->control();
  LinkRequest r;
  r.kind = "veth";
  Device* d = must(ctl.create_link(def(ctl), r));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name().rfind("veth", 0), 0u);
  EXPECT_NE(kinds::Veth::peer(*d)->name(), d->name());
  EXPECT_EQ(kinds::Veth::peer(*d)->name().rfind("veth", 0), 0u);
  EXPECT_TRUE(must(ctl.create_link(def(ctl), r)));
  EXPECT_EQ(def(ctl).device_count(), 5u);
}

TEST_F(VethTest, CarrierOnlyWhenBothEndsUp) {
  auto ctl = engine->control();
  Device* a = must(ctl.create_link(def(ctl), pair("va", "vb")));
  Device* b = ctl.find(def(ctl), "vb");
  ASSERT_TRUE(ctl.open(*a));
  EXPECT_FALSE(a->carrier());
  ASSERT_TRUE(ctl.open(*b));
  EXPECT_TRUE(a->carrier());
  EXPECT_TRUE(b->carrier());
  ASSERT_TRUE(ctl.close(*a));
  EXPECT_FALSE(a->carrier());
  EXPECT_FALSE(b->carrier());
}

TEST_F(VethTest, TakenPeerNameCreatesNothing) {
  auto ctl = engine->control();
  ASSERT_TRUE(dummy(ctl, "taken"));
  std::string before = summary(ctl);
  EXPECT_FAILS(ctl.create_link(def(ctl), pair("va", "taken")), EEXIST, "\"taken\" already exists");
  EXPECT_FAILS(ctl.create_link(def(ctl), pair("taken", "vb")), EEXIST, "\"taken\" already exists");
  EXPECT_FAILS(ctl.create_link(def(ctl), pair("same", "same")), EEXIST, "already exists");
  EXPECT_EQ(summary(ctl), before);
}

TEST_F(VethTest, InvalidPeerAddressCreatesNothing) {
  auto ctl = engine->control();
  std::string before = summary(ctl);
  LinkRequest r = pair("va", "vb");
  auto peer = std::make_shared<LinkRequest>(*r.info_data[0].link);
  peer->address = HwAddr::ethernet({0x01, 0, 0, 0, 0, 1});  // multicast
  r.info_data[0].link = peer;
  EXPECT_FAILS(ctl.create_link(def(ctl), r), EADDRNOTAVAIL, "Invalid link address");
  EXPECT_EQ(summary(ctl), before);
}

TEST_F(VethTest, PeerInAnotherNamespace) {
  auto ctl = engine->control();
  Namespace* other = *ctl.create_namespace("other");
  Device* a = must(ctl.create_link(def(ctl), pair("va", "vb", "other")));
  ASSERT_TRUE(a);
  Device* b = ctl.find(*other, "vb");
  ASSERT_TRUE(b);
  EXPECT_EQ(ctl.find(def(ctl), "vb"), nullptr);
  EXPECT_EQ(kinds::Veth::peer(*a), b);
  EXPECT_EQ(&b->ns(), other);
  // A missing namespace creates nothing.
  std::string before = summary(ctl);
  EXPECT_FAILS(ctl.create_link(def(ctl), pair("vc", "vd", "nowhere")), EINVAL, "nowhere");
  EXPECT_EQ(summary(ctl), before);
  // Deleting one end deletes the other, across namespaces, in one batch.
  auto b0 = batches();
  ASSERT_TRUE(ctl.delete_link(*b));
  EXPECT_EQ(batches() - b0, 1u);
  EXPECT_EQ(ctl.find(def(ctl), "va"), nullptr);
}

TEST_F(VethTest, DeletingEitherEndDeletesBothInOneBatch) {
  auto ctl = engine->control();
  Device* a = must(ctl.create_link(def(ctl), pair("va", "vb")));
  ASSERT_TRUE(ctl.open(*a));
  auto before = engine->stats();
  ASSERT_TRUE(ctl.delete_link(*ctl.find(def(ctl), "vb")));
  auto after = engine->stats();
  EXPECT_EQ(after.batches - before.batches, 1u);
  EXPECT_EQ(after.devices_unregistered - before.devices_unregistered, 2u);
  EXPECT_LE(after.grace_periods - before.grace_periods, 1u);
  EXPECT_EQ(ctl.find(def(ctl), "va"), nullptr);
  EXPECT_EQ(ctl.find(def(ctl), "vb"), nullptr);
}

TEST_F(VethTest, ManyPairsDeletedTogether) {
  auto ctl = engine->control();
  std::vector<Device*> ends;
  for (int i = 0; i < 20; ++i)
    ends.push_back(
        must(ctl.create_link(def(ctl), pair(fmt::format("a{}", i), fmt::format("b{}", i)))));
  auto b0 = batches();
  ASSERT_TRUE(ctl.delete_links(ends));
  EXPECT_EQ(batches() - b0, 1u);
  EXPECT_EQ(def(ctl).device_count(), 1u);  // lo
}

}  // namespace
}  // namespace ifcore::test
