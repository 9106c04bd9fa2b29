// tests/rtnl/netconf_test.cc — RTM_GETNETCONF (get, dump, the errors of bad requests) and
// the RTM_NEWNETCONF / RTM_DELNETCONF notifications of device registration, unregistration
// and setting changes, each as Linux 6.18 answers (checked on the kernel with raw netlink
// requests and `ip monitor netconf`).
#include <linux/netconf.h>
#include <linux/netlink.h>

#include "ifcore/inet.h"
#include "rtnl/fixture.h"
#include "rtnl/wire/netconf.h"
#include "rtnl/wire/sysctl_msg.h"

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

// netconfmsg (padded to 4) + attributes.
Bytes netconf_req(std::uint8_t family, std::uint16_t flags, const Bytes& attrs = {},
                  std::uint32_t seq = 3) {
  Bytes body{family, 0, 0, 0};
  add(body, attrs);
  return nlmsg(RTM_GETNETCONF, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), seq, 0, body);
}
Bytes ifindex_attr(std::int32_t i) {
  return attr(NETCONFA_IFINDEX, le32(static_cast<std::uint32_t>(i)));
}

// ---- wire

TEST(NetconfWire, EncodesInLinuxOrder) {
  wire::MessageBuilder b;
  wire::NetconfMessage n;
  n.family = AF_INET;
  n.ifindex = -1;
  n.forwarding = 1;
  n.rp_filter = 2;
  n.mc_forwarding = 0;
  n.bc_forwarding = 0;
  n.proxy_neigh = 0;
  n.ignore_routes_with_linkdown = 0;
  ASSERT_TRUE(wire::encode_netconf(b, {RTM_NEWNETCONF, NLM_F_MULTI, 9, 77}, n));
  // The bytes of Linux's reply for "all" (inet_netconf_fill_devconf): 76 bytes.
  Bytes want = nlmsg(RTM_NEWNETCONF, NLM_F_MULTI, 9, 77,
                     cat({{AF_INET, 0, 0, 0},
                          attr(NETCONFA_IFINDEX, le32(0xffffffff)),
                          attr(NETCONFA_FORWARDING, le32(1)),
                          attr(NETCONFA_RP_FILTER, le32(2)),
                          attr(NETCONFA_MC_FORWARDING, le32(0)),
                          attr(NETCONFA_BC_FORWARDING, le32(0)),
                          attr(NETCONFA_PROXY_NEIGH, le32(0)),
                          attr(NETCONFA_IGNORE_ROUTES_WITH_LINKDOWN, le32(0))}));
  EXPECT_EQ(to_bytes(b.bytes()), want);
  EXPECT_EQ(want.size(), 76u);
  auto back = wire::decode_netconf(one(want));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->ifindex, -1);
  EXPECT_EQ(back->rp_filter, 2);
  EXPECT_FALSE(back->input);
}

