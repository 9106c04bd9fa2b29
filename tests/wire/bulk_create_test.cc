// tests/wire/bulk_create_test.cc — the create batch (IFCORE_IFLA_BULK in an RTM_NEWLINK):
// byte fixtures by hand, round trips, nests split for big batches, malformed input
// refused with an errno and a message that point at the attribute.
#include <net/if.h>

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include "rtnl/wire/bulk.h"
#include "rtnl/wire/bulk_create.h"
#include "wire/fixture.h"

namespace ifcore::wire {
namespace {

using namespace test;

constexpr std::uint16_t kCreate = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL;

Bytes dummy_body(const std::string& name) {
  return cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_IFNAME, cstr(name)),
              attr(IFLA_LINKINFO, attr(IFLA_INFO_KIND, cstr("dummy")))});
}

// struct ifaddrmsg: family, prefixlen, flags, scope, index.
Bytes ifaddr(std::uint8_t family, std::uint8_t prefixlen) {
  Bytes b{family, prefixlen, 0, 0};
  add(b, le32(0));
  return b;
}

Bytes v4_addr_body() {
  return cat(
      {ifaddr(AF_INET, 24), attr(IFA_ADDRESS, {10, 0, 0, 1}), attr(IFA_LOCAL, {10, 0, 0, 1})});
}

BulkLinkRequest dummy_request(const std::string& name) {
  BulkLinkRequest r;
  r.link.kind = "dummy";
  r.link.name = name;
  return r;
}

TEST(BulkCreate, RequestByHandAndRoundTrip) {
  Bytes d = nlmsg(RTM_NEWLINK, kCreate, 9, 0,
                  cat({ifinfo(0, 0, 0, 0, 0),
                       attr(IFCORE_IFLA_BULK, cat({attr(IFCORE_BULK_LINK, dummy_body("d0")),
                                                   attr(IFCORE_BULK_ADDR, v4_addr_body()),
                                                   attr(IFCORE_BULK_LINK, dummy_body("d1"))}))}));
  auto r = decode_bulk_create(one(d), {});
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(*r);
  ASSERT_EQ((*r)->items.size(), 2u);
  EXPECT_EQ((*r)->items[0].link.req.name, "d0");
  EXPECT_EQ((*r)->items[0].link.req.kind, "dummy");
  ASSERT_EQ((*r)->items[0].addrs.size(), 1u);
  EXPECT_EQ((*r)->items[0].addrs[0].prefixlen, 24);
  EXPECT_EQ((*r)->items[0].addrs[0].local, IpAddr::v4(0x0a000001));
  EXPECT_EQ((*r)->items[1].link.req.name, "d1");
  EXPECT_TRUE((*r)->items[1].addrs.empty());

  std::vector<BulkLinkRequest> reqs{dummy_request("d0"), dummy_request("d1")};
  reqs[0].addrs.push_back((*r)->items[0].addrs[0]);
  MessageBuilder b;
  ASSERT_TRUE(encode_bulk_create(b, {RTM_NEWLINK, kCreate, 9, 0}, reqs));
  EXPECT_EQ(to_bytes(b.bytes()), d);
}

TEST(BulkCreate, BodiesEncodeAsTheRequests) {
  std::vector<BulkLinkRequest> reqs{dummy_request("d0"), dummy_request("d1")};
  std::vector<std::vector<std::uint8_t>> bodies{dummy_body("d0"), dummy_body("d1")};
  MessageBuilder a, b;
  ASSERT_TRUE(encode_bulk_create(a, {RTM_NEWLINK, kCreate, 3, 0}, reqs));
  ASSERT_TRUE(encode_bulk_create_bodies(b, {RTM_NEWLINK, kCreate, 3, 0}, bodies));
  EXPECT_EQ(to_bytes(a.bytes()), to_bytes(b.bytes()));
}

TEST(BulkCreate, OrdinaryNewlinkIsNotABatch) {
  Bytes d = nlmsg(RTM_NEWLINK, kCreate, 5, 0, dummy_body("d0"));
  auto r = decode_bulk_create(one(d), {});
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
}

