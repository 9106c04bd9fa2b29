// Vxlan: what a new device reports, Linux's checks (each refusal changes nothing), the
// attributes a change may and may not carry, and the cascade with its lower device.
#include <linux/if_link.h>
#include <linux/veth.h>

#include "kinds_fixture.h"

namespace ifcore::test {
namespace {

class VxlanTest : public KindsTest {
 protected:
  static LinkRequest vxlan(std::string name, AttrList data) {
    return with_data("vxlan", std::move(name), std::move(data));
  }
  static Attr v4(std::uint16_t type, std::uint8_t a, std::uint8_t b, std::uint8_t c,
                 std::uint8_t d) {
    std::uint8_t bytes[4] = {a, b, c, d};
    return Attr::binary(type, bytes);
  }
};

TEST_F(VxlanTest, CreateShowsWhatLinuxReports) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* v = must(ctl.create_link(
      def(ctl), vxlan("vx0", {Attr::u32(IFLA_VXLAN_ID, 42), v4(IFLA_VXLAN_GROUP, 239, 1, 1, 1),
                              Attr::u32(IFLA_VXLAN_LINK, static_cast<std::uint32_t>(d->ifindex())),
                              Attr::be16(IFLA_VXLAN_PORT, 4789)})));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->mtu(), d->mtu() - 50) << "the lower's mtu less the IPv4 headers";
  auto info = v->kind().fill_info(*v);
  EXPECT_EQ(num(info, IFLA_VXLAN_ID), 42u);
  EXPECT_EQ(num(info, IFLA_VXLAN_LINK), static_cast<std::uint64_t>(d->ifindex()));
  EXPECT_EQ(num(info, IFLA_VXLAN_PORT), 4789u);
  EXPECT_EQ(num(info, IFLA_VXLAN_LEARNING), 1u);
  EXPECT_EQ(num(info, IFLA_VXLAN_AGEING), 300u);
  EXPECT_EQ(num(info, IFLA_VXLAN_UDP_CSUM), 1u);
  // No port: Linux's default 8472; no lower: mtu 1500.
  Device* w = must(ctl.create_link(def(ctl), vxlan("vx1", {Attr::u32(IFLA_VXLAN_ID, 7)})));
  EXPECT_EQ(num(w->kind().fill_info(*w), IFLA_VXLAN_PORT), 8472u);
  EXPECT_EQ(w->mtu(), 1500u);
  Device* z = must(ctl.create_link(
      def(ctl), vxlan("vx2", {Attr::u32(IFLA_VXLAN_ID, 8), Attr::u32(IFLA_VXLAN_AGEING, 0)})));
  EXPECT_EQ(num(z->kind().fill_info(*z), IFLA_VXLAN_AGEING), 300u) << "0 means the default";
}

TEST_F(VxlanTest, InvalidRequestsChangeNothing) {
  auto ctl = engine->control();
  ASSERT_TRUE(ctl.create_link(def(ctl), vxlan("vx0", {Attr::u32(IFLA_VXLAN_ID, 42)})));
  std::string before = summary(ctl);
  EXPECT_FAILS(ctl.create_link(def(ctl), vxlan("vx1", {Attr::u32(IFLA_VXLAN_ID, 42)})), EEXIST,
               "A VXLAN device with the specified VNI already exists");
  EXPECT_FAILS(ctl.create_link(def(ctl), vxlan("vx1", {Attr::u32(IFLA_VXLAN_ID, 1),
                                                       Attr::u32(IFLA_VXLAN_LINK, 999)})),
               ENODEV, "Invalid local interface, device not found");
  EXPECT_FAILS(ctl.create_link(def(ctl), vxlan("vx1", {Attr::u32(IFLA_VXLAN_ID, 1),
                                                       v4(IFLA_VXLAN_GROUP, 239, 1, 1, 1)})),
               EINVAL, "Local interface required for multicast remote destination");
  EXPECT_FAILS(ctl.create_link(def(ctl), vxlan("vx1", {Attr::u32(IFLA_VXLAN_ID, 1),
                                                       Attr::flag(IFLA_VXLAN_GPE)})),
               EINVAL, "VXLAN GPE does not support this combination of attributes");
  EXPECT_FAILS(ctl.create_link(def(ctl), vxlan("vx1", {Attr::u32(IFLA_VXLAN_ID, 1),
                                                       Attr::be32(IFLA_VXLAN_LABEL, 5)})),
               EINVAL, "Label attribute only applies to IPv6 VXLAN devices");
  EXPECT_EQ(summary(ctl), before);
}

