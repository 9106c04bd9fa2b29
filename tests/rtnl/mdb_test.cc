// RTM_{NEW,DEL,GET}MDB through a session: the empty tables of a dump (bytes as Linux 6.18
// writes them), the refusals with their extack texts, entries added, replaced, deleted and
// listed in Linux's order, the temporary ones' timers running out, a port's leaving and
// stopping, and the RTNLGRP_MDB notifications.
#include <net/if.h>  // before any <linux/if*.h>

#include <arpa/inet.h>
#include <linux/if_bridge.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>  // IFLA_VXLAN_*
#include <sys/socket.h>

#include <cstring>

#include "fixture.h"
#include "ifcore/timer.h"
#include "rtnl/wire/mdb.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl::test {
namespace {

using namespace std::chrono_literals;

br_mdb_entry v4_entry(int ifindex, const char* group, std::uint8_t state) {
  br_mdb_entry e{};
  e.ifindex = static_cast<std::uint32_t>(ifindex);
  e.state = state;
  e.addr.proto = htons(ETH_P_IP);
  inet_pton(AF_INET, group, &e.addr.u.ip4);
  return e;
}

Bytes mdb_msg(std::uint16_t type, std::uint16_t flags, int bridge,
              const std::optional<br_mdb_entry>& e, const char* source = nullptr) {
  wire::MessageBuilder b;
  b.begin({type, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), 7, 0});
  br_port_msg bpm{};
  bpm.family = AF_BRIDGE;
  bpm.ifindex = static_cast<std::uint32_t>(bridge);
  b.put_struct(bpm);
  if (e) b.put_attr(MDBA_SET_ENTRY, &*e, sizeof(*e));
  if (source) {
    auto nest = b.begin_nest(MDBA_SET_ENTRY_ATTRS);
    in_addr a{};
    inet_pton(AF_INET, source, &a);
    b.put_attr(MDBE_ATTR_SOURCE, &a, 4);
    b.end_nest(nest);
  }
  EXPECT_TRUE(b.end());
  return Bytes(b.bytes().begin(), b.bytes().end());
}

// The entries of one table message: MDBA_MDB > MDBA_MDB_ENTRY > MDBA_MDB_ENTRY_INFO.
struct Seen {
  int ifindex;
  std::uint8_t state;
  std::string group;
  std::uint32_t timer;
  bool has_rtprot;
};

std::vector<Seen> entries_of(const wire::Message& m) {
  std::vector<Seen> out;
  auto p = m.payload();
  auto top = wire::parse_raw_attrs(p.subspan(sizeof(br_port_msg)), 0);
  EXPECT_TRUE(top);
  for (const auto& t : *top) {
    EXPECT_EQ(t.type, MDBA_MDB);
    auto groups = wire::parse_nested(t);
    EXPECT_TRUE(groups);
    for (const auto& g : *groups) {
      auto infos = wire::parse_nested(g);
      EXPECT_TRUE(infos);
      for (const auto& info : *infos) {
        br_mdb_entry e;
        std::memcpy(&e, info.data.data(), sizeof(e));
        auto attrs = wire::parse_raw_attrs(info.data.subspan(sizeof(e)), 0);
        EXPECT_TRUE(attrs);
        char buf[INET6_ADDRSTRLEN] = "";
        inet_ntop(AF_INET, &e.addr.u.ip4, buf, sizeof(buf));
        const wire::RawAttr* timer = wire::find_raw(*attrs, MDBA_MDB_EATTR_TIMER);
        out.push_back({static_cast<int>(e.ifindex), e.state, buf,
                       timer ? timer->u32().value_or(~0u) : ~0u,
                       wire::find_raw(*attrs, MDBA_MDB_EATTR_RTPROT) != nullptr});
      }
    }
  }
  return out;
}

