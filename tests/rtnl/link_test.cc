// tests/rtnl/link_test.cc — RTM_NEWLINK / RTM_SETLINK / RTM_DELLINK through a Session, byte
// by byte: ACKs, errors with and without NETLINK_CAP_ACK / NETLINK_EXT_ACK, NLM_F_* flags.
#include <linux/netlink.h>

#include "rtnl/fixture.h"
#include "rtnl/wire/bulk.h"

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

TEST_F(RtnlTest, CreateAcksWithSeqAndPortId) {
  Bytes req = link_msg(RTM_NEWLINK, kCreate, 77, named("d0", "dummy"));
  Replies r = send(req);
  ASSERT_EQ(r.dgs.size(), 1u);
  ASSERT_EQ(r.msgs.size(), 1u);
  const auto& h = r.msgs[0].hdr;
  EXPECT_EQ(h.nlmsg_type, NLMSG_ERROR);
  EXPECT_EQ(h.nlmsg_seq, 77u);
  EXPECT_EQ(h.nlmsg_pid, 4242u);
  EXPECT_EQ(h.nlmsg_flags, NLM_F_CAPPED);
  // nlmsgerr: error 0 and the request's header only.
  EXPECT_EQ(h.nlmsg_len, NLMSG_HDRLEN + 4 + NLMSG_HDRLEN);
  EXPECT_EQ(r.last_error(), 0);
  EXPECT_EQ(Bytes(r.msgs[0].bytes.begin() + 20, r.msgs[0].bytes.end()),
            Bytes(req.begin(), req.begin() + 16));
  EXPECT_NE(find("d0"), nullptr);
}

TEST_F(RtnlTest, NoAckFlagMeansNoReply) {
  Replies r = send(link_msg(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 1, named("d0", "dummy")));
  EXPECT_TRUE(r.dgs.empty());
  EXPECT_NE(find("d0"), nullptr);
}

TEST_F(RtnlTest, ExistingWithExclIsEexistEchoingTheWholeRequest) {
  ASSERT_EQ(create("d0"), 0);
  Bytes req = link_msg(RTM_NEWLINK, kCreate, 5, named("d0", "dummy"));
  Replies r = send(req);
  ASSERT_EQ(r.msgs.size(), 1u);
  EXPECT_EQ(r.last_error(), EEXIST);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_flags, 0);  // not capped, no TLVs
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_len, NLMSG_HDRLEN + 4 + req.size());
  EXPECT_EQ(Bytes(r.msgs[0].bytes.begin() + 20, r.msgs[0].bytes.end()), req);
}

TEST_F(RtnlTest, CapAckEchoesOnlyTheHeader) {
  ASSERT_EQ(create("d0"), 0);
  session->set_option(NETLINK_CAP_ACK, 1);
  Replies r = send(link_msg(RTM_NEWLINK, kCreate, 5, named("d0", "dummy")));
  EXPECT_EQ(r.last_error(), EEXIST);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_flags, NLM_F_CAPPED);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_len, NLMSG_HDRLEN + 4 + NLMSG_HDRLEN);
}

TEST_F(RtnlTest, UnknownKindIsEopnotsuppWithExtackOnlyWhenAsked) {
  Replies r = send(link_msg(RTM_NEWLINK, kCreate, 1, named("x0", "nosuchkind")));
  EXPECT_EQ(r.last_error(), EOPNOTSUPP);
  EXPECT_FALSE(r.msgs[0].hdr.nlmsg_flags & NLM_F_ACK_TLVS);
  EXPECT_EQ(r.last_error_reply().message, "");
  session->set_option(NETLINK_EXT_ACK, 1);
  r = send(link_msg(RTM_NEWLINK, kCreate, 2, named("x0", "nosuchkind")));
  EXPECT_EQ(r.last_error(), EOPNOTSUPP);
  EXPECT_TRUE(r.msgs[0].hdr.nlmsg_flags & NLM_F_ACK_TLVS);
  EXPECT_EQ(r.last_error_reply().message, "Unknown device type");
  EXPECT_EQ(r.last_error_reply().attr_offset, -1);
}

