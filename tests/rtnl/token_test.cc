// tests/rtnl/token_test.cc — `ip token` (IFLA_AF_SPEC / AF_INET6 / IFLA_INET6_TOKEN, Linux:
// inet6_set_iftoken) and the AF_INET6 link dump it and `ip -6 addr` read (Linux:
// inet6_dump_ifinfo): the token's interface identifier kept, its refusals, and the dump's
// short messages (no qdisc, group or txqlen; the inet6 attributes in IFLA_PROTINFO).
#include <linux/if_link.h>

#include <arpa/inet.h>

#include "rtnl/fixture.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

std::array<std::uint8_t, 16> in6(const char* text) {
  std::array<std::uint8_t, 16> a{};
  EXPECT_EQ(inet_pton(AF_INET6, text, a.data()), 1) << text;
  return a;
}

// The AF_INET6 attributes of an AF_INET6 link dump's message, by type.
std::vector<wire::RawAttr> protinfo(const wire::Message& m) {
  auto p = m.payload();
  auto attrs = wire::parse_raw_attrs(p.subspan(NLMSG_ALIGN(sizeof(ifinfomsg))), 0);
  EXPECT_TRUE(attrs);
  const wire::RawAttr* info = attrs ? wire::find_raw(*attrs, IFLA_PROTINFO) : nullptr;
  if (!info) return {};
  auto inner = wire::parse_nested(*info);
  return inner ? *inner : std::vector<wire::RawAttr>{};
}

TEST_F(RtnlTest, TokenKeepsTheInterfaceIdentifierAndTheDumpReportsIt) {
  session->set_option(NETLINK_EXT_ACK, 1);
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v0", "v1"))).last_error(), 0);
  LinkRequest req = named("v0");
  req.inet6_token = in6("2001:db8::1:2:3:4");
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 2, req)).last_error(), 0);

  Bytes dump = nlmsg(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 3, 0, ifinfo(AF_INET6, 0, 0, 0, 0));
  Replies r = send(dump);
  int v0 = find("v0")->ifindex();
  bool seen = false;
  for (const wire::Message& m : r.msgs) {
    if (m.hdr.nlmsg_type != RTM_NEWLINK) continue;
    ifinfomsg ifi;
    std::memcpy(&ifi, m.payload().data(), sizeof ifi);
    EXPECT_EQ(ifi.ifi_family, AF_INET6);
    auto top = wire::parse_raw_attrs(m.payload().subspan(NLMSG_ALIGN(sizeof(ifinfomsg))), 0);
    ASSERT_TRUE(top);
    EXPECT_EQ(wire::find_raw(*top, IFLA_QDISC), nullptr);
    EXPECT_EQ(wire::find_raw(*top, IFLA_TXQLEN), nullptr);
    auto info = protinfo(m);
    const wire::RawAttr* token = wire::find_raw(info, IFLA_INET6_TOKEN);
    ASSERT_NE(token, nullptr);
    ASSERT_EQ(token->data.size(), 16u);
    // Linux keeps the low 8 bytes alone.
    auto want = ifi.ifi_index == v0 ? in6("::1:2:3:4") : in6("::");
    EXPECT_TRUE(std::equal(want.begin(), want.end(), token->data.begin()));
    seen = seen || ifi.ifi_index == v0;
  }
  EXPECT_TRUE(seen);
}

TEST_F(RtnlTest, TokenIsRefusedWhereThereIsNoRouterAdvertisement) {
  session->set_option(NETLINK_EXT_ACK, 1);
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("v0", "v1"))).last_error(), 0);
  LinkRequest lo = named("lo");
  lo.inet6_token = in6("::9");
  Replies r = send(link_msg(RTM_NEWLINK, NLM_F_ACK, 2, lo));
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "ipv6: Device is loopback");
  LinkRequest noarp = named("v0");
  noarp.flags = IFF_NOARP;
  noarp.change = IFF_NOARP;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 3, noarp)).last_error(), 0);
  LinkRequest tok = named("v0");
  tok.inet6_token = in6("::9");
  tok.mtu = 1400;  // nothing of a refused request changes
  r = send(link_msg(RTM_NEWLINK, NLM_F_ACK, 4, tok));
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "ipv6: Device does not do neighbour discovery");
  EXPECT_EQ(find("v0")->mtu(), 1500u);
  // A create with a token: the new device has no IPv6 state yet.
  LinkRequest create = veth_pair("v2", "v3");
  create.inet6_token = in6("::9");
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 5, create)).last_error(), EAFNOSUPPORT);
  EXPECT_EQ(find("v2"), nullptr);
}

// Linux: inet6_valid_dump_ifinfo, in the dump: NLMSG_DONE carries the refusal.
TEST_F(RtnlTest, StrictInet6LinkDumpChecksItsHeader) {
  session->set_option(NETLINK_EXT_ACK, 1);
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  auto done = [](const Replies& r) {
    EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
    return std::make_pair(wire::decode_done(r.msgs.back()).value_or(0),
                          wire::decode_done_message(r.msgs.back()));
  };
  Replies r =
      send(nlmsg(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 1, 0, ifinfo(AF_INET6, 0, 1, 0, 0)));
  EXPECT_EQ(done(r), std::make_pair(EINVAL, std::string("ipv6: Invalid values in header for "
                                                        "dump request")));
  Bytes body = cat({ifinfo(AF_INET6, 0, 0, 0, 0), attr(IFLA_EXT_MASK, le32(1))});
  r = send(nlmsg(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 2, 0, body));
  EXPECT_EQ(done(r), std::make_pair(EINVAL, std::string("ipv6: Invalid data after header")));
}

}  // namespace
}  // namespace ifcore::rtnl::test
