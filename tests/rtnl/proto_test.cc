// tests/rtnl/proto_test.cc — addresses and routes through a Session: RTM_NEWADDR,
// RTM_GETADDR dumps, RTM_NEWROUTE / RTM_DELROUTE / RTM_GETROUTE, and their notifications.
#include <netinet/in.h>

#include <linux/if_addr.h>

#include <fmt/format.h>

#include "rtnl/fixture.h"
#include "rtnl/wire/address.h"
#include "rtnl/wire/route.h"

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

Bytes addr_msg(std::uint16_t type, std::uint16_t flags, const wire::AddrMessage& a) {
  wire::MessageBuilder b;
  EXPECT_TRUE(
      wire::encode_addr(b, {type, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), 1, 0}, a));
  return b.take();
}
Bytes route_msg(std::uint16_t type, std::uint16_t flags, const wire::RouteMessage& r) {
  wire::MessageBuilder b;
  EXPECT_TRUE(
      wire::encode_route(b, {type, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), 1, 0}, r));
  return b.take();
}

class ProtoRtnlTest : public RtnlTest {
 protected:
  int up_dummy(const std::string& name) {
    LinkRequest req = named(name, "dummy");
    req.flags = IFF_UP;
    req.change = IFF_UP;
    EXPECT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, req)).last_error(), 0);
    return find(name)->ifindex();
  }
  wire::AddrMessage v4(int ifindex, const char* ip, std::uint8_t len) {
    wire::AddrMessage a;
    a.family = AF_INET;
    a.prefixlen = len;
    a.ifindex = static_cast<std::uint32_t>(ifindex);
    a.local = *IpAddr::parse(ip);
    a.address = a.local;
    return a;
  }
};

