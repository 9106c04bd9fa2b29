// tests/wire/attrs_test.cc — policy decoding of kind attributes: every shape, one named
// fixture per malformed case, and encode/decode round trips.
#include "rtnl/wire/attrs.h"

#include <gtest/gtest.h>
#include <net/if.h>

#include <linux/if_link.h>
#include <linux/veth.h>

#include "ifcore/link_request.h"
#include "rtnl/wire/raw_attrs.h"
#include "wire/fixture.h"

namespace ifcore::wire {
namespace {

using namespace test;

constexpr AttrPolicyEntry kInner[] = {{1, AttrShape::U8}};
constexpr AttrPolicyEntry kPolicy[] = {
    {1, AttrShape::U8},           {2, AttrShape::U16},
    {3, AttrShape::U32},          {4, AttrShape::U64},
    {5, AttrShape::Be16},         {6, AttrShape::Be32},
    {7, AttrShape::String, 0, 8}, {8, AttrShape::Binary, 2, 6},
    {9, AttrShape::Flag},         {10, AttrShape::Nested, 0, 0, kInner},
    {11, AttrShape::Nested},
};
// A policy that nests into itself, to test the depth limit.
extern const AttrPolicyEntry kSelf[];
constexpr AttrPolicy kSelfPolicy{kSelf, 1};
constexpr AttrPolicyEntry kSelf[] = {{1, AttrShape::Nested, 0, 0, kSelfPolicy}};

constexpr AttrPolicyEntry kVethPolicy[] = {{VETH_INFO_PEER, AttrShape::LinkMsg}};

TEST(DecodeAttrs, EveryShape) {
  Bytes b = cat({attr(1, {0x11}), attr(2, le16(0x2222)), attr(3, le32(0x33333333)),
                 attr(4, le64(0x4444444455555555)), attr(5, {0x12, 0x34}),
                 attr(6, {0x0a, 0x00, 0x00, 0x01}), attr(7, cstr("eth0")), attr(8, {1, 2, 3}),
                 attr(9, {}), attr(10, attr(1, {5})), attr(11, {9, 9, 9, 9})});
  auto r = decode_attrs(b, kPolicy);
  ASSERT_TRUE(r) << r.error().message;
  const AttrList& l = *r;
  ASSERT_EQ(l.size(), 11u);
  EXPECT_EQ(l[0].num, 0x11u);
  EXPECT_EQ(l[1].num, 0x2222u);
  EXPECT_EQ(l[2].num, 0x33333333u);
  EXPECT_EQ(l[3].num, 0x4444444455555555u);
  EXPECT_EQ(l[4].num, 0x1234u);
  EXPECT_EQ(l[5].num, 0x0a000001u);
  EXPECT_EQ(l[6].str, "eth0");
  EXPECT_EQ(l[7].bin, (std::vector<std::uint8_t>{1, 2, 3}));
  EXPECT_EQ(l[8].shape, AttrShape::Flag);
  ASSERT_EQ(l[9].nested.size(), 1u);
  EXPECT_EQ(l[9].nested[0].num, 5u);
  EXPECT_EQ(l[10].shape, AttrShape::Binary);  // nested without a policy: kept raw
  EXPECT_EQ(l[10].bin.size(), 4u);

  // Encoding gives the same bytes back.
  MessageBuilder mb;
  mb.begin({1, 0, 0, 0});
  ASSERT_TRUE(encode_attrs(mb, l));
  auto m = mb.end();
  ASSERT_TRUE(m);
  EXPECT_EQ(to_bytes(m->subspan(16)), b);
}

TEST(DecodeAttrs, StringWithoutNulIsAccepted) {
  auto r = decode_attrs(attr(7, {'a', 'b'}), kPolicy);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[0].str, "ab");
}

TEST(DecodeAttrs, RepeatedTypeKeepsTheLastValue) {
  auto r = decode_attrs(cat({attr(1, {1}), attr(1, {2})}), kPolicy);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].num, 2u);
}

