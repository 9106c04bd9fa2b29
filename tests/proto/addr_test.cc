// Tests of IPv4 and IPv6 addresses: the routes they make, duplicates, deletion,
// secondaries and promotion, link-local addresses on up, and the IPv6 settings.
#include "proto/helpers.h"

#include <linux/veth.h>

#include <memory>

namespace ifcore::test {
namespace {

using inet::ProtoEvent;

class AddrTest : public EngineTest {
 protected:
  Device* up_dummy(Control& ctl, std::string name) {
    Device* d = dummy(ctl, std::move(name));
    EXPECT_TRUE(ctl.open(*d));
    return d;
  }
};

TEST_F(AddrTest, Ipv4AddressMakesLocalBroadcastAndConnectedRoutes) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  Recorder rec;
  inet::add_listener(ctl, rec);
  auto a = inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->label, "d0");
  EXPECT_TRUE(a->flags & IFA_F_PERMANENT);
  // Linux: RTM_NEWADDR, then the local route, the subnet broadcast, the connected route.
  EXPECT_EQ(rec.events,
            (std::vector<std::string>{"+addr 10.0.0.1/24", "+route 10.0.0.1/32 t255",
                                      "+route 10.0.0.0/24 t254", "+route 10.0.0.255/32 t255"}));
  auto routes = inet::list_routes(ctl, ns(ctl), AF_INET);
  ASSERT_EQ(routes.size(), 3u);
  EXPECT_EQ(routes[0].table, RT_TABLE_MAIN);
  EXPECT_EQ(routes[0].type, RTN_UNICAST);
  EXPECT_EQ(routes[0].scope, RT_SCOPE_LINK);
  EXPECT_EQ(routes[0].protocol, RTPROT_KERNEL);
  EXPECT_EQ(routes[0].prefsrc, ip("10.0.0.1"));
  EXPECT_EQ(routes[1].type, RTN_LOCAL);
  EXPECT_EQ(routes[1].scope, RT_SCOPE_HOST);
  EXPECT_EQ(routes[2].type, RTN_BROADCAST);
  inet::remove_listener(ctl, rec);
}

TEST_F(AddrTest, DuplicateAndMissingAddressesFailAsLinux) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  auto dup = inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24));
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, EEXIST);
  EXPECT_EQ(dup.error().message, "ipv4: Address already assigned");
  auto miss = inet::delete_address(ctl, ns(ctl), addr_req(*d, "10.0.0.9", 24));
  ASSERT_FALSE(miss);
  EXPECT_EQ(miss.error().code, EADDRNOTAVAIL);
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64)));
  auto dup6 = inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64));
  ASSERT_FALSE(dup6);
  EXPECT_EQ(dup6.error().code, EEXIST);
  auto miss6 = inet::delete_address(ctl, ns(ctl), addr_req(*d, "2001:db8::2", 64));
  ASSERT_FALSE(miss6);
  EXPECT_EQ(miss6.error().code, EADDRNOTAVAIL);
  auto nodev = inet::add_address(ctl, ns(ctl), [] {
    inet::AddrRequest r;
    r.family = AF_INET;
    r.ifindex = 999;
    r.local = ip("10.1.1.1");
    return r;
  }());
  ASSERT_FALSE(nodev);
  EXPECT_EQ(nodev.error().code, ENODEV);
}

// Linux: ipv6_add_addr's refusals, EADDRNOTAVAIL with NL_SET_ERR_MSG_MOD's texts.
TEST_F(AddrTest, Ipv6AddressesThatCannotBeAssigned) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  auto fails = [&](std::string_view a, int plen, std::string_view text) {
    auto r = inet::add_address(ctl, ns(ctl), addr_req(*d, a, plen));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, EADDRNOTAVAIL);
    EXPECT_EQ(r.error().message, text);
  };
  fails("ff02::5", 64, "ipv6: Cannot assign multicast address without \"IFA_F_MCAUTOJOIN\" flag");
  fails("::", 64, "ipv6: Invalid address");
  fails("::1", 128, "ipv6: Cannot assign loopback address on this device");
  // Linux: a device whose mtu is below 1280 has no IPv6: an address is EINVAL alone
  // (ipv6_add_dev), a route through it ENODEV alone (fib6_nh_init).
  ASSERT_TRUE(ctl.open(*d));
  ASSERT_TRUE(ctl.set_mtu(*d, 1279));
  auto a = inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::4", 64));
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, EINVAL);
  EXPECT_TRUE(a.error().log_only);
  auto q = route_req("2001:db8:8::", 64);
  q.oif = d->ifindex();
  auto r = inet::add_route(ctl, ns(ctl), q);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ENODEV);
  EXPECT_TRUE(r.error().log_only);
}

