// RTM_{NEW,DEL,GET}TUNNEL through a session: a vnifilter vxlan device's VNIs added,
// replaced and deleted, the dump's ranges (consecutive VNIs of one remote) and counters, the
// default forwarding entries the remotes make, the refusals, and the RTNLGRP_TUNNEL
// notifications as Linux 6.18 sends them (none for a VNI added without a remote).
#include <net/if.h>  // before any <linux/if*.h>

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <sys/socket.h>

#include <cstring>

#include "fixture.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl::test {
namespace {

struct Row {
  std::uint32_t start = 0, end = 0;
  std::string remote;
  bool stats = false;
  bool operator==(const Row&) const = default;
};

// The VXLAN_VNIFILTER_ENTRY nests of one message.
std::vector<Row> rows_of(const wire::Message& m) {
  std::vector<Row> out;
  auto attrs = wire::parse_raw_attrs(m.payload().subspan(sizeof(tunnel_msg)), 0);
  EXPECT_TRUE(attrs);
  for (const auto& e : *attrs) {
    EXPECT_EQ(e.type, VXLAN_VNIFILTER_ENTRY);
    EXPECT_TRUE(e.nested_flag);  // Linux: nla_nest_start
    auto in = wire::parse_nested(e);
    EXPECT_TRUE(in);
    Row r;
    for (const auto& x : *in) {
      if (x.type == VXLAN_VNIFILTER_ENTRY_START) r.start = r.end = *x.u32();
      if (x.type == VXLAN_VNIFILTER_ENTRY_END) r.end = *x.u32();
      if (x.type == VXLAN_VNIFILTER_ENTRY_GROUP) {
        char buf[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, x.data.data(), buf, sizeof(buf));
        r.remote = buf;
      }
      if (x.type == VXLAN_VNIFILTER_ENTRY_STATS) r.stats = true;
    }
    out.push_back(r);
  }
  return out;
}

class VniFilterTest : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
    LinkRequest vx = named("vx0", "vxlan");
    vx.has_info_data = true;
    vx.info_data = {Attr::u8(IFLA_VXLAN_COLLECT_METADATA, 1), Attr::u8(IFLA_VXLAN_VNIFILTER, 1),
                    Attr::be16(IFLA_VXLAN_PORT, 4789)};
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, vx)).last_error(), 0);
  }
  int vx0() { return find("vx0")->ifindex(); }
  Bytes change(std::uint16_t type, int ifindex, std::uint32_t start, std::uint32_t end,
               const char* remote = nullptr) {
    wire::MessageBuilder b;
    b.begin({type, NLM_F_REQUEST | NLM_F_ACK, 5, 0});
    tunnel_msg tm{};
    tm.family = AF_BRIDGE;
    tm.ifindex = static_cast<std::uint32_t>(ifindex);
    b.put_struct(tm);
    auto nest = b.begin_nest(VXLAN_VNIFILTER_ENTRY | NLA_F_NESTED);
    if (start) b.put_u32(VXLAN_VNIFILTER_ENTRY_START, start);
    if (end) b.put_u32(VXLAN_VNIFILTER_ENTRY_END, end);
    if (remote) {
      in_addr a{};
      inet_pton(AF_INET, remote, &a);
      b.put_attr(VXLAN_VNIFILTER_ENTRY_GROUP, &a, 4);
    }
    b.end_nest(nest);
    EXPECT_TRUE(b.end());
    return Bytes(b.bytes().begin(), b.bytes().end());
  }
  Replies dump(int ifindex = 0, std::uint8_t flags = 0) {
    wire::MessageBuilder b;
    b.begin({RTM_GETTUNNEL, NLM_F_REQUEST | NLM_F_DUMP, 10, 0});
    tunnel_msg tm{};
    tm.family = AF_BRIDGE;
    tm.flags = flags;
    tm.ifindex = static_cast<std::uint32_t>(ifindex);
    b.put_struct(tm);
    EXPECT_TRUE(b.end());
    return send(Bytes(b.bytes().begin(), b.bytes().end()));
  }
  std::pair<int, std::string> error_of(const Replies& r) {
    if (!r.msgs.empty() && r.msgs.back().hdr.nlmsg_type == NLMSG_DONE)
      return {wire::decode_done(r.msgs.back()).value_or(0),
              wire::decode_done_message(r.msgs.back())};
    auto e = r.last_error_reply();
    return {e.error, e.message};
  }
};

