// Tests of the route tables: user routes through a gateway or a device, errors, lookups,
// and the routes that go with their device (IPv4 at down, both families at unregister).
#include "proto/helpers.h"

#include <linux/in_route.h>
#include <linux/rtnetlink.h>

namespace ifcore::test {
namespace {

class RouteTest : public EngineTest {
 protected:
  Device* with_addrs(Control& ctl, std::string name, std::string_view v4, std::string_view v6) {
    Device* d = dummy(ctl, std::move(name));
    EXPECT_TRUE(ctl.open(*d));
    EXPECT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, v4, 24)));
    EXPECT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, v6, 64)));
    return d;
  }
};

TEST_F(RouteTest, UserRoutesThroughAGatewayOrADevice) {
  auto ctl = engine->control();
  Device* d = with_addrs(ctl, "d0", "10.0.0.1", "2001:db8::1");
  Recorder rec;
  inet::add_listener(ctl, rec);
  auto via = route_req("20.0.0.0", 24);
  via.gateway = ip("10.0.0.254");
  via.priority = 10;
  auto r = inet::add_route(ctl, ns(ctl), via);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->oif, d->ifindex());  // resolved through the connected route
  EXPECT_EQ(r->scope, RT_SCOPE_UNIVERSE);
  EXPECT_EQ(r->protocol, RTPROT_BOOT);
  EXPECT_EQ(r->priority, 10u);
  auto dev_only = route_req("30.0.0.0", 8);
  dev_only.oif = d->ifindex();
  auto r2 = inet::add_route(ctl, ns(ctl), dev_only);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->scope, RT_SCOPE_LINK);
  auto v6 = route_req("2001:db9::", 64);
  v6.gateway = ip("2001:db8::fe");
  auto r3 = inet::add_route(ctl, ns(ctl), v6);
  ASSERT_TRUE(r3) << r3.error().message;
  EXPECT_EQ(r3->priority, 1024u);  // Linux: IP6_RT_PRIO_USER
  EXPECT_EQ(r3->oif, d->ifindex());
  EXPECT_EQ(rec.events,
            (std::vector<std::string>{"+route 20.0.0.0/24 t254", "+route 30.0.0.0/8 t254",
                                      "+route 2001:db9::/64 t254"}));
  // Duplicates, then deletion.
  auto dup = inet::add_route(ctl, ns(ctl), via);
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, EEXIST);
  EXPECT_EQ(inet::add_route(ctl, ns(ctl), v6).error().code, EEXIST);
  ASSERT_TRUE(inet::delete_route(ctl, ns(ctl), route_req("20.0.0.0", 24)));
  auto gone = inet::delete_route(ctl, ns(ctl), route_req("20.0.0.0", 24));
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ESRCH);
  EXPECT_EQ(rec.events.back(), "-route 20.0.0.0/24 t254");
  // Replace keeps one route.
  auto rep = route_req("30.0.0.0", 8);
  rep.oif = d->ifindex();
  rep.replace = true;
  rep.excl = false;
  rep.protocol = RTPROT_STATIC;
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), rep));
  int n = 0;
  for (auto& x : inet::list_routes(ctl, ns(ctl), AF_INET, RT_TABLE_MAIN))
    if (x.dst == ip("30.0.0.0")) {
      ++n;
      EXPECT_EQ(x.protocol, RTPROT_STATIC);
    }
  EXPECT_EQ(n, 1);
  inet::remove_listener(ctl, rec);
}

