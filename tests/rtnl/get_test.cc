// tests/rtnl/get_test.cc — RTM_GETLINK (one device, dumps, filters, strict checks), the
// consistency of a dump taken while another thread churns devices, and namespace ids.
#include <linux/net_namespace.h>
#include <linux/netlink.h>

#include <atomic>
#include <set>
#include <thread>

#include "rtnl/fixture.h"

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

TEST_F(RtnlTest, GetlinkOneDeviceThenAck) {
  ASSERT_EQ(create("d0"), 0);
  wire::GetLinkRequest g;
  g.name = "d0";
  Replies r = send(getlink(12, g, NLM_F_ACK));
  ASSERT_EQ(r.dgs.size(), 2u);  // the reply, then the ACK in its own datagram
  ASSERT_EQ(r.msgs.size(), 2u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, RTM_NEWLINK);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_flags, 0);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_seq, 12u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_pid, 4242u);
  auto m = wire::decode_link_message(r.msgs[0]);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name, "d0");
  EXPECT_EQ(m->ifindex, find("d0")->ifindex());
  EXPECT_EQ(m->txqlen, 1000u);
  EXPECT_EQ(m->kind, "dummy");
  EXPECT_EQ(m->mtu, 1500u);
  EXPECT_EQ(m->change, 0u);
  EXPECT_TRUE(m->stats64);
  EXPECT_EQ(m->qdisc, "noop");
  EXPECT_EQ(r.last_error(), 0);
  // By index, without ACK: only the reply.
  g = {};
  g.ifindex = find("d0")->ifindex();
  r = send(getlink(13, g));
  ASSERT_EQ(r.msgs.size(), 1u);
  EXPECT_EQ(wire::decode_link_message(r.msgs[0])->name, "d0");
}

TEST_F(RtnlTest, GetlinkOfLoopbackHasNoLinkinfo) {
  wire::GetLinkRequest g;
  g.ifindex = 1;
  Replies r = send(getlink(1, g));
  ASSERT_EQ(r.msgs.size(), 1u);
  auto m = wire::decode_link_message(r.msgs[0]);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name, "lo");
  EXPECT_FALSE(m->kind);
}

TEST_F(RtnlTest, GetlinkSkipStats) {
  ASSERT_EQ(create("d0"), 0);
  wire::GetLinkRequest g;
  g.name = "d0";
  g.ext_mask = RTEXT_FILTER_SKIP_STATS;
  Replies r = send(getlink(1, g));
  auto m = wire::decode_link_message(r.msgs[0]);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->stats64);
  EXPECT_FALSE(m->stats);
}

TEST_F(RtnlTest, GetlinkErrors) {
  wire::GetLinkRequest g;
  g.name = "nosuch";
  EXPECT_EQ(send(getlink(1, g)).last_error(), ENODEV);
  g = {};
  g.ifindex = 999;
  EXPECT_EQ(send(getlink(2, g)).last_error(), ENODEV);
  EXPECT_EQ(send(getlink(3, wire::GetLinkRequest{})).last_error(), EINVAL);
}

TEST_F(RtnlTest, DumpIsMultipartInPagesEndingWithDone) {
  for (int i = 0; i < 40; ++i) ASSERT_EQ(create("d" + std::to_string(i)), 0);
  Replies r = send(getlink(7, dump_req(), NLM_F_ACK));
  EXPECT_GT(r.dgs.size(), 2u);
  for (const auto& d : r.dgs) EXPECT_LE(d.size(), 4096u);
  ASSERT_EQ(r.msgs.size(), 42u);  // lo, 40 dummies, DONE (no ACK after a dump)
  int last = 0;
  for (std::size_t i = 0; i + 1 < r.msgs.size(); ++i) {
    EXPECT_EQ(r.msgs[i].hdr.nlmsg_type, RTM_NEWLINK);
    EXPECT_EQ(r.msgs[i].hdr.nlmsg_flags, NLM_F_MULTI);
    EXPECT_EQ(r.msgs[i].hdr.nlmsg_seq, 7u);
    EXPECT_EQ(r.msgs[i].hdr.nlmsg_pid, 4242u);
    auto m = wire::decode_link_message(r.msgs[i]);
    ASSERT_TRUE(m);
    EXPECT_GT(m->ifindex, last);
    last = m->ifindex;
  }
  const auto& done = r.msgs.back();
  EXPECT_EQ(done.hdr.nlmsg_type, NLMSG_DONE);
  EXPECT_EQ(done.hdr.nlmsg_flags, NLM_F_MULTI);
  EXPECT_EQ(done.hdr.nlmsg_len, NLMSG_HDRLEN + 4);
  EXPECT_EQ(*wire::decode_done(done), 0);
}

