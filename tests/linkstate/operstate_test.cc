// Operstate and carrier of every kind, as Linux reports them (RFC 2863 operstates,
// IFF_RUNNING/IFF_LOWER_UP), including transitions of a lower device, and the Change
// notification a monitor sees.
#include "linkstate_fixture.h"

namespace ifcore::test {
namespace {

// What `ip link` shows: reported operstate, and whether RUNNING/LOWER_UP are set.
struct Shown {
  std::uint8_t op;
  bool running, lower_up;
  bool operator==(const Shown&) const = default;
};
Shown shown(const Device* d) {
  std::uint32_t f = d->reported_flags();
  return {d->reported_operstate(), (f & IFF_RUNNING) != 0, (f & IFF_LOWER_UP) != 0};
}
std::ostream& operator<<(std::ostream& o, const Shown& s) {
  return o << "op=" << int(s.op) << " running=" << s.running << " lower_up=" << s.lower_up;
}

const Shown kDown{IF_OPER_DOWN, false, false};
const Shown kUnknownRunning{IF_OPER_UNKNOWN, true, true};
const Shown kUp{IF_OPER_UP, true, true};
const Shown kNoCarrierLld{IF_OPER_LOWERLAYERDOWN, false, false};  // NO-CARRIER, LOWERLAYERDOWN

using OperstateTest = LinkStateTest;

TEST_F(OperstateTest, DummyAndLoopbackCarryAlways) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* lo = ctl.find(def(ctl), "lo");
  ASSERT_TRUE(lo);
  EXPECT_TRUE(d->carrier());
  EXPECT_EQ(shown(d), kDown);
  ASSERT_TRUE(ctl.open(*d));
  ASSERT_TRUE(ctl.open(*lo));
  // Linux: dummy and lo never run the link watch: operstate stays UNKNOWN, shown running.
  EXPECT_EQ(shown(d), kUnknownRunning);
  EXPECT_EQ(shown(lo), kUnknownRunning);
  EXPECT_TRUE(d->tx_active());
  EXPECT_TRUE(lo->tx_active());
  ASSERT_TRUE(ctl.close(*d));
  EXPECT_EQ(shown(d), kDown);
  EXPECT_FALSE(d->tx_active());
}

TEST_F(OperstateTest, VethEndHasCarrierWhenBothEndsAreUp) {
  auto ctl = engine->control();
  auto [a, b] = veth_ab(ctl);
  EXPECT_FALSE(a->carrier());
  EXPECT_EQ(a->operstate(), IF_OPER_LOWERLAYERDOWN);  // its link (the peer) is down
  EXPECT_EQ(a->carrier_down_count(), 1u);             // Linux: carrier_changes 1 at creation
  ASSERT_TRUE(ctl.open(*a));
  EXPECT_EQ(shown(a), kNoCarrierLld);
  ASSERT_TRUE(ctl.open(*b));
  EXPECT_EQ(shown(a), kUp);
  EXPECT_EQ(shown(b), kUp);
  ASSERT_TRUE(ctl.close(*a));
  EXPECT_EQ(shown(a), kDown);
  EXPECT_EQ(shown(b), kNoCarrierLld);
  EXPECT_EQ(b->carrier_up_count(), 1u);
  EXPECT_EQ(b->carrier_down_count(), 2u);
}

TEST_F(OperstateTest, VlanFollowsItsLower) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* v = must(ctl.create_link(def(ctl), vlan("d0.10", d->ifindex(), 10)));
  EXPECT_EQ(shown(v), kDown);
  ASSERT_TRUE(ctl.open(*d));  // Linux: the vlan comes up with its lower
  EXPECT_EQ(shown(v), kUp);
  ctl.set_carrier(*d, false);  // the lower loses carrier: the vlan is LOWERLAYERDOWN
  EXPECT_EQ(shown(d).op, IF_OPER_DOWN);
  EXPECT_EQ(shown(v), kNoCarrierLld);
  EXPECT_TRUE(v->is_up());
  ctl.set_carrier(*d, true);
  EXPECT_EQ(shown(v), kUp);
  ASSERT_TRUE(ctl.close(*d));  // Linux: the vlan goes down with it
  EXPECT_EQ(shown(v), kDown);
}

TEST_F(OperstateTest, MacvlanFollowsItsLower) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* m = must(ctl.create_link(def(ctl), macvlan("m0", d->ifindex())));
  ASSERT_TRUE(ctl.open(*m));
  EXPECT_EQ(shown(m), kNoCarrierLld);  // the lower is down
  ASSERT_TRUE(ctl.open(*d));
  EXPECT_EQ(shown(m), kUp);
  ASSERT_TRUE(ctl.close(*d));
  EXPECT_TRUE(m->is_up());
  EXPECT_EQ(shown(m), kNoCarrierLld);
  ASSERT_TRUE(ctl.open(*d));
  ctl.set_carrier(*d, false);
  EXPECT_EQ(shown(m), kNoCarrierLld);
}

