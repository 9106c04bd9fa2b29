// A namespace's control (Engine::control(Namespace&)): it changes its own namespace, refuses
// what reaches another (EXDEV, nothing changed), and runs beside another namespace's.
// These tests run under ThreadSanitizer in `make tsan` (races, lock order).
#include <sys/socket.h>

#include <linux/if_addr.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/veth.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <set>
#include <thread>
#include <tuple>

#include "base/rcu.h"
#include "ifcore/fdb.h"
#include "ifcore/inet.h"
#include "ifcore/nexthop.h"
#include "support/engine_fixture.h"

namespace ifcore {
namespace {

class NamespaceControlTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    auto ctl = engine->control();
    a = *ctl.create_namespace("a");
    b = *ctl.create_namespace("b");
  }

  static inet::AddrRequest addr4(int ifindex, std::uint32_t ip) {
    inet::AddrRequest r;
    r.family = AF_INET;
    r.ifindex = ifindex;
    r.prefixlen = 24;
    r.local = r.address = IpAddr::v4(ip);
    return r;
  }
  static inet::AddrRequest addr6(int ifindex, std::string_view ip) {
    inet::AddrRequest r;
    r.family = AF_INET6;
    r.ifindex = ifindex;
    r.prefixlen = 64;
    r.local = r.address = *IpAddr::parse(ip);
    r.flags = IFA_F_NODAD;
    return r;
  }
  static LinkRequest veth_req(std::string name, std::string peer, std::string peer_ns) {
    LinkRequest r = test::link_req("veth", std::move(name));
    auto p = std::make_shared<LinkRequest>();
    p->name = std::move(peer);
    p->net_ns_name = std::move(peer_ns);
    Attr a{VETH_INFO_PEER, AttrShape::LinkMsg};
    a.link = std::move(p);
    r.has_info_data = true;
    r.info_data.push_back(std::move(a));
    return r;
  }
  std::size_t devices(Namespace& ns) {
    auto ctl = engine->control();
    return ns.devices_locked().size();
  }

  Namespace* a = nullptr;
  Namespace* b = nullptr;
};

TEST_F(NamespaceControlTest, ItChangesItsOwnNamespaceAndCountsWhenItGoes) {
  const auto before = engine->stats().devices_registered;
  {
    auto ctl = engine->control(*a);
    EXPECT_EQ(ctl.scope(), a);
    auto d = ctl.create_link(*a, test::link_req("dummy", "d0"));
    ASSERT_TRUE(d) << d.error().message;
    ASSERT_TRUE(ctl.open(**d));
    ASSERT_TRUE(inet::add_address(ctl, *a, addr4((*d)->ifindex(), 0x0a000001)));
    ASSERT_TRUE(inet::add_address(ctl, *a, addr6((*d)->ifindex(), "2001:db8::1")));
    inet::RouteRequest rt;
    rt.family = AF_INET;
    rt.dst = IpAddr::v4(0x0a010000);
    rt.dst_len = 16;
    rt.gateway = IpAddr::v4(0x0a000002);
    ASSERT_TRUE(inet::add_route(ctl, *a, rt));
    EXPECT_EQ(inet::list_addresses(ctl, *a, AF_INET, (*d)->ifindex()).size(), 1u);
    // Kept in the control's tally until it goes.
    EXPECT_EQ(engine->stats().devices_registered, before);
  }
  EXPECT_EQ(engine->stats().devices_registered, before + 1);
  auto ctl = engine->control();
  Device* d = ctl.find(*a, "d0");
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->is_up());
  EXPECT_EQ(inet::list_routes(ctl, *a, AF_INET).size(), 4u);  // prefix, local, broadcast, the one
}

TEST_F(NamespaceControlTest, WhatReachesAnotherNamespaceFailsWithExdevAndChangesNothing) {
  Device* in_b;
  Device* end_a;
  {
    auto ctl = engine->control();
    in_b = *ctl.create_link(*b, test::link_req("dummy", "db"));
    auto v = ctl.create_link(*a, veth_req("va", "vb", "b"));
    ASSERT_TRUE(v) << v.error().message;
    end_a = *v;
  }
  const std::size_t in_a = devices(*a), in_b_count = devices(*b);
  {
    auto ctl = engine->control(*a);
    auto expect_exdev = [](const auto& r) {
      ASSERT_FALSE(r);
      EXPECT_EQ(r.error().code, EXDEV) << r.error().message;
    };
    expect_exdev(ctl.create_link(*b, test::link_req("dummy", "x")));
    expect_exdev(ctl.create_link(*a, veth_req("v2a", "v2b", "b")));
    expect_exdev(ctl.open(*in_b));
    expect_exdev(ctl.delete_link(*in_b));
    expect_exdev(ctl.set_mtu(*in_b, 1400));
    // The veth's end here is linked to one in b: opening it sets the peer's carrier.
    expect_exdev(ctl.open(*end_a));
    expect_exdev(ctl.delete_link(*end_a));
    LinkRequest move;
    move.net_ns_name = "b";
    Device* mine = *ctl.create_link(*a, test::link_req("dummy", "mine"));
    expect_exdev(ctl.change_link(*mine, move));
    expect_exdev(ctl.create_namespace("c"));
    expect_exdev(ctl.destroy_namespace(*b));
    expect_exdev(inet::add_address(ctl, *b, addr4(in_b->ifindex(), 0x0a000001)));
    ASSERT_TRUE(ctl.delete_link(*mine));
  }
  EXPECT_EQ(devices(*a), in_a);
  EXPECT_EQ(devices(*b), in_b_count);
  auto ctl = engine->control();
  EXPECT_FALSE(in_b->is_up());
  EXPECT_EQ(in_b->mtu(), 1500u);
  EXPECT_FALSE(end_a->is_up());
  EXPECT_EQ(ctl.find(*b, "v2b"), nullptr);
  EXPECT_EQ(ctl.find_namespace("c"), nullptr);
}