// Errors as Linux 6.18 answers them (errno and extack text, checked with `ip` against the
// kernel in a fresh namespace).
TEST_F(RouteTest, ErrorsAsLinuxAnswersThem) {
  auto ctl = engine->control();
  Device* up = with_addrs(ctl, "d0", "10.0.0.1", "2001:db8::1");
  Device* down = dummy(ctl, "d1");
  auto fails = [&](const inet::RouteRequest& q, int code, std::string_view text) {
    auto r = inet::add_route(ctl, ns(ctl), q);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, code);
    EXPECT_EQ(r.error().message, text);
  };
  // Linux: fib_create_info — a reject type takes no device or gateway; nat has no scope
  // a route may have.
  auto bh = route_req("10.4.0.0", 16);
  bh.type = RTN_BLACKHOLE;
  bh.oif = up->ifindex();
  fails(bh, EINVAL, "Gateway, device and multipath can not be specified for this route type");
  auto unr = route_req("10.4.0.0", 16);
  unr.type = RTN_UNREACHABLE;
  unr.gateway = ip("10.0.0.254");
  fails(unr, EINVAL, "Gateway, device and multipath can not be specified for this route type");
  auto nat = route_req("10.9.0.0", 16);
  nat.type = RTN_NAT;
  nat.scope = RT_SCOPE_HOST;
  nat.gateway = ip("10.0.0.2");
  fails(nat, EINVAL, "Invalid scope");
  auto host = route_req("10.6.0.0", 16);
  host.scope = RT_SCOPE_HOST;
  host.gateway = ip("10.0.0.254");
  fails(host, EINVAL, "Route with host scope can not have a gateway");
  // Linux: fib_check_nh_v4_gw looks the gateway up with the route's scope + 1: a route of
  // scope link finds no connected route (scope link) to it.
  auto link = route_req("10.6.0.0", 16);
  link.scope = RT_SCOPE_LINK;
  link.gateway = ip("10.0.0.254");
  link.oif = up->ifindex();
  fails(link, ENETUNREACH, "Nexthop has invalid gateway");
  // Linux: fib_check_nh_v4_gw — an onlink next hop needs a route scope below link.
  auto onlink = route_req("10.6.0.0", 16);
  onlink.scope = RT_SCOPE_LINK;
  onlink.gateway = ip("10.0.0.9");
  onlink.oif = up->ifindex();
  onlink.flags = RTNH_F_ONLINK;
  fails(onlink, EINVAL, "Nexthop has invalid scope");
  // Linux: rtm_to_fib_config / rtm_to_fib6_config on rtm_tos.
  auto ecn = route_req("10.3.0.0", 16);
  ecn.oif = up->ifindex();
  ecn.tos = 3;
  fails(ecn, EINVAL, "Invalid dsfield (tos): ECN bits must be 0");
  auto tos6 = route_req("2001:db8:5::", 64);
  tos6.oif = up->ifindex();
  tos6.tos = 4;
  fails(tos6, EINVAL, "Invalid dsfield (tos): option not available for IPv6");
  // Linux: fib_create_info checks no device of a host-scope route: `ip route add local
  // A dev DOWN` is taken.
  auto local = route_req("10.6.0.1", 32);
  local.type = RTN_LOCAL;
  local.scope = RT_SCOPE_HOST;
  local.oif = down->ifindex();
  EXPECT_TRUE(inet::add_route(ctl, ns(ctl), local));
  // Linux: fib6_add_rt2node — with NLM_F_EXCL any route of the same metric is a clash;
  // without it (append) another next hop is added.
  auto first = route_req("2001:db8:2::", 64);
  first.oif = up->ifindex();
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), first));
  auto second = first;
  second.gateway = ip("fe80::1");
  fails(second, EEXIST, "");
  second.excl = false;
  second.append = true;
  EXPECT_TRUE(inet::add_route(ctl, ns(ctl), second));
  // Linux: fib6_nh_init — an IPv6 route on a device that is down.
  auto v6 = route_req("2001:db8:1::", 64);
  v6.oif = down->ifindex();
  fails(v6, ENETDOWN, "Nexthop device is not up");
  // Linux: fib6_add_1 — `ip -6 route change` without a match explains itself; IPv4's
  // fib_table_insert does not.
  auto ch6 = route_req("2001:db8:8::", 64);
  ch6.oif = up->ifindex();
  ch6.create = ch6.excl = false;
  ch6.replace = true;
  fails(ch6, ENOENT, "Can not replace route - no match found");
  auto ch4 = route_req("10.3.0.0", 16);
  ch4.oif = up->ifindex();
  ch4.create = ch4.excl = false;
  ch4.replace = true;
  fails(ch4, ENOENT, "");
  // IPv6 adds a route without NLM_F_CREATE (with a warning in the kernel's log).
  auto nocreate = route_req("2001:db8:9::", 64);
  nocreate.oif = up->ifindex();
  nocreate.create = nocreate.excl = false;
  EXPECT_TRUE(inet::add_route(ctl, ns(ctl), nocreate));
  // Linux: inet_rtm_delroute / ip6_route_del — a table never made; IPv6's main and local
  // always exist.
  auto del = route_req("10.2.0.0", 16);
  del.table = 99;
  auto d99 = inet::delete_route(ctl, ns(ctl), del);
  ASSERT_FALSE(d99);
  EXPECT_EQ(d99.error().code, ESRCH);
  EXPECT_EQ(d99.error().message, "FIB table does not exist");
  // A refused add made the table all the same (inet_rtm_newroute's fib_new_table).
  auto refused = route_req("10.2.0.0", 16);
  refused.table = 99;
  refused.gateway = ip("203.0.113.1");
  ASSERT_FALSE(inet::add_route(ctl, ns(ctl), refused));
  auto again = inet::delete_route(ctl, ns(ctl), del);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ESRCH);
  EXPECT_EQ(again.error().message, "");
  auto del6 = route_req("2001:db8:77::", 64);
  auto d6 = inet::delete_route(ctl, ns(ctl), del6);
  ASSERT_FALSE(d6);
  EXPECT_EQ(d6.error().code, ESRCH);
  EXPECT_EQ(d6.error().message, "");
  del6.table = 99;
  EXPECT_EQ(inet::delete_route(ctl, ns(ctl), del6).error().message, "FIB table does not exist");
}

