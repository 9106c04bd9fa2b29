// tests/rtnl/nsid_test.cc — namespace ids: what one namespace calls another, given lazily
// (RTM_NEWNSID, or a message that must name a peer) and never by RTM_GETNSID; the errors
// and notifications of Linux 6.18 (checked on the kernel with raw requests and `ip netns`).
#include <gtest/gtest.h>
#include <linux/net_namespace.h>

#include "rtnl/fixture.h"
#include "rtnl/wire/nsid.h"

namespace ifcore::rtnl::test {
namespace {

class NsidTest : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
    ASSERT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK | NLM_F_CREATE, "blue"), 0);
    ASSERT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK | NLM_F_CREATE, "red"), 0);
  }
  Replies send_nsid(Session& s, std::uint16_t type, std::uint16_t flags,
                    const wire::NsidMessage& n) {
    wire::MessageBuilder b;
    EXPECT_TRUE(wire::encode_nsid(
        b, {type, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), ++seq_, 0}, n));
    return roundtrip(s, b.take());
  }
  // A request naming the peer by name (as the shim sends `ip netns set NAME ID`).
  int nsid_msg(std::uint16_t type, std::uint16_t flags, std::string name,
               std::optional<std::int32_t> nsid = std::nullopt) {
    wire::NsidMessage n;
    n.name = std::move(name);
    n.nsid = nsid;
    last_ = send_nsid(*session, type, flags, n);
    return last_.last_error();
  }
  // The id `s`'s namespace gives `name` (RTM_GETNSID).
  std::int32_t get_id(Session& s, const std::string& name) {
    wire::NsidMessage n;
    n.name = name;
    Replies r = send_nsid(s, RTM_GETNSID, 0, n);
    EXPECT_EQ(r.msgs.size(), 1u);
    if (r.msgs.empty()) return -100;
    auto got = wire::decode_nsid(r.msgs[0]);
    EXPECT_TRUE(got);
    return got && got->nsid ? *got->nsid : -100;
  }
  // The (nsid, name) pairs of a dump from `s`.
  std::vector<std::pair<std::int32_t, std::string>> dump(Session& s, bool all = false) {
    wire::NsidMessage n;
    if (all) n.name = "";
    Replies r = send_nsid(s, RTM_GETNSID, NLM_F_DUMP, n);
    std::vector<std::pair<std::int32_t, std::string>> out;
    for (const auto& m : r.msgs) {
      if (m.hdr.nlmsg_type != RTM_NEWNSID) continue;
      auto got = wire::decode_nsid(m);
      EXPECT_TRUE(got && got->nsid && got->name);
      if (got && got->nsid && got->name) out.emplace_back(*got->nsid, *got->name);
    }
    return out;
  }
  std::unique_ptr<Session> open_in(const std::string& ns) {
    SessionOptions o;
    o.ns = ns;
    auto s = open(o);
    s->set_option(NETLINK_EXT_ACK, 1);
    return s;
  }
  std::uint32_t seq_ = 100;
  Replies last_;
};

using Pairs = std::vector<std::pair<std::int32_t, std::string>>;

TEST_F(NsidTest, NamespacesStartWithoutIdsAndAskingGivesNone) {
  EXPECT_TRUE(dump(*session).empty());
  // Linux: rtnl_net_getid answers NETNSA_NSID_NOT_ASSIGNED and allocates nothing.
  EXPECT_EQ(get_id(*session, "blue"), NETNSA_NSID_NOT_ASSIGNED);
  EXPECT_TRUE(dump(*session).empty());
  // ifcore: a dump with IFCORE_NETNSA_NAME lists every other namespace.
  EXPECT_EQ(dump(*session, true), (Pairs{{-1, "blue"}, {-1, "red"}}));
}

TEST_F(NsidTest, SetExplicitIdThenAutoTakesLowestFree) {
  EXPECT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK, "blue", 99), 0);
  EXPECT_EQ(get_id(*session, "blue"), 99);
  EXPECT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK, "red", NETNSA_NSID_NOT_ASSIGNED), 0);
  EXPECT_EQ(dump(*session), (Pairs{{0, "red"}, {99, "blue"}}));
  // The ids are the session's namespace's: blue gives nobody an id.
  auto blue = open_in("blue");
  EXPECT_TRUE(dump(*blue).empty());
  EXPECT_EQ(get_id(*blue, "default"), NETNSA_NSID_NOT_ASSIGNED);
  wire::NsidMessage n;
  n.name = "default";
  n.nsid = 5;
  EXPECT_EQ(send_nsid(*blue, RTM_NEWNSID, NLM_F_ACK, n).last_error(), 0);
  EXPECT_EQ(dump(*blue), (Pairs{{5, "default"}}));
  EXPECT_EQ(get_id(*session, "blue"), 99);
}