// An idle device made and deleted under a namespace's control (without the plug-in lock when
// nothing of the engine's is touched) has the settings one made under the engine's has,
// before and after a write of the namespace's defaults, and the settings stay with the
// devices that remain.
TEST_F(NamespaceControlTest, IdleDevicesTakeTheSameSettingsUnderEitherControl) {
  auto settings = [&](const char* name) {
    auto ctl = engine->control();
    int ifindex = ctl.find(*a, name)->ifindex();
    auto c4 = inet::inet4_conf(ctl, *a, ifindex);
    auto c6 = inet::inet6_conf(ctl, *a, ifindex);
    EXPECT_TRUE(c4 && c6);
    return std::tuple{c4->forwarding, c6->forwarding, c6->disable_ipv6};
  };
  auto make = [&](bool scoped, const char* name) {
    auto ctl = scoped ? engine->control(*a) : engine->control();
    ASSERT_TRUE(ctl.create_link(*a, test::link_req("dummy", name)));
  };
  make(true, "n1");
  make(false, "e1");
  EXPECT_EQ(settings("n1"), settings("e1"));
  {
    auto ctl = engine->control(*a);
    auto d = inet::inet6_conf(ctl, *a, inet::kConfDefault);
    ASSERT_TRUE(d);
    d->forwarding = 1;
    ASSERT_TRUE(inet::set_inet6_conf(ctl, *a, inet::kConfDefault, *d));
  }
  make(true, "n2");
  make(false, "e2");
  EXPECT_EQ(settings("n2"), settings("e2"));
  EXPECT_EQ(std::get<1>(settings("n2")), 1);
  EXPECT_EQ(std::get<1>(settings("n1")), 0);  // made before the write
  {
    auto ctl = engine->control(*a);
    ASSERT_TRUE(ctl.delete_link(*ctl.find(*a, "e1")));
    ASSERT_TRUE(ctl.delete_link(*ctl.find(*a, "n2")));
  }
  EXPECT_EQ(std::get<1>(settings("n1")), 0);
  EXPECT_EQ(std::get<1>(settings("e2")), 1);
}

// Thread one holds a's control until thread two, with b's, has made, configured and
// deleted its devices: with one lock for the engine, thread two would wait for ever.
TEST_F(NamespaceControlTest, TwoNamespacesChangeAtOnce) {
  std::promise<void> b_done;
  auto b_finished = b_done.get_future();
  std::atomic<bool> a_held{false};
  std::thread one([&] {
    auto ctl = engine->control(*a);
    ASSERT_TRUE(ctl.create_link(*a, test::link_req("dummy", "held")));
    a_held = true;
    // Liveness, not speed: a minute is a hang, not a slow machine.
    EXPECT_EQ(b_finished.wait_for(std::chrono::minutes(1)), std::future_status::ready);
  });
  while (!a_held) std::this_thread::yield();
  std::thread two([&] {
    auto ctl = engine->control(*b);
    std::vector<Device*> made;
    for (int i = 0; i < 20; ++i) {
      auto d = ctl.create_link(*b, test::link_req("dummy", fmt::format("b{}", i)));
      ASSERT_TRUE(d);
      ASSERT_TRUE(ctl.open(**d));
      ASSERT_TRUE(inet::add_address(ctl, *b, addr4((*d)->ifindex(), 0x0a000001 + (i << 8))));
      made.push_back(*d);
    }
    ASSERT_TRUE(ctl.delete_links(made));
    b_done.set_value();
  });
  two.join();
  one.join();
  auto ctl = engine->control();
  EXPECT_NE(ctl.find(*a, "held"), nullptr);
  EXPECT_EQ(ctl.find(*b, "b0"), nullptr);
}

