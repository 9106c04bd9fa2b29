// RTM_GETSTATS through a session (Linux: rtnl_stats_get, rtnl_stats_dump): the attributes
// each filter-mask bit brings (a bridge's extended statistics and its ports'), the
// counters a device has, the refusals with Linux 6.18's extack texts, and a dump in parts.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <sys/socket.h>

#include <cstring>
#include <map>

#include "fixture.h"
#include "ifcore/frame.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl::test {
namespace {

constexpr std::uint32_t kAll = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64) |
                               IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_XSTATS) |
                               IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_XSTATS_SLAVE) |
                               IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_OFFLOAD_XSTATS) |
                               IFLA_STATS_FILTER_BIT(IFLA_STATS_AF_SPEC);

Bytes stats_msg(std::uint16_t flags, std::uint32_t ifindex, std::uint32_t mask,
                std::uint8_t pad1 = 0) {
  wire::MessageBuilder b;
  b.begin({RTM_GETSTATS, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), 5, 0});
  if_stats_msg q{};
  q.ifindex = ifindex;
  q.filter_mask = mask;
  q.pad1 = pad1;
  b.put_struct(q);
  auto done = b.end();
  EXPECT_TRUE(done);
  return Bytes(done->begin(), done->end());
}

// One RTM_NEWSTATS: its ifindex, mask, and attributes by type.
struct StatsEntry {
  std::uint32_t ifindex = 0, mask = 0;
  std::uint16_t flags = 0;
  std::map<std::uint16_t, wire::RawAttr> attrs;
};

class LinkStatsTest : public BridgePortTest {
 protected:
  // The messages of a reply (a dump's or a get's), or "error N TEXT".
  std::pair<std::vector<StatsEntry>, std::string> ask(const Bytes& request) {
    last = send(request);
    return read(last.msgs);
  }
  static std::pair<std::vector<StatsEntry>, std::string> read(
      const std::vector<wire::Message>& msgs) {
    std::vector<StatsEntry> out;
    for (const auto& m : msgs) {
      if (m.hdr.nlmsg_type == NLMSG_DONE) {
        auto code = wire::decode_done(m);
        if (code && *code)
          return {out, fmt::format("error {} {}", *code, wire::decode_done_message(m))};
        continue;
      }
      if (m.hdr.nlmsg_type == NLMSG_ERROR) {
        auto e = wire::decode_error(m);
        return {out, fmt::format("error {} {}", e ? e->error : -1, e ? e->message : "")};
      }
      EXPECT_EQ(m.hdr.nlmsg_type, RTM_NEWSTATS);
      auto p = m.payload();
      if_stats_msg q;
      std::memcpy(&q, p.data(), sizeof(q));
      StatsEntry e;
      e.ifindex = q.ifindex;
      e.mask = q.filter_mask;
      e.flags = m.hdr.nlmsg_flags;
      auto attrs = wire::parse_raw_attrs(p.subspan(NLMSG_ALIGN(sizeof(q))), 0);
      EXPECT_TRUE(attrs);
      for (const auto& a : *attrs) e.attrs.emplace(a.type, a);
      out.push_back(std::move(e));
    }
    return {out, ""};
  }
  static std::vector<std::uint16_t> types(const StatsEntry& e) {
    std::vector<std::uint16_t> t;
    for (const auto& [type, a] : e.attrs) t.push_back(type);
    return t;
  }
  Replies last;
};

