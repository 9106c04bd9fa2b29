// tests/rtnl/altname_test.cc — RTM_NEWLINKPROP / RTM_DELLINKPROP (Linux: rtnl_linkprop):
// altnames added and deleted, devices found by them in every link request, Linux's errors
// (and what an error leaves behind), IFLA_PROP_LIST in link messages, notifications.
#include <linux/netlink.h>

#include "rtnl/fixture.h"

namespace ifcore::rtnl::test {
namespace {

struct Prop {
  std::uint16_t type = IFLA_ALT_IFNAME;
  std::string value;  // written with its NUL
};

// A link property request naming the device by index, or by IFLA_IFNAME / IFLA_ALT_IFNAME.
Bytes linkprop(std::uint16_t type, std::uint32_t seq, int ifindex, const std::vector<Prop>& props,
               std::optional<std::string> ifname = {}, std::optional<std::string> altname = {}) {
  wire::MessageBuilder b(1 << 16);
  b.begin({type, NLM_F_REQUEST | NLM_F_ACK, seq, 0});
  ifinfomsg ifi{};
  ifi.ifi_index = ifindex;
  b.put_struct(ifi);
  if (ifname) b.put_string(IFLA_IFNAME, *ifname);
  if (altname) b.put_string(IFLA_ALT_IFNAME, *altname);
  std::size_t nest = b.begin_nest(NLA_F_NESTED | IFLA_PROP_LIST);
  for (const Prop& p : props) b.put_string(p.type, p.value);
  b.end_nest(nest);
  EXPECT_TRUE(b.end());
  return b.take();
}

Bytes add(std::uint32_t seq, int ifindex, std::vector<std::string> names) {
  std::vector<Prop> props;
  for (auto& n : names) props.push_back({IFLA_ALT_IFNAME, std::move(n)});
  return linkprop(RTM_NEWLINKPROP, seq, ifindex, props);
}

Bytes del(std::uint32_t seq, int ifindex, std::vector<std::string> names) {
  std::vector<Prop> props;
  for (auto& n : names) props.push_back({IFLA_ALT_IFNAME, std::move(n)});
  return linkprop(RTM_DELLINKPROP, seq, ifindex, props);
}

std::vector<std::pair<std::uint16_t, wire::LinkMessage>> heard(Session& s) {
  std::vector<std::pair<std::uint16_t, wire::LinkMessage>> out;
  Datagram d;
  while (s.pop_notification(d)) {
    auto msgs = wire::split_messages(d);
    EXPECT_TRUE(msgs);
    for (const auto& m : *msgs) {
      auto lm = wire::decode_link_message(m);
      EXPECT_TRUE(lm);
      if (lm) out.emplace_back(m.hdr.nlmsg_type, *lm);
    }
  }
  return out;
}

class AltnameTest : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
    ASSERT_EQ(create("d0"), 0);
    ASSERT_EQ(create("d1"), 0);
    d0 = find("d0")->ifindex();
    d1 = find("d1")->ifindex();
  }
  // RTM_GETLINK by IFLA_IFNAME or IFLA_ALT_IFNAME: the device's message, or the errno.
  std::pair<int, wire::LinkMessage> get(std::optional<std::string> name,
                                        std::optional<std::string> alt = {}) {
    wire::GetLinkRequest g;
    g.name = std::move(name);
    g.alt_name = std::move(alt);
    Replies r = send(getlink(3, g));
    if (r.msgs.empty()) return {-1, {}};
    if (r.msgs[0].hdr.nlmsg_type == NLMSG_ERROR) return {r.last_error(), {}};
    auto m = wire::decode_link_message(r.msgs[0]);
    EXPECT_TRUE(m);
    return {0, m ? *m : wire::LinkMessage{}};
  }
  std::vector<std::string> altnames(const std::string& dev) {
    auto ctl = engine->control();
    Device* d = ctl.find(*ctl.find_namespace("default"), dev);
    return d ? d->altnames_locked() : std::vector<std::string>{"<no device>"};
  }
  int d0 = 0, d1 = 0;
};

TEST_F(AltnameTest, AddedInOrderAndReportedInIflaPropList) {
  ASSERT_EQ(send(add(1, d0, {"longaltname0123456789", "a2"})).last_error(), 0);
  auto [err, m] = get("d0");
  ASSERT_EQ(err, 0);
  EXPECT_EQ(m.alt_names, (std::vector<std::string>{"longaltname0123456789", "a2"}));
  auto [err1, m1] = get("d1");
  ASSERT_EQ(err1, 0);
  EXPECT_TRUE(m1.alt_names.empty());  // Linux: no IFLA_PROP_LIST without altnames
}

