// tests/rtnl/idle_state_test.cc — an idle device (down, no address) carries no protocol
// state (docs/MEMORY.md): it is made at the first address, up, setting written or
// neighbour, and the device's RTM_NEWLINK (IFLA_AF_SPEC), its netconf reports and its
// registration and unregistration announcements are the same bytes with or without it.
// The settings it has are those of its registration: IPv4's propagated defaults follow a
// later write of the default (devinet_copy_dflt_conf), IPv6's do not.
#include <linux/netconf.h>

#include "ifcore/inet.h"
#include "proto/helpers.h"
#include "proto/state.h"
#include "rtnl/fill.h"
#include "rtnl/fixture.h"
#include "rtnl/proto.h"
#include "rtnl/wire/netconf.h"

namespace ifcore::rtnl::test {
namespace {

using ifcore::test::addr_req;

Bytes link_bytes(const Device& d) {
  wire::MessageBuilder b;
  EXPECT_TRUE(encode_device(b, {RTM_NEWLINK, 0, 1, 0}, d, 0, 0));
  return Bytes(b.bytes().begin(), b.bytes().end());
}

Bytes netconf_bytes(const inet::NetconfInfo& n, std::uint16_t type = RTM_NEWNETCONF) {
  wire::MessageBuilder b;
  EXPECT_TRUE(wire::encode_netconf(b, {type, 0, 1, 0}, netconf_message(n)));
  return Bytes(b.bytes().begin(), b.bytes().end());
}

// The netconf dump of both families, as bytes.
std::vector<Bytes> netconf_dump(Control& ctl, Namespace& ns) {
  std::vector<Bytes> out;
  for (int f : {AF_INET, AF_INET6})
    for (const auto& n : inet::list_netconf(ctl, ns, f)) out.push_back(netconf_bytes(n));
  return out;
}

// What a device reports: its RTM_NEWLINK and each family's netconf.
struct Report {
  Bytes link, conf4, conf6;
  friend bool operator==(const Report&, const Report&) = default;
};
Report report_of(Control& ctl, Namespace& ns, const Device& d) {
  auto c4 = inet::get_netconf(ctl, ns, AF_INET, d.ifindex());
  auto c6 = inet::get_netconf(ctl, ns, AF_INET6, d.ifindex());
  EXPECT_TRUE(c4 && c6);
  return {link_bytes(d), c4 ? netconf_bytes(*c4) : Bytes{}, c6 ? netconf_bytes(*c6) : Bytes{}};
}

struct NetconfRecorder : inet::ProtoListener {
  std::vector<Bytes> seen;
  void on_netconf(Namespace&, inet::ProtoEvent ev, const inet::NetconfInfo& n) override {
    seen.push_back(netconf_bytes(n, ev == inet::ProtoEvent::New ? RTM_NEWNETCONF : RTM_DELNETCONF));
  }
};

class IdleStateTest : public RtnlTest {
 protected:
  bool idle(Control& ctl, const Device& d) {
    proto::EngineProto& ep = proto::engine_proto(ctl.engine());
    return proto::idle_snap(ep, d) != nullptr && proto::find_dev(ep, d) == nullptr;
  }
  void make_state(Control& ctl, Device& d) {
    proto::dev_state(ctl, proto::engine_proto(ctl.engine()), d);
  }
};

TEST_F(IdleStateTest, AnIdleDeviceReportsWhatItsStateWould) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(d);
  EXPECT_TRUE(idle(ctl, *d));
  Report before = report_of(ctl, n, *d);
  std::vector<Bytes> dump_before = netconf_dump(ctl, n);
  make_state(ctl, *d);
  EXPECT_FALSE(idle(ctl, *d));
  EXPECT_EQ(report_of(ctl, n, *d), before);
  EXPECT_EQ(netconf_dump(ctl, n), dump_before);
}

TEST_F(IdleStateTest, RegisterAndUnregisterAnnounceTheSameBytes) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  NetconfRecorder rec;
  inet::add_listener(ctl, rec);
  Device* a = dummy(ctl, "a0");
  ASSERT_TRUE(a);
  ASSERT_EQ(rec.seen.size(), 2u);  // RTM_NEWNETCONF, IPv4 then IPv6, every attribute
  Report r = report_of(ctl, n, *a);
  EXPECT_EQ(rec.seen[0], r.conf4);
  EXPECT_EQ(rec.seen[1], r.conf6);
  rec.seen.clear();
  ASSERT_TRUE(ctl.delete_link(*a));
  ASSERT_EQ(rec.seen.size(), 2u);  // RTM_DELNETCONF, IPv4 then IPv6
  Device* b = dummy(ctl, "b0");
  ASSERT_TRUE(b);
  make_state(ctl, *b);
  rec.seen.clear();
  ASSERT_TRUE(ctl.delete_link(*b));
  ASSERT_EQ(rec.seen.size(), 2u);
  inet::remove_listener(ctl, rec);
}