TEST_F(RtnlTest, NoKindIsUnknownDeviceType) {
  session->set_option(NETLINK_EXT_ACK, 1);
  Replies r = send(link_msg(RTM_NEWLINK, kCreate, 1, named("x0")));
  EXPECT_EQ(r.last_error(), EOPNOTSUPP);
  EXPECT_EQ(r.last_error_reply().message, "Unknown device type");
}

// Errors Linux 6.18 answers with the errno alone (checked with `ip` against the kernel):
// the reply carries no NLMSGERR_ATTR_MSG, so `ip` prints "RTNETLINK answers: ...".
TEST_F(RtnlTest, ErrorsLinuxSendsWithoutExtack) {
  session->set_option(NETLINK_EXT_ACK, 1);
  ASSERT_EQ(create("d0"), 0);
  ASSERT_EQ(create("d1"), 0);
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, named("br0", "bridge"))).last_error(), 0);
  int d1 = find("d1")->ifindex(), br0 = find("br0")->ifindex(), lo = find("lo")->ifindex();
  auto alone = [&](const LinkRequest& q, std::uint16_t type, std::uint16_t flags, int code) {
    Replies r = send(link_msg(type, flags, 9, q));
    EXPECT_EQ(r.last_error(), code) << q.name.value_or("?");
    EXPECT_EQ(r.last_error_reply().message, "") << q.name.value_or("?");
    EXPECT_FALSE(r.msgs.back().hdr.nlmsg_flags & NLM_F_ACK_TLVS);
  };
  // Linux: do_set_master, a master without ndo_add_slave.
  LinkRequest to_dummy = named("d0");
  to_dummy.master = static_cast<std::uint32_t>(d1);
  alone(to_dummy, RTM_NEWLINK, NLM_F_ACK, EOPNOTSUPP);
  // Linux: br_add_if, loopback is no Ethernet device.
  LinkRequest lo_port = named("lo");
  lo_port.master = static_cast<std::uint32_t>(br0);
  alone(lo_port, RTM_NEWLINK, NLM_F_ACK, EINVAL);
  // Linux: rtnl_changelink, port data on a device without a master, kind data for
  // another kind.
  LinkRequest slave = named("d0");
  slave.has_slave_data = true;
  slave.slave_kind = "bridge";
  alone(slave, RTM_NEWLINK, NLM_F_ACK, EOPNOTSUPP);
  LinkRequest other = named("d0", "veth");
  other.has_info_data = true;
  alone(other, RTM_NEWLINK, NLM_F_ACK, EOPNOTSUPP);
  // Linux: macvlan_port_create, loopback as the lower device.
  LinkRequest mv = named("mv0", "macvlan");
  mv.link = static_cast<std::uint32_t>(lo);
  alone(mv, RTM_NEWLINK, kCreate, EINVAL);
  // Linux: validate_linkmsg, a broadcast address shorter than the device's.
  LinkRequest brd = named("d0");
  brd.broadcast = HwAddr(std::vector<std::uint8_t>{0, 0x11, 0x22});
  alone(brd, RTM_NEWLINK, NLM_F_ACK, EINVAL);
}

// Linux: IFLA_CARRIER needs ndo_change_carrier (dummy has it, veth not: EOPNOTSUPP alone),
// IFLA_PROTO_DOWN dev->change_proto_down (do_set_proto_down explains its refusal).
TEST_F(RtnlTest, CarrierAndProtodownOnlyWhereTheKindTakesThem) {
  session->set_option(NETLINK_EXT_ACK, 1);
  ASSERT_EQ(create("d0"), 0);
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v0", "v1"))).last_error(), 0);
  LinkRequest veth_carrier = named("v0");
  veth_carrier.carrier = 0;
  Replies r = send(link_msg(RTM_NEWLINK, NLM_F_ACK, 2, veth_carrier));
  EXPECT_EQ(r.last_error(), EOPNOTSUPP);
  EXPECT_EQ(r.last_error_reply().message, "");
  LinkRequest dummy_carrier = named("d0");
  dummy_carrier.carrier = 0;
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 3, dummy_carrier)).last_error(), 0);
  EXPECT_FALSE(find("d0")->carrier());
  dummy_carrier.carrier = 1;
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 4, dummy_carrier)).last_error(), 0);
  EXPECT_TRUE(find("d0")->carrier());
  LinkRequest protodown = named("v0");
  protodown.proto_down = 1;
  r = send(link_msg(RTM_NEWLINK, NLM_F_ACK, 5, protodown));
  EXPECT_EQ(r.last_error(), EOPNOTSUPP);
  EXPECT_EQ(r.last_error_reply().message, "Protodown not supported by device");
}

