// tests/rtnl/notify_test.cc — RTNLGRP_LINK notifications: which events produce which
// messages, the namespace filter, and a session that never reads overflowing while the
// others keep being served.
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/veth.h>

#include "ifcore/inet.h"
#include "rtnl/fixture.h"
#include "rtnl/wire/control_msg.h"

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

std::vector<wire::LinkMessage> drain(Session& s, std::vector<std::uint16_t>* types = nullptr) {
  std::vector<wire::LinkMessage> out;
  Datagram d;
  while (s.pop_notification(d)) {
    auto msgs = wire::split_messages(d);
    EXPECT_TRUE(msgs);
    for (const auto& m : *msgs) {
      EXPECT_EQ(m.hdr.nlmsg_seq, 0u);
      EXPECT_EQ(m.hdr.nlmsg_pid, 0u);
      if (types) types->push_back(m.hdr.nlmsg_type);
      auto lm = wire::decode_link_message(m);
      EXPECT_TRUE(lm);
      if (lm) out.push_back(*lm);
    }
  }
  return out;
}

// Linux (veth_newlink): the peer is configured, and announced, before the pair is tied
// (IFLA_LINK 0) and without the request's header, so an echo carries only the named end;
// a deleted pair is untied first, so its RTM_DELLINKs carry IFLA_LINK 0 too.
TEST_F(RtnlTest, VethPairIsAnnouncedAndWithdrawnUntied) {
  auto mon = open();
  mon->add_membership(RTNLGRP_LINK);
  Replies r = send(link_msg(RTM_NEWLINK, kCreate | NLM_F_ECHO, 7, veth_pair("v0", "v1")));
  ASSERT_EQ(r.last_error(), 0);
  ASSERT_EQ(r.msgs.size(), 2u);  // the echo of v0, then the ack
  auto echoed = wire::decode_link_message(r.msgs[0]);
  ASSERT_TRUE(echoed);
  EXPECT_EQ(echoed->name, "v0");
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_seq, 7u);
  // The monitor hears v1 with seq 0 and port 0, then v0 with the request's (Linux:
  // rtnl_notify sends the echoed message to the group as it is).
  std::vector<std::pair<wire::LinkMessage, std::uint32_t>> heard;  // message, seq
  Datagram d;
  while (mon->pop_notification(d)) {
    auto ms = wire::split_messages(d);
    ASSERT_TRUE(ms);
    for (const auto& m : *ms) {
      auto lm = wire::decode_link_message(m);
      ASSERT_TRUE(lm);
      heard.emplace_back(*lm, m.hdr.nlmsg_seq);
    }
  }
  ASSERT_EQ(heard.size(), 2u);
  EXPECT_EQ(heard[0].first.name, "v1");
  EXPECT_EQ(heard[0].second, 0u);
  EXPECT_EQ(heard[0].first.link, std::optional<std::uint32_t>(0));
  EXPECT_EQ(heard[1].first.name, "v0");
  EXPECT_EQ(heard[1].second, 7u);
  EXPECT_EQ(heard[1].first.link, std::optional<std::uint32_t>(heard[0].first.ifindex));

  std::vector<std::uint16_t> types;
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 8, named("v0"))).last_error(), 0);
  auto msgs = drain(*mon, &types);
  ASSERT_EQ(types, (std::vector<std::uint16_t>{RTM_DELLINK, RTM_DELLINK}));
  for (const auto& m : msgs) EXPECT_EQ(m.link, std::optional<std::uint32_t>(0)) << m.name;
}

