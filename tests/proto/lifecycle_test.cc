// Tests of a device's whole protocol life, notification by notification: up (link-local
// address, prefix, local and multicast routes), addresses and user routes of both
// families, a vlan on top, and the batch that deletes both; the order of routes that share
// a key and a metric; the engine's teardown with devices still present; and the
// per-device state when no device slot is left.
#include <linux/if_link.h>

#include "proto/helpers.h"

namespace ifcore::test {
namespace {

// Records notifications with what RTM_NEWROUTE / RTM_DELROUTE carry.
struct FullRecorder : inet::ProtoListener {
  std::vector<std::string> events;
  void on_addr(Namespace&, inet::ProtoEvent ev, const inet::AddrInfo& a) override {
    events.push_back(fmt::format("{}addr {}/{} if{} f{:x}", ev == inet::ProtoEvent::New ? '+' : '-',
                                 a.local.to_string(), a.prefixlen, a.ifindex, a.flags));
  }
  void on_route(Namespace&, inet::ProtoEvent ev, const inet::RouteInfo& r) override {
    const std::string gw = gateways_of(r);
    events.push_back(fmt::format("{}route {}/{} t{} type{} oif{} m{} gw{} f{:x}",
                                 ev == inet::ProtoEvent::New ? '+' : '-', r.dst.to_string(),
                                 r.dst_len, r.table, r.type, r.oif, r.priority, gw, r.flags));
  }
};

// Keeps a listener registered for a scope (an ASSERT that returns early removes it too).
class Listening {
 public:
  Listening(Control& ctl, inet::ProtoListener& l) : ctl_(ctl), l_(l) { inet::add_listener(ctl, l); }
  ~Listening() { inet::remove_listener(ctl_, l_); }

