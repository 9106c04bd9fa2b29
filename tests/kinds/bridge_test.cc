// Bridge: ports joining and leaving, loops refused, release on delete, mtu/address/carrier
// following the ports, and the IFLA_BR_* / IFLA_BRPORT_* attributes with Linux's ranges.
#include <linux/if_bridge.h>
#include <linux/if_link.h>

#include "kinds_fixture.h"

namespace ifcore::test {
namespace {

class BridgeTest : public KindsTest {
 protected:
  Device* bridge(Control& ctl, std::string name, AttrList data = {}) {
    return must(ctl.create_link(def(ctl), with_data("bridge", std::move(name), std::move(data))));
  }
  static LinkRequest data(AttrList d) {
    LinkRequest r;
    r.has_info_data = true;
    r.info_data = std::move(d);
    return r;
  }
};

TEST_F(BridgeTest, CreateShowsWhatLinuxReports) {
  auto ctl = engine->control();
  Device* br = bridge(ctl, "br0");
  ASSERT_TRUE(br);
  // Linux 6.18: a bridge keeps the carrier it was made with until its first port comes.
  EXPECT_TRUE(br->carrier());
  auto info = br->kind().fill_info(*br);
  EXPECT_EQ(num(info, IFLA_BR_FORWARD_DELAY), 1500u);
  EXPECT_EQ(num(info, IFLA_BR_HELLO_TIME), 200u);
  EXPECT_EQ(num(info, IFLA_BR_MAX_AGE), 2000u);
  EXPECT_EQ(num(info, IFLA_BR_AGEING_TIME), 30000u);
  EXPECT_EQ(num(info, IFLA_BR_STP_STATE), 0u);
  EXPECT_EQ(num(info, IFLA_BR_PRIORITY), 32768u);
  EXPECT_EQ(num(info, IFLA_BR_VLAN_FILTERING), 0u);
  // Linux 6.18 built without CONFIG_BRIDGE_VLAN_FILTERING (this machine's kernel): no
  // vlan protocol, default pvid or vlan stats; the timers come first.
  EXPECT_FALSE(find_attr(info, IFLA_BR_VLAN_PROTOCOL));
  EXPECT_FALSE(find_attr(info, IFLA_BR_VLAN_DEFAULT_PVID));
  EXPECT_FALSE(find_attr(info, IFLA_BR_VLAN_STATS_ENABLED));
  ASSERT_FALSE(info.empty());
  EXPECT_EQ(info.front().type, IFLA_BR_HELLO_TIMER);
  EXPECT_EQ(num(info, IFLA_BR_MCAST_STARTUP_QUERY_INTVL), 3124u);  // HZ=250 truncation
  EXPECT_EQ(num(info, IFLA_BR_MCAST_SNOOPING), 1u);
  EXPECT_EQ(num(info, IFLA_BR_MCAST_IGMP_VERSION), 2u);
  EXPECT_EQ(num(info, IFLA_BR_GC_TIMER), 0u);
  const Attr* id = find_attr(info, IFLA_BR_BRIDGE_ID);
  ASSERT_TRUE(id);
  ASSERT_EQ(id->bin.size(), sizeof(ifla_bridge_id));
  EXPECT_EQ(id->bin[0], 0x80);
  EXPECT_EQ(HwAddr(std::span(id->bin).subspan(2)), br->address());
  EXPECT_EQ(find_attr(info, IFLA_BR_GROUP_ADDR)->bin,
            (std::vector<std::uint8_t>{0x01, 0x80, 0xc2, 0, 0, 0}));
  EXPECT_EQ(find_attr(info, IFLA_BR_MULTI_BOOLOPT)->bin.size(), sizeof(br_boolopt_multi));
}

TEST_F(BridgeTest, ChangesMainSettingsWithinLinuxRanges) {
  auto ctl = engine->control();
  Device* br = bridge(ctl, "br0", {Attr::u32(IFLA_BR_AGEING_TIME, 1000)});
  ASSERT_TRUE(ctl.change_link(
      *br, data({Attr::u32(IFLA_BR_STP_STATE, 1), Attr::u16(IFLA_BR_PRIORITY, 4096),
                 Attr::u32(IFLA_BR_HELLO_TIME, 300), Attr::u32(IFLA_BR_MAX_AGE, 1000),
                 Attr::u8(IFLA_BR_VLAN_FILTERING, 1), Attr::u16(IFLA_BR_GROUP_FWD_MASK, 0x8),
                 Attr::u8(IFLA_BR_MCAST_SNOOPING, 0)})));
  auto info = br->kind().fill_info(*br);
  EXPECT_EQ(num(info, IFLA_BR_AGEING_TIME), 1000u);
  EXPECT_EQ(num(info, IFLA_BR_STP_STATE), 1u);
  EXPECT_EQ(num(info, IFLA_BR_PRIORITY), 4096u);
  EXPECT_EQ(num(info, IFLA_BR_HELLO_TIME), 300u);
  EXPECT_EQ(num(info, IFLA_BR_MAX_AGE), 1000u);
  EXPECT_EQ(num(info, IFLA_BR_VLAN_FILTERING), 1u);
  EXPECT_EQ(num(info, IFLA_BR_GROUP_FWD_MASK), 8u);
  EXPECT_EQ(num(info, IFLA_BR_MCAST_SNOOPING), 0u);

  std::string before = summary(ctl);
  EXPECT_FAILS(ctl.change_link(*br, data({Attr::u32(IFLA_BR_FORWARD_DELAY, 100)})), ERANGE,
               "forward delay 100");  // STP is on
  EXPECT_FAILS(ctl.change_link(*br, data({Attr::u32(IFLA_BR_HELLO_TIME, 50)})), ERANGE,
               "hello time");
  EXPECT_FAILS(ctl.change_link(*br, data({Attr::u32(IFLA_BR_MAX_AGE, 5000)})), ERANGE, "max age");
  EXPECT_FAILS(ctl.change_link(*br, data({Attr::u16(IFLA_BR_GROUP_FWD_MASK, 1)})), EINVAL,
               "restricted");
  EXPECT_FAILS(ctl.change_link(*br, data({Attr::be16(IFLA_BR_VLAN_PROTOCOL, 0x0800)})),
               EPROTONOSUPPORT, "802.1Q");
  EXPECT_FAILS(ctl.change_link(*br, data({Attr::u16(IFLA_BR_VLAN_DEFAULT_PVID, 4095)})), EINVAL,
               "pvid");
  EXPECT_FAILS(ctl.change_link(*br, data({Attr::u8(IFLA_BR_MCAST_IGMP_VERSION, 4)})), EINVAL,
               "IGMP");
  // The valid part of a refused request is not applied either.
  EXPECT_FAILS(ctl.change_link(*br, data({Attr::u16(IFLA_BR_PRIORITY, 1),
                                          Attr::u32(IFLA_BR_HELLO_TIME, 5000)})),
               ERANGE, "hello time");
  EXPECT_EQ(summary(ctl), before);
  // Linux checks the forward delay before applying the same request's STP state.
  EXPECT_FAILS(ctl.change_link(*br, data({Attr::u32(IFLA_BR_STP_STATE, 0),
                                          Attr::u32(IFLA_BR_FORWARD_DELAY, 100)})),
               ERANGE, "forward delay");
  EXPECT_EQ(summary(ctl), before);
  // With STP off the forward delay is not range-checked.
  ASSERT_TRUE(ctl.change_link(*br, data({Attr::u32(IFLA_BR_STP_STATE, 0)})));
  ASSERT_TRUE(ctl.change_link(*br, data({Attr::u32(IFLA_BR_FORWARD_DELAY, 100)})));
  // Creating with bad data creates nothing.
  std::string before2 = summary(ctl);
  EXPECT_FAILS(
      ctl.create_link(def(ctl), with_data("bridge", "br1", {Attr::u32(IFLA_BR_MAX_AGE, 1)})),
      ERANGE, "max age");
  EXPECT_EQ(summary(ctl), before2);
}

TEST_F(BridgeTest, PortsJoinAndLeave) {
  auto ctl = engine->control();
  Device* br = bridge(ctl, "br0");
  Device* a = dummy(ctl, "a");
  Device* b = dummy(ctl, "b");
  ASSERT_TRUE(ctl.set_master(*a, br));
  ASSERT_TRUE(ctl.set_master(*b, br));
  EXPECT_EQ(a->master(), br);
  EXPECT_TRUE(a->has_upper_locked(*br));
  auto pinfo = br->kind().fill_slave_info(*br, *b);
  EXPECT_EQ(num(pinfo, IFLA_BRPORT_NO), 2u);
  EXPECT_EQ(num(pinfo, IFLA_BRPORT_PRIORITY), 32u);
  EXPECT_EQ(num(pinfo, IFLA_BRPORT_COST), 100u);
  EXPECT_EQ(num(pinfo, IFLA_BRPORT_LEARNING), 1u);
  EXPECT_EQ(num(pinfo, IFLA_BRPORT_UNICAST_FLOOD), 1u);
  EXPECT_EQ(num(pinfo, IFLA_BRPORT_STATE), BR_STATE_DISABLED);
  ASSERT_TRUE(ctl.set_master(*a, nullptr));
  EXPECT_EQ(a->master(), nullptr);
  EXPECT_TRUE(a->uppers_locked().empty());
  EXPECT_TRUE(br->kind().fill_slave_info(*br, *a).empty());
  // Through a whole request, as `ip link set a master br0` does.
  LinkRequest r;
  r.master = static_cast<std::uint32_t>(br->ifindex());
  ASSERT_TRUE(ctl.change_link(*a, r));
  EXPECT_EQ(a->master(), br);
}

TEST_F(BridgeTest, PortAttributes) {
  auto ctl = engine->control();
  Device* br = bridge(ctl, "br0");
  Device* a = dummy(ctl, "a");
  ASSERT_TRUE(ctl.set_master(*a, br));
  LinkRequest r;
  r.has_slave_data = true;
  r.slave_data = {Attr::u16(IFLA_BRPORT_PRIORITY, 10), Attr::u32(IFLA_BRPORT_COST, 7),
                  Attr::u8(IFLA_BRPORT_LEARNING, 0), Attr::u8(IFLA_BRPORT_GUARD, 1)};
  ASSERT_TRUE(ctl.change_link(*a, r));
  auto p = br->kind().fill_slave_info(*br, *a);
  EXPECT_EQ(num(p, IFLA_BRPORT_PRIORITY), 10u);
  EXPECT_EQ(num(p, IFLA_BRPORT_COST), 7u);
  EXPECT_EQ(num(p, IFLA_BRPORT_LEARNING), 0u);
  EXPECT_EQ(num(p, IFLA_BRPORT_GUARD), 1u);
  std::string before = summary(ctl);
  auto slave = [&](AttrList d) {
    LinkRequest s;
    s.has_slave_data = true;
    s.slave_data = std::move(d);
    return ctl.change_link(*a, s);
  };
  EXPECT_FAILS(slave({Attr::u16(IFLA_BRPORT_PRIORITY, 64)}), ERANGE, "priority 64");
  EXPECT_FAILS(slave({Attr::u32(IFLA_BRPORT_COST, 0)}), ERANGE, "cost 0");
  EXPECT_FAILS(slave({Attr::u8(IFLA_BRPORT_STATE, 5)}), EINVAL, "state 5");
  EXPECT_FAILS(slave({Attr::u8(IFLA_BRPORT_STATE, BR_STATE_FORWARDING)}), ENETDOWN, "is down");
  EXPECT_FAILS(slave({Attr::u8(IFLA_BRPORT_LEARNING, 1), Attr::u16(IFLA_BRPORT_GROUP_FWD_MASK, 2)}),
               EINVAL, "pause");
  EXPECT_EQ(summary(ctl), before);
  EXPECT_EQ(num(br->kind().fill_slave_info(*br, *a), IFLA_BRPORT_LEARNING), 0u);
  Device* lone = dummy(ctl, "lone");
  LinkRequest s;
  s.has_slave_data = true;
  s.slave_data = {Attr::u16(IFLA_BRPORT_PRIORITY, 1)};
  EXPECT_FAILS(ctl.change_link(*lone, s), EINVAL, "has no master");
}

// Linux: br_setport's IFLA_BRPORT_BACKUP_PORT (nbp_backup_change) — another port of the same
// bridge, 0 for none; not a port: ENOENT; the port itself or another bridge's: EINVAL; a
// refused one changes nothing. A backup that leaves the bridge is cleared (nbp_backup_clear).
TEST_F(BridgeTest, BackupPort) {
  auto ctl = engine->control();
  Device* br = bridge(ctl, "br0");
  Device* br1 = bridge(ctl, "br1");
  Device* a = dummy(ctl, "a");
  Device* b = dummy(ctl, "b");
  Device* c = dummy(ctl, "c");
  Device* lone = dummy(ctl, "lone");
  ASSERT_TRUE(ctl.set_master(*a, br));
  ASSERT_TRUE(ctl.set_master(*b, br));
  ASSERT_TRUE(ctl.set_master(*c, br1));
  auto backup = [&](const Device& d) {  // 0: not reported
    return attr_num(br->kind().fill_slave_info(*br, d), IFLA_BRPORT_BACKUP_PORT).value_or(0);
  };
  auto set = [&](int ifindex) {
    LinkRequest s;
    s.has_slave_data = true;
    s.slave_data = {Attr::u32(IFLA_BRPORT_BACKUP_PORT, std::uint32_t(ifindex))};
    return ctl.change_link(*a, s);
  };
  EXPECT_EQ(backup(*a), 0u);
  ASSERT_TRUE(set(b->ifindex()));
  EXPECT_EQ(backup(*a), std::uint64_t(b->ifindex()));
  EXPECT_EQ(set(lone->ifindex()).error().code, ENOENT);
  EXPECT_EQ(set(9999).error().code, ENOENT);
  EXPECT_EQ(set(a->ifindex()).error().code, EINVAL);
  EXPECT_EQ(set(c->ifindex()).error().code, EINVAL);
  EXPECT_EQ(backup(*a), std::uint64_t(b->ifindex()));
  ASSERT_TRUE(set(0));
  EXPECT_EQ(backup(*a), 0u);
  ASSERT_TRUE(set(b->ifindex()));
  ASSERT_TRUE(ctl.set_master(*b, nullptr));
  EXPECT_EQ(backup(*a), 0u);
}

TEST_F(BridgeTest, RefusedPortsAndLoopsTerminate) {
  auto ctl = engine->control();
  Device* br = bridge(ctl, "br0");
  Device* br1 = bridge(ctl, "br1");
  Device* a = dummy(ctl, "a");
  ASSERT_TRUE(ctl.set_master(*a, br1));
  Device* m = nullptr;
  {
    LinkRequest mv = link_req("macvlan", "mv");
    Device* low = dummy(ctl, "low");
    mv.link = static_cast<std::uint32_t>(low->ifindex());
    m = must(ctl.create_link(def(ctl), mv));
  }
  LinkRequest vr = with_data("vlan", "br0.5", {Attr::u16(IFLA_VLAN_ID, 5)});
  vr.link = static_cast<std::uint32_t>(br->ifindex());
  Device* v = must(ctl.create_link(def(ctl), vr));
  ASSERT_TRUE(v && m);
  std::string before = summary(ctl);
  EXPECT_FAILS(ctl.set_master(*br, br), ELOOP, "Can not enslave a bridge to a bridge");
  EXPECT_FAILS(ctl.set_master(*br1, br), ELOOP, "Can not enslave a bridge to a bridge");
  EXPECT_FAILS(ctl.set_master(*def(ctl).loopback(), br), EINVAL, "not an Ethernet device");
  EXPECT_FAILS(ctl.set_master(*v, br), EBUSY, "loop");  // an upper of the bridge itself
  EXPECT_FAILS(ctl.set_master(*ctl.find(def(ctl), "low"), br), EBUSY, "macvlans");
  LinkRequest ip = with_data("ipip", "t0", {});
  Device* t = must(ctl.create_link(def(ctl), ip));
  std::string before_t = summary(ctl);
  EXPECT_FAILS(ctl.set_master(*t, br), EINVAL, "not an Ethernet device");
  EXPECT_EQ(summary(ctl), before_t);
  ASSERT_TRUE(ctl.delete_link(*t));
  EXPECT_EQ(summary(ctl), before);
  // Moving a port from one bridge to another goes through release, as Linux's do_set_master.
  ASSERT_TRUE(ctl.set_master(*a, br));
  EXPECT_EQ(a->master(), br);
  EXPECT_TRUE(br1->lowers_locked().empty());
}

TEST_F(BridgeTest, DeletingTheBridgeReleasesItsPorts) {
  auto ctl = engine->control();
  Device* br = bridge(ctl, "br0");
  Device* a = dummy(ctl, "a");
  Device* b = dummy(ctl, "b");
  ASSERT_TRUE(ctl.set_master(*a, br));
  ASSERT_TRUE(ctl.set_master(*b, br));
  auto b0 = batches();
  ASSERT_TRUE(ctl.delete_link(*br));
  EXPECT_EQ(batches() - b0, 1u);
  EXPECT_EQ(ctl.find(def(ctl), "a"), a);
  EXPECT_EQ(ctl.find(def(ctl), "b"), b);
  EXPECT_EQ(a->master(), nullptr);
  EXPECT_TRUE(a->uppers_locked().empty());
  EXPECT_TRUE(b->uppers_locked().empty());
}

TEST_F(BridgeTest, APortThatGoesLeavesTheBridge) {
  auto ctl = engine->control();
  Device* br = bridge(ctl, "br0");
  Device* a = dummy(ctl, "a");
  Device* b = dummy(ctl, "b");
  ASSERT_TRUE(ctl.set_mtu(*a, 1400));
  ASSERT_TRUE(ctl.set_master(*a, br));
  ASSERT_TRUE(ctl.set_master(*b, br));
  EXPECT_EQ(br->mtu(), 1400u);
  ASSERT_TRUE(ctl.delete_link(*a));
  EXPECT_EQ(br->lowers_locked().size(), 1u);
  EXPECT_EQ(br->mtu(), 1500u);
  EXPECT_TRUE(br->kind().fill_slave_info(*br, *b).size() > 0);
  // Both in one batch: bridge and port together.
  Device* devs[] = {br, b};
  ASSERT_TRUE(ctl.delete_links(devs));
  EXPECT_EQ(def(ctl).device_count(), 1u);
}

TEST_F(BridgeTest, MtuAndAddressFollowThePortsUnlessSet) {
  auto ctl = engine->control();
  Device* br = bridge(ctl, "br0");
  Device* a = dummy(ctl, "a");
  Device* b = dummy(ctl, "b");
  ASSERT_TRUE(ctl.set_address(*a, HwAddr::ethernet({0x02, 0, 0, 0, 0, 0x20})));
  ASSERT_TRUE(ctl.set_address(*b, HwAddr::ethernet({0x02, 0, 0, 0, 0, 0x10})));
  ASSERT_TRUE(ctl.set_master(*a, br));
  EXPECT_EQ(br->address(), a->address());
  ASSERT_TRUE(ctl.set_master(*b, br));
  EXPECT_EQ(br->address(), b->address());  // the lowest
  ASSERT_TRUE(ctl.set_mtu(*b, 1300));
  EXPECT_EQ(br->mtu(), 1300u);
  // Set by the user: no longer follows.
  ASSERT_TRUE(ctl.set_mtu(*br, 1200));
  ASSERT_TRUE(ctl.set_mtu(*b, 1400));
  EXPECT_EQ(br->mtu(), 1200u);
  HwAddr mine = HwAddr::ethernet({0x02, 0, 0, 0, 0, 0x99});
  ASSERT_TRUE(ctl.set_address(*br, mine));
  ASSERT_TRUE(ctl.set_address(*b, HwAddr::ethernet({0x02, 0, 0, 0, 0, 0x01})));
  EXPECT_EQ(br->address(), mine);
}

TEST_F(BridgeTest, CarrierWhenAPortForwards) {
  auto ctl = engine->control();
  Device* br = bridge(ctl, "br0");
  Device* a = dummy(ctl, "a");
  ASSERT_TRUE(ctl.set_master(*a, br));
  ASSERT_TRUE(ctl.open(*br));
  EXPECT_FALSE(br->carrier());
  ASSERT_TRUE(ctl.open(*a));
  EXPECT_TRUE(br->carrier());
  EXPECT_EQ(num(br->kind().fill_slave_info(*br, *a), IFLA_BRPORT_STATE), BR_STATE_FORWARDING);
  ASSERT_TRUE(ctl.close(*a));
  EXPECT_FALSE(br->carrier());
  EXPECT_EQ(num(br->kind().fill_slave_info(*br, *a), IFLA_BRPORT_STATE), BR_STATE_DISABLED);
}

}  // namespace
}  // namespace ifcore::test
