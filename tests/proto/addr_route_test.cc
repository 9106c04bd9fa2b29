// Routes that addresses make and that lookups find, as Linux 6.18 keeps them: the order of an
// IPv4 key's prefixes and of the tables in a dump, multicast addresses with autojoin, peer
// routes, the prefix routes addrconf finds by their key, a down loopback's prefix route,
// gateways reached through a local route, IPv6 route scopes and sources.
#include <linux/neighbour.h>

#include <gtest/gtest.h>

#include <chrono>

#include "ifcore/clock.h"
#include "proto/helpers.h"

namespace ifcore::test {
namespace {

using namespace std::chrono_literals;

class AddrRouteTest : public EngineTest {
 protected:
  void configure(EngineConfig& cfg) override { cfg.time = clock; }
  Device* up_dummy(Control& ctl, const std::string& name) {
    Device* d = dummy(ctl, name);
    EXPECT_TRUE(ctl.open(*d));
    return d;
  }
  // "dst/len metric protocol" of the IPv6 routes in main through `d`, in dump order.
  std::vector<std::string> main6(Control& ctl, const Device& d) {
    std::vector<std::string> out;
    for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET6, RT_TABLE_MAIN))
      if (r.oif == d.ifindex() && !r.dst.is_v6_link_local())
        out.push_back(
            fmt::format("{}/{} {} {}", r.dst.to_string(), r.dst_len, r.priority, r.protocol));
    return out;
  }
  Result<inet::RouteInfo> add_dev_route(Control& ctl, const Device& d, std::string_view dst,
                                        int len, std::uint32_t metric = 0, std::uint8_t proto = 0) {
    auto q = route_req(dst, len);
    q.oif = d.ifindex();
    if (metric) q.priority = metric;
    if (proto) q.protocol = proto;
    return inet::add_route(ctl, ns(ctl), q);
  }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
};

// Linux: a trie leaf's aliases are sorted by suffix length, so 10.0.0.0/24 lists before
// 10.0.0.0/16 and /8 (fib_insert_alias); other keys keep the trie's order.
TEST_F(AddrRouteTest, Ipv4PrefixesOfOneKeyListLongestFirst) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  for (auto [dst, len] : {std::pair{"10.0.0.0", 8},
                          {"10.0.0.0", 24},
                          {"10.0.0.0", 16},
                          {"10.1.0.0", 16},
                          {"9.0.0.0", 8}})
    ASSERT_TRUE(add_dev_route(ctl, *d, dst, len));
  std::vector<std::string> got;
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET, RT_TABLE_MAIN))
    got.push_back(fmt::format("{}/{}", r.dst.to_string(), r.dst_len));
  EXPECT_EQ(got, (std::vector<std::string>{"9.0.0.0/8", "10.0.0.0/24", "10.0.0.0/16", "10.0.0.0/8",
                                           "10.1.0.0/16"}));
}

// Linux: inet_dump_fib and inet6_dump_fib walk the table hash, bucket id & 255 first, the
// newest table of a bucket first; IPv6's main and local are older than any other table.
TEST_F(AddrRouteTest, TablesListInTheOrderOfTheirHash) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  for (int family : {AF_INET, AF_INET6}) {
    const bool v6 = family == AF_INET6;
    std::uint32_t tables[] = {4294967295u, 300, 100, 356, RT_TABLE_MAIN, 510};
    int n = 0;
    for (std::uint32_t t : tables) {
      auto q = route_req(v6 ? fmt::format("2001:db8:{}::", ++n) : fmt::format("10.{}.0.0", ++n),
                         v6 ? 64 : 16);
      q.oif = d->ifindex();
      q.table = t;
      ASSERT_TRUE(inet::add_route(ctl, ns(ctl), q));
    }
    std::vector<std::uint32_t> got;
    for (auto& r : inet::list_routes(ctl, ns(ctl), family))
      if (r.protocol == RTPROT_BOOT) got.push_back(r.table);
    // 300 & 255 = 44; 356 and 100 share bucket 100, 356 newer; IPv4's main is older than
    // 510 in bucket 254, IPv6's is older than every table; 4294967295 alone in 255.
    EXPECT_EQ(got, (std::vector<std::uint32_t>{300, 356, 100, 510, RT_TABLE_MAIN, 4294967295u}))
        << family;
  }
}