class MdbRtnlTest : public BridgePortTest {
 protected:
  void configure(EngineConfig& cfg) override { cfg.time = clock; }
  std::pair<int, std::string> error_of(const Replies& r) {
    if (!r.msgs.empty() && r.msgs.back().hdr.nlmsg_type == NLMSG_DONE)
      return {wire::decode_done(r.msgs.back()).value_or(0),
              wire::decode_done_message(r.msgs.back())};
    auto e = r.last_error_reply();
    return {e.error, e.message};
  }
  void up(const char* name) {
    Device* d = find(name);
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.open(*d));
  }
  // Bridge up, v0 forwarding.
  void all_up() {
    up("br0");
    up("v1");
    up("v0");
  }
  Replies dump() {
    wire::MessageBuilder b;
    b.begin({RTM_GETMDB, NLM_F_REQUEST | NLM_F_DUMP, 8, 0});
    br_port_msg bpm{};
    bpm.family = AF_BRIDGE;
    b.put_struct(bpm);
    EXPECT_TRUE(b.end());
    return send(Bytes(b.bytes().begin(), b.bytes().end()));
  }
  std::vector<Seen> table() {
    Replies r = dump();
    EXPECT_GE(r.msgs.size(), 2u);
    return entries_of(r.msgs[0]);
  }
  // The notifications' types and entries.
  std::vector<std::pair<std::uint16_t, Seen>> heard(Session& mon) {
    std::vector<std::pair<std::uint16_t, Seen>> out;
    Datagram d;
    while (mon.pop_notification(d)) {
      auto msgs = wire::split_messages(d);
      EXPECT_TRUE(msgs);
      for (const auto& m : *msgs) {
        EXPECT_EQ(m.payload()[0], AF_BRIDGE);
        for (const auto& s : entries_of(m)) out.emplace_back(m.hdr.nlmsg_type, s);
      }
    }
    return out;
  }
  int br() { return find("br0")->ifindex(); }
  int v0() { return find("v0")->ifindex(); }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
};

TEST_F(MdbRtnlTest, EmptyTablesAreListedPerBridgeAndVxlanAsLinuxWritesThem) {
  LinkRequest vx = named("vx0", "vxlan");
  vx.has_info_data = true;
  vx.info_data = {Attr::u8(IFLA_VXLAN_COLLECT_METADATA, 1)};
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 3, vx)).last_error(), 0);
  Replies r = dump();
  ASSERT_EQ(r.msgs.size(), 3u);
  // Linux: br_mdb_dump — RTM_GETMDB, family 0, an empty MDBA_MDB nest.
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, RTM_GETMDB);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_flags, NLM_F_MULTI);
  Bytes want(8 + 4, 0);
  std::uint32_t idx = static_cast<std::uint32_t>(br());
  std::memcpy(want.data() + 4, &idx, 4);
  want[8] = 4;
  want[10] = MDBA_MDB;
  auto p = r.msgs[0].payload();
  EXPECT_EQ(Bytes(p.begin(), p.end()), want);
  // vxlan_mdb_dump — RTM_NEWMDB, AF_BRIDGE.
  EXPECT_EQ(r.msgs[1].hdr.nlmsg_type, RTM_NEWMDB);
  EXPECT_EQ(r.msgs[1].payload()[0], AF_BRIDGE);
  EXPECT_EQ(r.msgs[2].hdr.nlmsg_type, NLMSG_DONE);
}

