// Vlan: creation on a lower device, its checks and errnos, attributes, mtu rules, and the
// cascade when the lower device goes.
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_vlan.h>

#include <cstring>

#include "kinds_fixture.h"

namespace ifcore::test {
namespace {

class VlanTest : public KindsTest {
 protected:
  static LinkRequest vlan(std::string name, int link, std::uint16_t id,
                          std::uint16_t proto = ETH_P_8021Q) {
    LinkRequest r = with_data("vlan", std::move(name),
                              {Attr::u16(IFLA_VLAN_ID, id), Attr::be16(IFLA_VLAN_PROTOCOL, proto)});
    r.link = static_cast<std::uint32_t>(link);
    return r;
  }
  static Attr flags(std::uint32_t f, std::uint32_t mask) {
    std::vector<std::uint8_t> b(8);
    std::memcpy(b.data(), &f, 4);
    std::memcpy(b.data() + 4, &mask, 4);
    return Attr::binary(IFLA_VLAN_FLAGS, b);
  }
  static std::vector<std::uint8_t> mapping(std::uint32_t from, std::uint32_t to) {
    std::vector<std::uint8_t> b(8);
    std::memcpy(b.data(), &from, 4);
    std::memcpy(b.data() + 4, &to, 4);
    return b;
  }
};

TEST_F(VlanTest, CreateShowsWhatLinuxReports) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* v = must(ctl.create_link(def(ctl), vlan("d0.10", d->ifindex(), 10)));
  ASSERT_TRUE(v);
  auto s = v->snapshot_locked();
  EXPECT_EQ(s.link_ifindex, d->ifindex());
  EXPECT_EQ(s.mtu, d->mtu());
  EXPECT_EQ(s.address, d->address());  // Linux: the lower's address by default
  EXPECT_TRUE(d->has_upper_locked(*v));
  auto info = v->kind().fill_info(*v);
  EXPECT_EQ(num(info, IFLA_VLAN_ID), 10u);
  EXPECT_EQ(num(info, IFLA_VLAN_PROTOCOL), ETH_P_8021Q);
  EXPECT_EQ(find_attr(info, IFLA_VLAN_PROTOCOL)->shape, AttrShape::Be16);
  const Attr* f = find_attr(info, IFLA_VLAN_FLAGS);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->bin.size(), sizeof(ifla_vlan_flags));
  EXPECT_EQ(f->bin[0], VLAN_FLAG_REORDER_HDR);
  EXPECT_EQ(find_attr(info, IFLA_VLAN_INGRESS_QOS), nullptr);
  // 802.1ad with the same id on the same lower is another vlan.
  EXPECT_TRUE(must(ctl.create_link(def(ctl), vlan("d0.ad10", d->ifindex(), 10, ETH_P_8021AD))));
  // Default name.
  LinkRequest unnamed = vlan("", d->ifindex(), 11);
  unnamed.name.reset();
  Device* n = must(ctl.create_link(def(ctl), unnamed));
  ASSERT_TRUE(n);
  EXPECT_EQ(n->name(), "vlan0");
}

