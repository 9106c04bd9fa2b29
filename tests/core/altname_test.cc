// Alternative names (Linux: netdev_name_node_alt_create / _destroy): found like names,
// unique together with names in a namespace, gone with the device, moved with it.
#include "support/engine_fixture.h"

namespace ifcore {
namespace {

using AltNames = test::CoreTest;

TEST_F(AltNames, AnAltnameFindsTheDeviceAndKeepsItsOrder) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  std::string longname(127, 'x');  // ALTIFNAMSIZ - 1: the longest
  ASSERT_TRUE(ctl.add_altname(*d, "second"));
  ASSERT_TRUE(ctl.add_altname(*d, longname));
  ASSERT_TRUE(ctl.add_altname(*d, "first"));
  EXPECT_EQ(ctl.find(ns(ctl), "second"), d);
  EXPECT_EQ(ctl.find(ns(ctl), longname), d);
  EXPECT_EQ(ctl.find(ns(ctl), "d0"), d);
  EXPECT_EQ(d->altnames_locked(), (std::vector<std::string>{"second", longname, "first"}));
  EXPECT_EQ(d->name(), "d0");  // the name stays the name
}

TEST_F(AltNames, LinuxChecksNoCharactersButNul) {
  // Linux 6.18: netdev_name_node_alt_create does not call dev_valid_name; an
  // IFLA_ALT_IFNAME that holds only its NUL makes an empty altname.
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  for (const char* ok : {"a:b", ".", "..", "x%d", "a b", "a/b", ""})
    EXPECT_TRUE(ctl.add_altname(*d, ok)) << ok;
  EXPECT_EQ(ctl.find(ns(ctl), ""), d);
  for (std::string bad : {std::string(128, 'y'), std::string("a\0b", 3)}) {
    auto r = ctl.add_altname(*d, bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, EINVAL);
  }
  EXPECT_EQ(d->altnames_locked().size(), 7u);
}

TEST_F(AltNames, NamesAndAltnamesAreUniqueTogether) {
  auto ctl = engine->control();
  Device* a = dummy(ctl, "a0");
  Device* b = dummy(ctl, "b0");
  ASSERT_TRUE(ctl.add_altname(*a, "alt"));
  for (const char* taken : {"a0", "b0", "alt"}) {
    auto r = ctl.add_altname(*b, taken);
    ASSERT_FALSE(r) << taken;
    EXPECT_EQ(r.error().code, EEXIST) << taken;
    r = ctl.add_altname(*a, taken);
    ASSERT_FALSE(r) << taken;
    EXPECT_EQ(r.error().code, EEXIST) << taken;
  }
  EXPECT_TRUE(b->altnames_locked().empty());
  // A device made, or renamed, with another's altname: EEXIST, nothing changes.
  auto before = ns(ctl).device_count();
  auto made = ctl.create_link(ns(ctl), test::link_req("dummy", "alt"));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, EEXIST);
  EXPECT_EQ(ns(ctl).device_count(), before);
  auto r = ctl.rename(*b, "alt");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EEXIST);
  EXPECT_EQ(b->name(), "b0");
  // Linux: dev_change_name to the device's own altname is EEXIST too.
  r = ctl.rename(*a, "alt");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EEXIST);
  EXPECT_EQ(a->name(), "a0");
  EXPECT_EQ(ctl.find(ns(ctl), "alt"), a);
}

TEST_F(AltNames, DeleteErrorsAsLinux) {
  auto ctl = engine->control();
  Device* a = dummy(ctl, "a0");
  Device* b = dummy(ctl, "b0");
  ASSERT_TRUE(ctl.add_altname(*a, "alta"));
  ASSERT_TRUE(ctl.add_altname(*b, "altb"));
  auto r = ctl.del_altname(*a, "nothere");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ENOENT);
  for (const char* others : {"a0", "b0", "altb"}) {  // own name, another's name or altname
    r = ctl.del_altname(*a, others);
    ASSERT_FALSE(r) << others;
    EXPECT_EQ(r.error().code, EINVAL) << others;
  }
  EXPECT_EQ(ctl.find(ns(ctl), "altb"), b);
  EXPECT_EQ(ctl.find(ns(ctl), "a0"), a);
  ASSERT_TRUE(ctl.del_altname(*a, "alta"));
  EXPECT_EQ(ctl.find(ns(ctl), "alta"), nullptr);
  EXPECT_TRUE(a->altnames_locked().empty());
  EXPECT_NE(dummy(ctl, "alta"), nullptr);  // free at once
}