TEST_F(MdbRtnlTest, RefusalsCarryLinuxsErrnoAndText) {
  auto e = v4_entry(v0(), "239.1.1.1", MDB_PERMANENT);
  EXPECT_EQ(error_of(send(mdb_msg(RTM_NEWMDB, kCreate, br(), e))),
            std::make_pair(EINVAL, std::string("bridge: Bridge device is not running")));
  EXPECT_EQ(error_of(send(mdb_msg(RTM_DELMDB, NLM_F_ACK, br(), e))),
            std::make_pair(EINVAL, std::string("bridge: Bridge device is not running")));
  EXPECT_EQ(error_of(send(mdb_msg(RTM_NEWMDB, kCreate, v0(), e))),
            std::make_pair(EOPNOTSUPP, std::string("Device does not support MDB operations")));
  EXPECT_EQ(error_of(send(mdb_msg(RTM_NEWMDB, kCreate, 0, e))),
            std::make_pair(EINVAL, std::string("Invalid ifindex")));
  EXPECT_EQ(error_of(send(mdb_msg(RTM_NEWMDB, kCreate, br(), std::nullopt))),
            std::make_pair(EINVAL, std::string("Missing MDBA_SET_ENTRY attribute")));
  EXPECT_EQ(error_of(send(
                mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(v0(), "224.0.0.5", MDB_PERMANENT)))),
            std::make_pair(EINVAL, std::string("IPv4 entry group address is local multicast")));
  EXPECT_EQ(
      error_of(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(0, "239.1.1.1", MDB_PERMANENT)))),
      std::make_pair(EINVAL, std::string("Zero entry ifindex is not allowed")));
  all_up();
  EXPECT_EQ(error_of(send(
                mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(br(), "239.1.1.1", MDB_PERMANENT)))),
            std::make_pair(EINVAL, std::string("bridge: Flags are not allowed for host groups")));
  EXPECT_EQ(error_of(send(mdb_msg(RTM_NEWMDB, kCreate, br(),
                                  v4_entry(find("v1")->ifindex(), "239.1.1.1", 0)))),
            std::make_pair(EINVAL, std::string("bridge: Net device is not a bridge port")));
  EXPECT_EQ(
      error_of(send(mdb_msg(RTM_NEWMDB, kCreate, br(), e, "239.0.0.1"))),
      std::make_pair(EINVAL, std::string("bridge: IPv4 multicast source address is not allowed")));
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), e)).last_error(), 0);
  EXPECT_EQ(error_of(send(mdb_msg(RTM_NEWMDB, kCreate, br(), e))),
            std::make_pair(EEXIST, std::string("bridge: (*, G) group is already joined by port")));
  // Snooping off: adds are refused; the permanent group stays listed.
  LinkRequest off = named("br0");
  off.has_info_data = true;
  off.info_data = {Attr::u8(IFLA_BR_MCAST_SNOOPING, 0)};
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 4, off)).last_error(), 0);
  EXPECT_EQ(
      error_of(
          send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(v0(), "239.1.1.2", MDB_PERMANENT)))),
      std::make_pair(EINVAL, std::string("bridge: Bridge's multicast processing is disabled")));
  EXPECT_EQ(table().size(), 1u);
}

TEST_F(MdbRtnlTest, EntriesAreListedNewestGroupFirstHostJoinBeforePortsAndAnnounced) {
  all_up();
  auto mon = open(SessionOptions{});
  mon->add_membership(RTNLGRP_MDB);
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(v0(), "239.1.1.1", MDB_PERMANENT)))
                .last_error(),
            0);
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(v0(), "239.1.1.2", 0))).last_error(),
            0);
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(br(), "239.1.1.1", 0))).last_error(),
            0);
  auto t = table();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].group, "239.1.1.2");  // the newest group
  EXPECT_EQ(t[0].state, MDB_TEMPORARY);
  EXPECT_EQ(t[0].timer, 26000u);  // the membership interval, in 1/100 s
  EXPECT_TRUE(t[0].has_rtprot);
  EXPECT_EQ(t[1].ifindex, br());  // the host join first, without a protocol
  EXPECT_FALSE(t[1].has_rtprot);
  EXPECT_EQ(t[2].ifindex, v0());
  EXPECT_EQ(t[2].timer, 0u);
  auto h = heard(*mon);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].first, RTM_NEWMDB);
  EXPECT_EQ(h[2].second.ifindex, br());
  // Deletion: once, then EINVAL without a message.
  auto gone = v4_entry(v0(), "239.1.1.2", 0);
  EXPECT_EQ(send(mdb_msg(RTM_DELMDB, NLM_F_ACK, br(), gone)).last_error(), 0);
  EXPECT_EQ(error_of(send(mdb_msg(RTM_DELMDB, NLM_F_ACK, br(), gone))),
            std::make_pair(EINVAL, std::string()));
  h = heard(*mon);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].first, RTM_DELMDB);
  EXPECT_EQ(h[0].second.group, "239.1.1.2");
}

