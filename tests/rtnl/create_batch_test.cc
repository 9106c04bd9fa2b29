// tests/rtnl/create_batch_test.cc — the create batch through the handler: per-item results
// (multipart RTM_NEWLINK), NLMSG_DONE, the ACK; addresses added with their devices; a
// failed item, or a failed address, leaves nothing behind.
#include <linux/netlink.h>

#include "ifcore/inet.h"
#include "rtnl/fixture.h"
#include "rtnl/wire/bulk.h"
#include "rtnl/wire/bulk_create.h"

namespace ifcore::rtnl {
namespace {

using test::Bytes;
using test::Replies;
namespace wt = wire::test;

wire::BulkLinkRequest item(const std::string& name) {
  wire::BulkLinkRequest r;
  r.link.kind = "dummy";
  r.link.name = name;
  return r;
}

wire::AddrMessage addr(const char* ip, std::uint8_t prefixlen) {
  wire::AddrMessage a;
  a.local = *IpAddr::parse(ip);
  a.family = a.local->is_v4() ? AF_INET : AF_INET6;
  a.prefixlen = prefixlen;
  return a;
}

class CreateBatchTest : public test::RtnlTest {
 protected:
  Replies batch(const std::vector<wire::BulkLinkRequest>& items,
                std::uint16_t flags = NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK) {
    wire::MessageBuilder b(1 << 20);
    EXPECT_TRUE(wire::encode_bulk_create(
        b, {RTM_NEWLINK, std::uint16_t(NLM_F_REQUEST | flags), 9, 0}, items));
    return send(b.take());
  }
  // The per-item results of `r` (which must be all results, DONE and the ACK).
  std::vector<wire::BulkResult> results(const Replies& r, std::size_t n) {
    std::vector<wire::BulkResult> out;
    EXPECT_EQ(r.msgs.size(), n + 2);
    for (std::size_t i = 0; i < n && i < r.msgs.size(); ++i) {
      EXPECT_EQ(r.msgs[i].hdr.nlmsg_type, RTM_NEWLINK);
      EXPECT_EQ(r.msgs[i].hdr.nlmsg_flags, NLM_F_MULTI);
      auto res = wire::decode_bulk_result(r.msgs[i]);
      EXPECT_TRUE(res);
      if (res) out.push_back(*res);
    }
    if (r.msgs.size() == n + 2) {
      EXPECT_EQ(r.msgs[n].hdr.nlmsg_type, NLMSG_DONE);
    }
    EXPECT_EQ(r.last_error(), 0);  // the ACK
    return out;
  }
  std::size_t addresses(const std::string& dev) {
    Device* d = find(dev);
    if (!d) return 0;
    auto ctl = engine->control();
    return inet::list_addresses(ctl, *ctl.find_namespace("default"), 0, d->ifindex()).size();
  }
};

TEST_F(CreateBatchTest, DevicesAndTheirAddressesWithPerItemResults) {
  std::vector<wire::BulkLinkRequest> items{item("d0"), item("d1"), item("dummy%d")};
  items[0].addrs = {addr("10.0.0.1", 24), addr("2001:db8::1", 64)};
  items[2].addrs = {addr("10.0.2.1", 24)};
  auto before = engine->stats().notifier_passes;
  auto res = results(batch(items), 3);
  ASSERT_EQ(res.size(), 3u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(res[i].index, i);
    EXPECT_EQ(res[i].error, 0) << res[i].message;
  }
  EXPECT_EQ(res[2].name, "dummy0");
  ASSERT_NE(find("d1"), nullptr);
  EXPECT_EQ(res[1].ifindex, find("d1")->ifindex());
  EXPECT_EQ(addresses("d0"), 2u);
  EXPECT_EQ(addresses("d1"), 0u);
  EXPECT_EQ(addresses("dummy0"), 1u);
  // One Register pass for the devices (the addresses make passes of their own elsewhere).
  EXPECT_GE(engine->stats().notifier_passes, before + 1);
}

TEST_F(CreateBatchTest, AFailedItemMakesNothingAndCancelsTheOthers) {
  ASSERT_EQ(create("taken"), 0);
  std::size_t count = device_count();
  auto res = results(batch({item("e0"), item("e1"), item("taken"), item("e3")}), 4);
  ASSERT_EQ(res.size(), 4u);
  EXPECT_EQ(res[2].error, EEXIST);
  for (int i : {0, 1, 3}) {
    EXPECT_EQ(res[i].error, ECANCELED);
    EXPECT_EQ(res[i].message, "not created: item 2 failed");
    EXPECT_EQ(res[i].ifindex, 0);
  }
  EXPECT_EQ(device_count(), count);
  EXPECT_EQ(find("e0"), nullptr);
  // Each result names what its item asked for.
  for (int i : {0, 1, 3}) EXPECT_EQ(res[i].name, "e" + std::to_string(i));
  EXPECT_EQ(res[2].name, "taken");
}

TEST_F(CreateBatchTest, AFailedBatchNamesThePatternAskedFor) {
  ASSERT_EQ(create("p1"), 0);
  auto res = results(batch({item("p%d"), item("p1")}), 2);
  ASSERT_EQ(res.size(), 2u);
  EXPECT_EQ(res[0].error, ECANCELED);
  EXPECT_EQ(res[0].name, "p%d");
  EXPECT_EQ(res[1].error, EEXIST);
  EXPECT_EQ(find("p0"), nullptr);
}

TEST_F(CreateBatchTest, AFailedAddressUndoesTheWholeBatch) {
  std::vector<wire::BulkLinkRequest> items{item("f0"), item("f1")};
  items[0].addrs = {addr("10.0.0.1", 24)};
  items[1].addrs = {addr("10.0.1.1", 24), addr("10.0.1.1", 24)};  // the second: EEXIST
  std::size_t count = device_count();
  auto res = results(batch(items), 2);
  ASSERT_EQ(res.size(), 2u);
  EXPECT_EQ(res[0].error, ECANCELED);
  EXPECT_EQ(res[1].error, EEXIST);
  EXPECT_EQ(device_count(), count);
  EXPECT_EQ(find("f0"), nullptr);
}

TEST_F(CreateBatchTest, KindsThatCannotBeBatchedAreNamed) {
  wire::BulkLinkRequest v = item("g1");
  v.link.kind = "bridge";
  auto res = results(batch({item("g0"), v}), 2);
  ASSERT_EQ(res.size(), 2u);
  EXPECT_EQ(res[1].error, EOPNOTSUPP);
  EXPECT_EQ(res[1].message, "kind \"bridge\" cannot be created in a batch");
}

TEST_F(CreateBatchTest, ABatchNeedsCreate) {
  Replies r = batch({item("h0")}, NLM_F_ACK);
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(find("h0"), nullptr);
}

TEST_F(CreateBatchTest, MalformedBatchIsRefusedWithItsOffset) {
  Bytes d = wt::nlmsg(
      RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK, 4, 0,
      wt::cat({wt::ifinfo(0, 0, 0, 0, 0),
               wt::attr(wire::IFCORE_IFLA_BULK, wt::attr(wire::IFCORE_BULK_ADDR, {2, 24, 0, 0}))}));
  Replies r = send(d);
  EXPECT_EQ(r.last_error(), EINVAL);
}

// The items are read one at a time, but a request that does not decode is still refused
// whole, before any item's own refusal: here the first item's name is taken, and a later
// attribute is not one the batch knows.
TEST_F(CreateBatchTest, AnItemsRefusalGivesWayToALaterMalformedAttribute) {
  ASSERT_EQ(create("taken"), 0);
  std::size_t count = device_count();
  session->set_option(NETLINK_EXT_ACK, 1);
  wire::MessageBuilder b(1 << 16);
  b.begin({RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK, 4, 0});
  b.put_struct(ifinfomsg{});
  std::size_t nest = b.begin_nest(wire::IFCORE_IFLA_BULK);
  for (const char* name : {"taken", "k1"}) {
    std::size_t link = b.begin_nest(wire::IFCORE_BULK_LINK);
    ASSERT_TRUE(wire::encode_link_body(b, item(name).link));
    b.end_nest(link);
  }
  b.put_u32(9, 1);
  b.end_nest(nest);
  ASSERT_TRUE(b.end());
  Replies r = send(b.take());
  ASSERT_EQ(r.msgs.size(), 1u);  // the error alone: no per-item results
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "unknown attribute type 9");
  EXPECT_EQ(device_count(), count);
  EXPECT_EQ(find("k1"), nullptr);
}

// Without NLM_F_CREATE, a malformed batch is refused as malformed.
TEST_F(CreateBatchTest, AMalformedBatchWithoutCreateIsRefusedAsMalformed) {
  Bytes d = wt::nlmsg(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 4, 0,
                      wt::cat({wt::ifinfo(0, 0, 0, 0, 0),
                               wt::attr(wire::IFCORE_IFLA_BULK, wt::attr(9, wt::le32(1)))}));
  session->set_option(NETLINK_EXT_ACK, 1);
  Replies r = send(d);
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "unknown attribute type 9");
}

}  // namespace
}  // namespace ifcore::rtnl
