// Macvlan: modes, source addresses, the passthru rule, the real lower, and the cascade.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/if_link.h>

#include "kinds_fixture.h"

namespace ifcore::test {
namespace {

class MacvlanTest : public KindsTest {
 protected:
  static LinkRequest macvlan(std::string name, int link, std::uint32_t mode = MACVLAN_MODE_BRIDGE) {
    LinkRequest r = with_data("macvlan", std::move(name), {Attr::u32(IFLA_MACVLAN_MODE, mode)});
    r.link = static_cast<std::uint32_t>(link);
    return r;
  }
  static std::vector<std::uint8_t> mac(std::uint8_t last) { return {0x02, 0, 0, 0, 0, last}; }
};

TEST_F(MacvlanTest, CreateShowsWhatLinuxReports) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* m = must(ctl.create_link(def(ctl), macvlan("m0", d->ifindex())));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->snapshot_locked().link_ifindex, d->ifindex());
  EXPECT_NE(m->address(), d->address());
  EXPECT_EQ(m->mtu(), d->mtu());
  auto info = m->kind().fill_info(*m);
  EXPECT_EQ(num(info, IFLA_MACVLAN_MODE), MACVLAN_MODE_BRIDGE);
  EXPECT_EQ(num(info, IFLA_MACVLAN_FLAGS), 0u);
  EXPECT_EQ(num(info, IFLA_MACVLAN_MACADDR_COUNT), 0u);
  EXPECT_EQ(num(info, IFLA_MACVLAN_BC_QUEUE_LEN), 1000u);
  EXPECT_EQ(num(info, IFLA_MACVLAN_BC_QUEUE_LEN_USED), 1000u);
  // Default mode is vepa.
  LinkRequest plain = link_req("macvlan", "m1");
  plain.link = static_cast<std::uint32_t>(d->ifindex());
  Device* m1 = must(ctl.create_link(def(ctl), plain));
  EXPECT_EQ(num(m1->kind().fill_info(*m1), IFLA_MACVLAN_MODE), MACVLAN_MODE_VEPA);
}

// Linux: macvlan_common_newlink fires the link watch once the carrier is taken from an up
// lower: the macvlan is operationally up as soon as it is, made up or set up after.
TEST_F(MacvlanTest, OverAnUpLowerItIsUpAsSoonAsItIs) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.open(*d));
  Device* m0 = must(ctl.create_link(def(ctl), macvlan("m0", d->ifindex())));
  ASSERT_TRUE(ctl.open(*m0));
  EXPECT_TRUE(m0->carrier());
  EXPECT_EQ(m0->reported_operstate(), IF_OPER_UP);
  EXPECT_TRUE(m0->reported_flags() & IFF_RUNNING);
  LinkRequest up = macvlan("m1", d->ifindex());
  up.flags = up.change = IFF_UP;
  Device* m1 = must(ctl.create_link(def(ctl), up));
  EXPECT_EQ(m1->reported_operstate(), IF_OPER_UP);
}

TEST_F(MacvlanTest, OnAMacvlanAttachesToTheRealLower) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* m0 = must(ctl.create_link(def(ctl), macvlan("m0", d->ifindex())));
  Device* m1 = must(ctl.create_link(def(ctl), macvlan("m1", m0->ifindex())));
  ASSERT_TRUE(m1);
  EXPECT_EQ(m1->snapshot_locked().link_ifindex, d->ifindex());
  EXPECT_TRUE(d->has_upper_locked(*m1));
  EXPECT_FALSE(m0->has_upper_locked(*m1));
}

