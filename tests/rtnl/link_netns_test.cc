// tests/rtnl/link_netns_test.cc — namespaces across a create and across notifications:
// IFLA_LINK_NETNSID at create (where a veth's peer goes, a vxlan's link namespace: Linux's
// rtnl_newlink_link_net / rtnl_newlink_peer_net) and NETLINK_LISTEN_ALL_NSID (the
// notifications of the namespaces the session's gives an id, each with that id). Checked
// on Linux 6.18 with `ip` (differential 50_link_netns.ip, tests/differential/all_nsid.py).
#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <linux/net_namespace.h>

#include "ifcore/namespace.h"
#include "rtnl/fixture.h"
#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/nsid.h"

namespace ifcore::rtnl::test {
namespace {

class LinkNetnsTest : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
    for (const char* ns : {"n2", "n3"}) {
      wire::NsidMessage n;
      n.name = ns;
      ASSERT_EQ(send_nsid(*session, RTM_NEWNSID, NLM_F_ACK | NLM_F_CREATE, n).last_error(), 0);
    }
    n2 = open_in("n2");
    ASSERT_EQ(set_id(*n2, "n3", 100), 0);  // `ip -n n2 netns set n3 100`
  }
  void TearDown() override {
    n2.reset();
    RtnlTest::TearDown();
  }
  Replies send_nsid(Session& s, std::uint16_t type, std::uint16_t flags,
                    const wire::NsidMessage& n) {
    wire::MessageBuilder b;
    EXPECT_TRUE(wire::encode_nsid(
        b, {type, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), ++seq_, 0}, n));
    return roundtrip(s, b.take());
  }
  int set_id(Session& s, const std::string& peer, std::int32_t id) {
    wire::NsidMessage n;
    n.name = peer;
    n.nsid = id;
    return send_nsid(s, RTM_NEWNSID, NLM_F_ACK, n).last_error();
  }
  std::unique_ptr<Session> open_in(const std::string& ns, bool may_write_elsewhere = true) {
    SessionOptions o;
    o.ns = ns;
    o.may_write_elsewhere = may_write_elsewhere;
    auto s = open(o);
    s->set_option(NETLINK_EXT_ACK, 1);
    return s;
  }
  Replies create_in(Session& s, const LinkRequest& req) {
    return roundtrip(s, link_msg(RTM_NEWLINK, kCreate, ++seq_, req));
  }
  // The device's RTM_NEWLINK as a session of `ns` reads it (RTM_GETLINK).
  wire::LinkMessage show(const std::string& ns, const std::string& name) {
    auto s = open_in(ns);
    wire::GetLinkRequest g;
    g.name = name;
    Replies r = roundtrip(*s, getlink(++seq_, g));
    EXPECT_EQ(r.msgs.size(), 1u);
    if (r.msgs.empty() || r.msgs[0].hdr.nlmsg_type != RTM_NEWLINK) return {};
    auto m = wire::decode_link_message(r.msgs[0]);
    EXPECT_TRUE(m);
    return m ? *m : wire::LinkMessage{};
  }
  static LinkRequest vxlan(std::string name, std::uint32_t vni) {
    LinkRequest r = named(std::move(name), "vxlan");
    r.has_info_data = true;
    r.info_data = {Attr::u32(IFLA_VXLAN_ID, vni)};
    return r;
  }
  std::unique_ptr<Session> n2;
  std::uint32_t seq_ = 100;
};

TEST_F(LinkNetnsTest, VethPeerGoesToTheLinkNamespace) {
  auto mon = open_in("n2");
  mon->add_membership(RTNLGRP_LINK);
  LinkRequest req = veth_pair("foo", "bar");
  req.link_netnsid = 100;
  ASSERT_EQ(create_in(*n2, req).last_error(), 0);
  EXPECT_NE(find("foo", "n2"), nullptr);
  EXPECT_NE(find("bar", "n3"), nullptr);
  EXPECT_EQ(find("bar", "n2"), nullptr);
  // Linux: foo names its peer's namespace by n2's id for it, bar names n2 by the id n3
  // gives it now (peernet2id_alloc: the lowest free one).
  EXPECT_EQ(show("n2", "foo").link_netnsid, 100);
  EXPECT_EQ(show("n3", "bar").link_netnsid, 0);
  Datagram d;
  bool announced = false;
  while (mon->pop_notification(d)) {
    auto msgs = wire::split_messages(d);
    ASSERT_TRUE(msgs);
    for (const auto& m : *msgs) {
      auto l = wire::decode_link_message(m);
      if (l && l->name == "foo") announced = l->link_netnsid == 100;
    }
  }
  EXPECT_TRUE(announced);
}

