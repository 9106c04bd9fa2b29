// tests/rtnl/maddr_test.cc — the devices' multicast lists: ifcore's IFCORE_NLMSG_MADDR
// (codec, dumps, SIOCADDMULTI/SIOCDELMULTI changes and their errors) and RTM_GETMULTICAST
// dumps, against what Linux 6.18 shows in /proc/net/dev_mcast, igmp and igmp6.
#include "rtnl/wire/maddr_msg.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <linux/if_addr.h>

#include <fmt/format.h>

#include "ifcore/inet.h"
#include "ifcore/mcast.h"
#include "rtnl/fixture.h"
#include "rtnl/wire/address.h"

namespace ifcore::rtnl::test {
namespace {

std::string hex(const std::vector<std::uint8_t>& b) {
  std::string s;
  for (std::uint8_t x : b) s += fmt::format("{:02x}", x);
  return s;
}

Bytes maddr_request(const MaddrRequest& q, std::uint16_t flags) {
  wire::MessageBuilder b;
  EXPECT_TRUE(encode_maddr_request(b, 9, q, flags));
  return b.take();
}

// ---- codec

TEST(MaddrCodec, RequestRoundTrip) {
  MaddrRequest q;
  q.op = IFCORE_MADDR_DEL;
  q.ifname = "v0";
  q.address = {0x33, 0x33, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};
  q.hw_family = 1;
  Bytes b = maddr_request(q, NLM_F_ACK);
  std::uint16_t type;
  std::memcpy(&type, b.data() + 4, 2);
  EXPECT_EQ(type, 0x3ff5);
  auto msgs = wire::split_messages(b);
  ASSERT_TRUE(msgs);
  auto d = decode_maddr_request((*msgs)[0]);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->op, IFCORE_MADDR_DEL);
  EXPECT_EQ(d->ifname, "v0");
  EXPECT_EQ(d->address, q.address);
  EXPECT_EQ(d->hw_family, 1);
  // A dump request carries only its family.
  MaddrRequest dump;
  dump.family = AF_INET6;
  Bytes db = maddr_request(dump, NLM_F_DUMP);
  EXPECT_EQ(db.size(), 20u);
  msgs = wire::split_messages(db);
  ASSERT_TRUE(msgs);
  d = decode_maddr_request((*msgs)[0]);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->op, 0);
  EXPECT_EQ(d->family, AF_INET6);
}

TEST(MaddrCodec, EntryRoundTripAndMalformedInput) {
  MaddrEntry e{AF_PACKET, 3, "v0", {0x33, 0x33, 0, 0, 0, 1}, 2, 1};
  wire::MessageBuilder b;
  ASSERT_TRUE(encode_maddr_entry(b, 4, 77, e, NLM_F_MULTI));
  Bytes bytes = b.take();
  auto msgs = wire::split_messages(bytes);
  ASSERT_TRUE(msgs);
  EXPECT_EQ((*msgs)[0].hdr.nlmsg_pid, 77u);
  auto d = decode_maddr_entry((*msgs)[0]);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->family, AF_PACKET);
  EXPECT_EQ(d->ifindex, 3u);
  EXPECT_EQ(d->ifname, "v0");
  EXPECT_EQ(d->address, e.address);
  EXPECT_EQ(d->users, 2u);
  EXPECT_EQ(d->flags, 1u);
  // Every truncation decodes or fails with an errno, never crashes; an entry cut before
  // its address (after the header, rtgenmsg and IFINDEX: 28 bytes) is refused.
  for (std::size_t n = 16; n < bytes.size(); ++n) {
    Bytes cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    std::uint32_t len = static_cast<std::uint32_t>(n);
    std::memcpy(cut.data(), &len, 4);
    auto m = wire::split_messages(cut);
    if (!m) continue;
    auto got = decode_maddr_entry((*m)[0]);
    if (n <= 28) {
      EXPECT_FALSE(got) << n;
    }
  }
  // A change needs a device and an address; an unknown op is refused.
  MaddrRequest q;
  q.op = 7;
  q.ifname = "v0";
  q.address = {1};
  Bytes rb = maddr_request(q, 0);
  auto rm = wire::split_messages(rb);
  ASSERT_TRUE(rm);
  EXPECT_EQ(decode_maddr_request((*rm)[0]).error().code, EINVAL);
}