TEST(NetconfWire, GetRequestChecks) {
  Bytes ok_req = netconf_req(AF_INET, 0, ifindex_attr(1));
  auto m = wire::decode_netconf_get(one(ok_req), AF_INET, true);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->ifindex, 1);
  // The last NETCONFA_IFINDEX counts.
  m = wire::decode_netconf_get(
      one(netconf_req(AF_INET, 0, cat({ifindex_attr(99), ifindex_attr(1)}))), AF_INET, false);
  EXPECT_EQ(m->ifindex, 1);
  // A 2-byte ifindex fails the policy, strict or not, pointing at the attribute (20).
  Bytes shrt = netconf_req(AF_INET, 0, attr(NETCONFA_IFINDEX, le16(1)));
  for (bool strict : {false, true}) {
    auto e = wire::decode_netconf_get(one(shrt), AF_INET, strict);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().code, ERANGE);
    EXPECT_EQ(e.error().message, "Attribute failed policy validation");
    EXPECT_EQ(e.error().attr_offset, 20);
    EXPECT_EQ(e.error().policy.type, 0u);  // Linux sends no policy for a minimum length
  }
  // A short rp_filter: IPv4's policy has it, IPv6's not.
  Bytes rp = netconf_req(AF_INET6, 0, cat({ifindex_attr(1), attr(NETCONFA_RP_FILTER, le16(1))}));
  EXPECT_TRUE(wire::decode_netconf_get(one(rp), AF_INET6, false));
  EXPECT_EQ(wire::decode_netconf_get(one(rp), AF_INET, false).error().code, ERANGE);
  // Other attributes: ignored unless strict.
  Bytes fw = netconf_req(AF_INET6, 0, cat({ifindex_attr(1), attr(NETCONFA_FORWARDING, le32(1))}));
  EXPECT_TRUE(wire::decode_netconf_get(one(fw), AF_INET6, false));
  auto e = wire::decode_netconf_get(one(fw), AF_INET6, true);
  EXPECT_EQ(e.error().code, EINVAL);
  EXPECT_EQ(e.error().message, "ipv6: Unsupported attribute in netconf get request");
  EXPECT_EQ(e.error().attr_offset, -1);
  // Types above Linux 6.18's NETCONFA_MAX (9), and 0: unknown when strict, at the attribute.
  for (std::uint16_t t : {std::uint16_t{0}, std::uint16_t{10}}) {
    Bytes u = netconf_req(AF_INET, 0, cat({ifindex_attr(1), attr(t, le32(1))}));
    EXPECT_TRUE(wire::decode_netconf_get(one(u), AF_INET, false)) << t;
    e = wire::decode_netconf_get(one(u), AF_INET, true);
    EXPECT_EQ(e.error().message, "Unknown attribute type") << t;
    EXPECT_EQ(e.error().attr_offset, 28) << t;
  }
  e = wire::decode_netconf_get(one(netconf_req(AF_INET, 0, attr(9, le32(1)))), AF_INET, true);
  EXPECT_EQ(e.error().message, "ipv4: Unsupported attribute in netconf get request");
  // Trailing bytes: refused when strict only.
  Bytes tail = netconf_req(AF_INET, 0, cat({ifindex_attr(1), {1, 2}}));
  EXPECT_TRUE(wire::decode_netconf_get(one(tail), AF_INET, false));
  e = wire::decode_netconf_get(one(tail), AF_INET, true);
  EXPECT_EQ(e.error().message, "bytes leftover after parsing attributes");
  // A bare family byte: no attributes at all.
  m = wire::decode_netconf_get(one(nlmsg(RTM_GETNETCONF, NLM_F_REQUEST, 1, 0, {AF_INET})), AF_INET,
                               true);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->ifindex);
}

TEST(NetconfWire, DumpRequestChecks) {
  EXPECT_TRUE(wire::check_netconf_dump(one(netconf_req(AF_INET, NLM_F_DUMP)), AF_INET));
  for (const Bytes& body : {Bytes{AF_INET}, Bytes{AF_INET, 0, 0, 0, 5, 0, 0, 0}}) {
    auto e = wire::check_netconf_dump(
        one(nlmsg(RTM_GETNETCONF, NLM_F_REQUEST | NLM_F_DUMP, 1, 0, body)), AF_INET6);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message, "ipv6: Invalid data after header in netconf dump request");
  }
}

// ---- get and dump

class Netconf : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
  }
  // The messages of a reply, NLMSG_DONE / NLMSG_ERROR excluded.
  static std::vector<wire::NetconfMessage> data(const Replies& r) {
    std::vector<wire::NetconfMessage> out;
    for (const auto& m : r.msgs)
      if (m.hdr.nlmsg_type == RTM_NEWNETCONF) {
        auto n = wire::decode_netconf(m);
        EXPECT_TRUE(n);
        if (n) out.push_back(*n);
      }
    return out;
  }
  Result<std::string> sysctl(const std::string& name, const std::string& value) {
    wire::MessageBuilder b;
    EXPECT_TRUE(encode_sysctl_request(b, 5, SysctlRequest{name, value}, NLM_F_ACK));
    auto r = send(b.take());
    if (r.msgs.empty()) return fail(EIO);
    if (r.msgs[0].hdr.nlmsg_type == NLMSG_ERROR) return fail(r.last_error());
    return decode_sysctl_reply(r.msgs[0]).map([](const SysctlReply& x) { return x.value; });
  }
  int ifindex(const std::string& name) { return find(name)->ifindex(); }
};

