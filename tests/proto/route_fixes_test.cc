// Route behaviours the kernel's fib selftests (fib_tests.sh, fib_nexthops.sh,
// fib-onlink-tests.sh) showed, as Linux 6.18 has them: which next hops a delete names
// (fib_nh_match, ip6_route_multipath_del), the routes whose preferred source goes
// (fib_del_ifaddr, rt6_remove_prefsrc), an IPv6 gateway found in the route's own table
// (ip6_route_check_nh) and onlink next hops (fib_check_nh_v4_gw, fib6_nh_init).
#include <linux/neighbour.h>
#include <linux/veth.h>

#include <gtest/gtest.h>

#include "ifcore/nexthop.h"
#include "proto/helpers.h"

namespace ifcore::test {
namespace {

// Recorder, and neighbours as "+nbr 10.0.0.255 0x20" / "-nbr ...".
struct FullRecorder : Recorder {
  void on_neigh(Namespace&, inet::ProtoEvent ev, const inet::NeighInfo& n) override {
    events.push_back(fmt::format("{}nbr {} {:#x}", ev == inet::ProtoEvent::New ? '+' : '-',
                                 n.dst.to_string(), n.state));
  }
};

class RouteFixesTest : public ListeningTest<FullRecorder> {
 protected:
  Device* up_dummy(Control& ctl, const std::string& name) {
    Device* d = dummy(ctl, name);
    EXPECT_TRUE(ctl.open(*d));
    return d;
  }
  Result<void> add_addr(Control& ctl, Device& d, std::string_view a, int len) {
    auto r = inet::add_address(ctl, ns(ctl), addr_req(d, a, len, IFA_F_NODAD));
    if (!r) return fail(std::move(r).error());
    return ok();
  }
  static inet::NextHop hop(std::string_view gw, const Device& d) {
    return inet::NextHop{ip(gw), d.ifindex()};
  }
  Result<inet::RouteInfo> add_mp(Control& ctl, std::string_view dst, int len,
                                 std::vector<inet::NextHop> hops, std::uint32_t flags = 0) {
    auto q = route_req(dst, len);
    q.nexthops = std::move(hops);
    q.flags = flags;
    return inet::add_route(ctl, ns(ctl), q);
  }
  Result<void> del_mp(Control& ctl, std::string_view dst, int len,
                      std::vector<inet::NextHop> hops) {
    auto q = route_req(dst, len);
    q.nexthops = std::move(hops);
    return inet::delete_route(ctl, ns(ctl), q);
  }
  // The routes of `family` at `dst`/`len` in main, each as its gateways.
  std::vector<std::string> at(Control& ctl, int family, std::string_view dst, int len) {
    std::vector<std::string> out;
    for (auto& r : inet::list_routes(ctl, ns(ctl), family, RT_TABLE_MAIN))
      if (r.dst == ip(dst) && r.dst_len == len) out.push_back(gateways_of(r));
    return out;
  }
  // The preferred source of the route at `dst`/`len` of `table` ("-": none, "gone": no route).
  std::string prefsrc_of(Control& ctl, std::string_view dst, int len,
                         std::uint32_t table = RT_TABLE_MAIN) {
    for (auto& r : inet::list_routes(ctl, ns(ctl), ip(dst).family(), table))
      if (r.dst == ip(dst) && r.dst_len == len)
        return r.prefsrc.empty() ? "-" : r.prefsrc.to_string();
    return "gone";
  }
};

// Linux: fib_nh_match — a route through a nexthop object is deleted only by a request that
// names no device, gateway or hop list; IPv6's ip6_route_del deletes it whatever they say.
TEST_F(RouteFixesTest, DeleteOfANexthopObjectRouteNamesNoNextHop) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  ASSERT_TRUE(add_addr(ctl, *d, "172.16.1.1", 24));
  ASSERT_TRUE(add_addr(ctl, *d, "2001:db8:91::1", 64));
  inet::NexthopRequest n4;
  n4.id = 22;
  n4.family = AF_INET;
  n4.gateway = ip("172.16.1.6");
  n4.oif = d->ifindex();
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), n4));
  inet::NexthopRequest n6 = n4;
  n6.id = 61;
  n6.family = AF_INET6;
  n6.gateway = ip("2001:db8:91::2");
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), n6));
  for (auto [dst, len, id] : {std::tuple{"172.16.102.0", 24, 22u}, {"2001:db8:101::", 64, 61u}}) {
    auto q = route_req(dst, len);
    q.nhid = id;
    ASSERT_TRUE(inet::add_route(ctl, ns(ctl), q));
  }
  auto by_dev = route_req("172.16.102.0", 24);
  by_dev.oif = d->ifindex();
  auto r = inet::delete_route(ctl, ns(ctl), by_dev);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ESRCH);
  auto by_gw = route_req("172.16.102.0", 24);
  by_gw.gateway = ip("172.16.1.6");
  EXPECT_EQ(inet::delete_route(ctl, ns(ctl), by_gw).error().code, ESRCH);
  EXPECT_EQ(del_mp(ctl, "172.16.102.0", 24, {hop("172.16.1.6", *d)}).error().code, ESRCH);
  EXPECT_EQ(at(ctl, AF_INET, "172.16.102.0", 24).size(), 1u);
  EXPECT_TRUE(inet::delete_route(ctl, ns(ctl), route_req("172.16.102.0", 24)));
  auto v6 = route_req("2001:db8:101::", 64);
  v6.oif = d->ifindex();
  EXPECT_TRUE(inet::delete_route(ctl, ns(ctl), v6));
  EXPECT_TRUE(at(ctl, AF_INET6, "2001:db8:101::", 64).empty());
}