TEST_F(LinkNetnsTest, ThePeersOwnNamespaceWins) {
  LinkRequest req = veth_pair("foo", "bar");
  req.link_netnsid = 100;
  auto peer = std::make_shared<LinkRequest>(*req.info_data[0].link);
  peer->net_ns_name = "default";
  req.info_data[0].link = peer;
  ASSERT_EQ(create_in(*n2, req).last_error(), 0);
  EXPECT_NE(find("bar", "default"), nullptr);
  EXPECT_EQ(find("bar", "n3"), nullptr);
}

TEST_F(LinkNetnsTest, UnknownIdIsEinvalWhateverTheRequest) {
  LinkRequest req = veth_pair("foo", "bar");
  req.link_netnsid = 7;
  Replies r = create_in(*n2, req);
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "Unknown network namespace id");
  EXPECT_EQ(find("foo", "n2"), nullptr);
  EXPECT_EQ(device_count("n3"), 1u);
  // Looked up before the device: a change of an existing one is refused too.
  ASSERT_EQ(create_in(*n2, named("d0", "dummy")).last_error(), 0);
  LinkRequest change = named("d0");
  change.link_netnsid = 7;
  r = roundtrip(*n2, link_msg(RTM_NEWLINK, NLM_F_ACK, ++seq_, change));
  EXPECT_EQ(r.last_error(), EINVAL);
  change.link_netnsid = 100;  // known: accepted, and nothing to do with it
  r = roundtrip(*n2, link_msg(RTM_NEWLINK, NLM_F_ACK, ++seq_, change));
  EXPECT_EQ(r.last_error(), 0);
  // The id is the target namespace's: default gives nobody 100, n2 does.
  req.link_netnsid = 100;
  r = create_in(*session, req);
  EXPECT_EQ(r.last_error(), EINVAL);
  ASSERT_EQ(set_id(*session, "n2", 5), 0);
  req.net_ns_id = 5;
  ASSERT_EQ(create_in(*session, req).last_error(), 0);
  EXPECT_NE(find("foo", "n2"), nullptr);
  EXPECT_NE(find("bar", "n3"), nullptr);
}

TEST_F(LinkNetnsTest, ADeviceMadeElsewhereLinksBackToTheRequester) {
  // Linux 6.18: the link namespace is the requester's, so the peer stays with it...
  LinkRequest req = veth_pair("a0", "a1");
  req.net_ns_name = "n2";
  ASSERT_EQ(create_in(*session, req).last_error(), 0);
  EXPECT_NE(find("a0", "n2"), nullptr);
  EXPECT_NE(find("a1", "default"), nullptr);
  // ...unless the request has no peer part: the peer follows a namespace named by pid or
  // fd (here by name), as rtnl_get_peer_net reads the device's attributes then.
  LinkRequest bare = named("b0", "veth");
  bare.net_ns_name = "n3";
  ASSERT_EQ(create_in(*session, bare).last_error(), 0);
  EXPECT_NE(find("b0", "n3"), nullptr);
  EXPECT_NE(find("veth0", "n3"), nullptr);
  // A vxlan made elsewhere has the requester's namespace as its link namespace.
  LinkRequest vx = vxlan("vx4", 9);
  vx.net_ns_name = "n2";
  ASSERT_EQ(create_in(*session, vx).last_error(), 0);
  EXPECT_EQ(show("n2", "vx4").link_netnsid, 0);  // what n2 calls default, given now
}

