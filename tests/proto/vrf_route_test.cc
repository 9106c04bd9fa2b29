// Routes and rules with a vrf (Linux: vrf.c, l3mdev.c, fib_frontend.c and addrconf's
// NETDEV_CHANGEUPPER): the l3mdev rules made with a namespace's first vrf and kept, the
// routes a port's addresses make moving to the vrf's table and back, lookups through the
// l3mdev rule, and what a vrf's or a port's unregister leaves.
#include <linux/fib_rules.h>

#include <gtest/gtest.h>

#include "proto/helpers.h"

namespace ifcore::test {
namespace {

class VrfRouteTest : public EngineTest {
 protected:
  Device* vrf(Control& ctl, std::string name, std::uint32_t table) {
    LinkRequest r = link_req("vrf", std::move(name));
    r.has_info_data = true;
    r.info_data = {Attr::u32(IFLA_VRF_TABLE, table)};
    auto d = ctl.create_link(ns(ctl), r);
    EXPECT_TRUE(d) << (d ? "" : d.error().message);
    return d ? *d : nullptr;
  }
  // "table dst/len" of the routes through `dev` of `family`, types local and broadcast too.
  static std::vector<std::string> tables_of(Control& ctl, Namespace& n, int family,
                                            const Device& dev) {
    std::vector<std::string> out;
    for (auto& r : inet::list_routes(ctl, n, family))
      if (r.oif == dev.ifindex())
        out.push_back(fmt::format("t{} {}/{}", r.table, r.dst.to_string(), r.dst_len));
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::vector<std::string> l3mdev_rules(Control& ctl, Namespace& n) {
    std::vector<std::string> out;
    for (auto& r : inet::list_rules(ctl, n))
      if (r.l3mdev)
        out.push_back(fmt::format("{} {} {} proto {}", r.family == AF_INET ? 4 : 6, r.priority,
                                  r.table, r.protocol));
    return out;
  }
};

TEST_F(VrfRouteTest, FirstVrfAddsTheL3mdevRulesOnce) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  EXPECT_TRUE(l3mdev_rules(ctl, n).empty());
  ASSERT_TRUE(vrf(ctl, "vrf0", 10));
  const std::vector<std::string> want{"4 1000 0 proto 2", "6 1000 0 proto 2"};
  EXPECT_EQ(l3mdev_rules(ctl, n), want);
  ASSERT_TRUE(vrf(ctl, "vrf1", 20));
  EXPECT_EQ(l3mdev_rules(ctl, n), want);
  // Linux: the rules stay when the vrfs go, and a deleted rule does not come back.
  ASSERT_TRUE(ctl.delete_link(*ctl.find(n, "vrf0")));
  ASSERT_TRUE(ctl.delete_link(*ctl.find(n, "vrf1")));
  EXPECT_EQ(l3mdev_rules(ctl, n), want);
  inet::RuleRequest del;
  del.rule.family = AF_INET;
  del.rule.l3mdev = 1;
  ASSERT_TRUE(inet::delete_rule(ctl, n, del));
  ASSERT_TRUE(vrf(ctl, "vrf2", 30));
  EXPECT_EQ(l3mdev_rules(ctl, n), std::vector<std::string>{"6 1000 0 proto 2"});
  // Each namespace has its own.
  auto other = ctl.create_namespace("blue");
  ASSERT_TRUE(other);
  EXPECT_TRUE(l3mdev_rules(ctl, **other).empty());
}

TEST_F(VrfRouteTest, EnslavedPortsRoutesMoveToTheVrfTableAndBack) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  Device* v = vrf(ctl, "vrf0", 10);
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(v && d);
  ASSERT_TRUE(ctl.open(*v));
  ASSERT_TRUE(ctl.open(*d));
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, "10.1.0.1", 24)));
  const std::vector<std::string> in_main{"t254 10.1.0.0/24", "t255 10.1.0.1/32",
                                         "t255 10.1.0.255/32"};
  EXPECT_EQ(tables_of(ctl, n, AF_INET, *d), in_main);
  inet::RouteRequest user = route_req("192.0.2.0", 24);
  user.oif = d->ifindex();
  ASSERT_TRUE(inet::add_route(ctl, n, user));
  ASSERT_TRUE(ctl.set_master(*d, v));
  // Linux: CHANGEUPPER flushes every IPv4 route through the port (the user's too); the
  // cycle's NETDEV_UP makes the address's routes again, in table 10.
  EXPECT_EQ(tables_of(ctl, n, AF_INET, *d),
            (std::vector<std::string>{"t10 10.1.0.0/24", "t10 10.1.0.1/32", "t10 10.1.0.255/32"}));
  // IPv6: the link-local address's routes and ff00::/8 are in table 10 too.
  auto v6 = tables_of(ctl, n, AF_INET6, *d);
  ASSERT_FALSE(v6.empty());
  for (auto& r : v6) EXPECT_EQ(r.substr(0, 4), "t10 ") << r;
  // The vrf itself: no link-local address, its ff00::/8 in its table.
  EXPECT_EQ(tables_of(ctl, n, AF_INET6, *v), std::vector<std::string>{"t10 ff00::/8"});
  // An address added later goes to table 10.
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, "2001:db8::1", 64, IFA_F_NODAD)));
  v6 = tables_of(ctl, n, AF_INET6, *d);
  EXPECT_NE(std::find(v6.begin(), v6.end(), "t10 2001:db8::/64"), v6.end());
  // Released: back to local and main.
  ASSERT_TRUE(ctl.set_master(*d, nullptr));
  EXPECT_EQ(tables_of(ctl, n, AF_INET, *d), in_main);
  for (auto& r : tables_of(ctl, n, AF_INET6, *d)) EXPECT_NE(r.substr(0, 4), "t10 ") << r;
}