// Linux: do_set_proto_down on a macvlan: the reasons' bits set by mask, protodown turning
// the carrier off (on again when cleared), and no clearing while a reason is set.
TEST_F(RtnlTest, ProtodownAndItsReasonsOnAMacvlan) {
  session->set_option(NETLINK_EXT_ACK, 1);
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v0", "v1"))).last_error(), 0);
  LinkRequest mv = named("m0", "macvlan");
  mv.link = static_cast<std::uint32_t>(find("v0")->ifindex());
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 2, mv)).last_error(), 0);
  Device* m0 = find("m0");
  ASSERT_NE(m0, nullptr);
  LinkRequest req = named("m0");
  req.proto_down = 1;
  req.proto_down_reason = LinkRequest::ProtoDownReason{1u << 3, 1u << 3};
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 3, req)).last_error(), 0);
  EXPECT_TRUE(m0->proto_down());
  EXPECT_FALSE(m0->carrier());
  EXPECT_EQ(m0->proto_down_reason(), 1u << 3);
  LinkRequest clear = named("m0");
  clear.proto_down = 0;
  Replies r = send(link_msg(RTM_NEWLINK, NLM_F_ACK, 4, clear));
  EXPECT_EQ(r.last_error(), EBUSY);
  EXPECT_EQ(r.last_error_reply().message, "Cannot clear protodown, active reasons");
  EXPECT_TRUE(m0->proto_down());
  // Another bit by mask leaves bit 3; mask 0 sets the whole value.
  LinkRequest more = named("m0");
  more.proto_down_reason = LinkRequest::ProtoDownReason{1u << 5, 1u << 5};
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 5, more)).last_error(), 0);
  EXPECT_EQ(m0->proto_down_reason(), (1u << 3) | (1u << 5));
  clear.proto_down_reason = LinkRequest::ProtoDownReason{0, 0};
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 6, clear)).last_error(), 0);
  EXPECT_FALSE(m0->proto_down());
  EXPECT_TRUE(m0->carrier());
  EXPECT_EQ(m0->proto_down_reason(), 0u);
  // A reason without its value.
  Bytes body = cat({ifinfo(0, 0, m0->ifindex(), 0, 0), attr(IFLA_PROTO_DOWN_REASON, {})});
  r = send(nlmsg(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 7, 0, body));
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "Invalid protodown reason value");
}

