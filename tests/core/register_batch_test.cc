// Register batches (Control::register_batch, Control::create_links): one Register pass for
// the whole batch, all or nothing, the item at fault named; a failed batch leaves the
// state as it found it, a veto in the middle included.
#include <net/if.h>

#include <algorithm>
#include <cstdint>
#include <set>

#include "support/engine_fixture.h"

namespace ifcore {
namespace {

// Records Register and Unregister, and vetoes the Register of one device by name.
struct Vetoer : Subscriber {
  std::string tag;
  std::vector<std::string>* journal;
  std::string veto_name;
  Vetoer(std::string t, std::vector<std::string>* j) : tag(std::move(t)), journal(j) {}
  Result<void> on_event(Control&, const EventInfo& ev) override {
    if (ev.replay) return ok();
    journal->push_back(fmt::format("{}:{}:{}", tag, to_string(ev.event), ev.dev.name()));
    if (ev.event == NetdevEvent::Register && ev.dev.name() == veto_name)
      return fail(EADDRINUSE, "device \"{}\": vetoed", veto_name);
    return ok();
  }
};

class RegisterBatchTest : public test::CoreTest {
 protected:
  std::vector<LinkRequest> dummies(const std::vector<std::string>& names) {
    std::vector<LinkRequest> reqs;
    for (const auto& n : names) reqs.push_back(test::link_req("dummy", n));
    return reqs;
  }
  Vetoer& subscriber(std::string tag) {
    subs_.push_back(std::make_unique<Vetoer>(std::move(tag), &j));
    return *subs_.back();
  }
  std::vector<std::string> j;

 private:
  std::vector<std::unique_ptr<Vetoer>> subs_;
};

TEST_F(RegisterBatchTest, TenThousandDummiesInOneRegisterPass) {
  auto ctl = engine->control();
  std::vector<LinkRequest> reqs(10000, test::link_req("dummy", "d%d"));
  Stats before = engine->stats();
  auto made = ctl.create_links(ns(ctl), reqs);
  ASSERT_TRUE(made) << made.error().error.message;
  Stats after = engine->stats();
  EXPECT_EQ(after.notifier_passes - before.notifier_passes, 1u);
  EXPECT_EQ(after.devices_registered - before.devices_registered, 10000u);
  ASSERT_EQ(made->size(), 10000u);
  EXPECT_EQ((*made)[0]->name(), "d0");
  EXPECT_EQ((*made)[9999]->name(), "d9999");
  EXPECT_EQ(ctl.find(ns(ctl), "d4321"), (*made)[4321]);
  EXPECT_LT((*made)[0]->ifindex(), (*made)[1]->ifindex());
  EXPECT_EQ(ns(ctl).device_count(), 10001u);  // and lo
  for (Device* d : *made) EXPECT_EQ(d->state(), RegState::Registered);
}

TEST_F(RegisterBatchTest, NamesAndIndexesAsGivenAndUpWhenAsked) {
  auto ctl = engine->control();
  auto reqs = dummies({"a0", "a1"});
  reqs[0].ifindex = 50;
  reqs[1].flags = IFF_UP;
  reqs[1].change = IFF_UP;
  auto made = ctl.create_links(ns(ctl), reqs);
  ASSERT_TRUE(made) << made.error().error.message;
  EXPECT_EQ((*made)[0]->ifindex(), 50);
  EXPECT_FALSE((*made)[0]->is_up());
  EXPECT_TRUE((*made)[1]->is_up());
}

TEST_F(RegisterBatchTest, VetoInTheMiddleLeavesTheStateAsItWas) {
  // Subscribers live in the fixture: they outlive the engine, whose teardown notifies them.
  Vetoer &first = subscriber("first"), &vetoer = subscriber("vetoer"), &last = subscriber("last");
  vetoer.veto_name = "b2";
  auto ctl = engine->control();
  dummy(ctl, "keep0");
  ctl.subscribe(first, {"first", 10, false});
  ctl.subscribe(vetoer, {"vetoer", 0, false});
  ctl.subscribe(last, {"last", -10, false});
  auto state = listing(ctl);
  Stats before = engine->stats();
  auto made = ctl.create_links(ns(ctl), dummies({"b0", "b1", "b2", "b3"}));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(2));
  EXPECT_EQ(made.error().error.code, EADDRINUSE);
  EXPECT_EQ(made.error().error.message, "device \"b2\": vetoed");
  EXPECT_EQ(listing(ctl), state);
  for (const char* n : {"b0", "b1", "b2", "b3"}) EXPECT_EQ(ctl.find(ns(ctl), n), nullptr);
  EXPECT_EQ(engine->stats().devices_registered, before.devices_registered);
  // Every subscriber that heard a Register hears the Unregister; b3 was never announced.
  std::vector<std::string> want = {
      "first:REGISTER:b0",   "vetoer:REGISTER:b0",   "last:REGISTER:b0",     "first:REGISTER:b1",
      "vetoer:REGISTER:b1",  "last:REGISTER:b1",     "first:REGISTER:b2",    "vetoer:REGISTER:b2",
      "first:UNREGISTER:b2", "first:UNREGISTER:b1",  "vetoer:UNREGISTER:b1", "last:UNREGISTER:b1",
      "first:UNREGISTER:b0", "vetoer:UNREGISTER:b0", "last:UNREGISTER:b0"};
  EXPECT_EQ(j, want);
  // The ifindexes the batch took are handed out again, as if it had not been.
  vetoer.veto_name.clear();
  int next = dummy(ctl, "after")->ifindex();
  EXPECT_EQ(next, state.back().second + 1);
}

TEST_F(RegisterBatchTest, NameTwiceInTheBatchIsRefusedBeforeAnyRegister) {
  auto ctl = engine->control();
  auto state = listing(ctl);
  Stats before = engine->stats();
  auto made = ctl.create_links(ns(ctl), dummies({"c0", "c1", "c2", "c1"}));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(3));
  EXPECT_EQ(made.error().error.code, EEXIST);
  EXPECT_EQ(engine->stats().notifier_passes, before.notifier_passes);
  EXPECT_EQ(listing(ctl), state);
}