// ---- handlers

class MaddrRtnlTest : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    LinkRequest req = named("d0", "dummy");
    req.address = *HwAddr::parse("02:00:00:00:00:01");
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, req)).last_error(), 0);
  }
  void set_up(const std::string& name, bool up) {
    LinkRequest req = named(name);
    req.flags = up ? IFF_UP : 0;
    req.change = IFF_UP;
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 1, req)).last_error(), 0);
  }
  // The lists of `dev`, one line per entry: "link 333300000001 1 0", "inet6 ff02...01 1 c".
  std::vector<std::string> lists(const std::string& dev, int family = AF_UNSPEC) {
    MaddrRequest q;
    q.family = static_cast<std::uint8_t>(family);
    Replies r = send(maddr_request(q, NLM_F_DUMP));
    EXPECT_FALSE(r.msgs.empty());
    EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
    std::vector<std::string> out;
    for (const wire::Message& m : r.msgs) {
      if (m.hdr.nlmsg_type != IFCORE_NLMSG_MADDR) continue;
      auto e = decode_maddr_entry(m);
      EXPECT_TRUE(e);
      if (!e || e->ifname != dev) continue;
      const char* f = e->family == AF_PACKET ? "link" : e->family == AF_INET ? "inet" : "inet6";
      out.push_back(fmt::format("{} {} {} {:x}", f, hex(e->address), e->users, e->flags));
    }
    return out;
  }
  int change(const std::string& dev, const char* hw, bool add, std::uint16_t family = 0,
             Session* s = nullptr) {
    MaddrRequest q;
    q.op = add ? IFCORE_MADDR_ADD : IFCORE_MADDR_DEL;
    q.ifname = dev;
    auto a = HwAddr::parse(hw);
    EXPECT_TRUE(a);
    q.address.assign(a->bytes().begin(), a->bytes().end());
    q.address.resize(14);  // sa_data
    q.hw_family = family;
    return roundtrip(s ? *s : *session, maddr_request(q, NLM_F_ACK)).last_error();
  }
};

using Lines = std::vector<std::string>;

TEST_F(MaddrRtnlTest, ARegisteredDeviceHasTheAllNodesGroups) {
  // Linux: ipv6_add_dev joins ff01::1 and ff02::1 at register, down or not; only ff02::1
  // is of link scope, so only it loads 33:33:00:00:00:01.
  EXPECT_EQ(lists("d0"),
            (Lines{"link 333300000001 1 0", "inet6 ff020000000000000000000000000001 1 c",
                   "inet6 ff010000000000000000000000000001 1 8"}));
  // The loopback maps no group to a link-layer address.
  EXPECT_EQ(lists("lo"), (Lines{"inet6 ff020000000000000000000000000001 1 c",
                                "inet6 ff010000000000000000000000000001 1 8"}));
}

TEST_F(MaddrRtnlTest, UpJoinsAllHostsDownLeavesAndUnloads) {
  set_up("d0", true);
  // Linux: ip_mc_up — 224.0.0.1 and 01:00:5e:00:00:01; the IPv4 groups' count is 1.
  EXPECT_EQ(lists("d0"), (Lines{"link 333300000001 1 0", "link 01005e000001 1 0",
                                "inet e0000001 1 1", "inet6 ff020000000000000000000000000001 1 c",
                                "inet6 ff010000000000000000000000000001 1 8"}));
  set_up("d0", false);
  // Linux: ip_mc_down leaves 224.0.0.1; ipv6_mc_down unloads the groups of a ready device.
  EXPECT_EQ(lists("d0"), (Lines{"inet6 ff020000000000000000000000000001 1 8",
                                "inet6 ff010000000000000000000000000001 1 8"}));
  set_up("d0", true);
  EXPECT_EQ(lists("d0", AF_PACKET), (Lines{"link 01005e000001 1 0", "link 333300000001 1 0"}));
}

