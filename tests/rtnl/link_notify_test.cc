// tests/rtnl/link_notify_test.cc — which RTM_NEWLINK / RTM_DELLINK a link change, a flag
// change, a lower device's delete and a bridge's first and last port send, in Linux 6.18's
// order and with its ifi_change (each sequence checked with `ip monitor link` and a raw
// RTNLGRP_LINK listener on the kernel).
#include <linux/if_link.h>
#include <linux/netlink.h>

#include "rtnl/fixture.h"

namespace ifcore::rtnl::test {
namespace {

struct Heard {
  std::uint16_t type;
  wire::LinkMessage msg;
};

std::vector<Heard> drain(Session& s) {
  std::vector<Heard> out;
  Datagram d;
  while (s.pop_notification(d)) {
    auto msgs = wire::split_messages(d);
    EXPECT_TRUE(msgs);
    if (!msgs) break;
    for (const auto& m : *msgs) {
      auto lm = wire::decode_link_message(m);
      EXPECT_TRUE(lm);
      if (lm) out.push_back({m.hdr.nlmsg_type, *lm});
    }
  }
  return out;
}

// "NEW d0 0x100" per message: its type, device and ifi_change (and IFLA_EVENT if any).
std::vector<std::string> summary(const std::vector<Heard>& heard) {
  std::vector<std::string> out;
  for (const Heard& h : heard) {
    std::string s =
        fmt::format("{} {} {:#x}", h.type == RTM_DELLINK ? "DEL" : "NEW", h.msg.name, h.msg.change);
    if (h.msg.event) s += fmt::format(" event {}", *h.msg.event);
    out.push_back(std::move(s));
  }
  return out;
}

using Lines = std::vector<std::string>;

class LinkNotifyTest : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    mon = open();
    mon->add_membership(RTNLGRP_LINK);
  }
  void TearDown() override {
    mon.reset();
    RtnlTest::TearDown();
  }
  // Sends a RTM_SETLINK for `name`; returns what the monitor heard.
  Lines set(const std::string& name, LinkRequest req) {
    req.name = name;
    EXPECT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 9, req)).last_error(), 0) << name;
    return summary(drain(*mon));
  }
  Lines flags(const std::string& name, std::uint32_t flags, std::uint32_t change) {
    LinkRequest r;
    r.flags = flags;
    r.change = change;
    return set(name, r);
  }
  std::unique_ptr<Session> mon;
};

// Linux: do_setlink announces group, alias, kind data and the like once, at the end, and
// only while the device is up (netdev_state_change); the mtu and the queue length are
// announced by their events up or down (rtnetlink_event); the offload limits never.
TEST_F(LinkNotifyTest, ChangesOfADownDeviceAnnounceOnlyMtuAndQueueLength) {
  ASSERT_EQ(create("d0"), 0);
  drain(*mon);
  LinkRequest group;
  group.group = 5;
  EXPECT_EQ(set("d0", group), Lines{});
  LinkRequest alias;
  alias.ifalias = "foo";
  EXPECT_EQ(set("d0", alias), Lines{});
  LinkRequest gso;
  gso.gso_max_size = 30000;
  EXPECT_EQ(set("d0", gso), Lines{});
  LinkRequest mtu;
  mtu.mtu = 1400;
  EXPECT_EQ(set("d0", mtu), Lines{"NEW d0 0x0"});
  LinkRequest txq;
  txq.txqlen = 500;
  EXPECT_EQ(set("d0", txq), Lines{"NEW d0 0x0"});
  LinkRequest all;
  all.mtu = 1300;
  all.txqlen = 600;
  all.ifalias = "bar";
  all.group = 6;
  EXPECT_EQ(set("d0", all), (Lines{"NEW d0 0x0", "NEW d0 0x0"}));
  // Linux: do_setlink's IFLA_BROADCAST sends NETDEV_CHANGEADDR, announced up or down.
  LinkRequest brd;
  brd.broadcast = *HwAddr::parse("02:00:00:00:00:09");
  EXPECT_EQ(set("d0", brd), Lines{"NEW d0 0x0"});
}

