// RTM_{NEW,DEL,GET}NEIGH of family AF_BRIDGE through a session: the header and attribute
// checks of fdb gets and strict dumps with Linux 6.18's extack texts, the legacy dump's
// ifinfomsg filter, the attribute order of the answers and the RTNLGRP_NEIGH notifications.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/neighbour.h>
#include <sys/socket.h>

#include <cstring>

#include "fixture.h"
#include "rtnl/wire/neigh.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl::test {
namespace {

HwAddr mac(std::uint8_t last) {
  return HwAddr::ethernet({0x02, 0, 0, 0, 0, last});
}

Bytes fdb_msg(std::uint16_t type, std::uint16_t flags, const wire::NeighMessage& m) {
  wire::MessageBuilder b;
  EXPECT_TRUE(wire::encode_fdb(b, {type, std::uint16_t(NLM_F_REQUEST | flags), 7, 0}, m));
  return Bytes(b.bytes().begin(), b.bytes().end());
}

class FdbRtnlTest : public BridgePortTest {
 protected:
  wire::NeighMessage entry(const char* dev, std::uint8_t last, std::uint8_t flags) {
    wire::NeighMessage m;
    m.family = AF_BRIDGE;
    m.ifindex = dev ? find(dev)->ifindex() : 0;
    m.lladdr = mac(last);
    m.flags = flags;
    m.state = NUD_NOARP | NUD_PERMANENT;
    return m;
  }
  // The reply's error and extack text.
  // An NLMSG_ERROR's, or a dump's NLMSG_DONE's (a dump's checks end the dump).
  std::pair<int, std::string> error_of(const Replies& r) {
    if (!r.msgs.empty() && r.msgs.back().hdr.nlmsg_type == NLMSG_DONE)
      return {wire::decode_done(r.msgs.back()).value_or(0),
              wire::decode_done_message(r.msgs.back())};
    auto e = r.last_error_reply();
    return {e.error, e.message};
  }
};

TEST_F(FdbRtnlTest, AddGetAndTheAnswersAttributeOrder) {
  auto mon = open(SessionOptions{});
  mon->add_membership(RTNLGRP_NEIGH);
  ASSERT_EQ(send(fdb_msg(RTM_NEWNEIGH, kCreate, entry("v0", 1, NTF_MASTER))).last_error(), 0);
  EXPECT_EQ(error_of(send(fdb_msg(RTM_NEWNEIGH, kCreate, entry("v0", 1, NTF_MASTER)))).first,
            EEXIST);
  wire::NeighMessage g = entry("v0", 1, 0);
  g.state = 0;
  Replies r = send(fdb_msg(RTM_GETNEIGH, 0, g));
  ASSERT_EQ(r.msgs.size(), 1u);
  ASSERT_EQ(r.msgs[0].hdr.nlmsg_type, RTM_NEWNEIGH);
  // Linux: fdb_fill_info — NDA_LLADDR, NDA_MASTER, NDA_FLAGS_EXT, NDA_CACHEINFO.
  auto p = r.msgs[0].payload();
  auto attrs = wire::parse_raw_attrs(p.subspan(NLMSG_ALIGN(sizeof(ndmsg))), 0);
  ASSERT_TRUE(attrs);
  std::vector<std::uint16_t> order;
  for (const auto& a : *attrs) order.push_back(a.type);
  EXPECT_EQ(order,
            (std::vector<std::uint16_t>{NDA_LLADDR, NDA_MASTER, NDA_FLAGS_EXT, NDA_CACHEINFO}));
  auto n = wire::decode_neigh(r.msgs[0]);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->family, AF_BRIDGE);
  EXPECT_EQ(n->state, NUD_PERMANENT);
  EXPECT_EQ(n->master.value_or(0), static_cast<std::uint32_t>(find("br0")->ifindex()));
  // One notification for the one entry made.
  Datagram d;
  int heard = 0;
  while (mon->pop_notification(d)) {
    auto msgs = wire::split_messages(d);
    ASSERT_TRUE(msgs);
    for (const auto& m : *msgs) {
      auto x = wire::decode_neigh(m);
      ASSERT_TRUE(x);
      if (x->family != AF_BRIDGE) continue;
      ++heard;
      EXPECT_EQ(m.hdr.nlmsg_type, RTM_NEWNEIGH);
      EXPECT_EQ(x->lladdr, mac(1));
    }
  }
  EXPECT_EQ(heard, 1);
}