// Linux: inet6_addr_add joins the group of a multicast address given IFA_F_MCAUTOJOIN; the
// address takes its scope from the group's and makes the usual routes.
TEST_F(AddrRouteTest, MulticastAddressWithAutojoin) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  auto plain = inet::add_address(ctl, ns(ctl), addr_req(*d, "ff05::5", 128));
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().code, EADDRNOTAVAIL);
  auto a = inet::add_address(ctl, ns(ctl), addr_req(*d, "ff05::5", 128, IFA_F_MCAUTOJOIN));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->scope, RT_SCOPE_SITE);
  EXPECT_TRUE(a->flags & IFA_F_MCAUTOJOIN);
  auto link = inet::add_address(ctl, ns(ctl), addr_req(*d, "ff02::7", 128, IFA_F_MCAUTOJOIN));
  ASSERT_TRUE(link);
  EXPECT_EQ(link->scope, RT_SCOPE_LINK);
  EXPECT_EQ(main6(ctl, *d), (std::vector<std::string>{"ff02::7/128 256 2", "ff05::5/128 256 2"}));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "ff05::5", 128)));
  EXPECT_EQ(main6(ctl, *d), (std::vector<std::string>{"ff02::7/128 256 2"}));
}

// Linux: __ipv6_ifa_notify adds a route to the peer, /128, with the address's metric, and
// takes it away with the address; inet6_addr_modify gives a new peer a route of the
// address's prefix length (the old peer's goes).
TEST_F(AddrRouteTest, Ipv6PeerRoutes) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  auto p = addr_req(*d, "2001:db8:6::1", 128, IFA_F_NODAD);
  p.address = ip("2001:db8:7::1");
  p.rt_priority = 20;
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), p));
  EXPECT_EQ(main6(ctl, *d),
            (std::vector<std::string>{"2001:db8:6::1/128 20 2", "2001:db8:7::1/128 20 2"}));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), p));
  EXPECT_TRUE(main6(ctl, *d).empty());

  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64, IFA_F_NODAD)));
  auto change = addr_req(*d, "2001:db8::1", 64, IFA_F_NODAD);
  change.address = ip("2001:db9::2");
  change.replace = true;
  auto c = inet::add_address(ctl, ns(ctl), change);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->address, ip("2001:db9::2"));
  EXPECT_EQ(main6(ctl, *d),
            (std::vector<std::string>{"2001:db8::/64 256 2", "2001:db9::/64 256 2"}));
  change.address = ip("2001:dba::2");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), change));
  EXPECT_EQ(main6(ctl, *d),
            (std::vector<std::string>{"2001:db8::/64 256 2", "2001:dba::/64 256 2"}));
}

// Linux: a change that takes the prefix route away from a dynamic address leaves it (only a
// permanent one had it, for inet6_addr_modify); giving it back finds it there (EEXIST):
// one route. A permanent address's delete takes the first route of its prefix through the
// device without a gateway, whatever made it (cleanup_prefix_route).
TEST_F(AddrRouteTest, Ipv6PrefixRoutesFoundByTheirKey) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  auto dyn = addr_req(*d, "2001:db8:5::1", 64, IFA_F_NODAD);
  dyn.valid_lft = dyn.preferred_lft = 100;
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), dyn));
  dyn.replace = true;
  dyn.flags |= IFA_F_NOPREFIXROUTE;
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), dyn));
  EXPECT_EQ(main6(ctl, *d), (std::vector<std::string>{"2001:db8:5::/64 256 2"}));
  dyn.flags &= ~IFA_F_NOPREFIXROUTE;
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), dyn));
  EXPECT_EQ(main6(ctl, *d), (std::vector<std::string>{"2001:db8:5::/64 256 2"}));

  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8:1::1", 64, IFA_F_NODAD)));
  ASSERT_TRUE(add_dev_route(ctl, *d, "2001:db8:1::", 64, 1024));
  auto del = route_req("2001:db8:1::", 64);
  del.oif = d->ifindex();
  del.priority = 256;
  ASSERT_TRUE(inet::delete_route(ctl, ns(ctl), del));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "2001:db8:1::1", 64)));
  EXPECT_EQ(main6(ctl, *d), (std::vector<std::string>{"2001:db8:5::/64 256 2"}));
}