// Linux 6.18: lo's ::1 has its host route (table local) and no prefix route in main
// (init_loopback's add_addr does not call addrconf_prefix_route).
TEST_F(RouteTest, LoopbackIpv6HasNoPrefixRouteInMain) {
  auto ctl = engine->control();
  Device* lo = ns(ctl).loopback();
  ASSERT_TRUE(lo);
  ASSERT_TRUE(ctl.open(*lo));
  bool local = false;
  for (const auto& r : inet::list_routes(ctl, ns(ctl), AF_INET6)) {
    if (r.dst.to_string() != "::1") continue;
    EXPECT_EQ(r.table, RT_TABLE_LOCAL) << "::1 in table " << r.table;
    local = local || r.type == RTN_LOCAL;
  }
  EXPECT_TRUE(local);
}

// Linux (ip_route_output_key_hash_rcu): `ip route get 0.0.0.0` is local through lo, from
// 127.0.0.1, found without a lookup (raw reply checked against the kernel).
TEST_F(RouteTest, RouteGetOfTheUnspecifiedAddressIsLocalThroughLo) {
  auto ctl = engine->control();
  with_addrs(ctl, "d0", "10.0.0.1", "2001:db8::1");
  auto r = inet::get_route(ctl, ns(ctl), ip("0.0.0.0"), 0);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->type, RTN_LOCAL);
  EXPECT_EQ(r->table, RT_TABLE_MAIN);
  EXPECT_EQ(r->oif, ns(ctl).loopback()->ifindex());
  EXPECT_EQ(r->prefsrc, ip("127.0.0.1"));
  EXPECT_EQ(r->dst, ip("0.0.0.0"));
  EXPECT_EQ(r->flags, RTM_F_CLONED | RTCF_LOCAL);
}

TEST_F(RouteTest, GatewaysWithoutARouteAreRefused) {
  auto ctl = engine->control();
  Device* d = with_addrs(ctl, "d0", "10.0.0.1", "2001:db8::1");
  auto v4 = route_req("20.0.0.0", 24);
  v4.gateway = ip("30.0.0.1");
  auto r = inet::add_route(ctl, ns(ctl), v4);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ENETUNREACH);
  EXPECT_EQ(r.error().message, "Nexthop has invalid gateway");
  auto v6 = route_req("2001:dbb::", 64);
  v6.gateway = ip("2001:dd::1");
  EXPECT_EQ(inet::add_route(ctl, ns(ctl), v6).error().code, EHOSTUNREACH);
  auto ll = route_req("2001:dbc::", 64);
  ll.gateway = ip("fe80::1");
  auto r3 = inet::add_route(ctl, ns(ctl), ll);
  ASSERT_FALSE(r3);
  EXPECT_EQ(r3.error().message, "Egress device not specified");
  ll.oif = d->ifindex();
  EXPECT_TRUE(inet::add_route(ctl, ns(ctl), ll));
  auto bad = route_req("10.1.0.0", 16);
  bad.oif = 4242;
  EXPECT_EQ(inet::add_route(ctl, ns(ctl), bad).error().code, ENODEV);
  // A prefix with host bits set (Linux: "Invalid prefix for given prefix length").
  auto host_bits = route_req("10.1.0.1", 16);
  host_bits.oif = d->ifindex();
  EXPECT_EQ(inet::add_route(ctl, ns(ctl), host_bits).error().code, EINVAL);
}