TEST_F(Netconf, GetOneScope) {
  Replies r = send(netconf_req(AF_INET, NLM_F_ACK, ifindex_attr(1)));
  ASSERT_EQ(r.msgs.size(), 2u);  // the reply, then the ACK
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, RTM_NEWNETCONF);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_flags, 0);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_seq, 3u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_pid, 4242u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_len, 76u);
  EXPECT_EQ(r.last_error(), 0);
  auto v4 = data(r);
  EXPECT_EQ(v4[0].family, AF_INET);
  EXPECT_EQ(v4[0].ifindex, 1);
  EXPECT_EQ(v4[0].forwarding, 0);
  EXPECT_EQ(v4[0].rp_filter, 0);
  EXPECT_EQ(v4[0].mc_forwarding, 0);
  EXPECT_EQ(v4[0].bc_forwarding, 0);
  EXPECT_EQ(v4[0].proxy_neigh, 0);
  EXPECT_EQ(v4[0].ignore_routes_with_linkdown, 0);
  // IPv6: forwarding, proxy_neigh and ignore_routes_with_linkdown only (52 bytes).
  for (int scope : {NETCONFA_IFINDEX_ALL, NETCONFA_IFINDEX_DEFAULT, 1}) {
    r = send(netconf_req(AF_INET6, 0, ifindex_attr(scope)));
    ASSERT_EQ(r.msgs.size(), 1u) << scope;
    EXPECT_EQ(r.msgs[0].hdr.nlmsg_len, 52u);
    auto v6 = data(r);
    EXPECT_EQ(v6[0].ifindex, scope);
    EXPECT_TRUE(v6[0].forwarding && v6[0].proxy_neigh && v6[0].ignore_routes_with_linkdown);
    EXPECT_FALSE(v6[0].rp_filter || v6[0].mc_forwarding || v6[0].bc_forwarding);
  }
}

TEST_F(Netconf, GetErrorsAsLinux) {
  // No NETCONFA_IFINDEX: EINVAL without a message.
  Replies r = send(netconf_req(AF_INET, NLM_F_ACK));
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "");
  // An unknown device: IPv4 says ENODEV, IPv6 EINVAL (inet6_netconf_get_devconf).
  for (int idx : {0, 99, -3}) {
    EXPECT_EQ(send(netconf_req(AF_INET, 0, ifindex_attr(idx))).last_error(), ENODEV) << idx;
    EXPECT_EQ(send(netconf_req(AF_INET6, 0, ifindex_attr(idx))).last_error(), EINVAL) << idx;
  }
  // No family, or one without netconf: no get handler.
  EXPECT_EQ(send(netconf_req(AF_UNSPEC, 0, ifindex_attr(1))).last_error(), EOPNOTSUPP);
  EXPECT_EQ(send(netconf_req(AF_MPLS, 0, ifindex_attr(1))).last_error(), EOPNOTSUPP);
  // Policy failures carry the offset.
  r = send(netconf_req(AF_INET, 0, attr(NETCONFA_IFINDEX, le16(1))));
  EXPECT_EQ(r.last_error(), ERANGE);
  EXPECT_EQ(r.last_error_reply().message, "Attribute failed policy validation");
  EXPECT_EQ(r.last_error_reply().attr_offset, 20);
  // Strict requests refuse other attributes.
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  r = send(netconf_req(AF_INET, 0, cat({ifindex_attr(1), attr(NETCONFA_FORWARDING, le32(1))})));
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "ipv4: Unsupported attribute in netconf get request");
  // Not strict, bytes after the last attribute are a warning in the ACK (flags
  // NLM_F_CAPPED | NLM_F_ACK_TLVS, as Linux).
  session->set_option(NETLINK_GET_STRICT_CHK, 0);
  r = send(netconf_req(AF_INET, NLM_F_ACK, cat({ifindex_attr(1), {1, 2}})));
  ASSERT_EQ(r.msgs.size(), 2u);
  EXPECT_EQ(r.last_error(), 0);
  EXPECT_EQ(r.msgs[1].hdr.nlmsg_flags, NLM_F_CAPPED | NLM_F_ACK_TLVS);
  EXPECT_EQ(r.last_error_reply().message, "bytes leftover after parsing attributes");
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  r = send(netconf_req(AF_INET, NLM_F_ACK, cat({ifindex_attr(1), {1, 2}})));
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "bytes leftover after parsing attributes");
  // A device without IPv6 (mtu below 1280) has no IPv6 netconf.
  ASSERT_EQ(create("d0"), 0);
  LinkRequest mtu = named("d0");
  mtu.mtu = 1200;
  ASSERT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 2, mtu)).last_error(), 0);
  EXPECT_EQ(send(netconf_req(AF_INET6, 0, ifindex_attr(ifindex("d0")))).last_error(), EINVAL);
  EXPECT_EQ(data(send(netconf_req(AF_INET, 0, ifindex_attr(ifindex("d0"))))).size(), 1u);
}

