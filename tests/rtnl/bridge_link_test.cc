// RTM_GETLINK dumps and RTM_SETLINK of family AF_BRIDGE through a session (`bridge link`):
// the ports as br_fill_ifinfo reports them, the bridges themselves when their vlans are
// asked for, the strict dump's checks with Linux 6.18's extack texts, port settings set
// from IFLA_PROTINFO, nested or as the old u8 state, with br_setport's errors, and vlans
// set and deleted (RTM_DELLINK) on a bridge that filters by none.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <sys/socket.h>

#include <cstring>

#include "fixture.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl::test {
namespace {

// One RTM_GETLINK / RTM_SETLINK of family AF_BRIDGE; `attrs` writes the attributes.
template <class F>
Bytes bridge_msg(std::uint16_t type, std::uint16_t flags, int ifindex, F&& attrs) {
  wire::MessageBuilder b;
  b.begin({type, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), 9, 0});
  ifinfomsg ifi{};
  ifi.ifi_family = AF_BRIDGE;
  ifi.ifi_index = ifindex;
  b.put_struct(ifi);
  attrs(b);
  auto done = b.end();
  EXPECT_TRUE(done);
  return Bytes(done->begin(), done->end());
}

class BridgeLinkTest : public BridgePortTest {
 protected:
  void SetUp() override {
    BridgePortTest::SetUp();
    ASSERT_EQ(create("d0"), 0);
  }
  // The dump's messages: ifindex, IFLA_MASTER and the IFLA_PROTINFO attributes (empty
  // when there is none); "error N TEXT" when the dump was refused.
  struct Entry {
    int ifindex = 0;
    std::uint32_t master = 0;
    std::vector<wire::RawAttr> protinfo;
    bool has_protinfo = false;
  };
  std::pair<std::vector<Entry>, std::string> dump(const Bytes& request) {
    last = send(request);
    std::vector<Entry> out;
    for (const auto& m : last.msgs) {
      if (m.hdr.nlmsg_type == NLMSG_DONE) {
        auto code = wire::decode_done(m);
        if (code && *code)
          return {out, fmt::format("error {} {}", *code, wire::decode_done_message(m))};
        continue;
      }
      EXPECT_EQ(m.hdr.nlmsg_type, RTM_NEWLINK);
      EXPECT_EQ(m.hdr.nlmsg_flags, NLM_F_MULTI);
      auto p = m.payload();
      ifinfomsg ifi;
      std::memcpy(&ifi, p.data(), sizeof(ifi));
      EXPECT_EQ(ifi.ifi_family, AF_BRIDGE);
      Entry e;
      e.ifindex = ifi.ifi_index;
      auto attrs = wire::parse_raw_attrs(p.subspan(NLMSG_ALIGN(sizeof(ifinfomsg))), 0);
      EXPECT_TRUE(attrs);
      for (const auto& a : *attrs) {
        if (a.type == IFLA_MASTER) e.master = *a.u32();
        if (a.type == IFLA_PROTINFO) {
          EXPECT_TRUE(a.nested_flag);
          e.has_protinfo = true;
          e.protinfo = *wire::parse_nested(a);
        }
      }
      out.push_back(std::move(e));
    }
    return {out, ""};
  }
  static std::optional<std::uint64_t> port_attr(const Entry& e, std::uint16_t type) {
    for (const auto& a : e.protinfo)
      if (a.type == type) {
        std::uint64_t v = 0;
        std::memcpy(&v, a.data.data(), std::min<std::size_t>(a.data.size(), 8));
        return v;
      }
    return std::nullopt;
  }
  Replies last;
};

TEST_F(BridgeLinkTest, TheDumpHoldsThePortsAndTheBridgesOnlyWhenTheirVlansAreAsked) {
  const int br = find("br0")->ifindex(), v0 = find("v0")->ifindex();
  auto [ports, err] = dump(bridge_msg(RTM_GETLINK, NLM_F_DUMP, 0, [](auto&) {}));
  EXPECT_EQ(err, "");
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].ifindex, v0);
  EXPECT_EQ(ports[0].master, static_cast<std::uint32_t>(br));
  EXPECT_TRUE(ports[0].has_protinfo);
  EXPECT_EQ(port_attr(ports[0], IFLA_BRPORT_COST), 2u);  // a veth: 10 Gb/s
  EXPECT_EQ(port_attr(ports[0], IFLA_BRPORT_PRIORITY), 32u);
  EXPECT_EQ(port_attr(ports[0], IFLA_BRPORT_LEARNING), 1u);

  // RTEXT_FILTER_BRVLAN: the bridge too, its own master, no IFLA_PROTINFO.
  auto [both, err2] = dump(bridge_msg(RTM_GETLINK, NLM_F_DUMP, 0, [](wire::MessageBuilder& b) {
    b.put_u32(IFLA_EXT_MASK, RTEXT_FILTER_BRVLAN);
  }));
  EXPECT_EQ(err2, "");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].ifindex, br);  // made first
  EXPECT_EQ(both[0].master, static_cast<std::uint32_t>(br));
  EXPECT_FALSE(both[0].has_protinfo);
  EXPECT_EQ(both[1].ifindex, v0);
}

