// Forwarding databases through ifcore/fdb.h: the bridge's local entries as ports come, go
// and change their addresses; static, permanent, dynamic, extern_learn and sticky entries
// with the refusals Linux 6.18 answers (and that change nothing); gets; the vxlan device's
// default entry and remotes; other devices' address lists; the listener's events.
#include <net/if.h>

#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <sys/socket.h>

#include "ifcore/fdb.h"
#include "kinds_fixture.h"

namespace ifcore::test {
namespace {

HwAddr mac(std::uint8_t last) {
  return HwAddr::ethernet({0x02, 0, 0, 0, 0, last});
}

struct Recorder final : fdb::Listener {
  std::vector<std::pair<bool, fdb::Entry>> events;
  void on_fdb(Namespace&, bool added, const fdb::Entry& e) override {
    events.emplace_back(added, e);
  }
};

class FdbTest : public KindsTest {
 protected:
  fdb::Request req(Device* dev, HwAddr addr, std::uint8_t flags,
                   std::uint16_t state = NUD_NOARP | NUD_PERMANENT,
                   std::uint16_t nlflags = NLM_F_CREATE | NLM_F_EXCL) {
    fdb::Request q;
    q.ifindex = dev ? dev->ifindex() : 0;
    q.lladdr = addr;
    q.flags = flags;
    q.state = state;
    q.nlflags = nlflags;
    return q;
  }
  std::vector<fdb::Entry> dump(Control& ctl, int br = 0, int port = 0) {
    auto r = fdb::dump(ctl, def(ctl), br, port, {});
    EXPECT_TRUE(r);
    return r ? *r : std::vector<fdb::Entry>{};
  }
  // "MAC@ifindex state" for each entry: what a refused request must not change.
  std::string table(Control& ctl) {
    std::string out;
    for (const auto& e : dump(ctl))
      out += fmt::format("{}@{}/{} {:#x} {:#x}\n", e.lladdr.to_string(), e.ifindex,
                         e.master.value_or(0), e.state, e.flags);
    return out;
  }
  Device* veth(Control& ctl, std::string a, std::string b) {
    auto p = std::make_shared<LinkRequest>();
    p->name = std::move(b);
    Attr peer{VETH_INFO_PEER, AttrShape::LinkMsg};
    peer.link = std::move(p);
    return must(ctl.create_link(def(ctl), with_data("veth", std::move(a), {peer})));
  }
};

TEST_F(FdbTest, BridgeLocalEntriesFollowPortsAndAddresses) {
  auto ctl = engine->control();
  Device* br = must(ctl.create_link(def(ctl), link_req("bridge", "br0")));
  auto rows = dump(ctl, br->ifindex());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].lladdr, br->address());
  EXPECT_EQ(rows[0].state, NUD_PERMANENT);
  EXPECT_EQ(rows[0].master.value_or(0), static_cast<std::uint32_t>(br->ifindex()));
  Device* v0 = veth(ctl, "v0", "v1");
  ASSERT_TRUE(ctl.set_master(*v0, br));
  // The bridge took the port's address: one local entry, the port's.
  rows = dump(ctl, br->ifindex());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].ifindex, v0->ifindex());
  EXPECT_EQ(rows[0].lladdr, v0->address());
  // A new port address moves its local entry (and the bridge's address with it).
  ASSERT_TRUE(ctl.set_address(*v0, mac(0x40)));
  rows = dump(ctl, br->ifindex());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].lladdr, mac(0x40));
  // The port leaves: nothing is left (the bridge's address becomes all zeros).
  ASSERT_TRUE(ctl.set_master(*v0, nullptr));
  EXPECT_TRUE(dump(ctl, br->ifindex()).empty());
}

