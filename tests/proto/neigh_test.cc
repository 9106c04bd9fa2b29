// Neighbour entries: updates as Linux's neigh_add/__neigh_update make them, the ARP and ND
// constructors, proxies, notifications, and what a carrier loss, a down, an address change
// and an unregister take away (the entries hold their device).
#include <linux/neighbour.h>

#include <gtest/gtest.h>

#include "proto/helpers.h"

namespace ifcore::test {
namespace {

class NeighTest : public EngineTest {
 protected:
  // A dummy that does ARP (Linux's dummy is NOARP, which makes every entry NOARP), up.
  Device* arp_dummy(Control& ctl, const std::string& name) {
    Device* d = dummy(ctl, name);
    EXPECT_TRUE(ctl.change_flags(*d, (d->flags() & ~IFF_NOARP) | IFF_UP));
    return d;
  }
  static inet::NeighRequest req(Device* d, std::string_view dst, std::string_view ll = "",
                                std::uint16_t state = NUD_PERMANENT) {
    inet::NeighRequest r;
    r.dst = ip(dst);
    r.family = r.dst->family();
    r.ifindex = d ? d->ifindex() : 0;
    if (!ll.empty()) r.lladdr = *HwAddr::parse(ll);
    r.state = state;
    return r;
  }
  std::vector<inet::NeighInfo> shown(Control& ctl, bool proxy = false) {
    return inet::list_neighs(ctl, ns(ctl), AF_UNSPEC, proxy);
  }
};

struct NeighRecorder : inet::ProtoListener {
  std::vector<std::string> events;
  void on_neigh(Namespace&, inet::ProtoEvent ev, const inet::NeighInfo& n) override {
    events.push_back(fmt::format("{}{} {:#x}", ev == inet::ProtoEvent::New ? '+' : '-',
                                 n.dst.to_string(), n.state));
  }
};

TEST_F(NeighTest, AddReplaceChangeAndDeleteAsLinux) {
  auto ctl = engine->control();
  Device* d = arp_dummy(ctl, "d0");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  NeighRecorder rec;
  inet::add_listener(ctl, rec);
  auto a = inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.5", "02:00:00:00:00:05"));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->state, NUD_PERMANENT);
  EXPECT_EQ(a->lladdr->to_string(), "02:00:00:00:00:05");
  // ip neigh add of an existing entry (create+excl): EEXIST, without extack.
  auto again = inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.5", "02:00:00:00:00:05"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, EEXIST);
  EXPECT_TRUE(again.error().log_only);
  // change (replace, no create) of a missing entry: ENOENT.
  auto change = req(d, "10.0.0.99", "02:00:00:00:00:99");
  change.create = change.excl = false;
  change.replace = true;
  auto missing = inet::add_neigh(ctl, ns(ctl), change);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ENOENT);
  // A short link-layer address, and none for a destination that needs one: EINVAL, and
  // nothing is left behind.
  auto short_ll = inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.6", "02:00:00:00"));
  ASSERT_FALSE(short_ll);
  EXPECT_EQ(short_ll.error().message, "Invalid link address");
  auto none = inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.7"));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, EINVAL);
  EXPECT_EQ(none.error().message, "No link layer address given");
  EXPECT_EQ(shown(ctl).size(), 1u);
  // replace: the new address and state; the same again announces nothing.
  auto rep = req(d, "10.0.0.5", "02:00:00:00:00:15", NUD_STALE);
  rep.excl = false;
  rep.replace = true;
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), rep));
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), rep));
  auto got = inet::get_neigh(ctl, ns(ctl), req(d, "10.0.0.5"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->state, NUD_STALE);
  EXPECT_EQ(got->lladdr->to_string(), "02:00:00:00:00:15");
  EXPECT_EQ(got->confirmed, 6000u);  // unconfirmed: 2 x base_reachable_time ago, in ticks
  // change to permanent without an address keeps the one it has.
  auto perm = req(d, "10.0.0.5", "", NUD_PERMANENT);
  perm.create = perm.excl = false;
  perm.replace = true;
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), perm));
  // delete: announced as it turns FAILED, then gone.
  ASSERT_TRUE(inet::delete_neigh(ctl, ns(ctl), req(d, "10.0.0.5")));
  auto gone = inet::delete_neigh(ctl, ns(ctl), req(d, "10.0.0.5"));
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ENOENT);
  auto get_gone = inet::get_neigh(ctl, ns(ctl), req(d, "10.0.0.5"));
  ASSERT_FALSE(get_gone);
  EXPECT_EQ(get_gone.error().message, "Neighbour entry not found");
  EXPECT_EQ(rec.events,
            (std::vector<std::string>{"+10.0.0.5 0x80", "+10.0.0.5 0x4", "+10.0.0.5 0x80",
                                      "+10.0.0.5 0x20", "-10.0.0.5 0x20"}));
  inet::remove_listener(ctl, rec);
}

