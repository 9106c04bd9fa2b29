// Nexthop objects: creation with the kernel's checks (each refusal changes nothing), ids
// given out, groups, routes that name a nexthop, replace and delete with what follows them,
// the notifications in Linux's order, the device events that take nexthops away, and the
// references a nexthop holds (an unregister leaves none behind).
#include <linux/nexthop.h>

#include <gtest/gtest.h>

#include "proto/helpers.h"

namespace ifcore::test {
namespace {

struct NhRecorder : inet::ProtoListener {
  std::vector<std::string> events;
  void on_nexthop(Namespace&, inet::ProtoEvent ev, const inet::NexthopInfo& n) override {
    std::string what = n.is_group() ? fmt::format("group{}", n.group.size()) : "single";
    events.push_back(
        fmt::format("{}nh {} {}", ev == inet::ProtoEvent::New ? '+' : '-', n.id, what));
  }
  void on_route(Namespace&, inet::ProtoEvent ev, const inet::RouteInfo& r) override {
    events.push_back(fmt::format("{}route {}/{} nhid {}", ev == inet::ProtoEvent::New ? '+' : '-',
                                 r.dst.to_string(), r.dst_len, r.nhid));
  }
};

class NexthopTest : public ListeningTest<NhRecorder> {
 protected:
  // An up dummy with 10.N.0.1/24 and 2001:db8:N::1/64.
  Device* dev(Control& ctl, const std::string& name, int n) {
    Device* d = dummy(ctl, name);
    EXPECT_TRUE(ctl.change_flags(*d, d->flags() | IFF_UP));
    EXPECT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, fmt::format("10.{}.0.1", n), 24)));
    EXPECT_TRUE(inet::add_address(ctl, ns(ctl),
                                  addr_req(*d, fmt::format("2001:db8:{}::1", n), 64, IFA_F_NODAD)));
    return d;
  }
  static inet::NexthopRequest via(std::uint32_t id, std::string_view gw, Device* d) {
    inet::NexthopRequest q;
    q.id = id;
    q.gateway = ip(gw);
    q.family = q.gateway->family();
    q.oif = d ? d->ifindex() : 0;
    return q;
  }
  static inet::NexthopRequest group(std::uint32_t id, std::vector<inet::NexthopMember> members,
                                    std::uint16_t type = NEXTHOP_GRP_TYPE_MPATH) {
    inet::NexthopRequest q;
    q.id = id;
    q.group = std::move(members);
    q.group_type = type;
    return q;
  }
  static inet::RouteRequest nh_route(std::string_view dst, int len, std::uint32_t nhid) {
    auto r = route_req(dst, len);
    r.nhid = nhid;
    return r;
  }
  std::vector<std::uint32_t> ids(Control& ctl) {
    std::vector<std::uint32_t> out;
    for (auto& n : inet::list_nexthops(ctl, ns(ctl))) out.push_back(n.id);
    return out;
  }
};

TEST_F(NexthopTest, SinglesGroupsAndIdsAsLinuxMakesThem) {
  auto ctl = engine->control();
  Device* d = dev(ctl, "d0", 0);
  auto a = inet::add_nexthop(ctl, ns(ctl), via(1, "10.0.0.2", d));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->scope, RT_SCOPE_LINK);
  EXPECT_EQ(a->oif, d->ifindex());
  inet::NexthopRequest only_dev;
  only_dev.id = 2;
  only_dev.family = AF_INET;
  only_dev.oif = d->ifindex();
  auto b = inet::add_nexthop(ctl, ns(ctl), only_dev);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->scope, RT_SCOPE_HOST);
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), via(3, "2001:db8:0::2", d)));
  // No id: the first unused one after the last given out (Linux: nh_find_unused_id).
  auto auto1 = inet::add_nexthop(ctl, ns(ctl), via(0, "10.0.0.3", d));
  ASSERT_TRUE(auto1);
  EXPECT_EQ(auto1->id, 4u);
  auto g = inet::add_nexthop(ctl, ns(ctl), group(10, {{1, 1}, {3, 5}}));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->family, AF_UNSPEC);
  EXPECT_EQ(g->group.size(), 2u);
  EXPECT_EQ(ids(ctl), (std::vector<std::uint32_t>{1, 2, 3, 4, 10}));
  inet::NexthopFilter groups;
  groups.groups = true;
  ASSERT_EQ(inet::list_nexthops(ctl, ns(ctl), groups).size(), 1u);
  inet::NexthopFilter v6;
  v6.family = AF_INET6;
  ASSERT_EQ(inet::list_nexthops(ctl, ns(ctl), v6).size(), 1u);
  // A resilient group: its buckets are required, the timers have defaults.
  auto res = group(11, {{1, 1}}, NEXTHOP_GRP_TYPE_RES);
  auto no_buckets = inet::add_nexthop(ctl, ns(ctl), res);
  ASSERT_FALSE(no_buckets);
  EXPECT_EQ(no_buckets.error().message,
            "Number of buckets not specified for nexthop group insertion");
  res.buckets = 8;
  auto r = inet::add_nexthop(ctl, ns(ctl), res);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->resilient.buckets, 8u);
  EXPECT_EQ(r->resilient.idle_timer, 12000u);
}

