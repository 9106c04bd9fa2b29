// Vrf: what Linux's vrf_setup and vrf_dev_init give a new vrf, the table it needs and keeps,
// ports joining and leaving (each cycled down and up), the devices it refuses, and its
// ports released when it or they go.
#include <net/if.h>

#include <linux/if.h>
#include <linux/if_link.h>

#include "kinds_fixture.h"

namespace ifcore::test {
namespace {

class VrfTest : public KindsTest {
 protected:
  Result<Device*> vrf(Control& ctl, std::string name, std::optional<std::uint32_t> table) {
    AttrList d;
    if (table) d.push_back(Attr::u32(IFLA_VRF_TABLE, *table));
    return ctl.create_link(def(ctl), with_data("vrf", std::move(name), std::move(d)));
  }
  // What a port's up and down events were, in order ("up v0", "down v0").
  struct Events : Subscriber {
    std::vector<std::string> seen;
    Result<void> on_event(Control&, const EventInfo& ev) override {
      if (ev.event == NetdevEvent::Up) seen.push_back("up " + ev.dev.name());
      if (ev.event == NetdevEvent::Down) seen.push_back("down " + ev.dev.name());
      return ok();
    }
  };
};

TEST_F(VrfTest, CreateShowsWhatLinuxGivesAVrf) {
  auto ctl = engine->control();
  Device* v = must(vrf(ctl, "vrf0", 10));
  ASSERT_TRUE(v);
  // Linux: vrf_dev_init sets the flags to IFF_MASTER | IFF_NOARP exactly, operstate UP;
  // vrf_setup: mtu IP6_MAX_MTU (65575) within [1280, 65575], ether_setup's txqlen.
  EXPECT_EQ(v->flags(), static_cast<std::uint32_t>(IFF_MASTER | IFF_NOARP));
  EXPECT_EQ(v->mtu(), 65575u);
  EXPECT_EQ(v->min_mtu(), 1280u);
  EXPECT_EQ(v->max_mtu(), 65575u);
  EXPECT_EQ(v->txqlen(), 1000u);
  EXPECT_EQ(v->operstate(), IF_OPER_UP);
  EXPECT_TRUE(v->address().is_valid_ether());
  EXPECT_EQ(num(v->kind().fill_info(*v), IFLA_VRF_TABLE), 10u);
  EXPECT_EQ(v->kind().l3mdev_table(*v), 10u);
  ASSERT_TRUE(ctl.open(*v));
  EXPECT_EQ(v->reported_operstate(), IF_OPER_UP);
  EXPECT_TRUE(v->reported_flags() & IFF_LOWER_UP);
  // A name pattern takes vrf%d's lowest free number.
  LinkRequest unnamed;
  unnamed.kind = "vrf";
  unnamed.has_info_data = true;
  unnamed.info_data = {Attr::u32(IFLA_VRF_TABLE, 11)};
  Device* v2 = must(ctl.create_link(def(ctl), unnamed));
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->name(), "vrf1");  // vrf0 is taken
}

TEST_F(VrfTest, TableIsRequiredNotZeroAndFixed) {
  auto ctl = engine->control();
  std::string before = summary(ctl);
  // Linux: vrf_newlink's extack texts, EINVAL.
  EXPECT_FAILS(vrf(ctl, "vrf0", std::nullopt), EINVAL, "VRF table id is missing");
  LinkRequest no_data = link_req("vrf", "vrf0");
  EXPECT_FAILS(ctl.create_link(def(ctl), no_data), EINVAL, "VRF table id is missing");
  EXPECT_FAILS(vrf(ctl, "vrf0", 0), EINVAL, "Invalid VRF table id");
  // Linux: vrf_validate — a bad address is refused before the table is looked at.
  LinkRequest bad_addr = with_data("vrf", "vrf0", {});
  bad_addr.address = HwAddr::ethernet({1, 0, 0, 0, 0, 1});
  EXPECT_FAILS(ctl.create_link(def(ctl), bad_addr), EADDRNOTAVAIL, "Invalid hardware address");
  EXPECT_EQ(summary(ctl), before);
  Device* v = must(vrf(ctl, "vrf0", 10));
  ASSERT_TRUE(v);
  before = summary(ctl);
  // Linux: vrf has no changelink: IFLA_INFO_DATA on a change is EOPNOTSUPP.
  LinkRequest change;
  change.has_info_data = true;
  change.info_data = {Attr::u32(IFLA_VRF_TABLE, 20)};
  auto r = ctl.change_link(*v, change);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EOPNOTSUPP);
  EXPECT_EQ(summary(ctl), before);
  // Linux: strict_mode is off by default: a second vrf may take the same table.
  Device* w = must(vrf(ctl, "vrf1", 10));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->kind().l3mdev_table(*w), 10u);
  // Linux: NETIF_F_NETNS_LOCAL — a vrf stays in its namespace.
  auto other = ctl.create_namespace("other");
  ASSERT_TRUE(other);
  EXPECT_FAILS(ctl.move_to_namespace(*v, **other), EINVAL, "The interface netns is immutable");
}