TEST_F(RouteTest, RouteGetPicksTheMostSpecificRouteAndASource) {
  auto ctl = engine->control();
  Device* d = with_addrs(ctl, "d0", "10.0.0.1", "2001:db8::1");
  auto r = inet::get_route(ctl, ns(ctl), ip("10.0.0.5"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->oif, d->ifindex());
  EXPECT_EQ(r->prefsrc, ip("10.0.0.1"));
  EXPECT_EQ(r->dst_len, 32);
  EXPECT_EQ(r->flags, unsigned{RTM_F_CLONED});  // Linux rt_fill_info: no next-hop flags
  EXPECT_EQ(r->table, unsigned{RT_TABLE_MAIN});
  EXPECT_EQ(r->scope, RT_SCOPE_UNIVERSE);
  auto local = inet::get_route(ctl, ns(ctl), ip("10.0.0.1"));
  ASSERT_TRUE(local);
  EXPECT_EQ(local->type, RTN_LOCAL);
  // Linux: delivered through lo, RTCF_LOCAL (`ip route get` prints `dev lo` and
  // `cache <local>`), in the main table while no rule is added.
  EXPECT_EQ(local->oif, ns(ctl).loopback()->ifindex());
  EXPECT_EQ(local->flags, unsigned{RTM_F_CLONED} | RTCF_LOCAL);
  EXPECT_EQ(local->table, unsigned{RT_TABLE_MAIN});
  auto none = inet::get_route(ctl, ns(ctl), ip("1.1.1.1"));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ENETUNREACH);
  auto r6 = inet::get_route(ctl, ns(ctl), ip("2001:db8::77"));
  ASSERT_TRUE(r6);
  EXPECT_EQ(r6->prefsrc, ip("2001:db8::1"));
  EXPECT_EQ(r6->flags, 0u);  // Linux rt6_fill_node: the route's protocol and metric, no flags
  EXPECT_EQ(r6->protocol, RTPROT_KERNEL);
  EXPECT_EQ(inet::get_route(ctl, ns(ctl), ip("2001:ffff::1")).error().code, ENETUNREACH);
}

TEST_F(RouteTest, RoutesGoWithTheirDevice) {
  auto ctl = engine->control();
  Device* d = with_addrs(ctl, "d0", "10.0.0.1", "2001:db8::1");
  Device* keep = with_addrs(ctl, "d1", "10.1.0.1", "2001:db1::1");
  auto v4 = route_req("20.0.0.0", 24);
  v4.oif = d->ifindex();
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), v4));
  auto v6 = route_req("2001:db9::", 64);
  v6.oif = d->ifindex();
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), v6));
  // Down: both go (Linux: fib_disable_ip; fib6_ifdown at NETDEV_DOWN), the IPv6 one with
  // its RTM_DELROUTE, which carries no linkdown (the device had its carrier until then).
  Recorder rec;
  inet::add_listener(ctl, rec);
  ASSERT_TRUE(ctl.close(*d));
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET)) EXPECT_FALSE(r.dst == ip("20.0.0.0"));
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET6)) EXPECT_FALSE(r.dst == ip("2001:db9::"));
  EXPECT_NE(std::find(rec.events.begin(), rec.events.end(), "-route 2001:db9::/64 t254"),
            rec.events.end());
  // Unregister: everything else through the device goes.
  rec.events.clear();
  ASSERT_TRUE(ctl.delete_link(*d));
  inet::remove_listener(ctl, rec);
  EXPECT_NE(std::find(rec.events.begin(), rec.events.end(), "-addr 10.0.0.1/24"), rec.events.end());
  for (auto& r : inet::list_routes(ctl, ns(ctl))) EXPECT_EQ(r.oif, keep->ifindex());
  EXPECT_FALSE(inet::list_routes(ctl, ns(ctl)).empty());
  EXPECT_EQ(inet::dst_stats(ctl).garbage, 0u);
}

TEST_F(RouteTest, DeletingTheLastIpv4AddressFlushesTheDevicesRoutes) {
  auto ctl = engine->control();
  Device* d = with_addrs(ctl, "d0", "10.0.0.1", "2001:db8::1");
  auto v4 = route_req("20.0.0.0", 24);
  v4.gateway = ip("10.0.0.254");
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), v4));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  EXPECT_TRUE(routes_of(ctl, ns(ctl), AF_INET, d->ifindex()).empty());
}