// Linux: validate_linkmsg and do_setlink's offload limits: each size checked against the
// device's TSO limit or GRO_MAX_SIZE, a gso size of 64 KiB or less also the IPv4 one, a
// bridge's sizes lowered to its ports' least TSO limit.
TEST_F(RtnlTest, OffloadLimitsAreCheckedKeptAndReported) {
  session->set_option(NETLINK_EXT_ACK, 1);
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v0", "v1"))).last_error(), 0);
  Device* v0 = find("v0");
  ASSERT_NE(v0, nullptr);
  LinkRequest big = named("v0");
  big.gso_max_size = 600000;  // above a veth's 524280
  Replies r = send(link_msg(RTM_NEWLINK, NLM_F_ACK, 2, big));
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "too big gso_max_size");
  LinkRequest small = named("v0");
  small.gso_max_size = 100;  // under the policy's 193
  r = send(link_msg(RTM_NEWLINK, NLM_F_ACK, 3, small));
  EXPECT_EQ(r.last_error(), ERANGE);
  EXPECT_EQ(r.last_error_reply().message, "integer out of range");
  EXPECT_EQ(v0->snapshot_locked().offload, OffloadLimits{});
  LinkRequest set = named("v0");
  set.gso_max_size = 400;
  set.gro_max_size = 300000;
  set.gso_max_segs = 7;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 4, set)).last_error(), 0);
  OffloadLimits want{.gso_max_size = 400,
                     .gso_max_segs = 7,
                     .gro_max_size = 300000,
                     .gso_ipv4_max_size = 400,
                     .gro_ipv4_max_size = 65536};
  EXPECT_EQ(v0->snapshot_locked().offload, want);
  // A request that fails in a later step leaves them as they were.
  LinkRequest bad = named("v0");
  bad.gso_max_size = 1000;
  bad.mtu = 10;
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 5, bad)).last_error(), EINVAL);
  EXPECT_EQ(v0->snapshot_locked().offload, want);
  // A bridge: 64 KiB until its first port; lowered to a port's limit when one joins.
  LinkRequest br = named("b0", "bridge");
  br.gso_max_size = 70000;
  r = send(link_msg(RTM_NEWLINK, kCreate, 6, br));
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "too big gso_max_size");
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 7, named("b0", "bridge"))).last_error(), 0);
  Device* b0 = find("b0");
  ASSERT_NE(b0, nullptr);
  LinkRequest port = named("v0");
  port.master = static_cast<std::uint32_t>(b0->ifindex());
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 8, port)).last_error(), 0);
  LinkRequest raise = named("b0");
  raise.gso_max_size = 300000;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 9, raise)).last_error(), 0);
  EXPECT_EQ(b0->snapshot_locked().offload.gso_max_size, 300000u);
  // A macvlan on a bridge without ports takes that bridge's 64 KiB: b0's sizes come down.
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 10, named("b1", "bridge"))).last_error(), 0);
  LinkRequest mv = named("m0", "macvlan");
  mv.link = static_cast<std::uint32_t>(find("b1")->ifindex());
  mv.master = static_cast<std::uint32_t>(b0->ifindex());
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 11, mv)).last_error(), 0);
  EXPECT_EQ(b0->snapshot_locked().offload.gso_max_size, 65536u);
  EXPECT_EQ(b0->snapshot_locked().offload.gso_ipv4_max_size, 65536u);
}

// Linux: __dev_notify_flags announces a device that goes up before NETDEV_UP reaches the
// protocols, and rtnl_configure_link a device made up when it opens: its RTM_NEWLINK comes
// before the addresses and routes its coming up makes.
TEST_F(RtnlTest, ADeviceUpIsAnnouncedBeforeWhatItsComingUpMakes) {
  auto mon = open();
  for (unsigned g : {RTNLGRP_LINK, RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV6_ROUTE}) mon->add_membership(g);
  auto types = [&] { return notification_types(*mon); };
  auto first_after_link = [](const std::vector<std::uint16_t>& t) {
    auto link = std::find(t.begin(), t.end(), RTM_NEWLINK);
    auto other = std::find_if(t.begin(), t.end(), [](auto x) { return x != RTM_NEWLINK; });
    return link != t.end() && other != t.end() && link < other;
  };
  LinkRequest made_up = named("b0", "bridge");
  made_up.flags = made_up.change = IFF_UP;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, made_up)).last_error(), 0);
  EXPECT_TRUE(first_after_link(types()));
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 2, named("b1", "bridge"))).last_error(), 0);
  (void)types();
  LinkRequest up = named("b1");
  up.flags = up.change = IFF_UP;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 3, up)).last_error(), 0);
  auto t = types();
  EXPECT_TRUE(first_after_link(t));
  EXPECT_EQ(std::count(t.begin(), t.end(), RTM_NEWLINK), 1);
}

// Linux: sysctl_dev_name_is_allowed — "all" and "default" name the settings of every
// device and of new ones: a device may not take either name (EINVAL alone), and a create
// that fails so has used up its ifindex.
TEST_F(RtnlTest, ADeviceCannotBeNamedAllOrDefault) {
  session->set_option(NETLINK_EXT_ACK, 1);
  Replies r = send(link_msg(RTM_NEWLINK, kCreate, 1, named("all", "bridge")));
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "");
  EXPECT_EQ(find("all"), nullptr);
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 2, named("b0", "bridge"))).last_error(), 0);
  Device* b0 = find("b0");
  ASSERT_NE(b0, nullptr);
  EXPECT_EQ(b0->ifindex(), 3);  // lo is 1, the refused "all" took 2
  LinkRequest rename = named("b0");
  rename.name = "default";
  rename.ifindex = b0->ifindex();
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 3, rename)).last_error(), EINVAL);
  EXPECT_EQ(b0->name(), "b0");
  rename.name = "defaults";
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 4, rename)).last_error(), 0);
}