TEST_F(LinkNetnsTest, VxlanLivesWhereItIsAndListensInItsLinkNamespace) {
  ASSERT_EQ(create_in(*n2,
                      [] {
                        LinkRequest r = vxlan("vx0", 5);
                        r.link_netnsid = 100;
                        return r;
                      }())
                .last_error(),
            0);
  Device* vx0 = find("vx0", "n2");
  ASSERT_NE(vx0, nullptr);
  wire::LinkMessage m = show("n2", "vx0");
  EXPECT_EQ(m.link_netnsid, 100);
  // Linux: nla_put_iflink forced: a vxlan has no link device, so its own index.
  EXPECT_EQ(m.link, static_cast<std::uint32_t>(m.ifindex));
  // The VNI is taken in n3 (Linux: vxlan_vni_in_use in the link namespace's list).
  auto n3 = open_in("n3");
  Replies r = create_in(*n3, vxlan("vx1", 5));
  EXPECT_EQ(r.last_error(), EEXIST);
  EXPECT_EQ(r.last_error_reply().message, "A VXLAN device with the specified VNI already exists");
  EXPECT_EQ(create_in(*n2, vxlan("vx2", 5)).last_error(), 0);
  EXPECT_EQ(show("n2", "vx2").link_netnsid, std::nullopt);
  // It dies with its link namespace (Linux: vxlan_exit_batch_rtnl); vx2 stays.
  n3.reset();
  wire::NsidMessage del;
  del.name = "n3";
  ASSERT_EQ(send_nsid(*session, RTM_DELNSID, NLM_F_ACK, del).last_error(), 0);
  EXPECT_EQ(find("vx0", "n2"), nullptr);
  EXPECT_NE(find("vx2", "n2"), nullptr);
}

// A notification datagram's IFCORE_NLMSG_NSID id (nullopt: none) and its RTM_NEWLINK.
struct Heard {
  std::optional<std::int32_t> nsid;
  std::string name;
};

std::vector<Heard> heard(Session& s) {
  std::vector<Heard> out;
  Datagram d;
  while (s.pop_notification(d)) {
    Heard h;
    std::span<const std::uint8_t> rest(d);
    h.nsid = nsid_of_prefix(rest);
    if (h.nsid) rest = rest.subspan(kNsidPrefixSize);
    auto msgs = wire::split_messages(rest);
    EXPECT_TRUE(msgs && msgs->size() == 1);
    if (!msgs || msgs->empty()) continue;
    auto l = wire::decode_link_message((*msgs)[0]);
    if (l) h.name = l->name;
    out.push_back(h);
  }
  return out;
}

TEST_F(LinkNetnsTest, ListenAllNsidHearsTheNamespacesItsOwnGivesAnId) {
  auto mon = open();
  mon->add_membership(RTNLGRP_LINK);
  mon->set_option(NETLINK_LISTEN_ALL_NSID, 1);
  ASSERT_EQ(set_id(*session, "n2", 100), 0);
  auto n3 = open_in("n3");
  ASSERT_EQ(create_in(*n2, named("x2", "dummy")).last_error(), 0);
  ASSERT_EQ(create_in(*n3, named("x3", "dummy")).last_error(), 0);  // default: no id for n3
  ASSERT_EQ(create("x0"), 0);
  std::vector<Heard> h = heard(*mon);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].nsid, 100);
  EXPECT_EQ(h[0].name, "x2");
  EXPECT_EQ(h[1].nsid, std::nullopt);  // its own namespace: no id (Linux: no cmsg)
  EXPECT_EQ(h[1].name, "x0");
  // An id given later opens n3 too; without the option only the own namespace is heard.
  ASSERT_EQ(set_id(*session, "n3", 3), 0);
  ASSERT_EQ(create_in(*n3, named("y3", "dummy")).last_error(), 0);
  h = heard(*mon);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].nsid, 3);
  mon->set_option(NETLINK_LISTEN_ALL_NSID, 0);
  ASSERT_EQ(create_in(*n3, named("z3", "dummy")).last_error(), 0);
  EXPECT_TRUE(heard(*mon).empty());
}

TEST_F(LinkNetnsTest, ListenAllNsidHearsNothingElsewhereWithoutTheRight) {
  // ifcore: a session that may write only in its namespace stands for a socket without
  // CAP_NET_BROADCAST over the others (Linux: do_one_broadcast's file_ns_capable).
  auto mon = open_in("n3", false);
  mon->add_membership(RTNLGRP_LINK);
  mon->set_option(NETLINK_LISTEN_ALL_NSID, 1);
  auto n3 = open_in("n3");
  ASSERT_EQ(set_id(*n3, "n2", 8), 0);
  ASSERT_EQ(create_in(*n2, named("x2", "dummy")).last_error(), 0);
  ASSERT_EQ(create_in(*n3, named("x3", "dummy")).last_error(), 0);
  std::vector<Heard> h = heard(*mon);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].name, "x3");
}

}  // namespace
}  // namespace ifcore::rtnl::test
