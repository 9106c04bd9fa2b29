// tests/wire/link_test.cc — link requests (NEWLINK/SETLINK/DELLINK/GETLINK) and the
// LinkMessage of dumps: byte fixtures, encode against uapi-struct bytes, round trips.
#include <net/if.h>

#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <cstring>

#include "rtnl/wire/link.h"
#include "wire/fixture.h"

namespace ifcore::wire {
namespace {

using namespace test;

constexpr AttrPolicyEntry kVeth[] = {{VETH_INFO_PEER, AttrShape::LinkMsg}};
constexpr AttrPolicyEntry kVlan[] = {{IFLA_VLAN_ID, AttrShape::U16}};

DecodeContext ctx() {
  DecodeContext c;
  c.kind_policy = [](std::string_view kind, bool slave) -> std::optional<AttrPolicy> {
    if (slave) return std::nullopt;
    if (kind == "veth") return AttrPolicy(kVeth);
    if (kind == "vlan") return AttrPolicy(kVlan);
    return std::nullopt;
  };
  return c;
}

// What `ip link add v0 type veth peer name v1` sends.
Bytes veth_add() {
  Bytes peer = cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_IFNAME, cstr("v1"))});
  Bytes info =
      cat({attr(IFLA_INFO_KIND, cstr("veth")), attr(IFLA_INFO_DATA, attr(VETH_INFO_PEER, peer))});
  return nlmsg(
      RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, 1, 0,
      cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_IFNAME, cstr("v0")), attr(IFLA_LINKINFO, info)}));
}

TEST(LinkRequest, DecodesVethAdd) {
  Bytes d = veth_add();
  auto r = decode_link_request(one(d), ctx());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->req.name, "v0");
  EXPECT_EQ(r->req.kind, "veth");
  EXPECT_TRUE(r->req.has_info_data);
  EXPECT_TRUE(r->info_data_decoded);
  ASSERT_EQ(r->req.info_data.size(), 1u);
  ASSERT_TRUE(r->req.info_data[0].link);
  EXPECT_EQ(r->req.info_data[0].link->name, "v1");
  EXPECT_EQ(r->info_data_offset, 16 + 16 + 8 + 4 + 12 + 4);
}

TEST(LinkRequest, EncodeGivesTheSameBytes) {
  Bytes d = veth_add();
  auto r = decode_link_request(one(d), ctx());
  ASSERT_TRUE(r);
  MessageBuilder b;
  ASSERT_TRUE(encode_link_request(
      b, {RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, 1, 0}, r->req));
  EXPECT_EQ(to_bytes(b.bytes()), d);
}

TEST(LinkRequest, SetlinkFields) {
  Bytes af = attr(IFLA_AF_SPEC, attr(AF_INET6, attr(IFLA_INET6_ADDR_GEN_MODE, {1})));
  Bytes d = nlmsg(
      RTM_SETLINK, NLM_F_REQUEST, 2, 0,
      cat({ifinfo(0, 0, 7, IFF_UP, IFF_UP), attr(IFLA_MTU, le32(1400)),
           attr(IFLA_ADDRESS, {2, 0, 0, 0, 0, 1}), attr(IFLA_MASTER, le32(3)),
           attr(IFLA_IFALIAS, {}), attr(IFLA_GROUP, le32(5)),
           attr(IFLA_TARGET_NETNSID, le32(std::uint32_t(-1))), af, attr(IFLA_EXT_MASK, le32(1))}));
  auto r = decode_link_request(one(d), ctx());
  ASSERT_TRUE(r) << r.error().message;
  const LinkRequest& q = r->req;
  EXPECT_EQ(q.ifindex, 7);
  EXPECT_EQ(q.flags, unsigned(IFF_UP));
  EXPECT_EQ(q.change, unsigned(IFF_UP));
  EXPECT_EQ(q.mtu, 1400u);
  EXPECT_EQ(q.address->to_string(), "02:00:00:00:00:01");
  EXPECT_EQ(q.master, 3u);
  EXPECT_EQ(q.ifalias, "");
  EXPECT_EQ(q.group, 5u);
  EXPECT_EQ(q.net_ns_id, -1);
  EXPECT_EQ(q.inet6_addr_gen_mode, 1);
}