// Linux: loopback has no rtnl_link_ops: `type loopback` is a kind rtnl_newlink does not know.
TEST_F(RtnlTest, LoopbackKindIsUnknownDeviceType) {
  session->set_option(NETLINK_EXT_ACK, 1);
  Replies r = send(link_msg(RTM_NEWLINK, kCreate, 1, named("lo2", "loopback")));
  EXPECT_EQ(r.last_error(), EOPNOTSUPP);
  EXPECT_EQ(r.last_error_reply().message, "Unknown device type");
}

TEST_F(RtnlTest, MalformedAttributeReportsItsOffset) {
  session->set_option(NETLINK_EXT_ACK, 1);
  // ifinfomsg, IFLA_IFNAME "d0", IFLA_MTU with 2 bytes (wants 4).
  Bytes body =
      cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_IFNAME, cstr("d0")), attr(IFLA_MTU, le16(9000))});
  Bytes req = nlmsg(RTM_NEWLINK, NLM_F_REQUEST | kCreate, 3, 0, body);
  Replies r = send(req);
  EXPECT_EQ(r.last_error(), ERANGE);  // Linux: validate_nla, shorter than NLA_U32
  auto e = r.last_error_reply();
  EXPECT_EQ(e.attr_offset, 16 + 16 + 8);  // header, ifinfomsg, the IFNAME attribute
  EXPECT_EQ(e.message, "Attribute failed policy validation");
  EXPECT_EQ(find("d0"), nullptr);
}

TEST_F(RtnlTest, EmptyProbeWithoutCreateIsEnodev) {
  // `ip` sends an empty RTM_NEWLINK to learn whether rtnetlink link creation works.
  Replies r = send(nlmsg(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 1, 0, ifinfo(0, 0, 0, 0, 0)));
  EXPECT_EQ(r.last_error(), ENODEV);
  r = send(link_msg(RTM_NEWLINK, NLM_F_ACK, 2, named("nosuch", "dummy")));
  EXPECT_EQ(r.last_error(), ENODEV);
}

TEST_F(RtnlTest, ReplaceOfExistingIsEopnotsupp) {
  ASSERT_EQ(create("d0"), 0);
  Replies r = send(
      link_msg(RTM_NEWLINK, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK, 1, named("d0", "dummy")));
  EXPECT_EQ(r.last_error(), EOPNOTSUPP);
}

TEST_F(RtnlTest, NewlinkWithoutCreateChangesAnExistingDevice) {
  ASSERT_EQ(create("d0"), 0);
  LinkRequest req = named("d0");
  req.mtu = 9000;
  req.flags = IFF_UP;
  req.change = IFF_UP;
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 1, req)).last_error(), 0);
  EXPECT_EQ(find("d0")->mtu(), 9000u);
  EXPECT_TRUE(find("d0")->is_up());
  // CREATE without EXCL on an existing device changes it too (`ip link add` without EXCL).
  req.mtu = 1400;
  req.kind = "dummy";
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_CREATE | NLM_F_ACK, 2, req)).last_error(), 0);
  EXPECT_EQ(find("d0")->mtu(), 1400u);
}

TEST_F(RtnlTest, CreateWithoutNameUsesKindPattern) {
  LinkRequest req;
  req.kind = "dummy";
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, req)).last_error(), 0);
  EXPECT_NE(find("dummy0"), nullptr);
}

TEST_F(RtnlTest, CreateWithIfindexAndInAnotherNamespace) {
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.create_namespace("blue"));
  }
  LinkRequest req = named("b0", "dummy");
  req.ifindex = 77;
  req.net_ns_name = "blue";
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, req)).last_error(), 0);
  ASSERT_NE(find("b0", "blue"), nullptr);
  EXPECT_EQ(find("b0", "blue")->ifindex(), 77);
  EXPECT_EQ(find("b0"), nullptr);
}

TEST_F(RtnlTest, GroupChangelinkChangesEveryMember) {
  for (auto n : {"g0", "g1", "g2"}) ASSERT_EQ(create(n), 0);
  for (auto n : {"g0", "g1"}) set_group(n, 7);
  LinkRequest req;
  req.group = 7;
  req.mtu = 1300;
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 1, req)).last_error(), 0);
  EXPECT_EQ(find("g0")->mtu(), 1300u);
  EXPECT_EQ(find("g1")->mtu(), 1300u);
  EXPECT_EQ(find("g2")->mtu(), 1500u);
}