TEST(DecodeAttrs, OffsetsAreRelativeToBase) {
  auto r = decode_attrs(cat({attr(1, {1}), attr(3, le16(1))}), kPolicy, 40);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().attr_offset, 48);
}

struct Bad {
  const char* name;
  Bytes bytes;
  int code;
  const char* message;
  int offset;
};

class DecodeAttrsMalformed : public ::testing::TestWithParam<Bad> {};

TEST_P(DecodeAttrsMalformed, Rejected) {
  const Bad& c = GetParam();
  auto r = decode_attrs(c.bytes, kPolicy, 32);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, c.code);
  EXPECT_EQ(r.error().message, c.message);
  EXPECT_EQ(r.error().attr_offset, c.offset);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, DecodeAttrsMalformed,
    ::testing::Values(
        Bad{"attribute_length_smaller_than_4", cat({attr(1, {1}), Bytes{2, 0, 1, 0}}), EINVAL,
            "attribute length 2 smaller than header", 40},
        Bad{"attribute_past_the_end", cat({le16(12), le16(3), le32(1)}), EINVAL,
            "attribute type 3 length 12 past the end (8 bytes left)", 32},
        Bad{"leftover_bytes", cat({attr(1, {1}), Bytes{0, 0}}), EINVAL,
            "2 bytes leftover after parsing attributes", 40},
        // Linux (validate_nla): shorter than its type, ERANGE with the policy message.
        Bad{"u32_too_short", attr(3, le16(7)), ERANGE, "Attribute failed policy validation", 32},
        Bad{"u8_of_wrong_size", attr(1, le32(7)), EINVAL,
            "attribute type 1: invalid length 4 (want 1)", 32},
        Bad{"flag_with_payload", attr(9, {1}), ERANGE, "Attribute failed policy validation", 32},
        Bad{"string_without_room", attr(7, cstr("toolongname")), ERANGE,
            "Attribute failed policy validation", 32},
        Bad{"empty_string", attr(7, {}), ERANGE, "Attribute failed policy validation", 32},
        Bad{"binary_too_short", attr(8, {1}), ERANGE,
            "attribute type 8: length 1 out of range [2, 6]", 32},
        Bad{"nested_overflow", attr(10, cat({le16(9), le16(1), Bytes{1}})), EINVAL,
            "attribute type 1 length 9 past the end (5 bytes left)", 36},
        Bad{"unknown_attribute_type", attr(99, {}), EINVAL, "unknown attribute type 99", 32},
        Bad{"unknown_type_inside_nest", attr(10, attr(2, {})), EINVAL, "unknown attribute type 2",
            36}),
    [](const auto& info) { return std::string(info.param.name); });

// Linux (validate_nla, NL_SET_ERR_MSG_ATTR_POL): the refused attribute's policy travels
// with the error, for NLMSGERR_ATTR_POLICY.
TEST(DecodeAttrsMalformedNamed, PolicyOfTheRefusedAttribute) {
  auto s = decode_attrs(attr(7, cstr("toolongname")), kPolicy, 32);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().policy, (ErrorPolicy{.type = NL_ATTR_TYPE_STRING, .max_length = 8}));
  auto f = decode_attrs(attr(9, {1}), kPolicy, 32);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().policy, ErrorPolicy{.type = NL_ATTR_TYPE_FLAG});
  auto u = decode_attrs(attr(1, {}), kPolicy, 32);
  ASSERT_FALSE(u);
  EXPECT_EQ(
      u.error().policy,
      (ErrorPolicy{.type = NL_ATTR_TYPE_U8, .has_range = true, .min_value = 0, .max_value = 255}));
}

TEST(DecodeAttrsMalformedNamed, NestedTooDeep) {
  Bytes b = attr(1, {});
  for (int i = 0; i < kMaxNestDepth + 1; ++i) b = attr(1, b);
  auto r = decode_attrs(b, kSelfPolicy);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_EQ(r.error().message, "attribute nesting deeper than 10");
}

