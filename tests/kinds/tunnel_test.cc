// Ipip and gre: parameters, addresses, mtu, duplicates, attributes.
#include <arpa/inet.h>
#include <linux/if_arp.h>
#include <linux/if_tunnel.h>
#include <netinet/in.h>

#include "kinds_fixture.h"

namespace ifcore::test {
namespace {

class TunnelTest : public KindsTest {};

TEST_F(TunnelTest, IpipCreateShowsWhatLinuxReports) {
  auto ctl = engine->control();
  Device* t =
      must(ctl.create_link(def(ctl), with_data("ipip", "t0",
                                               {Attr::be32(IFLA_IPTUN_LOCAL, ip("10.0.0.1")),
                                                Attr::be32(IFLA_IPTUN_REMOTE, ip("10.0.0.2")),
                                                Attr::u8(IFLA_IPTUN_TTL, 64)})));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->hw_type(), ARPHRD_TUNNEL);
  EXPECT_EQ(t->mtu(), 1480u);
  EXPECT_EQ(t->address().size(), 4u);
  EXPECT_EQ(t->address()[0], 10);
  EXPECT_EQ(t->address()[3], 1);
  EXPECT_EQ(t->broadcast()[3], 2);
  EXPECT_TRUE(t->flags() & IFF_NOARP);
  EXPECT_TRUE(t->flags() & IFF_POINTOPOINT);
  auto info = t->kind().fill_info(*t);
  EXPECT_EQ(num(info, IFLA_IPTUN_LOCAL), ip("10.0.0.1"));
  EXPECT_EQ(find_attr(info, IFLA_IPTUN_LOCAL)->shape, AttrShape::Be32);
  EXPECT_EQ(num(info, IFLA_IPTUN_REMOTE), ip("10.0.0.2"));
  EXPECT_EQ(num(info, IFLA_IPTUN_TTL), 64u);
  EXPECT_EQ(num(info, IFLA_IPTUN_PMTUDISC), 1u);
  EXPECT_EQ(num(info, IFLA_IPTUN_PROTO), IPPROTO_IPIP);
  EXPECT_EQ(num(info, IFLA_IPTUN_LINK), 0u);
  LinkRequest unnamed = with_data("ipip", "", {Attr::be32(IFLA_IPTUN_REMOTE, ip("10.0.0.9"))});
  unnamed.name.reset();
  Device* n = must(ctl.create_link(def(ctl), unnamed));
  ASSERT_TRUE(n);
  EXPECT_EQ(n->name(), "ipip0");
}

TEST_F(TunnelTest, GreWithKeyAndLower) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.set_mtu(*d, 9000));
  std::uint16_t key = ntohs(GRE_KEY);
  Device* g = must(ctl.create_link(
      def(ctl), with_data("gre", "g0",
                          {Attr::u32(IFLA_GRE_LINK, static_cast<std::uint32_t>(d->ifindex())),
                           Attr::be32(IFLA_GRE_LOCAL, ip("192.0.2.1")),
                           Attr::be32(IFLA_GRE_REMOTE, ip("192.0.2.2")),
                           Attr::be16(IFLA_GRE_IFLAGS, key), Attr::be16(IFLA_GRE_OFLAGS, key),
                           Attr::be32(IFLA_GRE_IKEY, 42), Attr::be32(IFLA_GRE_OKEY, 42)})));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->hw_type(), ARPHRD_IPGRE);
  EXPECT_EQ(g->mtu(), 9000u - 28);  // iphdr + gre header + key
  EXPECT_EQ(g->snapshot_locked().link_ifindex, d->ifindex());
  auto info = g->kind().fill_info(*g);
  EXPECT_EQ(num(info, IFLA_GRE_IKEY), 42u);
  EXPECT_EQ(num(info, IFLA_GRE_IFLAGS), key);
  EXPECT_EQ(find_attr(info, IFLA_GRE_IFLAGS)->shape, AttrShape::Be16);
  EXPECT_EQ(num(info, IFLA_GRE_LINK), static_cast<std::uint64_t>(d->ifindex()));
  // Plain gre on no lower: 1476.
  Device* p = must(ctl.create_link(
      def(ctl), with_data("gre", "g1", {Attr::be32(IFLA_GRE_REMOTE, ip("192.0.2.3"))})));
  EXPECT_EQ(p->mtu(), 1476u);
  // Same endpoints with another key is another tunnel; the same key is refused.
  std::string before = summary(ctl);
  AttrList same = {Attr::u32(IFLA_GRE_LINK, static_cast<std::uint32_t>(d->ifindex())),
                   Attr::be32(IFLA_GRE_LOCAL, ip("192.0.2.1")),
                   Attr::be32(IFLA_GRE_REMOTE, ip("192.0.2.2")), Attr::be16(IFLA_GRE_IFLAGS, key),
                   Attr::be32(IFLA_GRE_IKEY, 42)};
  EXPECT_FAILS(ctl.create_link(def(ctl), with_data("gre", "g2", same)), EEXIST, "\"g0\"");
  EXPECT_EQ(summary(ctl), before);
  same.back() = Attr::be32(IFLA_GRE_IKEY, 43);
  EXPECT_TRUE(must(ctl.create_link(def(ctl), with_data("gre", "g2", same))));
}