TEST_F(BridgeLinkTest, AStrictDumpTakesTheHeaderAndTheFilterMaskAlone) {
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  EXPECT_EQ(dump(bridge_msg(RTM_GETLINK, NLM_F_DUMP, 3, [](auto&) {})).second,
            "error 22 Invalid values in header for bridge link dump request");
  EXPECT_EQ(dump(bridge_msg(RTM_GETLINK, NLM_F_DUMP, 0,
                            [](wire::MessageBuilder& b) { b.put_u32(IFLA_MASTER, 1); }))
                .second,
            "error 22 Unsupported attribute in bridge link dump request");
  // Not strict: the header's values and other attributes are not looked at.
  session->set_option(NETLINK_GET_STRICT_CHK, 0);
  auto [ports, err] = dump(bridge_msg(RTM_GETLINK, NLM_F_DUMP, 3,
                                      [](wire::MessageBuilder& b) { b.put_u32(IFLA_MASTER, 1); }));
  EXPECT_EQ(err, "");
  EXPECT_EQ(ports.size(), 1u);
}

TEST_F(BridgeLinkTest, APortsSettingsAreSetFromItsProtinfo) {
  const int v0 = find("v0")->ifindex();
  auto set = [&](int ifindex, auto&& attrs) {
    auto r = send(bridge_msg(RTM_SETLINK, NLM_F_ACK, ifindex, attrs));
    auto e = r.last_error_reply();
    return std::pair{e.error, e.message};
  };
  using P = std::pair<int, std::string>;
  EXPECT_EQ(set(v0,
                [](wire::MessageBuilder& b) {
                  auto n = b.begin_nest(IFLA_PROTINFO | NLA_F_NESTED);
                  b.put_u32(IFLA_BRPORT_COST, 7);
                  b.put_u16(IFLA_BRPORT_PRIORITY, 5);
                  b.put_u8(IFLA_BRPORT_LEARNING, 0);
                  b.end_nest(n);
                }),
            (P{0, ""}));
  auto [ports, err] = dump(bridge_msg(RTM_GETLINK, NLM_F_DUMP, 0, [](auto&) {}));
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(port_attr(ports[0], IFLA_BRPORT_COST), 7u);
  EXPECT_EQ(port_attr(ports[0], IFLA_BRPORT_PRIORITY), 5u);
  EXPECT_EQ(port_attr(ports[0], IFLA_BRPORT_LEARNING), 0u);

  // br_setport's refusals are the errno alone, and change nothing.
  EXPECT_EQ(set(v0,
                [](wire::MessageBuilder& b) {
                  auto n = b.begin_nest(IFLA_PROTINFO | NLA_F_NESTED);
                  b.put_u16(IFLA_BRPORT_PRIORITY, 64);
                  b.end_nest(n);
                }),
            (P{ERANGE, ""}));
  // The old form, a u8 state: an unknown state is EINVAL; v0 is down and takes none.
  auto state = [](std::uint8_t s) {
    return [s](wire::MessageBuilder& b) { b.put_u8(IFLA_PROTINFO, s); };
  };
  EXPECT_EQ(set(v0, state(7)), (P{EINVAL, ""}));
  EXPECT_EQ(set(v0, state(BR_STATE_FORWARDING)), (P{ENETDOWN, ""}));
  EXPECT_EQ(set(v0, state(BR_STATE_DISABLED)), (P{ENETDOWN, ""}));
  auto [after, err2] = dump(bridge_msg(RTM_GETLINK, NLM_F_DUMP, 0, [](auto&) {}));
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(port_attr(after[0], IFLA_BRPORT_PRIORITY), 5u);
  EXPECT_EQ(port_attr(after[0], IFLA_BRPORT_STATE), BR_STATE_DISABLED);

  // Not a port, not a device, BRIDGE_FLAGS_SELF: as rtnl_bridge_setlink answers.
  auto cost = [](wire::MessageBuilder& b) {
    auto n = b.begin_nest(IFLA_PROTINFO | NLA_F_NESTED);
    b.put_u32(IFLA_BRPORT_COST, 9);
    b.end_nest(n);
  };
  EXPECT_EQ(set(find("d0")->ifindex(), cost), (P{EOPNOTSUPP, ""}));
  EXPECT_EQ(set(999, cost), (P{ENODEV, "unknown ifindex"}));
  EXPECT_EQ(set(v0,
                [](wire::MessageBuilder& b) {
                  auto n = b.begin_nest(IFLA_AF_SPEC);
                  b.put_u16(IFLA_BRIDGE_FLAGS, BRIDGE_FLAGS_SELF);
                  b.end_nest(n);
                }),
            (P{EOPNOTSUPP, ""}));
  // Without IFLA_PROTINFO there is nothing to do.
  EXPECT_EQ(set(v0, [](auto&) {}), (P{0, ""}));
}