TEST_F(RegisterBatchTest, ARepeatedNameAmongThousandsIsTheItemReported) {
  auto ctl = engine->control();
  auto state = listing(ctl);
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i) names.push_back(fmt::format("r{}", i));
  names.push_back("r1234");
  names.push_back("r2999");
  auto made = ctl.create_links(ns(ctl), dummies(names));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(3000));
  EXPECT_EQ(made.error().error.code, EEXIST);
  EXPECT_EQ(made.error().error.message, "device \"r1234\" already exists");
  EXPECT_EQ(listing(ctl), state);
  names.resize(3000);  // the same names once each: made
  made = ctl.create_links(ns(ctl), dummies(names));
  ASSERT_TRUE(made) << made.error().error.message;
  EXPECT_EQ(made->size(), 3000u);
}

TEST_F(RegisterBatchTest, AnUnknownKindAfterARunOfDummiesIsItsItem) {
  auto ctl = engine->control();
  auto reqs = dummies({"k0", "k1", "k2"});
  reqs.push_back(test::link_req("nosuchkind", "k3"));
  reqs.push_back(test::link_req("dummy", "k4"));
  auto made = ctl.create_links(ns(ctl), reqs);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(3));
  EXPECT_EQ(made.error().error.code, EOPNOTSUPP);
  EXPECT_EQ(made.error().error.message, "Unknown device type");
  EXPECT_EQ(ctl.find(ns(ctl), "k0"), nullptr);
}

// A source that hands out one request in turn, rewritten each time, as a decoder does;
// it can refuse an item.
class OneAtATime final : public LinkRequestSource {
 public:
  OneAtATime(std::vector<std::string> names, std::size_t refuse = SIZE_MAX)
      : names_(std::move(names)), refuse_(refuse) {}
  std::size_t size_hint() const override { return names_.size(); }
  Result<const LinkRequest*> next() override {
    if (next_ == names_.size()) return nullptr;
    if (next_ == refuse_) return fail(EINVAL, "item {} is malformed", next_);
    req_ = test::link_req("dummy", names_[next_++]);
    req_.flags = req_.change = next_ % 2 ? IFF_UP : 0;
    return &req_;
  }
  std::size_t read() const { return next_; }

 private:
  std::vector<std::string> names_;
  std::size_t refuse_;
  std::size_t next_ = 0;
  LinkRequest req_;
};

