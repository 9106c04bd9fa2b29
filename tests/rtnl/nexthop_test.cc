// tests/rtnl/nexthop_test.cc — nexthop objects through a Session: requests `ip` never sends,
// refused with Linux 6.18's errno and extack (each checked against it with raw requests),
// a dump refused in its NLMSG_DONE, a dump and a get, RTNLGRP_NEXTHOP notifications, and
// an encapsulation refused in Linux's words (lwtunnel_valid_encap_type).
#include <linux/lwtunnel.h>
#include <linux/mpls_iptunnel.h>
#include <linux/nexthop.h>

#include "rtnl/fixture.h"
#include "rtnl/wire/nexthop.h"

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

Bytes nhmsg_bytes(std::uint8_t family, std::uint8_t scope = 0, std::uint8_t proto = 0,
                  std::uint8_t resvd = 0, std::uint32_t flags = 0) {
  Bytes b{family, scope, proto, resvd};
  add(b, le32(flags));
  return b;
}
Bytes grp(std::uint32_t id, std::uint8_t weight = 0, std::uint8_t resvd1 = 0,
          std::uint16_t resvd2 = 0) {
  Bytes b = le32(id);
  b.push_back(weight);
  b.push_back(resvd1);
  add(b, le16(resvd2));
  return b;
}
Bytes req(std::uint16_t type, std::uint16_t flags, const Bytes& body) {
  return nlmsg(type, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), 1, 0, body);
}

class NexthopRtnlTest : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
  }
  void expect_refused(const Bytes& msg, int code, std::string_view text) {
    auto r = send(msg);
    ASSERT_EQ(r.last_error(), code) << text;
    EXPECT_EQ(r.last_error_reply().message, text);
  }
};

