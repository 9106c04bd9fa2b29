// The order in which address and route changes are announced, as `ip monitor` shows Linux
// 6.18 announcing them: an IPv6 address added (its prefix route, the address tentative,
// then final with its local route) and deleted, the link-local address of a device that
// comes up, IPv4 deletes with and without promotion, a metric change, the settings
// announced again at a rename, and what a deleted route's message carries.
#include <linux/veth.h>

#include <chrono>

#include "ifcore/clock.h"
#include "proto/helpers.h"

namespace ifcore::test {
namespace {

using namespace std::chrono_literals;

// "+addr 2001:db8::1/64 T" (T: tentative), "+route 2001:db8::/64 t254 m256 exp" (exp: it
// carries an expiry), "-netconf 10 if3" (family, ifindex).
struct OrderRecorder : inet::ProtoListener {
  std::vector<std::string> events;
  static char sign(inet::ProtoEvent ev) { return ev == inet::ProtoEvent::New ? '+' : '-'; }
  void on_addr(Namespace&, inet::ProtoEvent ev, const inet::AddrInfo& a) override {
    events.push_back(fmt::format("{}addr {}/{}{}", sign(ev), a.local.to_string(), a.prefixlen,
                                 a.flags & IFA_F_TENTATIVE ? " T" : ""));
  }
  void on_route(Namespace&, inet::ProtoEvent ev, const inet::RouteInfo& r) override {
    events.push_back(fmt::format("{}route {}/{} t{} m{}{}", sign(ev), r.dst.to_string(), r.dst_len,
                                 r.table, r.priority, r.expires ? " exp" : ""));
  }
  void on_netconf(Namespace&, inet::ProtoEvent ev, const inet::NetconfInfo& n) override {
    events.push_back(fmt::format("{}netconf {} if{}", sign(ev), n.family, n.ifindex));
  }
};

class AddrNotifyTest : public EngineTest {
 protected:
  void configure(EngineConfig& cfg) override { cfg.time = clock; }
  void SetUp() override {
    EngineTest::SetUp();
    auto ctl = engine->control();
    inet::add_listener(ctl, rec);
  }
  void TearDown() override {
    {
      auto ctl = engine->control();
      inet::remove_listener(ctl, rec);
    }
    EngineTest::TearDown();
  }
  // A veth pair v0/v1 with fixed addresses (v0: 02::01, v1: 02::02), both down.
  Device* veth_pair(Control& ctl) {
    auto peer = std::make_shared<LinkRequest>();
    peer->name = "v1";
    peer->address = HwAddr::ethernet({2, 0, 0, 0, 0, 2});
    Attr a{VETH_INFO_PEER, AttrShape::LinkMsg};
    a.link = peer;
    LinkRequest req = link_req("veth", "v0");
    req.address = HwAddr::ethernet({2, 0, 0, 0, 0, 1});
    req.has_info_data = true;
    req.info_data = {a};
    auto made = ctl.create_link(ns(ctl), req);
    EXPECT_TRUE(made) << made.error().message;
    return made ? *made : nullptr;
  }
  std::vector<std::string> take() { return std::exchange(rec.events, {}); }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
  OrderRecorder rec;
};

// Linux: inet6_addr_add — the prefix route (addrconf_prefix_route), the address while
// tentative (ipv6_ifa_notify(0)), then, DAD over, the address again and its local route
// (addrconf_dad_completed, __ipv6_ifa_notify); nodad: never tentative. ipv6_del_addr: the
// address, its local route, then its prefix route (cleanup_prefix_route).
TEST_F(AddrNotifyTest, Ipv6AddressAddAndDelete) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.open(*d));
  take();
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64)));
  EXPECT_EQ(take(),
            (std::vector<std::string>{"+route 2001:db8::/64 t254 m256", "+addr 2001:db8::1/64 T",
                                      "+addr 2001:db8::1/64", "+route 2001:db8::1/128 t255 m0"}));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8:1::1", 64, IFA_F_NODAD)));
  EXPECT_EQ(take(),
            (std::vector<std::string>{"+route 2001:db8:1::/64 t254 m256", "+addr 2001:db8:1::1/64",
                                      "+route 2001:db8:1::1/128 t255 m0"}));
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64)));
  EXPECT_EQ(take(),
            (std::vector<std::string>{"-addr 2001:db8::1/64", "-route 2001:db8::1/128 t255 m0",
                                      "-route 2001:db8::/64 t254 m256"}));
  // Linux: inet6_addr_modify with a new metric — the address, then the prefix route of the
  // old metric goes and one of the new comes (modify_prefix_route).
  auto m = addr_req(*d, "2001:db8:1::1", 64, IFA_F_NODAD);
  m.replace = true;
  m.rt_priority = 100;
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), m));
  EXPECT_EQ(take(),
            (std::vector<std::string>{"+addr 2001:db8:1::1/64", "-route 2001:db8:1::/64 t254 m256",
                                      "+route 2001:db8:1::/64 t254 m100"}));
}

