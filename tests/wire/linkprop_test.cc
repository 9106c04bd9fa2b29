// tests/wire/linkprop_test.cc — RTM_NEWLINKPROP / RTM_DELLINKPROP and IFLA_PROP_LIST in link
// messages: byte fixtures of what `ip link property` sends and what Linux 6.18 fills.
#include <net/if.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <gtest/gtest.h>

#include <cstring>

#include "rtnl/wire/link.h"
#include "wire/fixture.h"

namespace ifcore::wire {
namespace {

using namespace test;

// What `ip link property add dev v0 altname a2 altname longaltname0123456789` sends for v0
// at ifindex 3: the names in a nest with NLA_F_NESTED.
Bytes ip_property_add() {
  Bytes list = cat(
      {attr(IFLA_ALT_IFNAME, cstr("a2")), attr(IFLA_ALT_IFNAME, cstr("longaltname0123456789"))});
  return nlmsg(RTM_NEWLINKPROP,
               NLM_F_REQUEST | NLM_F_ACK | NLM_F_EXCL | NLM_F_CREATE | NLM_F_APPEND, 1, 0,
               cat({ifinfo(0, 0, 3, 0, 0), attr(NLA_F_NESTED | IFLA_PROP_LIST, list)}));
}

TEST(LinkProp, DecodesWhatIpSends) {
  Bytes d = ip_property_add();
  auto r = decode_linkprop(one(d));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->ifindex, 3);
  EXPECT_FALSE(r->name);
  EXPECT_TRUE(r->has_prop_list);
  ASSERT_EQ(r->props.size(), 2u);
  EXPECT_EQ(r->props[0].type, IFLA_ALT_IFNAME);
  EXPECT_EQ(*linkprop_alt_name(r->props[0]), "a2");
  EXPECT_EQ(*linkprop_alt_name(r->props[1]), "longaltname0123456789");
  // Offsets from the nlmsghdr: header 16, ifinfomsg 16, the nest's header 4.
  EXPECT_EQ(r->props[0].offset, 36);
}

TEST(LinkProp, EncodeGivesIpsBytes) {
  MessageBuilder b;
  ASSERT_TRUE(encode_linkprop(
      b,
      {RTM_NEWLINKPROP, NLM_F_REQUEST | NLM_F_ACK | NLM_F_EXCL | NLM_F_CREATE | NLM_F_APPEND, 1, 0},
      3, {"a2", "longaltname0123456789"}));
  EXPECT_EQ(to_bytes(b.bytes()), ip_property_add());
}

TEST(LinkProp, LookupNamesAndTheirPolicies) {
  Bytes d = nlmsg(RTM_DELLINKPROP, NLM_F_REQUEST, 1, 0,
                  cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_IFNAME, cstr("v0")),
                       attr(IFLA_ALT_IFNAME, cstr("alt")), attr(IFLA_MTU, le32(1400))}));
  auto r = decode_linkprop(one(d));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->name, "v0");
  EXPECT_EQ(r->alt_name, "alt");
  EXPECT_FALSE(r->has_prop_list);
  // ifla_policy: IFLA_IFNAME 15 bytes at most, IFLA_ALT_IFNAME 127.
  d = nlmsg(RTM_NEWLINKPROP, NLM_F_REQUEST, 1, 0,
            cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_IFNAME, cstr(std::string(16, 'n')))}));
  auto bad = decode_linkprop(one(d));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ERANGE);
  EXPECT_EQ(bad.error().attr_offset, 32);
  d = nlmsg(RTM_NEWLINKPROP, NLM_F_REQUEST, 1, 0,
            cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_ALT_IFNAME, cstr(std::string(128, 'n')))}));
  bad = decode_linkprop(one(d));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ERANGE);
  // Linux: rtnl_ensure_unique_netns with netns_id_only.
  d = nlmsg(RTM_NEWLINKPROP, NLM_F_REQUEST, 1, 0,
            cat({ifinfo(0, 0, 3, 0, 0), attr(IFLA_NET_NS_PID, le32(1))}));
  bad = decode_linkprop(one(d));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, EOPNOTSUPP);
  EXPECT_EQ(bad.error().message, "specified netns attribute not supported");
  // Too short for an ifinfomsg.
  d = nlmsg(RTM_NEWLINKPROP, NLM_F_REQUEST, 1, 0, le32(0));
  bad = decode_linkprop(one(d));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, EINVAL);
}

TEST(LinkProp, EntriesAreCheckedOneByOne) {
  // The list decodes whatever it holds; each IFLA_ALT_IFNAME is checked when applied.
  Bytes list =
      cat({attr(IFLA_ALT_IFNAME, cstr("ok")), attr(IFLA_ALT_IFNAME, cstr(std::string(128, 'y'))),
           attr(IFLA_ALT_IFNAME, Bytes{}), attr(IFLA_ALT_IFNAME, Bytes{0})});
  Bytes d = nlmsg(RTM_NEWLINKPROP, NLM_F_REQUEST, 1, 0,
                  cat({ifinfo(0, 0, 3, 0, 0), attr(NLA_F_NESTED | IFLA_PROP_LIST, list)}));
  auto r = decode_linkprop(one(d));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->props.size(), 4u);
  EXPECT_EQ(*linkprop_alt_name(r->props[0]), "ok");
  auto too_long = linkprop_alt_name(r->props[1]);
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error().code, ERANGE);
  EXPECT_EQ(too_long.error().message, "Attribute failed policy validation");
  EXPECT_EQ(too_long.error().attr_offset, r->props[1].offset);
  EXPECT_FALSE(linkprop_alt_name(r->props[2]));    // no payload: ERANGE
  EXPECT_EQ(*linkprop_alt_name(r->props[3]), "");  // a NUL alone: an empty name
  // A list too short for an attribute header fails NLA_NESTED's policy.
  d = nlmsg(RTM_NEWLINKPROP, NLM_F_REQUEST, 1, 0,
            cat({ifinfo(0, 0, 3, 0, 0), attr(IFLA_PROP_LIST, Bytes{1, 2})}));
  auto bad = decode_linkprop(one(d));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ERANGE);
}