// Linux: fib_nh_match compares an RTA_MULTIPATH list with the route's hops one by one.
TEST_F(RouteFixesTest, Ipv4DeleteComparesTheHopList) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  ASSERT_TRUE(add_addr(ctl, *d, "172.16.1.1", 24));
  ASSERT_TRUE(add_mp(ctl, "172.16.103.0", 24, {hop("172.16.1.2", *d), hop("172.16.1.3", *d)}));
  EXPECT_EQ(
      del_mp(ctl, "172.16.103.0", 24, {hop("172.16.1.7", *d), hop("172.16.1.8", *d)}).error().code,
      ESRCH);
  // Fewer hops than the route has: no match either.
  EXPECT_EQ(del_mp(ctl, "172.16.103.0", 24, {hop("172.16.1.2", *d)}).error().code, ESRCH);
  EXPECT_EQ(at(ctl, AF_INET, "172.16.103.0", 24).size(), 1u);
  EXPECT_TRUE(del_mp(ctl, "172.16.103.0", 24, {hop("172.16.1.2", *d), hop("172.16.1.3", *d)}));
  // A plain route is one hop.
  auto plain = route_req("172.16.104.0", 24);
  plain.gateway = ip("172.16.1.2");
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), plain));
  EXPECT_EQ(del_mp(ctl, "172.16.104.0", 24, {hop("172.16.1.7", *d)}).error().code, ESRCH);
  EXPECT_TRUE(del_mp(ctl, "172.16.104.0", 24, {hop("172.16.1.2", *d)}));
}

// Linux: ip6_route_multipath_del deletes each listed hop on its own and answers the last
// failure: the hops it found are gone, each announced.
TEST_F(RouteFixesTest, Ipv6MultipathDeleteTakesEachHopAlone) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  ASSERT_TRUE(add_addr(ctl, *d, "2001:db8:91::1", 64));
  ASSERT_TRUE(
      add_mp(ctl, "2001:db8:103::", 64,
             {hop("2001:db8:91::2", *d), hop("2001:db8:91::3", *d), hop("2001:db8:91::4", *d)}));
  listen(ctl);
  auto none =
      del_mp(ctl, "2001:db8:103::", 64, {hop("2001:db8:91::7", *d), hop("2001:db8:91::8", *d)});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ESRCH);
  EXPECT_EQ(at(ctl, AF_INET6, "2001:db8:103::", 64),
            (std::vector<std::string>{"2001:db8:91::2,2001:db8:91::3,2001:db8:91::4"}));
  auto some =
      del_mp(ctl, "2001:db8:103::", 64, {hop("2001:db8:91::2", *d), hop("2001:db8:91::8", *d)});
  ASSERT_FALSE(some);
  EXPECT_EQ(some.error().code, ESRCH);
  EXPECT_EQ(at(ctl, AF_INET6, "2001:db8:103::", 64),
            (std::vector<std::string>{"2001:db8:91::3,2001:db8:91::4"}));
  EXPECT_TRUE(del_mp(ctl, "2001:db8:103::", 64, {hop("2001:db8:91::3", *d)}));
  EXPECT_EQ(at(ctl, AF_INET6, "2001:db8:103::", 64), (std::vector<std::string>{"2001:db8:91::4"}));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"-route 2001:db8:103::/64 t254",
                                                  "-route 2001:db8:103::/64 t254"}));
}