TEST_F(Netconf, DumpsDevicesThenAllThenDefault) {
  ASSERT_EQ(create("d0"), 0);
  ASSERT_EQ(create("d1"), 0);
  const std::vector<std::int32_t> order{1, ifindex("d0"), ifindex("d1"), NETCONFA_IFINDEX_ALL,
                                        NETCONFA_IFINDEX_DEFAULT};
  for (int family : {AF_INET, AF_INET6}) {
    Replies r = send(netconf_req(family, NLM_F_DUMP));
    auto msgs = data(r);
    std::vector<std::int32_t> got;
    for (const auto& m : msgs) {
      EXPECT_EQ(m.family, family);
      got.push_back(*m.ifindex);
    }
    EXPECT_EQ(got, order) << family;
    EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
    EXPECT_EQ(r.dgs.size(), 1u);  // a family's own dump ends in its last datagram
    for (const auto& m : r.msgs) EXPECT_EQ(m.hdr.nlmsg_flags, NLM_F_MULTI);
  }
  // No family (and one without netconf, which falls back to it): IPv4, then IPv6, and
  // NLMSG_DONE alone in a datagram (rtnl_dump_all).
  for (std::uint8_t family : {std::uint8_t{AF_UNSPEC}, std::uint8_t{AF_PACKET}}) {
    Replies r = send(netconf_req(family, NLM_F_DUMP));
    auto msgs = data(r);
    ASSERT_EQ(msgs.size(), 10u);
    EXPECT_EQ(msgs[0].family, AF_INET);
    EXPECT_EQ(msgs[4].ifindex, NETCONFA_IFINDEX_DEFAULT);
    EXPECT_EQ(msgs[5].family, AF_INET6);
    EXPECT_EQ(msgs[5].ifindex, 1);
    ASSERT_EQ(r.dgs.size(), 2u);
    EXPECT_EQ(r.dgs[1].size(), 20u);  // NLMSG_DONE
  }
}

TEST_F(Netconf, StrictDumpWithDataEndsInDoneWithTheError) {
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  for (std::uint8_t family :
       {std::uint8_t{AF_INET}, std::uint8_t{AF_INET6}, std::uint8_t{AF_UNSPEC}}) {
    Replies r = send(netconf_req(family, NLM_F_DUMP, le32(5)));
    ASSERT_EQ(r.msgs.size(), 1u);
    const auto& m = r.msgs[0];
    EXPECT_EQ(m.hdr.nlmsg_type, NLMSG_DONE);
    EXPECT_EQ(m.hdr.nlmsg_flags, NLM_F_MULTI | NLM_F_ACK_TLVS);
    EXPECT_EQ(wire::decode_done(m), EINVAL);
    // Linux's bytes: the error, then NLMSGERR_ATTR_MSG (80 bytes in all).
    std::string text = std::string(family == AF_INET6 ? "ipv6" : "ipv4") +
                       ": Invalid data after header in netconf dump request";
    EXPECT_EQ(to_bytes(m.bytes), nlmsg(NLMSG_DONE, NLM_F_MULTI | NLM_F_ACK_TLVS, 3, 4242,
                                       cat({le32(static_cast<std::uint32_t>(-EINVAL)),
                                            attr(NLMSGERR_ATTR_MSG, cstr(text))})));
  }
  // What ip sends (a padded netconfmsg) passes.
  EXPECT_EQ(data(send(netconf_req(AF_UNSPEC, NLM_F_DUMP))).size(), 6u);
}

// ---- notifications

struct Heard {
  std::uint16_t type;
  int family;
  std::int32_t ifindex;
  wire::NetconfMessage n;
};