TEST_F(NexthopTest, RefusalsChangeNothing) {
  auto ctl = engine->control();
  Device* d = dev(ctl, "d0", 0);
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), via(1, "10.0.0.2", d)));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), group(2, {{1, 1}})));
  auto before = inet::list_nexthops(ctl, ns(ctl));
  auto expect = [&](Result<inet::NexthopInfo> got, int code, std::string_view msg) {
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, code);
    EXPECT_EQ(got.error().message, msg);
    EXPECT_EQ(inet::list_nexthops(ctl, ns(ctl)).size(), before.size());
  };
  expect(inet::add_nexthop(ctl, ns(ctl), via(1, "10.0.0.3", d)), EEXIST, "");
  expect(inet::add_nexthop(ctl, ns(ctl), via(3, "10.9.0.3", d)), ENETUNREACH,
         "Nexthop has invalid gateway");
  expect(inet::add_nexthop(ctl, ns(ctl), via(3, "2001:db9::1", d)), EHOSTUNREACH, "");
  expect(inet::add_nexthop(ctl, ns(ctl), group(3, {{1, 1}, {9, 1}})), EINVAL, "Invalid nexthop id");
  expect(inet::add_nexthop(ctl, ns(ctl), group(3, {{1, 1}, {1, 1}})), EINVAL,
         "Nexthop id can not be used twice in a group");
  expect(inet::add_nexthop(ctl, ns(ctl), group(3, {{2, 1}})), EINVAL,
         "Hash-threshold group can not be a nexthop within a group");
  ASSERT_TRUE(ctl.change_flags(*ns(ctl).loopback(), ns(ctl).loopback()->flags() | IFF_UP));
  inet::NexthopRequest bh;
  bh.id = 5;
  bh.family = AF_INET;
  bh.blackhole = true;
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), bh));
  before = inet::list_nexthops(ctl, ns(ctl));
  expect(inet::add_nexthop(ctl, ns(ctl), group(3, {{1, 1}, {5, 1}})), EINVAL,
         "Blackhole nexthop can not be used in a group with more than 1 path");
  auto repl = via(2, "10.0.0.6", d);
  repl.replace = true;
  expect(inet::add_nexthop(ctl, ns(ctl), repl), EINVAL,
         "Can not replace a nexthop group with a nexthop.");
  auto repl2 = group(1, {{5, 1}});
  repl2.replace = true;
  expect(inet::add_nexthop(ctl, ns(ctl), repl2), EINVAL,
         "Can not replace a nexthop with a nexthop group.");
  auto no_create = via(7, "10.0.0.6", d);
  no_create.replace = true;
  no_create.create = false;
  expect(inet::add_nexthop(ctl, ns(ctl), no_create), ENOENT,
         "Replace specified without create and no entry exists");
  // A device that is down (its nexthop goes, and the group it left empty).
  ASSERT_TRUE(ctl.close(*d));
  EXPECT_EQ(ids(ctl), (std::vector<std::uint32_t>{5}));
  before = inet::list_nexthops(ctl, ns(ctl));
  expect(inet::add_nexthop(ctl, ns(ctl), via(8, "10.0.0.2", d)), ENETDOWN,
         "Nexthop device is not up");
  EXPECT_FALSE(inet::delete_nexthop(ctl, ns(ctl), 99));
}

