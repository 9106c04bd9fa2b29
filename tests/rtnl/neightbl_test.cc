// tests/rtnl/neightbl_test.cc — RTM_GETNEIGHTBL and RTM_SETNEIGHTBL (`ip ntable`): the
// dump's messages, bytes and order, its strict checks, the changes of a device's parameters,
// of the defaults and of the thresholds, the errors of bad requests and what a change does
// to the neighbour code, each as Linux 6.18 answers (checked on the kernel with raw netlink
// requests in a namespace of its own).
#include <linux/neighbour.h>
#include <linux/netlink.h>

#include "ifcore/inet.h"
#include "ifcore/neigh_table.h"
#include "rtnl/fixture.h"
#include "rtnl/wire/neightbl.h"

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

Bytes ndtmsg_bytes(std::uint8_t family, std::uint8_t pad1 = 0) {
  return {family, pad1, 0, 0};
}
Bytes dump_req(std::uint8_t family, const Bytes& extra = {}, std::uint8_t pad1 = 0) {
  return nlmsg(RTM_GETNEIGHTBL, NLM_F_REQUEST | NLM_F_DUMP, 3, 0,
               cat({ndtmsg_bytes(family, pad1), extra}));
}
Bytes set_req(std::uint8_t family, const Bytes& attrs) {
  return nlmsg(RTM_SETNEIGHTBL, NLM_F_REQUEST | NLM_F_ACK, 4, 0,
               cat({ndtmsg_bytes(family), attrs}));
}
Bytes name(const std::string& n) {
  return attr(NDTA_NAME, cstr(n));
}
Bytes parms(std::initializer_list<Bytes> a) {
  return attr(NDTA_PARMS, cat(a));
}
Bytes u32a(std::uint16_t t, std::uint32_t v) {
  return attr(t, le32(v));
}
Bytes u64a(std::uint16_t t, std::uint64_t v) {
  return attr(t, le64(v));
}

// Linux's NDTA_PARMS of a device that is fresh (neightbl_fill_parms), but for
// NDTPA_REACHABLE_TIME, which Linux draws at random and ifcore gives as the base.
Bytes fresh_parms(int ifindex, std::uint32_t refcnt, std::uint32_t locktime) {
  Bytes in = ifindex ? u32a(NDTPA_IFINDEX, static_cast<std::uint32_t>(ifindex)) : Bytes{};
  return attr(
      NDTA_PARMS,
      cat({in, u32a(NDTPA_REFCNT, refcnt), u32a(NDTPA_QUEUE_LENBYTES, 212992),
           u32a(NDTPA_QUEUE_LEN, 101), u32a(NDTPA_PROXY_QLEN, 64), u32a(NDTPA_APP_PROBES, 0),
           u32a(NDTPA_UCAST_PROBES, 3), u32a(NDTPA_MCAST_PROBES, 3), u32a(NDTPA_MCAST_REPROBES, 0),
           u64a(NDTPA_REACHABLE_TIME, 30000), u64a(NDTPA_BASE_REACHABLE_TIME, 30000),
           u64a(NDTPA_GC_STALETIME, 60000), u64a(NDTPA_DELAY_PROBE_TIME, 5000),
           u64a(NDTPA_RETRANS_TIME, 1000), u64a(NDTPA_ANYCAST_DELAY, 1000),
           u64a(NDTPA_PROXY_DELAY, 800), u64a(NDTPA_LOCKTIME, locktime),
           u64a(NDTPA_INTERVAL_PROBE_TIME_MS, 5000)}));
}

