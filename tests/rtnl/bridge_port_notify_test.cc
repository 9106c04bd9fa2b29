// A bridge's ports announced as `bridge link` shows them (Linux: br_ifinfo_notify, an
// RTM_NEWLINK or RTM_DELLINK of family AF_BRIDGE on RTNLGRP_LINK), beside the plain
// RTM_NEWLINK messages of the same change, in Linux 6.18's order: enslaving, a port going
// up and down, its carrier, a setting changed by `bridge link set` and by `ip link set ...
// type bridge_slave`, a port released, deleted, and its bridge deleted, stopped and opened,
// and the forward delay timer's announcement.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>

#include "fixture.h"
#include "ifcore/timer.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl::test {
namespace {

using namespace std::chrono_literals;

class BridgePortNotifyTest : public RtnlTest {
 protected:
  void configure(EngineConfig& cfg) override { cfg.time = clock; }
  void SetUp() override {
    RtnlTest::SetUp();
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, named("br0", "bridge"))).last_error(), 0);
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 2, veth_pair("v0", "v1"))).last_error(), 0);
    mon = open();
    mon->add_membership(RTNLGRP_LINK);
  }
  int set(const std::string& name, std::function<void(LinkRequest&)> edit) {
    LinkRequest req = named(name);
    edit(req);
    return send(link_msg(RTM_NEWLINK, NLM_F_ACK, 3, req)).last_error();
  }
  int up(const std::string& name, bool on = true) {
    return set(name, [on](LinkRequest& r) {
      r.flags = on ? IFF_UP : 0;
      r.change = IFF_UP;
    });
  }
  int master(const std::string& name, int ifindex) {
    return set(name, [ifindex](LinkRequest& r) { r.master = ifindex; });
  }
  // `bridge link set dev NAME cost COST`: RTM_SETLINK of family AF_BRIDGE.
  int bridge_set_cost(const std::string& name, std::uint32_t cost) {
    wire::MessageBuilder b;
    b.begin({RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK, 4, 0});
    ifinfomsg ifi{};
    ifi.ifi_family = AF_BRIDGE;
    ifi.ifi_index = find(name)->ifindex();
    b.put_struct(ifi);
    std::size_t nest = b.begin_nest(IFLA_PROTINFO | NLA_F_NESTED);
    b.put_u32(IFLA_BRPORT_COST, cost);
    b.end_nest(nest);
    auto done = b.end();
    EXPECT_TRUE(done);
    return send(Bytes(done->begin(), done->end())).last_error();
  }
  // Each message heard: "NAME" for a plain RTM_NEWLINK, "-NAME" for a plain RTM_DELLINK,
  // "br NAME STATE" for an AF_BRIDGE RTM_NEWLINK (its IFLA_PROTINFO's state) and "br -NAME"
  // for an AF_BRIDGE RTM_DELLINK (no IFLA_PROTINFO); `only`: the messages about it alone.
  std::vector<std::string> heard(const std::string& only = "") {
    std::vector<std::string> out;
    Datagram d;
    while (mon->pop_notification(d)) {
      auto msgs = wire::split_messages(d);
      EXPECT_TRUE(msgs);
      for (const auto& m : *msgs) {
        ifinfomsg ifi;
        std::memcpy(&ifi, m.payload().data(), sizeof(ifi));
        auto attrs = wire::parse_raw_attrs(m.payload().subspan(NLMSG_ALIGN(sizeof(ifi))), 0);
        EXPECT_TRUE(attrs);
        std::string name;
        const wire::RawAttr* protinfo = nullptr;
        for (const auto& a : *attrs) {
          if (a.type == IFLA_IFNAME) name = a.as_string();
          if (a.type == IFLA_PROTINFO) protinfo = &a;
        }
        if (!only.empty() && name != only) continue;
        const bool del = m.hdr.nlmsg_type == RTM_DELLINK;
        if (ifi.ifi_family != AF_BRIDGE) {
          out.push_back((del ? "-" : "") + name);
          continue;
        }
        // Linux: br_info_notify — no request header: seq and port id 0, no flags.
        EXPECT_EQ(m.hdr.nlmsg_seq, 0u);
        EXPECT_EQ(m.hdr.nlmsg_pid, 0u);
        EXPECT_EQ(m.hdr.nlmsg_flags, 0u);
        EXPECT_EQ(ifi.ifi_change, 0u);
        if (del) {
          EXPECT_EQ(protinfo, nullptr);
          out.push_back("br -" + name);
          continue;
        }
        EXPECT_NE(protinfo, nullptr);
        if (!protinfo) continue;
        EXPECT_TRUE(protinfo->nested_flag);
        std::string state = "?";
        last_fwd_timer = ~0ull;
        auto settings = wire::parse_nested(*protinfo);
        EXPECT_TRUE(settings);
        if (!settings) continue;
        for (const auto& a : *settings) {
          if (a.type == IFLA_BRPORT_STATE) state = state_name(a.data[0]);
          if (a.type == IFLA_BRPORT_FORWARD_DELAY_TIMER)
            std::memcpy(&last_fwd_timer, a.data.data(), sizeof(last_fwd_timer));
        }
        out.push_back("br " + name + " " + state);
      }
    }
    return out;
  }
  static std::string state_name(std::uint8_t s) {
    switch (s) {
      case BR_STATE_DISABLED:
        return "disabled";
      case BR_STATE_FORWARDING:
        return "forwarding";
      case BR_STATE_BLOCKING:
        return "blocking";
      default:
        return std::to_string(s);
    }
  }
  int idx(const std::string& name) { return find(name)->ifindex(); }
  // v0 a port of br0, both up, the carrier on (v1 up): the port forwards.
  void forwarding_port() {
    ASSERT_EQ(master("v0", idx("br0")), 0);
    ASSERT_EQ(up("br0"), 0);
    ASSERT_EQ(up("v1"), 0);
    ASSERT_EQ(up("v0"), 0);
    (void)heard();
  }

  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
  std::unique_ptr<Session> mon;
  std::uint64_t last_fwd_timer = 0;  // IFLA_BRPORT_FORWARD_DELAY_TIMER of the last heard
};