// The shim's IFCORE_IFLA_NET_NS_ERRNO (a pid or descriptor that did not resolve) fails the
// request with that errno and no message, as Linux's rtnl_link_get_net does; the token is
// kept whole (the engine keeps its low half).
TEST(LinkRequest, NamespaceErrnoAndToken) {
  Bytes bad = nlmsg(RTM_SETLINK, NLM_F_REQUEST, 2, 0,
                    cat({ifinfo(0, 0, 7, 0, 0), attr(IFCORE_IFLA_NET_NS_ERRNO, le32(ESRCH))}));
  auto r = decode_link_request(one(bad), ctx());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ESRCH);
  EXPECT_TRUE(r.error().log_only);
  Bytes token(16, 0);
  token[15] = 9;
  Bytes d = nlmsg(RTM_SETLINK, NLM_F_REQUEST, 3, 0,
                  cat({ifinfo(0, 0, 7, 0, 0),
                       attr(IFLA_AF_SPEC, attr(AF_INET6, attr(IFLA_INET6_TOKEN, token)))}));
  auto t = decode_link_request(one(d), ctx());
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_TRUE(t->req.inet6_token);
  EXPECT_EQ((*t->req.inet6_token)[15], 9);
  Bytes shortened =
      nlmsg(RTM_SETLINK, NLM_F_REQUEST, 4, 0,
            cat({ifinfo(0, 0, 7, 0, 0),
                 attr(IFLA_AF_SPEC, attr(AF_INET6, attr(IFLA_INET6_TOKEN, {1, 2})))}));
  auto s = decode_link_request(one(shortened), ctx());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ERANGE);
}

TEST(LinkRequest, UnknownKindIsLeftForTheHandler) {
  Bytes info =
      cat({attr(IFLA_INFO_KIND, cstr("wireguard")), attr(IFLA_INFO_DATA, attr(1, le32(5)))});
  Bytes d = nlmsg(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE, 1, 0,
                  cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_LINKINFO, info)}));
  auto r = decode_link_request(one(d), ctx());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->req.kind, "wireguard");
  EXPECT_TRUE(r->req.has_info_data);
  EXPECT_TRUE(r->req.info_data.empty());
  EXPECT_FALSE(r->info_data_decoded);
  EXPECT_EQ(r->info_data_raw, attr(1, le32(5)));
}

TEST(LinkRequest, DataWithoutKindIsKeptRawAndDecodableLater) {
  Bytes d = nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0,
                  cat({ifinfo(0, 0, 9, 0, 0),
                       attr(IFLA_LINKINFO, attr(IFLA_INFO_DATA, attr(IFLA_VLAN_ID, le16(10))))}));
  auto r = decode_link_request(one(d), ctx());
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->info_data_decoded);
  auto l = decode_attrs(r->info_data_raw, kVlan, r->info_data_offset);
  ASSERT_TRUE(l);
  EXPECT_EQ((*l)[0].num, 10u);
}

TEST(LinkRequestMalformed, IfinfomsgPayloadTooShort) {
  Bytes d = nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0, Bytes(8, 0));
  auto r = decode_link_request(one(d), ctx());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_EQ(r.error().message, "Invalid header length");
}

TEST(LinkRequestMalformed, MtuOfWrongSizePointsAtIt) {
  Bytes d = nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0,
                  cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_IFNAME, cstr("a")), attr(IFLA_MTU, {1})}));
  auto r = decode_link_request(one(d), ctx());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ERANGE);  // Linux: validate_nla, shorter than NLA_U32
  EXPECT_EQ(r.error().attr_offset, 40);
}

