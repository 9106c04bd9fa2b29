// tests/wire/netlink_test.cc — framing: splitting datagrams, the builder, DONE, ERROR/ACK
// with and without NETLINK_CAP_ACK / NETLINK_EXT_ACK, and dumps cut into datagrams.
#include "rtnl/wire/netlink.h"

#include <gtest/gtest.h>
#include <net/if.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "rtnl/wire/link.h"
#include "wire/fixture.h"

namespace ifcore::wire {
namespace {

using namespace test;

TEST(Split, TwoMessages) {
  Bytes d = cat({nlmsg(RTM_GETLINK, NLM_F_REQUEST, 1, 0, Bytes(16, 0)),
                 nlmsg(RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, 2, 7, {1, 0, 0, 0})});
  auto r = split_messages(d);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].hdr.nlmsg_type, RTM_GETLINK);
  EXPECT_EQ((*r)[0].payload().size(), 16u);
  EXPECT_EQ((*r)[1].hdr.nlmsg_seq, 2u);
  EXPECT_EQ((*r)[1].hdr.nlmsg_pid, 7u);
  EXPECT_TRUE((*r)[1].is_dump());
}

TEST(Split, LastMessageWithoutPaddingIsAccepted) {
  Bytes d = nlmsg(RTM_GETADDR, 0, 1, 0, {2});  // 17 bytes
  auto r = split_messages(d);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[0].bytes.size(), 17u);
}

TEST(OnlyMessage, AgreesWithSplitMessages) {
  Bytes one = nlmsg(RTM_GETLINK, NLM_F_REQUEST, 1, 0, Bytes(16, 0));
  Bytes unpadded = nlmsg(RTM_GETADDR, 0, 1, 0, {2});  // 17 bytes
  Bytes padded = unpadded;
  padded.resize(20, 0);  // 17 bytes of message and its padding
  Bytes two = cat({one, nlmsg(RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, 2, 7, {1, 0, 0, 0})});
  Bytes short_hdr(one.begin(), one.begin() + 12);
  Bytes small = one, past = one, trailing = cat({one, Bytes{1, 2, 3}});
  small[0] = 8;
  past[0] = 64;
  for (const Bytes* d : {&one, &unpadded, &padded, &two, &short_hdr, &small, &past, &trailing}) {
    auto split = split_messages(*d);
    auto only = only_message(*d);
    bool single = split && split->size() == 1;
    ASSERT_EQ(only.has_value(), single) << "datagram of " << d->size() << " bytes";
    if (!single) continue;
    EXPECT_EQ(only->bytes.data(), (*split)[0].bytes.data());
    EXPECT_EQ(only->bytes.size(), (*split)[0].bytes.size());
    EXPECT_EQ(only->hdr.nlmsg_seq, (*split)[0].hdr.nlmsg_seq);
  }
  EXPECT_FALSE(only_message({}));
}

TEST(SplitMalformed, TruncatedNlmsghdr) {
  Bytes d = nlmsg(RTM_GETLINK, 0, 1, 0, {});
  d.resize(12);
  auto r = split_messages(d);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_EQ(r.error().message, "truncated netlink header (12 bytes, need 16)");
}

TEST(SplitMalformed, NlmsgLenSmallerThanHeader) {
  Bytes d = nlmsg(RTM_GETLINK, 0, 1, 0, {});
  d[0] = 8;
  auto r = split_messages(d);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_EQ(r.error().message, "netlink message length 8 smaller than header");
}

TEST(SplitMalformed, LengthPastTheEndOfTheDatagram) {
  Bytes d = nlmsg(RTM_GETLINK, 0, 1, 0, Bytes(16, 0));
  d[0] = 64;
  auto r = split_messages(d);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_EQ(r.error().message,
            "netlink message length 64 past the end of the datagram (32 bytes left)");
}

TEST(SplitMalformed, SecondMessageTruncated) {
  Bytes d = cat({nlmsg(RTM_GETLINK, 0, 1, 0, {}), Bytes{1, 2, 3}});
  auto r = split_messages(d);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
}