TEST_F(NexthopRtnlTest, RequestsIpNeverSendsAreRefusedAsLinuxDoes) {
  const std::uint16_t add = kCreate;
  expect_refused(
      req(RTM_NEWNEXTHOP, add, cat({nhmsg_bytes(AF_INET, 0, 0, 1), attr(NHA_ID, le32(5))})), EINVAL,
      "Invalid values in ancillary header");
  expect_refused(req(RTM_NEWNEXTHOP, add,
                     cat({nhmsg_bytes(AF_INET, 0, 0, 0, RTNH_F_DEAD), attr(NHA_ID, le32(5))})),
                 EINVAL, "Invalid nexthop flags in ancillary header");
  expect_refused(req(RTM_NEWNEXTHOP, add, cat({nhmsg_bytes(7), attr(NHA_ID, le32(5))})), EINVAL,
                 "Invalid address family");
  expect_refused(
      req(RTM_NEWNEXTHOP, add, cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_GROUP, {1, 0, 0, 0, 0})})),
      EINVAL, "Invalid length for nexthop group attribute");
  expect_refused(
      req(RTM_NEWNEXTHOP, add, cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_GROUP, grp(1, 0, 0, 1))})),
      EINVAL, "Reserved field in nexthop_grp must be 0");
  expect_refused(
      req(RTM_NEWNEXTHOP, add,
          cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_GROUP, grp(1)), attr(NHA_GROUP_TYPE, le16(5))})),
      EINVAL, "Invalid group type");
  expect_refused(
      req(RTM_NEWNEXTHOP, add,
          cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_GROUP, grp(1)), attr(NHA_OIF, le32(1))})),
      EINVAL, "No other attributes can be set in nexthop groups");
  expect_refused(req(RTM_NEWNEXTHOP, add, cat({nhmsg_bytes(AF_INET), attr(NHA_GROUP, grp(1))})),
                 EINVAL, "Invalid family for group");
  expect_refused(req(RTM_NEWNEXTHOP, add,
                     cat({nhmsg_bytes(AF_INET, 0, 0, 0, RTNH_F_ONLINK), attr(NHA_FDB, {}),
                          attr(NHA_GATEWAY, {10, 0, 0, 1})})),
                 EINVAL, "Unsupported nexthop flags in ancillary header");
  expect_refused(req(RTM_NEWNEXTHOP, add, cat({nhmsg_bytes(AF_INET), attr(NHA_OIF, le32(0))})),
                 EINVAL, "Invalid device index");
  expect_refused(req(RTM_NEWNEXTHOP, add, cat({nhmsg_bytes(AF_INET), attr(NHA_OIF, le32(999))})),
                 EINVAL, "Invalid device index");
  expect_refused(
      req(RTM_NEWNEXTHOP, add,
          cat({nhmsg_bytes(AF_INET), attr(NHA_OIF, le32(1)), attr(NHA_GATEWAY, {1, 2, 3})})),
      EINVAL, "Invalid gateway");
  expect_refused(req(RTM_NEWNEXTHOP, add,
                     cat({nhmsg_bytes(AF_INET), attr(NHA_OIF, le32(1)), attr(NHA_ENCAP, {})})),
                 EINVAL, "NLA_F_NESTED is missing");
  expect_refused(
      req(RTM_NEWNEXTHOP, add,
          cat({nhmsg_bytes(AF_INET), attr(NHA_OIF, le32(1)), attr(NHA_ENCAP_TYPE, le16(1))})),
      EINVAL, "LWT encapsulation attribute is missing");
  expect_refused(req(RTM_NEWNEXTHOP, NLM_F_REPLACE | NLM_F_CREATE | NLM_F_ACK,
                     cat({nhmsg_bytes(AF_INET), attr(NHA_OIF, le32(1))})),
                 EINVAL, "Replace requires nexthop id");
  expect_refused(req(RTM_NEWNEXTHOP, add, {2, 0, 0}), EINVAL, "Invalid header length");
  expect_refused(req(RTM_NEWNEXTHOP, add, cat({nhmsg_bytes(AF_INET), attr(NHA_ID, le16(1))})),
                 EINVAL, "invalid attribute length");
  expect_refused(req(RTM_DELNEXTHOP, NLM_F_ACK, nhmsg_bytes(AF_UNSPEC)), EINVAL,
                 "Nexthop id is missing");
  expect_refused(
      req(RTM_DELNEXTHOP, NLM_F_ACK, cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(0))})), EINVAL,
      "Invalid nexthop id");
  expect_refused(
      req(RTM_DELNEXTHOP, NLM_F_ACK, cat({nhmsg_bytes(AF_UNSPEC, 0, 3), attr(NHA_ID, le32(1))})),
      EINVAL, "Invalid values in header");
  expect_refused(req(RTM_GETNEXTHOP, 0, cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(12345))})),
                 ENOENT, "");
  // The loopback is down in a new namespace: a blackhole has no device to go through.
  expect_refused(req(RTM_NEWNEXTHOP, add,
                     cat({nhmsg_bytes(AF_INET), attr(NHA_ID, le32(88)), attr(NHA_BLACKHOLE, {})})),
                 ENETDOWN, "Device for nexthop is not up");
  // Nothing was made.
  auto dump = send(req(RTM_GETNEXTHOP, NLM_F_DUMP, nhmsg_bytes(AF_UNSPEC)));
  ASSERT_EQ(dump.msgs.size(), 1u);
  EXPECT_EQ(dump.msgs[0].hdr.nlmsg_type, NLMSG_DONE);
}

TEST_F(NexthopRtnlTest, ARefusedDumpEndsInItsDone) {
  auto r = send(req(RTM_GETNEXTHOP, NLM_F_DUMP, nhmsg_bytes(AF_UNSPEC, 0, 3)));
  ASSERT_EQ(r.msgs.size(), 1u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, NLMSG_DONE);
  EXPECT_EQ(*wire::decode_done(r.msgs[0]), EINVAL);
  auto big = send(req(RTM_GETNEXTHOP, NLM_F_DUMP,
                      cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_OIF, le32(0x80000000))})));
  ASSERT_EQ(big.msgs.size(), 1u);
  EXPECT_EQ(*wire::decode_done(big.msgs[0]), EINVAL);
}