TEST_F(MaddrRtnlTest, StaticAddressesAddedAndDeleted) {
  ASSERT_EQ(change("d0", "33:33:00:00:01:01", true), 0);
  ASSERT_EQ(change("d0", "33:33:00:00:00:01", true), 0);
  ASSERT_EQ(change("d0", "33:33:00:00:00:01", true), 0);  // global already: no new user
  EXPECT_EQ(lists("d0", AF_PACKET), (Lines{"link 333300000001 2 1", "link 333300000101 1 1"}));
  ASSERT_EQ(change("d0", "33:33:00:00:00:01", false), 0);
  // Linux: dev_mc_del_global of an address no longer added globally is ENOENT.
  EXPECT_EQ(change("d0", "33:33:00:00:00:01", false), ENOENT);
  EXPECT_EQ(change("d0", "33:33:00:00:01:02", false), ENOENT);
  EXPECT_EQ(lists("d0", AF_PACKET), (Lines{"link 333300000001 1 0", "link 333300000101 1 1"}));
  ASSERT_EQ(change("d0", "33:33:00:00:01:01", false), 0);
  EXPECT_EQ(lists("d0", AF_PACKET), (Lines{"link 333300000001 1 0"}));
}

TEST_F(MaddrRtnlTest, AnUpMacvlansListIsCopiedIntoItsLowers) {
  set_up("d0", true);
  LinkRequest m = named("m0", "macvlan");
  m.link = static_cast<std::uint32_t>(find("d0")->ifindex());
  m.address = *HwAddr::parse("02:00:00:00:00:05");
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, m)).last_error(), 0);
  ASSERT_EQ(change("m0", "33:33:00:00:02:02", true), 0);  // down: not copied yet
  EXPECT_EQ(lists("d0", AF_PACKET), (Lines{"link 333300000001 1 0", "link 01005e000001 1 0"}));
  // Linux: dev_mc_sync — each entry of the up macvlan is one more user below (and above),
  // a new one goes at the end of the lower's list.
  set_up("m0", true);
  EXPECT_EQ(lists("d0", AF_PACKET), (Lines{"link 333300000001 2 0", "link 01005e000001 2 0",
                                           "link 333300000202 1 0", "link 3333ff000005 1 0"}));
  EXPECT_EQ(lists("m0", AF_PACKET), (Lines{"link 333300000001 2 0", "link 333300000202 2 1",
                                           "link 01005e000001 2 0", "link 3333ff000005 2 0"}));
  // A delete above takes the copy too; a down withdraws every copy (dev_mc_unsync).
  ASSERT_EQ(change("m0", "33:33:00:00:02:02", false), 0);
  EXPECT_EQ(lists("d0", AF_PACKET),
            (Lines{"link 333300000001 2 0", "link 01005e000001 2 0", "link 3333ff000005 1 0"}));
  set_up("m0", false);
  EXPECT_EQ(lists("d0", AF_PACKET), (Lines{"link 333300000001 1 0", "link 01005e000001 1 0"}));
  EXPECT_EQ(lists("m0", AF_PACKET), Lines{});
}