TEST(Builder, WritesHeaderStructAttributesAndNest) {
  MessageBuilder b;
  b.begin({RTM_NEWLINK, NLM_F_MULTI, 9, 1234});
  std::uint32_t word = 0xaabbccdd;
  b.put_struct(word);
  b.put_u8(1, 0x7f);
  b.put_string(2, "ab");
  auto n = b.begin_nest(3);
  b.put_u16(4, 0x0102);
  b.put_be16(5, 0x0102);
  b.end_nest(n);
  auto r = b.end();
  ASSERT_TRUE(r);
  Bytes want = nlmsg(RTM_NEWLINK, NLM_F_MULTI, 9, 1234,
                     cat({le32(0xaabbccdd), attr(1, {0x7f}), attr(2, cstr("ab")),
                          attr(3, cat({attr(4, le16(0x0102)), attr(5, {0x01, 0x02})}))}));
  EXPECT_EQ(to_bytes(*r), want);
  EXPECT_EQ(b.count(), 1u);
}

TEST(Builder, OversizedAttributeIsEmsgsize) {
  MessageBuilder b;
  b.begin({RTM_NEWLINK, 0, 1, 0});
  Bytes big(70000, 1);
  b.put_bytes(1, big);
  auto r = b.end();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EMSGSIZE);
  EXPECT_EQ(b.size(), 0u);
}

TEST(Builder, OversizedNestIsEmsgsize) {
  MessageBuilder b;
  b.begin({RTM_NEWLINK, 0, 1, 0});
  auto n = b.begin_nest(1);
  for (int i = 0; i < 3; ++i) b.put_bytes(2, Bytes(30000, 0));
  b.end_nest(n);
  auto r = b.end();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EMSGSIZE);
}

TEST(Builder, FitsAndDropLast) {
  MessageBuilder b(64);
  EXPECT_TRUE(b.fits(1000));  // the first message always fits
  b.begin({1, 0, 1, 0});
  b.put_raw(Bytes(24, 0).data(), 24);
  ASSERT_TRUE(b.end());  // 40 bytes
  EXPECT_TRUE(b.fits(24));
  EXPECT_FALSE(b.fits(25));
  b.begin({2, 0, 2, 0});
  b.put_raw(Bytes(24, 0).data(), 24);
  ASSERT_TRUE(b.end());
  EXPECT_TRUE(b.over_limit());
  b.drop_last();
  EXPECT_EQ(b.count(), 1u);
  EXPECT_EQ(b.size(), 40u);
  EXPECT_FALSE(b.over_limit());
}

// The builder keeps its storage across cancel, drop_last and failed ends: a message
// written over bytes of an earlier one must still have zero padding everywhere.
TEST(Builder, PaddingIsZeroOverReusedStorage) {
  MessageBuilder b;
  Bytes ones(200, 0xff);
  b.begin({RTM_NEWLINK, 0, 1, 0});
  b.put_bytes(1, ones);
  b.cancel();
  b.begin({RTM_NEWLINK, 0, 2, 0});
  b.put_raw(ones.data(), 3);
  b.put_u8(1, 7);
  b.put_string(2, "abcde");
  b.put_string(3, "");
  auto n = b.begin_nest(4);
  b.put_u16(5, 0x0102);
  b.end_nest(n);
  auto r = b.end();
  ASSERT_TRUE(r);
  Bytes want = nlmsg(RTM_NEWLINK, 0, 2, 0,
                     cat({Bytes{0xff, 0xff, 0xff, 0}, attr(1, {7}), attr(2, cstr("abcde")),
                          attr(3, cstr("")), attr(4, attr(5, le16(0x0102)))}));
  EXPECT_EQ(to_bytes(*r), want);

  // A finished message dropped, then another in its place; then one past the first
  // allocation (the storage grows while a message is open).
  b.begin({RTM_NEWLINK, 0, 3, 0});
  b.put_bytes(1, ones);
  ASSERT_TRUE(b.end());
  b.drop_last();
  b.drop_last();
  EXPECT_EQ(b.count(), 0u);
  b.begin({RTM_NEWLINK, 0, 4, 0});
  Bytes parts;
  for (int i = 0; i < 100; ++i) {
    b.put_string(static_cast<std::uint16_t>(i + 1), "x");
    parts = cat({parts, attr(static_cast<std::uint16_t>(i + 1), cstr("x"))});
  }
  auto r2 = b.end();
  ASSERT_TRUE(r2);
  EXPECT_EQ(to_bytes(*r2), nlmsg(RTM_NEWLINK, 0, 4, 0, parts));
  EXPECT_EQ(b.take(), nlmsg(RTM_NEWLINK, 0, 4, 0, parts));
  EXPECT_EQ(b.size(), 0u);
}