TEST_F(FdbRtnlTest, GetRequestsAreCheckedAsLinuxChecksThem) {
  wire::NeighMessage g = entry("v0", 1, 0);
  g.state = NUD_PERMANENT;
  EXPECT_EQ(error_of(send(fdb_msg(RTM_GETNEIGH, 0, g))),
            std::make_pair(EINVAL, std::string("Invalid values in header for fdb get request")));
  g.state = 0;
  g.flags = NTF_USE;
  EXPECT_EQ(error_of(send(fdb_msg(RTM_GETNEIGH, 0, g))),
            std::make_pair(EINVAL, std::string("Invalid flags in header for fdb get request")));
  g.flags = 0;
  g.dst = *IpAddr::parse("192.0.2.1");
  EXPECT_EQ(error_of(send(fdb_msg(RTM_GETNEIGH, 0, g))),
            std::make_pair(EINVAL, std::string("Unsupported attribute in fdb get request")));
  g.dst.reset();
  g.lladdr.reset();
  EXPECT_EQ(error_of(send(fdb_msg(RTM_GETNEIGH, 0, g))),
            std::make_pair(EINVAL, std::string("Missing lookup address for fdb get request")));
  g.lladdr = mac(1);
  g.master = static_cast<std::uint32_t>(find("br0")->ifindex());
  EXPECT_EQ(error_of(send(fdb_msg(RTM_GETNEIGH, 0, g))),
            std::make_pair(EINVAL, std::string("Master and device are mutually exclusive")));
  g.ifindex = 0;
  EXPECT_EQ(error_of(send(fdb_msg(RTM_GETNEIGH, 0, g))),
            std::make_pair(ENOENT, std::string("Fdb entry not found")));
  g.master.reset();
  EXPECT_EQ(error_of(send(fdb_msg(RTM_GETNEIGH, 0, g))),
            std::make_pair(ENODEV, std::string("No device specified")));
}

TEST_F(FdbRtnlTest, DumpFiltersStrictAndLegacy) {
  const int br = find("br0")->ifindex(), v0 = find("v0")->ifindex();
  ASSERT_EQ(send(fdb_msg(RTM_NEWNEIGH, kCreate, entry("v0", 1, NTF_MASTER))).last_error(), 0);
  auto count = [&](const Replies& r) {
    int n = 0;
    for (const auto& m : r.msgs)
      if (m.hdr.nlmsg_type == RTM_NEWNEIGH) ++n;
    return n;
  };
  wire::NeighMessage all;
  all.family = AF_BRIDGE;
  // Legacy (no strict checking): an ndmsg with one u32 attribute filters nothing.
  wire::NeighMessage m = all;
  m.master = static_cast<std::uint32_t>(br);
  Replies everything = send(fdb_msg(RTM_GETNEIGH, NLM_F_DUMP, all));
  EXPECT_EQ(count(send(fdb_msg(RTM_GETNEIGH, NLM_F_DUMP, m))), count(everything));
  // An ifinfomsg: its index is the port.
  wire::MessageBuilder b;
  b.begin({RTM_GETNEIGH, NLM_F_REQUEST | NLM_F_DUMP, 9, 0});
  ifinfomsg ifi{};
  ifi.ifi_family = AF_BRIDGE;
  ifi.ifi_index = v0;
  b.put_struct(ifi);
  b.put_u32(IFLA_MASTER, static_cast<std::uint32_t>(br));
  ASSERT_TRUE(b.end());
  Replies legacy = send(Bytes(b.bytes().begin(), b.bytes().end()));
  EXPECT_EQ(count(legacy), 3);  // the static entry, the port's local one, ff02::1's group
  // Strict: the bridge filter is read, the header checked.
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  EXPECT_LT(count(send(fdb_msg(RTM_GETNEIGH, NLM_F_DUMP, m))), count(everything));
  m.state = NUD_PERMANENT;
  EXPECT_EQ(error_of(send(fdb_msg(RTM_GETNEIGH, NLM_F_DUMP, m))),
            std::make_pair(EINVAL, std::string("Invalid values in header for fdb dump request")));
  m.state = 0;
  m.lladdr = mac(1);
  EXPECT_EQ(error_of(send(fdb_msg(RTM_GETNEIGH, NLM_F_DUMP, m))),
            std::make_pair(EINVAL, std::string("Unsupported attribute in fdb dump request")));
  m.lladdr.reset();
  m.master = 999;
  EXPECT_EQ(error_of(send(fdb_msg(RTM_GETNEIGH, NLM_F_DUMP, m))).first, ENODEV);
}

}  // namespace
}  // namespace ifcore::rtnl::test