// Linux 6.18 (checked with `ip` on the kernel): an up bridge given a first port that is up
// goes from `state UNKNOWN` to `state UP` (br_stp_change_bridge_id reselects the port states
// with the new port still disabled: carrier off, then on once it forwards); when the last
// port leaves, its address becomes 00:00:00:00:00:00 (br_stp_recalculate_bridge_id).
TEST_F(OperstateTest, BridgeGivenAnUpPortIsUpAndWithoutPortsHasNoAddress) {
  auto ctl = engine->control();
  Device* br = must(ctl.create_link(def(ctl), link_req("bridge", "br0")));
  Device* p = dummy(ctl, "p1");
  ASSERT_TRUE(ctl.open(*br));
  ASSERT_TRUE(ctl.open(*p));
  EXPECT_EQ(shown(br).op, IF_OPER_UNKNOWN);
  ASSERT_TRUE(ctl.set_master(*p, br));
  EXPECT_EQ(shown(br), kUp);
  EXPECT_EQ(br->address(), p->address());
  ASSERT_TRUE(ctl.set_master(*p, nullptr));
  EXPECT_EQ(br->address(), HwAddr::ethernet({0, 0, 0, 0, 0, 0}));
  EXPECT_FALSE(br->carrier());
  // A user may not set that address; the bridge may.
  auto zero = ctl.set_address(*p, HwAddr::ethernet({0, 0, 0, 0, 0, 0}));
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, EADDRNOTAVAIL);
}

TEST_F(OperstateTest, BridgeIsUpWhileAPortIsUp) {
  auto ctl = engine->control();
  Device* br = must(ctl.create_link(def(ctl), link_req("bridge", "br0")));
  Device* p1 = dummy(ctl, "p1");
  Device* p2 = dummy(ctl, "p2");
  ASSERT_TRUE(ctl.open(*br));
  // Linux 6.18: a bridge that never had a port keeps its carrier: `state UNKNOWN`,
  // `LOWER_UP`; its first port takes the carrier while no port forwards.
  EXPECT_EQ(shown(br), (Shown{IF_OPER_UNKNOWN, true, true}));
  ASSERT_TRUE(ctl.set_master(*p1, br));
  ASSERT_TRUE(ctl.set_master(*p2, br));
  EXPECT_EQ(shown(br).op, IF_OPER_DOWN);
  ASSERT_TRUE(ctl.open(*p1));
  EXPECT_EQ(shown(br), kUp);  // no STP: the port forwards at once
  ASSERT_TRUE(ctl.open(*p2));
  ASSERT_TRUE(ctl.close(*p1));
  EXPECT_EQ(shown(br), kUp);  // p2 still forwards
  ASSERT_TRUE(ctl.close(*p2));
  EXPECT_EQ(shown(br).op, IF_OPER_DOWN);
  EXPECT_FALSE(br->carrier());
  // The last port leaving gives no carrier back.
  ASSERT_TRUE(ctl.set_master(*p1, nullptr));
  ASSERT_TRUE(ctl.set_master(*p2, nullptr));
  EXPECT_FALSE(br->carrier());
}

TEST_F(OperstateTest, TunnelsAreUpWhenAdminUp) {
  auto ctl = engine->control();
  Device* t = must(ctl.create_link(def(ctl), link_req("ipip", "t0")));
  EXPECT_EQ(shown(t), kDown);
  ASSERT_TRUE(ctl.open(*t));
  // Linux: ip tunnels have carrier always and never run the link watch: UNKNOWN, running.
  EXPECT_EQ(shown(t), kUnknownRunning);
}

TEST_F(OperstateTest, DormantLinkModeReportsDormant) {
  auto ctl = engine->control();
  auto [a, b] = veth_ab(ctl);
  a->set_link_mode_locked(ctl, IF_LINK_MODE_DORMANT);
  ASSERT_TRUE(ctl.open(*a));
  ASSERT_TRUE(ctl.open(*b));
  EXPECT_EQ(a->reported_operstate(), IF_OPER_DORMANT);
  // Linux 6.18 (`ip link set v0 mode dormant` on the kernel): IFF_DORMANT is a driver's
  // mark (netif_dormant), not the link mode's: the flags do not show it.
  EXPECT_FALSE(a->reported_flags() & IFF_DORMANT);
  EXPECT_EQ(b->reported_operstate(), IF_OPER_UP);
}

// The monitor test at the notifier level: the rtnl layer turns each Change into an
// RTM_NEWLINK (its own tests cover that step).
TEST_F(OperstateTest, CarrierChangeReachesSubscribersAsChangeWithTheNewOperstate) {
  ChangeRecorder rec;
  auto ctl = engine->control();
  SubscriptionId id = ctl.subscribe(rec, SubscribeOptions{"recorder", 0, false});
  auto [a, b] = veth_ab(ctl);
  ASSERT_TRUE(ctl.open(*a));
  ASSERT_TRUE(ctl.open(*b));
  ASSERT_TRUE(rec.last("a"));
  ASSERT_TRUE(rec.last("b"));
  EXPECT_EQ(rec.last("a")->operstate, IF_OPER_UP);
  EXPECT_TRUE(rec.last("a")->carrier);
  EXPECT_EQ(rec.last("b")->operstate, IF_OPER_UP);
  ASSERT_TRUE(ctl.close(*b));
  EXPECT_EQ(rec.last("a")->operstate, IF_OPER_LOWERLAYERDOWN);
  EXPECT_FALSE(rec.last("a")->carrier);
  ctl.unsubscribe(id);
}

}  // namespace
}  // namespace ifcore::test