// Linux: fib_del_ifaddr — once an address is no local address of its table, the routes of
// main with it as their preferred source go, announced; other tables keep theirs.
TEST_F(RouteFixesTest, Ipv4RoutesGoWithTheirPreferredSource) {
  auto ctl = engine->control();
  Device* d1 = up_dummy(ctl, "d1");
  Device* d2 = up_dummy(ctl, "d2");
  ASSERT_TRUE(add_addr(ctl, *d1, "172.16.104.1", 24));
  ASSERT_TRUE(add_addr(ctl, *d1, "172.16.104.11", 24));
  ASSERT_TRUE(add_addr(ctl, *d2, "172.16.200.11", 24));
  auto via = route_req("172.16.105.0", 24);
  via.gateway = ip("172.16.104.2");
  via.prefsrc = ip("172.16.104.11");
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), via));
  auto dev = route_req("172.16.106.0", 24);
  dev.oif = d2->ifindex();
  dev.prefsrc = ip("172.16.104.11");
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), dev));
  auto other = dev;
  other.dst = ip("172.16.107.0");
  other.table = 7;
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), other));
  auto keeps = dev;
  keeps.dst = ip("172.16.108.0");
  keeps.prefsrc = ip("172.16.104.1");
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), keeps));
  listen(ctl);
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d1, "172.16.104.11", 24)));
  EXPECT_EQ(prefsrc_of(ctl, "172.16.105.0", 24), "gone");
  EXPECT_EQ(prefsrc_of(ctl, "172.16.106.0", 24), "gone");
  EXPECT_EQ(prefsrc_of(ctl, "172.16.107.0", 24, 7), "172.16.104.11");
  EXPECT_EQ(prefsrc_of(ctl, "172.16.108.0", 24), "172.16.104.1");
  // The address's own local route, then the others from the highest key down.
  EXPECT_EQ(rec.events, (std::vector<std::string>{
                            "-addr 172.16.104.11/24", "-route 172.16.104.11/32 t255",
                            "-route 172.16.106.0/24 t254", "-route 172.16.105.0/24 t254"}));
  // An address that another device (or another address of the device) still has keeps
  // its routes; the last one takes them.
  ASSERT_TRUE(add_addr(ctl, *d1, "172.16.200.11", 24));
  ASSERT_TRUE(add_addr(ctl, *d1, "172.16.200.11", 16));
  dev.prefsrc = ip("172.16.200.11");
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), dev));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d1, "172.16.200.11", 16)));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d1, "172.16.200.11", 24)));
  EXPECT_EQ(prefsrc_of(ctl, "172.16.106.0", 24), "172.16.200.11");
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d2, "172.16.200.11", 24)));
  EXPECT_EQ(prefsrc_of(ctl, "172.16.106.0", 24), "gone");
}