// Linux (fib6_add_rt2node): routes with one key are listed by metric; a route with a
// gateway joins the one of its metric as its last sibling (one multipath route).
TEST_F(RouteTest, RoutesWithOneKeyAreListedByMetricThenByArrival) {
  auto ctl = engine->control();
  Device* d = with_addrs(ctl, "d0", "10.0.0.1", "2001:db8::1");
  struct Add {
    std::uint32_t metric;
    const char* gateway;
  };
  for (Add a : {Add{300, "2001:db8::a"}, Add{100, "2001:db8::b"}, Add{200, "2001:db8::c"},
                Add{100, "2001:db8::d"}, Add{300, "2001:db8::e"}, Add{50, "2001:db8::f"}}) {
    auto r = route_req("2001:db9::", 64);
    r.gateway = ip(a.gateway);
    r.priority = a.metric;
    r.excl = false;  // Linux: with NLM_F_EXCL a second route of one metric is EEXIST
    ASSERT_TRUE(inet::add_route(ctl, ns(ctl), r)) << a.metric << " " << a.gateway;
  }
  auto order = [&] {
    std::vector<std::string> got;
    for (const inet::RouteInfo& r : inet::list_routes(ctl, ns(ctl), AF_INET6))
      if (r.dst == ip("2001:db9::"))
        got.push_back(fmt::format("{} {}", r.priority, gateways_of(r)));
    return got;
  };
  EXPECT_EQ(order(), (std::vector<std::string>{"50 2001:db8::f", "100 2001:db8::b,2001:db8::d",
                                               "200 2001:db8::c", "300 2001:db8::a,2001:db8::e"}));
  // Removing one from the middle, the first and the last keeps the others in their order.
  for (Add a : {Add{100, "2001:db8::b"}, Add{50, "2001:db8::f"}, Add{300, "2001:db8::e"}}) {
    auto r = route_req("2001:db9::", 64);
    r.gateway = ip(a.gateway);
    r.priority = a.metric;
    ASSERT_TRUE(inet::delete_route(ctl, ns(ctl), r)) << a.metric << " " << a.gateway;
  }
  EXPECT_EQ(order(),
            (std::vector<std::string>{"100 2001:db8::d", "200 2001:db8::c", "300 2001:db8::a"}));
  (void)d;
}

}  // namespace
}  // namespace ifcore::test

namespace ifcore::test {
namespace {

// Multipath routes: each hop checked and holding its device; a hop on a down device is
// dead while another is up; IPv4 drops the route when a hop's device is unregistered,
// IPv6 only that hop.
class MultipathTest : public EngineTest {
 protected:
  Device* up(Control& ctl, const std::string& name, std::string_view addr, int plen) {
    Device* d = dummy(ctl, name);
    EXPECT_TRUE(ctl.open(*d));
    if (!addr.empty()) {
      EXPECT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, addr, plen)));
    }
    return d;
  }
  std::optional<inet::RouteInfo> find(Control& ctl, std::string_view dst, int len) {
    for (auto& r : inet::list_routes(ctl, ns(ctl)))
      if (r.dst == ip(dst) && r.dst_len == len) return r;
    return std::nullopt;
  }
};

TEST_F(MultipathTest, HopsAreCheckedHeldAndReported) {
  auto ctl = engine->control();
  Device* a = up(ctl, "a", "10.1.0.1", 24);
  Device* b = up(ctl, "b", "10.2.0.1", 24);
  const auto dst_before = inet::dst_stats(ctl).live;
  inet::RouteRequest r = route_req("10.9.0.0", 16);
  r.nexthops = {{ip("10.1.0.9"), a->ifindex(), 1, 0}, {ip("10.2.0.9"), b->ifindex(), 3, 0}};
  auto made = inet::add_route(ctl, ns(ctl), r);
  ASSERT_TRUE(made) << made.error().message;
  ASSERT_EQ(made->nexthops.size(), 2u);
  EXPECT_EQ(made->nexthops[1].weight, 3);
  EXPECT_EQ(inet::dst_stats(ctl).live, dst_before + 2) << "each hop holds its device";
  // A hop whose gateway is not reachable refuses the whole route.
  inet::RouteRequest bad = route_req("10.8.0.0", 16);
  bad.nexthops = {{ip("10.1.0.9"), a->ifindex(), 1, 0}, {ip("10.7.0.9"), 0, 1, 0}};
  auto refused = inet::add_route(ctl, ns(ctl), bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "Nexthop has invalid gateway");
  EXPECT_FALSE(find(ctl, "10.8.0.0", 16));
  // One hop is an ordinary route.
  inet::RouteRequest one = route_req("10.8.0.0", 16);
  one.nexthops = {{ip("10.1.0.9"), 0, 1, 0}};
  auto single = inet::add_route(ctl, ns(ctl), one);
  ASSERT_TRUE(single);
  EXPECT_TRUE(single->nexthops.empty());
  EXPECT_EQ(single->gateway, ip("10.1.0.9"));
  // A hop on a down device is dead; the route stays while the other hop is up.
  ASSERT_TRUE(ctl.close(*b));
  auto r2 = find(ctl, "10.9.0.0", 16);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->nexthops[1].flags, std::uint32_t{RTNH_F_DEAD | RTNH_F_LINKDOWN});
  EXPECT_EQ(r2->nexthops[0].flags, 0u);
  auto got = inet::get_route(ctl, ns(ctl), ip("10.9.1.1"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->oif, a->ifindex()) << "the live hop carries the flow";
  ASSERT_TRUE(ctl.open(*b));
  // IPv4: unregistering a hop's device takes the route, and its references.
  ASSERT_TRUE(ctl.delete_link(*b));
  EXPECT_FALSE(find(ctl, "10.9.0.0", 16));
}