TEST_F(AltnameTest, EveryLinkRequestFindsADeviceByAnyName) {
  ASSERT_EQ(send(add(1, d0, {"a2", "longaltname0123456789"})).last_error(), 0);
  EXPECT_EQ(get("a2").second.ifindex, d0);                         // IFLA_IFNAME
  EXPECT_EQ(get({}, "longaltname0123456789").second.ifindex, d0);  // IFLA_ALT_IFNAME
  EXPECT_EQ(get({}, "d0").second.ifindex, d0);                     // the name, as altname
  EXPECT_EQ(get({}, "nothere").first, ENODEV);
  // RTM_SETLINK and RTM_NEWLINK (no create) by IFLA_ALT_IFNAME change the device.
  LinkRequest set;
  set.alt_name = "longaltname0123456789";
  set.mtu = 1400;
  ASSERT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 4, set)).last_error(), 0);
  EXPECT_EQ(find("d0")->mtu(), 1400u);
  set.mtu = 1300;
  ASSERT_EQ(send(link_msg(RTM_NEWLINK, NLM_F_ACK, 5, set)).last_error(), 0);
  EXPECT_EQ(find("d0")->mtu(), 1300u);
  // A create naming an altname finds the device: EEXIST.
  EXPECT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 6, named("a2", "dummy"))).last_error(), EEXIST);
  // Linux: IFLA_IFNAME that finds the device by its altname is also a new name for it:
  // rtnl_setlink's do_setlink renames it to its own altname, EEXIST.
  LinkRequest by_alt = named("a2");
  by_alt.mtu = 1200;
  EXPECT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 7, by_alt)).last_error(), EEXIST);
  EXPECT_EQ(find("d0")->name(), "d0");
  // RTM_DELLINK by IFLA_ALT_IFNAME.
  LinkRequest gone;
  gone.alt_name = "a2";
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 8, gone)).last_error(), 0);
  EXPECT_EQ(find("d0"), nullptr);
  EXPECT_EQ(find("a2"), nullptr);
}

TEST_F(AltnameTest, TheDeviceByIflaIfnameOrIflaAltIfname) {
  ASSERT_EQ(send(add(1, d0, {"first"})).last_error(), 0);
  ASSERT_EQ(
      send(linkprop(RTM_NEWLINKPROP, 2, 0, {{IFLA_ALT_IFNAME, "second"}}, "first")).last_error(),
      0);
  ASSERT_EQ(send(linkprop(RTM_NEWLINKPROP, 3, 0, {{IFLA_ALT_IFNAME, "third"}}, {}, "second"))
                .last_error(),
            0);
  EXPECT_EQ(altnames("d0"), (std::vector<std::string>{"first", "second", "third"}));
  // Linux: rtnl_linkprop — no index and no name is EINVAL; a name nobody has, ENODEV.
  EXPECT_EQ(send(linkprop(RTM_NEWLINKPROP, 4, 0, {{IFLA_ALT_IFNAME, "x"}})).last_error(), EINVAL);
  EXPECT_EQ(send(linkprop(RTM_NEWLINKPROP, 5, 0, {{IFLA_ALT_IFNAME, "x"}}, "nothere")).last_error(),
            ENODEV);
  EXPECT_EQ(send(add(6, 999, {"x"})).last_error(), ENODEV);
  // No IFLA_PROP_LIST entries: nothing to do, an ACK.
  EXPECT_EQ(send(add(7, d0, {})).last_error(), 0);
}