TEST(LinkMessagePropList, LastWithTheNestedFlag) {
  LinkMessage m;
  m.ifindex = 3;
  m.name = "v0";
  m.txqlen = 1000;
  m.alt_names = {"walt", "x"};
  MessageBuilder b;
  ASSERT_TRUE(encode_link_message(b, {RTM_NEWLINK, 0, 1, 0}, m));
  // Linux 6.18, as read from the kernel: 10 00 34 80 | 09 00 35 00 "walt\0" ...
  Bytes list = cat({attr(IFLA_ALT_IFNAME, cstr("walt")), attr(IFLA_ALT_IFNAME, cstr("x"))});
  Bytes want = nlmsg(
      RTM_NEWLINK, 0, 1, 0,
      cat({ifinfo(0, 0, 3, 0, 0), attr(IFLA_IFNAME, cstr("v0")), attr(IFLA_TXQLEN, le32(1000)),
           attr(IFLA_AF_SPEC, Bytes{}), attr(NLA_F_NESTED | IFLA_PROP_LIST, list),
           attr(kIflaDevlinkPort, Bytes{}), attr(kIflaDpllPin, Bytes{})}));
  EXPECT_EQ(to_bytes(b.bytes()), want);
  auto back = decode_link_message(one(want));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->alt_names, (std::vector<std::string>{"walt", "x"}));
  // No altnames: no IFLA_PROP_LIST at all (Linux cancels the empty nest).
  m.alt_names.clear();
  MessageBuilder b2;
  ASSERT_TRUE(encode_link_message(b2, {RTM_NEWLINK, 0, 1, 0}, m));
  auto none = decode_link_message(one(to_bytes(b2.bytes())));
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->alt_names.empty());
  EXPECT_EQ(b2.bytes().size() + NLA_HDRLEN + list.size(), want.size());
}

TEST(LinkMessagePropList, AfterIflaMap) {
  // Linux 6.18: rtnl_fill_ifinfo puts rtnl_fill_prop_list after rtnl_fill_link_ifmap, then
  // the (empty) IFLA_DEVLINK_PORT and IFLA_DPLL_PIN nests.
  LinkMessage m;
  m.name = "v0";
  m.ifmap = rtnl_link_ifmap{};
  m.alt_names = {"walt"};
  MessageBuilder b;
  ASSERT_TRUE(encode_link_message(b, {RTM_NEWLINK, 0, 1, 0}, m));
  Bytes d = to_bytes(b.bytes());
  Message msg = one(d);
  auto attrs = parse_raw_attrs(msg.payload().subspan(NLMSG_ALIGN(sizeof(ifinfomsg))), 0);
  ASSERT_TRUE(attrs);
  ASSERT_GE(attrs->size(), 4u);
  EXPECT_EQ((*attrs)[attrs->size() - 4].type, IFLA_MAP);
  EXPECT_EQ((*attrs)[attrs->size() - 3].type, IFLA_PROP_LIST);
  EXPECT_TRUE((*attrs)[attrs->size() - 3].nested_flag);
  EXPECT_EQ((*attrs)[attrs->size() - 2].type, kIflaDevlinkPort);
  EXPECT_EQ(attrs->back().type, kIflaDpllPin);
}

// Found by the engine fuzz target: IFLA_MAP's 4 bytes of tail padding went out as the
// memory held them (stack and heap addresses in every link dump).
TEST(LinkMessageIflaMap, PaddingIsZeroWhateverTheValueHeld) {
  LinkMessage m;
  m.name = "v0";
  rtnl_link_ifmap dirty;
  std::memset(&dirty, 0xa5, sizeof dirty);
  dirty.mem_start = 1;
  dirty.mem_end = 2;
  dirty.base_addr = 3;
  dirty.irq = 4;
  dirty.dma = 5;
  dirty.port = 6;
  m.ifmap = dirty;
  MessageBuilder b;
  ASSERT_TRUE(encode_link_message(b, {RTM_NEWLINK, 0, 1, 0}, m));
  Bytes d = to_bytes(b.bytes());
  Message msg = one(d);
  auto attrs = parse_raw_attrs(msg.payload().subspan(NLMSG_ALIGN(sizeof(ifinfomsg))), 0);
  ASSERT_TRUE(attrs);
  const RawAttr* map = find_raw(*attrs, IFLA_MAP);
  ASSERT_NE(map, nullptr);
  ASSERT_EQ(map->data.size(), sizeof(rtnl_link_ifmap));
  rtnl_link_ifmap want;
  std::memset(&want, 0, sizeof want);
  want.mem_start = 1;
  want.mem_end = 2;
  want.base_addr = 3;
  want.irq = 4;
  want.dma = 5;
  want.port = 6;
  EXPECT_EQ(std::memcmp(map->data.data(), &want, sizeof want), 0);
}

}  // namespace
}  // namespace ifcore::wire
