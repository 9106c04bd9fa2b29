// A change request that fails at a late step changes nothing: the kind attributes a kind's
// change_link applied first (and a master's port attributes from change_slave) are put
// back, so that a dump of every link is byte for byte what it was before the request.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_link.h>
#include <linux/if_tunnel.h>
#include <linux/if_vlan.h>

#include <cstring>

#include "fixture.h"
#include "ifcore/notifier.h"

namespace ifcore::rtnl::test {
namespace {

class RollbackTest : public RtnlTest {
 protected:
  // Every link of the session's namespace, as the dump's bytes.
  std::vector<std::uint8_t> dump_bytes() {
    wire::GetLinkRequest g;
    g.dump = true;
    auto r = send(getlink(7, g, NLM_F_DUMP));
    std::vector<std::uint8_t> out;
    for (const auto& d : r.dgs) out.insert(out.end(), d.begin(), d.end());
    return out;
  }
  Device* make(const LinkRequest& req) {
    auto ctl = engine->control();
    auto d = ctl.create_link(*ctl.find_namespace("default"), req);
    EXPECT_TRUE(d) << (d ? "" : d.error().message);
    return d ? *d : nullptr;
  }
  static LinkRequest with_data(std::string kind, std::string name, AttrList data) {
    LinkRequest r = named(std::move(name), std::move(kind));
    r.has_info_data = true;
    r.info_data = std::move(data);
    return r;
  }
  // Sends RTM_NEWLINK (a change of `name`) with `data` for `kind` and an MTU no device
  // takes, applied after the kind's data: the request must fail and change nothing.
  void expect_undone(const std::string& name, const std::string& kind, AttrList data) {
    SCOPED_TRACE(kind);
    const auto before = dump_bytes();
    LinkRequest req = with_data(kind, name, std::move(data));
    req.mtu = 100000;
    auto r = send(link_msg(RTM_NEWLINK, NLM_F_ACK, 9, req));
    EXPECT_EQ(r.last_error(), EINVAL);
    EXPECT_EQ(dump_bytes(), before) << "the kind's data stayed changed";
  }
};

TEST_F(RollbackTest, EveryKindsDataIsPutBackWhenALaterStepFails) {
  Device* lower = make(named("lower0", "dummy"));
  ASSERT_NE(lower, nullptr);
  make(named("br0", "bridge"));
  expect_undone("br0", "bridge",
                {Attr::u32(IFLA_BR_FORWARD_DELAY, 900), Attr::u32(IFLA_BR_AGEING_TIME, 1000),
                 Attr::u32(IFLA_BR_STP_STATE, 1)});

  LinkRequest mv = with_data("macvlan", "mv0", {Attr::u32(IFLA_MACVLAN_MODE, MACVLAN_MODE_VEPA)});
  mv.link = static_cast<std::uint32_t>(lower->ifindex());
  make(mv);
  expect_undone("mv0", "macvlan",
                {Attr::u32(IFLA_MACVLAN_MODE, MACVLAN_MODE_BRIDGE),
                 Attr::u16(IFLA_MACVLAN_FLAGS, 1), Attr::u32(IFLA_MACVLAN_BC_QUEUE_LEN, 77)});

  LinkRequest vl = with_data("vlan", "vl0", {Attr::u16(IFLA_VLAN_ID, 5)});
  vl.link = static_cast<std::uint32_t>(lower->ifindex());
  make(vl);
  std::vector<std::uint8_t> flags(8);
  const std::uint32_t f = VLAN_FLAG_GVRP, mask = VLAN_FLAG_GVRP | VLAN_FLAG_REORDER_HDR;
  std::memcpy(flags.data(), &f, 4);
  std::memcpy(flags.data() + 4, &mask, 4);
  expect_undone("vl0", "vlan", {Attr::binary(IFLA_VLAN_FLAGS, flags)});

  make(with_data("vxlan", "vx0", {Attr::u32(IFLA_VXLAN_ID, 42)}));
  expect_undone("vx0", "vxlan",
                {Attr::u8(IFLA_VXLAN_TTL, 9), Attr::u8(IFLA_VXLAN_TOS, 4),
                 Attr::u32(IFLA_VXLAN_LINK, static_cast<std::uint32_t>(lower->ifindex()))});

  make(with_data("ipip", "tun0", {Attr::be32(IFLA_IPTUN_REMOTE, 0x0a000002)}));
  expect_undone("tun0", "ipip",
                {Attr::be32(IFLA_IPTUN_LOCAL, 0x0a000001), Attr::u8(IFLA_IPTUN_TTL, 17),
                 Attr::u32(IFLA_IPTUN_LINK, static_cast<std::uint32_t>(lower->ifindex()))});
}

// A subscriber refuses every device going up: the last step of a request that also
// changes a bridge port's attributes.
struct NoUp : Subscriber {
  Result<void> on_event(Control&, const EventInfo& ev) override {
    if (ev.event == NetdevEvent::PreUp) return fail(EPERM, "no device goes up here");
    return ok();
  }
};

TEST_F(RollbackTest, APortsDataIsPutBackWhenALaterStepFails) {
  Device* br = make(named("br0", "bridge"));
  Device* port = make(named("p0", "dummy"));
  ASSERT_TRUE(br && port);
  NoUp no_up;
  SubscriptionId id;
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.set_master(*port, br));
    id = ctl.subscribe(no_up, {"no-up", 0, false});
  }
  const auto before = dump_bytes();
  LinkRequest req = named("p0");
  req.has_slave_data = true;
  req.slave_data = {Attr::u32(IFLA_BRPORT_COST, 7), Attr::u16(IFLA_BRPORT_PRIORITY, 9)};
  req.flags = req.change = IFF_UP;
  auto r = send(link_msg(RTM_NEWLINK, NLM_F_ACK, 3, req));
  EXPECT_EQ(r.last_error(), EPERM);
  EXPECT_EQ(dump_bytes(), before) << "the port's data stayed changed";
  auto ctl = engine->control();
  ctl.unsubscribe(id);
}

}  // namespace
}  // namespace ifcore::rtnl::test