TEST_F(AltnameTest, ErrorsAsLinux) {
  ASSERT_EQ(send(add(1, d0, {"a2"})).last_error(), 0);
  Replies r = send(add(2, d0, {"d0"}));  // the device's own name
  EXPECT_EQ(r.last_error(), EEXIST);
  EXPECT_EQ(r.last_error_reply().message, "");
  EXPECT_EQ(send(add(3, d0, {"d1"})).last_error(), EEXIST);  // another device's name
  EXPECT_EQ(send(add(4, d1, {"a2"})).last_error(), EEXIST);  // another device's altname
  EXPECT_EQ(send(add(5, d0, {"a2"})).last_error(), EEXIST);  // its own altname again
  EXPECT_EQ(send(del(6, d0, {"nothere"})).last_error(), ENOENT);
  EXPECT_EQ(send(del(7, d0, {"d0"})).last_error(), EINVAL);
  EXPECT_EQ(send(del(8, d1, {"a2"})).last_error(), EINVAL);
  EXPECT_EQ(send(del(9, d0, {"d1"})).last_error(), EINVAL);
  // ifla_policy: IFLA_ALT_IFNAME is 127 bytes at most (an attribute holding only its NUL
  // passes: Linux makes an empty altname of it).
  r = send(add(10, d0, {std::string(128, 'y')}));
  EXPECT_EQ(r.last_error(), ERANGE);
  EXPECT_EQ(r.last_error_reply().message, "Attribute failed policy validation");
  EXPECT_GT(r.last_error_reply().attr_offset, 0);
  EXPECT_EQ(send(add(11, d0, {""})).last_error(), 0);
  EXPECT_EQ(send(add(12, d0, {std::string(127, 'x')})).last_error(), 0);
  EXPECT_EQ(altnames("d0"), (std::vector<std::string>{"a2", "", std::string(127, 'x')}));
  EXPECT_EQ(altnames("d1"), std::vector<std::string>{});
}

TEST_F(AltnameTest, AnErrorKeepsTheEntriesBeforeIt) {
  // Linux: rtnl_linkprop applies the entries one by one and returns at the first error.
  EXPECT_EQ(send(add(1, d0, {"z0", "z1", "z1", "z2"})).last_error(), EEXIST);
  EXPECT_EQ(altnames("d0"), (std::vector<std::string>{"z0", "z1"}));
  EXPECT_EQ(send(add(2, d0, {"z3", std::string(128, 'y'), "z4"})).last_error(), ERANGE);
  EXPECT_EQ(altnames("d0"), (std::vector<std::string>{"z0", "z1", "z3"}));
  EXPECT_EQ(send(del(3, d0, {"z0", "nothere", "z1"})).last_error(), ENOENT);
  EXPECT_EQ(altnames("d0"), (std::vector<std::string>{"z1", "z3"}));
  // Other types in the list are skipped.
  ASSERT_EQ(
      send(linkprop(RTM_NEWLINKPROP, 4, d0, {{IFLA_IFNAME, "skipped"}, {IFLA_ALT_IFNAME, "z5"}}))
          .last_error(),
      0);
  EXPECT_EQ(altnames("d0"), (std::vector<std::string>{"z1", "z3", "z5"}));
}

TEST_F(AltnameTest, ThePropertyListMustFitItsLength) {
  // Linux: rtnl_alt_ifname counts ALTIFNAMSIZ per altname: 496 fit a u16 length.
  for (int i = 0; i < 496; ++i)
    ASSERT_EQ(send(add(1, d0, {fmt::format("n{}", i)})).last_error(), 0) << i;
  Replies r = send(add(2, d0, {"one-too-many"}));
  EXPECT_EQ(r.last_error(), EINVAL);
  EXPECT_EQ(r.last_error_reply().message, "effective property list too long");
  EXPECT_EQ(altnames("d0").size(), 496u);
  EXPECT_EQ(find("one-too-many"), nullptr);
  ASSERT_EQ(send(del(3, d0, {"n0"})).last_error(), 0);
  EXPECT_EQ(send(add(4, d0, {"one-more"})).last_error(), 0);
}

TEST_F(AltnameTest, AnUpDeviceIsAnnouncedOnceAfterTheList) {
  auto mon = open();
  mon->add_membership(RTNLGRP_LINK);
  // Linux: netdev_state_change announces only a device that is up.
  ASSERT_EQ(send(add(1, d0, {"quiet"})).last_error(), 0);
  EXPECT_TRUE(heard(*mon).empty());
  Device* dev = find("d0");
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.open(*dev));
  }
  (void)heard(*mon);
  ASSERT_EQ(send(add(2, d0, {"loud0", "loud1"})).last_error(), 0);
  auto h = heard(*mon);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].first, RTM_NEWLINK);
  EXPECT_EQ(h[0].second.change, 0u);
  EXPECT_EQ(h[0].second.alt_names, (std::vector<std::string>{"quiet", "loud0", "loud1"}));
  ASSERT_EQ(send(del(3, d0, {"loud0"})).last_error(), 0);
  h = heard(*mon);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].second.alt_names, (std::vector<std::string>{"quiet", "loud1"}));
  // An error after a change: the change stays, nobody hears of it.
  EXPECT_EQ(send(add(4, d0, {"loud2", "d1"})).last_error(), EEXIST);
  EXPECT_TRUE(heard(*mon).empty());
  EXPECT_EQ(altnames("d0"), (std::vector<std::string>{"quiet", "loud1", "loud2"}));
}