TEST_F(VlanTest, InvalidRequestsChangeNothing) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.create_link(def(ctl), vlan("v10", d->ifindex(), 10)));
  std::string before = summary(ctl);
  int lo = def(ctl).loopback()->ifindex();

  LinkRequest no_link = vlan("x", 0, 5);
  no_link.link.reset();
  EXPECT_FAILS(ctl.create_link(def(ctl), no_link), EINVAL, "link not specified");
  EXPECT_FAILS(ctl.create_link(def(ctl), vlan("x", 999, 5)), ENODEV, "link does not exist");
  LinkRequest no_id = with_data("vlan", "x", {});
  no_id.link = static_cast<std::uint32_t>(d->ifindex());
  EXPECT_FAILS(ctl.create_link(def(ctl), no_id), EINVAL, "VLAN id not specified");
  LinkRequest no_data = link_req("vlan", "x");
  no_data.link = static_cast<std::uint32_t>(d->ifindex());
  EXPECT_FAILS(ctl.create_link(def(ctl), no_data), EINVAL, "VLAN properties not specified");
  EXPECT_FAILS(ctl.create_link(def(ctl), vlan("x", d->ifindex(), 4095)), ERANGE, "Invalid VLAN id");
  EXPECT_FAILS(ctl.create_link(def(ctl), vlan("x", d->ifindex(), 5, 0x0800)), EPROTONOSUPPORT,
               "Invalid VLAN protocol");
  EXPECT_FAILS(ctl.create_link(def(ctl), vlan("x", d->ifindex(), 10)), EEXIST,
               "VLAN device already exists");
  EXPECT_FAILS(ctl.create_link(def(ctl), vlan("x", lo, 5)), EOPNOTSUPP, "VLANs not supported");
  LinkRequest bad_flags = vlan("x", d->ifindex(), 5);
  bad_flags.info_data.push_back(flags(0x100, 0x100));
  EXPECT_FAILS(ctl.create_link(def(ctl), bad_flags), EINVAL, "Invalid VLAN flags");
  LinkRequest big = vlan("x", d->ifindex(), 5);
  big.mtu = 1501;
  EXPECT_FAILS(ctl.create_link(def(ctl), big), EINVAL, "exceeds the mtu 1500");
  LinkRequest bad_addr = vlan("x", d->ifindex(), 5);
  bad_addr.address = HwAddr::ethernet({0, 0, 0, 0, 0, 0});
  EXPECT_FAILS(ctl.create_link(def(ctl), bad_addr), EADDRNOTAVAIL, "Invalid link address");
  // Linux: vlan_validate_qos_map, a mapping shorter than its struct: ERANGE, named by
  // vlan_validate.
  LinkRequest bad_qos = vlan("x", d->ifindex(), 5);
  bad_qos.info_data.push_back(
      raw_list(IFLA_VLAN_EGRESS_QOS, IFLA_VLAN_QOS_MAPPING, {std::vector<std::uint8_t>(4)}));
  EXPECT_FAILS(ctl.create_link(def(ctl), bad_qos), ERANGE, "8021q: Invalid egress QOS map");
  EXPECT_EQ(summary(ctl), before);
}

// Linux: vlan_validate, vlan_newlink and vlan_check_real_dev report with
// NL_SET_ERR_MSG_MOD: the texts carry the module's name, "8021q: ". vlan_newlink's mtu
// check, vlan_dev_open and vlan_dev_change_mtu send their errno alone.
TEST_F(VlanTest, MessagesAreTheModulesOrNone) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  auto id = ctl.create_link(def(ctl), vlan("x", d->ifindex(), 4095));
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().message, "8021q: Invalid VLAN id");
  EXPECT_FALSE(id.error().log_only);
  auto lower = ctl.create_link(def(ctl), vlan("x", 999, 5));
  ASSERT_FALSE(lower);
  EXPECT_EQ(lower.error().message, "8021q: link does not exist");
  LinkRequest big = vlan("x", d->ifindex(), 5);
  big.mtu = 1501;
  auto b = ctl.create_link(def(ctl), big);
  ASSERT_FALSE(b);
  EXPECT_TRUE(b.error().log_only);
  Device* v = must(ctl.create_link(def(ctl), vlan("v5", d->ifindex(), 5)));
  auto up = ctl.open(*v);
  ASSERT_FALSE(up);  // the lower is down
  EXPECT_EQ(up.error().code, ENETDOWN);
  EXPECT_TRUE(up.error().log_only);
  auto mtu = ctl.set_mtu(*v, 1600);
  ASSERT_FALSE(mtu);
  EXPECT_EQ(mtu.error().code, ERANGE);
  EXPECT_TRUE(mtu.error().log_only);
  // A qos map's items of another type are passed over (liberal nla_validate_nested).
  LinkRequest other = vlan("v6", d->ifindex(), 6);
  other.info_data.push_back(raw_list(IFLA_VLAN_INGRESS_QOS, 7, {mapping(1, 2)}));
  EXPECT_TRUE(ctl.create_link(def(ctl), other));
}