// Linux: rt6_remove_prefsrc — a route keeps its place but loses a source its device can no
// longer use (a global address no device has, a link-local one its device lost), silently.
TEST_F(RouteFixesTest, Ipv6RoutesLoseAPreferredSourceThatGoes) {
  auto ctl = engine->control();
  Device* d1 = up_dummy(ctl, "d1");
  Device* d2 = up_dummy(ctl, "d2");
  Device* d3 = up_dummy(ctl, "d3");
  ASSERT_TRUE(add_addr(ctl, *d1, "2001:db8:101::10", 64));
  ASSERT_TRUE(add_addr(ctl, *d1, "2001:db8:101::11", 64));
  ASSERT_TRUE(add_addr(ctl, *d2, "2001:db8:101::11", 64));
  for (Device* d : {d1, d2, d3}) ASSERT_TRUE(add_addr(ctl, *d, "fe80::1", 128));
  auto add = [&](std::string_view dst, Device& d, std::string_view src) {
    auto q = route_req(dst, 64);
    q.oif = d.ifindex();
    q.prefsrc = ip(src);
    return inet::add_route(ctl, ns(ctl), q);
  };
  ASSERT_TRUE(add("2001:db8:110::", *d2, "2001:db8:101::10"));
  ASSERT_TRUE(add("2001:db8:111::", *d3, "2001:db8:101::11"));
  ASSERT_TRUE(add("2001:db8:116::", *d2, "fe80::1"));
  ASSERT_TRUE(add("2001:db8:117::", *d3, "fe80::1"));
  listen(ctl);
  auto del = [&](Device& d, std::string_view a, int len) {
    return inet::delete_address(ctl, ns(ctl), addr_req(d, a, len));
  };
  ASSERT_TRUE(del(*d1, "2001:db8:101::10", 64));
  EXPECT_EQ(prefsrc_of(ctl, "2001:db8:110::", 64), "-");
  ASSERT_TRUE(del(*d1, "2001:db8:101::11", 64));
  EXPECT_EQ(prefsrc_of(ctl, "2001:db8:111::", 64), "2001:db8:101::11");  // d2 has it
  ASSERT_TRUE(del(*d2, "2001:db8:101::11", 64));
  EXPECT_EQ(prefsrc_of(ctl, "2001:db8:111::", 64), "-");
  ASSERT_TRUE(del(*d1, "fe80::1", 128));
  EXPECT_EQ(prefsrc_of(ctl, "2001:db8:116::", 64), "fe80::1");
  EXPECT_EQ(prefsrc_of(ctl, "2001:db8:117::", 64), "fe80::1");
  ASSERT_TRUE(del(*d2, "fe80::1", 128));
  EXPECT_EQ(prefsrc_of(ctl, "2001:db8:116::", 64), "-");
  EXPECT_EQ(prefsrc_of(ctl, "2001:db8:117::", 64), "fe80::1");
  for (const std::string& e : rec.events)
    EXPECT_EQ(e.rfind("-route 2001:db8:11", 0), std::string::npos) << e;
}

// Linux: ip6_route_check_nh looks the gateway up in the route's own table first.
TEST_F(RouteFixesTest, Ipv6GatewayFoundInTheRoutesTable) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  ASSERT_TRUE(add_addr(ctl, *d, "2001:db8:701::1", 64));
  auto conn = route_req("2001:db8:701::", 64);
  conn.oif = d->ifindex();
  conn.table = 1101;
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), conn));
  ASSERT_TRUE(inet::delete_route(ctl, ns(ctl), route_req("2001:db8:701::", 64)));
  auto dflt = route_req("::", 0);
  dflt.table = 1101;
  dflt.gateway = ip("2001:db8:701::64");
  auto r = inet::add_route(ctl, ns(ctl), dflt);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->oif, d->ifindex());
  dflt.table = 1102;  // nothing reaches it there, nor in main
  EXPECT_EQ(inet::add_route(ctl, ns(ctl), dflt).error().code, EHOSTUNREACH);
}

// Linux: fib_check_nh_v4_gw and fib6_nh_init — onlink needs a device; IPv6 gives the
// route's onlink to each hop of RTA_MULTIPATH (ip6_route_multipath_add).
TEST_F(RouteFixesTest, OnlinkNextHops) {
  auto ctl = engine->control();
  Device* d1 = up_dummy(ctl, "d1");
  Device* d3 = up_dummy(ctl, "d3");
  ASSERT_TRUE(add_addr(ctl, *d1, "169.254.1.1", 24));
  ASSERT_TRUE(add_addr(ctl, *d1, "2001:db8:101::1", 64));
  ASSERT_TRUE(add_addr(ctl, *d3, "2001:db8:301::1", 64));
  for (std::string_view gw : {"169.254.1.1", "2001:db8:11::64"}) {
    auto q = route_req(gw == "169.254.1.1" ? "169.254.101.101" : "2001:db8:101::7",
                       gw == "169.254.1.1" ? 32 : 128);
    q.gateway = ip(gw);
    q.flags = RTNH_F_ONLINK;
    auto r = inet::add_route(ctl, ns(ctl), q);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ENODEV);
    EXPECT_EQ(r.error().message, "Nexthop device required for onlink");
  }
  auto r = add_mp(ctl, "2001:db8:101::5", 128,
                  {hop("2001:db8:11::64", *d1), hop("2001:db8:12::64", *d3)}, RTNH_F_ONLINK);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->nexthops.size(), 2u);
  for (const inet::NextHop& h : r->nexthops) EXPECT_EQ(h.flags & RTNH_F_ONLINK, RTNH_F_ONLINK);
  // Linux: ip6_route_check_nh_onlink — a gateway on another device's prefix is refused.
  auto mismatch = route_req("2001:db8:101::8", 128);
  mismatch.gateway = ip("2001:db8:301::64");
  mismatch.oif = d1->ifindex();
  mismatch.flags = RTNH_F_ONLINK;
  auto m = inet::add_route(ctl, ns(ctl), mismatch);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, EINVAL);
  EXPECT_EQ(m.error().message, "Nexthop has invalid gateway or device mismatch");
}