TEST_F(RtnlTest, SetlinkByIndexAndByName) {
  ASSERT_EQ(create("d0"), 0);
  LinkRequest req;
  req.ifindex = find("d0")->ifindex();
  req.mtu = 2000;
  EXPECT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 1, req)).last_error(), 0);
  EXPECT_EQ(find("d0")->mtu(), 2000u);
  req = named("d0");
  req.txqlen = 5;
  EXPECT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 2, req)).last_error(), 0);
  EXPECT_EQ(find("d0")->txqlen(), 5u);
  // Renaming by index.
  req = LinkRequest{};
  req.ifindex = find("d0")->ifindex();
  req.name = "d1";
  EXPECT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 3, req)).last_error(), 0);
  EXPECT_NE(find("d1"), nullptr);
}

TEST_F(RtnlTest, SetlinkErrors) {
  EXPECT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 1, named("nosuch"))).last_error(), ENODEV);
  LinkRequest none;
  none.mtu = 1000;
  EXPECT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 2, none)).last_error(), EINVAL);
  ASSERT_EQ(create("d0"), 0);
  // A rename onto a taken name fails and the mtu of the same request is rolled back.
  LinkRequest bad;
  bad.ifindex = find("d0")->ifindex();
  bad.name = "lo";
  bad.mtu = 9000;
  session->set_option(NETLINK_EXT_ACK, 1);
  Replies r = send(link_msg(RTM_SETLINK, NLM_F_ACK, 3, bad));
  EXPECT_EQ(r.last_error(), EEXIST);
  // Linux: dev_change_name answers EEXIST alone; ifcore's explanation stays in its log.
  EXPECT_EQ(r.last_error_reply().message, "");
  EXPECT_FALSE(r.msgs.back().hdr.nlmsg_flags & NLM_F_ACK_TLVS);
  EXPECT_EQ(find("d0")->mtu(), 1500u);
}

TEST_F(RtnlTest, DellinkByIndexNameAndErrors) {
  ASSERT_EQ(create("d0"), 0);
  ASSERT_EQ(create("d1"), 0);
  LinkRequest req;
  req.ifindex = find("d0")->ifindex();
  EXPECT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 1, req)).last_error(), 0);
  EXPECT_EQ(find("d0"), nullptr);
  EXPECT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 2, named("d1"))).last_error(), 0);
  EXPECT_EQ(find("d1"), nullptr);
  EXPECT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 3, named("d1"))).last_error(), ENODEV);
  EXPECT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 4, LinkRequest{})).last_error(), EINVAL);
  // Loopback cannot be deleted (Linux: no rtnl_link_ops -> EOPNOTSUPP).
  EXPECT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 5, named("lo"))).last_error(), EOPNOTSUPP);
}

TEST_F(RtnlTest, DellinkByGroupIsOneBatch) {
  for (auto n : {"g0", "g1", "g2", "k0"}) ASSERT_EQ(create(n), 0);
  for (auto n : {"g0", "g1", "g2"}) set_group(n, 9);
  auto before = engine->stats().batches;
  LinkRequest req;
  req.group = 9;
  EXPECT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 1, req)).last_error(), 0);
  EXPECT_EQ(engine->stats().batches, before + 1);
  EXPECT_EQ(find("g0"), nullptr);
  EXPECT_EQ(find("g2"), nullptr);
  EXPECT_NE(find("k0"), nullptr);
  // An empty group: ENODEV. Group 0: EPERM before any device is looked at. A group that
  // holds lo: refused as a whole.
  EXPECT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 2, req)).last_error(), ENODEV);
  req.group = 0;
  EXPECT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 3, req)).last_error(), EPERM);
  for (auto n : {"k0", "lo"}) set_group(n, 5);
  req.group = 5;
  EXPECT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 4, req)).last_error(), EOPNOTSUPP);
  EXPECT_NE(find("k0"), nullptr);
}