 private:
  Control& ctl_;
  inet::ProtoListener& l_;
};

LinkRequest with_mac(LinkRequest r, std::uint8_t last) {
  r.address = HwAddr::ethernet({0x02, 0, 0, 0, 0, last});
  return r;
}

LinkRequest vlan_req(std::string name, int lower, std::uint16_t id) {
  LinkRequest r = link_req("vlan", std::move(name));
  r.link = static_cast<std::uint32_t>(lower);
  r.has_info_data = true;
  r.info_data.push_back(Attr::u16(IFLA_VLAN_ID, id));
  return r;
}

class LifecycleTest : public EngineTest {};

// The whole sequence, pinned: on up the link-local address and its routes (Linux:
// addrconf_dev_config, addrconf_add_linklocal); on the batch delete, device by device, the
// IPv6 routes and then the addresses (addrconf_ifdown), then IPv4, then the user routes.
TEST_F(LifecycleTest, UpAddressesRoutesAndDeleteNotifyInOneOrder) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  FullRecorder rec;
  Listening listening(ctl, rec);
  auto d = ctl.create_link(n, with_mac(link_req("dummy", "d0"), 1));
  ASSERT_TRUE(d);
  int d0 = (*d)->ifindex();
  ASSERT_TRUE(ctl.open(**d));
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(**d, "10.0.0.1", 24)));
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(**d, "10.0.0.2", 24)));
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(**d, "2001:db8::1", 64)));
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(**d, "2001:db8:1::1", 64, IFA_F_NODAD)));
  auto r4 = route_req("172.16.0.0", 16);
  r4.gateway = ip("10.0.0.254");
  ASSERT_TRUE(inet::add_route(ctl, n, r4));
  r4.gateway = ip("10.0.0.253");  // same key and metric, another next hop: appended
  r4.excl = false;
  r4.append = true;
  ASSERT_TRUE(inet::add_route(ctl, n, r4));
  for (const char* gw : {"fe80::2", "fe80::1"}) {
    auto r6 = route_req("2001:db9::", 64);
    r6.gateway = ip(gw);
    r6.oif = d0;
    // Linux: with NLM_F_EXCL the second is EEXIST; without, it joins the first as its
    // sibling (fib6_add_rt2node), announced as the route with the new hop first.
    r6.excl = false;
    ASSERT_TRUE(inet::add_route(ctl, n, r6));
  }
  auto v = ctl.create_link(n, with_mac(vlan_req("d0.5", d0, 5), 2));
  ASSERT_TRUE(v) << v.error().message;
  int v5 = (*v)->ifindex();
  ASSERT_TRUE(ctl.open(**v));
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(**v, "2001:db8:5::1", 64)));
  std::vector<std::string> up = rec.events;
  rec.events.clear();
  ASSERT_TRUE(ctl.delete_link(**d));
  std::vector<std::string> del = rec.events;

  auto sub = [&](std::string s) {
    for (auto [from, to] : {std::pair{std::string("oif$D"), fmt::format("oif{}", d0)},
                            std::pair{std::string("if$D"), fmt::format("if{}", d0)},
                            std::pair{std::string("oif$V"), fmt::format("oif{}", v5)},
                            std::pair{std::string("if$V"), fmt::format("if{}", v5)}})
      for (auto p = s.find(from); p != std::string::npos; p = s.find(from))
        s.replace(p, from.size(), to);
    return s;
  };
  // Up: the multicast route first (Linux: addrconf_add_dev's addrconf_add_mroute comes
  // before addrconf_addr_gen), the link-local prefix route, then, DAD over, the address and
  // its local route. A user's IPv6 address: its prefix route, the address tentative (f40),
  // then final with its local route (inet6_addr_add); nodad: never tentative.
  std::vector<std::string> want_up = {
      "+route ff00::/8 t255 type5 oif$D m256 gw- f0",
      "+route fe80::/64 t254 type1 oif$D m256 gw- f0",
      "+addr fe80::ff:fe00:1/64 if$D f80",
      "+route fe80::ff:fe00:1/128 t255 type2 oif$D m0 gw- f0",
      "+addr 10.0.0.1/24 if$D f80",
      "+route 10.0.0.1/32 t255 type2 oif$D m0 gw- f0",
      "+route 10.0.0.0/24 t254 type1 oif$D m0 gw- f0",
      "+route 10.0.0.255/32 t255 type3 oif$D m0 gw- f0",
      "+addr 10.0.0.2/24 if$D f81",
      "+route 10.0.0.2/32 t255 type2 oif$D m0 gw- f0",
      "+route 2001:db8::/64 t254 type1 oif$D m256 gw- f0",
      "+addr 2001:db8::1/64 if$D fc0",
      "+addr 2001:db8::1/64 if$D f80",
      "+route 2001:db8::1/128 t255 type2 oif$D m0 gw- f0",
      "+route 2001:db8:1::/64 t254 type1 oif$D m256 gw- f0",
      "+addr 2001:db8:1::1/64 if$D f82",
      "+route 2001:db8:1::1/128 t255 type2 oif$D m0 gw- f0",
      "+route 172.16.0.0/16 t254 type1 oif$D m0 gw10.0.0.254 f0",
      "+route 172.16.0.0/16 t254 type1 oif$D m0 gw10.0.0.253 f0",
      "+route 2001:db9::/64 t254 type1 oif$D m1024 gwfe80::2 f0",
      "+route 2001:db9::/64 t254 type1 oif$D m1024 gwfe80::1,fe80::2 f0",
      "+route ff00::/8 t255 type5 oif$V m256 gw- f0",
      "+route fe80::/64 t254 type1 oif$V m256 gw- f0",
      "+addr fe80::ff:fe00:2/64 if$V f80",
      "+route fe80::ff:fe00:2/128 t255 type2 oif$V m0 gw- f0",
      "+route 2001:db8:5::/64 t254 type1 oif$V m256 gw- f0",
      "+addr 2001:db8:5::1/64 if$V fc0",
      "+addr 2001:db8:5::1/64 if$V f80",
      "+route 2001:db8:5::1/128 t255 type2 oif$V m0 gw- f0",
  };
  std::vector<std::string> want_del = {
      // Each device's routes in the order of Linux's walk of its tables (the user's IPv6
      // routes through it with the derived ones: fib6_ifdown at NETDEV_DOWN), then its
      // addresses in list order, as `ip monitor` shows Linux 6.18 deleting a settled veth
      // with these addresses: no route says linkdown (the carrier was there until the
      // close, and an IPv4 local route's next hop is never marked); the siblings of the
      // multipath route one by one (fib6_del_route).
      "-route 2001:db8::/64 t254 type1 oif$D m256 gw- f0",
      "-route 2001:db8:1::/64 t254 type1 oif$D m256 gw- f0",
      "-route 2001:db9::/64 t254 type1 oif$D m1024 gwfe80::2 f0",
      "-route 2001:db9::/64 t254 type1 oif$D m1024 gwfe80::1 f0",
      "-route fe80::/64 t254 type1 oif$D m256 gw- f0",
      "-route 2001:db8::1/128 t255 type2 oif$D m0 gw- f0",
      "-route 2001:db8:1::1/128 t255 type2 oif$D m0 gw- f0",
      "-route fe80::ff:fe00:1/128 t255 type2 oif$D m0 gw- f0",
      "-route ff00::/8 t255 type5 oif$D m256 gw- f0",
      "-addr 2001:db8:1::1/64 if$D f82",
      "-addr 2001:db8::1/64 if$D f80",
      "-addr fe80::ff:fe00:1/64 if$D f80",
      "-route 2001:db8:5::/64 t254 type1 oif$V m256 gw- f0",
      "-route fe80::/64 t254 type1 oif$V m256 gw- f0",
      "-route 2001:db8:5::1/128 t255 type2 oif$V m0 gw- f0",
      "-route fe80::ff:fe00:2/128 t255 type2 oif$V m0 gw- f0",
      "-route ff00::/8 t255 type5 oif$V m256 gw- f0",
      "-addr 2001:db8:5::1/64 if$V f80",
      "-addr fe80::ff:fe00:2/64 if$V f80",
      "-addr 10.0.0.2/24 if$D f81",
      "-route 10.0.0.2/32 t255 type2 oif$D m0 gw- f0",
      "-addr 10.0.0.1/24 if$D f80",
      "-route 10.0.0.1/32 t255 type2 oif$D m0 gw- f0",
  };

  for (auto& s : want_up) s = sub(s);
  for (auto& s : want_del) s = sub(s);
  EXPECT_EQ(up, want_up);
  EXPECT_EQ(del, want_del);
  EXPECT_TRUE(inet::list_routes(ctl, n).empty());
  EXPECT_EQ(inet::dst_stats(ctl).live, 0u);
}