TEST_F(NsidTest, SetErrorsAsLinux) {
  ASSERT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK, "blue", 99), 0);
  // Linux: rtnl_net_newid.
  EXPECT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK, "red", 99), EEXIST);
  EXPECT_EQ(last_.last_error_reply().message, "The specified nsid is already used");
  EXPECT_GT(last_.last_error_reply().attr_offset, 0);
  EXPECT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK, "blue", 5), EEXIST);
  EXPECT_EQ(last_.last_error_reply().message, "Peer netns already has a nsid assigned");
  EXPECT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK, "red"), EINVAL);
  EXPECT_EQ(last_.last_error_reply().message, "nsid is missing");
  wire::NsidMessage n;
  n.nsid = 3;
  Replies r = send_nsid(*session, RTM_NEWNSID, NLM_F_ACK, n);
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "Peer netns reference is missing");
  EXPECT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK, "nosuch", 3), ENOENT);
  EXPECT_EQ(last_.last_error_reply().message, "Peer netns reference is invalid");
  // Linux registers no RTM_DELNSID: without a name (ifcore's extension) it is EOPNOTSUPP.
  r = send_nsid(*session, RTM_DELNSID, NLM_F_ACK, n);
  EXPECT_EQ(r.last_error(), EOPNOTSUPP);
  EXPECT_EQ(r.last_error_reply().message, "");
  EXPECT_EQ(dump(*session), (Pairs{{99, "blue"}}));
}

TEST_F(NsidTest, GetByIdAndTarget) {
  ASSERT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK, "blue", 7), 0);
  wire::NsidMessage n;
  n.nsid = 7;
  Replies r = send_nsid(*session, RTM_GETNSID, 0, n);
  ASSERT_EQ(r.msgs.size(), 1u);
  EXPECT_EQ(wire::decode_nsid(r.msgs[0])->name, "blue");
  n.nsid = 42;
  r = send_nsid(*session, RTM_GETNSID, 0, n);
  EXPECT_EQ(r.last_error(), ENOENT);
  EXPECT_EQ(r.last_error_reply().message, "Peer netns reference is invalid");
  r = send_nsid(*session, RTM_GETNSID, 0, wire::NsidMessage{});
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "Peer netns reference is missing");
  // Linux: with NETNSA_TARGET_NSID the answer is the target's id for the peer, and
  // NETNSA_CURRENT_NSID the session's.
  n = {};
  n.name = "blue";
  n.target_nsid = 7;
  r = send_nsid(*session, RTM_GETNSID, 0, n);
  ASSERT_EQ(r.msgs.size(), 1u);
  auto got = wire::decode_nsid(r.msgs[0]);
  EXPECT_EQ(got->nsid, -1);
  EXPECT_EQ(got->current_nsid, 7);
  n.target_nsid = 8;
  r = send_nsid(*session, RTM_GETNSID, 0, n);
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "Target netns reference is invalid");
}

TEST_F(NsidTest, NewNsidIsAnnouncedWithTheRequestsSeqAndPort) {
  auto mon = open();
  mon->add_membership(RTNLGRP_NSID);
  SessionOptions o;
  o.port_id = 4242;
  auto requester = open(o);
  wire::NsidMessage req;
  req.name = "blue";
  req.nsid = 99;
  ASSERT_EQ(send_nsid(*requester, RTM_NEWNSID, NLM_F_ACK, req).last_error(), 0);
  Datagram d;
  ASSERT_TRUE(mon->pop_notification(d));
  auto msgs = wire::split_messages(d);
  ASSERT_TRUE(msgs && msgs->size() == 1);
  const wire::Message& m = (*msgs)[0];
  EXPECT_EQ(m.hdr.nlmsg_type, RTM_NEWNSID);
  EXPECT_EQ(m.hdr.nlmsg_seq, seq_);
  EXPECT_EQ(m.hdr.nlmsg_pid, 4242u);
  auto n = wire::decode_nsid(m);
  EXPECT_EQ(n->nsid, 99);
  EXPECT_FALSE(n->name);  // Linux's message: rtgenmsg and NETNSA_NSID alone
  EXPECT_FALSE(mon->pop_notification(d));
  // NLM_F_ECHO: the requester gets it before the ACK.
  ASSERT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK | NLM_F_ECHO, "red", -7), 0);
  ASSERT_EQ(last_.msgs.size(), 2u);
  EXPECT_EQ(last_.msgs[0].hdr.nlmsg_type, RTM_NEWNSID);
  EXPECT_EQ(wire::decode_nsid(last_.msgs[0])->nsid, 0);
}