TEST_F(AltnameTest, UnregisterAnnouncesTheAltnamesAndFreesThem) {
  ASSERT_EQ(send(add(1, d0, {"gone0", "gone1"})).last_error(), 0);
  auto mon = open();
  mon->add_membership(RTNLGRP_LINK);
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 2, named("gone1"))).last_error(), 0);
  auto h = heard(*mon);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].first, RTM_DELLINK);
  EXPECT_EQ(h[0].second.name, "d0");
  // Linux: unregister_netdevice_many_notify builds RTM_DELLINK before the altnames go.
  EXPECT_EQ(h[0].second.alt_names, (std::vector<std::string>{"gone0", "gone1"}));
  EXPECT_EQ(get("gone0").first, ENODEV);
  EXPECT_EQ(create("gone0"), 0);
  EXPECT_EQ(send(add(3, d1, {"gone1"})).last_error(), 0);
}

TEST_F(AltnameTest, MoveToANamespaceTakesThemAlong) {
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.create_namespace("blue"));
  }
  ASSERT_EQ(send(add(1, d0, {"mover"})).last_error(), 0);
  LinkRequest mv;
  mv.ifindex = d0;
  mv.net_ns_name = "blue";
  ASSERT_EQ(send(link_msg(RTM_SETLINK, NLM_F_ACK, 2, mv)).last_error(), 0);
  EXPECT_EQ(find("mover"), nullptr);
  EXPECT_NE(find("mover", "blue"), nullptr);
  // Back is refused while "mover" is taken at home, with Linux 6.18's extack.
  ASSERT_EQ(create("mover"), 0);
  SessionOptions o;
  o.ns = "blue";
  auto blue = open(o);
  blue->set_option(NETLINK_EXT_ACK, 1);
  LinkRequest back = named("d0");
  back.net_ns_name = "default";
  Replies r = roundtrip(*blue, link_msg(RTM_SETLINK, NLM_F_ACK, 3, back));
  EXPECT_EQ(r.last_error(), EEXIST);
  EXPECT_EQ(r.last_error_reply().message,
            "An interface with the altname mover exists in the target netns");
  EXPECT_NE(find("d0", "blue"), nullptr);
  EXPECT_NE(find("mover", "blue"), nullptr);
}

TEST_F(AltnameTest, NewlinkAndSetlinkIgnoreIflaPropList) {
  // Linux: only rtnl_linkprop reads IFLA_PROP_LIST; a link change carrying it succeeds and
  // adds nothing.
  for (std::uint16_t type : {RTM_NEWLINK, RTM_SETLINK}) {
    Bytes m = linkprop(RTM_NEWLINKPROP, 1, d0, {{IFLA_ALT_IFNAME, "ignored"}});
    m[4] = static_cast<std::uint8_t>(type & 0xff);  // nlmsg_type, little-endian
    m[5] = static_cast<std::uint8_t>(type >> 8);
    EXPECT_EQ(send(m).last_error(), 0) << type;
  }
  EXPECT_TRUE(altnames("d0").empty());
  EXPECT_EQ(find("ignored"), nullptr);
}

TEST_F(AltnameTest, GetLinkPropIsNotSupported) {
  // Linux registers no handler for RTM_GETLINKPROP.
  wire::MessageBuilder b;
  b.begin({RTM_GETLINKPROP, NLM_F_REQUEST | NLM_F_ACK, 1, 0});
  ifinfomsg ifi{};
  ifi.ifi_index = d0;
  b.put_struct(ifi);
  ASSERT_TRUE(b.end());
  EXPECT_EQ(send(b.take()).last_error(), EOPNOTSUPP);
}

TEST_F(AltnameTest, ChangesNeedTheRightToWrite) {
  SessionOptions o;
  o.may_write = false;
  auto ro = open(o);
  EXPECT_EQ(roundtrip(*ro, add(1, d0, {"nope"})).last_error(), EPERM);
  EXPECT_EQ(roundtrip(*ro, del(2, d0, {"nope"})).last_error(), EPERM);
  EXPECT_TRUE(altnames("d0").empty());
}

}  // namespace
}  // namespace ifcore::rtnl::test