std::vector<Heard> drain(Session& s) {
  std::vector<Heard> out;
  Datagram d;
  while (s.pop_notification(d)) {
    auto msgs = wire::split_messages(d);
    EXPECT_TRUE(msgs);
    for (const auto& m : *msgs) {
      if (m.hdr.nlmsg_type == RTM_NEWNETCONF || m.hdr.nlmsg_type == RTM_DELNETCONF) {
        EXPECT_EQ(m.hdr.nlmsg_seq, 0u);
        EXPECT_EQ(m.hdr.nlmsg_pid, 0u);
        auto n = wire::decode_netconf(m);
        EXPECT_TRUE(n);
        out.push_back({m.hdr.nlmsg_type, n->family, n->ifindex.value_or(0), *n});
      } else {
        auto l = wire::decode_link_message(m);
        out.push_back({m.hdr.nlmsg_type, 0, l ? static_cast<std::int32_t>(l->ifindex) : 0, {}});
      }
    }
  }
  return out;
}

std::vector<std::tuple<std::uint16_t, int, std::int32_t>> shape(const std::vector<Heard>& h) {
  std::vector<std::tuple<std::uint16_t, int, std::int32_t>> out;
  for (const auto& x : h) out.emplace_back(x.type, x.family, x.ifindex);
  return out;
}

// Linux: the device's protocol state is announced as it registers (devinet_sysctl_register,
// ipv6_add_dev), before RTM_NEWLINK; and withdrawn (RTM_DELNETCONF with the ifindex alone)
// as it unregisters, before RTM_DELLINK.
TEST_F(Netconf, RegisterAndUnregisterAreAnnounced) {
  auto mon = open();
  for (unsigned g : {RTNLGRP_LINK, RTNLGRP_IPV4_NETCONF, RTNLGRP_IPV6_NETCONF})
    mon->add_membership(g);
  // The requester hears the broadcast too, even asking for an echo (rtnl_notify without
  // the request's header).
  session->add_membership(RTNLGRP_IPV4_NETCONF);
  ASSERT_EQ(create("d0", NLM_F_ECHO), 0);
  const int d0 = ifindex("d0");
  auto heard = drain(*mon);
  using T = std::tuple<std::uint16_t, int, std::int32_t>;
  EXPECT_EQ(shape(heard), (std::vector<T>{{RTM_NEWNETCONF, AF_INET, d0},
                                          {RTM_NEWNETCONF, AF_INET6, d0},
                                          {RTM_NEWLINK, 0, d0}}));
  EXPECT_EQ(heard[0].n.rp_filter, 0);  // a full report
  EXPECT_EQ(heard[1].n.proxy_neigh, 0);
  EXPECT_EQ(shape(drain(*session)), (std::vector<T>{{RTM_NEWNETCONF, AF_INET, d0}}));

  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 3, named("d0"))).last_error(), 0);
  heard = drain(*mon);
  EXPECT_EQ(shape(heard), (std::vector<T>{{RTM_DELNETCONF, AF_INET, d0},
                                          {RTM_DELNETCONF, AF_INET6, d0},
                                          {RTM_DELLINK, 0, d0}}));
  EXPECT_FALSE(heard[0].n.forwarding);  // the ifindex alone
  EXPECT_FALSE(heard[1].n.forwarding);

  // A veth pair: the peer registers and is configured (announced) before the named end
  // registers (veth_newlink), so each end in turn; both in one batch on delete.
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 4, veth_pair("v0", "v1"))).last_error(), 0);
  const int v0 = ifindex("v0"), v1 = ifindex("v1");
  heard = drain(*mon);
  EXPECT_EQ(shape(heard), (std::vector<T>{{RTM_NEWNETCONF, AF_INET, v1},
                                          {RTM_NEWNETCONF, AF_INET6, v1},
                                          {RTM_NEWLINK, 0, v1},
                                          {RTM_NEWNETCONF, AF_INET, v0},
                                          {RTM_NEWNETCONF, AF_INET6, v0},
                                          {RTM_NEWLINK, 0, v0}}));
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 5, named("v0"))).last_error(), 0);
  heard = drain(*mon);
  ASSERT_EQ(heard.size(), 6u);
  EXPECT_EQ(std::get<0>(shape(heard)[2]), RTM_DELLINK);
  EXPECT_EQ(std::get<0>(shape(heard)[5]), RTM_DELLINK);
}