TEST_F(LinkNotifyTest, ChangesOfAnUpDeviceAnnounceOnceAtTheEnd) {
  ASSERT_EQ(create("d0"), 0);
  drain(*mon);
  EXPECT_EQ(flags("d0", IFF_UP, IFF_UP), Lines{"NEW d0 0x1"});
  LinkRequest ga;
  ga.group = 5;
  ga.ifalias = "a";
  EXPECT_EQ(set("d0", ga), Lines{"NEW d0 0x0"});
  EXPECT_EQ(set("d0", ga), Lines{"NEW d0 0x0"});  // unchanged: announced all the same
  LinkRequest gso;
  gso.gso_max_size = 20000;
  EXPECT_EQ(set("d0", gso), Lines{});
  LinkRequest same_txq;
  same_txq.txqlen = 1000;
  EXPECT_EQ(set("d0", same_txq), Lines{});
  LinkRequest all;
  all.mtu = 1200;
  all.txqlen = 800;
  all.ifalias = "qux";
  EXPECT_EQ(set("d0", all), (Lines{"NEW d0 0x0", "NEW d0 0x0", "NEW d0 0x0"}));
}

// Linux: __dev_notify_flags announces a flag change at once, whether or not the device is
// up, in one message whose ifi_change is the flags that changed (IFF_UP among them).
TEST_F(LinkNotifyTest, FlagChangesAreAnnouncedWithTheFlagsThatChanged) {
  // (A veth: a dummy has IFF_NOARP and not IFF_MULTICAST.)
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("d0", "d1"))).last_error(), 0);
  drain(*mon);
  EXPECT_EQ(flags("d0", IFF_PROMISC, IFF_PROMISC), Lines{"NEW d0 0x100"});
  EXPECT_EQ(flags("d0", IFF_NOARP, IFF_NOARP), Lines{"NEW d0 0x80"});
  EXPECT_EQ(flags("d0", 0, IFF_MULTICAST), Lines{"NEW d0 0x1000"});
  EXPECT_EQ(flags("d0", IFF_ALLMULTI, IFF_ALLMULTI), Lines{"NEW d0 0x200"});
  EXPECT_EQ(flags("d0", IFF_PROMISC, IFF_PROMISC), Lines{});  // no change
  EXPECT_EQ(flags("d0", IFF_UP, IFF_UP | IFF_PROMISC), Lines{"NEW d0 0x101"});
  EXPECT_EQ(flags("d0", IFF_MULTICAST, IFF_MULTICAST | IFF_NOARP), Lines{"NEW d0 0x1080"});
  EXPECT_EQ(flags("d0", 0, IFF_UP), Lines{"NEW d0 0x1"});
}

// Linux: a macvlan's NETDEV_UNREGISTER handler unregisters the lower's macvlans in a batch
// of their own, after the lower is closed and before its RTM_DELLINK; nothing is announced
// about a device being unregistered (the lower, as its uppers are unlinked).
TEST_F(LinkNotifyTest, MacvlansOfADeletedLowerGoBeforeItsDellink) {
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v0", "v1"))).last_error(), 0);
  for (const char* name : {"m0", "m1"}) {
    LinkRequest m = named(name, "macvlan");
    m.link = static_cast<std::uint32_t>(find("v0")->ifindex());
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 2, m)).last_error(), 0);
  }
  flags("v0", IFF_UP, IFF_UP);
  flags("m0", IFF_UP, IFF_UP);
  drain(*mon);
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 3, named("v0"))).last_error(), 0);
  EXPECT_EQ(summary(drain(*mon)),
            (Lines{"NEW v0 0x41", "NEW m0 0x41", "DEL m0 0xffffffff", "DEL m1 0xffffffff",
                   "DEL v0 0xffffffff", "DEL v1 0xffffffff"}));
}