using Seq = std::vector<std::string>;

// Linux: br_add_if announces the port after its NETDEV_CHANGEUPPER, its IFF_PROMISC
// (nbp_update_port_count) and the bridge's features (its first port's: `event FEATURE
// CHANGE`), before the bridge's NETDEV_CHANGEADDR (the bridge takes the port's address); a
// port that does not run is announced once, disabled.
TEST_F(BridgePortNotifyTest, EnslavingAnnouncesThePortBeforeTheBridgesNewAddress) {
  ASSERT_EQ(master("v0", idx("br0")), 0);
  EXPECT_EQ(heard(), (Seq{"v0", "v0", "br0", "br v0 disabled", "br0"}));
}

// Linux: br_stp_enable_port announces twice (br_make_forwarding, then itself), then
// br_add_if once more.
TEST_F(BridgePortNotifyTest, EnslavingARunningPortEnablesItAndAnnouncesItThrice) {
  ASSERT_EQ(up("br0"), 0);
  ASSERT_EQ(up("v1"), 0);
  ASSERT_EQ(up("v0"), 0);
  (void)heard();
  ASSERT_EQ(master("v0", idx("br0")), 0);
  EXPECT_EQ(heard("v0"),
            (Seq{"v0", "v0", "br v0 forwarding", "br v0 forwarding", "br v0 forwarding"}));
}

// Linux: br_device_event — NETDEV_UP of a port without carrier enables nothing and
// announces it; the carrier's NETDEV_CHANGE (the link watch) enables it: two
// announcements, before the port's own RTM_NEWLINK. NETDEV_DOWN disables it: one, after
// the port's RTM_NEWLINK.
TEST_F(BridgePortNotifyTest, UpCarrierAndDownAnnounceThePortAsLinuxDoes) {
  ASSERT_EQ(master("v0", idx("br0")), 0);
  ASSERT_EQ(up("br0"), 0);
  (void)heard();
  ASSERT_EQ(up("v0"), 0);
  EXPECT_EQ(heard(), (Seq{"v0", "br v0 disabled"}));
  ASSERT_EQ(up("v1"), 0);
  EXPECT_EQ(heard("v0"), (Seq{"br v0 forwarding", "br v0 forwarding", "v0"}));
  ASSERT_EQ(up("v0", false), 0);
  EXPECT_EQ(heard("v0"), (Seq{"v0", "br v0 disabled"}));
}