TEST_F(AltNames, APatternSkipsAltnames) {
  // Linux: __dev_alloc_name marks the numbers of altnames in use too.
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d9");
  ASSERT_TRUE(ctl.add_altname(*d, "x0"));
  EXPECT_EQ(dummy(ctl, "x%d")->name(), "x1");
  ASSERT_TRUE(ctl.del_altname(*d, "x0"));
  EXPECT_EQ(dummy(ctl, "x%d")->name(), "x0");
}

TEST_F(AltNames, GoWithTheDevice) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.add_altname(*d, "gone0"));
  ASSERT_TRUE(ctl.add_altname(*d, "gone1"));
  ASSERT_TRUE(ctl.delete_link(*d));
  EXPECT_EQ(ctl.find(ns(ctl), "gone0"), nullptr);
  EXPECT_EQ(ctl.find(ns(ctl), "gone1"), nullptr);
  EXPECT_NE(dummy(ctl, "gone0"), nullptr);
  Device* e = dummy(ctl, "e0");
  EXPECT_TRUE(ctl.add_altname(*e, "gone1"));
}

TEST_F(AltNames, ABatchUnlistsEveryAltname) {
  auto ctl = engine->control();
  std::vector<Device*> devs;
  for (int i = 0; i < 50; ++i) {
    Device* d = dummy(ctl, fmt::format("d{}", i));
    for (int j = 0; j < 4; ++j) ASSERT_TRUE(ctl.add_altname(*d, fmt::format("d{}-alt{}", i, j)));
    devs.push_back(d);
  }
  ASSERT_TRUE(ctl.delete_links(devs));
  for (int i = 0; i < 50; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(ctl.find(ns(ctl), fmt::format("d{}-alt{}", i, j)), nullptr);
}

TEST_F(AltNames, MoveWithTheDeviceToAnotherNamespace) {
  auto ctl = engine->control();
  auto other = ctl.create_namespace("other");
  ASSERT_TRUE(other);
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.add_altname(*d, "travel0"));
  ASSERT_TRUE(ctl.add_altname(*d, "travel1"));
  ASSERT_TRUE(ctl.move_to_namespace(*d, **other));
  EXPECT_EQ(ctl.find(ns(ctl), "travel0"), nullptr);
  EXPECT_EQ(ctl.find(**other, "travel0"), d);
  EXPECT_EQ(ctl.find(**other, "travel1"), d);
  EXPECT_EQ(d->altnames_locked(), (std::vector<std::string>{"travel0", "travel1"}));
  // Free again where it was: its altnames are names to take there.
  EXPECT_NE(dummy(ctl, "travel0"), nullptr);
}

TEST_F(AltNames, MoveRefusedWhenAnAltnameIsTakenThere) {
  // Linux 6.18: __dev_change_net_namespace, EEXIST with the altname in the extack.
  auto ctl = engine->control();
  auto other = ctl.create_namespace("other");
  ASSERT_TRUE(other);
  auto there = ctl.create_link(**other, test::link_req("dummy", "busy"));
  ASSERT_TRUE(there);
  Device* d = dummy(ctl, "d0");
  ASSERT_TRUE(ctl.add_altname(*d, "free"));
  ASSERT_TRUE(ctl.add_altname(*d, "busy"));
  auto r = ctl.move_to_namespace(*d, **other);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EEXIST);
  EXPECT_EQ(r.error().message, "An interface with the altname busy exists in the target netns");
  EXPECT_EQ(&d->ns(), &ns(ctl));
  EXPECT_EQ(ctl.find(ns(ctl), "busy"), d);
  EXPECT_EQ(ctl.find(ns(ctl), "free"), d);
  EXPECT_EQ(ctl.find(**other, "free"), nullptr);
  // The same with another device's altname there.
  ASSERT_TRUE(ctl.del_altname(*d, "busy"));
  ASSERT_TRUE(ctl.add_altname(**there, "free"));
  r = ctl.move_to_namespace(*d, **other);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "An interface with the altname free exists in the target netns");
  // And the device's own name taken there.
  Device* e = dummy(ctl, "e0");
  ASSERT_TRUE(ctl.add_altname(**there, "e0"));
  r = ctl.move_to_namespace(*e, **other);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EEXIST);
  EXPECT_EQ(r.error().message, "An interface with the same name exists in the target netns");
}

}  // namespace
}  // namespace ifcore