TEST_F(NexthopTest, RoutesNameNexthopsAndFollowThem) {
  auto ctl = engine->control();
  Device* d0 = dev(ctl, "d0", 0);
  Device* d1 = dev(ctl, "d1", 1);
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), via(1, "10.0.0.2", d0)));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), via(2, "10.1.0.2", d1)));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), via(3, "2001:db8:0::2", d0)));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), group(10, {{1, 1}, {2, 3}})));
  auto r1 = inet::add_route(ctl, ns(ctl), nh_route("192.0.2.0", 24, 1));
  ASSERT_TRUE(r1) << r1.error().message;
  EXPECT_EQ(r1->gateway, ip("10.0.0.2"));
  EXPECT_EQ(r1->oif, d0->ifindex());
  auto r2 = inet::add_route(ctl, ns(ctl), nh_route("198.51.100.0", 24, 10));
  ASSERT_TRUE(r2);
  ASSERT_EQ(r2->nexthops.size(), 2u);
  EXPECT_EQ(r2->nexthops[1].weight, 3);
  // The routes' errors.
  auto missing = inet::add_route(ctl, ns(ctl), nh_route("203.0.113.0", 24, 99));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "Nexthop id does not exist");
  auto both = nh_route("203.0.113.0", 24, 1);
  both.oif = d0->ifindex();
  auto excl = inet::add_route(ctl, ns(ctl), both);
  ASSERT_FALSE(excl);
  EXPECT_EQ(excl.error().message, "Nexthop specification and nexthop id are mutually exclusive");
  auto v6 = inet::add_route(ctl, ns(ctl), nh_route("2001:db8:5::", 64, 1));
  ASSERT_FALSE(v6);
  EXPECT_EQ(v6.error().message, "IPv6 routes can not use an IPv4 nexthop");
  // An IPv6 source prefix: refused with a nexthop as Linux does; without one it is a route
  // of its own beside the one without a source.
  auto src = nh_route("2001:db8:5::", 64, 3);
  src.src_len = 64;
  auto with_src = inet::add_route(ctl, ns(ctl), src);
  ASSERT_FALSE(with_src);
  EXPECT_EQ(with_src.error().message, "Nexthops can not be used with source routing");
  src.nhid = 0;
  src.oif = d0->ifindex();
  auto plain_src = inet::add_route(ctl, ns(ctl), src);
  ASSERT_TRUE(plain_src) << plain_src.error().message;
  EXPECT_EQ(plain_src->src_len, 64);
  ASSERT_TRUE(inet::delete_route(ctl, ns(ctl), src));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), nh_route("2001:db8:5::", 64, 3)));
  // A lookup goes through the nexthop.
  auto got = inet::get_route(ctl, ns(ctl), ip("192.0.2.7"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->gateway, ip("10.0.0.2"));
  // Replace: the routes that name it, directly or through a group, are announced again
  // with the new hop.
  listen(ctl);
  auto repl = via(1, "10.0.0.9", d0);
  repl.replace = true;
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), repl));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"+nh 1 single", "+route 192.0.2.0/24 nhid 1",
                                                  "+route 198.51.100.0/24 nhid 10"}));
  auto routes = inet::list_routes(ctl, ns(ctl), AF_INET, RT_TABLE_MAIN);
  auto it = std::find_if(routes.begin(), routes.end(), [](auto& r) { return r.nhid == 1; });
  ASSERT_NE(it, routes.end());
  EXPECT_EQ(it->gateway, ip("10.0.0.9"));
  // Delete a member: RTM_DELNEXTHOP, its routes (IPv4: silently), then the group shrinks.
  rec.events.clear();
  ASSERT_TRUE(inet::delete_nexthop(ctl, ns(ctl), 1));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"-nh 1 single", "+nh 10 group1"}));
  routes = inet::list_routes(ctl, ns(ctl), AF_INET, RT_TABLE_MAIN);
  it = std::find_if(routes.begin(), routes.end(), [](auto& r) { return r.nhid == 10; });
  ASSERT_NE(it, routes.end());
  EXPECT_TRUE(it->nexthops.empty());  // IPv4: a group of one is a plain next hop
  EXPECT_EQ(it->gateway, ip("10.1.0.2"));
  EXPECT_EQ(std::count_if(routes.begin(), routes.end(), [](auto& r) { return r.nhid == 1; }), 0);
  // An IPv6 route's deletion is announced (nexthop_compat_mode).
  rec.events.clear();
  ASSERT_TRUE(inet::delete_nexthop(ctl, ns(ctl), 3));
  EXPECT_EQ(rec.events,
            (std::vector<std::string>{"-nh 3 single", "-route 2001:db8:5::/64 nhid 3"}));
  // The last member takes its group and the group's routes.
  rec.events.clear();
  ASSERT_TRUE(inet::delete_nexthop(ctl, ns(ctl), 2));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"-nh 2 single", "-nh 10 group1"}));
  EXPECT_TRUE(ids(ctl).empty());
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET)) EXPECT_EQ(r.nhid, 0u);
}