TEST_F(RtnlTest, CreateUpDeleteNotifications) {
  auto mon = open();
  mon->add_membership(RTNLGRP_LINK);
  LinkRequest req = named("d0", "dummy");
  req.flags = IFF_UP;
  req.change = IFF_UP;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, req)).last_error(), 0);
  std::vector<std::uint16_t> types;
  auto msgs = drain(*mon, &types);
  // Linux: rtnl_configure_link announces the configured device once.
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(types[0], RTM_NEWLINK);
  EXPECT_EQ(msgs[0].name, "d0");
  EXPECT_EQ(msgs[0].change, ~0u);
  EXPECT_TRUE(msgs[0].flags & IFF_UP);

  LinkRequest mtu = named("d0");
  mtu.mtu = 1400;
  ASSERT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 2, mtu)).last_error(), 0);
  msgs = drain(*mon);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].mtu, 1400u);

  types.clear();
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 3, named("d0"))).last_error(), 0);
  msgs = drain(*mon, &types);
  // Linux: unregister_netdevice_many closes the device (RTM_NEWLINK), then RTM_DELLINK.
  ASSERT_EQ(types, (std::vector<std::uint16_t>{RTM_NEWLINK, RTM_DELLINK}));
  EXPECT_FALSE(msgs[0].flags & IFF_UP);
  EXPECT_EQ(msgs[1].name, "d0");
}

// Linux: __vxlan_dev_create configures the device (announced) before it announces its
// default forwarding entry; vxlan_dellink flushes the entries (announced) before the device
// is unregistered (checked with `bridge monitor` on the kernel).
TEST_F(RtnlTest, AVxlansDefaultEntryComesAfterItAndGoesBeforeIt) {
  auto mon = open();
  mon->add_membership(RTNLGRP_LINK);
  mon->add_membership(RTNLGRP_NEIGH);
  LinkRequest vx = named("vx0", "vxlan");
  vx.has_info_data = true;
  const std::uint8_t remote[] = {192, 0, 2, 1};
  vx.info_data = {Attr::u32(IFLA_VXLAN_ID, 10), Attr::binary(IFLA_VXLAN_GROUP, remote),
                  Attr::be16(IFLA_VXLAN_PORT, 4789)};
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, vx)).last_error(), 0);
  auto types = [&] { return notification_types(*mon); };
  EXPECT_EQ(types(), (std::vector<std::uint16_t>{RTM_NEWLINK, RTM_NEWNEIGH}));
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 2, named("vx0"))).last_error(), 0);
  EXPECT_EQ(types(), (std::vector<std::uint16_t>{RTM_DELNEIGH, RTM_DELLINK}));
}

// Linux: a vxlan deleted with its lower stays up through the lower's close; its entries
// are flushed from the lower's NETDEV_UNREGISTER (vxlan_dellink), then its own batch
// closes it (checked with `ip monitor link neigh` on the kernel).
TEST_F(RtnlTest, AVxlanDeletedWithItsLowerFlushesItsEntriesAfterTheLowersDown) {
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v0", "v1"))).last_error(), 0);
  LinkRequest vx = named("vx0", "vxlan");
  vx.has_info_data = true;
  const std::uint8_t remote[] = {192, 0, 2, 1};
  vx.info_data = {Attr::u32(IFLA_VXLAN_ID, 10), Attr::binary(IFLA_VXLAN_GROUP, remote),
                  Attr::be16(IFLA_VXLAN_PORT, 4789),
                  Attr::u32(IFLA_VXLAN_LINK, static_cast<std::uint32_t>(find("v0")->ifindex()))};
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 2, vx)).last_error(), 0);
  for (const char* name : {"v0", "vx0"}) {
    LinkRequest up = named(name);
    up.flags = up.change = IFF_UP;
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 3, up)).last_error(), 0);
  }
  auto mon = open();
  mon->add_membership(RTNLGRP_LINK);
  mon->add_membership(RTNLGRP_NEIGH);
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 4, named("v0"))).last_error(), 0);
  EXPECT_EQ(notification_types(*mon),
            (std::vector<std::uint16_t>{RTM_NEWLINK, RTM_DELNEIGH, RTM_NEWLINK, RTM_DELLINK,
                                        RTM_DELLINK, RTM_DELLINK}));
}