TEST_F(AddrTest, DeletingAPrimaryDeletesItsSecondaries) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  auto s1 = inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.2", 24));
  auto s2 = inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.3", 24));
  auto other = inet::add_address(ctl, ns(ctl), addr_req(*d, "10.9.0.1", 16));
  ASSERT_TRUE(s1 && s2 && other);
  EXPECT_TRUE(s1->flags & IFA_F_SECONDARY);
  EXPECT_FALSE(other->flags & IFA_F_SECONDARY);
  // Primaries first: 10.9.0.1 goes before the secondaries of 10.0.0.0/24.
  auto list = inet::list_addresses(ctl, ns(ctl), AF_INET, d->ifindex());
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[1].local, ip("10.9.0.1"));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  list = inet::list_addresses(ctl, ns(ctl), AF_INET, d->ifindex());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].local, ip("10.9.0.1"));
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET))
    EXPECT_FALSE(r.dst.in_prefix(ip("10.0.0.0"), 24)) << r.dst.to_string();
}

TEST_F(AddrTest, PromoteSecondariesPromotesTheFirstOne) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  inet::Inet4Conf c;
  c.promote_secondaries = true;
  ASSERT_TRUE(inet::set_inet4_conf(ctl, ns(ctl), d->ifindex(), c));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.2", 24)));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.3", 24)));
  Recorder rec;
  inet::add_listener(ctl, rec);
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  inet::remove_listener(ctl, rec);
  auto list = inet::list_addresses(ctl, ns(ctl), AF_INET, d->ifindex());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].local, ip("10.0.0.2"));
  EXPECT_FALSE(list[0].flags & IFA_F_SECONDARY);
  EXPECT_TRUE(list[1].flags & IFA_F_SECONDARY);
  // Linux: __inet_del_ifa — the secondaries' local routes go before the primary does.
  ASSERT_GE(rec.events.size(), 3u);
  EXPECT_EQ(rec.events[0], "-route 10.0.0.2/32 t255");
  EXPECT_EQ(rec.events[1], "-route 10.0.0.3/32 t255");
  EXPECT_EQ(rec.events[2], "-addr 10.0.0.1/24");
  EXPECT_NE(std::find(rec.events.begin(), rec.events.end(), "+addr 10.0.0.2/24"), rec.events.end());
  // The connected route now uses the promoted address as its source.
  bool found = false;
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET, RT_TABLE_MAIN))
    if (r.dst == ip("10.0.0.0")) {
      found = true;
      EXPECT_EQ(r.prefsrc, ip("10.0.0.2"));
    }
  EXPECT_TRUE(found);
}

TEST_F(AddrTest, NamespaceWidePromoteSecondaries) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  inet::Inet4Conf all;
  all.promote_secondaries = true;
  ASSERT_TRUE(inet::set_inet4_conf(ctl, ns(ctl), inet::kConfAll, all));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.2", 24)));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  EXPECT_EQ(inet::list_addresses(ctl, ns(ctl), AF_INET, d->ifindex()).size(), 1u);
}

TEST_F(AddrTest, Ipv4RoutesFollowTheDeviceState) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  // Down: only the local route (Linux: fib_add_ifaddr stops there for a down device).
  EXPECT_EQ(routes_of(ctl, ns(ctl), AF_INET, d->ifindex()).size(), 1u);
  ASSERT_TRUE(ctl.open(*d));
  EXPECT_EQ(routes_of(ctl, ns(ctl), AF_INET, d->ifindex()).size(), 3u);
  auto user = route_req("20.0.0.0", 24);
  user.gateway = ip("10.0.0.254");
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), user));
  EXPECT_EQ(routes_of(ctl, ns(ctl), AF_INET, d->ifindex()).size(), 4u);
  ASSERT_TRUE(ctl.close(*d));
  auto left = routes_of(ctl, ns(ctl), AF_INET, d->ifindex());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0], fmt::format("{} 10.0.0.1/32 t255", RTN_LOCAL));
  EXPECT_EQ(inet::list_addresses(ctl, ns(ctl), AF_INET, d->ifindex()).size(), 1u);
}