// Linux: br_add_if and br_del_if end with netdev_update_features; the bridge's features
// change with its first port and when its last leaves (NETDEV_FEAT_CHANGE, announced with
// IFLA_EVENT_FEATURES, `event FEATURE CHANGE` in ip monitor).
TEST_F(LinkNotifyTest, BridgeAnnouncesAFeatureChangeAtItsFirstAndLastPort) {
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, named("br0", "bridge"))).last_error(), 0);
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v0", "v1"))).last_error(), 0);
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v2", "v3"))).last_error(), 0);
  drain(*mon);
  const std::string feat = fmt::format("NEW br0 0x0 event {}", IFLA_EVENT_FEATURES);
  auto count = [&](const Lines& l) { return std::count(l.begin(), l.end(), feat); };
  LinkRequest to_br;
  to_br.master = static_cast<std::uint32_t>(find("br0")->ifindex());
  LinkRequest out;
  out.master = 0;
  EXPECT_EQ(count(set("v0", to_br)), 1);
  EXPECT_EQ(count(set("v2", to_br)), 0);
  EXPECT_EQ(count(set("v0", out)), 0);
  Lines last = set("v2", out);
  ASSERT_EQ(count(last), 1);
  EXPECT_EQ(last.back(), feat);  // after the bridge's new address
}

// Linux: a veth end's close and open change its peer's carrier, and a bridge port's state
// its bridge's; the link watch announces them after the change that caused them (checked
// with `ip monitor link` on the kernel: its lines name the same devices in this order).
TEST_F(LinkNotifyTest, APeersAndABridgesCarrierAreAnnouncedAfterTheirCause) {
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, named("br0", "bridge"))).last_error(), 0);
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v0", "v1"))).last_error(), 0);
  LinkRequest to_br;
  to_br.master = static_cast<std::uint32_t>(find("br0")->ifindex());
  set("v0", to_br);
  for (const char* name : {"v1", "br0", "v0"}) flags(name, IFF_UP, IFF_UP);
  drain(*mon);
  // Each message's device, "br " before a bridge port's (AF_BRIDGE) message.
  auto heard = [&](const std::string& name, bool up) {
    LinkRequest r;
    r.name = name;
    r.flags = up ? IFF_UP : 0;
    r.change = IFF_UP;
    EXPECT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 9, r)).last_error(), 0);
    Lines out;
    for (const Heard& h : drain(*mon))
      out.push_back((h.msg.family == AF_BRIDGE ? "br " : "") + h.msg.name);
    return out;
  };
  EXPECT_EQ(heard("v0", false), (Lines{"v0", "br v0", "v1", "br0"}));
  EXPECT_EQ(heard("v0", true), (Lines{"v0", "br v0", "br v0", "br v0", "v0", "v1", "br0"}));
  // (v0's link watch event disables the port, which turns the bridge's carrier off: the
  // bridge's event comes after v0's own message.)
  EXPECT_EQ(heard("v1", false), (Lines{"v1", "br v0", "v0", "br0"}));
}

// Linux 6.18's RTM_DELLINK carries an empty IFLA_AF_SPEC (the families' state is gone),
// and every link message empty IFLA_DEVLINK_PORT and IFLA_DPLL_PIN nests.
TEST_F(LinkNotifyTest, DellinkCarriesTheEmptyNestsLinuxSends) {
  ASSERT_EQ(create("d0"), 0);
  drain(*mon);
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 3, named("d0"))).last_error(), 0);
  Datagram d;
  ASSERT_TRUE(mon->pop_notification(d));
  auto msgs = wire::split_messages(d);
  ASSERT_TRUE(msgs);
  ASSERT_EQ(msgs->size(), 1u);
  const auto& m = (*msgs)[0];
  ASSERT_EQ(m.hdr.nlmsg_type, RTM_DELLINK);
  std::vector<std::pair<std::uint16_t, std::uint16_t>> tail;  // type, length
  auto p = m.payload().subspan(NLMSG_ALIGN(sizeof(ifinfomsg)));
  while (p.size() >= sizeof(nlattr)) {
    nlattr a;
    std::memcpy(&a, p.data(), sizeof a);
    ASSERT_GE(a.nla_len, sizeof a);
    tail.emplace_back(a.nla_type & NLA_TYPE_MASK, a.nla_len);
    p = p.subspan(std::min<std::size_t>(p.size(), NLA_ALIGN(a.nla_len)));
  }
  ASSERT_GE(tail.size(), 3u);
  tail.erase(tail.begin(), tail.end() - 4);
  EXPECT_EQ(tail, (std::vector<std::pair<std::uint16_t, std::uint16_t>>{
                      {IFLA_AF_SPEC, 4}, {IFLA_MAP, 36}, {62, 4}, {65, 4}}));
}

}  // namespace
}  // namespace ifcore::rtnl::test