TEST_F(IdleStateTest, StateIsMadeWhenFirstNeeded) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  Device* a = dummy(ctl, "a0");
  Device* u = dummy(ctl, "u0");
  Device* s = dummy(ctl, "s0");
  Device* s6 = dummy(ctl, "s1");
  ASSERT_TRUE(a && u && s && s6);
  ASSERT_TRUE(inet::add_address(ctl, n, addr_req(*a, "10.0.0.1", 24)));
  EXPECT_FALSE(idle(ctl, *a));
  ASSERT_TRUE(ctl.open(*u));
  EXPECT_FALSE(idle(ctl, *u));
  auto c4 = inet::inet4_conf(ctl, n, s->ifindex());  // a read makes nothing
  ASSERT_TRUE(c4);
  EXPECT_TRUE(idle(ctl, *s));
  c4->rp_filter = 2;
  ASSERT_TRUE(inet::set_inet4_conf(ctl, n, s->ifindex(), *c4));
  EXPECT_FALSE(idle(ctl, *s));
  auto c6 = inet::inet6_conf(ctl, n, s6->ifindex());
  ASSERT_TRUE(c6);
  c6->proxy_ndp = 1;
  ASSERT_TRUE(inet::set_inet6_conf(ctl, n, s6->ifindex(), *c6));
  EXPECT_FALSE(idle(ctl, *s6));
  EXPECT_EQ(inet::inet6_conf(ctl, n, s6->ifindex())->proxy_ndp, 1);
}

// Linux: a write of an IPv4 default reaches the devices that never wrote that setting
// (rp_filter, not forwarding); an IPv6 default reaches no existing device.
TEST_F(IdleStateTest, AnIdleDeviceKeepsTheDefaultsOfItsRegistration) {
  auto ctl = engine->control();
  Namespace& n = ns(ctl);
  Device* old = dummy(ctl, "old0");
  ASSERT_TRUE(old);
  auto d4 = inet::inet4_conf(ctl, n, inet::kConfDefault);
  auto d6 = inet::inet6_conf(ctl, n, inet::kConfDefault);
  ASSERT_TRUE(d4 && d6);
  d4->rp_filter = 2;
  d4->forwarding = 1;
  ASSERT_TRUE(inet::set_inet4_conf(ctl, n, inet::kConfDefault, *d4));
  d6->forwarding = 1;
  d6->addr_gen_mode = 1;
  ASSERT_TRUE(inet::set_inet6_conf(ctl, n, inet::kConfDefault, *d6));
  Device* fresh = dummy(ctl, "new0");
  ASSERT_TRUE(fresh);
  EXPECT_TRUE(idle(ctl, *old) && idle(ctl, *fresh));
  auto check = [&] {
    EXPECT_EQ(inet::inet4_conf(ctl, n, old->ifindex())->rp_filter, 2);
    EXPECT_EQ(inet::inet4_conf(ctl, n, old->ifindex())->forwarding, 0);
    EXPECT_EQ(inet::inet6_conf(ctl, n, old->ifindex())->forwarding, 0);
    EXPECT_EQ(inet::inet6_conf(ctl, n, old->ifindex())->addr_gen_mode, 0);
    EXPECT_EQ(inet::inet4_conf(ctl, n, fresh->ifindex())->forwarding, 1);
    EXPECT_EQ(inet::inet6_conf(ctl, n, fresh->ifindex())->forwarding, 1);
    EXPECT_EQ(inet::inet6_conf(ctl, n, fresh->ifindex())->addr_gen_mode, 1);
  };
  check();
  Report old_idle = report_of(ctl, n, *old), fresh_idle = report_of(ctl, n, *fresh);
  make_state(ctl, *old);
  make_state(ctl, *fresh);
  check();
  EXPECT_EQ(report_of(ctl, n, *old), old_idle);
  EXPECT_EQ(report_of(ctl, n, *fresh), fresh_idle);
  // "all" forwarding reaches every device, idle or not.
  Device* later = dummy(ctl, "later0");
  ASSERT_TRUE(later);
  auto all4 = inet::inet4_conf(ctl, n, inet::kConfAll);
  all4->forwarding = 0;
  ASSERT_TRUE(inet::set_inet4_conf(ctl, n, inet::kConfAll, *all4));
  all4->forwarding = 1;
  ASSERT_TRUE(inet::set_inet4_conf(ctl, n, inet::kConfAll, *all4));
  for (Device* d : {old, fresh, later})
    EXPECT_EQ(inet::inet4_conf(ctl, n, d->ifindex())->forwarding, 1) << d->name();
}

}  // namespace
}  // namespace ifcore::rtnl::test