TEST(LinkRequestMalformed, NameTooLong) {
  Bytes d = nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0,
                  cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_IFNAME, cstr("abcdefghijklmnop"))}));
  auto r = decode_link_request(one(d), ctx());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ERANGE);
  EXPECT_EQ(r.error().message, "Attribute failed policy validation");
  EXPECT_EQ(r.error().attr_offset, 32);
  EXPECT_EQ(r.error().policy, (ErrorPolicy{.type = NL_ATTR_TYPE_STRING, .max_length = 15}));
}

// Linux: the peer's name is checked with ifla_policy too (rtnl_nla_parse_ifinfomsg on
// VETH_INFO_PEER), pointing at the peer's IFLA_IFNAME.
TEST(LinkRequestMalformed, PeerNameTooLong) {
  Bytes peer = cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_IFNAME, cstr("abcdefghijklmnop"))});
  Bytes info =
      cat({attr(IFLA_INFO_KIND, cstr("veth")), attr(IFLA_INFO_DATA, attr(VETH_INFO_PEER, peer))});
  Bytes d = nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0,
                  cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_LINKINFO, info)}));
  auto r = decode_link_request(one(d), ctx());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ERANGE);
  EXPECT_EQ(r.error().message, "Attribute failed policy validation");
  EXPECT_EQ(r.error().attr_offset, 16 + 16 + 4 + 12 + 4 + 4 + 16);
}

TEST(LinkRequestMalformed, BadLinkMsgInsideVethInfoPeer) {
  Bytes info = cat({attr(IFLA_INFO_KIND, cstr("veth")),
                    attr(IFLA_INFO_DATA, attr(VETH_INFO_PEER, Bytes(4, 0)))});
  Bytes d = nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0,
                  cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_LINKINFO, info)}));
  auto r = decode_link_request(one(d), ctx());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ERANGE);
  EXPECT_EQ(r.error().attr_offset, 16 + 16 + 4 + 12 + 4);
}

// Linux 6.18's IFLA_MAX is 69: a type above it is not looked at; ifcore's own types
// (from 0x3f00) that it does not know are refused.
TEST(LinkRequestMalformed, AttributesAboveIflaMaxAreIgnoredButIfcoresUnknownOnes) {
  Bytes d = nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0, cat({ifinfo(0, 0, 0, 0, 0), attr(500, {})}));
  EXPECT_TRUE(decode_link_request(one(d), ctx()));
  Bytes ours =
      nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0, cat({ifinfo(0, 0, 0, 0, 0), attr(0x3f40, {})}));
  auto r = decode_link_request(one(ours), ctx());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_EQ(r.error().message, "unknown attribute type 16192");
  EXPECT_EQ(r.error().attr_offset, 32);
}

// ifla_policy's NLA_REJECT entries (IFLA_PERM_ADDRESS, IFLA_TSO_MAX_SIZE, ...) and the
// strictly validated types without a policy; a hardware driver's settings are read (a
// change answers EOPNOTSUPP), IFLA_MAP after its policy's length.
TEST(LinkRequestMalformed, RejectedAndDriverOnlyAttributes) {
  auto decode = [](std::uint16_t type, Bytes payload) {
    return decode_link_request(
        one(nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0,
                  cat({ifinfo(0, 0, 0, 0, 0), attr(type, std::move(payload))}))),
        ctx());
  };
  for (int t : {int{IFLA_PERM_ADDRESS}, int{IFLA_TSO_MAX_SIZE}, int{IFLA_TSO_MAX_SEGS},
                int{IFLA_ALLMULTI}, int{wire::kIflaHeadroom}}) {
    auto r = decode(static_cast<std::uint16_t>(t), {0, 0, 0, 0});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, EINVAL);
    EXPECT_EQ(r.error().message, "Attribute failed policy validation");
  }
  auto strict = decode(wire::kIflaDpllPin, {0, 0, 0, 0});
  ASSERT_FALSE(strict);
  EXPECT_EQ(strict.error().message, "Unsupported attribute");
  auto ports = decode(IFLA_VF_PORTS, {});
  ASSERT_TRUE(ports);
  EXPECT_TRUE(ports->driver_ops);
  auto short_map = decode(IFLA_MAP, {0, 0, 0, 0});
  ASSERT_FALSE(short_map);
  EXPECT_EQ(short_map.error().code, ERANGE);
  auto map = decode(IFLA_MAP, Bytes(sizeof(rtnl_link_ifmap), 0));
  ASSERT_TRUE(map);
  EXPECT_TRUE(map->driver_ops);
}