TEST_F(RtnlTest, BulkDeleteIsOneBatchWithPerItemResults) {
  for (auto n : {"b0", "b1", "b2"}) ASSERT_EQ(create(n), 0);
  int b1 = find("b1")->ifindex();
  wire::BulkDelete bulk;
  bulk.items.push_back({std::nullopt, "b0"});
  bulk.items.push_back({static_cast<std::uint32_t>(b1), std::nullopt});
  bulk.items.push_back({std::nullopt, "nosuch"});
  bulk.items.push_back({std::nullopt, "lo"});
  bulk.items.push_back({std::nullopt, "b2"});
  wire::MessageBuilder b;
  ASSERT_TRUE(wire::encode_bulk_delete(b, {RTM_DELLINK, NLM_F_REQUEST | NLM_F_ACK, 9, 0}, bulk));
  auto before = engine->stats().batches;
  Replies r = send(b.take());
  EXPECT_EQ(engine->stats().batches, before + 1);
  ASSERT_EQ(r.msgs.size(), 5u + 2u);
  std::vector<int> errs;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(r.msgs[i].hdr.nlmsg_type, RTM_DELLINK);
    EXPECT_EQ(r.msgs[i].hdr.nlmsg_flags, NLM_F_MULTI);
    EXPECT_EQ(r.msgs[i].hdr.nlmsg_seq, 9u);
    auto res = wire::decode_bulk_result(r.msgs[i]);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->index, static_cast<std::uint32_t>(i));
    errs.push_back(res->error);
  }
  EXPECT_EQ(errs, (std::vector<int>{0, 0, ENODEV, EOPNOTSUPP, 0}));
  EXPECT_EQ(wire::decode_bulk_result(r.msgs[1])->ifindex, b1);
  EXPECT_EQ(wire::decode_bulk_result(r.msgs[2])->message, "device \"nosuch\" does not exist");
  EXPECT_EQ(r.msgs[5].hdr.nlmsg_type, NLMSG_DONE);
  EXPECT_EQ(r.last_error(), 0);  // the ACK
  EXPECT_EQ(find("b0"), nullptr);
  EXPECT_EQ(find("b2"), nullptr);
  EXPECT_NE(find("lo"), nullptr);
}

TEST_F(RtnlTest, EchoSendsTheNewDeviceBeforeTheAck) {
  Replies r = send(link_msg(RTM_NEWLINK, kCreate | NLM_F_ECHO, 31, named("e0", "dummy")));
  ASSERT_EQ(r.msgs.size(), 2u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, RTM_NEWLINK);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_seq, 31u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_pid, 4242u);
  auto lm = wire::decode_link_message(r.msgs[0]);
  ASSERT_TRUE(lm);
  EXPECT_EQ(lm->name, "e0");
  EXPECT_EQ(lm->change, ~0u);
  EXPECT_EQ(r.last_error(), 0);
  // Delete with echo: the RTM_DELLINK comes back.
  r = send(link_msg(RTM_DELLINK, NLM_F_ACK | NLM_F_ECHO, 32, named("e0")));
  ASSERT_EQ(r.msgs.size(), 2u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, RTM_DELLINK);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_seq, 32u);
}

// Linux: nla_put_iflink — a kind with ndo_get_iflink (the IP tunnels, veth) reports
// IFLA_LINK 0 when nothing is linked (`ip` prints "@NONE"); other kinds leave it out.
TEST_F(RtnlTest, KindsThatAnswerForTheirLinkReportZeroWhenNoneIsSet) {
  auto echo = [&](std::uint32_t seq, const std::string& name, const std::string& kind) {
    Replies r = send(link_msg(RTM_NEWLINK, kCreate | NLM_F_ECHO, seq, named(name, kind)));
    EXPECT_EQ(r.last_error(), 0);
    EXPECT_GE(r.msgs.size(), 2u);
    auto lm = wire::decode_link_message(r.msgs[0]);
    EXPECT_TRUE(lm);
    return lm ? lm->link : std::optional<std::uint32_t>(99);
  };
  EXPECT_EQ(echo(41, "g0", "ipip"), std::optional<std::uint32_t>(0));
  EXPECT_EQ(echo(42, "d0", "dummy"), std::nullopt);
}