TEST_F(VlanTest, ChangeFlagsAndQosMaps) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* v = must(ctl.create_link(def(ctl), vlan("v10", d->ifindex(), 10)));
  LinkRequest ch;
  ch.has_info_data = true;
  ch.info_data = {
      flags(VLAN_FLAG_LOOSE_BINDING, VLAN_FLAG_LOOSE_BINDING | VLAN_FLAG_REORDER_HDR),
      raw_list(IFLA_VLAN_INGRESS_QOS, IFLA_VLAN_QOS_MAPPING, {mapping(1, 5), mapping(3, 7)}),
      raw_list(IFLA_VLAN_EGRESS_QOS, IFLA_VLAN_QOS_MAPPING, {mapping(9, 2)})};
  ASSERT_TRUE(ctl.change_link(*v, ch));
  auto info = v->kind().fill_info(*v);
  EXPECT_EQ(find_attr(info, IFLA_VLAN_FLAGS)->bin[0], VLAN_FLAG_LOOSE_BINDING);
  const Attr* in = find_attr(info, IFLA_VLAN_INGRESS_QOS);
  ASSERT_TRUE(in);
  ASSERT_EQ(in->nested.size(), 2u);
  EXPECT_EQ(in->nested[0].type, IFLA_VLAN_QOS_MAPPING);
  EXPECT_EQ(in->nested[1].bin[0], 3);
  EXPECT_EQ(in->nested[1].bin[4], 7);
  const Attr* eg = find_attr(info, IFLA_VLAN_EGRESS_QOS);
  ASSERT_TRUE(eg);
  ASSERT_EQ(eg->nested.size(), 1u);
  EXPECT_EQ(eg->nested[0].bin[0], 9);
  // A refused change leaves everything as it was.
  std::string before = summary(ctl);
  LinkRequest bad;
  bad.has_info_data = true;
  bad.info_data = {flags(0x80, 0x80),
                   raw_list(IFLA_VLAN_EGRESS_QOS, IFLA_VLAN_QOS_MAPPING, {mapping(4, 4)})};
  EXPECT_FAILS(ctl.change_link(*v, bad), EINVAL, "Invalid VLAN flags");
  EXPECT_EQ(summary(ctl), before);
}

TEST_F(VlanTest, MtuBoundedByLowerAndFollowsItDown) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.set_mtu(*d, 9000));
  Device* v = must(ctl.create_link(def(ctl), vlan("v10", d->ifindex(), 10)));
  EXPECT_EQ(v->mtu(), 9000u);
  EXPECT_FAILS(ctl.set_mtu(*v, 9001), ERANGE, "exceeds the mtu 9000");
  ASSERT_TRUE(ctl.set_mtu(*v, 4000));
  ASSERT_TRUE(ctl.set_mtu(*d, 3000));
  EXPECT_EQ(v->mtu(), 3000u);
  ASSERT_TRUE(ctl.set_mtu(*d, 9000));
  EXPECT_EQ(v->mtu(), 3000u);  // Linux does not raise it again
}

TEST_F(VlanTest, FollowsLowerUpAndDown) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* v = must(ctl.create_link(def(ctl), vlan("v10", d->ifindex(), 10)));
  EXPECT_FAILS(ctl.open(*v), ENETDOWN, "is down");
  ASSERT_TRUE(ctl.open(*d));
  EXPECT_TRUE(v->is_up());  // Linux: vlan_device_event NETDEV_UP
  EXPECT_TRUE(v->carrier());
  ASSERT_TRUE(ctl.close(*d));
  EXPECT_FALSE(v->is_up());
}

TEST_F(VlanTest, LowerDownLeavesLooseAndDownVlansAlone) {
  // Linux (vlan_device_event): NETDEV_DOWN closes only the vlans that are up and not
  // loose; NETDEV_UP opens those that are down.
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.open(*d));
  Device* tight = must(ctl.create_link(def(ctl), vlan("tight", d->ifindex(), 10)));
  LinkRequest loose_req = vlan("loose", d->ifindex(), 11);
  loose_req.info_data.push_back(flags(VLAN_FLAG_LOOSE_BINDING, VLAN_FLAG_LOOSE_BINDING));
  Device* loose = must(ctl.create_link(def(ctl), loose_req));
  Device* idle = must(ctl.create_link(def(ctl), vlan("idle", d->ifindex(), 12)));
  ASSERT_TRUE(ctl.open(*tight));
  ASSERT_TRUE(ctl.open(*loose));
  ASSERT_TRUE(tight->carrier() && loose->carrier() && idle->carrier());
  ASSERT_TRUE(ctl.close(*d));
  EXPECT_FALSE(tight->is_up());
  EXPECT_FALSE(tight->carrier());
  EXPECT_TRUE(loose->is_up());  // loose binding: neither closed nor given the lower's state
  EXPECT_TRUE(loose->carrier());
  EXPECT_FALSE(idle->is_up());
  EXPECT_TRUE(idle->carrier());  // already down: left alone
  ASSERT_TRUE(ctl.open(*d));
  EXPECT_TRUE(tight->is_up());
  EXPECT_TRUE(idle->is_up());  // down vlans come up with their lower
}