// Linux: addrconf_dev_config once the link is ready — ff00::/8 (addrconf_add_mroute), the
// link-local prefix route (addrconf_add_linklocal), then, DAD over, the address and its
// local route; never announced tentative. A carrier that goes and comes back (IF_READY
// still set) makes no second link-local address, though the device's address changed.
TEST_F(AddrNotifyTest, LinkLocalAddressOnceTheLinkIsReady) {
  auto ctl = engine->control();
  Device* v0 = veth_pair(ctl);
  ASSERT_TRUE(v0);
  Device* v1 = ctl.find(ns(ctl), "v1");
  ASSERT_TRUE(ctl.open(*v1));
  take();
  ASSERT_TRUE(ctl.open(*v0));
  std::vector<std::string> up = take();
  const std::vector<std::string> v0_first(up.begin(), up.begin() + 4);
  EXPECT_EQ(v0_first, (std::vector<std::string>{
                          "+route ff00::/8 t255 m256", "+route fe80::/64 t254 m256",
                          "+addr fe80::ff:fe00:1/64", "+route fe80::ff:fe00:1/128 t255 m0"}));
  ASSERT_TRUE(ctl.set_address(*v0, HwAddr::ethernet({2, 0, 0, 0, 0, 9})));
  ASSERT_TRUE(ctl.close(*v1));
  ASSERT_TRUE(ctl.open(*v1));
  auto list = inet::list_addresses(ctl, ns(ctl), AF_INET6, v0->ifindex());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].local, ip("fe80::ff:fe00:1"));
  // Down and up again: configured anew, from the address it has now.
  ASSERT_TRUE(ctl.close(*v0));
  ASSERT_TRUE(ctl.open(*v0));
  list = inet::list_addresses(ctl, ns(ctl), AF_INET6, v0->ifindex());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].local, ip("fe80::ff:fe00:9"));
}

// Linux: addrconf_ifdown with keep_addr_on_down keeps a permanent address, tentative, and
// does not announce it; at the next up its DAD (started at NETDEV_UP by
// fixup_permanent_addr) ends before the new link-local address's.
TEST_F(AddrNotifyTest, KeptAddressesComeBackBeforeTheLinkLocalAddress) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.set_address(*d, HwAddr::ethernet({2, 0, 0, 0, 0, 1})));
  auto c = inet::inet6_conf(ctl, ns(ctl), d->ifindex());
  ASSERT_TRUE(c);
  c->keep_addr_on_down = 1;
  ASSERT_TRUE(inet::set_inet6_conf(ctl, ns(ctl), d->ifindex(), *c));
  ASSERT_TRUE(ctl.open(*d));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "2001:db8::1", 64)));
  take();
  ASSERT_TRUE(ctl.close(*d));
  for (const std::string& e : take()) EXPECT_EQ(e.find("addr 2001:db8::1"), std::string::npos) << e;
  ASSERT_TRUE(ctl.open(*d));
  EXPECT_EQ(take(),
            (std::vector<std::string>{"+route 2001:db8::/64 t254 m256", "+route ff00::/8 t255 m256",
                                      "+route fe80::/64 t254 m256", "+addr 2001:db8::1/64",
                                      "+route 2001:db8::1/128 t255 m0", "+addr fe80::ff:fe00:1/64",
                                      "+route fe80::ff:fe00:1/128 t255 m0"}));
}