TEST_F(FdbTest, PortEntriesAddReplaceDeleteAndRefusals) {
  auto ctl = engine->control();
  Device* br = must(ctl.create_link(def(ctl), link_req("bridge", "br0")));
  Device* v0 = veth(ctl, "v0", "v1");
  Device* v1 = ctl.find(def(ctl), "v1");
  ASSERT_TRUE(ctl.set_master(*v0, br));
  Namespace& ns = def(ctl);
  Recorder rec;
  fdb::add_listener(ctl, rec);
  ASSERT_TRUE(fdb::add(ctl, ns, req(v0, mac(1), NTF_MASTER, NUD_NOARP | NUD_REACHABLE)));
  ASSERT_EQ(rec.events.size(), 1u);
  EXPECT_TRUE(rec.events[0].first);
  EXPECT_EQ(rec.events[0].second.state, NUD_NOARP);
  std::string before = table(ctl);
  EXPECT_FAILS(fdb::add(ctl, ns, req(v0, mac(1), NTF_MASTER)), EEXIST, "");
  // Linux: a port that cannot learn takes no dynamic entry; sticky cannot be permanent; the
  // bridge's own entries must be permanent; vlans are not configured.
  EXPECT_FAILS(fdb::add(ctl, ns, req(v0, mac(2), NTF_MASTER, NUD_REACHABLE)), EPERM, "");
  EXPECT_FAILS(fdb::add(ctl, ns, req(v0, mac(2), NTF_MASTER | NTF_STICKY)), EINVAL, "");
  EXPECT_FAILS(fdb::add(ctl, ns, req(br, mac(2), NTF_SELF, NUD_NOARP)), EINVAL, "");
  EXPECT_FAILS(fdb::add(ctl, ns, req(br, mac(2), NTF_SELF | NTF_EXT_LEARNED, NUD_NOARP)), EINVAL,
               "bridge: FDB entry towards bridge must be permanent");
  auto vq = req(v0, mac(2), NTF_MASTER);
  vq.vlan = 5;
  EXPECT_FAILS(fdb::add(ctl, ns, vq), EINVAL, "");
  vq.vlan = 4095;
  EXPECT_FAILS(fdb::add(ctl, ns, vq), EINVAL, "invalid vlan id");
  EXPECT_FAILS(fdb::add(ctl, ns, req(v1, mac(2), NTF_MASTER)), EOPNOTSUPP, "");
  EXPECT_FAILS(fdb::add(ctl, ns, req(nullptr, mac(2), NTF_MASTER)), EINVAL, "invalid ifindex");
  EXPECT_FAILS(fdb::add(ctl, ns, req(v0, HwAddr::ethernet({0, 0, 0, 0, 0, 0}), NTF_MASTER)), EINVAL,
               "");
  EXPECT_FAILS(fdb::add(ctl, ns, req(ns.loopback(), mac(2), NTF_SELF)), EINVAL,
               "FDB add only supported for Ethernet devices");
  EXPECT_EQ(table(ctl), before);
  EXPECT_EQ(rec.events.size(), 1u);
  // Replace makes it permanent; extern_learn entries are reachable and flagged.
  ASSERT_TRUE(fdb::add(
      ctl, ns,
      req(v0, mac(1), NTF_MASTER, NUD_NOARP | NUD_PERMANENT, NLM_F_CREATE | NLM_F_REPLACE)));
  ASSERT_TRUE(fdb::add(ctl, ns, req(v0, mac(3), NTF_MASTER | NTF_EXT_LEARNED)));
  fdb::Request g;
  g.lladdr = mac(3);
  g.master = static_cast<std::uint32_t>(br->ifindex());
  auto got = fdb::get(ctl, ns, g);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->state, NUD_REACHABLE);
  EXPECT_EQ(got->flags, NTF_EXT_LEARNED);
  EXPECT_EQ(got->ifindex, v0->ifindex());
  g.lladdr = mac(1);
  got = fdb::get(ctl, ns, g);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->state, NUD_PERMANENT);
  g.lladdr = mac(9);
  EXPECT_FAILS(fdb::get(ctl, ns, g), ENOENT, "Fdb entry not found");
  // Deletes: the entry's own port only, once.
  EXPECT_FAILS(fdb::del(ctl, ns, req(br, mac(1), NTF_SELF)), ENOENT, "");
  ASSERT_TRUE(fdb::del(ctl, ns, req(v0, mac(1), NTF_MASTER)));
  EXPECT_FAILS(fdb::del(ctl, ns, req(v0, mac(1), NTF_MASTER)), ENOENT, "");
  EXPECT_FALSE(rec.events.back().first);
  // The port leaves: its entries go, announced.
  std::size_t n = rec.events.size();
  ASSERT_TRUE(ctl.set_master(*v0, nullptr));
  EXPECT_GT(rec.events.size(), n);
  for (const auto& e : dump(ctl, br->ifindex())) EXPECT_NE(e.ifindex, v0->ifindex());
  fdb::remove_listener(ctl, rec);
}