TEST_F(TunnelTest, InvalidRequestsChangeNothing) {
  auto ctl = engine->control();
  ASSERT_TRUE(ctl.create_link(
      def(ctl), with_data("ipip", "t0", {Attr::be32(IFLA_IPTUN_REMOTE, ip("10.0.0.2"))})));
  std::string before = summary(ctl);
  EXPECT_FAILS(
      ctl.create_link(def(ctl),
                      with_data("ipip", "t1", {Attr::be32(IFLA_IPTUN_REMOTE, ip("10.0.0.2"))})),
      EEXIST, "same endpoints");
  EXPECT_FAILS(
      ctl.create_link(def(ctl), with_data("ipip", "t1", {Attr::u8(IFLA_IPTUN_PROTO, IPPROTO_TCP)})),
      EINVAL, "protocol");
  EXPECT_FAILS(
      ctl.create_link(def(ctl),
                      with_data("gre", "g1", {Attr::be16(IFLA_GRE_IFLAGS, ntohs(GRE_ROUTING))})),
      EINVAL, "routing");
  EXPECT_FAILS(ctl.create_link(def(ctl), with_data("gre", "g1", {Attr::u8(IFLA_GRE_IGNORE_DF, 1)})),
               EINVAL, "ignore_df");
  EXPECT_EQ(summary(ctl), before);
  // A requested mtu is clamped into range as Linux does.
  LinkRequest big = with_data("ipip", "t2", {Attr::be32(IFLA_IPTUN_REMOTE, ip("10.0.0.3"))});
  big.mtu = 70000;
  Device* t2 = must(ctl.create_link(def(ctl), big));
  ASSERT_TRUE(t2);
  EXPECT_EQ(t2->mtu(), 65535u - 20);
}

TEST_F(TunnelTest, ChangeEndpointsAndRefuseDuplicates) {
  auto ctl = engine->control();
  Device* a = must(ctl.create_link(
      def(ctl), with_data("ipip", "a", {Attr::be32(IFLA_IPTUN_REMOTE, ip("10.0.0.2"))})));
  Device* b = must(ctl.create_link(
      def(ctl), with_data("ipip", "b", {Attr::be32(IFLA_IPTUN_REMOTE, ip("10.0.0.3"))})));
  LinkRequest r;
  r.has_info_data = true;
  r.info_data = {Attr::be32(IFLA_IPTUN_LOCAL, ip("10.1.1.1")), Attr::u8(IFLA_IPTUN_TTL, 9)};
  ASSERT_TRUE(ctl.change_link(*a, r));
  EXPECT_EQ(a->address()[0], 10);
  EXPECT_EQ(a->address()[1], 1);
  EXPECT_EQ(num(a->kind().fill_info(*a), IFLA_IPTUN_TTL), 9u);
  std::string before = summary(ctl);
  LinkRequest dup;
  dup.has_info_data = true;
  dup.info_data = {Attr::be32(IFLA_IPTUN_REMOTE, ip("10.0.0.2")),
                   Attr::be32(IFLA_IPTUN_LOCAL, ip("10.1.1.1"))};
  EXPECT_FAILS(ctl.change_link(*b, dup), EEXIST, "same endpoints");
  EXPECT_EQ(summary(ctl), before);
  ASSERT_TRUE(ctl.delete_link(*a));
  ASSERT_TRUE(ctl.delete_link(*b));
  EXPECT_EQ(def(ctl).device_count(), 1u);
}

// A tunnel is checked against the tunnels of its kind in its own namespace: one moved away
// no longer blocks its endpoints here and blocks them there; one deleted blocks nothing.
TEST_F(TunnelTest, TheEndpointCheckFollowsMovesAndDeletes) {
  auto ctl = engine->control();
  auto made = ctl.create_namespace("other");
  ASSERT_TRUE(made);
  Namespace& other = **made;
  AttrList ends = {Attr::be32(IFLA_GRE_LOCAL, ip("192.0.2.1")),
                   Attr::be32(IFLA_GRE_REMOTE, ip("192.0.2.2"))};
  Device* g = must(ctl.create_link(def(ctl), with_data("gre", "g0", ends)));
  ASSERT_TRUE(g);
  dummy(ctl, "d0");  // other kinds are not in the way
  EXPECT_FAILS(ctl.create_link(def(ctl), with_data("gre", "g1", ends)), EEXIST, "\"g0\"");
  // An ipip tunnel with the same endpoints is another kind: allowed.
  EXPECT_TRUE(
      must(ctl.create_link(def(ctl), with_data("ipip", "t0",
                                               {Attr::be32(IFLA_IPTUN_LOCAL, ip("192.0.2.1")),
                                                Attr::be32(IFLA_IPTUN_REMOTE, ip("192.0.2.2"))}))));
  ASSERT_TRUE(ctl.move_to_namespace(*g, other));
  Device* here = must(ctl.create_link(def(ctl), with_data("gre", "g1", ends)));
  ASSERT_TRUE(here);
  EXPECT_FAILS(ctl.create_link(other, with_data("gre", "g2", ends)), EEXIST, "\"g0\"");
  ASSERT_TRUE(ctl.delete_link(*here));
  EXPECT_TRUE(must(ctl.create_link(def(ctl), with_data("gre", "g3", ends))));
}

}  // namespace
}  // namespace ifcore::test