TEST(BulkCreate, TenThousandDevicesSpanSeveralNests) {
  std::vector<BulkLinkRequest> reqs;
  for (int i = 0; i < 10000; ++i) reqs.push_back(dummy_request("d" + std::to_string(i)));
  MessageBuilder b(1 << 20);
  ASSERT_TRUE(encode_bulk_create(b, {RTM_NEWLINK, kCreate, 1, 0}, reqs));
  Bytes d = to_bytes(b.bytes());
  EXPECT_GT(d.size(), std::size_t{65536});
  auto r = decode_bulk_create(one(d), {});
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ((*r)->items.size(), 10000u);
  EXPECT_EQ((*r)->items.back().link.req.name, "d9999");
}

TEST(BulkCreate, ResultIsAnRtmNewlink) {
  BulkResult res{0, 7, std::string("d0"), 0, ""};
  MessageBuilder b;
  ASSERT_TRUE(encode_bulk_result(b, 5, 77, res, RTM_NEWLINK));
  Bytes want =
      nlmsg(RTM_NEWLINK, NLM_F_MULTI, 5, 77,
            cat({ifinfo(0, 0, 7, 0, 0), attr(IFLA_IFNAME, cstr("d0")),
                 attr(IFCORE_IFLA_BULK_INDEX, le32(0)), attr(IFCORE_IFLA_BULK_ERRNO, le32(0))}));
  EXPECT_EQ(to_bytes(b.bytes()), want);
  auto back = decode_bulk_result(one(want));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, res);
}

// The offset of the first item's payload: nlmsghdr, ifinfomsg, the IFCORE_IFLA_BULK header.
constexpr int kFirstItem = 16 + 16 + 4;