TEST_F(RtnlTest, DumpWithRtgenmsgOnly) {
  Bytes req = nlmsg(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 3, 0, Bytes{AF_UNSPEC, 0, 0, 0});
  Replies r = send(req);
  ASSERT_EQ(r.msgs.size(), 2u);
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
}

TEST_F(RtnlTest, DumpFilteredByKindAndMaster) {
  ASSERT_EQ(create("d0"), 0);
  ASSERT_EQ(create("d1"), 0);
  auto g = dump_req();
  g.filter_kind = "dummy";
  Replies r = send(getlink(1, g));
  ASSERT_EQ(r.msgs.size(), 3u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_flags, NLM_F_MULTI | NLM_F_DUMP_FILTERED);
  // An unknown kind filters nothing (Linux: linkinfo_to_kind_ops finds no ops).
  g.filter_kind = "nosuchkind";
  r = send(getlink(2, g));
  ASSERT_EQ(r.msgs.size(), 4u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_flags, NLM_F_MULTI);
  // Master filter: nobody is a port of d0; -1 means "devices without a master".
  g = dump_req();
  g.filter_master = static_cast<std::uint32_t>(find("d0")->ifindex());
  EXPECT_EQ(send(getlink(3, g)).msgs.size(), 1u);
  g.filter_master = 0xffffffffu;
  EXPECT_EQ(send(getlink(4, g)).msgs.size(), 4u);
}

// Linux: rtnl_valid_dump_ifinfo_req runs in the dump: its refusal ends the dump, NLMSG_DONE
// carrying the errno and the message (no offset).
TEST_F(RtnlTest, StrictDumpChecks) {
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  session->set_option(NETLINK_EXT_ACK, 1);
  auto done = [](const Replies& r) {
    EXPECT_EQ(r.msgs.size(), 1u);
    EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
    return std::make_pair(wire::decode_done(r.msgs.back()).value_or(0),
                          wire::decode_done_message(r.msgs.back()));
  };
  Replies r = send(nlmsg(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 1, 0, ifinfo(0, 0, 1, 0, 0)));
  EXPECT_EQ(done(r), std::make_pair(EINVAL, std::string("Filter by device index not supported "
                                                        "for link dumps")));
  r = send(nlmsg(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 2, 0,
                 cat({ifinfo(0, 0, 0, 0, 0), attr(IFLA_MTU, le32(1))})));
  EXPECT_EQ(done(r),
            std::make_pair(EINVAL, std::string("Unsupported attribute in link dump request")));
  r = send(nlmsg(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 3, 0, ifinfo(0, 0, 0, 0, 0)));
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
}

TEST_F(RtnlTest, SmallDatagramSizeStillWholeMessages) {
  SessionOptions o;
  o.datagram_size = 256;
  auto s = open(o);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(create("d" + std::to_string(i)), 0);
  Replies r = roundtrip(*s, getlink(1, dump_req()));
  EXPECT_EQ(r.msgs.size(), 7u);
  EXPECT_GE(r.dgs.size(), 6u);  // each device message is bigger than 256 bytes: one per datagram
}