// Linux (addrconf_notify, NETDEV_CHANGEMTU): below 1280 bytes the device's inet6_dev goes
// (RTM_DELNETCONF), back above it a fresh one comes (RTM_NEWNETCONF), each after the
// device's own RTM_NEWLINK.
TEST_F(Netconf, MtuBelowIpv6MinimumWithdrawsIpv6) {
  ASSERT_EQ(create("d0"), 0);
  const int d0 = ifindex("d0");
  auto mon = open();
  for (unsigned g : {RTNLGRP_LINK, RTNLGRP_IPV4_NETCONF, RTNLGRP_IPV6_NETCONF})
    mon->add_membership(g);
  using T = std::tuple<std::uint16_t, int, std::int32_t>;
  for (auto [mtu, want] : {std::pair{1200u, RTM_DELNETCONF}, std::pair{1500u, RTM_NEWNETCONF}}) {
    LinkRequest req = named("d0");
    req.mtu = mtu;
    ASSERT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 2, req)).last_error(), 0);
    EXPECT_EQ(shape(drain(*mon)),
              (std::vector<T>{{RTM_NEWLINK, 0, d0}, {std::uint16_t(want), AF_INET6, d0}}))
        << mtu;
  }
}

TEST_F(Netconf, SettingChangesAreAnnouncedAsLinux) {
  ASSERT_EQ(create("d0"), 0);
  const int d0 = ifindex("d0");
  auto mon = open();
  mon->add_membership(RTNLGRP_IPV4_NETCONF);
  mon->add_membership(RTNLGRP_IPV6_NETCONF);
  using T = std::tuple<std::uint16_t, int, std::int32_t>;
  const std::uint16_t N = RTM_NEWNETCONF;
  // IPv4 all.forwarding: "all", the default, every device (devinet_sysctl_forward), each
  // with forwarding alone; the value as written.
  ASSERT_EQ(sysctl("net.ipv4.conf.all.forwarding", "2"), "2");
  auto heard = drain(*mon);
  EXPECT_EQ(
      shape(heard),
      (std::vector<T>{{N, AF_INET, -1}, {N, AF_INET, -2}, {N, AF_INET, 1}, {N, AF_INET, d0}}));
  for (const auto& h : heard) {
    EXPECT_EQ(h.n.forwarding, 2);
    EXPECT_FALSE(h.n.rp_filter);
  }
  // The same value again: nothing.
  ASSERT_TRUE(sysctl("net.ipv4.conf.all.forwarding", "2"));
  EXPECT_TRUE(drain(*mon).empty());
  // rp_filter, proxy_arp (as proxy_neigh), ignore_routes_with_linkdown of one scope.
  ASSERT_TRUE(sysctl("net.ipv4.conf.d0.rp_filter", "2"));
  ASSERT_TRUE(sysctl("net.ipv4.conf.all.proxy_arp", "1"));
  ASSERT_TRUE(sysctl("net.ipv4.conf.default.ignore_routes_with_linkdown", "1"));
  ASSERT_TRUE(sysctl("net.ipv4.conf.d0.bc_forwarding", "1"));  // never announced
  heard = drain(*mon);
  EXPECT_EQ(shape(heard), (std::vector<T>{{N, AF_INET, d0}, {N, AF_INET, -1}, {N, AF_INET, -2}}));
  EXPECT_EQ(heard[0].n.rp_filter, 2);
  EXPECT_EQ(heard[1].n.proxy_neigh, 1);
  EXPECT_EQ(heard[2].n.ignore_routes_with_linkdown, 1);
  // The IPv4 default went to the devices that never wrote their own, silently
  // (devinet_copy_dflt_conf); d0 wrote rp_filter, so it keeps its value.
  auto ctl_conf = [&](int scope) {
    auto ctl = engine->control();
    return *inet::inet4_conf(ctl, *ctl.find_namespace("default"), scope);
  };
  ASSERT_TRUE(sysctl("net.ipv4.conf.default.rp_filter", "1"));
  EXPECT_EQ(shape(drain(*mon)), (std::vector<T>{{N, AF_INET, -2}}));
  EXPECT_EQ(ctl_conf(1).rp_filter, 1);
  EXPECT_EQ(ctl_conf(d0).rp_filter, 2);
  EXPECT_EQ(ctl_conf(d0).ignore_routes_with_linkdown, 1);
  // A device that wrote the default's own value keeps it as its own too: the next default
  // does not reach it (the state bit is set on every write).
  ASSERT_TRUE(sysctl("net.ipv4.conf.d0.proxy_arp", "0"));
  ASSERT_TRUE(sysctl("net.ipv4.conf.default.proxy_arp", "1"));
  EXPECT_EQ(ctl_conf(d0).proxy_arp, 0);
  EXPECT_EQ(ctl_conf(1).proxy_arp, 1);
  EXPECT_EQ(shape(drain(*mon)), (std::vector<T>{{N, AF_INET, -2}}));
  // mc_forwarding is read-only (EACCES, nothing changes).
  EXPECT_EQ(sysctl("net.ipv4.conf.all.mc_forwarding", "1").error().code, EACCES);

  // IPv6 all.forwarding: the default if it turned on, each device that did, then "all"
  // (addrconf_fixup_forwarding).
  ASSERT_TRUE(sysctl("net.ipv6.conf.d0.forwarding", "1"));
  EXPECT_EQ(shape(drain(*mon)), (std::vector<T>{{N, AF_INET6, d0}}));
  ASSERT_TRUE(sysctl("net.ipv6.conf.all.forwarding", "2"));
  heard = drain(*mon);
  EXPECT_EQ(shape(heard), (std::vector<T>{{N, AF_INET6, -2}, {N, AF_INET6, 1}, {N, AF_INET6, -1}}));
  EXPECT_EQ(heard[0].n.forwarding, 2);
  // A device's forwarding from 2 to 1 stays on: not announced; proxy_ndp is on any change.
  ASSERT_TRUE(sysctl("net.ipv6.conf.d0.forwarding", "1"));
  ASSERT_TRUE(sysctl("net.ipv6.conf.d0.proxy_ndp", "1"));
  ASSERT_TRUE(sysctl("net.ipv6.conf.d0.proxy_ndp", "2"));
  heard = drain(*mon);
  EXPECT_EQ(shape(heard), (std::vector<T>{{N, AF_INET6, d0}, {N, AF_INET6, d0}}));
  EXPECT_EQ(heard[1].n.proxy_neigh, 2);
  // all.ignore_routes_with_linkdown: copied to the default silently, the devices and "all"
  // announced (addrconf_fixup_linkdown).
  ASSERT_TRUE(sysctl("net.ipv6.conf.all.ignore_routes_with_linkdown", "1"));
  EXPECT_EQ(shape(drain(*mon)),
            (std::vector<T>{{N, AF_INET6, 1}, {N, AF_INET6, d0}, {N, AF_INET6, -1}}));
  {
    auto ctl = engine->control();
    EXPECT_EQ(inet::inet6_conf(ctl, *ctl.find_namespace("default"), inet::kConfDefault)
                  ->ignore_routes_with_linkdown,
              1);
  }
  // force_forwarding (Linux 6.17+): the ifindex alone; of "all": "all" first, then each
  // device that changed, the default untouched; 0 or 1 only.
  ASSERT_TRUE(sysctl("net.ipv6.conf.d0.force_forwarding", "1"));
  ASSERT_TRUE(sysctl("net.ipv6.conf.d0.force_forwarding", "1"));
  heard = drain(*mon);
  EXPECT_EQ(shape(heard), (std::vector<T>{{N, AF_INET6, d0}}));
  EXPECT_FALSE(heard[0].n.forwarding || heard[0].n.proxy_neigh);
  ASSERT_TRUE(sysctl("net.ipv6.conf.all.force_forwarding", "1"));
  EXPECT_EQ(shape(drain(*mon)), (std::vector<T>{{N, AF_INET6, -1}, {N, AF_INET6, 1}}));
  ASSERT_TRUE(sysctl("net.ipv6.conf.default.force_forwarding", "1"));
  ASSERT_TRUE(sysctl("net.ipv6.conf.all.force_forwarding", "0"));
  EXPECT_EQ(
      shape(drain(*mon)),
      (std::vector<T>{{N, AF_INET6, -2}, {N, AF_INET6, -1}, {N, AF_INET6, 1}, {N, AF_INET6, d0}}));
  EXPECT_EQ(sysctl("net.ipv6.conf.d0.force_forwarding", "2").error().code, EINVAL);
  ASSERT_EQ(create("d1"), 0);         // a new device takes the default's
  EXPECT_EQ(drain(*mon).size(), 2u);  // its registration, both families
  ASSERT_EQ(sysctl("net.ipv6.conf.d1.force_forwarding", "1"), "1");
  EXPECT_TRUE(drain(*mon).empty());  // it had 1 already
}

}  // namespace
}  // namespace ifcore::rtnl::test