// Routes with the same key, metric and device leave in the order the table lists them
// (Linux: fib6_del walks the node's leaf list), not in the order of their addresses.
TEST_F(LifecycleTest, RoutesWithOneKeyAndMetricAreFlushedInTableOrder) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.open(*d));
  std::vector<std::string> gws;
  for (int i = 40; i > 0; --i) gws.push_back(fmt::format("fe80::{:x}", i * 7919 % 4093));
  for (auto& gw : gws) {
    auto r = route_req("2001:db9::", 64);
    r.gateway = ip(gw);
    r.oif = d->ifindex();
    r.excl = false;  // Linux: with NLM_F_EXCL the second is EEXIST (fib6_add_rt2node)
    ASSERT_TRUE(inet::add_route(ctl, n, r));
  }
  // Linux: each joins the first as a sibling (fib6_add_rt2node): one multipath route.
  std::vector<std::string> listed;
  for (auto& r : inet::list_routes(ctl, n, AF_INET6))
    if (r.dst == ip("2001:db9::"))
      for (auto& h : r.nexthops) listed.push_back(h.gateway.to_string());
  ASSERT_EQ(listed, gws);
  struct Gateways : inet::ProtoListener {
    std::vector<std::string> seen;
    void on_addr(Namespace&, inet::ProtoEvent, const inet::AddrInfo&) override {}
    void on_route(Namespace&, inet::ProtoEvent ev, const inet::RouteInfo& r) override {
      if (ev == inet::ProtoEvent::Del && !r.gateway.empty()) seen.push_back(r.gateway.to_string());
    }
  } g;
  {
    Listening listening(ctl, g);
    ASSERT_TRUE(ctl.delete_link(*d));
  }
  EXPECT_EQ(g.seen, gws);
}

// ~Engine unregisters what is left: every protocol state goes and every reference drops
// (the sanitizer builds check that nothing leaks).
TEST_F(LifecycleTest, EngineTeardownWithLoadedDevicesStillPresent) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  for (int i = 0; i < 4; ++i) {
    Device* d = dummy(ctl, fmt::format("d{}", i));
    ASSERT_TRUE(ctl.open(*d));
    ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, fmt::format("10.{}.0.1", i), 24)));
    ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, fmt::format("2001:db8:{}::1", i), 64)));
    auto r = route_req(fmt::format("172.{}.0.0", 16 + i), 16);
    r.gateway = ip(fmt::format("10.{}.0.254", i));
    ASSERT_TRUE(inet::add_route(ctl, n, r));
    ASSERT_TRUE(ctl.create_link(n, vlan_req(fmt::format("d{}.7", i), d->ifindex(), 7)));
  }
  EXPECT_GT(inet::dst_stats(ctl).live, 20u);
}

// Every device slot taken by other plug-ins: the protocols find their per-device state in
// their own table, and behave the same.
class NoDeviceSlotTest : public EngineTest {
 protected:
  NoDeviceSlotTest() { protocols = false; }
  void SetUp() override {
    EngineTest::SetUp();
    {
      auto ctl = engine->control();
      while (engine->claim_device_slot() >= 0) {
      }
    }
    proto::install_all(*engine);
  }
};

TEST_F(NoDeviceSlotTest, AddressesRoutesAndDeleteWork) {
  {
    auto ctl = engine->control();
    Namespace& n = ns(ctl);
    Device* d = dummy(ctl, "d0");
    ASSERT_TRUE(ctl.open(*d));
    ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, "10.0.0.1", 24)));
    ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*d, "2001:db8::1", 64)));
    EXPECT_EQ(inet::list_addresses(ctl, n, AF_INET6, d->ifindex()).size(), 2u);
    EXPECT_EQ(routes_of(ctl, n, AF_INET6, d->ifindex()).size(), 5u);
    ASSERT_TRUE(ctl.delete_link(*d));
    EXPECT_TRUE(inet::list_routes(ctl, n).empty());
    EXPECT_EQ(inet::dst_stats(ctl).live, 0u);
  }
  EXPECT_TRUE(engine->drain(std::chrono::seconds(2)));
  EXPECT_EQ(engine->pending_finalization(), 0u);
}

}  // namespace
}  // namespace ifcore::test