TEST_F(ProtoRtnlTest, AddressAddDumpNotifyDelete) {
  int idx = up_dummy("d0");
  auto mon = open();
  mon->add_membership(RTNLGRP_IPV4_IFADDR);
  mon->add_membership(RTNLGRP_IPV4_ROUTE);
  EXPECT_EQ(
      send(addr_msg(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, v4(idx, "10.0.0.1", 24)))
          .last_error(),
      0);
  EXPECT_EQ(
      send(addr_msg(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, v4(idx, "10.0.0.1", 24)))
          .last_error(),
      EEXIST);
  EXPECT_GE(mon->pending_notifications(), 2u);  // RTM_NEWADDR, then the routes
  Datagram d;
  ASSERT_TRUE(mon->pop_notification(d));
  auto first = wire::decode_addr(one(d));
  ASSERT_TRUE(first);
  EXPECT_EQ(one(d).hdr.nlmsg_type, RTM_NEWADDR);
  EXPECT_EQ(first->local->to_string(), "10.0.0.1");

  wire::AddrMessage dump;
  dump.family = AF_INET;
  Replies r = send(addr_msg(RTM_GETADDR, NLM_F_DUMP, dump));
  ASSERT_GE(r.msgs.size(), 2u);
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
  bool found = false;
  for (std::size_t i = 0; i + 1 < r.msgs.size(); ++i) {
    auto a = wire::decode_addr(r.msgs[i]);
    ASSERT_TRUE(a);
    EXPECT_EQ(r.msgs[i].hdr.nlmsg_flags, NLM_F_MULTI);
    if (a->ifindex == static_cast<std::uint32_t>(idx) && a->local &&
        a->local->to_string() == "10.0.0.1") {
      found = true;
      EXPECT_EQ(a->label, "d0");
      EXPECT_EQ(a->prefixlen, 24);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(send(addr_msg(RTM_DELADDR, NLM_F_ACK, v4(idx, "10.0.0.1", 24))).last_error(), 0);
  EXPECT_EQ(send(addr_msg(RTM_DELADDR, NLM_F_ACK, v4(idx, "10.0.0.1", 24))).last_error(),
            EADDRNOTAVAIL);
}

TEST_F(ProtoRtnlTest, RoutesAddDumpGetDelete) {
  int idx = up_dummy("d0");
  ASSERT_EQ(
      send(addr_msg(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, v4(idx, "10.0.0.1", 24)))
          .last_error(),
      0);
  wire::RouteMessage rt;
  rt.family = AF_INET;
  rt.table = RT_TABLE_MAIN;
  rt.protocol = RTPROT_BOOT;
  rt.type = RTN_UNICAST;
  rt.dst = *IpAddr::parse("192.168.5.0");
  rt.dst_len = 24;
  rt.gateway = *IpAddr::parse("10.0.0.254");
  EXPECT_EQ(send(route_msg(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, rt)).last_error(),
            0);
  EXPECT_EQ(send(route_msg(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, rt)).last_error(),
            EEXIST);

  wire::RouteMessage all;
  all.family = AF_INET;
  Replies r = send(route_msg(RTM_GETROUTE, NLM_F_DUMP, all));
  bool found = false;
  for (std::size_t i = 0; i + 1 < r.msgs.size(); ++i) {
    auto m = wire::decode_route(r.msgs[i]);
    ASSERT_TRUE(m);
    if (m->dst && m->dst->to_string() == "192.168.5.0") {
      found = true;
      EXPECT_EQ(m->gateway->to_string(), "10.0.0.254");
      EXPECT_EQ(m->oif, static_cast<std::uint32_t>(idx));
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);

  wire::RouteMessage get;
  get.family = AF_INET;
  get.dst = *IpAddr::parse("192.168.5.9");
  get.dst_len = 32;
  r = send(route_msg(RTM_GETROUTE, 0, get));
  ASSERT_EQ(r.msgs.size(), 1u);
  auto got = wire::decode_route(r.msgs[0]);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->gateway->to_string(), "10.0.0.254");

  // Linux: ip_route_output_key_hash_rcu refuses a source that is not a local address, and
  // the input path (RTA_IIF) a source of 0.0.0.0 (a martian): the errno alone.
  session->set_option(NETLINK_EXT_ACK, 1);
  wire::RouteMessage from = get;
  from.src = *IpAddr::parse("10.0.0.9");
  from.src_len = 32;
  r = send(route_msg(RTM_GETROUTE, 0, from));
  EXPECT_EQ(r.last_error(), ENETUNREACH);
  EXPECT_EQ(r.last_error_reply().message, "");
  // Linux: rt_fill_info reports an asked source as RTA_SRC and no RTA_PREFSRC (it is the
  // flow's source): `192.168.5.9 from 10.0.0.1 via 10.0.0.254 dev d0`, no `src`.
  wire::RouteMessage own = get;
  own.src = *IpAddr::parse("10.0.0.1");
  own.src_len = 32;
  r = send(route_msg(RTM_GETROUTE, 0, own));
  ASSERT_EQ(r.msgs.size(), 1u);
  auto mine = wire::decode_route(r.msgs[0]);
  ASSERT_TRUE(mine);
  ASSERT_TRUE(mine->src);
  EXPECT_EQ(mine->src->to_string(), "10.0.0.1");
  EXPECT_EQ(mine->src_len, 32);
  EXPECT_FALSE(mine->prefsrc);
  wire::RouteMessage iif = get;
  iif.iif = static_cast<std::uint32_t>(idx);
  r = send(route_msg(RTM_GETROUTE, 0, iif));
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "");

  rt.protocol = 0;
  rt.type = 0;
  EXPECT_EQ(send(route_msg(RTM_DELROUTE, NLM_F_ACK, rt)).last_error(), 0);
  EXPECT_EQ(send(route_msg(RTM_DELROUTE, NLM_F_ACK, rt)).last_error(), ESRCH);
}

// `ip link set DEV addrgenmode none`: IFLA_AF_SPEC / AF_INET6 / IFLA_INET6_ADDR_GEN_MODE
// (Linux: inet6_validate_link_af, inet6_set_link_af). The device shows the mode in
// IFLA_AF_SPEC (announced only while it is up: do_setlink's netdev_state_change), and gets
// no link-local address when it comes up; a mode Linux refuses changes nothing.
TEST_F(ProtoRtnlTest, AddrGenModeNoneMeansNoLinkLocalAndARefusedModeChangesNothing) {
  ASSERT_EQ(create("d0"), 0);
  int idx = find("d0")->ifindex();
  auto mon = open();
  mon->add_membership(RTNLGRP_LINK);
  auto set_mode = [&](std::uint8_t mode) {
    LinkRequest req;
    req.ifindex = idx;
    req.inet6_addr_gen_mode = mode;
    return send(link_msg(RTM_SETLINK, NLM_F_ACK, 1, req)).last_error();
  };
  auto shown_mode = [&]() -> std::optional<std::uint8_t> {
    wire::GetLinkRequest g;
    g.ifindex = idx;
    Replies r = send(getlink(1, g));
    auto m = wire::decode_link_message(r.msgs.at(0));
    EXPECT_TRUE(m);
    return m ? m->inet6_addr_gen_mode : std::nullopt;
  };
  auto link_locals = [&](int ifindex) {
    wire::AddrMessage dump;
    dump.family = AF_INET6;
    Replies r = send(addr_msg(RTM_GETADDR, NLM_F_DUMP, dump));
    int n = 0;
    for (const auto& m : r.msgs) {
      if (m.hdr.nlmsg_type != RTM_NEWADDR) continue;
      auto a = wire::decode_addr(m);
      if (a && a->ifindex == std::uint32_t(ifindex) && a->address && a->address->is_v6_link_local())
        ++n;
    }
    return n;
  };
  EXPECT_EQ(shown_mode(), IN6_ADDR_GEN_MODE_EUI64);
  EXPECT_EQ(set_mode(IN6_ADDR_GEN_MODE_NONE), 0);
  EXPECT_EQ(shown_mode(), IN6_ADDR_GEN_MODE_NONE);
  Datagram d;
  EXPECT_FALSE(mon->pop_notification(d));  // down: not announced
  // No stable secret (stable_privacy), and a mode Linux does not know: EINVAL, unchanged.
  EXPECT_EQ(set_mode(IN6_ADDR_GEN_MODE_STABLE_PRIVACY), EINVAL);
  EXPECT_EQ(set_mode(IN6_ADDR_GEN_MODE_RANDOM + 1), EINVAL);
  EXPECT_EQ(shown_mode(), IN6_ADDR_GEN_MODE_NONE);
  EXPECT_FALSE(mon->pop_notification(d));
  // Up: no link-local address on d0; an up device with the default mode has one.
  LinkRequest up;
  up.ifindex = idx;
  up.flags = IFF_UP;
  up.change = IFF_UP;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 1, up)).last_error(), 0);
  int other = up_dummy("d1");
  EXPECT_EQ(link_locals(idx), 0);
  EXPECT_EQ(link_locals(other), 1);
  // Up, the change is announced (the same mode too, as Linux's DO_SETLINK_NOTIFY).
  while (mon->pop_notification(d)) {
  }
  EXPECT_EQ(set_mode(IN6_ADDR_GEN_MODE_NONE), 0);
  ASSERT_TRUE(mon->pop_notification(d));
  EXPECT_EQ(one(d).hdr.nlmsg_type, RTM_NEWLINK);
  EXPECT_EQ(wire::decode_link_message(one(d))->inet6_addr_gen_mode, IN6_ADDR_GEN_MODE_NONE);
  EXPECT_FALSE(mon->pop_notification(d));
  // A new device with the attribute is refused and not made: EINVAL for a mode Linux does
  // not know, else EAFNOSUPPORT (a device has no IPv6 state before it is registered).
  LinkRequest bad = named("d2", "dummy");
  bad.inet6_addr_gen_mode = 9;
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, bad)).last_error(), EINVAL);
  bad.inet6_addr_gen_mode = IN6_ADDR_GEN_MODE_NONE;
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, bad)).last_error(), EAFNOSUPPORT);
  EXPECT_EQ(find("d2"), nullptr);
}