TEST_F(RegisterBatchTest, ASourceIsReadOnceAndItsRequestsAreNotKept) {
  auto ctl = engine->control();
  OneAtATime source({"s0", "s1", "s2", "s3", "s4"});
  auto made = ctl.create_links(ns(ctl), source);
  ASSERT_TRUE(made) << made.error().error.message;
  ASSERT_EQ(made->size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ((*made)[i]->name(), "s" + std::to_string(i));
    // The flags each request asked for, applied after the registration.
    EXPECT_EQ(((*made)[i]->flags() & IFF_UP) != 0, i % 2 == 0) << i;
  }
}

TEST_F(RegisterBatchTest, ASourcesErrorIsItsItemsAndNothingIsMade) {
  auto ctl = engine->control();
  std::size_t count = ns(ctl).devices_locked().size();
  OneAtATime source({"t0", "t1", "t2", "t3"}, 2);
  auto made = ctl.create_links(ns(ctl), source);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(2));
  EXPECT_EQ(made.error().error.message, "item 2 is malformed");
  EXPECT_EQ(source.read(), 2u);  // nothing after the refusal was read
  EXPECT_EQ(ns(ctl).devices_locked().size(), count);
  EXPECT_EQ(ctl.find(ns(ctl), "t0"), nullptr);
}

// A pattern is resolved when its device is listed, after the checks: a later item that
// names what it resolved to fails then, and the devices listed before it are unlisted
// again (and freed a grace period later: a lock-free reader may have found them).
TEST_F(RegisterBatchTest, APatternThatTakesALaterItemsNameFailsThatItemAtListing) {
  auto ctl = engine->control();
  auto first = ctl.create_links(ns(ctl), dummies({"w0"}));
  ASSERT_TRUE(first) << first.error().error.message;
  const int w0 = (*first)[0]->ifindex();
  auto before = listing(ctl);
  auto made = ctl.create_links(ns(ctl), dummies({"y5", "x%d", "x0"}));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(2));
  EXPECT_EQ(made.error().error.code, EEXIST);
  EXPECT_EQ(listing(ctl), before);
  // Nothing of it is left: the same names are free, the pattern starts at 0 again and the
  // ifindexes where they were.
  auto again = ctl.create_links(ns(ctl), dummies({"y5", "x%d"}));
  ASSERT_TRUE(again) << again.error().error.message;
  EXPECT_EQ((*again)[0]->ifindex(), w0 + 1);
  EXPECT_EQ((*again)[1]->name(), "x0");
}

TEST_F(RegisterBatchTest, EachDeviceHasEthernetDefaultsAndAnAddressOfItsOwn) {
  // Linux: alloc_netdev + ether_setup, then the dummy's setup (IFF_NOARP, no multicast).
  auto ctl = engine->control();
  auto made = ctl.create_links(ns(ctl), dummies({"a0", "a1", "a2", "a3"}));
  ASSERT_TRUE(made) << made.error().error.message;
  std::set<std::string> addresses;
  for (Device* d : *made) {
    EXPECT_EQ(d->flags(), static_cast<std::uint32_t>(IFF_BROADCAST | IFF_NOARP)) << d->name();
    EXPECT_EQ(d->mtu(), 1500u);
    EXPECT_EQ(d->txqlen(), 1000u);
    EXPECT_EQ(d->broadcast().to_string(), "ff:ff:ff:ff:ff:ff");
    EXPECT_TRUE(d->address().is_valid_ether()) << d->address().to_string();
    EXPECT_EQ(d->address()[0] & 0x03, 0x02) << "locally administered unicast";
    addresses.insert(d->address().to_string());
  }
  EXPECT_EQ(addresses.size(), made->size());
}

TEST_F(RegisterBatchTest, NameTakenInTheNamespace) {
  auto ctl = engine->control();
  dummy(ctl, "taken");
  auto made = ctl.create_links(ns(ctl), dummies({"e0", "taken"}));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(1));
  EXPECT_EQ(made.error().error.code, EEXIST);
  EXPECT_EQ(ctl.find(ns(ctl), "e0"), nullptr);
}