TEST_F(NeighTest, ConstructorsResolveWhatNeedsNoResolution) {
  auto ctl = engine->control();
  Device* d = arp_dummy(ctl, "d0");
  // No IPv4 address in the namespace yet: no local table, every destination is broadcast.
  auto early = inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.7", "02:00:00:00:00:07"));
  ASSERT_TRUE(early);
  EXPECT_EQ(early->type, RTN_BROADCAST);
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  auto bcast = inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.255"));
  ASSERT_TRUE(bcast) << bcast.error().message;
  EXPECT_EQ(bcast->lladdr->to_string(), "ff:ff:ff:ff:ff:ff");
  EXPECT_EQ(bcast->type, RTN_BROADCAST);
  auto mc4 = inet::add_neigh(ctl, ns(ctl), req(d, "224.0.0.5"));
  ASSERT_TRUE(mc4);
  EXPECT_EQ(mc4->lladdr->to_string(), "01:00:5e:00:00:05");
  EXPECT_EQ(mc4->type, RTN_MULTICAST);
  auto mc6 = inet::add_neigh(ctl, ns(ctl), req(d, "ff02::5"));
  ASSERT_TRUE(mc6);
  EXPECT_EQ(mc6->lladdr->to_string(), "33:33:00:00:00:05");
  auto uni = inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.8", "02:00:00:00:00:08"));
  ASSERT_TRUE(uni);
  EXPECT_EQ(uni->type, RTN_UNICAST);
  // On a NOARP device every entry is resolved: the device's own address.
  Device* n = dummy(ctl, "n0");
  auto noarp = inet::add_neigh(ctl, ns(ctl), req(n, "10.0.0.9"));
  ASSERT_TRUE(noarp);
  EXPECT_EQ(*noarp->lladdr, n->address());
  // A DELAY entry turns PROBE at once, one probe sent (Linux's zero-delay timer).
  auto delay = inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.10", "02:00:00:00:00:10", NUD_DELAY));
  ASSERT_TRUE(delay);
  EXPECT_EQ(delay->state, NUD_PROBE);
  EXPECT_EQ(delay->probes, 1u);
  EXPECT_EQ(delay->refcnt, 1u);
  // An incomplete entry keeps no address.
  auto inc =
      inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.11", "02:00:00:00:00:11", NUD_INCOMPLETE));
  ASSERT_TRUE(inc);
  EXPECT_FALSE(inc->lladdr);
}

TEST_F(NeighTest, CarrierDownAddressChangeDownAndUnregisterFlush) {
  auto ctl = engine->control();
  Device* d = arp_dummy(ctl, "d0");
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.5", "02:00:00:00:00:05")));
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.6", "02:00:00:00:00:06", NUD_STALE)));
  auto proxy = req(d, "10.0.0.9");
  proxy.flags = NTF_PROXY;
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), proxy));
  auto anywhere = req(nullptr, "10.0.0.8");
  anywhere.flags = NTF_PROXY;
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), anywhere));
  EXPECT_EQ(shown(ctl, true).size(), 2u);
  // Carrier loss: the permanent entry stays (neigh_carrier_down).
  ctl.set_carrier(*d, false);
  auto left = shown(ctl);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].dst, ip("10.0.0.5"));
  ctl.set_carrier(*d, true);
  // A new hardware address: every entry goes (neigh_changeaddr), proxies stay.
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.6", "02:00:00:00:00:06", NUD_STALE)));
  ASSERT_TRUE(ctl.set_address(*d, *HwAddr::parse("02:11:22:33:44:55")));
  EXPECT_TRUE(shown(ctl).empty());
  EXPECT_EQ(shown(ctl, true).size(), 2u);
  // Down: everything of the device, the permanent entries and its proxies too.
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.5", "02:00:00:00:00:05")));
  ASSERT_TRUE(ctl.close(*d));
  EXPECT_TRUE(shown(ctl).empty());
  auto proxies = shown(ctl, true);
  ASSERT_EQ(proxies.size(), 1u);
  EXPECT_EQ(proxies[0].ifindex, 0);
  // Unregister: the entries let go of the device.
  ASSERT_TRUE(ctl.open(*d));
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(
        inet::add_neigh(ctl, ns(ctl), req(d, fmt::format("10.0.1.{}", i), "02:00:00:00:01:00")));
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), proxy));
  EXPECT_EQ(inet::neigh_count(ctl), 10u);
  ASSERT_TRUE(ctl.delete_link(*d));
  EXPECT_EQ(inet::neigh_count(ctl), 0u);
  EXPECT_EQ(shown(ctl, true).size(), 1u);
  EXPECT_EQ(ctl.find(ns(ctl), "d0"), nullptr);
  // An IPv6 proxy needs a device (ND joins its solicited-node group there): ENOBUFS alone.
  auto v6 = req(nullptr, "2001:db8::8");
  v6.flags = NTF_PROXY;
  auto refused = inet::add_neigh(ctl, ns(ctl), v6);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ENOBUFS);
  EXPECT_TRUE(refused.error().log_only);
}