TEST_F(ProtoRtnlTest, ReadOnlySessionCannotAddAddresses) {
  int idx = up_dummy("d0");
  SessionOptions o;
  o.may_write = false;
  auto ro = open(o);
  EXPECT_EQ(roundtrip(*ro, addr_msg(RTM_NEWADDR, NLM_F_CREATE | NLM_F_ACK, v4(idx, "10.0.0.1", 24)))
                .last_error(),
            EPERM);
}

}  // namespace
}  // namespace ifcore::rtnl::test

namespace ifcore::rtnl::test {
namespace {

// Linux: ip_metrics_convert and rtnetlink_put_metrics: metrics are kept (clamped), dumped in
// type order with the algorithm by name, replaced with the route, and bad ones refused.
TEST_F(ProtoRtnlTest, RouteMetricsAreKeptReplacedAndChecked) {
  int idx = up_dummy("d0");
  wire::RouteMessage rt;
  rt.family = AF_INET;
  rt.table = RT_TABLE_MAIN;
  rt.protocol = RTPROT_BOOT;
  rt.scope = RT_SCOPE_LINK;
  rt.type = RTN_UNICAST;
  rt.dst = *IpAddr::parse("10.6.0.0");
  rt.dst_len = 16;
  rt.oif = static_cast<std::uint32_t>(idx);
  rt.metrics = {{RTAX_HOPLIMIT, 300, {}}, {RTAX_CC_ALGO, 0, "cubic"}, {RTAX_MTU, 1400, {}}};
  auto dump_metrics = [&] {
    wire::RouteMessage q;
    q.family = AF_INET;
    Replies r = send(route_msg(RTM_GETROUTE, NLM_F_DUMP, q));
    for (const auto& m : r.msgs) {
      auto d = wire::decode_route(m);
      if (d && d->dst && d->dst->to_string() == "10.6.0.0") return d->metrics;
    }
    return std::vector<wire::RouteMetric>{};
  };
  ASSERT_EQ(send(route_msg(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, rt)).last_error(),
            0);
  std::vector<wire::RouteMetric> want = {
      {RTAX_MTU, 1400, {}}, {RTAX_HOPLIMIT, 255, {}}, {RTAX_CC_ALGO, 0, "cubic"}};
  EXPECT_EQ(dump_metrics(), want);
  rt.metrics = {{RTAX_MTU, 1300, {}}};
  ASSERT_EQ(
      send(route_msg(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK, rt)).last_error(), 0);
  want = {{RTAX_MTU, 1300, {}}};
  EXPECT_EQ(dump_metrics(), want);
  rt.metrics = {{RTAX_CC_ALGO, 0, "nosuch"}};
  session->set_option(NETLINK_EXT_ACK, 1);
  Replies bad = send(route_msg(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK, rt));
  EXPECT_EQ(bad.last_error(), EINVAL);
  EXPECT_EQ(bad.last_error_reply().message, "Unknown tcp congestion algorithm");
  rt.metrics = {{RTAX_MAX + 1, 1, {}}};
  EXPECT_EQ(
      send(route_msg(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK, rt)).last_error(),
      EINVAL);
  EXPECT_EQ(dump_metrics(), want);  // refused requests changed nothing
}

// Linux: dev->qdisc is noop_qdisc until the first dev_activate attaches noqueue, which a
// close does not take away (`ip link set v0 down` still shows `qdisc noqueue`).
TEST_F(ProtoRtnlTest, QdiscIsNoopUntilTheFirstOpenAndNoqueueAfter) {
  auto qdisc = [&](const char* name) {
    wire::GetLinkRequest g;
    g.name = name;
    Replies r = send(getlink(1, g));
    auto lm = wire::decode_link_message(r.msgs.at(0));
    return lm && lm->qdisc ? *lm->qdisc : std::string("?");
  };
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, named("q0", "dummy"))).last_error(), 0);
  EXPECT_EQ(qdisc("q0"), "noop");
  up_dummy("q1");
  EXPECT_EQ(qdisc("q1"), "noqueue");
  LinkRequest down;
  down.name = "q1";
  down.change = IFF_UP;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 2, down)).last_error(), 0);
  EXPECT_EQ(qdisc("q1"), "noqueue");
}