// A dump taken while another thread creates and deletes 1 000 devices is one snapshot.
TEST_F(RtnlTest, DumpIsConsistentWhileAnotherThreadChurns) {
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    SessionOptions o;
    auto s = open(o);
    for (int i = 0; i < 1000; ++i) {
      std::string name = "c" + std::to_string(i);
      roundtrip(*s, link_msg(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 1, named(name, "dummy")));
      if (i % 3 == 0) roundtrip(*s, link_msg(RTM_DELLINK, 0, 2, named(name)));
    }
    stop = true;
  });
  int dumps = 0;
  while (!stop || dumps < 3) {
    Replies r = send(getlink(static_cast<std::uint32_t>(100 + dumps), dump_req()));
    ++dumps;
    ASSERT_FALSE(r.msgs.empty());
    EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
    std::set<int> seen;
    int last = 0;
    for (std::size_t i = 0; i + 1 < r.msgs.size(); ++i) {
      ASSERT_EQ(r.msgs[i].hdr.nlmsg_type, RTM_NEWLINK);
      auto m = wire::decode_link_message(r.msgs[i]);
      ASSERT_TRUE(m) << m.error().message;
      EXPECT_GT(m->ifindex, last);
      last = m->ifindex;
      EXPECT_TRUE(seen.insert(m->ifindex).second);
    }
    for (const auto& d : r.dgs) {
      auto split = wire::split_messages(d);
      ASSERT_TRUE(split);
    }
  }
  churn.join();
  EXPECT_GE(dumps, 3);
  EXPECT_EQ(device_count(), 1u + 666u);
}

}  // namespace
}  // namespace ifcore::rtnl::test

namespace ifcore::rtnl::test {
namespace {

// Linux: inet_valid_dump_ifaddr_req / inet6_valid_dump_ifaddr_req, in the dump (checked on
// the kernel with the same raw requests): the refusal ends the dump; an ifindex filter
// marks the messages and the end NLM_F_DUMP_FILTERED.
TEST_F(RtnlTest, StrictAddressDumpChecks) {
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  session->set_option(NETLINK_EXT_ACK, 1);
  auto ifaddr = [](std::uint8_t family, std::uint8_t plen, std::uint8_t scope, int index) {
    Bytes b{family, plen, 0, scope};
    add(b, le32(static_cast<std::uint32_t>(index)));
    return b;
  };
  auto done = [&](const Bytes& body) {
    Replies r = send(nlmsg(RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, 1, 0, body));
    EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
    return std::make_pair(wire::decode_done(r.msgs.back()).value_or(0),
                          wire::decode_done_message(r.msgs.back()));
  };
  using P = std::pair<int, std::string>;
  EXPECT_EQ(done(ifaddr(AF_INET, 24, 0, 0)),
            P(EINVAL, "ipv4: Invalid values in header for address dump request"));
  EXPECT_EQ(done(ifaddr(AF_INET6, 0, 200, 0)),
            P(EINVAL, "ipv6: Invalid values in header for address dump request"));
  EXPECT_EQ(done(Bytes{AF_INET6, 0, 0, 0}),
            P(EINVAL, "ipv6: Invalid header for address dump request"));
  EXPECT_EQ(done(cat({ifaddr(AF_UNSPEC, 0, 0, 0), attr(IFA_LABEL, cstr("x"))})),
            P(EINVAL, "ipv4: Unsupported attribute in dump request"));
  Replies r = send(nlmsg(RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, 2, 0, ifaddr(AF_INET, 0, 0, 1)));
  ASSERT_FALSE(r.msgs.empty());
  for (const wire::Message& m : r.msgs) EXPECT_TRUE(m.hdr.nlmsg_flags & NLM_F_DUMP_FILTERED);
  EXPECT_EQ(wire::decode_done(r.msgs.back()).value_or(-1), 0);
}

}  // namespace
}  // namespace ifcore::rtnl::test