TEST_F(VxlanTest, ChangesTakeWhatLinuxLetsChange) {
  auto ctl = engine->control();
  Device* v = must(ctl.create_link(
      def(ctl), vxlan("vx0", {Attr::u32(IFLA_VXLAN_ID, 42), v4(IFLA_VXLAN_LOCAL, 10, 0, 0, 1)})));
  ASSERT_TRUE(v);
  auto change = [&](AttrList data) {
    LinkRequest r = with_data("vxlan", "", std::move(data));
    r.name.reset();
    return ctl.change_link(*v, r);
  };
  ASSERT_TRUE(change({Attr::u8(IFLA_VXLAN_TTL, 64), Attr::u8(IFLA_VXLAN_LEARNING, 0),
                      Attr::u32(IFLA_VXLAN_AGEING, 30), v4(IFLA_VXLAN_LOCAL, 10, 0, 0, 9)}));
  auto info = v->kind().fill_info(*v);
  EXPECT_EQ(num(info, IFLA_VXLAN_TTL), 64u);
  EXPECT_EQ(num(info, IFLA_VXLAN_LEARNING), 0u);
  EXPECT_EQ(num(info, IFLA_VXLAN_AGEING), 30u);
  ASSERT_TRUE(change({Attr::u32(IFLA_VXLAN_AGEING, 0)}));
  EXPECT_EQ(num(v->kind().fill_info(*v), IFLA_VXLAN_AGEING), 300u) << "0 means the default";
  struct Case {
    Attr attr;
    const char* message;
  };
  for (const Case& c :
       {Case{Attr::u32(IFLA_VXLAN_ID, 43), "Cannot change VNI"},
        Case{Attr::u8(IFLA_VXLAN_PROXY, 1), "vxlan: cannot change PROXY flag"},
        Case{Attr::flag(IFLA_VXLAN_TTL_INHERIT), "vxlan: cannot change TTL_INHERIT flag"},
        Case{Attr::u8(IFLA_VXLAN_UDP_CSUM, 1), "Cannot change UDP_CSUM flag"},
        Case{Attr::be16(IFLA_VXLAN_PORT, 1), "Cannot change port"},
        Case{Attr::u32(IFLA_VXLAN_LIMIT, 7), "Cannot change limit"}}) {
    auto r = change({c.attr});
    ASSERT_FALSE(r) << c.message;
    EXPECT_EQ(r.error().code, EOPNOTSUPP);
    EXPECT_EQ(r.error().message, c.message);
  }
  std::uint8_t six[16] = {0xff, 0x05};
  auto r = change({Attr::binary(IFLA_VXLAN_LOCAL6, six)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "New local address family does not match old");
  EXPECT_EQ(num(v->kind().fill_info(*v), IFLA_VXLAN_TTL), 64u) << "refusals change nothing";
}

TEST_F(VxlanTest, DiesWithItsLowerEvenAVethPeer) {
  auto ctl = engine->control();
  auto peer = std::make_shared<LinkRequest>();
  peer->name = "b";
  Attr p{VETH_INFO_PEER, AttrShape::LinkMsg};
  p.link = std::move(peer);
  Device* a = must(ctl.create_link(def(ctl), with_data("veth", "a", {p})));
  ASSERT_TRUE(a);
  Device* b = ctl.find(def(ctl), "b");
  ASSERT_TRUE(ctl.create_link(
      def(ctl),
      vxlan("vx0", {Attr::u32(IFLA_VXLAN_ID, 1), v4(IFLA_VXLAN_GROUP, 239, 1, 1, 1),
                    Attr::u32(IFLA_VXLAN_LINK, static_cast<std::uint32_t>(b->ifindex()))})));
  auto before = engine->stats();
  ASSERT_TRUE(ctl.delete_link(*a));
  // Linux: vxlan_handle_lowerdev_unregister, a batch of its own inside the pair's.
  EXPECT_EQ(engine->stats().batches - before.batches, 2u);
  EXPECT_FALSE(ctl.find(def(ctl), "vx0")) << "queued with the peer";
}

TEST_F(VxlanTest, TheVniStaysInTheLinkNamespaceWhenTheDeviceMoves) {
  // Linux: a vxlan stays on its link namespace's list (vxlan->net) when it moves, so its VNI
  // is taken there and free where it went; it dies with that namespace (checked on 6.18).
  auto ctl = engine->control();
  auto made = ctl.create_namespace("other");
  ASSERT_TRUE(made);
  Namespace& other = **made;
  Device* v = must(ctl.create_link(def(ctl), vxlan("vx0", {Attr::u32(IFLA_VXLAN_ID, 42)})));
  ASSERT_TRUE(v);
  EXPECT_FAILS(ctl.create_link(def(ctl), vxlan("vx1", {Attr::u32(IFLA_VXLAN_ID, 42)})), EEXIST,
               "specified VNI already exists");
  ASSERT_TRUE(ctl.move_to_namespace(*v, other));
  EXPECT_FAILS(ctl.create_link(def(ctl), vxlan("vx1", {Attr::u32(IFLA_VXLAN_ID, 42)})), EEXIST,
               "specified VNI already exists");
  EXPECT_TRUE(must(ctl.create_link(other, vxlan("vx2", {Attr::u32(IFLA_VXLAN_ID, 42)}))));
  EXPECT_EQ(v->kind().link_ns(*v), &def(ctl));
  ASSERT_TRUE(ctl.delete_link(*v));
  EXPECT_TRUE(must(ctl.create_link(def(ctl), vxlan("vx3", {Attr::u32(IFLA_VXLAN_ID, 42)}))));
}

// Linux: vxlan_vni_in_use looks a VNI-filtering device's VNI up in its VNI table (empty
// here), so two `external vnifilter` devices share a port.
TEST_F(VxlanTest, AVniFilteringDeviceHoldsNoVniOfItsOwn) {
  auto ctl = engine->control();
  auto ext = [](std::string name) {
    return vxlan(std::move(name),
                 {Attr::u8(IFLA_VXLAN_COLLECT_METADATA, 1), Attr::u8(IFLA_VXLAN_VNIFILTER, 1),
                  Attr::be16(IFLA_VXLAN_PORT, 4789)});
  };
  ASSERT_TRUE(must(ctl.create_link(def(ctl), ext("vx5"))));
  EXPECT_TRUE(must(ctl.create_link(def(ctl), ext("vx6"))));
}

}  // namespace
}  // namespace ifcore::test