TEST_F(MacvlanTest, InvalidRequestsChangeNothing) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* d1 = dummy(ctl, "d1");
  ASSERT_TRUE(ctl.create_link(def(ctl), macvlan("pt", d1->ifindex(), MACVLAN_MODE_PASSTHRU)));
  ASSERT_TRUE(ctl.create_link(def(ctl), macvlan("m0", d->ifindex())));
  std::string before = summary(ctl);
  LinkRequest no_link = macvlan("x", 0);
  no_link.link.reset();
  EXPECT_FAILS(ctl.create_link(def(ctl), no_link), EINVAL, "link not specified");
  EXPECT_FAILS(ctl.create_link(def(ctl), macvlan("x", 999)), ENODEV, "link does not exist");
  EXPECT_FAILS(ctl.create_link(def(ctl), macvlan("x", d->ifindex(), 3)), EINVAL, "mode 3");
  EXPECT_FAILS(ctl.create_link(def(ctl), macvlan("x", d1->ifindex())), EINVAL, "passthru");
  EXPECT_FAILS(ctl.create_link(def(ctl), macvlan("x", d->ifindex(), MACVLAN_MODE_PASSTHRU)), EINVAL,
               "passthru");
  EXPECT_FAILS(ctl.create_link(def(ctl), macvlan("x", def(ctl).loopback()->ifindex())), EINVAL,
               "cannot be a macvlan lower");
  LinkRequest big = macvlan("x", d->ifindex());
  big.mtu = 1600;
  EXPECT_FAILS(ctl.create_link(def(ctl), big), EINVAL, "exceeds the mtu 1500");
  LinkRequest flags = macvlan("x", d->ifindex());
  flags.info_data.push_back(Attr::u16(IFLA_MACVLAN_FLAGS, 0x10));
  EXPECT_FAILS(ctl.create_link(def(ctl), flags), EINVAL, "flags");
  LinkRequest count = macvlan("x", d->ifindex());
  count.info_data.push_back(Attr::u32(IFLA_MACVLAN_MACADDR_COUNT, 1));
  EXPECT_FAILS(ctl.create_link(def(ctl), count), EINVAL, "read-only");
  LinkRequest src_mode = macvlan("x", d->ifindex());
  src_mode.info_data.push_back(Attr::u32(IFLA_MACVLAN_MACADDR_MODE, MACVLAN_MACADDR_SET));
  EXPECT_FAILS(ctl.create_link(def(ctl), src_mode), EINVAL, "needs source mode");
  LinkRequest bad_mac = macvlan("x", d->ifindex(), MACVLAN_MODE_SOURCE);
  bad_mac.info_data.push_back(Attr::u32(IFLA_MACVLAN_MACADDR_MODE, MACVLAN_MACADDR_SET));
  bad_mac.info_data.push_back(
      raw_list(IFLA_MACVLAN_MACADDR_DATA, IFLA_MACVLAN_MACADDR, {{0x01, 0, 0, 0, 0, 1}}));
  EXPECT_FAILS(ctl.create_link(def(ctl), bad_mac), EADDRNOTAVAIL, "not a valid unicast");
  EXPECT_EQ(summary(ctl), before);
}

TEST_F(MacvlanTest, PassthruTakesTheLowersAddress) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* pt = must(ctl.create_link(def(ctl), macvlan("pt", d->ifindex(), MACVLAN_MODE_PASSTHRU)));
  ASSERT_TRUE(pt);
  EXPECT_EQ(pt->address(), d->address());
  LinkRequest ch;
  ch.has_info_data = true;
  ch.info_data = {Attr::u32(IFLA_MACVLAN_MODE, MACVLAN_MODE_BRIDGE)};
  std::string before = summary(ctl);
  EXPECT_FAILS(ctl.change_link(*pt, ch), EINVAL, "passthru mode cannot be set or cleared");
  EXPECT_EQ(summary(ctl), before);
}

// Linux: macvlan_addr_busy, from macvlan_set_mac_address and macvlan_open — the lower's
// address, or that of another macvlan of the lower that is up, is EADDRINUSE.
TEST_F(MacvlanTest, AnAddressInUseIsRefused) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* m0 = must(ctl.create_link(def(ctl), macvlan("m0", d->ifindex())));
  Device* m1 = must(ctl.create_link(def(ctl), macvlan("m1", d->ifindex())));
  EXPECT_FAILS(ctl.set_address(*m0, d->address()), EADDRINUSE, "in use");
  ASSERT_TRUE(ctl.set_address(*m0, HwAddr(mac(2))));
  ASSERT_TRUE(ctl.set_address(*m1, HwAddr(mac(2))));  // m0 is down: not in the way
  ASSERT_TRUE(ctl.open(*m0));
  EXPECT_FAILS(ctl.open(*m1), EADDRINUSE, "in use");
  EXPECT_FALSE(m1->is_up());
  ASSERT_TRUE(ctl.set_address(*m1, HwAddr(mac(3))));
  EXPECT_TRUE(ctl.open(*m1));
  EXPECT_FAILS(ctl.set_address(*m1, HwAddr(mac(2))), EADDRINUSE, "in use");
}