TEST_F(FdbTest, OtherDevicesKeepTheAddressesUsersAdd) {
  auto ctl = engine->control();
  Device* v0 = veth(ctl, "v0", "v1");
  Namespace& ns = def(ctl);
  ASSERT_TRUE(fdb::add(ctl, ns, req(v0, mac(0x0c), NTF_SELF)));
  EXPECT_TRUE(fdb::add(ctl, ns, req(v0, mac(0x0c), NTF_SELF, NUD_PERMANENT, NLM_F_CREATE)));
  EXPECT_FAILS(fdb::add(ctl, ns, req(v0, mac(0x0c), NTF_SELF)), EEXIST, "");
  EXPECT_FAILS(fdb::add(ctl, ns, req(v0, mac(0x0d), NTF_SELF, NUD_NOARP)), EINVAL, "");
  auto rows = dump(ctl, 0, v0->ifindex());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].flags, NTF_SELF);
  EXPECT_EQ(rows[0].state, NUD_PERMANENT);
  fdb::Request g;
  g.lladdr = mac(0x0c);
  g.ifindex = v0->ifindex();
  g.flags = NTF_SELF;
  EXPECT_FAILS(fdb::get(ctl, ns, g), EOPNOTSUPP, "Fdb get operation not supported by device");
  g.flags = 0;
  EXPECT_FAILS(fdb::get(ctl, ns, g), EINVAL, "Device is not a bridge port");
  ASSERT_TRUE(fdb::del(ctl, ns, req(v0, mac(0x0c), NTF_SELF)));
  EXPECT_FAILS(fdb::del(ctl, ns, req(v0, mac(0x0c), NTF_SELF)), ENOENT, "");
  // The lists go with the device.
  ASSERT_TRUE(fdb::add(ctl, ns, req(v0, mac(0x0e), NTF_SELF)));
  ASSERT_TRUE(ctl.delete_link(*v0));
  EXPECT_TRUE(dump(ctl).empty());
}

TEST_F(FdbTest, VxlanDefaultEntryRemotesAndRefusals) {
  auto ctl = engine->control();
  Namespace& ns = def(ctl);
  std::array<std::uint8_t, 4> remote{192, 0, 2, 50};
  Device* vx = must(ctl.create_link(
      ns, with_data("vxlan", "vx0",
                    {Attr::u32(IFLA_VXLAN_ID, 10), Attr::binary(IFLA_VXLAN_GROUP, remote),
                     Attr::be16(IFLA_VXLAN_PORT, 4789)})));
  auto rows = dump(ctl, 0, vx->ifindex());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].lladdr.is_zero());
  EXPECT_EQ(rows[0].state, NUD_PERMANENT | NUD_REACHABLE);
  EXPECT_EQ(rows[0].dst->to_string(), "192.0.2.50");
  EXPECT_FALSE(rows[0].port.has_value());
  auto zero = HwAddr::ethernet({0, 0, 0, 0, 0, 0});
  auto q = req(vx, zero, NTF_SELF, NUD_NOARP | NUD_PERMANENT, NLM_F_CREATE | NLM_F_APPEND);
  q.dst = *IpAddr::parse("192.0.2.2");
  ASSERT_TRUE(fdb::add(ctl, ns, q));
  EXPECT_EQ(dump(ctl, 0, vx->ifindex()).size(), 2u);
  q.nlflags = NLM_F_CREATE | NLM_F_REPLACE;
  EXPECT_FAILS(fdb::add(ctl, ns, q), EOPNOTSUPP, "Cannot replace non-unicast fdb entries");
  auto u = req(vx, mac(0x20), NTF_SELF);
  EXPECT_FAILS(fdb::add(ctl, ns, u), EINVAL, "");  // no destination
  u.dst = *IpAddr::parse("2001:db8::1");
  EXPECT_FAILS(fdb::add(ctl, ns, u), EAFNOSUPPORT, "");
  u.dst = *IpAddr::parse("192.0.2.3");
  u.port = 4790;
  u.vni = 20;
  u.via = 999;
  EXPECT_FAILS(fdb::add(ctl, ns, u), EADDRNOTAVAIL, "Device not found");
  u.via.reset();
  ASSERT_TRUE(fdb::add(ctl, ns, u));
  fdb::Request g;
  g.lladdr = mac(0x20);
  g.ifindex = vx->ifindex();
  g.flags = NTF_SELF;
  auto got = fdb::get(ctl, ns, g);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->port.value_or(0), 4790);
  EXPECT_EQ(got->vni.value_or(0), 20u);
  EXPECT_EQ(got->type, RTN_UNICAST);
  // Deleting one remote of the default entry keeps the other.
  auto d = req(vx, zero, NTF_SELF);
  d.dst = *IpAddr::parse("192.0.2.50");
  ASSERT_TRUE(fdb::del(ctl, ns, d));
  rows = dump(ctl, 0, vx->ifindex());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].dst->to_string(), "192.0.2.2");
  // Down: the permanent entries stay; a dynamic one goes.
  auto dyn = req(vx, mac(0x24), NTF_SELF, NUD_REACHABLE);
  dyn.dst = *IpAddr::parse("192.0.2.4");
  ASSERT_TRUE(ctl.open(*vx));
  ASSERT_TRUE(fdb::add(ctl, ns, dyn));
  EXPECT_EQ(dump(ctl, 0, vx->ifindex()).size(), 3u);
  ASSERT_TRUE(ctl.close(*vx));
  EXPECT_EQ(dump(ctl, 0, vx->ifindex()).size(), 2u);
}