// Linux 6.18 (checked with `ip monitor` on the kernel): renaming a device that is up
// announces the device first (rtnetlink_event, the chain's first subscriber, on
// NETDEV_CHANGENAME), then its IPv4 address under the new label (inetdev_changename); an
// mtu change likewise announces the device before what the protocols do about it.
TEST_F(RtnlTest, RenameAnnouncesTheDeviceBeforeItsAddresses) {
  LinkRequest req = named("d0", "dummy");
  req.flags = req.change = IFF_UP;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, req)).last_error(), 0);
  int idx = find("d0")->ifindex();
  {
    auto ctl = engine->control();
    inet::AddrRequest a;
    a.family = AF_INET;
    a.local = a.address = *IpAddr::parse("10.1.1.1");
    a.prefixlen = 24;
    a.ifindex = idx;
    ASSERT_TRUE(inet::add_address(ctl, *ctl.find_namespace("default"), a));
  }
  auto mon = open();
  mon->add_membership(RTNLGRP_LINK);
  mon->add_membership(RTNLGRP_IPV4_IFADDR);
  LinkRequest ren;
  ren.ifindex = idx;
  ren.name = "w0";
  ASSERT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 2, ren)).last_error(), 0);
  std::vector<std::uint16_t> types;
  Datagram d;
  while (mon->pop_notification(d)) {
    auto msgs = wire::split_messages(d);
    ASSERT_TRUE(msgs);
    for (const auto& m : *msgs) types.push_back(m.hdr.nlmsg_type);
  }
  EXPECT_EQ(types, (std::vector<std::uint16_t>{RTM_NEWLINK, RTM_NEWADDR}));
}

TEST_F(RtnlTest, FailedCreateIsNeverAnnounced) {
  auto mon = open();
  mon->add_membership(RTNLGRP_LINK);
  LinkRequest req = named("d0", "dummy");
  req.master = 1;  // lo cannot be a master: the device is made, then withdrawn
  EXPECT_NE(send(link_msg(RTM_NEWLINK, kCreate, 1, req)).last_error(), 0);
  EXPECT_EQ(find("d0"), nullptr);
  EXPECT_EQ(mon->pending_notifications(), 0u);
}

TEST_F(RtnlTest, NotificationsNeedMembershipAndStayInTheirNamespace) {
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.create_namespace("blue"));
  }
  auto deaf = open();
  SessionOptions blue;
  blue.ns = "blue";
  auto other = open(blue);
  other->add_membership(RTNLGRP_LINK);
  auto mask = open();
  mask->set_group_mask(1u << (RTNLGRP_LINK - 1));  // RTMGRP_LINK
  ASSERT_EQ(create("d0"), 0);
  EXPECT_EQ(deaf->pending_notifications(), 0u);
  EXPECT_EQ(other->pending_notifications(), 0u);
  EXPECT_EQ(mask->pending_notifications(), 1u);
  mask->drop_membership(RTNLGRP_LINK);
  ASSERT_EQ(create("d1"), 0);
  EXPECT_EQ(mask->pending_notifications(), 1u);
  // Moving a device: RTM_DELLINK in the old namespace, RTM_NEWLINK in the new one.
  auto here = open();
  here->add_membership(RTNLGRP_LINK);
  LinkRequest mv = named("d0");
  mv.net_ns_name = "blue";
  ASSERT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 1, mv)).last_error(), 0);
  std::vector<std::uint16_t> t_here, t_other;
  drain(*here, &t_here);
  drain(*other, &t_other);
  EXPECT_EQ(t_here, (std::vector<std::uint16_t>{RTM_DELLINK}));
  EXPECT_EQ(t_other, (std::vector<std::uint16_t>{RTM_NEWLINK}));
}

// The hub counts the members of each group, so that an event nobody listens to is not
// encoded; every way of joining and leaving keeps the count, and nobody is missed.
TEST_F(RtnlTest, GroupMembersAreCountedEveryWayTheyJoinAndLeave) {
  auto a = open();
  a->add_membership(RTNLGRP_LINK);
  a->add_membership(RTNLGRP_LINK);  // twice: one member
  auto b = open();
  b->set_group_mask(1u << (RTNLGRP_LINK - 1));
  b->set_group_mask(1u << (RTNLGRP_LINK - 1));  // bound again, same groups
  a->drop_membership(RTNLGRP_LINK);
  ASSERT_EQ(create("d0"), 0);
  EXPECT_EQ(a->pending_notifications(), 0u);
  EXPECT_EQ(b->pending_notifications(), 1u);
  {
    auto gone = open();
    gone->add_membership(RTNLGRP_LINK);
  }                      // a session that goes leaves its groups
  b->set_group_mask(0);  // bound again without the group
  ASSERT_EQ(create("d1"), 0);
  EXPECT_EQ(b->pending_notifications(), 1u);
  auto c = open();
  c->set_group_mask(1u << (RTNLGRP_LINK - 1));
  ASSERT_EQ(create("d2"), 0);
  EXPECT_EQ(c->pending_notifications(), 1u);
  a->add_membership(RTNLGRP_LINK);
  c->drop_membership(RTNLGRP_LINK);
  ASSERT_EQ(create("d3"), 0);
  EXPECT_EQ(a->pending_notifications(), 1u);
  EXPECT_EQ(c->pending_notifications(), 1u);
}