// Linux: __neigh_update announces an invalid state only when the old one was valid (or an
// incomplete entry fails), so a new entry added `incomplete`, `failed` or `none` is silent;
// a flush goes through arp_tbl, then nd_tbl, each newest first.
TEST_F(NeighTest, AnnouncementsOfNewInvalidEntriesAndFlushOrder) {
  auto ctl = engine->control();
  Device* d = arp_dummy(ctl, "d0");
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.100", 24)));
  NeighRecorder rec;
  inet::add_listener(ctl, rec);
  for (std::uint16_t st : {NUD_INCOMPLETE, NUD_FAILED, NUD_NONE})
    ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), req(d, fmt::format("10.0.0.{}", st), "", st)));
  EXPECT_TRUE(rec.events.empty());
  auto fail = req(d, "10.0.0.1", "", NUD_FAILED);  // incomplete -> failed: announced
  fail.excl = false;
  fail.replace = true;
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), fail));
  EXPECT_EQ(rec.events, std::vector<std::string>{"+10.0.0.1 0x20"});
  rec.events.clear();
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), req(d, "2001:db8::5", "02:00:00:00:00:05")));
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), req(d, "10.0.0.6", "02:00:00:00:00:06")));
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), req(d, "2001:db8::6", "02:00:00:00:00:06")));
  rec.events.clear();
  ASSERT_TRUE(ctl.close(*d));
  EXPECT_EQ(rec.events,
            (std::vector<std::string>{"-10.0.0.6 0x80", "-10.0.0.0 0x0", "-10.0.0.32 0x20",
                                      "-10.0.0.1 0x20", "-2001:db8::6 0x80", "-2001:db8::5 0x80"}));
  inet::remove_listener(ctl, rec);
}

TEST_F(NeighTest, ProxiesAndErrors) {
  auto ctl = engine->control();
  Device* d = arp_dummy(ctl, "d0");
  auto p = req(d, "2001:db8::99");
  p.flags = NTF_PROXY;
  auto made = inet::add_neigh(ctl, ns(ctl), p);
  ASSERT_TRUE(made);
  EXPECT_EQ(made->flags, NTF_PROXY);
  EXPECT_TRUE(inet::get_neigh(ctl, ns(ctl), p));
  auto other = req(d, "2001:db8::98");
  other.flags = NTF_PROXY;
  auto missing = inet::get_neigh(ctl, ns(ctl), other);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "Proxy neighbour entry not found");
  auto del = inet::delete_neigh(ctl, ns(ctl), other);
  ASSERT_FALSE(del);
  EXPECT_EQ(del.error().code, ENOENT);
  ASSERT_TRUE(inet::delete_neigh(ctl, ns(ctl), p));
  EXPECT_TRUE(shown(ctl, true).empty());
  // No device: "Device not specified"; no destination: "Network address not specified".
  auto nodev = inet::add_neigh(ctl, ns(ctl), req(nullptr, "10.0.0.1", "02:00:00:00:00:01"));
  ASSERT_FALSE(nodev);
  EXPECT_EQ(nodev.error().message, "Device not specified");
  inet::NeighRequest nodst;
  nodst.family = AF_INET;
  nodst.ifindex = d->ifindex();
  auto e = inet::add_neigh(ctl, ns(ctl), nodst);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message, "Network address not specified");
  auto wrong = req(d, "2001:db8::1", "02:00:00:00:00:01");
  wrong.family = AF_INET;
  auto w = inet::add_neigh(ctl, ns(ctl), wrong);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message, "Invalid network address");
  auto unknown = req(d, "10.0.0.1", "02:00:00:00:00:01");
  unknown.ifindex = 999;
  auto u = inet::add_neigh(ctl, ns(ctl), unknown);
  ASSERT_FALSE(u);
  EXPECT_EQ(u.error().code, ENODEV);
}

// Linux: neigh_update_flags — an administrative update (every RTM_NEWNEIGH) sets
// NTF_EXT_LEARNED as it asks: a replace or change without `extern_learn` clears it.
TEST_F(NeighTest, AnAdminUpdateSetsExternLearnedAsAsked) {
  auto ctl = engine->control();
  Device* d = arp_dummy(ctl, "d0");
  auto add = req(d, "10.0.0.3", "02:00:00:00:00:03");
  add.flags = NTF_EXT_LEARNED;
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), add));
  auto flags = [&] {
    auto got = inet::get_neigh(ctl, ns(ctl), req(d, "10.0.0.3"));
    EXPECT_TRUE(got);
    return got ? got->flags : 0xff;
  };
  EXPECT_EQ(flags(), NTF_EXT_LEARNED);
  auto rep = req(d, "10.0.0.3", "02:00:00:00:00:03");
  rep.excl = false;
  rep.replace = true;
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), rep));
  EXPECT_EQ(flags(), 0);
  auto change = req(d, "10.0.0.3", "", NUD_PERMANENT);
  change.create = change.excl = false;
  change.replace = true;
  change.flags = NTF_EXT_LEARNED;
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), change));
  EXPECT_EQ(flags(), NTF_EXT_LEARNED);
  change.flags = 0;
  ASSERT_TRUE(inet::add_neigh(ctl, ns(ctl), change));
  EXPECT_EQ(flags(), 0);
}

}  // namespace
}  // namespace ifcore::test