TEST_F(MdbRtnlTest, ReplaceChangesAPortGroupInPlace) {
  all_up();
  auto e = v4_entry(v0(), "239.1.1.1", MDB_PERMANENT);
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), e)).last_error(), 0);
  e.state = MDB_TEMPORARY;
  ASSERT_EQ(
      send(mdb_msg(RTM_NEWMDB, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK, br(), e)).last_error(), 0);
  auto t = table();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].state, MDB_TEMPORARY);
  EXPECT_EQ(t[0].timer, 26000u);
}

TEST_F(MdbRtnlTest, TemporaryEntriesGoWhenTheirTimerRunsOut) {
  all_up();
  auto mon = open(SessionOptions{});
  mon->add_membership(RTNLGRP_MDB);
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(v0(), "239.1.1.1", 0))).last_error(),
            0);
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(br(), "239.1.1.2", 0))).last_error(),
            0);
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(v0(), "239.1.1.3", MDB_PERMANENT)))
                .last_error(),
            0);
  (void)heard(*mon);
  clock->advance(100s);
  {
    auto ctl = engine->control();
    run_timers(ctl);
  }
  auto t = table();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1].timer, 16000u);
  clock->advance(160s);
  {
    auto ctl = engine->control();
    run_timers(ctl);
  }
  t = table();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].group, "239.1.1.3");
  auto h = heard(*mon);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].first, RTM_DELMDB);
  EXPECT_EQ(h[1].first, RTM_DELMDB);
}

TEST_F(MdbRtnlTest, APortStoppingLosesItsTemporaryGroupsAndLeavingAllOfThem) {
  all_up();
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(v0(), "239.1.1.1", 0))).last_error(),
            0);
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(v0(), "239.1.1.2", MDB_PERMANENT)))
                .last_error(),
            0);
  {
    Device* d = find("v0");
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.close(*d));
  }
  auto t = table();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].group, "239.1.1.2");
  EXPECT_EQ(error_of(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(v0(), "239.1.1.5", 0)))),
            std::make_pair(EINVAL, std::string("bridge: Port is in disabled state and entry is "
                                               "not permanent")));
  {
    Device* d = find("v0");
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.set_master(*d, nullptr));
  }
  EXPECT_TRUE(table().empty());
}

TEST_F(MdbRtnlTest, GetAnswersOneGroupOrNotFound) {
  all_up();
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(v0(), "239.1.1.1", MDB_PERMANENT)))
                .last_error(),
            0);
  wire::MessageBuilder b;
  auto get = [&](const char* group) {
    b.begin({RTM_GETMDB, NLM_F_REQUEST, 9, 0});
    br_port_msg bpm{};
    bpm.family = AF_BRIDGE;
    bpm.ifindex = static_cast<std::uint32_t>(br());
    b.put_struct(bpm);
    auto e = v4_entry(0, group, 0);
    b.put_attr(wire::kMdbaGetEntry, &e, sizeof(e));
    EXPECT_TRUE(b.end());
    return send(Bytes(b.bytes().begin(), b.bytes().end()));
  };
  Replies r = get("239.1.1.1");
  ASSERT_EQ(r.msgs.size(), 1u);
  EXPECT_EQ(r.msgs[0].hdr.nlmsg_type, RTM_NEWMDB);
  EXPECT_EQ(r.msgs[0].payload()[0], AF_BRIDGE);
  auto t = entries_of(r.msgs[0]);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].ifindex, v0());
  EXPECT_EQ(error_of(get("239.1.1.9")),
            std::make_pair(ENOENT, std::string("bridge: MDB entry not found")));
}

