// tests/wire/messages_test.cc — address, route, nsid and bulk-delete codecs: byte fixtures
// in the kernel's attribute order, decode, encode and round trips.
#include <net/if.h>

#include <linux/if_addr.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "rtnl/wire/address.h"
#include "rtnl/wire/bulk.h"
#include "rtnl/wire/nsid.h"
#include "rtnl/wire/route.h"
#include "wire/fixture.h"

namespace ifcore::wire {
namespace {

using namespace test;

Bytes raw(const void* p, std::size_t n) {
  Bytes b(n);
  std::memcpy(b.data(), p, n);
  return b;
}

// As inet_fill_ifaddr writes 10.0.0.1/24 brd 10.0.0.255 on eth0 (ifindex 2).
Bytes addr4() {
  ifaddrmsg ifa{AF_INET, 24, IFA_F_PERMANENT, RT_SCOPE_UNIVERSE, 2};
  ifa_cacheinfo ci{0xffffffff, 0xffffffff, 100, 200};
  return nlmsg(
      RTM_NEWADDR, NLM_F_MULTI, 4, 9,
      cat({raw(&ifa, sizeof(ifa)), attr(IFA_ADDRESS, {10, 0, 0, 1}), attr(IFA_LOCAL, {10, 0, 0, 1}),
           attr(IFA_BROADCAST, {10, 0, 0, 255}), attr(IFA_LABEL, cstr("eth0")),
           attr(IFA_FLAGS, le32(IFA_F_PERMANENT)), attr(IFA_CACHEINFO, raw(&ci, sizeof(ci)))}));
}

TEST(Addr, DecodeEncodeIpv4) {
  Bytes d = addr4();
  auto a = decode_addr(one(d));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->family, AF_INET);
  EXPECT_EQ(a->prefixlen, 24);
  EXPECT_EQ(a->ifindex, 2u);
  EXPECT_EQ(a->local->to_string(), "10.0.0.1");
  EXPECT_EQ(a->broadcast->to_string(), "10.0.0.255");
  EXPECT_EQ(a->label, "eth0");
  EXPECT_EQ(a->all_flags(), unsigned(IFA_F_PERMANENT));
  EXPECT_EQ(a->cacheinfo->cstamp, 100u);
  MessageBuilder b;
  ASSERT_TRUE(encode_addr(b, {RTM_NEWADDR, NLM_F_MULTI, 4, 9}, *a));
  EXPECT_EQ(to_bytes(b.bytes()), d);
}

TEST(Addr, EncodeIpv6InKernelOrder) {
  AddrMessage a;
  a.family = AF_INET6;
  a.prefixlen = 64;
  a.scope = RT_SCOPE_LINK;
  a.ifindex = 3;
  a.address = *IpAddr::parse("fe80::1");
  a.cacheinfo = ifa_cacheinfo{1, 2, 3, 4};
  a.flags32 = IFA_F_PERMANENT | IFA_F_NOPREFIXROUTE;
  a.proto = IFAPROT_KERNEL_LL;
  MessageBuilder b;
  ASSERT_TRUE(encode_addr(b, {RTM_NEWADDR, 0, 0, 0}, a));
  ifaddrmsg ifa{AF_INET6, 64, 0, RT_SCOPE_LINK, 3};
  ifa_cacheinfo ci{1, 2, 3, 4};
  Bytes want = nlmsg(RTM_NEWADDR, 0, 0, 0,
                     cat({raw(&ifa, sizeof(ifa)), attr(IFA_ADDRESS, to_bytes(a.address->bytes())),
                          attr(IFA_CACHEINFO, raw(&ci, sizeof(ci))),
                          attr(IFA_FLAGS, le32(IFA_F_PERMANENT | IFA_F_NOPREFIXROUTE)),
                          attr(IFA_PROTO, {IFAPROT_KERNEL_LL})}));
  EXPECT_EQ(to_bytes(b.bytes()), want);
  auto back = decode_addr(one(want));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->address, a.address);
  EXPECT_EQ(back->proto, IFAPROT_KERNEL_LL);
}

TEST(AddrMalformed, AddressSizeDoesNotMatchFamily) {
  ifaddrmsg ifa{AF_INET, 24, 0, 0, 2};
  Bytes d = nlmsg(RTM_NEWADDR, NLM_F_REQUEST, 1, 0,
                  cat({raw(&ifa, sizeof(ifa)), attr(IFA_LOCAL, Bytes(16, 1))}));
  auto a = decode_addr(one(d));
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, EINVAL);
  EXPECT_EQ(a.error().attr_offset, 24);
}