class NeighTbl : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
  }
  int ifindex(const std::string& n) { return find(n)->ifindex(); }
  // The dump's messages: (family, ifindex of NDTPA_IFINDEX or 0 for a table's).
  std::vector<std::pair<int, int>> order(const Replies& r) {
    std::vector<std::pair<int, int>> out;
    for (const auto& m : r.msgs) {
      if (m.hdr.nlmsg_type != RTM_NEWNEIGHTBL) continue;
      EXPECT_EQ(m.hdr.nlmsg_flags, NLM_F_MULTI);
      auto p = m.payload();
      // ndtmsg, NDTA_NAME, then a device's NDTA_PARMS starts with NDTPA_IFINDEX.
      std::size_t name_len = NLA_ALIGN(p[4] | (p[5] << 8));
      std::size_t at = 4 + name_len;
      int idx = 0;
      if (p[at + 2] == NDTA_PARMS && p[at + 6] == NDTPA_IFINDEX) idx = p[at + 8] | (p[at + 9] << 8);
      out.emplace_back(p[0], idx);
    }
    return out;
  }
  // The parameters of one device or of the defaults (ifindex 0), from the inet API.
  inet::NeighParms parms_of(int family, int idx, std::string_view ns = "default") {
    auto ctl = engine->control();
    for (const auto& t : inet::list_neigh_tables(ctl, *ctl.find_namespace(ns), family)) {
      if (!idx) return t.table.conf.parms;
      for (const auto& d : t.devices)
        if (d.ifindex == idx) return d.parms;
    }
    ADD_FAILURE() << "no parameters of " << idx;
    return {};
  }
};

TEST_F(NeighTbl, DumpsEachTableThenItsDevicesNewestFirst) {
  ASSERT_EQ(create("d0"), 0);
  ASSERT_EQ(create("d1"), 0);
  const int lo = 1, d0 = ifindex("d0"), d1 = ifindex("d1");
  Replies r = send(dump_req(AF_UNSPEC));
  using P = std::pair<int, int>;
  EXPECT_EQ(order(r), (std::vector<P>{{AF_INET, 0},
                                      {AF_INET, d1},
                                      {AF_INET, d0},
                                      {AF_INET, lo},
                                      {AF_INET6, 0},
                                      {AF_INET6, d1},
                                      {AF_INET6, d0},
                                      {AF_INET6, lo}}));
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
  // A family's own tables; a family without one: NLMSG_DONE alone.
  EXPECT_EQ(order(send(dump_req(AF_INET6))).size(), 4u);
  EXPECT_EQ(order(send(dump_req(AF_INET))).front(), P(AF_INET, 0));
  r = send(dump_req(AF_BRIDGE));
  ASSERT_EQ(r.msgs.size(), 1u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, NLMSG_DONE);
  // A device's message, byte for byte as Linux's (but for the reachable time).
  r = send(dump_req(AF_INET));
  EXPECT_EQ(to_bytes(r.msgs[1].bytes),
            nlmsg(RTM_NEWNEIGHTBL, NLM_F_MULTI, 3, 4242,
                  cat({ndtmsg_bytes(AF_INET), name("arp_cache"), fresh_parms(d1, 1, 1000)})));
  r = send(dump_req(AF_INET6));
  EXPECT_EQ(to_bytes(r.msgs[3].bytes),
            nlmsg(RTM_NEWNEIGHTBL, NLM_F_MULTI, 3, 4242,
                  cat({ndtmsg_bytes(AF_INET6), name("ndisc_cache"), fresh_parms(lo, 1, 0)})));
}

TEST_F(NeighTbl, TableMessageAsLinux) {
  wire::MessageBuilder b;
  inet::NeighTableInfo t;
  t.family = AF_INET;
  t.name = "arp_cache";
  t.key_len = 4;
  t.entry_size = 336;
  t.entries = 2;
  ASSERT_TRUE(wire::encode_neightbl(b, {RTM_NEWNEIGHTBL, NLM_F_MULTI, 3, 9}, t));
  ndt_config c{};
  c.ndtc_key_len = 4;
  c.ndtc_entry_size = 336;
  c.ndtc_entries = 2;
  c.ndtc_hash_mask = 7;
  Bytes cfg(reinterpret_cast<const std::uint8_t*>(&c),
            reinterpret_cast<const std::uint8_t*>(&c) + sizeof(c));
  Bytes want = nlmsg(RTM_NEWNEIGHTBL, NLM_F_MULTI, 3, 9,
                     cat({ndtmsg_bytes(AF_INET), name("arp_cache"), u64a(NDTA_GC_INTERVAL, 30000),
                          u32a(NDTA_THRESH1, 128), u32a(NDTA_THRESH2, 512),
                          u32a(NDTA_THRESH3, 1024), attr(NDTA_CONFIG, cfg),
                          attr(NDTA_STATS, Bytes(sizeof(ndt_stats), 0)), fresh_parms(0, 1, 1000)}));
  EXPECT_EQ(to_bytes(b.bytes()), want);
}