// IFLA_VFINFO_LIST: read (a change answers EOPNOTSUPP: no kind has virtual functions), its
// entries IFLA_VF_INFO only.
TEST(LinkRequestMalformed, VfInfoListIsReadAndChecked) {
  Bytes empty = nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0,
                      cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_VFINFO_LIST, {})}));
  auto r = decode_link_request(one(empty), ctx());
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->driver_ops);
  Bytes one_vf =
      nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0,
            cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_VFINFO_LIST, attr(IFLA_VF_INFO, {}))}));
  r = decode_link_request(one(one_vf), ctx());
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->driver_ops);
  Bytes other = nlmsg(RTM_NEWLINK, NLM_F_REQUEST, 1, 0,
                      cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_VFINFO_LIST, attr(7, {}))}));
  r = decode_link_request(one(other), ctx());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
}

TEST(LinkRequestMalformed, AfSpecUnknownFamily) {
  Bytes d = nlmsg(RTM_SETLINK, NLM_F_REQUEST, 1, 0,
                  cat({ifinfo(0, 0, 1, 0, 0), attr(IFLA_AF_SPEC, attr(AF_BRIDGE, {}))}));
  auto r = decode_link_request(one(d), ctx());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EAFNOSUPPORT);
}

TEST(GetLink, DumpWithExtMaskAndFilters) {
  Bytes d = nlmsg(
      RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 3, 0,
      cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_EXT_MASK, le32(RTEXT_FILTER_VF)),
           attr(IFLA_MASTER, le32(4)), attr(IFLA_LINKINFO, attr(IFLA_INFO_KIND, cstr("veth")))}));
  auto g = decode_getlink(one(d));
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_TRUE(g->dump);
  EXPECT_EQ(g->ext_mask, unsigned(RTEXT_FILTER_VF));
  EXPECT_EQ(g->filter_master, 4u);
  EXPECT_EQ(g->filter_kind, "veth");

  MessageBuilder b;
  ASSERT_TRUE(encode_getlink(b, {RTM_GETLINK, NLM_F_REQUEST, 3, 0}, *g));
  Bytes back = to_bytes(b.bytes());
  auto g2 = decode_getlink(one(back));
  ASSERT_TRUE(g2);
  EXPECT_EQ(g2->filter_kind, "veth");
  EXPECT_EQ(g2->filter_master, 4u);
  EXPECT_TRUE(g2->dump);
}

TEST(GetLink, OldClientRtgenmsgDump) {
  Bytes d = nlmsg(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 3, 0, {AF_PACKET, 0, 0, 0});
  auto g = decode_getlink(one(d));
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->dump);
}

TEST(GetLinkMalformed, ShortNonDump) {
  Bytes d = nlmsg(RTM_GETLINK, NLM_F_REQUEST, 3, 0, {0, 0, 0, 0});
  auto g = decode_getlink(one(d));
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().code, EINVAL);
}

