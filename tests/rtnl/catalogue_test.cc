// tests/rtnl/catalogue_test.cc — the bad-input catalogue: requests Linux refuses, each sent
// to an engine holding a rich state (veth pairs, a bridge with a port, a macvlan, IPv4 and
// IPv6 addresses and routes, a neighbour, a rule, a nexthop, a second namespace), each
// answered with the errno and extack message Linux 6.18 gives, and each leaving every dump
// of every namespace byte for byte as it was.
//
// Every row was checked against Linux 6.18 with the same bytes, sent on a NETLINK_ROUTE
// socket with NETLINK_EXT_ACK (and NETLINK_GET_STRICT_CHK where the row says strict) in a
// fresh namespace holding the same state, made with these `ip` commands:
//
//   ip link add v0 type veth peer name v1        (v1 is 2, v0 is 3)
//   ip link add br0 type bridge                  (4)
//   ip link add v2 type veth peer name v3        (v3 is 5, v2 is 6)
//   ip link set v2 master br0
//   ip link add mv0 link v0 type macvlan mode bridge   (7)
//   ip link set v0 up; ip link set v1 up; ip link set br0 up; ip link set v2 up
//   ip addr add 10.0.0.1/24 dev v0
//   ip addr add 2001:db8::1/64 dev v0 nodad
//   ip route add 10.1.0.0/16 via 10.0.0.2
//   ip route add 2001:db8:1::/48 via 2001:db8::2
//   ip neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0 nud permanent
//   ip rule add from 10.9.0.0/16 table 100 pref 100
//   ip nexthop add id 1 via 10.0.0.3 dev v0
//   ip netns add B; ip netns set B <the id ifcore gives "b">; ip -n B link add x0 type bridge
//
// The kernel here has no dummy, vlan, ipip or gre; the state uses veth, bridge and macvlan,
// and a row about a missing kind says which kernel source it was read from instead.
// Not here yet, because ifcore still answers them otherwise: attribute lies inside lenient
// parses (Linux warns "bytes leftover after parsing attributes" and goes on), wrong-size
// addresses (Linux: ERANGE by policy, ifcore: EINVAL), attribute types above IFLA_MAX
// ("Unsupported attribute"), the strict header and attribute checks of address, route and
// nexthop dumps, unknown route and address families (EOPNOTSUPP), queue counts and gso
// limits, and the short headers of neighbour messages.
// IFCORE_CATALOGUE_EXPORT=FILE appends each row (name, strict, setup and request bytes in
// hex, errno, extack) to FILE, so the rows can be replayed against a kernel again.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "rtnl/catalogue.h"