TEST(Done, CarriesFourByteErrorAndMulti) {
  MessageBuilder b;
  ASSERT_TRUE(encode_done(b, 77, 4242));
  EXPECT_EQ(to_bytes(b.bytes()), nlmsg(NLMSG_DONE, NLM_F_MULTI, 77, 4242, le32(0)));
  Bytes keep = to_bytes(b.bytes());
  auto d = decode_done(one(keep));
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, 0);
}

TEST(Done, DumpInterruptedCarriesNegativeErrno) {
  MessageBuilder b;
  ASSERT_TRUE(encode_done(b, 1, 1, -EINTR));
  Bytes keep = to_bytes(b.bytes());
  EXPECT_EQ(*decode_done(one(keep)), EINTR);
}

// A refused dump's NLMSG_DONE as Linux 6.18 sent it for `ip nexthop bucket show id 20`
// (a group not resilient): the error, then NLMSGERR_ATTR_MSG, flagged NLM_F_ACK_TLVS.
TEST(Done, ARefusedDumpCarriesItsExtack) {
  const std::string text = "Nexthop group not of type resilient";
  Bytes msg(text.begin(), text.end());
  msg.push_back(0);
  Bytes keep = nlmsg(NLMSG_DONE, NLM_F_MULTI | NLM_F_ACK_TLVS, 7, 0,
                     cat({le32(std::uint32_t(-EINVAL)), attr(NLMSGERR_ATTR_MSG, msg)}));
  EXPECT_EQ(*decode_done(one(keep)), EINVAL);
  EXPECT_EQ(decode_done_message(one(keep)), text);
  Bytes plain = nlmsg(NLMSG_DONE, NLM_F_MULTI, 7, 0, le32(std::uint32_t(-ENOENT)));
  EXPECT_EQ(decode_done_message(one(plain)), "");
}

// A request to answer: RTM_NEWLINK with IFLA_MTU at offset 32.
Bytes sample_request() {
  return nlmsg(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 5, 99,
               cat({ifinfo(0, 0, 3, 0, 0), attr(IFLA_MTU, le32(70000))}));
}

TEST(ErrorReply, AckIsCappedEvenWithoutCapAck) {
  Bytes req = sample_request();
  MessageBuilder b;
  ASSERT_TRUE(encode_ack(b, req, 99, {}));
  Bytes hdr(req.begin(), req.begin() + 16);
  EXPECT_EQ(to_bytes(b.bytes()), nlmsg(NLMSG_ERROR, NLM_F_CAPPED, 5, 99, cat({le32(0), hdr})));
}

TEST(ErrorReply, AckDatagramIsTheAckEncodeAckWritesForEveryOption) {
  Bytes req = sample_request();
  for (AckOptions o : {AckOptions{}, AckOptions{.cap_ack = true}, AckOptions{.ext_ack = true},
                       AckOptions{.cap_ack = true, .ext_ack = true}}) {
    MessageBuilder b;
    ASSERT_TRUE(encode_ack(b, req, 99, o));
    auto d = ack_datagram(req, 99);
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(*d, to_bytes(b.bytes()));
  }
  Bytes hdr(req.begin(), req.begin() + 16);
  EXPECT_EQ(*ack_datagram(req, 7), nlmsg(NLMSG_ERROR, NLM_F_CAPPED, 5, 7, cat({le32(0), hdr})));
}

TEST(ErrorReply, AckDatagramOfATruncatedRequestIsRefused) {
  Bytes req = sample_request();
  auto d = ack_datagram(std::span<const std::uint8_t>(req.data(), 15), 99);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, EINVAL);
}

TEST(ErrorReply, ErrorEchoesWholeRequestWithoutCapAck) {
  Bytes req = sample_request();
  MessageBuilder b;
  ASSERT_TRUE(encode_error(b, req, 99, EINVAL, "mtu too big", 32, {}));
  EXPECT_EQ(to_bytes(b.bytes()),
            nlmsg(NLMSG_ERROR, 0, 5, 99, cat({le32(std::uint32_t(-EINVAL)), req})));
}

TEST(ErrorReply, ErrorCappedWithCapAck) {
  Bytes req = sample_request();
  MessageBuilder b;
  ASSERT_TRUE(encode_error(b, req, 99, ERANGE, "x", 32, {.cap_ack = true}));
  Bytes hdr(req.begin(), req.begin() + 16);
  EXPECT_EQ(to_bytes(b.bytes()),
            nlmsg(NLMSG_ERROR, NLM_F_CAPPED, 5, 99, cat({le32(std::uint32_t(-ERANGE)), hdr})));
}