TEST_F(AddrTest, Ipv6AddressMakesPrefixAndLocalRoutes) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  auto a = inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64, IFA_F_NODAD));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_TRUE(a->flags & IFA_F_NODAD);
  EXPECT_TRUE(a->flags & IFA_F_PERMANENT);
  EXPECT_FALSE(a->flags & IFA_F_TENTATIVE);
  EXPECT_EQ(a->scope, RT_SCOPE_UNIVERSE);
  bool prefix = false, local = false;
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET6)) {
    if (r.dst == ip("2001:db8::") && r.dst_len == 64) {
      prefix = true;
      EXPECT_EQ(r.priority, 256u);
      EXPECT_EQ(r.protocol, RTPROT_KERNEL);
      EXPECT_EQ(r.table, RT_TABLE_MAIN);
    }
    if (r.dst == ip("2001:db8::1") && r.dst_len == 128) {
      local = true;
      EXPECT_EQ(r.type, RTN_LOCAL);
      EXPECT_EQ(r.table, RT_TABLE_LOCAL);
    }
  }
  EXPECT_TRUE(prefix);
  EXPECT_TRUE(local);
  // noprefixroute: no prefix route.
  ASSERT_TRUE(
      inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db9::1", 64, IFA_F_NOPREFIXROUTE)));
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET6, RT_TABLE_MAIN))
    EXPECT_FALSE(r.dst == ip("2001:db9::")) << "prefix route despite noprefixroute";
  // Deleting needs the prefix length too (Linux: inet6_addr_del).
  EXPECT_FALSE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 48)));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64)));
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET6))
    EXPECT_FALSE(r.dst.in_prefix(ip("2001:db8::"), 64)) << r.dst.to_string();
}

// Linux 6.18 (checked with `ip` on the kernel): an address on a down device that does ARP
// is tentative and has no route; going up gives it its prefix route at once, tentative or
// not (addrconf_permanent_addr), and the host route once DAD is over. On a NOARP device
// (a dummy) DAD is skipped even while down: the host route is there before it is up.
TEST_F(AddrTest, Ipv6AddressOnADownDeviceIsTentativeWithoutRoutes) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.change_flags(*d, d->flags() & ~IFF_NOARP));
  auto a = inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64));
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->flags & IFA_F_TENTATIVE);
  EXPECT_TRUE(routes_of(ctl, ns(ctl), AF_INET6, d->ifindex()).empty());
  ASSERT_TRUE(ctl.open(*d));
  for (auto& x : inet::list_addresses(ctl, ns(ctl), AF_INET6, d->ifindex()))
    EXPECT_FALSE(x.flags & IFA_F_TENTATIVE);
  EXPECT_FALSE(routes_of(ctl, ns(ctl), AF_INET6, d->ifindex()).empty());
  // Linux (keep_addr_on_down = 0): going down removes the addresses and their routes.
  ASSERT_TRUE(ctl.close(*d));
  EXPECT_TRUE(inet::list_addresses(ctl, ns(ctl), AF_INET6, d->ifindex()).empty());
  EXPECT_TRUE(routes_of(ctl, ns(ctl), AF_INET6, d->ifindex()).empty());

  Device* n = dummy(ctl, "n0");
  ASSERT_TRUE(n->flags() & IFF_NOARP);
  auto b = inet::add_address(ctl, ns(ctl), addr_req(*n, "2001:db8:2::1", 64));
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->flags & IFA_F_TENTATIVE);
  EXPECT_EQ(
      routes_of(ctl, ns(ctl), AF_INET6, n->ifindex()),
      std::vector<std::string>{fmt::format("{} 2001:db8:2::1/128 t{}", RTN_LOCAL, RT_TABLE_LOCAL)});
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET6))
    if (r.oif == n->ifindex()) {
      EXPECT_FALSE(r.flags & RTNH_F_LINKDOWN);
    }
}

TEST_F(AddrTest, LinkLocalFromTheHardwareAddressOnUp) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.set_address(*d, *HwAddr::parse("02:11:22:33:44:55")));
  EXPECT_TRUE(inet::list_addresses(ctl, ns(ctl), AF_INET6, d->ifindex()).empty());
  ASSERT_TRUE(ctl.open(*d));
  auto list = inet::list_addresses(ctl, ns(ctl), AF_INET6, d->ifindex());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].local, ip("fe80::11:22ff:fe33:4455"));
  EXPECT_EQ(list[0].prefixlen, 64);
  EXPECT_EQ(list[0].scope, RT_SCOPE_LINK);
  auto routes = routes_of(ctl, ns(ctl), AF_INET6, d->ifindex());
  EXPECT_NE(std::find(routes.begin(), routes.end(), fmt::format("{} fe80::/64 t254", RTN_UNICAST)),
            routes.end());
  EXPECT_NE(std::find(routes.begin(), routes.end(), fmt::format("{} ff00::/8 t255", RTN_MULTICAST)),
            routes.end());
}