TEST_F(MacvlanTest, SourceModeAddresses) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  LinkRequest r = macvlan("src", d->ifindex(), MACVLAN_MODE_SOURCE);
  r.info_data.push_back(Attr::u32(IFLA_MACVLAN_MACADDR_MODE, MACVLAN_MACADDR_SET));
  r.info_data.push_back(
      raw_list(IFLA_MACVLAN_MACADDR_DATA, IFLA_MACVLAN_MACADDR, {mac(1), mac(2)}));
  Device* m = must(ctl.create_link(def(ctl), r));
  ASSERT_TRUE(m);
  auto info = m->kind().fill_info(*m);
  EXPECT_EQ(num(info, IFLA_MACVLAN_MACADDR_COUNT), 2u);
  const Attr* list = find_attr(info, IFLA_MACVLAN_MACADDR_DATA);
  ASSERT_TRUE(list);
  ASSERT_EQ(list->nested.size(), 2u);
  // In Linux's hash order (macvlan_eth_hash: 02:00:00:00:00:02 in bucket 226, ...:01 in 247).
  EXPECT_EQ(list->nested[0].bin, mac(2));
  EXPECT_EQ(list->nested[1].bin, mac(1));
  // Add, delete, flush.
  LinkRequest add;
  add.has_info_data = true;
  add.info_data = {Attr::u32(IFLA_MACVLAN_MACADDR_MODE, MACVLAN_MACADDR_ADD),
                   Attr::binary(IFLA_MACVLAN_MACADDR, mac(3))};
  ASSERT_TRUE(ctl.change_link(*m, add));
  EXPECT_EQ(num(m->kind().fill_info(*m), IFLA_MACVLAN_MACADDR_COUNT), 3u);
  LinkRequest del = add;
  del.info_data[0] = Attr::u32(IFLA_MACVLAN_MACADDR_MODE, MACVLAN_MACADDR_DEL);
  ASSERT_TRUE(ctl.change_link(*m, del));
  EXPECT_EQ(num(m->kind().fill_info(*m), IFLA_MACVLAN_MACADDR_COUNT), 2u);
  LinkRequest flush;
  flush.has_info_data = true;
  flush.info_data = {Attr::u32(IFLA_MACVLAN_MACADDR_MODE, MACVLAN_MACADDR_FLUSH)};
  ASSERT_TRUE(ctl.change_link(*m, flush));
  EXPECT_EQ(num(m->kind().fill_info(*m), IFLA_MACVLAN_MACADDR_COUNT), 0u);
  // Leaving source mode is fine; address modes then are not.
  LinkRequest to_bridge;
  to_bridge.has_info_data = true;
  to_bridge.info_data = {Attr::u32(IFLA_MACVLAN_MODE, MACVLAN_MODE_BRIDGE),
                         Attr::u32(IFLA_MACVLAN_BC_QUEUE_LEN, 2000)};
  ASSERT_TRUE(ctl.change_link(*m, to_bridge));
  std::string before = summary(ctl);
  EXPECT_FAILS(ctl.change_link(*m, add), EINVAL, "needs source mode");
  EXPECT_EQ(summary(ctl), before);
  EXPECT_EQ(num(m->kind().fill_info(*m), IFLA_MACVLAN_BC_QUEUE_LEN), 2000u);
}

TEST_F(MacvlanTest, FollowsLowerMtuAndCarrier) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* m = must(ctl.create_link(def(ctl), macvlan("m0", d->ifindex())));
  ASSERT_TRUE(ctl.set_mtu(*d, 1400));
  EXPECT_EQ(m->mtu(), 1400u);
  ASSERT_TRUE(ctl.open(*d));
  ASSERT_TRUE(ctl.open(*m));
  EXPECT_TRUE(m->carrier());
  ASSERT_TRUE(ctl.close(*d));
  EXPECT_FALSE(m->carrier());
}

// Linux: macvlan_device_event unregisters a deleted lower's macvlans in a batch of their own
// inside the lower's (on_m0 among them: a macvlan on a macvlan is on the real lower).
TEST_F(MacvlanTest, LowerDeletedTakesMacvlansInANestedBatch) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(ctl.create_link(def(ctl), macvlan(fmt::format("m{}", i), d->ifindex())));
  Device* m0 = ctl.find(def(ctl), "m0");
  ASSERT_TRUE(ctl.create_link(def(ctl), macvlan("on_m0", m0->ifindex())));
  auto before = engine->stats();
  ASSERT_TRUE(ctl.delete_link(*d));
  auto after = engine->stats();
  EXPECT_EQ(after.batches - before.batches, 2u);
  EXPECT_EQ(after.devices_unregistered - before.devices_unregistered, 7u);
  EXPECT_EQ(def(ctl).device_count(), 1u);
}

}  // namespace
}  // namespace ifcore::test