TEST_F(NeighTbl, StrictDumpChecks) {
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  for (auto [req, text] : std::vector<std::pair<Bytes, std::string>>{
           {dump_req(AF_INET, {}, 1), "Invalid values in header for neighbor table dump request"},
           {dump_req(AF_INET, name("x")),
            "Invalid data after header in neighbor table dump request"},
           {nlmsg(RTM_GETNEIGHTBL, NLM_F_REQUEST | NLM_F_DUMP, 3, 0, {AF_INET, 0}),
            "Invalid header for neighbor table dump request"}}) {
    Replies r = send(req);
    ASSERT_EQ(r.msgs.size(), 1u);
    EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, NLMSG_DONE);
    EXPECT_EQ(wire::decode_done(r.msgs[0]), EINVAL);
    EXPECT_EQ(to_bytes(r.msgs[0].bytes), nlmsg(NLMSG_DONE, NLM_F_MULTI | NLM_F_ACK_TLVS, 3, 4242,
                                               cat({le32(static_cast<std::uint32_t>(-EINVAL)),
                                                    attr(NLMSGERR_ATTR_MSG, cstr(text))})));
  }
  // Not strict, the same requests dump.
  session->set_option(NETLINK_GET_STRICT_CHK, 0);
  EXPECT_EQ(order(send(dump_req(AF_INET, name("x"), 1))).size(), 2u);
  // A get without NLM_F_DUMP: Linux registers no doit.
  EXPECT_EQ(send(nlmsg(RTM_GETNEIGHTBL, NLM_F_REQUEST, 3, 0, ndtmsg_bytes(0))).last_error(),
            EOPNOTSUPP);
}

TEST_F(NeighTbl, ChangesADevicesParameters) {
  ASSERT_EQ(create("d0"), 0);
  const int d0 = ifindex("d0");
  // `ip ntable change name arp_cache dev d0 queue 10 base_reachable 1001 ...`: times in
  // jiffies of 4 ms (rounded up; the low 32 bits of the u64; above 4294967288 the most).
  Replies r = send(set_req(
      AF_UNSPEC,
      cat({name("arp_cache"),
           parms({u32a(NDTPA_IFINDEX, d0), u32a(NDTPA_QUEUE_LEN, 10),
                  u64a(NDTPA_BASE_REACHABLE_TIME, 1001), u64a(NDTPA_RETRANS_TIME, 1),
                  u32a(NDTPA_APP_PROBES, 4294967295u), u64a(NDTPA_ANYCAST_DELAY, 4294967295u),
                  u64a(NDTPA_PROXY_DELAY, 4294967296ull), u32a(NDTPA_PROXY_QLEN, 9),
                  u64a(NDTPA_LOCKTIME, ~0ull), u64a(NDTPA_INTERVAL_PROBE_TIME_MS, 0),
                  u32a(NDTPA_REFCNT, 7)})})));
  EXPECT_EQ(r.last_error(), 0);
  inet::NeighParms p = parms_of(AF_INET, d0);
  EXPECT_EQ(p.queue_len_bytes, 20900);
  EXPECT_EQ(p.queue_len(), 10u);
  EXPECT_EQ(p.base_reachable_ms, 1004u);
  EXPECT_EQ(p.retrans_ms, 4u);
  EXPECT_EQ(p.app_probes, 4294967295u);
  EXPECT_EQ(p.anycast_delay_ms, 4294967288u);
  EXPECT_EQ(p.proxy_delay_ms, 0u);
  EXPECT_EQ(p.proxy_qlen, 9u);
  EXPECT_EQ(p.locktime_ms, 4294967288u);
  EXPECT_EQ(p.interval_probe_ms, 0u);  // Linux's `.min = 1` is not enforced
  // The other table, the other devices and the defaults are untouched.
  EXPECT_EQ(parms_of(AF_INET6, d0).base_reachable_ms, 30000u);
  EXPECT_EQ(parms_of(AF_INET, 1).queue_len(), 101u);
  EXPECT_EQ(parms_of(AF_INET, 0).base_reachable_ms, 30000u);
  // QUEUE_LENBYTES wins over QUEUE_LEN (applied after it).
  EXPECT_EQ(send(set_req(AF_INET, cat({name("arp_cache"), parms({u32a(NDTPA_QUEUE_LENBYTES, 5000),
                                                                 u32a(NDTPA_IFINDEX, d0),
                                                                 u32a(NDTPA_QUEUE_LEN, 3)})})))
                .last_error(),
            0);
  EXPECT_EQ(parms_of(AF_INET, d0).queue_len_bytes, 5000);
  EXPECT_EQ(parms_of(AF_INET, d0).queue_len(), 2u);
}