namespace ifcore::rtnl::test {
namespace {

using namespace catalogue;

std::vector<Row> all_rows() {
  std::vector<Row> all;
  for (auto f : {framing_rows, type_rows, unknown_rows, name_index_rows, range_rows, loop_rows,
                 gone_rows, veth_peer_rows, netns_rows, via_rows}) {
    auto part = f();
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

std::string hex(const Bytes& b) {
  std::string s;
  char buf[3];
  for (std::uint8_t c : b) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    s += buf;
  }
  return s;
}

// One answer that carries an error: NLMSG_ERROR with a nonzero error, or NLMSG_DONE with a
// negative one, and its NLMSGERR_ATTR_MSG.
struct Refusal {
  int err = 0;
  std::string msg;
};

std::vector<Refusal> refusals(const Replies& r) {
  std::vector<Refusal> out;
  for (const auto& m : r.msgs) {
    auto p = m.payload();
    if (m.hdr.nlmsg_type != NLMSG_ERROR && m.hdr.nlmsg_type != NLMSG_DONE) continue;
    if (p.size() < 4) continue;
    std::int32_t e;
    std::memcpy(&e, p.data(), 4);
    if (e == 0) continue;
    std::size_t tlv = 4;
    if (m.hdr.nlmsg_type == NLMSG_ERROR) {
      std::uint32_t echoed = NLMSG_HDRLEN;
      if (!(m.hdr.nlmsg_flags & NLM_F_CAPPED) && p.size() >= 8)
        std::memcpy(&echoed, p.data() + 4, 4);
      tlv = 4 + NLMSG_ALIGN(echoed);
    }
    Refusal f{-e, {}};
    if (m.hdr.nlmsg_flags & NLM_F_ACK_TLVS) {
      while (tlv + NLA_HDRLEN <= p.size()) {
        nlattr a;
        std::memcpy(&a, p.data() + tlv, sizeof a);
        if (a.nla_len < NLA_HDRLEN || tlv + a.nla_len > p.size()) break;
        if (a.nla_type == NLMSGERR_ATTR_MSG) {
          const char* s = reinterpret_cast<const char*>(p.data() + tlv + NLA_HDRLEN);
          f.msg.assign(s, strnlen(s, a.nla_len - NLA_HDRLEN));
        }
        tlv += NLA_ALIGN(a.nla_len);
      }
    }
    out.push_back(f);
  }
  return out;
}

class BadRequest : public RtnlTest, public ::testing::WithParamInterface<Row> {
 protected:
  // The engine's clock stands still: dumps carry ages in hundredths of a second (address
  // and neighbour cache info), which a slow build (sanitizers) sees move between the dump
  // before a request and the one after.
  void configure(EngineConfig& cfg) override { cfg.time = std::make_shared<FakeTime>(); }
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
    {
      auto ctl = engine->control();
      auto b = ctl.create_namespace("b");
      ASSERT_TRUE(b);
      auto id = ctl.find_namespace("default")->assign_peer_id_locked(**b, -1);
      ASSERT_TRUE(id);
      ctx.nsid_b = *id;
    }
    SessionOptions o;
    o.ns = "b";
    session_b = open(o);
    ok(*session_b, create_kind("x0", "bridge"));
    ok(*session, veth_with_peer("v0", peer_of(peer_named("v1"))));
    ok(*session, create_kind("br0", "bridge"));
    ok(*session, veth_with_peer("v2", peer_of(peer_named("v3"))));
    resolve();
    ok(*session, Nl::of(RTM_NEWLINK, kAck, ifi(ctx.idx("v2")))
                     .u32(IFLA_MASTER, static_cast<std::uint32_t>(ctx.idx("br0")))
                     .done());
    ok(*session, Nl::of(RTM_NEWLINK, kNew, ifi())
                     .str(IFLA_IFNAME, "mv0")
                     .u32(IFLA_LINK, static_cast<std::uint32_t>(ctx.idx("v0")))
                     .begin(IFLA_LINKINFO)
                     .str(IFLA_INFO_KIND, "macvlan")
                     .begin(IFLA_INFO_DATA)
                     .u32(IFLA_MACVLAN_MODE, MACVLAN_MODE_BRIDGE)
                     .end()
                     .end()
                     .done());
    resolve();
    for (const char* d : {"v0", "v1", "br0", "v2"})
      ok(*session, Nl::of(RTM_NEWLINK, kAck, ifi(ctx.idx(d), IFF_UP, IFF_UP)).done());
    ok(*session, Nl::of(RTM_NEWADDR, kNew, ifa(AF_INET, 24, ctx.idx("v0")))
                     .in4(IFA_LOCAL, "10.0.0.1")
                     .in4(IFA_ADDRESS, "10.0.0.1")
                     .done());
    ok(*session, Nl::of(RTM_NEWADDR, kNew, ifa(AF_INET6, 64, ctx.idx("v0")))
                     .in6(IFA_ADDRESS, "2001:db8::1")
                     .u32(IFA_FLAGS, IFA_F_NODAD)
                     .done());
    ok(*session, Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16))
                     .in4(RTA_DST, "10.1.0.0")
                     .in4(RTA_GATEWAY, "10.0.0.2")
                     .done());
    ok(*session, Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET6, 48))
                     .in6(RTA_DST, "2001:db8:1::")
                     .in6(RTA_GATEWAY, "2001:db8::2")
                     .done());
    Bytes mac{2, 0, 0, 0, 0, 2};
    ok(*session, Nl::of(RTM_NEWNEIGH, kNew, ndm(AF_INET, ctx.idx("v0")))
                     .in4(NDA_DST, "10.0.0.2")
                     .bytes(NDA_LLADDR, mac)
                     .done());
    auto rule = frh(AF_INET);
    rule.src_len = 16;
    rule.table = 100;
    ok(*session,
       Nl::of(RTM_NEWRULE, kNew, rule).in4(FRA_SRC, "10.9.0.0").u32(FRA_PRIORITY, 100).done());
    ok(*session, Nl::of(RTM_NEWNEXTHOP, kNew, nhm(AF_INET))
                     .u32(NHA_ID, 1)
                     .in4(NHA_GATEWAY, "10.0.0.3")
                     .u32(NHA_OIF, static_cast<std::uint32_t>(ctx.idx("v0")))
                     .done());
    drain();
  }
  void TearDown() override {
    session_b.reset();
    RtnlTest::TearDown();
  }

  void ok(Session& s, const Bytes& req) {
    Replies r = roundtrip(s, req);
    auto f = refusals(r);
    ASSERT_TRUE(f.empty()) << "setup request refused: " << strerror(f[0].err) << " " << f[0].msg;
  }
  void resolve() {
    auto ctl = engine->control();
    for (Device* d : ctl.find_namespace("default")->devices_locked())
      ctx.index[d->name()] = d->ifindex();
  }
  void drain() {
    Datagram d;
    for (Session* s : {session.get(), session_b.get()})
      while (s->pop_notification(d)) {
      }
  }

  // Every dump of every namespace, concatenated.
  Bytes state() {
    Bytes all;
    auto dump = [&](Session& s, std::uint16_t type, const Bytes& fam) {
      Bytes req = Nl(type, NLM_F_DUMP, fam.data(), fam.size()).done();
      s.handle(req, [&](Datagram&& d) { all.insert(all.end(), d.begin(), d.end()); });
    };
    for (Session* s : {session.get(), session_b.get()}) {
      for (std::uint8_t f : {AF_UNSPEC, AF_BRIDGE}) {
        ifinfomsg m{};
        m.ifi_family = f;
        dump(*s, RTM_GETLINK,
             Bytes(reinterpret_cast<std::uint8_t*>(&m),
                   reinterpret_cast<std::uint8_t*>(&m) + sizeof m));
      }
      for (std::uint8_t f : {AF_INET, AF_INET6}) {
        dump(*s, RTM_GETADDR, Bytes{f, 0, 0, 0, 0, 0, 0, 0});
        dump(*s, RTM_GETROUTE, Bytes{f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
        dump(*s, RTM_GETRULE, Bytes{f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
        dump(*s, RTM_GETNETCONF, Bytes{f, 0, 0, 0});
      }
      for (std::uint8_t f : {AF_INET, AF_INET6, AF_BRIDGE})
        dump(*s, RTM_GETNEIGH, Bytes{f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
      dump(*s, RTM_GETNEXTHOP, Bytes{AF_UNSPEC, 0, 0, 0, 0, 0, 0, 0});
      dump(*s, RTM_GETNSID, Bytes{AF_UNSPEC, 0, 0, 0});
    }
    return all;
  }

  Ctx ctx;
  std::unique_ptr<Session> session_b;
};

TEST_P(BadRequest, RefusedAsLinuxAndChangesNothing) {
  const Row& row = GetParam();
  std::vector<Bytes> pre;
  if (row.setup) {
    pre = row.setup(ctx);
    for (const Bytes& b : pre) ok(*session, b);
    drain();
  }
  if (row.strict) session->set_option(NETLINK_GET_STRICT_CHK, 1);
  Bytes req = row.request(ctx);

  if (const char* path = std::getenv("IFCORE_CATALOGUE_EXPORT")) {
    if (FILE* f = std::fopen(path, "a")) {
      std::string setup;
      for (const Bytes& b : pre) setup += (setup.empty() ? "" : ",") + hex(b);
      std::fprintf(f, "%s\t%d\t%s\t%s\t%d\t%s\n", row.name.c_str(), row.strict ? 1 : 0,
                   setup.c_str(), hex(req).c_str(), row.err, row.extack.c_str());
      std::fclose(f);
    }
  }

  Bytes before = state();
  Replies r = send(req);
  auto f = refusals(r);
  ASSERT_FALSE(f.empty()) << "the request was accepted";
  EXPECT_EQ(f.back().err, row.err) << strerror(f.back().err) << " / want " << strerror(row.err);
  EXPECT_EQ(f.back().msg, row.extack);
  EXPECT_EQ(static_cast<int>(f.size()), row.errors);
  EXPECT_EQ(state(), before) << "a refused request changed the engine's state";
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadRequest, ::testing::ValuesIn(all_rows()),
                         [](const ::testing::TestParamInfo<Row>& i) { return i.param.name; });

TEST(CatalogueSize, AtLeast120Rows) {
  EXPECT_GE(all_rows().size(), 120u);
}

}  // namespace
}  // namespace ifcore::rtnl::test