// Linux: rt6_fill_node reports every IPv6 route with universe scope, whatever was asked.
TEST_F(AddrRouteTest, Ipv6RoutesHaveNoScope) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  auto q = route_req("2001:db8:d::", 64);
  q.oif = d->ifindex();
  q.scope = RT_SCOPE_HOST;
  auto r = inet::add_route(ctl, ns(ctl), q);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->scope, RT_SCOPE_UNIVERSE);
  ASSERT_TRUE(inet::delete_route(ctl, ns(ctl), q)) << "a delete compares no scope either";
}

// Linux: rule 1 of RFC 6724 — a local destination is its own source.
TEST_F(AddrRouteTest, LocalIpv6DestinationIsItsOwnSource) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8:5::1", 128, IFA_F_NODAD)));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8:6::1", 64, IFA_F_NODAD)));
  for (auto dst : {"2001:db8:5::1", "2001:db8:6::1"}) {
    auto got = inet::get_route(ctl, ns(ctl), ip(dst));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->prefsrc, ip(dst));
  }
}

// Linux: fib_check_nh_v4_gw looks the gateway up in every table, local first, and takes a
// local route too: 127.0.0.2 is reached through lo (rt_set_nexthop then uses no gateway).
TEST_F(AddrRouteTest, GatewayReachedThroughALocalRoute) {
  auto ctl = engine->control();
  Device* lo = ns(ctl).loopback();
  ASSERT_TRUE(ctl.open(*lo));
  auto q = route_req("10.4.0.0", 16);
  q.gateway = ip("127.0.0.2");
  auto r = inet::add_route(ctl, ns(ctl), q);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->oif, lo->ifindex());
  // Its next hop has scope host: a lookup answers without the gateway, and without a source
  // (lo's 127.0.0.1 is narrower than the route's universe scope).
  auto got = inet::get_route(ctl, ns(ctl), ip("10.4.0.1"));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_TRUE(got->gateway.empty());
  EXPECT_TRUE(got->prefsrc.empty());
  EXPECT_EQ(got->oif, lo->ifindex());
}

// Linux: fib_sync_down_dev without force spares next hops of scope host: a loopback that
// goes down keeps `local 127.0.0.0/8` in table local (and its address's local route).
TEST_F(AddrRouteTest, DownLoopbackKeepsItsLocalPrefixRoute) {
  auto ctl = engine->control();
  Device* lo = ns(ctl).loopback();
  ASSERT_TRUE(ctl.open(*lo));
  ASSERT_TRUE(ctl.close(*lo));
  std::vector<std::string> got;
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET, RT_TABLE_LOCAL))
    got.push_back(fmt::format("{} {}/{}", r.type, r.dst.to_string(), r.dst_len));
  EXPECT_EQ(got, (std::vector<std::string>{"2 127.0.0.0/8", "2 127.0.0.1/32"}));
}

// Linux: addrconf_dad_begin — with accept_dad below 1 on "all" and on the device, DAD is
// skipped at once, before the device's readiness is looked at: an address on a down device
// is neither tentative nor optimistic. Either one at 1 keeps DAD (ifcore: till ready).
TEST_F(AddrRouteTest, AcceptDadZeroSkipsDadEvenOnADownDevice) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.change_flags(*d, d->flags() & ~IFF_NOARP));
  auto c = inet::inet6_conf(ctl, ns(ctl), d->ifindex());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->accept_dad, 1);
  c->accept_dad = 0;
  ASSERT_TRUE(inet::set_inet6_conf(ctl, ns(ctl), d->ifindex(), *c, inet::kCopyNone));
  auto a = inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64));
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->flags & IFA_F_TENTATIVE) << "\"all\" still has accept_dad 1";
  auto all = inet::inet6_conf(ctl, ns(ctl), inet::kConfAll);
  ASSERT_TRUE(all);
  all->accept_dad = 0;
  ASSERT_TRUE(inet::set_inet6_conf(ctl, ns(ctl), inet::kConfAll, *all, inet::kCopyNone));
  auto b = inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::2", 64, IFA_F_OPTIMISTIC));
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->flags & (IFA_F_TENTATIVE | IFA_F_OPTIMISTIC));
}

}  // namespace
}  // namespace ifcore::test