TEST(BulkCreateMalformed, EmptyList) {
  Bytes d =
      nlmsg(RTM_NEWLINK, kCreate, 5, 0, cat({ifinfo(0, 0, 0, 0, 0), attr(IFCORE_IFLA_BULK, {})}));
  auto r = decode_bulk_create(one(d), {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_EQ(r.error().message, "create batch names no device");
}

TEST(BulkCreateMalformed, AddressBeforeAnyLink) {
  Bytes d = nlmsg(
      RTM_NEWLINK, kCreate, 5, 0,
      cat({ifinfo(0, 0, 0, 0, 0), attr(IFCORE_IFLA_BULK, attr(IFCORE_BULK_ADDR, v4_addr_body()))}));
  auto r = decode_bulk_create(one(d), {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_EQ(r.error().message, "bulk address before any link");
  EXPECT_EQ(r.error().attr_offset, kFirstItem);
}

TEST(BulkCreateMalformed, UnknownTypeInTheList) {
  Bytes d = nlmsg(RTM_NEWLINK, kCreate, 5, 0,
                  cat({ifinfo(0, 0, 0, 0, 0), attr(IFCORE_IFLA_BULK, attr(9, le32(1)))}));
  auto r = decode_bulk_create(one(d), {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "unknown attribute type 9");
  EXPECT_EQ(r.error().attr_offset, kFirstItem);
}

TEST(BulkCreateMalformed, ShortLinkBody) {
  Bytes d = nlmsg(RTM_NEWLINK, kCreate, 5, 0,
                  cat({ifinfo(0, 0, 0, 0, 0),
                       attr(IFCORE_IFLA_BULK, attr(IFCORE_BULK_LINK, Bytes{0, 0, 0, 0}))}));
  auto r = decode_bulk_create(one(d), {});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().code, 0);
}

TEST(BulkCreateMalformed, AddressOfTheWrongSizePointsIntoTheRequest) {
  Bytes addr = cat({ifaddr(AF_INET, 24), attr(IFA_LOCAL, {10, 0, 0})});
  Bytes d = nlmsg(RTM_NEWLINK, kCreate, 5, 0,
                  cat({ifinfo(0, 0, 0, 0, 0),
                       attr(IFCORE_IFLA_BULK, cat({attr(IFCORE_BULK_LINK, dummy_body("d0")),
                                                   attr(IFCORE_BULK_ADDR, addr)}))}));
  auto r = decode_bulk_create(one(d), {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  // IFA_LOCAL: after the link item, the address item's header and its ifaddrmsg.
  int link_len = 4 + static_cast<int>(dummy_body("d0").size());
  EXPECT_EQ(r.error().attr_offset, kFirstItem + link_len + 4 + 8);
}

TEST(BulkCreateMalformed, TruncatedNestIsRefused) {
  Bytes d =
      nlmsg(RTM_NEWLINK, kCreate, 5, 0,
            cat({ifinfo(0, 0, 0, 0, 0), attr(IFCORE_IFLA_BULK, Bytes{40, 0, 3, 0, 1, 2, 3, 4})}));
  auto r = decode_bulk_create(one(d), {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
}

// The reader keeps one item at a time: an address goes with the link before it, even when
// the encoder's nest ended in between.
TEST(BulkCreateReader, ReadsOneItemAtATimeWithAddressesAcrossNests) {
  Bytes d = nlmsg(RTM_NEWLINK, kCreate, 5, 0,
                  cat({ifinfo(0, 0, 0, 0, 0),
                       attr(IFCORE_IFLA_BULK, cat({attr(IFCORE_BULK_LINK, dummy_body("d0")),
                                                   attr(IFCORE_BULK_ADDR, v4_addr_body()),
                                                   attr(IFCORE_BULK_LINK, dummy_body("d1"))})),
                       attr(IFCORE_IFLA_BULK, cat({attr(IFCORE_BULK_ADDR, v4_addr_body()),
                                                   attr(IFCORE_BULK_ADDR, v4_addr_body()),
                                                   attr(IFCORE_BULK_LINK, dummy_body("d2"))}))}));
  Message m = one(d);
  DecodeContext ctx;
  auto reader = BulkCreateReader::open(m, ctx);
  ASSERT_TRUE(reader) << reader.error().message;
  ASSERT_TRUE(*reader);
  EXPECT_EQ((*reader)->size(), 3u);
  BulkLink item;
  std::vector<std::pair<std::string, std::size_t>> seen;
  for (;;) {
    auto more = (*reader)->next(item);
    ASSERT_TRUE(more) << more.error().message;
    if (!*more) break;
    seen.emplace_back(item.link.req.name.value_or(""), item.addrs.size());
  }
  EXPECT_EQ(seen,
            (std::vector<std::pair<std::string, std::size_t>>{{"d0", 1}, {"d1", 2}, {"d2", 0}}));
  auto again = (*reader)->next(item);
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
}

// What the reader has not reached yet is checked on demand, from where it stands: a link
// that does not decode after one that did.
TEST(BulkCreateReader, CheckRestFindsALaterItemThatDoesNotDecode) {
  Bytes d = nlmsg(RTM_NEWLINK, kCreate, 5, 0,
                  cat({ifinfo(0, 0, 0, 0, 0),
                       attr(IFCORE_IFLA_BULK,
                            cat({attr(IFCORE_BULK_LINK, dummy_body("d0")),
                                 attr(IFCORE_BULK_LINK, dummy_body("d1")), attr(9, le32(1))}))}));
  Message m = one(d);
  DecodeContext ctx;
  auto reader = BulkCreateReader::open(m, ctx);
  ASSERT_TRUE(reader) << reader.error().message;
  ASSERT_TRUE(*reader);
  EXPECT_EQ((*reader)->size(), 2u);
  BulkLink item;
  auto first = (*reader)->next(item);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(item.link.req.name, "d0");
  auto rest = (*reader)->check_rest();
  ASSERT_FALSE(rest);
  EXPECT_EQ(rest.error().message, "unknown attribute type 9");
  int link_len = 4 + static_cast<int>(dummy_body("d0").size());
  EXPECT_EQ(rest.error().attr_offset, kFirstItem + 2 * link_len);
}

// A nest whose framing is broken is reported when the reading gets there, after the items
// before it: the same order as a decoding of the whole list.
TEST(BulkCreateReader, ABrokenNestIsReportedWhenReached) {
  Bytes d = nlmsg(
      RTM_NEWLINK, kCreate, 5, 0,
      cat({ifinfo(0, 0, 0, 0, 0), attr(IFCORE_IFLA_BULK, attr(IFCORE_BULK_LINK, dummy_body("d0"))),
           attr(IFCORE_IFLA_BULK, Bytes{40, 0, 3, 0, 1, 2, 3, 4})}));
  Message m = one(d);
  DecodeContext ctx;
  auto reader = BulkCreateReader::open(m, ctx);
  ASSERT_TRUE(reader) << reader.error().message;
  ASSERT_TRUE(*reader);
  EXPECT_EQ((*reader)->size(), 1u);
  BulkLink item;
  auto first = (*reader)->next(item);  // looks past d0 for its addresses
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().code, EINVAL);
  auto whole = decode_bulk_create(m, {});
  ASSERT_FALSE(whole);
  EXPECT_EQ(whole.error().message, first.error().message);
}

}  // namespace
}  // namespace ifcore::wire