// Linux: vlan_device_event unregisters a deleted lower's vlans in a batch of their own
// inside the lower's (and a vlan's, qinq, in one inside that).
TEST_F(VlanTest, LowerDeletedTakesVlansInANestedBatch) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.open(*d));
  for (int i = 1; i <= 10; ++i)
    ASSERT_TRUE(ctl.create_link(def(ctl), vlan(fmt::format("v{}", i), d->ifindex(), i)));
  Device* v1 = ctl.find(def(ctl), "v1");
  // A vlan on a vlan (QinQ) goes too.
  ASSERT_TRUE(ctl.create_link(def(ctl), vlan("qinq", v1->ifindex(), 100)));
  Device* other = dummy(ctl, "keep");
  ASSERT_TRUE(ctl.create_link(def(ctl), vlan("kept", other->ifindex(), 1)));
  auto before = engine->stats();
  ASSERT_TRUE(ctl.delete_link(*d));
  auto after = engine->stats();
  EXPECT_EQ(after.batches - before.batches, 3u);
  EXPECT_EQ(after.devices_unregistered - before.devices_unregistered, 12u);
  EXPECT_EQ(ctl.find(def(ctl), "qinq"), nullptr);
  EXPECT_TRUE(ctl.find(def(ctl), "kept"));
  EXPECT_EQ(def(ctl).device_count(), 3u);  // lo, keep, kept
}

TEST_F(VlanTest, DeletingAVlanLeavesItsLower) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* v = must(ctl.create_link(def(ctl), vlan("v10", d->ifindex(), 10)));
  std::int64_t refs = d->refcount();
  ASSERT_TRUE(ctl.delete_link(*v));
  EXPECT_TRUE(ctl.find(def(ctl), "d0"));
  EXPECT_TRUE(d->uppers_locked().empty());
  EXPECT_LT(d->refcount(), refs);  // the vlan's reference on its lower is gone
}

// Linux: __netdev_upper_dev_link refuses a stack deeper than MAX_NEST_DEV (8) with EMLINK,
// from the levels it keeps; deleting the top of the stack makes room again.
TEST_F(VlanTest, StackDeeperThanEightIsRefused) {
  auto ctl = engine->control();
  Device* below = dummy(ctl, "d0");
  for (int i = 1; i < 8; ++i)
    below = must(ctl.create_link(def(ctl), vlan("v" + std::to_string(i), below->ifindex(), 10)));
  auto deep = ctl.create_link(def(ctl), vlan("v8", below->ifindex(), 10));
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().code, EMLINK);
  EXPECT_FALSE(ctl.find(def(ctl), "v8"));  // nothing stays registered
  // A second vlan beside the top, as deep as it, is allowed; one more on it is not.
  Device* v6 = ctl.find(def(ctl), "v6");
  ASSERT_TRUE(v6);
  EXPECT_TRUE(ctl.create_link(def(ctl), vlan("w7", v6->ifindex(), 11)));
  ASSERT_TRUE(ctl.delete_link(*below));  // v7 goes
  EXPECT_TRUE(ctl.create_link(def(ctl), vlan("v7", v6->ifindex(), 10)));
  Device* w7 = ctl.find(def(ctl), "w7");
  ASSERT_TRUE(w7);
  EXPECT_FALSE(ctl.create_link(def(ctl), vlan("w8", w7->ifindex(), 10)));
}

}  // namespace
}  // namespace ifcore::test