// Linux: fib_add_ifaddr's arp_invalidate — on an up device, a new address's broadcasts
// (the explicit one and a primary's prefix broadcast) lose their entries that are not valid,
// each announced with RTM_DELNEIGH (an incomplete one turned failed first, RTM_NEWNEIGH); a
// down device's wait until it comes up.
TEST_F(RouteFixesTest, ANewAddressInvalidatesItsBroadcastsNeighbours) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "v0");
  auto nbr = [&](std::string_view dst, std::uint16_t state, std::string_view ll = "") {
    inet::NeighRequest q;
    q.family = AF_INET;
    q.ifindex = d->ifindex();
    q.dst = ip(dst);
    q.state = state;
    if (!ll.empty()) q.lladdr = *HwAddr::parse(ll);
    return inet::add_neigh(ctl, ns(ctl), q);
  };
  auto has = [&](std::string_view dst) {
    inet::NeighRequest q;
    q.family = AF_INET;
    q.ifindex = d->ifindex();
    q.dst = ip(dst);
    return bool(inet::get_neigh(ctl, ns(ctl), q));
  };
  ASSERT_TRUE(nbr("203.0.113.111", NUD_FAILED));
  ASSERT_TRUE(nbr("203.0.113.255", NUD_INCOMPLETE));
  ASSERT_TRUE(nbr("203.0.113.7", NUD_FAILED));
  ASSERT_TRUE(nbr("198.51.100.255", NUD_PERMANENT, "02:00:00:00:00:01"));
  listen(ctl);
  auto a = addr_req(*d, "203.0.113.1", 24);
  a.broadcast = ip("203.0.113.111");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), a));
  EXPECT_FALSE(has("203.0.113.111"));
  EXPECT_FALSE(has("203.0.113.255"));
  EXPECT_TRUE(has("203.0.113.7"));
  std::vector<std::string> nbrs;
  for (const std::string& e : rec.events)
    if (e.find("nbr") != std::string::npos) nbrs.push_back(e);
  EXPECT_EQ(nbrs, (std::vector<std::string>{"-nbr 203.0.113.111 0x20", "+nbr 203.0.113.255 0x20",
                                            "-nbr 203.0.113.255 0x20"}));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "198.51.100.1", 24)));
  EXPECT_TRUE(has("198.51.100.255"));  // permanent
  ASSERT_TRUE(ctl.close(*d));
  ASSERT_TRUE(nbr("192.0.2.255", NUD_FAILED));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "192.0.2.1", 24)));
  EXPECT_TRUE(has("192.0.2.255"));
  ASSERT_TRUE(ctl.open(*d));
  EXPECT_FALSE(has("192.0.2.255"));
}