TEST_F(FdbTest, FlushByPortStateAndFlagsAnnouncesEachEntry) {
  auto ctl = engine->control();
  Device* br = must(ctl.create_link(def(ctl), link_req("bridge", "br0")));
  Device* br1 = must(ctl.create_link(def(ctl), link_req("bridge", "br1")));
  Device* v0 = veth(ctl, "v0", "v1");
  Device* v2 = veth(ctl, "v2", "v3");
  Device* v4 = veth(ctl, "v4", "v5");
  ASSERT_TRUE(ctl.set_master(*v0, br));
  ASSERT_TRUE(ctl.set_master(*v2, br));
  ASSERT_TRUE(ctl.set_master(*v4, br1));
  ASSERT_TRUE(fdb::add(ctl, def(ctl), req(v0, mac(1), NTF_MASTER, NUD_NOARP)));
  ASSERT_TRUE(fdb::add(ctl, def(ctl), req(v0, mac(2), NTF_MASTER, NUD_PERMANENT)));
  ASSERT_TRUE(fdb::add(ctl, def(ctl), req(v2, mac(3), NTF_MASTER, NUD_NOARP)));
  Recorder rec;
  fdb::add_listener(ctl, rec);
  auto flush = [&](Device* dev, std::uint8_t flags, std::uint16_t state = 0,
                   std::optional<std::uint16_t> state_mask = {}) {
    fdb::Request q = req(dev, HwAddr{}, flags, state, NLM_F_BULK);
    q.lladdr.reset();
    q.state_mask = state_mask;
    return fdb::flush(ctl, def(ctl), q);
  };
  // Refusals change nothing.
  std::string before = table(ctl);
  fdb::Request q = req(br, HwAddr{}, NTF_SELF, 0, NLM_F_BULK);
  q.via = static_cast<std::uint32_t>(v4->ifindex());
  auto r = fdb::flush(ctl, def(ctl), q);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_EQ(r.error().message, "bridge: Port belongs to a different bridge device");
  q.via = static_cast<std::uint32_t>(br1->ifindex());
  r = fdb::flush(ctl, def(ctl), q);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "bridge: Flush bridge device does not match target bridge device");
  r = flush(ctl.find(def(ctl), "v1"), NTF_SELF);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EOPNOTSUPP);
  EXPECT_EQ(table(ctl), before);
  EXPECT_TRUE(rec.events.empty());
  // `static` on the bridge: NUD_NOARP without NUD_PERMANENT, on every port.
  ASSERT_TRUE(flush(br, NTF_SELF, NUD_NOARP, NUD_NOARP | NUD_PERMANENT));
  ASSERT_EQ(rec.events.size(), 2u);
  for (const auto& [added, e] : rec.events) {
    EXPECT_FALSE(added);
    EXPECT_EQ(e.state, NUD_NOARP);
  }
  // The port itself with `master`: its entries only (its own local entry included).
  rec.events.clear();
  ASSERT_TRUE(flush(v0, NTF_MASTER));
  for (const auto& e : dump(ctl, br->ifindex())) EXPECT_NE(e.ifindex, v0->ifindex());
  EXPECT_FALSE(rec.events.empty());
  for (const auto& [added, e] : rec.events) EXPECT_EQ(e.ifindex, v0->ifindex());
  fdb::remove_listener(ctl, rec);
}

// Linux: br_fdb_delete_by_port walks the bridge's fdb_list, newest first: a released port's
// entries are announced deleted in that order, whatever their addresses.
TEST_F(FdbTest, AReleasedPortsEntriesGoNewestFirst) {
  auto ctl = engine->control();
  Device* br = must(ctl.create_link(def(ctl), link_req("bridge", "br0")));
  Device* v0 = veth(ctl, "v0", "v1");
  ASSERT_TRUE(ctl.set_master(*v0, br));
  for (std::uint8_t last : {9, 3, 5})
    ASSERT_TRUE(fdb::add(ctl, def(ctl), req(v0, mac(last), NTF_MASTER, NUD_NOARP)));
  Recorder rec;
  fdb::add_listener(ctl, rec);
  ASSERT_TRUE(ctl.set_master(*v0, nullptr));
  std::vector<std::string> gone;
  for (const auto& [added, e] : rec.events)
    if (!added && e.lladdr != v0->address()) gone.push_back(e.lladdr.to_string());
  EXPECT_EQ(gone, (std::vector<std::string>{"02:00:00:00:00:05", "02:00:00:00:00:03",
                                            "02:00:00:00:00:09"}));
  fdb::remove_listener(ctl, rec);
}

}  // namespace
}  // namespace ifcore::test
