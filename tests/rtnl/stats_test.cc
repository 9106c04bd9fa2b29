// ifcore's statistics message: the engine's counters over rtnetlink, for every peer.
#include "rtnl/wire/stats_msg.h"

#include "fixture.h"

namespace ifcore::rtnl::test {
namespace {

Bytes stats_request(std::uint32_t seq, std::uint16_t flags = 0) {
  wire::MessageBuilder b;
  EXPECT_TRUE(encode_stats_request(b, seq, flags));
  return b.take();
}

std::uint64_t value(const std::vector<StatsEntry>& v, std::string_view name) {
  for (auto& e : v)
    if (e.name == name) return e.value;
  ADD_FAILURE() << "no statistic " << name;
  return 0;
}

using StatsMsg = RtnlTest;

TEST_F(StatsMsg, ReportsTheEngineCountersAfterABatch) {
  ASSERT_EQ(create("s0"), 0);
  ASSERT_EQ(create("s1"), 0);
  {
    auto ctl = engine->control();
    Namespace& ns = *ctl.find_namespace("default");
    std::vector<Device*> devs = {ctl.find(ns, "s0"), ctl.find(ns, "s1")};
    ASSERT_TRUE(ctl.delete_links(devs));
  }
  auto r = send(stats_request(7, NLM_F_ACK));
  ASSERT_EQ(r.msgs.size(), 2u);  // the reply, then the ACK
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_seq, 7u);
  auto v = decode_stats_reply(r.msgs[0]);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->size(), std::size_t(IFCORE_STATS_MAX));
  EXPECT_GE(value(*v, "devices_registered"), 3u);  // lo, s0, s1
  EXPECT_EQ(value(*v, "devices_unregistered"), 2u);
  EXPECT_EQ(value(*v, "batches"), 1u);
  EXPECT_EQ(value(*v, "grace_periods"), 1u);
  EXPECT_EQ(r.last_error(), 0);
}

TEST_F(StatsMsg, IsOpenToReadOnlyPeers) {
  SessionOptions o;
  o.may_write = false;
  auto ro = open(o);
  auto r = roundtrip(*ro, stats_request(1));
  ASSERT_EQ(r.msgs.size(), 1u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, IFCORE_NLMSG_GETSTATS);
}

TEST(StatsCodec, RoundTripAndMalformed) {
  Stats s;
  s.batches = 3;
  s.grace_time = std::chrono::microseconds(5);
  wire::MessageBuilder b;
  ASSERT_TRUE(encode_stats_reply(b, 9, 42, s, 1));
  Bytes bytes = b.take();
  auto msgs = wire::split_messages(bytes);
  ASSERT_TRUE(msgs);
  auto v = decode_stats_reply((*msgs)[0]);
  ASSERT_TRUE(v);
  EXPECT_EQ(value(*v, "batches"), 3u);
  EXPECT_EQ(value(*v, "grace_time_ns"), 5000u);
  EXPECT_EQ(value(*v, "pending_finalization"), 1u);
  // An attribute of the wrong size is an error, never a crash.
  bytes[NLMSG_HDRLEN + 4] = 6;  // first attribute's nla_len: 6 instead of 12
  auto bad = wire::split_messages(bytes);
  ASSERT_TRUE(bad);
  auto d = decode_stats_reply((*bad)[0]);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, EINVAL);
}

}  // namespace
}  // namespace ifcore::rtnl::test