// Linux: fib_check_nh_v6_gw — an IPv4 route's IPv6 gateway (RTA_VIA) is checked as an IPv6
// route's (fib6_nh_init): a link-local one needs its device, a local one is refused, another
// must be reachable; the route is kept, shown, looked up and deleted by it.
TEST_F(RouteFixesTest, Ipv4RoutesTakeAnIpv6Gateway) {
  auto ctl = engine->control();
  Device* d = up_dummy(ctl, "d0");
  ASSERT_TRUE(add_addr(ctl, *d, "10.1.1.1", 24));
  ASSERT_TRUE(add_addr(ctl, *d, "2001:db8:1::1", 64));
  auto q = route_req("10.9.0.0", 24);
  q.gateway = ip("fe80::1");
  auto r = inet::add_route(ctl, ns(ctl), q);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "Egress device not specified");
  q.gateway = ip("2001:db8:1::1");
  r = inet::add_route(ctl, ns(ctl), q);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "Gateway can not be a local address");
  q.gateway = ip("2001:db8:2::1");
  EXPECT_EQ(inet::add_route(ctl, ns(ctl), q).error().code, EHOSTUNREACH);
  q.gateway = ip("2001:db8:1::2");  // reached through the device's prefix
  r = inet::add_route(ctl, ns(ctl), q);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->oif, d->ifindex());
  EXPECT_EQ(r->scope, RT_SCOPE_UNIVERSE);
  auto ll = route_req("10.9.1.0", 24);
  ll.gateway = ip("fe80::1");
  ll.oif = d->ifindex();
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), ll));
  EXPECT_EQ(at(ctl, AF_INET, "10.9.1.0", 24), std::vector<std::string>{"fe80::1"});
  // A hop list may mix the families.
  auto mp = add_mp(ctl, "10.9.2.0", 24, {hop("fe80::2", *d), hop("10.1.1.2", *d)});
  ASSERT_TRUE(mp) << mp.error().message;
  EXPECT_EQ(at(ctl, AF_INET, "10.9.2.0", 24), std::vector<std::string>{"fe80::2,10.1.1.2"});
  // A delete names the gateway with its family.
  auto del = route_req("10.9.1.0", 24);
  del.gateway = ip("fe80::2");
  EXPECT_EQ(inet::delete_route(ctl, ns(ctl), del).error().code, ESRCH);
  del.gateway = ip("fe80::1");
  ASSERT_TRUE(inet::delete_route(ctl, ns(ctl), del));
  EXPECT_TRUE(at(ctl, AF_INET, "10.9.1.0", 24).empty());
  // An IPv6 route takes no IPv4 gateway.
  auto six = route_req("2001:db8:9::", 64);
  six.gateway = ip("10.1.1.2");
  six.oif = d->ifindex();
  EXPECT_EQ(inet::add_route(ctl, ns(ctl), six).error().message, "Invalid gateway address");
}

// Linux keeps IPv4 hops' link state: fib_check_nh_v6_gw sets no `linkdown` on a hop it makes
// without a carrier (until the device's next event), and a multipath route is `linkdown`
// itself when its hops' carriers go together or the others are dead (fib_sync_down_dev),
// until one comes back (fib_sync_up).
TEST_F(RouteFixesTest, Ipv4LinkStateIsKeptAsLinuxKeepsIt) {
  auto ctl = engine->control();
  auto veth = [&](const std::string& a, const std::string& b) {
    auto peer = std::make_shared<LinkRequest>();
    peer->name = b;
    Attr at{VETH_INFO_PEER, AttrShape::LinkMsg};
    at.link = peer;
    LinkRequest req = link_req("veth", a);
    req.has_info_data = true;
    req.info_data = {at};
    auto made = ctl.create_link(ns(ctl), req);
    EXPECT_TRUE(made) << made.error().message;
    return std::pair<Device*, Device*>{*made, ctl.find(ns(ctl), b)};
  };
  auto [v0, v1] = veth("v0", "v1");
  ASSERT_TRUE(ctl.open(*v0));  // no carrier: v1 is down
  ASSERT_TRUE(add_addr(ctl, *v0, "10.2.2.1", 24));
  auto flags_of = [&](std::string_view dst) {
    for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET, RT_TABLE_MAIN))
      if (r.dst == ip(dst)) {
        std::string out = (r.flags & RTNH_F_LINKDOWN) ? "L" : "-";
        for (const inet::NextHop& h : r.nexthops) out += (h.flags & RTNH_F_LINKDOWN) ? "L" : "-";
        return out;
      }
    return std::string("gone");
  };
  auto ll = route_req("10.9.30.0", 24);
  ll.gateway = ip("fe80::1");
  ll.oif = v0->ifindex();
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), ll));
  ASSERT_TRUE(add_mp(ctl, "10.9.32.0", 24, {hop("fe80::1", *v0), hop("10.2.2.2", *v0)}));
  ASSERT_TRUE(add_mp(ctl, "10.9.34.0", 24, {hop("10.2.2.3", *v0), hop("10.2.2.2", *v0)}));
  EXPECT_EQ(flags_of("10.9.30.0"), "-");
  EXPECT_EQ(flags_of("10.9.32.0"), "--L");
  EXPECT_EQ(flags_of("10.9.34.0"), "LLL");
  ASSERT_TRUE(ctl.open(*v1));
  EXPECT_EQ(flags_of("10.9.32.0"), "---");
  EXPECT_EQ(flags_of("10.9.34.0"), "---");
  ASSERT_TRUE(ctl.close(*v1));
  EXPECT_EQ(flags_of("10.9.30.0"), "L");
  EXPECT_EQ(flags_of("10.9.32.0"), "LLL");
}

}  // namespace
}  // namespace ifcore::test