// Linux: br_setlink announces the port it changed, and nothing else; do_setlink's
// netdev_state_change for `ip link set ... type bridge_slave` makes br_device_event
// announce the port (NETDEV_CHANGE), then rtnetlink its RTM_NEWLINK.
TEST_F(BridgePortNotifyTest, ASettingChangeAnnouncesThePort) {
  forwarding_port();
  ASSERT_EQ(bridge_set_cost("v0", 5), 0);
  EXPECT_EQ(heard(), (Seq{"br v0 forwarding"}));
  ASSERT_EQ(set("v0",
                [](LinkRequest& r) {
                  r.has_slave_data = true;
                  r.slave_kind = "bridge";
                  r.slave_data = {Attr::u16(IFLA_BRPORT_PRIORITY, 7)};
                }),
            0);
  EXPECT_EQ(heard(), (Seq{"br v0 forwarding", "v0"}));
  // A port that is down: Linux announces nothing for `ip link set`, the port for `bridge`.
  ASSERT_EQ(up("v0", false), 0);
  (void)heard();
  ASSERT_EQ(set("v0",
                [](LinkRequest& r) {
                  r.has_slave_data = true;
                  r.slave_kind = "bridge";
                  r.slave_data = {Attr::u16(IFLA_BRPORT_PRIORITY, 8)};
                }),
            0);
  EXPECT_EQ(heard(), Seq{});
  ASSERT_EQ(bridge_set_cost("v0", 6), 0);
  EXPECT_EQ(heard(), (Seq{"br v0 disabled"}));
}

// Linux: del_nbp — the port's IFF_PROMISC given back (nbp_delete_promisc: its
// RTM_NEWLINK), the port disabled (announced), announced leaving (RTM_DELLINK, no
// IFLA_PROTINFO), then unlinked from the bridge (its RTM_NEWLINK without a master).
TEST_F(BridgePortNotifyTest, AReleasedPortIsAnnouncedDisabledThenLeaving) {
  forwarding_port();
  ASSERT_EQ(master("v0", 0), 0);
  EXPECT_EQ(heard("v0"), (Seq{"v0", "br v0 disabled", "br -v0", "v0"}));
}

// Linux: br_device_event's NETDEV_CHANGEADDR of a port — the port's entries (its new
// address's), the bridge id recalculated (the bridge's own entry for its old address
// deleted), the bridge's NETDEV_CHANGEADDR, then the port announced.
TEST_F(BridgePortNotifyTest, APortsNewAddressChangesTheEntriesBeforeTheBridgesAddress) {
  ASSERT_EQ(master("v0", idx("br0")), 0);
  auto both = open();
  both->add_membership(RTNLGRP_LINK);
  both->add_membership(RTNLGRP_NEIGH);
  (void)heard();
  ASSERT_EQ(set("v0", [](LinkRequest& r) { r.address = HwAddr::ethernet({2, 0, 0, 0, 0, 1}); }), 0);
  EXPECT_EQ(notification_types(*both),
            (std::vector<std::uint16_t>{RTM_NEWLINK, RTM_NEWNEIGH, RTM_DELNEIGH, RTM_NEWLINK,
                                        RTM_NEWLINK}));
  EXPECT_EQ(heard(), (Seq{"v0", "br0", "br v0 disabled"}));
  EXPECT_EQ(find("br0")->address(), HwAddr::ethernet({2, 0, 0, 0, 0, 1}));
}

// Linux: br_set_mac_address — the bridge's own entry for its old address deleted and one
// for the new made (br_stp_change_bridge_id), then its NETDEV_CHANGEADDR; the same address
// again changes no entry, and a port's address no longer moves the bridge's.
TEST_F(BridgePortNotifyTest, TheUsersAddressChangesTheBridgesOwnEntryBeforeItIsAnnounced) {
  auto both = open();
  both->add_membership(RTNLGRP_LINK);
  both->add_membership(RTNLGRP_NEIGH);
  const HwAddr mine = HwAddr::ethernet({2, 0, 0, 0, 0, 9});
  ASSERT_EQ(set("br0", [&](LinkRequest& r) { r.address = mine; }), 0);
  EXPECT_EQ(notification_types(*both),
            (std::vector<std::uint16_t>{RTM_DELNEIGH, RTM_NEWNEIGH, RTM_NEWLINK}));
  ASSERT_EQ(set("br0", [&](LinkRequest& r) { r.address = mine; }), 0);
  EXPECT_EQ(notification_types(*both), (std::vector<std::uint16_t>{RTM_NEWLINK}));
  ASSERT_EQ(master("v0", idx("br0")), 0);
  ASSERT_EQ(set("v0", [](LinkRequest& r) { r.address = HwAddr::ethernet({2, 0, 0, 0, 0, 1}); }), 0);
  EXPECT_EQ(find("br0")->address(), mine);
}