TEST(ErrorReply, ExtAckAddsMessageAndOffset) {
  Bytes req = sample_request();
  MessageBuilder b;
  ASSERT_TRUE(
      encode_error(b, req, 99, EINVAL, "mtu too big", 32, {.cap_ack = true, .ext_ack = true}));
  Bytes hdr(req.begin(), req.begin() + 16);
  Bytes want =
      nlmsg(NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, 5, 99,
            cat({le32(std::uint32_t(-EINVAL)), hdr, attr(NLMSGERR_ATTR_MSG, cstr("mtu too big")),
                 attr(NLMSGERR_ATTR_OFFS, le32(32))}));
  EXPECT_EQ(to_bytes(b.bytes()), want);

  Bytes keep = to_bytes(b.bytes());
  auto e = decode_error(one(keep));
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->error, EINVAL);
  EXPECT_EQ(e->message, "mtu too big");
  EXPECT_EQ(e->attr_offset, 32);
  EXPECT_TRUE(e->capped);
  EXPECT_EQ(e->request.nlmsg_seq, 5u);
}

TEST(ErrorReply, ExtAckWithFullEchoDecodes) {
  Bytes req = sample_request();
  MessageBuilder b;
  ASSERT_TRUE(encode_error(b, req, 99, Error{EEXIST, "device exists", -1}, {.ext_ack = true}));
  Bytes keep = to_bytes(b.bytes());
  auto e = decode_error(one(keep));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error, EEXIST);
  EXPECT_EQ(e->message, "device exists");
  EXPECT_EQ(e->attr_offset, -1);
  EXPECT_FALSE(e->capped);
}

// What Linux 6.18 answers `ip link add aaaaaaaaaaaaaaaaaaaa type dummy` (a name of 20
// bytes; ifla_policy allows IFNAMSIZ - 1), byte for byte: validate_nla's ERANGE, "Attribute
// failed policy validation", the offset of IFLA_IFNAME and its policy (NL_ATTR_TYPE_STRING,
// maximum length 15) in an NLA_F_NESTED NLMSGERR_ATTR_POLICY.
TEST(ErrorReply, PolicyFailureAsLinuxSendsIt) {
  Bytes kind = attr(IFLA_INFO_KIND, cstr("dummy"));
  Bytes req = nlmsg(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, 7, 0,
                    cat({Bytes(16, 0), attr(IFLA_IFNAME, cstr("aaaaaaaaaaaaaaaaaaaa")),
                         attr(IFLA_LINKINFO, kind)}));
  auto m = decode_link_request(one(req), DecodeContext{});
  ASSERT_FALSE(m);
  MessageBuilder b;
  ASSERT_TRUE(encode_error(b, req, 21514, m.error(), {.ext_ack = true}));
  Bytes policy = cat({le16(20), le16(NLA_F_NESTED | NLMSGERR_ATTR_POLICY),
                      attr(NL_POLICY_TYPE_ATTR_MAX_LENGTH, le32(15)),
                      attr(NL_POLICY_TYPE_ATTR_TYPE, le32(NL_ATTR_TYPE_STRING))});
  Bytes want = nlmsg(NLMSG_ERROR, NLM_F_ACK_TLVS, 7, 21514,
                     cat({le32(std::uint32_t(-ERANGE)), req,
                          attr(NLMSGERR_ATTR_MSG, cstr("Attribute failed policy validation")),
                          attr(NLMSGERR_ATTR_OFFS, le32(32)), policy}));
  EXPECT_EQ(to_bytes(b.bytes()), want);
  EXPECT_EQ(to_bytes(b.bytes()).size(), 164u);  // as the kernel's reply
}

// An unsigned integer's policy carries its range, before its type (u64 values, no pad
// attribute on x86-64).
TEST(ErrorReply, PolicyOfAnUnsignedIntegerCarriesItsRange) {
  Bytes req = sample_request();
  Error e{ERANGE, "Attribute failed policy validation", 32};
  e.policy = {.type = NL_ATTR_TYPE_U8, .has_range = true, .min_value = 0, .max_value = 255};
  MessageBuilder b;
  ASSERT_TRUE(encode_error(b, req, 1, e, {.cap_ack = true, .ext_ack = true}));
  Bytes tail = cat({le16(4 + 12 + 12 + 8), le16(NLA_F_NESTED | NLMSGERR_ATTR_POLICY),
                    attr(NL_POLICY_TYPE_ATTR_MIN_VALUE_U, le64(0)),
                    attr(NL_POLICY_TYPE_ATTR_MAX_VALUE_U, le64(255)),
                    attr(NL_POLICY_TYPE_ATTR_TYPE, le32(NL_ATTR_TYPE_U8))});
  Bytes got = to_bytes(b.bytes());
  ASSERT_GE(got.size(), tail.size());
  EXPECT_EQ(Bytes(got.end() - tail.size(), got.end()), tail);
  // Without NETLINK_EXT_ACK, or for a log-only error, no policy.
  MessageBuilder b2;
  ASSERT_TRUE(encode_error(b2, req, 1, e, {.cap_ack = true}));
  EXPECT_EQ(b2.bytes()[6] & (NLM_F_ACK_TLVS >> 8), 0);
}