// Linux 6.18 (RTNL_FLAG_DUMP_SPLIT_NLM_DONE): link dumps and IPv4 address dumps end with
// NLMSG_DONE alone in its datagram; an IPv6 address dump puts it behind the last message.
TEST_F(ProtoRtnlTest, DumpsEndWithNlmsgDoneWhereLinuxPutsIt) {
  int idx = up_dummy("d0");  // up: an IPv6 link-local address
  ASSERT_EQ(
      send(addr_msg(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, v4(idx, "10.0.0.1", 24)))
          .last_error(),
      0);
  wire::GetLinkRequest g;
  g.dump = true;
  Replies links = send(getlink(1, g));
  ASSERT_GE(links.dgs.size(), 2u);
  auto last = wire::split_messages(links.dgs.back());
  ASSERT_TRUE(last);
  ASSERT_EQ(last->size(), 1u);
  EXPECT_EQ((*last)[0].hdr.nlmsg_type, NLMSG_DONE);
  for (int family : {AF_INET, AF_INET6}) {
    wire::AddrMessage dump;
    dump.family = static_cast<std::uint8_t>(family);
    Replies r = send(addr_msg(RTM_GETADDR, NLM_F_DUMP, dump));
    auto tail = wire::split_messages(r.dgs.back());
    ASSERT_TRUE(tail);
    ASSERT_GE(r.msgs.size(), 2u) << family;  // an address, then NLMSG_DONE
    EXPECT_EQ(tail->back().hdr.nlmsg_type, NLMSG_DONE);
    EXPECT_EQ(tail->size() == 1, family == AF_INET) << family;
  }
}

}  // namespace
}  // namespace ifcore::rtnl::test