TEST_F(VrfTest, PortsJoinAndLeaveCycledWhenUp) {
  auto ctl = engine->control();
  Device* v = must(vrf(ctl, "vrf0", 10));
  Device* up = dummy(ctl, "d0");
  Device* down = dummy(ctl, "d1");
  ASSERT_TRUE(v && up && down);
  ASSERT_TRUE(ctl.open(*up));
  Events ev;
  SubscriptionId id = ctl.subscribe(
      ev, SubscribeOptions{"test", 0, false, events_of(NetdevEvent::Up, NetdevEvent::Down)});
  ASSERT_TRUE(ctl.set_master(*up, v));
  ASSERT_TRUE(ctl.set_master(*down, v));
  // Linux: cycle_netdev takes a running port down and up; a down one is left alone.
  EXPECT_EQ(ev.seen, (std::vector<std::string>{"down d0", "up d0"}));
  EXPECT_EQ(up->master(), v);
  EXPECT_EQ(down->master(), v);
  EXPECT_TRUE(up->is_up());
  EXPECT_EQ(num(v->kind().fill_slave_info(*v, *up), IFLA_VRF_PORT_TABLE), 10u);
  ev.seen.clear();
  ASSERT_TRUE(ctl.set_master(*up, nullptr));
  EXPECT_EQ(ev.seen, (std::vector<std::string>{"down d0", "up d0"}));
  EXPECT_EQ(up->master(), nullptr);
  EXPECT_TRUE(up->is_up());
  ctl.unsubscribe(id);
}

TEST_F(VrfTest, RefusesLoopbackVrfsAndLoops) {
  auto ctl = engine->control();
  Device* v = must(vrf(ctl, "vrf0", 10));
  Device* w = must(vrf(ctl, "vrf1", 20));
  ASSERT_TRUE(v && w);
  std::string before = summary(ctl);
  // Linux: vrf_add_slave / do_vrf_add_slave.
  EXPECT_FAILS(ctl.set_master(*w, v), EINVAL, "Can not enslave an L3 master device to a VRF");
  EXPECT_FAILS(ctl.set_master(*def(ctl).loopback(), v), EOPNOTSUPP,
               "Can not enslave loopback device to a VRF");
  EXPECT_FAILS(ctl.set_master(*v, v), EINVAL, "");
  EXPECT_EQ(summary(ctl), before);
  // A port moves from one vrf to another (do_set_master releases it first).
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(d);
  ASSERT_TRUE(ctl.set_master(*d, v));
  ASSERT_TRUE(ctl.set_master(*d, w));
  EXPECT_EQ(d->master(), w);
  EXPECT_TRUE(v->lowers_locked().empty());
  // A bridge can be a port of a vrf, and a bridge's port moves to a vrf.
  Device* br = must(ctl.create_link(def(ctl), link_req("bridge", "br0")));
  Device* e = dummy(ctl, "d1");
  ASSERT_TRUE(br && e);
  ASSERT_TRUE(ctl.set_master(*e, br));
  ASSERT_TRUE(ctl.set_master(*br, v));
  ASSERT_TRUE(ctl.set_master(*e, v));
  EXPECT_EQ(e->master(), v);
}

TEST_F(VrfTest, DeleteReleasesPortsAndPortsLeaveWhenDeleted) {
  auto ctl = engine->control();
  Device* v = must(vrf(ctl, "vrf0", 10));
  Device* a = dummy(ctl, "d0");
  Device* b = dummy(ctl, "d1");
  ASSERT_TRUE(v && a && b);
  ASSERT_TRUE(ctl.open(*a));
  ASSERT_TRUE(ctl.set_master(*a, v));
  ASSERT_TRUE(ctl.set_master(*b, v));
  // A port deleted leaves the vrf (Linux: vrf_device_event at NETDEV_UNREGISTER).
  ASSERT_TRUE(ctl.delete_link(*b));
  EXPECT_EQ(v->lowers_locked().size(), 1u);
  // The vrf deleted: its ports stay, released, the up one still up (Linux: vrf_dellink).
  ASSERT_TRUE(ctl.delete_link(*v));
  Device* left = ctl.find(def(ctl), "d0");
  ASSERT_EQ(left, a);
  EXPECT_EQ(a->master(), nullptr);
  EXPECT_TRUE(a->is_up());
  EXPECT_TRUE(a->uppers_locked().empty());
}

TEST_F(VrfTest, NamespaceTeardownWithPorts) {
  auto ctl = engine->control();
  auto n = ctl.create_namespace("blue");
  ASSERT_TRUE(n);
  AttrList d{Attr::u32(IFLA_VRF_TABLE, 7)};
  Device* v = must(ctl.create_link(**n, with_data("vrf", "vrf0", d)));
  Device* p = must(ctl.create_link(**n, link_req("dummy", "d0")));
  ASSERT_TRUE(v && p);
  ASSERT_TRUE(ctl.open(*p));
  ASSERT_TRUE(ctl.open(*v));
  ASSERT_TRUE(ctl.set_master(*p, v));
  ASSERT_TRUE(ctl.destroy_namespace(**n));
}

}  // namespace
}  // namespace ifcore::test