// Device ids are taken by each thread in runs: two writers at once still never give two
// devices the same one, and a thread's own devices get theirs in order.
TEST_F(NamespaceControlTest, DeviceIdsStayUniqueAcrossWriters) {
  constexpr int kDevices = 300;  // several runs each
  std::vector<std::uint64_t> ids[2];
  auto writer = [&](Namespace* ns, std::vector<std::uint64_t>& out) {
    auto ctl = engine->control(*ns);
    for (int i = 0; i < kDevices; ++i) {
      auto d = ctl.create_link(*ns, test::link_req("dummy", fmt::format("u{}", i)));
      ASSERT_TRUE(d);
      out.push_back((*d)->id());
    }
  };
  std::thread wa(writer, a, std::ref(ids[0])), wb(writer, b, std::ref(ids[1]));
  wa.join();
  wb.join();
  std::set<std::uint64_t> all;
  for (auto& v : ids) {
    ASSERT_EQ(v.size(), static_cast<std::size_t>(kDevices));
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.size(), 2u * kDevices);
}

// Two writers churn their own namespaces (dummies one by one and in a batch, veth pairs
// under the plug-in lock, addresses of both families, routes, downs, batch deletes) while a
// third thread takes the engine's control and checks every namespace, and lock-free
// readers look devices up. Each namespace ends with its loopback alone, every device is
// counted once, and nothing leaks (ASan) or races (TSan).
TEST_F(NamespaceControlTest, ParallelChurnKeepsEveryNamespaceWhole) {
  constexpr int kRounds = 30, kDevices = 12;
  const auto before = engine->stats();
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  auto writer = [&](Namespace* ns, int id) {
    for (int round = 0; round < kRounds; ++round) {
      auto ctl = engine->control(*ns);
      std::vector<Device*> made;
      for (int i = 0; i < kDevices; ++i) {
        auto d = ctl.create_link(*ns, test::link_req("dummy", fmt::format("w{}", i)));
        if (!d || !ctl.open(**d)) return void(++failures);
        std::uint32_t net = 0x0a000000u | (static_cast<std::uint32_t>(id) << 16) |
                            (static_cast<std::uint32_t>(i) << 8);
        if (!inet::add_address(ctl, *ns, addr4((*d)->ifindex(), net + 1))) return void(++failures);
        if (!inet::add_address(ctl, *ns, addr6((*d)->ifindex(), fmt::format("2001:db8:{}::1", i))))
          return void(++failures);
        made.push_back(*d);
      }
      std::vector<LinkRequest> batch;
      for (int i = 0; i < kDevices; ++i)
        batch.push_back(test::link_req("dummy", fmt::format("x{}", i)));
      auto more = ctl.create_links(*ns, batch);
      if (!more) return void(++failures);
      made.insert(made.end(), more->begin(), more->end());
      auto v = ctl.create_link(*ns, veth_req("ve0", "ve1", ns->name()));
      if (!v) return void(++failures);
      made.push_back(*v);
      // State that the Unregister pass's subscribers serve under the plug-in lock: a
      // permanent neighbour, a nexthop, a device's own fdb list.
      inet::NeighRequest nq;
      nq.family = AF_INET;
      nq.ifindex = (*v)->ifindex();
      nq.dst = IpAddr::v4(0x0a630001u);
      nq.lladdr = *HwAddr::parse("02:00:00:00:00:05");
      nq.state = NUD_PERMANENT;
      if (!inet::add_neigh(ctl, *ns, nq)) return void(++failures);
      inet::NexthopRequest hq;
      hq.family = AF_INET;
      hq.gateway = IpAddr::v4(0x0a000000u | (static_cast<std::uint32_t>(id) << 16) | (1u << 8) | 2);
      hq.oif = made[1]->ifindex();
      if (!inet::add_nexthop(ctl, *ns, hq)) return void(++failures);
      fdb::Request fq;
      fq.ifindex = made[2]->ifindex();
      fq.lladdr = *HwAddr::parse("02:00:00:00:00:06");
      fq.flags = NTF_SELF;
      fq.state = NUD_PERMANENT;
      fq.nlflags = NLM_F_CREATE | NLM_F_EXCL;
      if (!fdb::add(ctl, *ns, fq)) return void(++failures);
      if (!ctl.close(*made[0])) return void(++failures);
      if (!ctl.delete_links(made)) return void(++failures);
    }
  };
  std::thread checker([&] {
    while (!stop) {
      auto ctl = engine->control();
      for (Namespace* ns : ctl.namespaces())
        for (Device* d : ns->devices_locked())
          if (&d->ns() != ns || d->state() != RegState::Registered) ++failures;
    }
  });
  std::thread reader([&] {
    while (!stop) {
      rcu::ReadGuard g;
      for (Namespace* ns : {a, b})
        if (Device* d = ns->find_by_name_rcu("w3"); d && d->name_rcu() != "w3") ++failures;
    }
  });
  std::thread wa(writer, a, 1), wb(writer, b, 2);
  wa.join();
  wb.join();
  stop = true;
  checker.join();
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(devices(*a), 1u);  // lo
  EXPECT_EQ(devices(*b), 1u);
  auto after = engine->stats();
  const std::uint64_t per_ns = kRounds * (2 * kDevices + 2);
  EXPECT_EQ(after.devices_registered - before.devices_registered, 2 * per_ns);
  EXPECT_EQ(after.devices_unregistered - before.devices_unregistered, 2 * per_ns);
}

}  // namespace
}  // namespace ifcore