TEST_F(NexthopRtnlTest, AddDumpGetDeleteAndNotify) {
  LinkRequest d = named("d0", "dummy");
  d.flags = d.change = IFF_UP;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, d)).last_error(), 0);
  int ifindex = find("d0")->ifindex();
  auto watcher = open();
  watcher->add_membership(RTNLGRP_NEXTHOP);
  auto made =
      send(req(RTM_NEWNEXTHOP, kCreate,
               cat({nhmsg_bytes(AF_INET), attr(NHA_ID, le32(7)), attr(NHA_OIF, le32(ifindex))})));
  ASSERT_EQ(made.last_error(), 0);
  auto got = send(req(RTM_GETNEXTHOP, 0, cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(7))})));
  ASSERT_EQ(got.msgs.size(), 1u);
  auto n = wire::decode_nexthop(got.msgs[0]);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->id, 7u);
  EXPECT_EQ(n->oif, static_cast<std::uint32_t>(ifindex));
  EXPECT_EQ(n->scope, RT_SCOPE_HOST);
  ASSERT_EQ(
      send(req(RTM_DELNEXTHOP, NLM_F_ACK, cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(7))})))
          .last_error(),
      0);
  std::vector<std::uint16_t> types;
  Datagram dg;
  while (watcher->pop_notification(dg))
    if (auto ms = wire::split_messages(dg))
      for (auto& m : *ms) types.push_back(m.hdr.nlmsg_type);
  EXPECT_EQ(types, (std::vector<std::uint16_t>{RTM_NEWNEXTHOP, RTM_DELNEXTHOP}));
}