TEST_F(NeighTbl, ErrorsAsLinux) {
  ASSERT_EQ(create("d0"), 0);
  const std::uint32_t d0 = static_cast<std::uint32_t>(ifindex("d0"));
  auto err = [&](const Bytes& req) { return send(req).last_error(); };
  Bytes p = parms({u32a(NDTPA_IFINDEX, d0), u32a(NDTPA_QUEUE_LEN, 5)});
  EXPECT_EQ(err(set_req(AF_INET, p)), EINVAL);  // no NDTA_NAME
  EXPECT_EQ(send(set_req(AF_INET, p)).last_error_reply().message, "");
  EXPECT_EQ(err(set_req(0, cat({name("xyz"), p}))), ENOENT);
  EXPECT_EQ(err(set_req(AF_INET6, cat({name("arp_cache"), p}))), ENOENT);
  EXPECT_EQ(err(set_req(AF_BRIDGE, cat({name("arp_cache"), p}))), ENOENT);
  EXPECT_EQ(err(set_req(0, cat({name("arp_cache"), parms({u32a(NDTPA_IFINDEX, 99)})}))), ENOENT);
  // A name without its NUL is the name.
  EXPECT_EQ(err(set_req(0, cat({attr(NDTA_NAME, {'a', 'r', 'p', '_', 'c', 'a', 'c', 'h', 'e'}),
                                parms({u32a(NDTPA_IFINDEX, d0)})}))),
            0);
  // Short payloads fail the policy (ERANGE, at the attribute, with the type's range).
  Replies r = send(set_req(
      0,
      cat({name("arp_cache"), parms({u32a(NDTPA_IFINDEX, d0), attr(NDTPA_QUEUE_LEN, {1, 0})})})));
  EXPECT_EQ(r.last_error(), ERANGE);
  EXPECT_EQ(r.last_error_reply().message, "Attribute failed policy validation");
  EXPECT_EQ(r.last_error_reply().attr_offset, 48);
  r = send(set_req(0, cat({name("arp_cache"), attr(NDTA_GC_INTERVAL, le32(5))})));
  EXPECT_EQ(r.last_error(), ERANGE);
  EXPECT_EQ(r.last_error_reply().attr_offset, 36);
  EXPECT_EQ(err(set_req(0, cat({name("arp_cache"), attr(NDTA_PARMS, {1, 2, 3})}))), ERANGE);
  // A bad table comes before a bad parameter (Linux parses NDTA_PARMS after the lookup).
  EXPECT_EQ(err(set_req(0, cat({name("nope"), parms({attr(NDTPA_QUEUE_LEN, {1, 0})})}))), ENOENT);
  EXPECT_EQ(err(nlmsg(RTM_SETNEIGHTBL, NLM_F_REQUEST | NLM_F_ACK, 4, 0, {AF_INET, 0})), EINVAL);
  // Nothing above changed d0.
  EXPECT_EQ(parms_of(AF_INET, static_cast<int>(d0)).queue_len(), 101u);
}