// A name in use is found when the batch is listed (docs: Control::register_batch); what
// is reported is still the first item at fault in request order, and nothing is left.
TEST_F(RegisterBatchTest, ATakenNameIsReportedBeforeALaterItemsOtherFault) {
  auto ctl = engine->control();
  dummy(ctl, "taken");
  auto state = listing(ctl);
  Stats before = engine->stats();
  auto reqs = dummies({"k0", "taken", "k2"});
  reqs[2].ifindex = 1;  // lo's: EBUSY, found before anything is listed
  auto made = ctl.create_links(ns(ctl), reqs);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(1));
  EXPECT_EQ(made.error().error.code, EEXIST);
  EXPECT_EQ(made.error().error.message, "device \"taken\" already exists");
  EXPECT_TRUE(made.error().error.log_only);
  EXPECT_EQ(engine->stats().notifier_passes, before.notifier_passes);
  EXPECT_EQ(listing(ctl), state);
}

TEST_F(RegisterBatchTest, ATakenNameAfterThousandsUndoesTheirListing) {
  auto ctl = engine->control();
  dummy(ctl, "taken");
  auto state = listing(ctl);
  Stats before = engine->stats();
  std::vector<std::string> names;
  for (int i = 0; i < 2000; ++i) names.push_back(fmt::format("m{}", i));
  names.push_back("taken");
  auto made = ctl.create_links(ns(ctl), dummies(names));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(2000));
  EXPECT_EQ(made.error().error.code, EEXIST);
  EXPECT_EQ(engine->stats().notifier_passes, before.notifier_passes);
  EXPECT_EQ(listing(ctl), state);
  for (const char* n : {"m0", "m1999"}) EXPECT_EQ(ctl.find(ns(ctl), n), nullptr) << n;
  // The names are free again and the ifindexes are handed out from where they were.
  names.pop_back();
  auto again = ctl.create_links(ns(ctl), dummies(names));
  ASSERT_TRUE(again) << again.error().error.message;
  EXPECT_EQ((*again)[0]->ifindex(), state.back().second + 1);
  EXPECT_EQ(ctl.find(ns(ctl), "m1999"), again->back());
}

TEST_F(RegisterBatchTest, IfindexTwiceOrTakenIsBusy) {
  auto ctl = engine->control();
  auto reqs = dummies({"f0", "f1"});
  reqs[0].ifindex = reqs[1].ifindex = 77;
  auto made = ctl.create_links(ns(ctl), reqs);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(1));
  EXPECT_EQ(made.error().error.code, EBUSY);
  reqs[1].ifindex = 1;  // lo's
  made = ctl.create_links(ns(ctl), reqs);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().error.code, EBUSY);
  EXPECT_EQ(ctl.find(ns(ctl), "f0"), nullptr);
}

TEST_F(RegisterBatchTest, KindsThatMakeMoreThanOneDeviceAreNotBatched) {
  auto ctl = engine->control();
  auto reqs = dummies({"g0"});
  reqs.push_back(test::link_req("veth", "g1"));
  auto made = ctl.create_links(ns(ctl), reqs);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(1));
  EXPECT_EQ(made.error().error.code, EOPNOTSUPP);
  EXPECT_EQ(made.error().error.message, "kind \"veth\" cannot be created in a batch");
  EXPECT_EQ(ctl.find(ns(ctl), "g0"), nullptr);
}

class RegisterBatchRoom : public RegisterBatchTest {
  void configure(EngineConfig& cfg) override { cfg.policies.max_devices = 4; }
};

TEST_F(RegisterBatchRoom, ABatchThatDoesNotFitIsRefusedAsAWhole) {
  auto ctl = engine->control();
  auto made = ctl.create_links(ns(ctl), dummies({"h0", "h1", "h2", "h3"}));
  ASSERT_FALSE(made);
  EXPECT_FALSE(made.error().item);
  EXPECT_EQ(made.error().error.code, ENOSPC);
  EXPECT_EQ(ns(ctl).device_count(), 1u);
  EXPECT_TRUE(ctl.create_links(ns(ctl), dummies({"h0", "h1", "h2"})));
}

TEST_F(RegisterBatchRoom, ATakenNameIsReportedBeforeTheRoom) {
  auto ctl = engine->control();
  dummy(ctl, "taken");  // lo and it: 2 of 4
  auto made = ctl.create_links(ns(ctl), dummies({"t0", "taken", "t2"}));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().item, std::optional<std::size_t>(1));
  EXPECT_EQ(made.error().error.code, EEXIST);
  EXPECT_EQ(ns(ctl).device_count(), 2u);
}

}  // namespace
}  // namespace ifcore
