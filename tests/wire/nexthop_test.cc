// Nexthop messages byte for byte, as Linux 6.18's nh_fill_node writes them (the fixtures
// were read from its dumps): a single nexthop, a blackhole, an fdb one, a group and a
// resilient group; and the malformed NHA_GROUP a request may carry.
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include "rtnl/wire/nexthop.h"
#include "wire/fixture.h"

namespace ifcore::wire::test {
namespace {

// struct nhmsg: family, scope, protocol, resvd, flags.
Bytes nhmsg_bytes(std::uint8_t family, std::uint8_t scope, std::uint8_t proto,
                  std::uint32_t flags) {
  Bytes b{family, scope, proto, 0};
  add(b, le32(flags));
  return b;
}

Bytes grp(std::uint32_t id, std::uint8_t weight) {
  // (pushed byte by byte: g++ 12 warns, wrongly, of an initializer_list inserted here)
  Bytes b = le32(id);
  for (std::uint8_t x : {weight, std::uint8_t(0), std::uint8_t(0), std::uint8_t(0)}) b.push_back(x);
  return b;
}

void round_trip(const Bytes& d) {
  auto n = decode_nexthop(one(d));
  ASSERT_TRUE(n) << n.error().message;
  MessageBuilder b;
  ASSERT_TRUE(encode_nexthop(b, {RTM_NEWNEXTHOP, NLM_F_MULTI, 1, 0}, *n));
  EXPECT_EQ(to_bytes(b.bytes()), d);
}

TEST(Nexthop, SingleWithGatewayAndDevice) {
  Bytes d = nlmsg(RTM_NEWNEXTHOP, NLM_F_MULTI, 1, 0,
                  cat({nhmsg_bytes(AF_INET, RT_SCOPE_LINK, 0, RTNH_F_ONLINK), attr(NHA_ID, le32(9)),
                       attr(NHA_OIF, le32(7)), attr(NHA_GATEWAY, {10, 9, 9, 9})}));
  auto n = decode_nexthop(one(d));
  ASSERT_TRUE(n);
  EXPECT_EQ(n->id, 9u);
  EXPECT_EQ(n->oif, 7u);
  EXPECT_EQ(n->gateway->to_string(), "10.9.9.9");
  EXPECT_EQ(n->flags, unsigned(RTNH_F_ONLINK));
  round_trip(d);
}

TEST(Nexthop, BlackholeAndFdb) {
  round_trip(nlmsg(
      RTM_NEWNEXTHOP, NLM_F_MULTI, 1, 0,
      cat({nhmsg_bytes(AF_INET, 0, 99, 0), attr(NHA_ID, le32(21)), attr(NHA_BLACKHOLE, {})})));
  Bytes fdb = nlmsg(RTM_NEWNEXTHOP, NLM_F_MULTI, 1, 0,
                    cat({nhmsg_bytes(AF_INET, RT_SCOPE_LINK, 0, 0), attr(NHA_ID, le32(50)),
                         attr(NHA_FDB, {}), attr(NHA_GATEWAY, {10, 0, 0, 7})}));
  auto n = decode_nexthop(one(fdb));
  ASSERT_TRUE(n);
  EXPECT_TRUE(n->fdb);
  EXPECT_FALSE(n->oif);
  round_trip(fdb);
}

TEST(Nexthop, GroupsWithTheirOperationFlags) {
  Bytes g = nlmsg(RTM_NEWNEXTHOP, NLM_F_MULTI, 1, 0,
                  cat({nhmsg_bytes(AF_UNSPEC, 0, 0, 0), attr(NHA_ID, le32(2)),
                       attr(NHA_GROUP_TYPE, le16(NEXTHOP_GRP_TYPE_MPATH)),
                       attr(NHA_GROUP, cat({grp(1, 0), grp(2, 255)})),
                       attr(kNhaOpFlags, le32(kNhaOpFlagRespGrpResvd0))}));
  auto n = decode_nexthop(one(g));
  ASSERT_TRUE(n);
  ASSERT_TRUE(n->group);
  ASSERT_EQ(n->group->size(), 2u);
  EXPECT_EQ((*n->group)[1].weight, 255);
  round_trip(g);
  // A resilient group: NHA_RES_GROUP nested (with NLA_F_NESTED), timers in clock ticks.
  Bytes res = cat({attr(NHA_RES_GROUP_BUCKETS, le16(4)), attr(NHA_RES_GROUP_IDLE_TIMER, le32(700)),
                   attr(NHA_RES_GROUP_UNBALANCED_TIMER, le32(0)),
                   attr(NHA_RES_GROUP_UNBALANCED_TIME, le64(0))});
  Bytes r = nlmsg(RTM_NEWNEXTHOP, NLM_F_MULTI, 1, 0,
                  cat({nhmsg_bytes(AF_UNSPEC, 0, 0, 0), attr(NHA_ID, le32(70)),
                       attr(NHA_GROUP_TYPE, le16(NEXTHOP_GRP_TYPE_RES)),
                       attr(NHA_GROUP, grp(60, 0)), attr(NLA_F_NESTED | NHA_RES_GROUP, res),
                       attr(kNhaOpFlags, le32(kNhaOpFlagRespGrpResvd0))}));
  auto rn = decode_nexthop(one(r));
  ASSERT_TRUE(rn);
  ASSERT_TRUE(rn->res_group);
  EXPECT_EQ(rn->res_group->buckets, 4);
  EXPECT_EQ(rn->res_group->idle_timer, 700u);
  round_trip(r);
}

TEST(NexthopMalformed, GroupOfOddLengthAndOtherAttributes) {
  auto n =
      decode_nexthop(one(nlmsg(RTM_NEWNEXTHOP, NLM_F_REQUEST, 1, 0,
                               cat({nhmsg_bytes(AF_UNSPEC, 0, 0, 0),
                                    attr(NHA_GROUP, {1, 0, 0, 0, 0}), attr(NHA_OIF, le32(3))}))));
  ASSERT_TRUE(n);
  EXPECT_TRUE(n->group_bad_length);
  EXPECT_TRUE(n->other_attrs);
  // A header shorter than struct nhmsg.
  EXPECT_FALSE(decode_nexthop(one(nlmsg(RTM_NEWNEXTHOP, NLM_F_REQUEST, 1, 0, {2, 0, 0}))));
  // NHA_ID of the wrong size.
  EXPECT_FALSE(
      decode_nexthop(one(nlmsg(RTM_NEWNEXTHOP, NLM_F_REQUEST, 1, 0,
                               cat({nhmsg_bytes(AF_INET, 0, 0, 0), attr(NHA_ID, le16(1))})))));
}

}  // namespace
}  // namespace ifcore::wire::test