TEST_F(MdbRtnlTest, APermanentRouterPortIsListedAndAnnounced) {
  auto mon = open(SessionOptions{});
  mon->add_membership(RTNLGRP_MDB);
  LinkRequest port = named("v0");
  port.has_slave_data = true;
  port.slave_kind = "bridge";
  port.slave_data = {Attr::u8(IFLA_BRPORT_MULTICAST_ROUTER, 2)};
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 4, port)).last_error(), 0);
  // Linux: br_multicast_set_port_router lists it at once, the bridge and port still down.
  Replies r = dump();
  ASSERT_EQ(r.msgs.size(), 2u);
  auto attrs = wire::parse_raw_attrs(r.msgs[0].payload().subspan(sizeof(br_port_msg)), 0);
  ASSERT_TRUE(attrs);
  const wire::RawAttr* routers = wire::find_raw(*attrs, MDBA_ROUTER);
  ASSERT_NE(routers, nullptr);
  auto ports = wire::parse_nested(*routers);
  ASSERT_TRUE(ports);
  ASSERT_EQ(ports->size(), 1u);
  // The ifindex without a header, then TIMER, TYPE, INET_TIMER, INET6_TIMER.
  auto d = (*ports)[0].data;
  std::uint32_t ifindex = 0;
  std::memcpy(&ifindex, d.data(), 4);
  EXPECT_EQ(static_cast<int>(ifindex), v0());
  auto pattrs = wire::parse_raw_attrs(d.subspan(4), 0);
  ASSERT_TRUE(pattrs);
  std::vector<std::uint16_t> order;
  for (const auto& a : *pattrs) order.push_back(a.type);
  EXPECT_EQ(order, (std::vector<std::uint16_t>{MDBA_ROUTER_PATTR_TIMER, MDBA_ROUTER_PATTR_TYPE,
                                               MDBA_ROUTER_PATTR_INET_TIMER,
                                               MDBA_ROUTER_PATTR_INET6_TIMER}));
  EXPECT_EQ(*wire::find_raw(*pattrs, MDBA_ROUTER_PATTR_TYPE)->u8(), 2);
  // Announced once (Linux: br_rtr_notify); a port type of 1 takes it off again.
  Datagram dg;
  int news = 0;
  while (mon->pop_notification(dg)) {
    auto msgs = wire::split_messages(dg);
    ASSERT_TRUE(msgs);
    for (const auto& m : *msgs)
      if (m.hdr.nlmsg_type == RTM_NEWMDB) ++news;
  }
  EXPECT_EQ(news, 1);
  port.slave_data = {Attr::u8(IFLA_BRPORT_MULTICAST_ROUTER, 1)};
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 5, port)).last_error(), 0);
  r = dump();
  attrs = wire::parse_raw_attrs(r.msgs[0].payload().subspan(sizeof(br_port_msg)), 0);
  ASSERT_TRUE(attrs);
  EXPECT_EQ(wire::find_raw(*attrs, MDBA_ROUTER), nullptr);
}

// Linux: br_dev_uninit's br_multicast_dev_del drops the bridge's own groups without a
// message; its RTM_DELLINK is the last thing a listener hears.
TEST_F(MdbRtnlTest, ADeletedBridgesOwnGroupsGoUnannounced) {
  all_up();
  ASSERT_EQ(send(mdb_msg(RTM_NEWMDB, kCreate, br(), v4_entry(br(), "239.1.1.2", 0))).last_error(),
            0);
  auto mon = open(SessionOptions{});
  mon->add_membership(RTNLGRP_MDB);
  mon->add_membership(RTNLGRP_LINK);
  LinkRequest del;
  del.ifindex = br();
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 9, del)).last_error(), 0);
  auto types = notification_types(*mon);
  EXPECT_EQ(std::count(types.begin(), types.end(), RTM_DELMDB), 0);
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.back(), RTM_DELLINK);
}

}  // namespace
}  // namespace ifcore::rtnl::test