TEST_F(LinkStatsTest, EachMaskBitBringsItsAttributeForTheDevicesThatHaveIt) {
  const auto br = static_cast<std::uint32_t>(find("br0")->ifindex());
  const auto v0 = static_cast<std::uint32_t>(find("v0")->ifindex());
  auto reply = ask(stats_msg(NLM_F_DUMP, 0, kAll));
  const std::vector<StatsEntry>& all = reply.first;  // a lambda below reads it
  const std::string& err = reply.second;
  EXPECT_EQ(err, "");
  ASSERT_EQ(all.size(), 4u);  // lo, br0, v1, v0: every device, in ifindex order
  using T = std::vector<std::uint16_t>;
  for (const StatsEntry& e : all) {
    EXPECT_EQ(e.mask, kAll);
    EXPECT_EQ(e.flags, NLM_F_MULTI);
    T want{IFLA_STATS_LINK_64, IFLA_STATS_LINK_OFFLOAD_XSTATS, IFLA_STATS_AF_SPEC};
    if (e.ifindex == br) want.insert(want.begin() + 1, IFLA_STATS_LINK_XSTATS);
    if (e.ifindex == v0) want.insert(want.begin() + 1, IFLA_STATS_LINK_XSTATS_SLAVE);
    EXPECT_EQ(types(e), want) << "ifindex " << e.ifindex;
    EXPECT_EQ(e.attrs.at(IFLA_STATS_LINK_64).data.size(), sizeof(rtnl_link_stats64));
    EXPECT_TRUE(e.attrs.at(IFLA_STATS_AF_SPEC).data.empty());
    // The offload statistics' hardware info: L3 statistics neither requested nor used.
    auto info = wire::parse_nested(e.attrs.at(IFLA_STATS_LINK_OFFLOAD_XSTATS));
    ASSERT_TRUE(info);
    ASSERT_EQ(info->size(), 1u);
    EXPECT_EQ((*info)[0].type, IFLA_OFFLOAD_XSTATS_HW_S_INFO);
    EXPECT_TRUE((*info)[0].nested_flag);
  }
  // The bridge: multicast counters; its port: multicast and STP counters.
  auto xstats = [&](std::uint32_t ifindex, std::uint16_t type) {
    for (const StatsEntry& e : all)
      if (e.ifindex == ifindex) {
        auto outer = wire::parse_nested(e.attrs.at(type));
        EXPECT_TRUE(outer && outer->size() == 1 && (*outer)[0].type == LINK_XSTATS_TYPE_BRIDGE);
        std::vector<std::pair<std::uint16_t, std::size_t>> inner;
        auto attrs = wire::parse_nested((*outer)[0]);  // kept: the loop reads into it
        EXPECT_TRUE(attrs);
        for (const auto& a : *attrs) inner.push_back({a.type, a.data.size()});
        return inner;
      }
    return std::vector<std::pair<std::uint16_t, std::size_t>>{};
  };
  using I = std::vector<std::pair<std::uint16_t, std::size_t>>;
  EXPECT_EQ(xstats(br, IFLA_STATS_LINK_XSTATS), (I{{BRIDGE_XSTATS_MCAST, sizeof(br_mcast_stats)}}));
  EXPECT_EQ(xstats(v0, IFLA_STATS_LINK_XSTATS_SLAVE),
            (I{{BRIDGE_XSTATS_MCAST, sizeof(br_mcast_stats)},
               {BRIDGE_XSTATS_STP, sizeof(bridge_stp_xstats)}}));

  // A get: one device, flags 0; a bit Linux does not know brings nothing.
  auto [one, err2] = ask(stats_msg(
      0, v0,
      IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64) | IFLA_STATS_FILTER_BIT(IFLA_STATS_MAX + 1)));
  EXPECT_EQ(err2, "");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].flags, 0);
  EXPECT_EQ(types(one[0]), T{IFLA_STATS_LINK_64});
}

TEST_F(LinkStatsTest, TheCountersAreTheDevices) {
  Device* v0 = find("v0");
  Device* v1 = find("v1");
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.open(*v0));
    ASSERT_TRUE(ctl.open(*v1));
  }
  std::vector<std::uint8_t> frame(60, 0);
  std::memset(frame.data(), 0xff, 6);  // to the broadcast address
  ASSERT_TRUE(transmit(*v1, std::move(frame)));
  auto [one, err] = ask(stats_msg(0, static_cast<std::uint32_t>(v1->ifindex()),
                                  IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64)));
  ASSERT_EQ(one.size(), 1u);
  rtnl_link_stats64 s;
  std::memcpy(&s, one[0].attrs.at(IFLA_STATS_LINK_64).data.data(), sizeof(s));
  EXPECT_EQ(s.tx_packets, 1u);
  EXPECT_EQ(s.tx_bytes, 60u);
}

TEST_F(LinkStatsTest, RefusalsAreLinuxs) {
  EXPECT_EQ(ask(stats_msg(0, 1, 0)).second, "error 22 Filter mask must be set for stats get");
  EXPECT_EQ(ask(stats_msg(NLM_F_DUMP, 0, 0)).second,
            "error 22 Filter mask must be set for stats dump");
  EXPECT_EQ(ask(stats_msg(0, 999, 1)).second, "error 19 ");
  EXPECT_EQ(ask(stats_msg(0, 0, 1)).second, "error 22 ");
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  EXPECT_EQ(ask(stats_msg(NLM_F_DUMP, 1, 1)).second,
            "error 22 Invalid values in header for stats dump request");
  EXPECT_EQ(ask(stats_msg(0, 1, 1, 1)).second,
            "error 22 Invalid values in header for stats dump request");
  EXPECT_EQ(ask(stats_msg(NLM_F_DUMP, 0, IFLA_STATS_FILTER_BIT(IFLA_STATS_MAX + 1))).second,
            "error 22 Invalid stats requested through filter mask");
}

TEST_F(LinkStatsTest, ADumpInPartsHoldsEveryDeviceOnce) {
  for (int i = 0; i < 40; ++i) ASSERT_EQ(create("d" + std::to_string(i)), 0);
  SessionOptions o;
  o.port_id = 78;
  o.dump_chunk_bytes = 1024;
  auto s = open(o);
  std::vector<Replies> replies;  // the messages point into their datagrams
  replies.push_back(
      roundtrip(*s, stats_msg(NLM_F_DUMP, 0, IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64))));
  while (s->dump_pending() && replies.size() < 1000) {
    Replies r;
    s->continue_dump([&](Datagram&& d) { r.dgs.push_back(std::move(d)); });
    r.split();
    replies.push_back(std::move(r));
  }
  const auto parts = static_cast<int>(replies.size());
  std::vector<wire::Message> msgs;
  for (const Replies& r : replies) msgs.insert(msgs.end(), r.msgs.begin(), r.msgs.end());
  EXPECT_GT(parts, 3);
  auto [all, err] = read(msgs);
  EXPECT_EQ(err, "");
  ASSERT_EQ(all.size(), 44u);
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].ifindex, all[i].ifindex);
  EXPECT_EQ(msgs.back().hdr.nlmsg_type, NLMSG_DONE);
}

}  // namespace
}  // namespace ifcore::rtnl::test
