// tests/rtnl/probe_test.cc — ifcore's probe message: the codec (round trip, malformed
// input) and the handler (frames across a veth pair, a down end, missing devices, limits,
// read-only peers).
#include "rtnl/wire/probe_msg.h"

#include <net/if.h>

#include <linux/if.h>
#include <linux/veth.h>

#include "fixture.h"

namespace ifcore::rtnl::test {
namespace {

Bytes probe_request(std::uint32_t seq, const ProbeRequest& req, std::uint16_t flags = 0) {
  wire::MessageBuilder b;
  EXPECT_TRUE(encode_probe_request(b, seq, req, flags));
  return b.take();
}

ProbeRequest by_name(std::string from, std::string to, std::uint32_t count = 1) {
  ProbeRequest r;
  r.from.name = std::move(from);
  r.to.name = std::move(to);
  r.count = count;
  r.interval_us = 0;
  r.timeout_ms = 1000;
  return r;
}

class ProbeMsg : public RtnlTest {
 protected:
  // A veth pair `a`/`b` made through the session, both ends up.
  void SetUp() override {
    RtnlTest::SetUp();
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("a", "b"))).last_error(), 0);
    set_up("a", true);
    set_up("b", true);
  }
  void set_up(const std::string& name, bool up) {
    LinkRequest req = named(name);
    req.flags = up ? IFF_UP : 0;
    req.change = IFF_UP;
    ASSERT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 2, req)).last_error(), 0);
  }
  // Sends a probe; returns the decoded reply, or fails the test with the errno.
  Result<ProbeReply> run(const ProbeRequest& req, Session* s = nullptr) {
    auto r = roundtrip(s ? *s : *session, probe_request(9, req, NLM_F_ACK));
    if (r.msgs.empty()) return fail(EIO, "no reply");
    if (r.msgs[0].hdr.nlmsg_type == NLMSG_ERROR) return fail(r.last_error(), "error");
    EXPECT_EQ(r.msgs.size(), 2u);  // the reply, then the ACK
    EXPECT_EQ(r.msgs[0].hdr.nlmsg_seq, 9u);
    EXPECT_EQ(r.last_error(), 0);
    return decode_probe_reply(r.msgs[0]);
  }
};

TEST_F(ProbeMsg, EveryFrameArrivesWhenBothEndsAreUp) {
  auto r = run(by_name("a", "b", 5));
  ASSERT_TRUE(r) << r.error().code;
  EXPECT_EQ(r->attempts, 5u);
  EXPECT_EQ(r->sent, 5u);
  EXPECT_EQ(r->received, 5u);
  ASSERT_TRUE(r->first_arrival_us);
  EXPECT_LT(*r->first_arrival_us, 1'000'000u);
  // And back, naming the devices by ifindex.
  ProbeRequest back;
  back.from.ifindex = static_cast<std::uint32_t>(find("b")->ifindex());
  back.to.ifindex = static_cast<std::uint32_t>(find("a")->ifindex());
  back.count = 3;
  back.interval_us = 0;
  auto rb = run(back);
  ASSERT_TRUE(rb);
  EXPECT_EQ(rb->received, 3u);
}

TEST_F(ProbeMsg, NothingArrivesWhenOneEndIsDown) {
  set_up("b", false);
  ProbeRequest req = by_name("a", "b");
  req.timeout_ms = 0;  // one attempt
  auto r = run(req);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->attempts, 1u);
  EXPECT_EQ(r->sent, 0u);  // `a` lost its carrier with its peer
  EXPECT_EQ(r->received, 0u);
  EXPECT_FALSE(r->first_arrival_us);
  req.timeout_ms = 20;  // attempts until the timeout, none arrives
  req.interval_us = 1000;
  r = run(req);
  ASSERT_TRUE(r);
  EXPECT_GT(r->attempts, 1u);
  EXPECT_EQ(r->received, 0u);
}

TEST_F(ProbeMsg, MissingDevicesAreENODEV) {
  EXPECT_EQ(run(by_name("a", "nosuch")).error().code, ENODEV);
  EXPECT_EQ(run(by_name("nosuch", "b")).error().code, ENODEV);
  ProbeRequest req = by_name("a", "b");
  req.from = ProbeEnd{9999, ""};
  EXPECT_EQ(run(req).error().code, ENODEV);
}

TEST_F(ProbeMsg, LimitsAndMissingEndsAreEINVAL) {
  ProbeRequest req = by_name("a", "b", 0);
  EXPECT_EQ(run(req).error().code, EINVAL);
  req = by_name("a", "b");
  req.timeout_ms = kProbeMaxTimeoutMs + 1;
  EXPECT_EQ(run(req).error().code, EINVAL);
  req = by_name("a", "b");
  req.interval_us = kProbeMaxIntervalUs + 1;
  EXPECT_EQ(run(req).error().code, EINVAL);
  req = by_name("a", "");
  EXPECT_EQ(run(req).error().code, EINVAL);
}