TEST_F(VrfRouteTest, DownPortLosesItsRoutesUntilUp) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  Device* v = vrf(ctl, "vrf0", 10);
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(v && d);
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, "10.1.0.1", 24)));
  EXPECT_EQ(tables_of(ctl, n, AF_INET, *d), std::vector<std::string>{"t255 10.1.0.1/32"});
  ASSERT_TRUE(ctl.set_master(*d, v));
  // Linux: the forced fib_disable_ip takes the local route of a down device too.
  EXPECT_TRUE(tables_of(ctl, n, AF_INET, *d).empty());
  ASSERT_TRUE(ctl.open(*d));
  EXPECT_EQ(tables_of(ctl, n, AF_INET, *d),
            (std::vector<std::string>{"t10 10.1.0.0/24", "t10 10.1.0.1/32", "t10 10.1.0.255/32"}));
}

TEST_F(VrfRouteTest, LookupsThroughTheL3mdevRule) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  Device* v = vrf(ctl, "vrf0", 10);
  Device* d = dummy(ctl, "d0");
  Device* o = dummy(ctl, "d1");
  ASSERT_TRUE(v && d && o);
  for (Device* x : {v, d, o}) ASSERT_TRUE(ctl.open(*x));
  ASSERT_TRUE(ctl.set_master(*d, v));
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, "10.1.0.1", 24)));
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*o, "10.2.0.1", 24)));
  inet::RouteRequest dflt = route_req("0.0.0.0", 0);
  dflt.table = 10;
  dflt.gateway = ip("10.1.0.254");
  ASSERT_TRUE(inet::add_route(ctl, n, dflt));
  inet::Flow f;
  // Through the vrf (`ip route get ... vrf vrf0` asks with the vrf as the output device):
  // its table, any of its devices.
  f.dst = ip("198.51.100.7");
  f.oif = v->ifindex();
  auto r = inet::get_route(ctl, n, f);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->table, 10u);
  EXPECT_EQ(r->oif, d->ifindex());
  EXPECT_EQ(r->gateway, ip("10.1.0.254"));
  EXPECT_EQ(r->prefsrc, ip("10.1.0.1"));
  // Through a port: the same table.
  f.oif = d->ifindex();
  r = inet::get_route(ctl, n, f);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->table, 10u);
  // Without the vrf: table main has no default route, and the vrf's own address is not
  // local there any more.
  f.oif = 0;
  EXPECT_EQ(inet::get_route(ctl, n, f).error().code, ENETUNREACH);
  f.dst = ip("10.1.0.1");
  EXPECT_EQ(inet::get_route(ctl, n, f).error().code, ENETUNREACH);
  f.oif = v->ifindex();
  r = inet::get_route(ctl, n, f);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->type, RTN_LOCAL);
  EXPECT_EQ(r->table, 10u);
  EXPECT_EQ(r->oif, v->ifindex());  // Linux: the L3 master is its domain's loopback
  // Coming in through a port: the vrf's table too.
  f.oif = 0;
  f.iif = d->ifindex();
  f.dst = ip("10.1.0.1");
  r = inet::get_route(ctl, n, f);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->table, 10u);
  // A vrf's table with no answer is not the on-link answer of a plain output device.
  f.iif = 0;
  f.oif = v->ifindex();
  ASSERT_TRUE(inet::delete_route(ctl, n, dflt));
  f.dst = ip("198.51.100.7");
  EXPECT_EQ(inet::get_route(ctl, n, f).error().code, ENETUNREACH);
  // IPv6 through the vrf.
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, "2001:db8::1", 64, IFA_F_NODAD)));
  inet::Flow f6;
  f6.dst = ip("2001:db8::7");
  f6.oif = v->ifindex();
  r = inet::get_route(ctl, n, f6);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->table, 10u);
  EXPECT_EQ(r->oif, d->ifindex());
}

