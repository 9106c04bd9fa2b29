// IFLA_HEADROOM as Linux 6.18 reports it (a device's needed_headroom, checked against the
// kernel): a vxlan's own headers over its lower's (vxlan_config_apply), a bridge's ports'
// most (br_add_if, br_del_if), which each veth port and its peer then keep
// (veth_set_rx_headroom), and none for the other kinds.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_link.h>

#include "fixture.h"

namespace ifcore::rtnl::test {
namespace {

class HeadroomTest : public RtnlTest {
 protected:
  int make(const LinkRequest& r) {
    return send(link_msg(RTM_NEWLINK, kCreate, ++seq_, r)).last_error();
  }
  // A vxlan on its own UDP port (two metadata devices cannot share one).
  static LinkRequest vxlan(std::string name, AttrList data, std::uint32_t lower = 0) {
    static std::uint16_t port = 4789;
    LinkRequest r = named(std::move(name), "vxlan");
    r.has_info_data = true;
    r.info_data = std::move(data);
    r.info_data.push_back(Attr::be16(IFLA_VXLAN_PORT, port++));
    if (lower) r.info_data.push_back(Attr::u32(IFLA_VXLAN_LINK, lower));
    return r;
  }
  std::uint32_t idx(const std::string& name) {
    Device* d = find(name);
    return d ? static_cast<std::uint32_t>(d->ifindex()) : 0;
  }
  int master(const std::string& name, std::uint32_t ifindex) {
    LinkRequest r = named(name);
    r.master = ifindex;
    return send(link_msg(RTM_NEWLINK, NLM_F_ACK, ++seq_, r)).last_error();
  }
  // The device's IFLA_HEADROOM and mtu as RTM_GETLINK reports them.
  std::pair<int, std::uint32_t> shown(const std::string& name) {
    wire::GetLinkRequest g;
    g.name = name;
    Replies r = send(getlink(++seq_, g));
    if (r.msgs.size() != 1 || r.msgs[0].hdr.nlmsg_type != RTM_NEWLINK) return {-1, 0};
    auto m = wire::decode_link_message(r.msgs[0]);
    if (!m || !m->headroom || !m->mtu) return {-2, 0};
    return {*m->headroom, *m->mtu};
  }
  int headroom(const std::string& name) { return shown(name).first; }
  std::uint32_t seq_ = 10;
};

const std::uint8_t kGroup6[16] = {0xff, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

TEST_F(HeadroomTest, AVxlanKeepsRoomForItsHeadersAndItsLowers) {
  ASSERT_EQ(make(named("d0", "dummy")), 0);
  ASSERT_EQ(make(veth_pair("v0", "v1")), 0);
  // IPv4: an Ethernet header, IPv4, UDP and VXLAN headers, and the inner Ethernet header.
  ASSERT_EQ(make(vxlan("vx4", {Attr::u32(IFLA_VXLAN_ID, 4)})), 0);
  // IPv6, over lo: lo's link header, the IPv6 headers.
  ASSERT_EQ(
      make(vxlan("vx6", {Attr::u32(IFLA_VXLAN_ID, 6), Attr::binary(IFLA_VXLAN_GROUP6, kGroup6)},
                 idx("lo"))),
      0);
  // A metadata device is sized for IPv6; with GPE, no inner Ethernet header (and its mtu
  // under the lower counts its IPv4 headers alone: 1500 - 36).
  ASSERT_EQ(make(vxlan("vxe", {Attr::u8(IFLA_VXLAN_COLLECT_METADATA, 1)})), 0);
  ASSERT_EQ(make(vxlan("vxg",
                       {Attr::u8(IFLA_VXLAN_COLLECT_METADATA, 1), Attr::flag(IFLA_VXLAN_GPE),
                        Attr::u8(IFLA_VXLAN_LEARNING, 0)},
                       idx("v1"))),
            0);
  // Over another vxlan: that one's link header and headroom below its own.
  ASSERT_EQ(make(vxlan("vx9", {Attr::u32(IFLA_VXLAN_ID, 9)}, idx("vx6"))), 0);
  EXPECT_EQ(headroom("vx4"), 64);
  EXPECT_EQ(headroom("vx6"), 84);
  EXPECT_EQ(headroom("vxe"), 84);
  EXPECT_EQ(shown("vxg"), (std::pair<int, std::uint32_t>{70, 1464}));
  EXPECT_EQ(headroom("vx9"), 148);
  EXPECT_EQ(headroom("d0"), 0);
  EXPECT_EQ(headroom("v0"), 0);
  EXPECT_EQ(headroom("lo"), 0);
}

TEST_F(HeadroomTest, ABridgeTakesItsPortsMostWhichItsVethsAndTheirPeersKeep) {
  ASSERT_EQ(make(named("br0", "bridge")), 0);
  ASSERT_EQ(make(veth_pair("v0", "v1")), 0);
  ASSERT_EQ(make(vxlan("vx0", {Attr::u32(IFLA_VXLAN_ID, 1)})), 0);
  ASSERT_EQ(master("v0", idx("br0")), 0);
  EXPECT_EQ(headroom("br0"), 0);
  ASSERT_EQ(master("vx0", idx("br0")), 0);
  EXPECT_EQ(headroom("br0"), 64);
  EXPECT_EQ(headroom("v0"), 64);
  EXPECT_EQ(headroom("v1"), 64);  // the peer keeps what either end was asked
  EXPECT_EQ(headroom("vx0"), 64);
  // The vxlan leaves: a veth repeats what it was asked and does not hold the bridge's.
  ASSERT_EQ(master("vx0", 0), 0);
  EXPECT_EQ(headroom("br0"), 0);
  EXPECT_EQ(headroom("v0"), 0);
  EXPECT_EQ(headroom("v1"), 0);
  // A released veth keeps nothing; the bridge keeps its vxlan's.
  ASSERT_EQ(master("vx0", idx("br0")), 0);
  ASSERT_EQ(master("v0", 0), 0);
  EXPECT_EQ(headroom("v0"), 0);
  EXPECT_EQ(headroom("v1"), 0);
  EXPECT_EQ(headroom("br0"), 64);
}

}  // namespace
}  // namespace ifcore::rtnl::test