TEST_F(MultipathTest, Ipv6LosesOnlyTheHopOfAnUnregisteredDevice) {
  auto ctl = engine->control();
  Device* a = up(ctl, "a", "", 0);
  Device* b = up(ctl, "b", "", 0);
  inet::RouteRequest r = route_req("2001:db8:8::", 64);
  r.nexthops = {{ip("fe80::1"), a->ifindex(), 1, 0}, {ip("fe80::2"), b->ifindex(), 1, 0}};
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), r));
  ASSERT_TRUE(ctl.delete_link(*a));  // the first hop's device
  auto left = find(ctl, "2001:db8:8::", 64);
  ASSERT_TRUE(left);
  EXPECT_TRUE(left->nexthops.empty()) << "one hop left: an ordinary route";
  EXPECT_EQ(left->gateway, ip("fe80::2"));
  EXPECT_EQ(left->oif, b->ifindex());
  ASSERT_TRUE(ctl.delete_link(*b));
  EXPECT_FALSE(find(ctl, "2001:db8:8::", 64));
}

// A route's preferred source must be an address of the namespace, of either family: one
// held by two devices stays valid until both have let it go; one moved with its device to
// another namespace is valid there, not here.
TEST_F(RouteTest, APreferredSourceMustBeAnAddressOfTheNamespace) {
  auto ctl = engine->control();
  Device* a = with_addrs(ctl, "a0", "10.0.0.1", "2001:db8::1");
  Device* b = with_addrs(ctl, "b0", "10.0.1.1", "2001:db8:1::1");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*b, "10.0.0.1", 24)));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*b, "2001:db8::1", 64)));
  auto with_src = [&](std::string_view dst, std::string_view src) {
    auto r = route_req(dst, dst.find(':') == std::string_view::npos ? 24 : 64);
    r.oif = a->ifindex();
    r.prefsrc = ip(src);
    return r;
  };
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), with_src("20.0.0.0", "10.0.0.1")));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), with_src("2001:db9::", "2001:db8::1")));
  // a0 lets go: b0 still has both.
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*a, "10.0.0.1", 24)));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*a, "2001:db8::1", 64)));
  EXPECT_TRUE(inet::add_route(ctl, ns(ctl), with_src("21.0.0.0", "10.0.0.1")));
  EXPECT_TRUE(inet::add_route(ctl, ns(ctl), with_src("2001:dba::", "2001:db8::1")));
  // b0 goes to another namespace: its addresses go from this one.
  auto other = ctl.create_namespace("other");
  ASSERT_TRUE(other);
  ASSERT_TRUE(ctl.move_to_namespace(*b, **other));
  auto v4 = inet::add_route(ctl, ns(ctl), with_src("22.0.0.0", "10.0.0.1"));
  ASSERT_FALSE(v4);
  EXPECT_EQ(v4.error().code, EINVAL);
  EXPECT_EQ(v4.error().message, "Invalid prefsrc address");
  auto v6 = inet::add_route(ctl, ns(ctl), with_src("2001:dbb::", "2001:db8::1"));
  ASSERT_FALSE(v6);
  EXPECT_EQ(v6.error().message, "Invalid source address");
  // The moved device came up without addresses there (Linux drops them on a move).
  auto there = with_src("22.0.0.0", "10.0.1.1");
  there.oif = b->ifindex();
  EXPECT_FALSE(inet::add_route(ctl, **other, there));
}

}  // namespace
}  // namespace ifcore::test