TEST(DecodeAttrsMalformedNamed, NestedWithinLimitIsFine) {
  Bytes b;
  for (int i = 0; i < kMaxNestDepth - 1; ++i) b = attr(1, b);
  EXPECT_TRUE(decode_attrs(b, kSelfPolicy));
}

TEST(LinkMsgShape, VethPeerDecodes) {
  Bytes peer =
      cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_IFNAME, cstr("v1")), attr(IFLA_MTU, le32(9000))});
  auto r = decode_attrs(attr(VETH_INFO_PEER, peer), kVethPolicy);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE((*r)[0].link);
  EXPECT_EQ((*r)[0].link->name, "v1");
  EXPECT_EQ((*r)[0].link->mtu, 9000u);

  MessageBuilder mb;
  mb.begin({1, 0, 0, 0});
  ASSERT_TRUE(encode_attrs(mb, *r));
  auto m = mb.end();
  ASSERT_TRUE(m);
  EXPECT_EQ(to_bytes(m->subspan(16)), attr(VETH_INFO_PEER, peer));
}

TEST(LinkMsgShape, BadLinkMsgInsideVethInfoPeerTooShort) {
  auto r = decode_attrs(attr(VETH_INFO_PEER, Bytes(8, 0)), kVethPolicy, 60);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ERANGE);  // Linux: veth_policy's minimum length
  EXPECT_EQ(r.error().attr_offset, 60);
}

TEST(LinkMsgShape, BadLinkMsgInsideVethInfoPeerBadMtu) {
  Bytes peer = cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_MTU, le16(9000))});
  auto r = decode_attrs(attr(VETH_INFO_PEER, peer), kVethPolicy, 60);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ERANGE);
  EXPECT_EQ(r.error().message, "Attribute failed policy validation");
  EXPECT_EQ(r.error().attr_offset, 60 + 4 + 16);
  EXPECT_EQ(r.error().policy.type, NL_ATTR_TYPE_U32);
  EXPECT_EQ(r.error().policy.max_value, 0xffffffffu);
}

TEST(WalkAttrs, ReadsEachAttributeInPlaceAsParseRawAttrsDoes) {
  // Payloads of 1, 0 and 3 bytes (padding after the first and the last), a nested flag,
  // and a last attribute without its padding.
  Bytes last = attr(4, {7, 7, 7});
  last.resize(last.size() - 1);
  Bytes b = cat({attr(1, {0x11}), attr(2, {}), attr(3 | NLA_F_NESTED, attr(1, {5})), last});
  auto w = walk_attrs(b, 16);
  ASSERT_TRUE(w) << w.error().message;
  auto v = parse_raw_attrs(b, 16);
  ASSERT_TRUE(v);
  ASSERT_EQ(w->size(), 4u);
  ASSERT_EQ(v->size(), 4u);
  std::size_t i = 0;
  for (const RawAttr a : *w) {
    const RawAttr& e = (*v)[i++];
    EXPECT_EQ(a.type, e.type);
    EXPECT_EQ(a.nested_flag, e.nested_flag);
    EXPECT_EQ(a.offset, e.offset);
    EXPECT_EQ(a.data.data(), e.data.data());
    EXPECT_EQ(a.data.size(), e.data.size());
  }
  EXPECT_EQ(i, 4u);
  EXPECT_EQ((*v)[2].type, 3);
  EXPECT_TRUE((*v)[2].nested_flag);
  EXPECT_EQ((*v)[3].offset, 16 + 8 + 4 + 12);
  EXPECT_EQ((*v)[3].data.size(), 3u);

  // A length past the end fails before anything is walked, at the attribute's offset.
  Bytes bad = cat({attr(1, {0x11}), attr(2, {1, 2, 3, 4})});
  bad[8] = 200;
  auto e = walk_attrs(bad, 16);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, EINVAL);
  EXPECT_EQ(e.error().attr_offset, 16 + 8);
}

}  // namespace
}  // namespace ifcore::wire