TEST(AddrMalformed, IfaddrmsgTooShort) {
  Bytes d = nlmsg(RTM_NEWADDR, NLM_F_REQUEST, 1, 0, {2, 24, 0, 0});
  EXPECT_EQ(decode_addr(one(d)).error().code, EINVAL);
}

TEST(Addr, OldClientDumpWithRtgenmsg) {
  Bytes d = nlmsg(RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, 1, 0, {AF_INET6, 0, 0, 0});
  auto a = decode_addr(one(d));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->family, AF_INET6);
}

// 10.1.0.0/16 via 10.0.0.254 dev 2 metric 100, table main, with an mtu metric.
Bytes route4() {
  rtmsg rtm{AF_INET, 16, 0, 0, RT_TABLE_MAIN, RTPROT_STATIC, RT_SCOPE_UNIVERSE, RTN_UNICAST, 0};
  return nlmsg(RTM_NEWROUTE, NLM_F_MULTI, 2, 0,
               cat({raw(&rtm, sizeof(rtm)), attr(RTA_TABLE, le32(RT_TABLE_MAIN)),
                    attr(RTA_DST, {10, 1, 0, 0}), attr(RTA_PRIORITY, le32(100)),
                    attr(RTA_METRICS, attr(RTAX_MTU, le32(1400))),
                    attr(RTA_GATEWAY, {10, 0, 0, 254}), attr(RTA_OIF, le32(2))}));
}

TEST(Route, DecodeEncodeIpv4) {
  Bytes d = route4();
  auto r = decode_route(one(d));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->dst->to_string(), "10.1.0.0");
  EXPECT_EQ(r->gateway->to_string(), "10.0.0.254");
  EXPECT_EQ(r->oif, 2u);
  EXPECT_EQ(r->priority, 100u);
  EXPECT_EQ(r->table_or_id(), unsigned(RT_TABLE_MAIN));
  ASSERT_EQ(r->metrics.size(), 1u);
  EXPECT_EQ(r->metrics[0].value, 1400u);
  MessageBuilder b;
  ASSERT_TRUE(encode_route(b, {RTM_NEWROUTE, NLM_F_MULTI, 2, 0}, *r));
  EXPECT_EQ(to_bytes(b.bytes()), d);
}

TEST(Route, MultipathIpv6RoundTrip) {
  RouteMessage r;
  r.family = AF_INET6;
  r.dst_len = 0;
  r.table = RT_TABLE_MAIN;
  r.type = RTN_UNICAST;
  r.table_id = RT_TABLE_MAIN;
  r.priority = 1024;
  r.multipath = {{0, 0, 2, *IpAddr::parse("fe80::1"), std::nullopt},
                 {RTNH_F_ONLINK, 1, 3, std::nullopt, *IpAddr::parse("10.0.0.1")}};
  r.pref = 0;
  r.cacheinfo = rta_cacheinfo{};
  MessageBuilder b;
  ASSERT_TRUE(encode_route(b, {RTM_NEWROUTE, 0, 1, 0}, r));
  Bytes d = to_bytes(b.bytes());
  // The first hop by hand: rtnexthop {len 28, flags 0, hops 0, ifindex 2} + RTA_GATEWAY.
  Bytes hop1 = cat({le16(28), Bytes{0, 0}, le32(2),
                    attr(RTA_GATEWAY, to_bytes(r.multipath[0].gateway->bytes()))});
  auto pos = std::search(d.begin(), d.end(), hop1.begin(), hop1.end());
  EXPECT_NE(pos, d.end());
  auto back = decode_route(one(d));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->multipath, r.multipath);
  EXPECT_EQ(back->priority, 1024u);
  EXPECT_EQ(back->pref, 0);
}

TEST(RouteMalformed, RtnexthopLengthPastTheEnd) {
  rtmsg rtm{AF_INET, 0, 0, 0, RT_TABLE_MAIN, 0, 0, RTN_UNICAST, 0};
  Bytes d = nlmsg(
      RTM_NEWROUTE, NLM_F_REQUEST, 1, 0,
      cat({raw(&rtm, sizeof(rtm)), attr(RTA_MULTIPATH, cat({le16(40), Bytes{0, 0}, le32(1)}))}));
  auto r = decode_route(one(d));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_EQ(r.error().attr_offset, 32);
}

TEST(RouteMalformed, RtmsgTooShort) {
  Bytes d = nlmsg(RTM_NEWROUTE, NLM_F_REQUEST, 1, 0, {2, 0, 0, 0});
  EXPECT_EQ(decode_route(one(d)).error().code, EINVAL);
}