// RTM_GETNEXTHOPBUCKET: the reply's bytes as Linux 6.18 writes them (read from it with a
// raw get of bucket 0 of `group 1/2 type resilient buckets 8`, idle time aside), a dump,
// and the refusals of a get (errno and extack) and of a dump (in its NLMSG_DONE).
TEST_F(NexthopRtnlTest, BucketsGetDumpAndErrors) {
  for (const char* name : {"d1", "d2"}) {
    LinkRequest d = named(name, "dummy");
    d.flags = d.change = IFF_UP;
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, d)).last_error(), 0);
  }
  for (std::uint32_t id : {1u, 2u}) {
    int ifindex = find(id == 1 ? "d1" : "d2")->ifindex();
    ASSERT_EQ(send(req(RTM_NEWNEXTHOP, kCreate,
                       cat({nhmsg_bytes(AF_INET), attr(NHA_ID, le32(id)),
                            attr(NHA_OIF, le32(std::uint32_t(ifindex)))})))
                  .last_error(),
              0);
  }
  ASSERT_EQ(
      send(req(RTM_NEWNEXTHOP, kCreate,
               cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(10)),
                    attr(NHA_GROUP, cat({grp(1), grp(2)})),
                    attr(NHA_GROUP_TYPE, le16(NEXTHOP_GRP_TYPE_RES)),
                    attr(NLA_F_NESTED | NHA_RES_GROUP, attr(NHA_RES_GROUP_BUCKETS, le16(8)))})))
          .last_error(),
      0);
  ASSERT_EQ(send(req(RTM_NEWNEXTHOP, kCreate,
                     cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(20)),
                          attr(NHA_GROUP, cat({grp(1), grp(2)}))})))
                .last_error(),
            0);
  auto bucket = [](std::uint16_t index) {
    return attr(NLA_F_NESTED | NHA_RES_BUCKET, attr(NHA_RES_BUCKET_INDEX, le16(index)));
  };
  auto got = send(req(RTM_GETNEXTHOPBUCKET, 0,
                      cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(10)), bucket(0)})));
  ASSERT_EQ(got.msgs.size(), 1u);
  EXPECT_EQ(got.msgs[0].hdr.nlmsg_type, RTM_NEWNEXTHOPBUCKET);
  EXPECT_EQ(got.msgs[0].hdr.nlmsg_flags, 0);
  Bytes body(got.msgs[0].bytes.begin() + 16, got.msgs[0].bytes.end());
  ASSERT_EQ(body.size(), 48u);
  std::fill(body.begin() + 40, body.end(), 0);  // the idle time runs on
  EXPECT_EQ(body,
            cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(10)),
                 attr(NLA_F_NESTED | NHA_RES_BUCKET,
                      cat({attr(NHA_RES_BUCKET_INDEX, le16(0)), attr(NHA_RES_BUCKET_NH_ID, le32(2)),
                           attr(NHA_RES_BUCKET_IDLE_TIME, le64(0))}))}));
  auto dump = send(req(RTM_GETNEXTHOPBUCKET, NLM_F_DUMP, nhmsg_bytes(AF_UNSPEC)));
  ASSERT_EQ(dump.msgs.size(), 9u) << "eight buckets and the DONE";
  std::vector<std::uint32_t> nhids;
  for (std::size_t i = 0; i + 1 < dump.msgs.size(); ++i) {
    auto m = wire::decode_nexthop_bucket(dump.msgs[i]);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->index, i);
    nhids.push_back(m->nhid.value_or(0));
  }
  EXPECT_EQ(nhids, (std::vector<std::uint32_t>{2, 2, 2, 2, 1, 1, 1, 1}));
  // Refused gets, with Linux's errno and extack.
  expect_refused(req(RTM_GETNEXTHOPBUCKET, 0, cat({nhmsg_bytes(AF_UNSPEC), bucket(0)})), EINVAL,
                 "Nexthop id is missing");
  expect_refused(req(RTM_GETNEXTHOPBUCKET, 0,
                     cat({nhmsg_bytes(AF_UNSPEC, 0, 4), attr(NHA_ID, le32(10)), bucket(0)})),
                 EINVAL, "Invalid values in header");
  expect_refused(
      req(RTM_GETNEXTHOPBUCKET, 0, cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(10))})), EINVAL,
      "Bucket information is missing");
  expect_refused(req(RTM_GETNEXTHOPBUCKET, 0,
                     cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(10)),
                          attr(NLA_F_NESTED | NHA_RES_BUCKET, {})})),
                 EINVAL, "Bucket index is missing");
  expect_refused(req(RTM_GETNEXTHOPBUCKET, 0,
                     cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(10)), bucket(8)})),
                 ENOENT, "Bucket index out of bounds");
  expect_refused(req(RTM_GETNEXTHOPBUCKET, 0,
                     cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(20)), bucket(0)})),
                 EINVAL, "Nexthop group not of type resilient");
  expect_refused(
      req(RTM_GETNEXTHOPBUCKET, 0, cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(1)), bucket(0)})),
      EINVAL, "Not a nexthop group");
  expect_refused(req(RTM_GETNEXTHOPBUCKET, 0,
                     cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(77)), bucket(0)})),
                 ENOENT, "");
  // A refused dump ends in its NLMSG_DONE.
  for (const Bytes& body : {cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(20))}),
                            cat({nhmsg_bytes(AF_UNSPEC), attr(NHA_ID, le32(0))}),
                            cat({nhmsg_bytes(AF_UNSPEC, 0, 1)})}) {
    auto r = send(req(RTM_GETNEXTHOPBUCKET, NLM_F_DUMP, body));
    ASSERT_EQ(r.msgs.size(), 1u);
    EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, NLMSG_DONE);
    EXPECT_EQ(*wire::decode_done(r.msgs[0]), EINVAL);
  }
}

// `ip nexthop add id 1 encap mpls 100 dev lo`: ifcore has no lightweight tunnels, and
// answers as Linux does without the mpls_iptunnel module (in its lower case).
TEST_F(NexthopRtnlTest, EncapIsRefusedWithLinuxWords) {
  wire::MessageBuilder b;
  b.begin({RTM_NEWNEXTHOP, NLM_F_REQUEST | kCreate, 1, 0});
  nhmsg h{};
  h.nh_family = AF_INET;
  b.put_struct(h);
  b.put_u32(NHA_ID, 1);
  std::size_t nest = b.begin_nest(NLA_F_NESTED | NHA_ENCAP);
  const std::uint8_t label[4] = {0x00, 0x06, 0x41, 0x00};  // 100, bottom of stack
  b.put_attr(MPLS_IPTUNNEL_DST, label, sizeof(label));
  b.end_nest(nest);
  b.put_u16(NHA_ENCAP_TYPE, LWTUNNEL_ENCAP_MPLS);
  b.put_u32(NHA_OIF, 1);
  ASSERT_TRUE(b.end());
  expect_refused(b.take(), EOPNOTSUPP, "lwt encapsulation type not supported");
}

}  // namespace
}  // namespace ifcore::rtnl::test