// Linux: fib_del_ifaddr — the prefix route, the broadcast route, then the local one; with
// promote_secondaries (__inet_del_ifa) the subnet's secondaries lose their routes before
// the primary is announced deleted, and the promoted address comes back with its routes.
TEST_F(AddrNotifyTest, Ipv4DeleteWithAndWithoutPromotion) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.open(*d));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  take();
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  EXPECT_EQ(take(), (std::vector<std::string>{"-addr 10.0.0.1/24", "-route 10.0.0.0/24 t254 m0",
                                              "-route 10.0.0.255/32 t255 m0",
                                              "-route 10.0.0.1/32 t255 m0"}));
  inet::Inet4Conf c;
  c.promote_secondaries = true;
  ASSERT_TRUE(inet::set_inet4_conf(ctl, ns(ctl), d->ifindex(), c));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.2", 24)));
  take();
  ASSERT_TRUE(inet::delete_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  EXPECT_EQ(take(),
            (std::vector<std::string>{"-route 10.0.0.2/32 t255 m0", "-addr 10.0.0.1/24",
                                      "-route 10.0.0.0/24 t254 m0", "-route 10.0.0.255/32 t255 m0",
                                      "-route 10.0.0.1/32 t255 m0", "+addr 10.0.0.2/24",
                                      "+route 10.0.0.2/32 t255 m0", "+route 10.0.0.0/24 t254 m0",
                                      "+route 10.0.0.255/32 t255 m0"}));
  // Linux: fib_modify_prefix_metric — the route of the new metric, the old one's deletion,
  // then the address.
  auto m = addr_req(*d, "10.0.0.2", 24);
  m.replace = true;
  m.rt_priority = 50;
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), m));
  EXPECT_EQ(take(), (std::vector<std::string>{"+route 10.0.0.0/24 t254 m50",
                                              "-route 10.0.0.0/24 t254 m0", "+addr 10.0.0.2/24"}));
}

// Linux: inetdev_event and addrconf_notify at NETDEV_CHANGENAME unregister and register the
// device's settings: RTM_DELNETCONF, then RTM_NEWNETCONF, IPv4 then IPv6 — a device that
// never had an address too.
TEST_F(AddrNotifyTest, RenameAnnouncesTheSettingsAgain) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  const int i = d->ifindex();
  take();
  ASSERT_TRUE(ctl.rename(*d, "e0"));
  const std::vector<std::string> want = {
      fmt::format("-netconf {} if{}", AF_INET, i), fmt::format("+netconf {} if{}", AF_INET, i),
      fmt::format("-netconf {} if{}", AF_INET6, i), fmt::format("+netconf {} if{}", AF_INET6, i)};
  EXPECT_EQ(take(), want);
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  take();
  ASSERT_TRUE(ctl.rename(*d, "f0"));
  std::vector<std::string> with_addr = {"+addr 10.0.0.1/24"};
  with_addr.insert(with_addr.end(), want.begin(), want.end());
  EXPECT_EQ(take(), with_addr);
}

// Linux: fib6_purge_rt clears an IPv6 route's expiry before its RTM_DELROUTE, as the
// routes of a deleted device go.
TEST_F(AddrNotifyTest, DeletedRoutesCarryNoExpiry) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.open(*d));
  auto a = addr_req(*d, "2001:db8::1", 64);
  a.valid_lft = 100;
  a.preferred_lft = 50;
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), a));
  auto events = take();
  EXPECT_NE(std::find(events.begin(), events.end(), "+route 2001:db8::/64 t254 m256 exp"),
            events.end());
  ASSERT_TRUE(ctl.delete_link(*d));
  events = take();
  EXPECT_NE(std::find(events.begin(), events.end(), "-route 2001:db8::/64 t254 m256"),
            events.end());
  for (const std::string& e : events) EXPECT_EQ(e.find(" exp"), std::string::npos) << e;
}

}  // namespace
}  // namespace ifcore::test