// Linux: the port's NETDEV_DOWN disables it (announced), then its NETDEV_UNREGISTER
// releases it (del_nbp: announced again, then leaving), before its RTM_DELLINK.
TEST_F(BridgePortNotifyTest, ADeletedPortIsDisabledReleasedThenWithdrawn) {
  forwarding_port();
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 5, named("v0"))).last_error(), 0);
  Seq v0 = heard("v0");
  // (ifcore also sends the port's RTM_NEWLINK without a master while it is unregistered,
  // which Linux leaves out.)
  v0.erase(std::remove(v0.begin() + 1, v0.end(), std::string("v0")), v0.end());
  EXPECT_EQ(v0, (Seq{"v0", "br v0 disabled", "br v0 disabled", "br -v0", "-v0"}));
}

// Linux: br_dev_delete releases the ports (del_nbp) before the bridge is closed and
// unregistered; br_dev_stop disables the ports that are enabled, br_dev_open enables those
// that run, before the bridge's own RTM_NEWLINK.
TEST_F(BridgePortNotifyTest, TheBridgeGoingDownUpAndAwayAnnouncesItsPortsFirst) {
  forwarding_port();
  ASSERT_EQ(up("br0", false), 0);
  EXPECT_EQ(heard(), (Seq{"br v0 disabled", "br0"}));
  ASSERT_EQ(up("br0"), 0);
  Seq seq = heard();
  ASSERT_GE(seq.size(), 3u);
  EXPECT_EQ(Seq(seq.begin(), seq.begin() + 3),
            (Seq{"br v0 forwarding", "br v0 forwarding", "br0"}));
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 6, named("br0"))).last_error(), 0);
  EXPECT_EQ(heard(), (Seq{"v0", "br v0 disabled", "br -v0", "v0", "br0", "-br0"}));
}

// Linux: br_make_forwarding arms the forward delay timer (IFLA_BRPORT_FORWARD_DELAY_TIMER
// counts down from it); when it runs, the port is announced once more.
TEST_F(BridgePortNotifyTest, TheForwardDelayTimerAnnouncesThePortWhenItRuns) {
  ASSERT_EQ(master("v0", idx("br0")), 0);
  ASSERT_EQ(up("br0"), 0);
  ASSERT_EQ(up("v1"), 0);
  (void)heard();
  ASSERT_EQ(up("v0"), 0);
  EXPECT_EQ(heard("v0"),
            (Seq{"v0", "br v0 disabled", "br v0 forwarding", "br v0 forwarding", "v0"}));
  EXPECT_EQ(last_fwd_timer, 1500u);  // 15 s, in 1/100 s
  clock->advance(10s);
  {
    auto ctl = engine->control();
    run_timers(ctl);
  }
  EXPECT_EQ(heard(), Seq{});
  ASSERT_EQ(bridge_set_cost("v0", 5), 0);
  EXPECT_EQ(heard(), (Seq{"br v0 forwarding"}));
  EXPECT_EQ(last_fwd_timer, 500u);
  clock->advance(5s);
  {
    auto ctl = engine->control();
    run_timers(ctl);
  }
  EXPECT_EQ(heard(), (Seq{"br v0 forwarding"}));
  EXPECT_EQ(last_fwd_timer, 0u);
}

// Linux: br_set_port_state then br_port_state_selection: a port set blocking that may
// forward is made forwarding again (br_make_forwarding, announced), then br_setlink
// announces it.
TEST_F(BridgePortNotifyTest, APortSetBlockingForwardsAgainAnnouncedTwice) {
  forwarding_port();
  wire::MessageBuilder b;
  b.begin({RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK, 4, 0});
  ifinfomsg ifi{};
  ifi.ifi_family = AF_BRIDGE;
  ifi.ifi_index = idx("v0");
  b.put_struct(ifi);
  std::size_t nest = b.begin_nest(IFLA_PROTINFO | NLA_F_NESTED);
  b.put_u8(IFLA_BRPORT_STATE, BR_STATE_BLOCKING);
  b.end_nest(nest);
  auto done = b.end();
  ASSERT_TRUE(done);
  ASSERT_EQ(send(Bytes(done->begin(), done->end())).last_error(), 0);
  EXPECT_EQ(heard(), (Seq{"br v0 forwarding", "br v0 forwarding"}));
}

}  // namespace
}  // namespace ifcore::rtnl::test