TEST(ErrorReply, OffsetOutsideRequestIsNotReported) {
  Bytes req = sample_request();
  MessageBuilder b;
  ASSERT_TRUE(encode_error(b, req, 99, EINVAL, "", 400, {.ext_ack = true}));
  EXPECT_EQ(b.bytes()[6] & (NLM_F_ACK_TLVS >> 8), 0);  // no TLVs at all
}

TEST(ErrorReplyMalformed, PayloadTooShort) {
  Bytes d = nlmsg(NLMSG_ERROR, 0, 1, 0, le32(0));
  auto e = decode_error(one(d));
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, EINVAL);
}

TEST(Dump, SplitIntoPageSizedDatagrams) {
  // 100 messages of 100 bytes each in 4 KiB datagrams: 40 per datagram.
  DatagramWriter w(4096);
  for (int i = 0; i < 100; ++i) {
    MessageBuilder b;
    b.begin({RTM_NEWLINK, NLM_F_MULTI, 1, 1});
    b.put_raw(Bytes(84, std::uint8_t(i)).data(), 84);
    ASSERT_TRUE(b.end());
    w.append(b.bytes());
  }
  MessageBuilder done;
  ASSERT_TRUE(encode_done(done, 1, 1));
  w.append(done.bytes());
  auto grams = w.take();
  ASSERT_EQ(grams.size(), 3u);
  EXPECT_EQ(grams[0].size(), 4000u);
  EXPECT_EQ(grams[1].size(), 4000u);
  EXPECT_EQ(grams[2].size(), 2000u + 20u);
  std::size_t total = 0;
  for (const auto& g : grams) {
    EXPECT_LE(g.size(), 4096u);
    auto r = split_messages(g);
    ASSERT_TRUE(r);
    total += r->size();
  }
  EXPECT_EQ(total, 101u);
}

TEST(Dump, BuilderResumePattern) {
  // A handler fills one builder until it overshoots, then moves the last message on.
  MessageBuilder b(1024);
  int written = 0;
  for (int i = 0; i < 50; ++i) {
    b.begin({RTM_NEWLINK, NLM_F_MULTI, 1, 1});
    b.put_raw(Bytes(100, 0).data(), 100);
    ASSERT_TRUE(b.end());
    if (b.over_limit()) {
      b.drop_last();
      break;
    }
    ++written;
  }
  EXPECT_EQ(written, 8);  // 8 * 116 = 928 <= 1024 < 1044
  EXPECT_LE(b.size(), 1024u);
}

}  // namespace
}  // namespace ifcore::wire

namespace ifcore::wire::test {
namespace {

// Error::log_only: the errno goes on the wire, the message does not (Linux sets no extack
// for these errors), even with NETLINK_EXT_ACK.
TEST(Netlink, LogOnlyErrorsCarryNoExtack) {
  std::vector<std::uint8_t> req(NLMSG_HDRLEN);
  nlmsghdr h{NLMSG_HDRLEN, RTM_NEWLINK, NLM_F_REQUEST, 7, 0};
  std::memcpy(req.data(), &h, sizeof(h));
  Error e{EEXIST, "device \"v0\" already exists", 4, true};
  MessageBuilder b;
  ASSERT_TRUE(encode_error(b, req, 1, e, AckOptions{false, true}));
  auto bytes = b.take();
  auto m = only_message(bytes);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->hdr.nlmsg_flags & NLM_F_ACK_TLVS);
  auto r = decode_error(*m);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->error, EEXIST);
  EXPECT_EQ(r->message, "");
  e.log_only = false;
  MessageBuilder b2;
  ASSERT_TRUE(encode_error(b2, req, 1, e, AckOptions{false, true}));
  auto bytes2 = b2.take();
  EXPECT_EQ(decode_error(*only_message(bytes2))->message, "device \"v0\" already exists");
}

}  // namespace
}  // namespace ifcore::wire::test