// Linux: addrconf_link_ready — a device up without carrier (a veth whose peer is down) gets
// its IPv6 link-local address when the carrier comes (NETDEV_CHANGE), not at NETDEV_UP.
TEST_F(AddrTest, LinkLocalAddressWaitsForCarrier) {
  auto ctl = engine->control();
  auto peer = std::make_shared<LinkRequest>();
  peer->name = "v1";
  Attr a{VETH_INFO_PEER, AttrShape::LinkMsg};
  a.link = peer;
  LinkRequest req = link_req("veth", "v0");
  req.has_info_data = true;
  req.info_data = {a};
  auto made = ctl.create_link(ns(ctl), req);
  ASSERT_TRUE(made) << made.error().message;
  Device* v0 = *made;
  Device* v1 = ctl.find(ns(ctl), "v1");
  ASSERT_TRUE(ctl.open(*v0));
  EXPECT_TRUE(inet::list_addresses(ctl, ns(ctl), AF_INET6, v0->ifindex()).empty());
  ASSERT_TRUE(ctl.open(*v1));
  EXPECT_EQ(inet::list_addresses(ctl, ns(ctl), AF_INET6, v0->ifindex()).size(), 1u);
  EXPECT_EQ(inet::list_addresses(ctl, ns(ctl), AF_INET6, v1->ifindex()).size(), 1u);
  // Losing the carrier keeps it (Linux: only the routes are synced down).
  ASSERT_TRUE(ctl.close(*v1));
  EXPECT_EQ(inet::list_addresses(ctl, ns(ctl), AF_INET6, v0->ifindex()).size(), 1u);
}

// Linux: addrconf_notify(NETDEV_CHANGEMTU) — below 1280 the device loses IPv6 whole; back at
// 1280 it starts afresh: the link-local address again, the user's addresses gone.
TEST_F(AddrTest, AnMtuBelow1280TakesIpv6Away) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.open(*d));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::5", 64)));
  EXPECT_EQ(inet::list_addresses(ctl, ns(ctl), AF_INET6, d->ifindex()).size(), 2u);
  ASSERT_TRUE(ctl.set_mtu(*d, 1200));
  EXPECT_TRUE(inet::list_addresses(ctl, ns(ctl), AF_INET6, d->ifindex()).empty());
  EXPECT_TRUE(routes_of(ctl, ns(ctl), AF_INET6, d->ifindex()).empty());
  EXPECT_FALSE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::6", 64)));
  ASSERT_TRUE(ctl.set_mtu(*d, 1500));
  auto list = inet::list_addresses(ctl, ns(ctl), AF_INET6, d->ifindex());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_TRUE(list[0].local.is_v6_link_local());
}

TEST_F(AddrTest, NoLinkLocalWhenAddressGenerationIsOffOrIpv6Disabled) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  auto c = inet::inet6_conf(ctl, ns(ctl), d->ifindex());
  ASSERT_TRUE(c);
  c->addr_gen_mode = 1;  // IN6_ADDR_GEN_MODE_NONE
  ASSERT_TRUE(inet::set_inet6_conf(ctl, ns(ctl), d->ifindex(), *c));
  ASSERT_TRUE(ctl.open(*d));
  EXPECT_TRUE(inet::list_addresses(ctl, ns(ctl), AF_INET6, d->ifindex()).empty());

  // disable_ipv6 on "all": devices refuse IPv6 addresses; new ones inherit the default.
  inet::Inet6Conf all;
  all.disable_ipv6 = true;
  ASSERT_TRUE(inet::set_inet6_conf(ctl, ns(ctl), inet::kConfAll, all));
  auto r = inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EACCES);
  EXPECT_EQ(r.error().message, "IPv6 is disabled on this device");
  Device* d1 = up_dummy(ctl, "d1");
  EXPECT_TRUE(inet::list_addresses(ctl, ns(ctl), AF_INET6, d1->ifindex()).empty());
  // Enabling it on an up device makes the link-local address.
  auto c1 = inet::inet6_conf(ctl, ns(ctl), d1->ifindex());
  ASSERT_TRUE(c1 && c1->disable_ipv6);
  c1->disable_ipv6 = false;
  ASSERT_TRUE(inet::set_inet6_conf(ctl, ns(ctl), d1->ifindex(), *c1));
  EXPECT_EQ(inet::list_addresses(ctl, ns(ctl), AF_INET6, d1->ifindex()).size(), 1u);
}

}  // namespace
}  // namespace ifcore::test