TEST_F(VrfRouteTest, UnregisterLeavesTheTableAndReleasesPorts) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  Device* v = vrf(ctl, "vrf0", 10);
  Device* d = dummy(ctl, "d0");
  Device* e = dummy(ctl, "d1");
  ASSERT_TRUE(v && d && e);
  for (Device* x : {v, d, e}) ASSERT_TRUE(ctl.open(*x));
  ASSERT_TRUE(ctl.set_master(*d, v));
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, "10.1.0.1", 24)));
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*e, "10.3.0.1", 24)));
  // A route of table 10 through a device that is not a port stays with the table.
  inet::RouteRequest other = route_req("203.0.113.0", 24);
  other.table = 10;
  other.oif = e->ifindex();
  ASSERT_TRUE(inet::add_route(ctl, n, other));
  ASSERT_TRUE(ctl.delete_link(*v));
  EXPECT_EQ(
      tables_of(ctl, n, AF_INET, *d),
      (std::vector<std::string>{"t254 10.1.0.0/24", "t255 10.1.0.1/32", "t255 10.1.0.255/32"}));
  auto t10 = inet::list_routes(ctl, n, AF_INET, 10);
  ASSERT_EQ(t10.size(), 1u);
  EXPECT_EQ(t10[0].oif, e->ifindex());
  // A port deleted: its routes in table 10 go with it.
  Device* w = vrf(ctl, "vrf1", 20);
  ASSERT_TRUE(w && ctl.open(*w));
  ASSERT_TRUE(ctl.set_master(*e, w));
  EXPECT_FALSE(inet::list_routes(ctl, n, AF_INET, 20).empty());
  ASSERT_TRUE(ctl.delete_link(*e));
  EXPECT_TRUE(inet::list_routes(ctl, n, AF_INET, 20).empty());
  EXPECT_TRUE(w->lowers_locked().empty());
}

TEST_F(VrfRouteTest, VrfAndPortInOneBatchEitherOrder) {
  for (bool port_first : {true, false}) {
    auto ctl = engine->control();
    Namespace& n = ns(ctl);
    Device* v = vrf(ctl, "vrf0", 10);
    Device* d = dummy(ctl, "d0");
    ASSERT_TRUE(v && d);
    ASSERT_TRUE(ctl.open(*v));
    ASSERT_TRUE(ctl.open(*d));
    ASSERT_TRUE(ctl.set_master(*d, v));
    ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, "10.1.0.1", 24)));
    ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, "2001:db8::1", 64, IFA_F_NODAD)));
    std::vector<Device*> both =
        port_first ? std::vector<Device*>{d, v} : std::vector<Device*>{v, d};
    ASSERT_TRUE(ctl.delete_links(both));
    EXPECT_TRUE(inet::list_routes(ctl, n, AF_INET, 10).empty());
    EXPECT_TRUE(inet::list_routes(ctl, n, AF_INET6, 10).empty());
    EXPECT_FALSE(ctl.find(n, "d0"));
    EXPECT_FALSE(ctl.find(n, "vrf0"));
  }
}

}  // namespace
}  // namespace ifcore::test
