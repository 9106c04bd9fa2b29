// Engine limits (Policies::max_devices, Policies::max_namespaces): a create past one is
// refused with ENOSPC and an extack naming the limit, and changes nothing — no device, no
// namespace, no notification, the same dump.
#include <gtest/gtest.h>

#include "rtnl/fixture.h"
#include "rtnl/wire/nsid.h"

namespace ifcore::rtnl::test {
namespace {

class LimitsTest : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
    SessionOptions o;
    o.port_id = 77;
    listener = open(o);
    listener->add_membership(RTNLGRP_LINK);
  }
  void TearDown() override {
    listener.reset();
    RtnlTest::TearDown();
  }
  void set_limits(std::size_t devices, std::size_t namespaces) {
    Policies p = engine->policies();
    p.max_devices = devices;
    p.max_namespaces = namespaces;
    engine->set_policies(p);
  }
  // Every link of the namespace, as a dump's bytes.
  std::vector<std::uint8_t> link_dump() {
    Replies r = send(getlink(9, wire::GetLinkRequest{}, NLM_F_DUMP));
    std::vector<std::uint8_t> all;
    for (auto& d : r.dgs) all.insert(all.end(), d.begin(), d.end());
    return all;
  }
  void drain() {
    Datagram d;
    while (listener->pop_notification(d)) {
    }
  }
  Bytes newnsid(std::string name) {
    wire::MessageBuilder b;
    wire::NsidMessage n;
    n.name = std::move(name);
    EXPECT_TRUE(
        wire::encode_nsid(b, {RTM_NEWNSID, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE, 1, 0}, n));
    return b.take();
  }

  std::unique_ptr<Session> listener;
};

TEST_F(LimitsTest, DevicesPerNamespaceRefusedWithEnospcChangeNothing) {
  set_limits(3, 0);  // lo and two more
  ASSERT_EQ(create("d0"), 0);
  ASSERT_EQ(create("d1"), 0);
  drain();
  auto before = link_dump();
  Replies r = send(link_msg(RTM_NEWLINK, kCreate, 1, named("d2", "dummy")));
  EXPECT_EQ(r.last_error(), ENOSPC);
  EXPECT_EQ(r.last_error_reply().message,
            "namespace \"default\": the limit of 3 devices is reached");
  EXPECT_EQ(find("d2"), nullptr);
  EXPECT_EQ(device_count(), 3u);
  EXPECT_EQ(listener->pending_notifications(), 0u);
  EXPECT_EQ(link_dump(), before);
  // A delete makes room again.
  EXPECT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 2, named("d1"))).last_error(), 0);
  EXPECT_EQ(create("d2"), 0);
}

TEST_F(LimitsTest, VethNeedsRoomForBothEndsOrNeitherIsMade) {
  set_limits(2, 0);  // lo and one more: a pair does not fit
  drain();
  auto before = link_dump();
  Replies r = send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v0", "v1")));
  EXPECT_EQ(r.last_error(), ENOSPC);
  EXPECT_EQ(find("v0"), nullptr);
  EXPECT_EQ(find("v1"), nullptr);
  EXPECT_EQ(listener->pending_notifications(), 0u);  // the peer was never announced
  EXPECT_EQ(link_dump(), before);
  set_limits(3, 0);
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 2, veth_pair("v0", "v1"))).last_error(), 0);
}

TEST_F(LimitsTest, MoveIntoAFullNamespaceIsRefused) {
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.create_namespace("blue"));
  }
  set_limits(2, 0);
  ASSERT_EQ(create("d0"), 0);
  {
    auto ctl = engine->control();
    Namespace* blue = ctl.find_namespace("blue");
    LinkRequest fill = named("b0", "dummy");
    ASSERT_TRUE(ctl.create_link(*blue, fill));
  }
  LinkRequest mv = named("d0");
  mv.net_ns_name = "blue";
  Replies r = send(link_msg(RTM_NEWLINK, NLM_F_ACK, 1, mv));
  EXPECT_EQ(r.last_error(), ENOSPC);
  EXPECT_EQ(r.last_error_reply().message, "namespace \"blue\": the limit of 2 devices is reached");
  EXPECT_NE(find("d0"), nullptr);
  EXPECT_EQ(device_count("blue"), 2u);
}

TEST_F(LimitsTest, NamespacesPerEngineRefusedWithEnospc) {
  set_limits(0, 2);  // default and one more
  EXPECT_EQ(send(newnsid("blue")).last_error(), 0);
  Replies r = send(newnsid("red"));
  EXPECT_EQ(r.last_error(), ENOSPC);
  EXPECT_EQ(r.last_error_reply().message,
            "namespace \"red\": the limit of 2 namespaces is reached");
  auto ctl = engine->control();
  EXPECT_EQ(ctl.find_namespace("red"), nullptr);
  EXPECT_EQ(ctl.namespaces().size(), 2u);
}

TEST_F(LimitsTest, NoLimitByDefault) {
  EXPECT_EQ(engine->policies().max_devices, 0u);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(create("d" + std::to_string(i)), 0);
  EXPECT_EQ(device_count(), 101u);
}

}  // namespace
}  // namespace ifcore::rtnl::test