namespace ifcore::rtnl::test {
namespace {

// Linux: ip_valid_fib_dump_req and inet_dump_fib / inet6_dump_fib for a strict dump.
TEST_F(ProtoRtnlTest, AStrictRouteDumpFiltersAndRefusesWhatLinuxRefuses) {
  int d0 = up_dummy("d0");
  int d1 = up_dummy("d1");
  for (auto [idx, ip] : {std::pair{d0, "10.0.0.1"}, std::pair{d1, "10.1.0.1"}})
    ASSERT_EQ(send(addr_msg(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, v4(idx, ip, 24)))
                  .last_error(),
              0);
  wire::RouteMessage rt;
  rt.family = AF_INET;
  rt.table = RT_TABLE_UNSPEC;
  rt.table_id = 10;
  rt.protocol = RTPROT_STATIC;
  rt.type = RTN_UNICAST;
  rt.dst = *IpAddr::parse("192.168.5.0");
  rt.dst_len = 24;
  rt.gateway = *IpAddr::parse("10.0.0.254");
  ASSERT_EQ(send(route_msg(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_ACK, rt)).last_error(), 0);
  rt.dst = *IpAddr::parse("192.168.6.0");
  rt.gateway = *IpAddr::parse("10.1.0.254");
  rt.protocol = RTPROT_BOOT;
  ASSERT_EQ(send(route_msg(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_ACK, rt)).last_error(), 0);
  session->set_option(NETLINK_EXT_ACK, 1);
  session->set_option(NETLINK_GET_STRICT_CHK, 1);

  // The destinations a dump answers, checking each message's flags; "error N" for an error.
  auto dump = [&](const wire::RouteMessage& q, std::uint16_t want_flags) {
    std::vector<std::string> out;
    Replies r = send(route_msg(RTM_GETROUTE, NLM_F_DUMP, q));
    for (const auto& m : r.msgs) {
      if (m.hdr.nlmsg_type == NLMSG_DONE) {
        auto code = wire::decode_done(m);
        if (code && *code)
          out.push_back(fmt::format("error {} {}", *code, wire::decode_done_message(m)));
        continue;
      }
      if (m.hdr.nlmsg_type == NLMSG_ERROR) {
        auto e = wire::decode_error(m);
        out.push_back(fmt::format("error {} {}", e ? e->error : -1, e ? e->message : ""));
        continue;
      }
      EXPECT_EQ(m.hdr.nlmsg_flags, want_flags);
      auto x = wire::decode_route(m);
      if (x && x->dst) out.push_back(x->dst->to_string());
    }
    return out;
  };
  using V = std::vector<std::string>;
  const std::uint16_t filtered = NLM_F_MULTI | NLM_F_DUMP_FILTERED;

  wire::RouteMessage q;
  q.family = AF_INET;
  q.table_id = 10;
  EXPECT_EQ(dump(q, filtered), (V{"192.168.5.0", "192.168.6.0"}));
  q.oif = static_cast<std::uint32_t>(d1);
  EXPECT_EQ(dump(q, filtered), V{"192.168.6.0"});
  q.oif.reset();
  q.protocol = RTPROT_STATIC;
  EXPECT_EQ(dump(q, filtered), V{"192.168.5.0"});
  q.protocol = 0;
  q.type = RTN_BROADCAST;
  q.table_id = RT_TABLE_LOCAL;
  EXPECT_EQ(dump(q, filtered), (V{"10.0.0.255", "10.1.0.255"}));

  // A table never made: ENOENT for its own family, nothing from it for AF_UNSPEC; IPv6 has
  // main from the start.
  wire::RouteMessage none;
  none.family = AF_INET;
  none.table_id = 11;
  EXPECT_EQ(dump(none, filtered), V{"error 2 ipv4: FIB table does not exist"});
  none.family = AF_INET6;
  EXPECT_EQ(dump(none, filtered), V{"error 2 ipv6: FIB table does not exist"});
  none.family = AF_UNSPEC;
  EXPECT_EQ(dump(none, filtered), V{});
  none.family = AF_INET6;
  none.table_id = RT_TABLE_MAIN;
  EXPECT_EQ(dump(none, filtered), (V{"fe80::", "fe80::"}));  // d0's and d1's link-local prefix
  none.family = AF_UNSPEC;
  none.table_id = 10;
  EXPECT_EQ(dump(none, filtered), (V{"192.168.5.0", "192.168.6.0"}));

  // What the header and the attributes may hold (EINVAL with Linux's words); an unknown
  // device is ENODEV alone; the cache of exceptions (RTM_F_CLONED) is empty.
  wire::RouteMessage bad;
  bad.family = AF_INET;
  bad.dst_len = 24;
  EXPECT_EQ(dump(bad, filtered), V{"error 22 Invalid values in header for FIB dump request"});
  bad.dst_len = 0;
  bad.flags = RTM_F_NOTIFY;
  EXPECT_EQ(dump(bad, filtered), V{"error 22 Invalid flags for FIB dump request"});
  bad.flags = 0;
  bad.priority = 5;
  EXPECT_EQ(dump(bad, filtered), V{"error 22 Unsupported attribute in dump request"});
  bad.priority.reset();
  bad.oif = 999;
  EXPECT_EQ(dump(bad, filtered), V{"error 19 "});
  bad.oif.reset();
  bad.flags = RTM_F_CLONED;
  EXPECT_EQ(dump(bad, filtered), V{});
  // Without strict checking the header's values are not looked at, nor the table.
  session->set_option(NETLINK_GET_STRICT_CHK, 0);
  bad.flags = 0;
  bad.dst_len = 24;
  bad.table_id = 11;
  EXPECT_GE(dump(bad, NLM_F_MULTI).size(), 6u);
}

// Linux: rtm_getroute_parse_ip_proto — a lookup's RTA_IP_PROTO is TCP, UDP or the family's
// ICMP; another is EOPNOTSUPP "Unsupported ip proto".
TEST_F(ProtoRtnlTest, RouteGetTakesTcpUdpAndTheFamilysIcmpOnly) {
  session->set_option(NETLINK_EXT_ACK, 1);
  int idx = up_dummy("d0");
  ASSERT_EQ(
      send(addr_msg(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, v4(idx, "10.0.0.1", 24)))
          .last_error(),
      0);
  struct Case {
    int family;
    const char* dst;
    std::uint8_t proto;
    bool ok;
  };
  for (const Case& c :
       {Case{AF_INET, "10.0.0.5", IPPROTO_TCP, true}, Case{AF_INET, "10.0.0.5", IPPROTO_UDP, true},
        Case{AF_INET, "10.0.0.5", IPPROTO_ICMP, true},
        Case{AF_INET, "10.0.0.5", IPPROTO_ICMPV6, false},
        Case{AF_INET, "10.0.0.5", IPPROTO_SCTP, false}, Case{AF_INET, "10.0.0.5", 0, false},
        Case{AF_INET6, "::1", IPPROTO_ICMPV6, true}, Case{AF_INET6, "::1", IPPROTO_ICMP, false},
        Case{AF_INET6, "::1", IPPROTO_GRE, false}}) {
    wire::RouteMessage get;
    get.family = static_cast<std::uint8_t>(c.family);
    get.dst = *IpAddr::parse(c.dst);
    get.dst_len = c.family == AF_INET ? 32 : 128;
    get.ip_proto = c.proto;
    Replies r = send(route_msg(RTM_GETROUTE, 0, get));
    if (c.ok) {  // (IPv6: lo is down here, so the lookup itself may fail)
      EXPECT_NE(r.last_error(), EOPNOTSUPP) << c.dst << " " << int(c.proto);
      continue;
    }
    EXPECT_EQ(r.last_error(), EOPNOTSUPP) << c.dst << " " << int(c.proto);
    EXPECT_EQ(r.last_error_reply().message, "Unsupported ip proto");
  }
}

}  // namespace
}  // namespace ifcore::rtnl::test