TEST_F(VniFilterTest, AnEmptyFilterDumpsNothingAndOtherDevicesAreRefused) {
  Replies r = dump();
  ASSERT_EQ(r.msgs.size(), 1u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, NLMSG_DONE);
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 2, named("d0", "dummy"))).last_error(), 0);
  const int d0 = find("d0")->ifindex();
  EXPECT_EQ(error_of(dump(d0)),
            std::make_pair(EINVAL, std::string("The device is not a vxlan device")));
  EXPECT_EQ(error_of(dump(999)).first, ENODEV);
  EXPECT_EQ(error_of(dump(0, 2)),
            std::make_pair(EINVAL, std::string("Invalid tunnelmsg flags in ancillary header")));
  EXPECT_EQ(error_of(send(change(RTM_NEWTUNNEL, d0, 5, 0))),
            std::make_pair(EINVAL, std::string("vxlan: The device is not a vxlan device")));
  EXPECT_EQ(error_of(send(change(RTM_NEWTUNNEL, vx0(), 0, 0))),
            std::make_pair(EINVAL, std::string("vni start nor end found in vni entry")));
}

TEST_F(VniFilterTest, RangesOfOneRemoteAreDumpedTogetherUnlessCountersAreAsked) {
  auto mon = open(SessionOptions{});
  mon->add_membership(RTNLGRP_TUNNEL);
  ASSERT_EQ(send(change(RTM_NEWTUNNEL, vx0(), 100, 102)).last_error(), 0);
  ASSERT_EQ(send(change(RTM_NEWTUNNEL, vx0(), 200, 201, "10.0.0.1")).last_error(), 0);
  Replies r = dump();
  ASSERT_EQ(r.msgs.size(), 2u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, RTM_NEWTUNNEL);
  EXPECT_EQ(rows_of(r.msgs[0]),
            (std::vector<Row>{{100, 102, "", false}, {200, 201, "10.0.0.1", false}}));
  r = dump(vx0(), TUNNEL_MSG_FLAG_STATS);
  ASSERT_EQ(r.msgs.size(), 2u);
  EXPECT_EQ(rows_of(r.msgs[0]).size(), 5u);
  EXPECT_TRUE(rows_of(r.msgs[0])[0].stats);
  // Linux: only the VNIs with a remote were announced.
  Datagram d;
  int heard = 0;
  while (mon->pop_notification(d)) {
    auto msgs = wire::split_messages(d);
    ASSERT_TRUE(msgs);
    for (const auto& m : *msgs) {
      EXPECT_EQ(m.hdr.nlmsg_type, RTM_NEWTUNNEL);
      heard += static_cast<int>(rows_of(m).size());
    }
  }
  EXPECT_EQ(heard, 2);
}

TEST_F(VniFilterTest, DeletionStopsAtTheFirstMissingVniAndAnotherDeviceCannotTakeOne) {
  ASSERT_EQ(send(change(RTM_NEWTUNNEL, vx0(), 100, 102)).last_error(), 0);
  EXPECT_EQ(send(change(RTM_DELTUNNEL, vx0(), 101, 0)).last_error(), 0);
  EXPECT_EQ(error_of(send(change(RTM_DELTUNNEL, vx0(), 100, 101))).first, ENOENT);
  Replies r = dump();
  ASSERT_EQ(r.msgs.size(), 2u);
  EXPECT_EQ(rows_of(r.msgs[0]), (std::vector<Row>{{102, 102, "", false}}));
  LinkRequest vx = named("vx1", "vxlan");
  vx.has_info_data = true;
  vx.info_data = {Attr::u8(IFLA_VXLAN_COLLECT_METADATA, 1), Attr::u8(IFLA_VXLAN_VNIFILTER, 1),
                  Attr::be16(IFLA_VXLAN_PORT, 4789)};
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 3, vx)).last_error(), 0);
  EXPECT_EQ(error_of(send(change(RTM_NEWTUNNEL, find("vx1")->ifindex(), 102, 0))),
            std::make_pair(EEXIST, std::string("VNI in use")));
}

// Linux: unregister_netdevice_many_notify sends a device's RTM_DELLINK after its
// ndo_uninit, where vxlan_uninit lets its VNIs go (each announced): the VNIs first.
TEST_F(VniFilterTest, ADeletedDevicesVnisAreAnnouncedBeforeItsDellink) {
  ASSERT_EQ(send(change(RTM_NEWTUNNEL, vx0(), 200, 201, "10.0.0.1")).last_error(), 0);
  auto mon = open(SessionOptions{});
  mon->add_membership(RTNLGRP_TUNNEL);
  mon->add_membership(RTNLGRP_LINK);
  LinkRequest del;
  del.ifindex = vx0();
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 4, del)).last_error(), 0);
  EXPECT_EQ(notification_types(*mon),
            (std::vector<std::uint16_t>{RTM_DELTUNNEL, RTM_DELTUNNEL, RTM_DELLINK}));
}

}  // namespace
}  // namespace ifcore::rtnl::test