TEST_F(RtnlTest, ReadOnlySessionGetsEpermAndChangesNothing) {
  ASSERT_EQ(create("d0"), 0);
  SessionOptions o;
  o.may_write = false;
  auto ro = open(o);
  auto count = device_count();
  EXPECT_EQ(roundtrip(*ro, link_msg(RTM_NEWLINK, kCreate, 1, named("x0", "dummy"))).last_error(),
            EPERM);
  LinkRequest ch = named("d0");
  ch.mtu = 1000;
  EXPECT_EQ(roundtrip(*ro, link_msg(RTM_NEWLINK, NLM_F_ACK, 2, ch)).last_error(), EPERM);
  EXPECT_EQ(roundtrip(*ro, link_msg(RTM_SETLINK, NLM_F_ACK, 3, ch)).last_error(), EPERM);
  EXPECT_EQ(roundtrip(*ro, link_msg(RTM_DELLINK, NLM_F_ACK, 4, named("d0"))).last_error(), EPERM);
  EXPECT_EQ(device_count(), count);
  EXPECT_EQ(find("d0")->mtu(), 1500u);
  // Reading stays open.
  wire::GetLinkRequest g;
  g.name = "d0";
  Replies r = roundtrip(*ro, getlink(5, g));
  ASSERT_EQ(r.msgs.size(), 1u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, RTM_NEWLINK);
}

TEST_F(RtnlTest, ControlTypesAndUnknownTypes) {
  // NLMSG_NOOP with ACK: acknowledged; without NLM_F_REQUEST: ignored.
  EXPECT_EQ(send(nlmsg(NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, 1, 0, {})).last_error(), 0);
  EXPECT_TRUE(send(nlmsg(RTM_GETLINK, 0, 1, 0, ifinfo(0, 0, 1, 0, 0))).dgs.empty());
  EXPECT_EQ(send(nlmsg(RTM_MAX + 1, NLM_F_REQUEST, 1, 0, ifinfo(0, 0, 1, 0, 0))).last_error(),
            EOPNOTSUPP);
  EXPECT_EQ(send(nlmsg(RTM_NEWQDISC, NLM_F_REQUEST, 1, 0, ifinfo(0, 0, 1, 0, 0))).last_error(),
            EOPNOTSUPP);
  // Payload shorter than rtgenmsg: ignored (only the ACK).
  EXPECT_EQ(send(nlmsg(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 1, 0, {})).last_error(), 0);
}

TEST_F(RtnlTest, SeveralMessagesInOneDatagramAnsweredInOrder) {
  Bytes dg = link_msg(RTM_NEWLINK, kCreate, 1, named("m0", "dummy"));
  add(dg, link_msg(RTM_NEWLINK, kCreate, 2, named("m0", "dummy")));
  add(dg, link_msg(RTM_DELLINK, NLM_F_ACK, 3, named("m0")));
  Replies r = send(dg);
  ASSERT_EQ(r.msgs.size(), 3u);
  EXPECT_EQ(wire::decode_error(r.msgs[0])->error, 0);
  EXPECT_EQ(wire::decode_error(r.msgs[1])->error, EEXIST);
  EXPECT_EQ(wire::decode_error(r.msgs[2])->error, 0);
  EXPECT_EQ(r.msgs[2].hdr.nlmsg_seq, 3u);
}

// Linux: netlink_rcv_skb stops silently at a header that is too short or runs past the
// datagram; the messages before it are handled.
TEST_F(RtnlTest, TruncatedDatagramIsDroppedSilently) {
  Bytes dg = link_msg(RTM_NEWLINK, kCreate, 1, named("m0", "dummy"));
  dg.resize(dg.size() - 4);
  EXPECT_TRUE(send(dg).dgs.empty());
  EXPECT_EQ(find("m0"), nullptr);
  EXPECT_TRUE(send(Bytes{1, 2, 3}).dgs.empty());
}

// `ip` sends a dump request with the unused rest of its buffer behind it (zeros).
TEST_F(RtnlTest, ZerosBehindAMessageAreIgnored) {
  Bytes dg = link_msg(RTM_NEWLINK, kCreate, 1, named("m0", "dummy"));
  dg.resize(dg.size() + 120, 0);
  Replies r = send(dg);
  EXPECT_EQ(r.last_error(), 0);
  EXPECT_NE(find("m0"), nullptr);
}

}  // namespace
}  // namespace ifcore::rtnl::test