TEST(Route, EncapIsFlaggedNotDecoded) {
  rtmsg rtm{AF_INET, 0, 0, 0, RT_TABLE_MAIN, 0, 0, RTN_UNICAST, 0};
  Bytes d = nlmsg(
      RTM_NEWROUTE, NLM_F_REQUEST, 1, 0,
      cat({raw(&rtm, sizeof(rtm)), attr(RTA_ENCAP_TYPE, le16(1)), attr(RTA_ENCAP, attr(1, {}))}));
  auto r = decode_route(one(d));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->has_encap);
}

TEST(Nsid, DecodeEncode) {
  Bytes d = nlmsg(RTM_NEWNSID, 0, 3, 0,
                  cat({Bytes{AF_UNSPEC, 0, 0, 0}, attr(NETNSA_NSID, le32(7)),
                       attr(NETNSA_CURRENT_NSID, le32(std::uint32_t(-1)))}));
  auto n = decode_nsid(one(d));
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(n->nsid, 7);
  EXPECT_EQ(n->current_nsid, -1);
  MessageBuilder b;
  ASSERT_TRUE(encode_nsid(b, {RTM_NEWNSID, 0, 3, 0}, *n));
  EXPECT_EQ(to_bytes(b.bytes()), d);
}

TEST(NsidMalformed, NsidOfWrongSize) {
  Bytes d = nlmsg(RTM_NEWNSID, 0, 3, 0, cat({Bytes{0, 0, 0, 0}, attr(NETNSA_NSID, {1})}));
  EXPECT_EQ(decode_nsid(one(d)).error().code, ERANGE);  // Linux: validate_nla, shorter than NLA_S32
}

TEST(Bulk, RequestByHandAndRoundTrip) {
  Bytes d = nlmsg(RTM_DELLINK, NLM_F_REQUEST | NLM_F_ACK, 5, 0,
                  cat({ifinfo(0, 0, 0, 0, 0),
                       attr(IFCORE_IFLA_BULK, cat({attr(IFCORE_BULK_IFINDEX, le32(4)),
                                                   attr(IFCORE_BULK_IFNAME, cstr("v1"))}))}));
  auto r = decode_bulk_delete(one(d));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(*r);
  ASSERT_EQ((*r)->items.size(), 2u);
  EXPECT_EQ((*r)->items[0].ifindex, 4u);
  EXPECT_EQ((*r)->items[1].name, "v1");
  MessageBuilder b;
  ASSERT_TRUE(encode_bulk_delete(b, {RTM_DELLINK, NLM_F_REQUEST | NLM_F_ACK, 5, 0}, **r));
  EXPECT_EQ(to_bytes(b.bytes()), d);
}

TEST(Bulk, OrdinaryDeleteIsNotBulk) {
  Bytes d = nlmsg(RTM_DELLINK, NLM_F_REQUEST, 5, 0, ifinfo(0, 0, 3, 0, 0));
  auto r = decode_bulk_delete(one(d));
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
}

TEST(Bulk, TwentyThousandItemsSpanSeveralNests) {
  BulkDelete req;
  for (std::uint32_t i = 1; i <= 20000; ++i) req.items.push_back({i, std::nullopt});
  MessageBuilder b(1 << 20);
  ASSERT_TRUE(encode_bulk_delete(b, {RTM_DELLINK, NLM_F_REQUEST, 1, 0}, req));
  Bytes d = to_bytes(b.bytes());
  auto r = decode_bulk_delete(one(d));
  ASSERT_TRUE(r);
  ASSERT_EQ((*r)->items.size(), 20000u);
  EXPECT_EQ((*r)->items.back().ifindex, 20000u);
}

TEST(BulkMalformed, EmptyList) {
  Bytes d = nlmsg(RTM_DELLINK, NLM_F_REQUEST, 5, 0,
                  cat({ifinfo(0, 0, 0, 0, 0), attr(IFCORE_IFLA_BULK, {})}));
  auto r = decode_bulk_delete(one(d));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "bulk delete names no device");
}

TEST(Bulk, ResultByHandAndRoundTrip) {
  BulkResult res{1, 0, std::string("nope"), ENODEV, "device \"nope\" not found"};
  MessageBuilder b;
  ASSERT_TRUE(encode_bulk_result(b, 5, 77, res));
  Bytes want =
      nlmsg(RTM_DELLINK, NLM_F_MULTI, 5, 77,
            cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_IFNAME, cstr("nope")),
                 attr(IFCORE_IFLA_BULK_INDEX, le32(1)), attr(IFCORE_IFLA_BULK_ERRNO, le32(ENODEV)),
                 attr(IFCORE_IFLA_BULK_MSG, cstr("device \"nope\" not found"))}));
  EXPECT_EQ(to_bytes(b.bytes()), want);
  auto back = decode_bulk_result(one(want));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, res);
}

}  // namespace
}  // namespace ifcore::wire