TEST_F(NexthopTest, DownCarrierLossAndUnregisterTakeNexthopsSilently) {
  auto ctl = engine->control();
  Device* d0 = dev(ctl, "d0", 0);
  Device* d1 = dev(ctl, "d1", 1);
  Device* d2 = dev(ctl, "d2", 2);
  ASSERT_TRUE(ctl.change_flags(*ns(ctl).loopback(), ns(ctl).loopback()->flags() | IFF_UP));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), via(1, "10.0.0.2", d0)));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), via(2, "10.1.0.2", d1)));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), via(3, "10.2.0.2", d2)));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), group(10, {{1, 1}, {2, 1}})));
  inet::NexthopRequest bh;
  bh.id = 20;
  bh.family = AF_INET;
  bh.blackhole = true;
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), bh));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), nh_route("198.51.100.0", 24, 10)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), nh_route("203.0.113.0", 24, 3)));
  listen(ctl);
  // Carrier loss of d0: nexthop 1 goes, the group keeps 2; nothing is announced.
  ctl.set_carrier(*d0, false);
  EXPECT_EQ(ids(ctl), (std::vector<std::uint32_t>{2, 3, 10, 20}));
  // Down of d2: nexthop 3 and its route go.
  ASSERT_TRUE(ctl.close(*d2));
  EXPECT_EQ(ids(ctl), (std::vector<std::uint32_t>{2, 10, 20}));
  // The loopback going down keeps the blackhole nexthop.
  ASSERT_TRUE(ctl.close(*ns(ctl).loopback()));
  EXPECT_EQ(ids(ctl), (std::vector<std::uint32_t>{2, 10, 20}));
  // Unregister of d1: its nexthop, then the group left empty, then the group's route.
  ASSERT_TRUE(ctl.delete_link(*d1));
  EXPECT_EQ(ids(ctl), (std::vector<std::uint32_t>{20}));
  // The device's own routes are announced as ever; nothing of the nexthops or of the
  // IPv4 routes that named them.
  for (const std::string& e : rec.events) {
    EXPECT_EQ(e.find("nh "), std::string::npos) << e;
    EXPECT_EQ(e.find("nhid 0"), e.size() - 6) << e;
  }
  for (auto& r : inet::list_routes(ctl, ns(ctl), AF_INET)) EXPECT_EQ(r.nhid, 0u);
}

}  // namespace
}  // namespace ifcore::test

namespace ifcore::test {
namespace {

// net.ipv4.nexthop_compat_mode off (Linux: fib_dump_info, rt6_fill_node,
// nexthop_replace_notify, __remove_nexthop_fib): a route through a nexthop shows its id
// alone, a replacement announces no route, and an IPv6 route goes with its nexthop
// unannounced. On again, the hops are back.
TEST_F(NexthopTest, WithCompatModeOffRoutesShowTheirIdAloneAndGoUnannounced) {
  auto ctl = engine->control();
  Device* d0 = dev(ctl, "d0", 0);
  ASSERT_TRUE(inet::nexthop_compat_mode(ctl, ns(ctl)));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), via(1, "10.0.0.2", d0)));
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), via(3, "2001:db8:0::2", d0)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), nh_route("192.0.2.0", 24, 1)));
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), nh_route("2001:db8:5::", 64, 3)));
  ASSERT_TRUE(inet::set_nexthop_compat_mode(ctl, ns(ctl), false));
  auto shown = [&](int family, std::uint32_t nhid) {
    for (auto& r : inet::list_routes(ctl, ns(ctl), family, RT_TABLE_MAIN))
      if (r.nhid == nhid) return std::optional<inet::RouteInfo>(r);
    return std::optional<inet::RouteInfo>();
  };
  auto r4 = shown(AF_INET, 1);
  ASSERT_TRUE(r4);
  EXPECT_TRUE(r4->gateway.empty());
  EXPECT_EQ(r4->oif, 0);
  auto r6 = shown(AF_INET6, 3);
  ASSERT_TRUE(r6);
  EXPECT_TRUE(r6->gateway.empty());
  EXPECT_EQ(r6->oif, 0);
  // The route still goes through the nexthop.
  auto got = inet::get_route(ctl, ns(ctl), ip("192.0.2.7"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->gateway, ip("10.0.0.2"));
  listen(ctl);
  auto repl = via(1, "10.0.0.9", d0);
  repl.replace = true;
  ASSERT_TRUE(inet::add_nexthop(ctl, ns(ctl), repl));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"+nh 1 single"}));
  rec.events.clear();
  ASSERT_TRUE(inet::delete_nexthop(ctl, ns(ctl), 3));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"-nh 3 single"}));
  EXPECT_FALSE(shown(AF_INET6, 3));
  ASSERT_TRUE(inet::set_nexthop_compat_mode(ctl, ns(ctl), true));
  r4 = shown(AF_INET, 1);
  ASSERT_TRUE(r4);
  EXPECT_EQ(r4->gateway, ip("10.0.0.9"));
  EXPECT_EQ(r4->oif, d0->ifindex());
}

}  // namespace
}  // namespace ifcore::test