// Vlans on a bridge that filters by none (Linux without CONFIG_BRIDGE_VLAN_FILTERING, as the
// kernel the suite runs on): an entry to add is EOPNOTSUPP once checked, one to delete is
// gone already; a family AF_BRIDGE RTM_DELLINK never deletes the device.
TEST_F(BridgeLinkTest, VlansAreCheckedNoneIsKeptAndABridgeDellinkDeletesNoDevice) {
  const int v0 = find("v0")->ifindex();
  const int br = find("br0")->ifindex();
  auto ask = [&](std::uint16_t type, int ifindex, std::optional<std::uint16_t> flags,
                 std::vector<bridge_vlan_info> vlans) {
    auto r = send(bridge_msg(type, NLM_F_ACK, ifindex, [&](wire::MessageBuilder& b) {
      auto n = b.begin_nest(IFLA_AF_SPEC);
      if (flags) b.put_u16(IFLA_BRIDGE_FLAGS, *flags);
      for (const auto& v : vlans)
        b.put_bytes(IFLA_BRIDGE_VLAN_INFO, {reinterpret_cast<const std::uint8_t*>(&v), sizeof(v)});
      b.end_nest(n);
    }));
    auto e = r.last_error_reply();
    return std::pair{e.error, e.message};
  };
  using P = std::pair<int, std::string>;
  const bridge_vlan_info vid5{0, 5}, vid0{0, 0};
  const bridge_vlan_info begin{BRIDGE_VLAN_INFO_RANGE_BEGIN, 10},
      end{BRIDGE_VLAN_INFO_RANGE_END, 20};
  EXPECT_EQ(ask(RTM_SETLINK, v0, std::nullopt, {vid5}), (P{EOPNOTSUPP, ""}));
  EXPECT_EQ(ask(RTM_SETLINK, v0, std::nullopt, {vid0}), (P{EINVAL, "bridge: Vlan id is invalid"}));
  EXPECT_EQ(ask(RTM_SETLINK, v0, std::nullopt, {begin, begin}),
            (P{EINVAL, "bridge: Found a new vlan range start while processing one"}));
  EXPECT_EQ(ask(RTM_SETLINK, v0, std::nullopt, {begin}), (P{0, ""}));  // a start alone
  EXPECT_EQ(ask(RTM_SETLINK, br, BRIDGE_FLAGS_SELF, {vid5}), (P{EOPNOTSUPP, ""}));
  EXPECT_EQ(ask(RTM_SETLINK, br, BRIDGE_FLAGS_SELF, {}), (P{0, ""}));
  EXPECT_EQ(ask(RTM_SETLINK, find("d0")->ifindex(), std::nullopt, {vid5}), (P{EOPNOTSUPP, ""}));
  EXPECT_EQ(ask(RTM_SETLINK, v0, 4, {}), (P{EOPNOTSUPP, ""}));  // neither master nor self
  // Deletes: no message (br_dellink has no extack), and the same checks.
  EXPECT_EQ(ask(RTM_DELLINK, v0, std::nullopt, {vid5}), (P{0, ""}));
  EXPECT_EQ(ask(RTM_DELLINK, v0, std::nullopt, {begin, end}), (P{0, ""}));
  EXPECT_EQ(ask(RTM_DELLINK, v0, std::nullopt, {vid0}), (P{EINVAL, ""}));
  EXPECT_EQ(ask(RTM_DELLINK, br, BRIDGE_FLAGS_SELF, {vid5}), (P{0, ""}));
  EXPECT_EQ(ask(RTM_DELLINK, br, std::nullopt, {vid5}), (P{EOPNOTSUPP, ""}));
  EXPECT_EQ(ask(RTM_DELLINK, v0, BRIDGE_FLAGS_SELF, {vid5}), (P{EOPNOTSUPP, ""}));
  // Without IFLA_AF_SPEC: nothing to delete on a port; a bridge has no master to ask.
  auto bare = [&](int ifindex) {
    return send(bridge_msg(RTM_DELLINK, NLM_F_ACK, ifindex, [](auto&) {})).last_error();
  };
  EXPECT_EQ(bare(v0), 0);
  EXPECT_EQ(bare(br), EOPNOTSUPP);
  EXPECT_NE(find("v0"), nullptr);
  EXPECT_NE(find("v1"), nullptr);
  EXPECT_NE(find("br0"), nullptr);
}

}  // namespace
}  // namespace ifcore::rtnl::test