TEST_F(MaddrRtnlTest, ForwardingJoinsTheAllRoutersGroups) {
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v0", "v1"))).last_error(), 0);
  auto forwarding = [&](const std::string& dev, int on) {
    const int ifindex = find(dev)->ifindex();
    auto ctl = engine->control();
    Namespace& ns = *ctl.find_namespace("default");
    auto c = inet::inet6_conf(ctl, ns, ifindex);
    ASSERT_TRUE(c);
    c->forwarding = on;
    ASSERT_TRUE(inet::set_inet6_conf(ctl, ns, ifindex, *c, 0));
  };
  // Linux: dev_forward_change — ff02::2, ff01::2, ff05::2 (two users of 33:33:00:00:00:02).
  forwarding("v0", 1);
  EXPECT_EQ(lists("v0"), (Lines{"link 333300000001 1 0", "link 333300000002 2 0",
                                "inet6 ff050000000000000000000000000002 1 4",
                                "inet6 ff010000000000000000000000000002 1 8",
                                "inet6 ff020000000000000000000000000002 1 4",
                                "inet6 ff020000000000000000000000000001 1 c",
                                "inet6 ff010000000000000000000000000001 1 8"}));
  forwarding("v0", 0);
  EXPECT_EQ(lists("v0"),
            (Lines{"link 333300000001 1 0", "inet6 ff020000000000000000000000000001 1 c",
                   "inet6 ff010000000000000000000000000001 1 8"}));
  forwarding("d0", 1);  // a dummy is not IFF_MULTICAST: no group
  EXPECT_EQ(lists("d0", AF_INET6).size(), 2u);
}

TEST_F(MaddrRtnlTest, ChangesTheKernelRefuses) {
  EXPECT_EQ(change("nosuch", "33:33:00:00:00:01", true), ENODEV);
  EXPECT_EQ(change("lo", "33:33:00:00:00:01", true), EINVAL);     // no ndo_set_rx_mode
  EXPECT_EQ(change("d0", "33:33:00:00:00:01", true, 1), EINVAL);  // not AF_UNSPEC
  SessionOptions ro;
  ro.may_write = false;
  auto reader = open(ro);
  EXPECT_EQ(change("d0", "33:33:00:00:00:01", true, 0, reader.get()), EPERM);
  EXPECT_EQ(lists("d0", AF_PACKET), (Lines{"link 333300000001 1 0"}));
}

TEST_F(MaddrRtnlTest, GetMulticastDumpsGroupsOfOneFamily) {
  set_up("d0", true);
  auto dump = [&](std::uint8_t family) {
    wire::MessageBuilder b;
    b.begin({RTM_GETMULTICAST, NLM_F_REQUEST | NLM_F_DUMP, 3, 0});
    ifaddrmsg ifa{};
    ifa.ifa_family = family;
    b.put_struct(ifa);
    EXPECT_TRUE(b.end());
    return send(b.take());
  };
  Replies r = dump(AF_INET6);
  std::vector<std::string> got;
  for (const wire::Message& m : r.msgs) {
    if (m.hdr.nlmsg_type == NLMSG_DONE) continue;
    // Linux: inet6_dump_addr's MULTICAST_ADDR messages are RTM_GETMULTICAST.
    EXPECT_EQ(m.hdr.nlmsg_type, RTM_GETMULTICAST);
    EXPECT_EQ(m.hdr.nlmsg_flags, NLM_F_MULTI);
    auto a = wire::decode_addr(m);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->prefixlen, 128);
    EXPECT_EQ(a->flags, IFA_F_PERMANENT);
    EXPECT_EQ(a->scope, RT_SCOPE_UNIVERSE);
    ASSERT_TRUE(a->cacheinfo);
    EXPECT_EQ(a->cacheinfo->ifa_valid, 0xffffffffu);
    got.push_back(fmt::format("{} {}", a->ifindex, a->multicast->to_string()));
  }
  const int d0 = find("d0")->ifindex(), lo = find("lo")->ifindex();
  EXPECT_EQ(got, (Lines{fmt::format("{} ff02::1", lo), fmt::format("{} ff01::1", lo),
                        fmt::format("{} ff02::1", d0), fmt::format("{} ff01::1", d0)}));
  r = dump(AF_INET);
  ASSERT_EQ(r.msgs.size(), 2u);
  auto a = wire::decode_addr(r.msgs[0]);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->prefixlen, 32);
  EXPECT_EQ(a->multicast->to_string(), "224.0.0.1");
  // Linux: no family but IPv4 and IPv6 registers the dump.
  r = dump(AF_UNSPEC);
  EXPECT_EQ(r.last_error(), EOPNOTSUPP);
}

}  // namespace
}  // namespace ifcore::rtnl::test