TEST_F(RtnlTest, SessionThatNeverReadsOverflowsOthersKeepWorking) {
  SessionOptions small;
  small.max_queued = 8;
  auto lazy = open(small);
  lazy->add_membership(RTNLGRP_LINK);
  auto busy = open();
  busy->add_membership(RTNLGRP_LINK);
  int wakes = 0;
  busy->set_wakeup([&] { ++wakes; });
  for (int i = 0; i < 50; ++i) ASSERT_EQ(create("d" + std::to_string(i)), 0);
  EXPECT_EQ(lazy->pending_notifications(), 8u);
  EXPECT_TRUE(lazy->take_overflow());
  EXPECT_FALSE(lazy->take_overflow());  // reading clears it
  EXPECT_EQ(busy->pending_notifications(), 50u);
  EXPECT_EQ(wakes, 50);
  EXPECT_FALSE(busy->take_overflow());
  // The lazy client resynchronises with a dump.
  wire::GetLinkRequest g;
  g.dump = true;
  Replies r = roundtrip(*lazy, getlink(1, g));
  EXPECT_EQ(r.msgs.size(), 52u);
  // NETLINK_NO_ENOBUFS: losses are silent.
  auto quiet = open(small);
  quiet->add_membership(RTNLGRP_LINK);
  quiet->set_option(NETLINK_NO_ENOBUFS, 1);
  for (int i = 50; i < 60; ++i) ASSERT_EQ(create("d" + std::to_string(i)), 0);
  EXPECT_FALSE(quiet->take_overflow());
}

TEST(ControlMsg, RoundTripAndOverflowDatagram) {
  ControlRequest req;
  req.ns = "blue";
  req.port_id = 77;
  req.groups = 1;
  req.add_membership = {RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR};
  req.drop_membership = {RTNLGRP_NEIGH};
  req.options = {{NETLINK_EXT_ACK, 1}, {NETLINK_CAP_ACK, 1}};
  req.ring = 1u << 20;
  wire::MessageBuilder b;
  ASSERT_TRUE(encode_control_request(b, 5, req, NLM_F_ACK));
  Bytes bytes = b.take();
  auto m = one(bytes);
  EXPECT_EQ(m.hdr.nlmsg_type, IFCORE_NLMSG_CONTROL);
  EXPECT_EQ(m.hdr.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  auto back = decode_control_request(m);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, req);

  ControlState st{77, "blue", 1, true, 1u << 20};
  ASSERT_TRUE(encode_control_state(b, 5, 77, st));
  bytes = b.take();
  auto st2 = decode_control_state(one(bytes));
  ASSERT_TRUE(st2);
  EXPECT_EQ(*st2, st);

  Bytes bad = nlmsg(IFCORE_NLMSG_CONTROL, NLM_F_REQUEST, 1, 0, attr(99, le32(1)));
  EXPECT_EQ(decode_control_request(one(bad)).error().code, EINVAL);

  auto ov = overflow_datagram();
  EXPECT_TRUE(is_overflow_datagram(ov));
  auto e = wire::decode_error(one(ov));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error, ENOBUFS);
  EXPECT_EQ(e->request.nlmsg_type, IFCORE_NLMSG_CONTROL);
  EXPECT_FALSE(is_overflow_datagram(bytes));
}

}  // namespace
}  // namespace ifcore::rtnl::test