TEST_F(NeighTbl, DefaultsAndThresholdsBelongToTheInitialNamespace) {
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.create_namespace("other"));
  }
  SessionOptions o;
  o.ns = "other";
  o.port_id = 77;
  auto other = open(o);
  ASSERT_TRUE(other);
  // Outside the initial namespace: ENOENT, and nothing changes (Linux applies a device's
  // parameters before it refuses the thresholds; ifcore refuses first).
  EXPECT_EQ(
      roundtrip(*other, set_req(0, cat({name("arp_cache"), parms({u32a(NDTPA_QUEUE_LEN, 5)})})))
          .last_error(),
      ENOENT);
  EXPECT_EQ(roundtrip(*other,
                      set_req(0, cat({name("arp_cache"), u32a(NDTA_THRESH1, 5),
                                      parms({u32a(NDTPA_IFINDEX, 1), u32a(NDTPA_QUEUE_LEN, 5)})})))
                .last_error(),
            ENOENT);
  EXPECT_EQ(parms_of(AF_INET, 1, "other").queue_len(), 101u);
  // Its own devices' parameters are its own.
  EXPECT_EQ(
      roundtrip(*other,
                set_req(0, cat({name("ndisc_cache"),
                                parms({u32a(NDTPA_IFINDEX, 1), u64a(NDTPA_RETRANS_TIME, 500)})})))
          .last_error(),
      0);
  EXPECT_EQ(parms_of(AF_INET6, 1, "other").retrans_ms, 500u);
  EXPECT_EQ(parms_of(AF_INET6, 1).retrans_ms, 1000u);
  // In the initial namespace: the thresholds, the interval and the defaults, which every
  // namespace's table shows and its new devices copy.
  EXPECT_EQ(
      send(set_req(0, cat({name("arp_cache"), u32a(NDTA_THRESH1, 5), u64a(NDTA_GC_INTERVAL, 10001),
                           parms({u64a(NDTPA_GC_STALETIME, 7000)})})))
          .last_error(),
      0);
  ASSERT_EQ(create("d0"), 0);
  EXPECT_EQ(parms_of(AF_INET, ifindex("d0")).gc_stale_ms, 7000u);
  EXPECT_EQ(parms_of(AF_INET, 1).gc_stale_ms, 60000u);  // made before
  EXPECT_EQ(parms_of(AF_INET6, ifindex("d0")).gc_stale_ms, 60000u);
  auto ctl = engine->control();
  auto t = inet::list_neigh_tables(ctl, *ctl.find_namespace("other"), AF_INET);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].table.conf.thresh1, 5u);
  EXPECT_EQ(t[0].table.conf.gc_interval_ms, 10004u);
  EXPECT_EQ(t[0].table.conf.parms.gc_stale_ms, 7000u);
}

TEST_F(NeighTbl, AChangeIsNotAnnouncedAndDrivesTheNeighbourCode) {
  ASSERT_EQ(create("d0"), 0);
  const int d0 = ifindex("d0");
  auto mon = open();
  for (unsigned g = 1; g < 32; ++g) mon->add_membership(g);
  ASSERT_EQ(send(set_req(0, cat({name("arp_cache"),
                                 parms({u32a(NDTPA_IFINDEX, static_cast<std::uint32_t>(d0)),
                                        u64a(NDTPA_BASE_REACHABLE_TIME, 100000)})})))
                .last_error(),
            0);
  ASSERT_EQ(send(set_req(0, cat({name("ndisc_cache"),
                                 parms({u32a(NDTPA_IFINDEX, static_cast<std::uint32_t>(d0)),
                                        u64a(NDTPA_RETRANS_TIME, 2000)})})))
                .last_error(),
            0);
  Datagram heard;
  EXPECT_FALSE(mon->pop_notification(heard));  // Linux: no RTM_NEWNEIGHTBL, no RTM_NEWLINK
  // An unconfirmed entry was confirmed twice the base reachable time ago.
  auto ctl = engine->control();
  Namespace& ns = *ctl.find_namespace("default");
  inet::NeighRequest q;
  q.family = AF_INET;
  q.ifindex = d0;
  q.dst = *IpAddr::parse("10.0.0.5");
  q.lladdr = *HwAddr::parse("02:00:00:00:00:05");
  q.state = NUD_STALE;
  auto n = inet::add_neigh(ctl, ns, q);
  ASSERT_TRUE(n);
  EXPECT_GE(n->confirmed, 20000u);  // clock ticks of 10 ms
  EXPECT_LT(n->confirmed, 20100u);
  // The entry holds its device's parameters: refcnt 2, and the table counts it.
  auto t = inet::list_neigh_tables(ctl, ns, AF_INET);
  EXPECT_EQ(t[0].table.entries, 1u);
  EXPECT_EQ(t[0].devices.front().ifindex, d0);
  EXPECT_EQ(t[0].devices.front().refcnt, 2u);
  // IPv6's times in IFLA_INET6_CACHEINFO are the device's ndisc_cache parameters.
  auto af = inet::link_af_info(*ctl.find(ns, "d0"));
  ASSERT_TRUE(af.conf6);
  EXPECT_EQ(af.conf6->nd.retrans_ms, 2000u);
}

}  // namespace
}  // namespace ifcore::rtnl::test