TEST_F(ProbeMsg, ReadOnlyPeersMayNotProbe) {
  SessionOptions o;
  o.may_write = false;
  auto ro = open(o);
  auto r = run(by_name("a", "b"), ro.get());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EPERM);
  EXPECT_EQ(find("b")->counters().rx_packets.load(), 0u);  // nothing was sent
}

TEST(ProbeCodec, RequestAndReplyRoundTrip) {
  ProbeRequest req;
  req.from.ifindex = 7;
  req.to.name = "veth1";
  req.count = 10;
  req.interval_us = 250;
  req.timeout_ms = 1500;
  Bytes bytes = probe_request(3, req, NLM_F_ACK);
  auto msgs = wire::split_messages(bytes);
  ASSERT_TRUE(msgs);
  EXPECT_EQ((*msgs)[0].hdr.nlmsg_type, IFCORE_NLMSG_PROBE);
  EXPECT_EQ((*msgs)[0].hdr.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  auto d = decode_probe_request((*msgs)[0]);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->from.ifindex, 7u);
  EXPECT_EQ(d->from.name, "");
  EXPECT_EQ(d->to.ifindex, 0u);
  EXPECT_EQ(d->to.name, "veth1");
  EXPECT_EQ(d->count, 10u);
  EXPECT_EQ(d->interval_us, 250u);
  EXPECT_EQ(d->timeout_ms, 1500u);

  ProbeReply rep;
  rep.attempts = 1012;
  rep.sent = 10;
  rep.received = 9;
  rep.first_arrival_us = 1'000'321;
  wire::MessageBuilder b;
  ASSERT_TRUE(encode_probe_reply(b, 3, 42, rep));
  Bytes rb = b.take();
  auto rm = wire::split_messages(rb);
  ASSERT_TRUE(rm);
  EXPECT_EQ((*rm)[0].hdr.nlmsg_seq, 3u);
  EXPECT_EQ((*rm)[0].hdr.nlmsg_pid, 42u);
  auto got = decode_probe_reply((*rm)[0]);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->attempts, 1012u);
  EXPECT_EQ(got->sent, 10u);
  EXPECT_EQ(got->received, 9u);
  EXPECT_EQ(got->first_arrival_us, std::optional<std::uint64_t>(1'000'321));

  rep.first_arrival_us.reset();  // nothing arrived: no attribute
  ASSERT_TRUE(encode_probe_reply(b, 4, 42, rep));
  rb = b.take();
  rm = wire::split_messages(rb);
  ASSERT_TRUE(rm);
  got = decode_probe_reply((*rm)[0]);
  ASSERT_TRUE(got);
  EXPECT_FALSE(got->first_arrival_us);
}

TEST(ProbeCodec, MalformedIsAnErrorNeverACrash) {
  ProbeRequest req;
  req.from.name = "a";
  req.to.name = "b";
  Bytes bytes = probe_request(1, req);
  // The first attribute (FROM_NAME, "a\0": nla_len 6) made a u32's type: wrong size.
  bytes[NLMSG_HDRLEN + 4 + 2] = IFCORE_PROBE_COUNT;
  auto msgs = wire::split_messages(bytes);
  ASSERT_TRUE(msgs);
  auto d = decode_probe_request((*msgs)[0]);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, ERANGE);  // 2 bytes for a u32 (validate_nla's rule)
  // Without FROM.
  ProbeRequest half;
  half.to.name = "b";
  bytes = probe_request(1, half);
  msgs = wire::split_messages(bytes);
  ASSERT_TRUE(msgs);
  EXPECT_EQ(decode_probe_request((*msgs)[0]).error().code, EINVAL);
  // Another message type, and a reply with a short counter.
  wire::MessageBuilder b;
  b.begin({RTM_GETLINK, NLM_F_REQUEST, 1, 0});
  b.put_struct(rtgenmsg{AF_UNSPEC});
  ASSERT_TRUE(b.end());
  bytes = b.take();
  msgs = wire::split_messages(bytes);
  ASSERT_TRUE(msgs);
  EXPECT_EQ(decode_probe_request((*msgs)[0]).error().code, EINVAL);
  EXPECT_EQ(decode_probe_reply((*msgs)[0]).error().code, EINVAL);
  b.begin({IFCORE_NLMSG_PROBE, 0, 1, 0});
  b.put_struct(rtgenmsg{AF_UNSPEC});
  b.put_u32(IFCORE_PROBE_RECEIVED, 5);
  ASSERT_TRUE(b.end());
  bytes = b.take();
  msgs = wire::split_messages(bytes);
  ASSERT_TRUE(msgs);
  EXPECT_EQ(decode_probe_reply((*msgs)[0]).error().code, ERANGE);  // a counter shorter than its u64
  // Truncated: no rtgenmsg.
  b.begin({IFCORE_NLMSG_PROBE, NLM_F_REQUEST, 1, 0});
  ASSERT_TRUE(b.end());
  bytes = b.take();
  msgs = wire::split_messages(bytes);
  ASSERT_TRUE(msgs);
  EXPECT_EQ(decode_probe_request((*msgs)[0]).error().code, EINVAL);
}

}  // namespace
}  // namespace ifcore::rtnl::test