LinkMessage sample_link() {
  LinkMessage m;
  m.hw_type = ARPHRD_ETHER;
  m.ifindex = 5;
  m.flags = IFF_UP | IFF_BROADCAST | IFF_MULTICAST | IFF_LOWER_UP;
  m.name = "v0";
  m.txqlen = 1000;
  m.operstate = IF_OPER_UP;
  m.link_mode = 0;
  m.mtu = 1500;
  m.min_mtu = 68;
  m.max_mtu = 65535;
  m.group = 0;
  m.promiscuity = 0;
  m.num_tx_queues = 1;
  m.gso_max_segs = 65535;
  m.gso_max_size = 65536;
  m.gro_max_size = 65536;
  m.num_rx_queues = 1;
  m.master = 3;
  m.carrier = 1;
  m.carrier_changes = 2;
  m.carrier_up_count = 1;
  m.carrier_down_count = 1;
  m.proto_down = 0;
  m.address = HwAddr::ethernet({2, 0, 0, 0, 0, 5});
  m.broadcast = HwAddr::ethernet({0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
  rtnl_link_stats64 s64{};
  s64.rx_packets = 10;
  s64.tx_bytes = 1ull << 40;
  m.stats64 = s64;
  rtnl_link_stats s{};
  s.rx_packets = 10;
  m.stats = s;
  m.kind = "veth";
  m.slave_kind = "bridge";
  m.slave_data = AttrList{Attr::u8(IFLA_BRPORT_STATE, 3)};
  m.link = 6;
  m.qdisc = "noqueue";
  m.inet6_flags = 0x80000000;
  m.inet6_addr_gen_mode = 0;
  return m;
}

// The same message written field by field from the uapi structs.
Bytes sample_link_by_hand() {
  ifinfomsg ifi{};
  ifi.ifi_type = ARPHRD_ETHER;
  ifi.ifi_index = 5;
  ifi.ifi_flags = IFF_UP | IFF_BROADCAST | IFF_MULTICAST | IFF_LOWER_UP;
  Bytes ifib(sizeof(ifi));
  std::memcpy(ifib.data(), &ifi, sizeof(ifi));
  rtnl_link_stats64 s64{};
  s64.rx_packets = 10;
  s64.tx_bytes = 1ull << 40;
  Bytes s64b(sizeof(s64));
  std::memcpy(s64b.data(), &s64, sizeof(s64));
  rtnl_link_stats s{};
  s.rx_packets = 10;
  Bytes sb(sizeof(s));
  std::memcpy(sb.data(), &s, sizeof(s));
  Bytes linkinfo =
      cat({attr(IFLA_INFO_KIND, cstr("veth")), attr(IFLA_INFO_SLAVE_KIND, cstr("bridge")),
           attr(IFLA_INFO_SLAVE_DATA, attr(IFLA_BRPORT_STATE, {3}))});
  Bytes af =
      attr(AF_INET6,
           cat({attr(IFLA_INET6_FLAGS, le32(0x80000000)), attr(IFLA_INET6_ADDR_GEN_MODE, {0})}));
  return nlmsg(RTM_NEWLINK, NLM_F_MULTI, 8, 100,
               cat({ifib,
                    attr(IFLA_IFNAME, cstr("v0")),
                    attr(IFLA_TXQLEN, le32(1000)),
                    attr(IFLA_OPERSTATE, {IF_OPER_UP}),
                    attr(IFLA_LINKMODE, {0}),
                    attr(IFLA_MTU, le32(1500)),
                    attr(IFLA_MIN_MTU, le32(68)),
                    attr(IFLA_MAX_MTU, le32(65535)),
                    attr(IFLA_GROUP, le32(0)),
                    attr(IFLA_PROMISCUITY, le32(0)),
                    attr(IFLA_NUM_TX_QUEUES, le32(1)),
                    attr(IFLA_GSO_MAX_SEGS, le32(65535)),
                    attr(IFLA_GSO_MAX_SIZE, le32(65536)),
                    attr(IFLA_GRO_MAX_SIZE, le32(65536)),
                    attr(IFLA_NUM_RX_QUEUES, le32(1)),
                    attr(IFLA_MASTER, le32(3)),
                    attr(IFLA_CARRIER, {1}),
                    attr(IFLA_CARRIER_CHANGES, le32(2)),
                    attr(IFLA_CARRIER_UP_COUNT, le32(1)),
                    attr(IFLA_CARRIER_DOWN_COUNT, le32(1)),
                    attr(IFLA_PROTO_DOWN, {0}),
                    attr(IFLA_ADDRESS, {2, 0, 0, 0, 0, 5}),
                    attr(IFLA_BROADCAST, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),
                    attr(IFLA_STATS64, s64b),
                    attr(IFLA_STATS, sb),
                    attr(IFLA_LINKINFO, linkinfo),
                    attr(IFLA_LINK, le32(6)),
                    attr(IFLA_QDISC, cstr("noqueue")),
                    attr(IFLA_AF_SPEC, af),
                    attr(kIflaDevlinkPort, Bytes{}),  // Linux 6.18: always, empty here
                    attr(kIflaDpllPin, Bytes{})}));
}

TEST(LinkMessageEncode, MatchesUapiStructBytes) {
  MessageBuilder b;
  ASSERT_TRUE(encode_link_message(b, {RTM_NEWLINK, NLM_F_MULTI, 8, 100}, sample_link()));
  EXPECT_EQ(to_bytes(b.bytes()), sample_link_by_hand());
}

constexpr AttrPolicyEntry kBrport[] = {{IFLA_BRPORT_STATE, AttrShape::U8}};

TEST(LinkMessageDecode, RoundTrip) {
  Bytes d = sample_link_by_hand();
  DecodeContext c;
  c.kind_policy = [](std::string_view kind, bool slave) -> std::optional<AttrPolicy> {
    if (slave && kind == "bridge") return AttrPolicy(kBrport);
    return std::nullopt;
  };
  auto m = decode_link_message(one(d), c);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->name, "v0");
  EXPECT_EQ(m->txqlen, 1000u);
  EXPECT_EQ(m->mtu, 1500u);
  EXPECT_EQ(m->master, 3u);
  EXPECT_EQ(m->kind, "veth");
  EXPECT_EQ(m->slave_kind, "bridge");
  ASSERT_TRUE(m->slave_data);
  EXPECT_EQ((*m->slave_data)[0].num, 3u);
  EXPECT_EQ(m->stats64->tx_bytes, 1ull << 40);
  EXPECT_EQ(m->qdisc, "noqueue");
  EXPECT_EQ(m->inet6_flags, 0x80000000u);
  MessageBuilder b;
  ASSERT_TRUE(encode_link_message(b, {RTM_NEWLINK, NLM_F_MULTI, 8, 100}, *m));
  EXPECT_EQ(to_bytes(b.bytes()), d);
}

TEST(LinkMessageDecode, SkipsAttributesItDoesNotKnow) {
  // As a newer kernel sends: IFLA 67 (u8), IFLA_XDP, IFLA_MAP, and an unknown AF_SPEC family.
  Bytes d = nlmsg(RTM_NEWLINK, 0, 0, 0,
                  cat({ifinfo(0, ARPHRD_LOOPBACK, 1, IFF_UP, 0), attr(IFLA_IFNAME, cstr("lo")),
                       attr(67, {0}), attr(IFLA_XDP, attr(1, {0})), attr(IFLA_MAP, Bytes(32, 0)),
                       attr(IFLA_AF_SPEC, attr(AF_BRIDGE, attr(1, {}))),
                       attr(IFLA_LINKINFO, attr(IFLA_INFO_KIND, cstr("dummy")))}));
  auto m = decode_link_message(one(d));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->name, "lo");
  EXPECT_EQ(m->kind, "dummy");
}

TEST(LinkMessageDecode, UnparsableKindDataStaysRaw) {
  Bytes d = nlmsg(RTM_NEWLINK, 0, 0, 0,
                  cat({ifinfo(0, 1, 2, 0, 0),
                       attr(IFLA_LINKINFO, cat({attr(IFLA_INFO_KIND, cstr("vlan")),
                                                attr(IFLA_INFO_DATA, attr(99, {1}))}))}));
  auto m = decode_link_message(one(d), ctx());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->info_data);
  EXPECT_EQ(m->info_data_raw, attr(99, {1}));
}

}  // namespace
}  // namespace ifcore::wire