TEST_F(NsidTest, VethPeerElsewhereGivesAnIdWhenItsMessageIsMade) {
  auto mon = open();
  mon->add_membership(RTNLGRP_NSID);
  LinkRequest req = veth_pair("v0", "v1");
  auto peer = std::make_shared<LinkRequest>(*req.info_data[0].link);
  peer->net_ns_name = "blue";
  req.info_data[0].link = peer;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, req)).last_error(), 0);
  // Linux: v0's RTM_NEWLINK names its peer's namespace (peernet2id_alloc), announced with
  // zeros; v1 was announced before the pair was tied, so blue gives default nothing yet.
  EXPECT_EQ(dump(*session), (Pairs{{0, "blue"}}));
  Datagram d;
  ASSERT_TRUE(mon->pop_notification(d));
  auto msgs = wire::split_messages(d);
  ASSERT_TRUE(msgs && msgs->size() == 1);
  EXPECT_EQ((*msgs)[0].hdr.nlmsg_seq, 0u);
  EXPECT_EQ(wire::decode_nsid((*msgs)[0])->nsid, 0);
  auto blue = open_in("blue");
  EXPECT_TRUE(dump(*blue).empty());
  // Reading v1 from blue names default: blue gives it an id now.
  wire::GetLinkRequest g;
  g.name = "v1";
  Replies r = roundtrip(*blue, getlink(2, g));
  ASSERT_EQ(r.msgs.size(), 1u);
  auto l = wire::decode_link_message(r.msgs[0]);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->link_netnsid, 0);
  EXPECT_EQ(dump(*blue), (Pairs{{0, "default"}}));
  // A dump of blue from default (IFLA_TARGET_NETNSID 0) names default as default sees
  // itself: it gives itself an id (Linux does the same).
  g = dump_req();
  g.target_netnsid = 0;
  r = send(getlink(3, g, NLM_F_DUMP));
  EXPECT_EQ(get_id(*session, "default"), 1);
}

TEST_F(NsidTest, MovedDeviceGivesTheNewNamespaceAnIdInTheOld) {
  ASSERT_EQ(create("d0"), 0);
  LinkRequest req = named("d0");
  req.net_ns_name = "blue";
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 2, req)).last_error(), 0);
  // Linux: __dev_change_net_namespace (peernet2id_alloc for the device's RTM_DELLINK).
  EXPECT_EQ(dump(*session), (Pairs{{0, "blue"}}));
  auto blue = open_in("blue");
  EXPECT_TRUE(dump(*blue).empty());
}

TEST_F(NsidTest, DestroyedPeerTakesItsIdsWithIt) {
  ASSERT_EQ(nsid_msg(RTM_NEWNSID, NLM_F_ACK, "blue", 4), 0);
  auto red = open_in("red");
  wire::NsidMessage n;
  n.name = "blue";
  n.nsid = 9;
  ASSERT_EQ(send_nsid(*red, RTM_NEWNSID, NLM_F_ACK, n).last_error(), 0);
  auto mon = open();
  mon->add_membership(RTNLGRP_NSID);
  ASSERT_EQ(nsid_msg(RTM_DELNSID, NLM_F_ACK, "blue"), 0);
  // Linux: cleanup_net sends RTM_DELNSID in every namespace that had an id for it.
  Datagram d;
  ASSERT_TRUE(mon->pop_notification(d));
  auto msgs = wire::split_messages(d);
  ASSERT_TRUE(msgs && msgs->size() == 1);
  EXPECT_EQ((*msgs)[0].hdr.nlmsg_type, RTM_DELNSID);
  EXPECT_EQ(wire::decode_nsid((*msgs)[0])->nsid, 4);
  EXPECT_TRUE(dump(*session).empty());
  EXPECT_TRUE(dump(*red).empty());
}

}  // namespace
}  // namespace ifcore::rtnl::test
