// The notifier chain: order by priority then registration, replay for late subscribers,
// vetoes that leave nothing changed.
#include <net/if.h>

#include "support/engine_fixture.h"

namespace ifcore {
namespace {

// Records every event it sees into a shared journal, and can veto one event kind.
struct Recorder : Subscriber {
  std::string tag;
  std::vector<std::string>* journal;
  std::optional<NetdevEvent> veto;
  Error veto_error{EPERM, "vetoed by test"};
  Recorder(std::string t, std::vector<std::string>* j) : tag(std::move(t)), journal(j) {}
  Result<void> on_event(Control&, const EventInfo& ev) override {
    journal->push_back(fmt::format("{}:{}:{}{}", tag, to_string(ev.event), ev.dev.name(),
                                   ev.replay ? ":replay" : ""));
    if (veto && *veto == ev.event) return fail(veto_error);
    return ok();
  }
  void on_batch(Control&, BatchEvent, std::span<Device* const> devs) override {
    journal->push_back(fmt::format("{}:BATCH:{}", tag, devs.size()));
  }
};

// Subscribers live in the fixture, so they outlive the engine (destroyed in TearDown),
// whose teardown still notifies them.
class Notifier : public test::CoreTest {
 protected:
  Recorder& recorder(std::string tag) {
    recorders_.push_back(std::make_unique<Recorder>(std::move(tag), &j));
    return *recorders_.back();
  }
  std::vector<std::string> j;

 private:
  std::vector<std::unique_ptr<Recorder>> recorders_;
};

TEST_F(Notifier, OrderIsPriorityThenRegistration) {
  Recorder &a = recorder("a"), &b = recorder("b"), &c = recorder("c"), &d = recorder("d");
  auto ctl = engine->control();
  ctl.subscribe(a, {"a", 0, false});
  ctl.subscribe(b, {"b", 10, false});
  ctl.subscribe(c, {"c", 0, false});
  ctl.subscribe(d, {"d", -10, false});
  dummy(ctl, "n0");
  std::vector<std::string> want = {"b:REGISTER:n0", "a:REGISTER:n0", "c:REGISTER:n0",
                                   "d:REGISTER:n0"};
  EXPECT_EQ(j, want);
}

TEST_F(Notifier, LateSubscriberIsReplayedRegisterAndUp) {
  auto ctl = engine->control();
  Device* up = dummy(ctl, "up0");
  ASSERT_TRUE(ctl.open(*up));
  dummy(ctl, "down0");
  Recorder& late = recorder("late");
  ctl.subscribe(late, {"late", 0, true});
  std::vector<std::string> want = {"late:REGISTER:lo:replay", "late:REGISTER:up0:replay",
                                   "late:UP:up0:replay", "late:REGISTER:down0:replay"};
  EXPECT_EQ(j, want);
}

TEST_F(Notifier, LeavingSubscriberMayAskForDownAndUnregister) {
  auto ctl = engine->control();
  Device* up = dummy(ctl, "up0");
  ASSERT_TRUE(ctl.open(*up));
  Recorder& r = recorder("r");
  auto id = ctl.subscribe(r, {"r", 0, false});
  ctl.unsubscribe(id, true);
  std::vector<std::string> want = {"r:UNREGISTER:lo:replay", "r:GOING_DOWN:up0:replay",
                                   "r:DOWN:up0:replay", "r:UNREGISTER:up0:replay"};
  EXPECT_EQ(j, want);
  j.clear();
  dummy(ctl, "after");
  EXPECT_TRUE(j.empty());
}

TEST_F(Notifier, PreUpVetoLeavesTheDeviceDown) {
  Recorder &first = recorder("first"), &vetoer = recorder("vetoer"), &last = recorder("last");
  vetoer.veto = NetdevEvent::PreUp;
  vetoer.veto_error = Error{EADDRINUSE, "device \"v0\": vetoed"};
  auto ctl = engine->control();
  Device* d = dummy(ctl, "v0");
  ctl.subscribe(first, {"first", 5, false});
  ctl.subscribe(vetoer, {"vetoer", 0, false});
  ctl.subscribe(last, {"last", -5, false});
  auto r = ctl.open(*d);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EADDRINUSE);
  EXPECT_EQ(r.error().message, "device \"v0\": vetoed");
  EXPECT_FALSE(d->is_up());
  std::vector<std::string> want = {"first:PRE_UP:v0", "vetoer:PRE_UP:v0"};
  EXPECT_EQ(j, want);  // the chain stopped; nobody heard UP
}

TEST_F(Notifier, MtuVetoLeavesTheMtu) {
  Recorder& vetoer = recorder("vetoer");
  vetoer.veto = NetdevEvent::PreChangeMtu;
  auto ctl = engine->control();
  Device* d = dummy(ctl, "m0");
  ctl.subscribe(vetoer, {"vetoer", 0, false});
  auto r = ctl.set_mtu(*d, 9000);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EPERM);
  EXPECT_EQ(d->mtu(), 1500u);
}

TEST_F(Notifier, RegisterVetoUnwindsThoseAlreadyNotified) {
  Recorder &first = recorder("first"), &vetoer = recorder("vetoer"), &last = recorder("last");
  vetoer.veto = NetdevEvent::Register;
  auto ctl = engine->control();
  ctl.subscribe(first, {"first", 5, false});
  ctl.subscribe(vetoer, {"vetoer", 0, false});
  ctl.subscribe(last, {"last", -5, false});
  auto before = ns(ctl).device_count();
  auto r = ctl.create_link(ns(ctl), test::link_req("dummy", "r0"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EPERM);
  EXPECT_EQ(ns(ctl).device_count(), before);
  EXPECT_EQ(ctl.find(ns(ctl), "r0"), nullptr);
  std::vector<std::string> want = {"first:REGISTER:r0", "vetoer:REGISTER:r0",
                                   "first:UNREGISTER:r0"};
  EXPECT_EQ(j, want);
  // The name is free again.
  vetoer.veto.reset();
  EXPECT_NE(dummy(ctl, "r0"), nullptr);
}

TEST_F(Notifier, MaskedSubscriberHearsOnlyItsEvents) {
  Recorder &all = recorder("all"), &some = recorder("some");
  auto ctl = engine->control();
  Device* up = dummy(ctl, "up0");
  ASSERT_TRUE(ctl.open(*up));
  ctl.subscribe(all, {"all", 5, false});
  // Its replays are masked too: Up is replayed, Register is not.
  auto id =
      ctl.subscribe(some, {"some", 0, true, events_of(NetdevEvent::Up, NetdevEvent::Unregister)});
  std::vector<std::string> want = {"some:UP:up0:replay"};
  EXPECT_EQ(j, want);
  j.clear();
  Device* d = dummy(ctl, "m0");
  ASSERT_TRUE(ctl.open(*d));
  ASSERT_TRUE(ctl.delete_link(*d));
  want = {"all:REGISTER:m0",   "all:PRE_UP:m0", "all:UP:m0",         "some:UP:m0",
          "all:GOING_DOWN:m0", "all:DOWN:m0",   "all:UNREGISTER:m0", "some:UNREGISTER:m0",
          "all:UNINIT:m0",     "all:BATCH:1",   "some:BATCH:1"};
  EXPECT_EQ(j, want);
  j.clear();
  ctl.unsubscribe(id, true);  // the leaving replay is masked as well
  want = {"some:UNREGISTER:lo:replay", "some:UNREGISTER:up0:replay"};
  EXPECT_EQ(j, want);
}

TEST_F(Notifier, RegisterVetoUnwindsOnlyThoseThatTakeUnregister) {
  Recorder &deaf = recorder("deaf"), &first = recorder("first"), &vetoer = recorder("vetoer");
  vetoer.veto = NetdevEvent::Register;
  auto ctl = engine->control();
  ctl.subscribe(deaf, {"deaf", 9, false, event_bit(NetdevEvent::Register)});
  ctl.subscribe(first, {"first", 5, false});
  ctl.subscribe(vetoer, {"vetoer", 0, false});
  ASSERT_FALSE(ctl.create_link(ns(ctl), test::link_req("dummy", "r0")));
  std::vector<std::string> want = {"deaf:REGISTER:r0", "first:REGISTER:r0", "vetoer:REGISTER:r0",
                                   "first:UNREGISTER:r0"};
  EXPECT_EQ(j, want);
}

TEST_F(Notifier, ChangeLinkRollsBackEarlierStepsOnAVeto) {
  Recorder& vetoer = recorder("vetoer");
  vetoer.veto = NetdevEvent::PreUp;
  auto ctl = engine->control();
  Device* d = dummy(ctl, "c0");
  ctl.subscribe(vetoer, {"vetoer", 0, false});
  LinkRequest req;
  req.name = "c1";
  req.mtu = 9000;
  req.group = 7;
  req.flags = IFF_UP;
  req.change = IFF_UP;
  auto r = ctl.change_link(*d, req);
  ASSERT_FALSE(r);
  EXPECT_EQ(d->name(), "c0");
  EXPECT_EQ(d->mtu(), 1500u);
  EXPECT_EQ(d->group(), 0u);
  EXPECT_FALSE(d->is_up());
  EXPECT_EQ(ctl.find(ns(ctl), "c1"), nullptr);
}

// Linux: unregister_netdevice_many_notify takes the batch device by device, each told
// NETDEV_UNREGISTER and let go by its driver (UNINIT: ifcore's mark of that) before the next.
TEST_F(Notifier, UnregisterBatchEventSeesTheWholeBatch) {
  Recorder& r = recorder("r");
  auto ctl = engine->control();
  std::vector<Device*> devs;
  for (int i = 0; i < 3; ++i) devs.push_back(dummy(ctl, "b%d"));
  ctl.subscribe(r, {"r", 0, false});
  ASSERT_TRUE(ctl.delete_links(devs));
  std::vector<std::string> want = {"r:UNREGISTER:b0", "r:UNINIT:b0",     "r:UNREGISTER:b1",
                                   "r:UNINIT:b1",     "r:UNREGISTER:b2", "r:UNINIT:b2",
                                   "r:BATCH:3"};
  EXPECT_EQ(j, want);
}

TEST_F(Notifier, MtuRangeMessagesAreLinuxs) {
  auto ctl = engine->control();
  auto v = ctl.create_namespace("v");
  ASSERT_TRUE(v);
  Device* lo = (*v)->loopback();
  ASSERT_TRUE(ctl.set_mtu(*lo, 1280));
  Device* d = dummy(ctl, "mm");
  ASSERT_TRUE(ctl.set_mtu(*d, 100000));  // dummy: no maximum, as Linux
  EXPECT_EQ(d->mtu(), 100000u);
}

// Copy-on-write: a subscriber that changes the chain while it is called (here it
// unsubscribes the next one and subscribes a new one) does not change the call under way,
// which runs to its end on the list of its start; the next call sees the change.
TEST_F(Notifier, ChangingTheChainDuringACallChangesOnlyLaterCalls) {
  struct Changer : Subscriber {
    std::vector<std::string>* journal = nullptr;
    SubscriptionId victim = 0;
    Subscriber* newcomer = nullptr;
    bool done = false;
    Result<void> on_event(Control& ctl, const EventInfo& ev) override {
      journal->push_back(fmt::format("changer:{}:{}", to_string(ev.event), ev.dev.name()));
      if (!done && ev.event == NetdevEvent::Register && !ev.replay) {
        done = true;
        ctl.unsubscribe(victim, false);
        ctl.subscribe(*newcomer, {"new", -20, false});
      }
      return ok();
    }
  } changer;
  Recorder &victim = recorder("victim"), &newcomer = recorder("new");
  changer.journal = &j;
  changer.newcomer = &newcomer;
  auto ctl = engine->control();
  SubscriptionId changer_id = ctl.subscribe(changer, {"changer", 10, false});
  changer.victim = ctl.subscribe(victim, {"victim", 0, false});
  dummy(ctl, "n0");
  dummy(ctl, "n1");
  std::vector<std::string> want = {"changer:REGISTER:n0", "victim:REGISTER:n0",
                                   "changer:REGISTER:n1", "new:REGISTER:n1"};
  EXPECT_EQ(j, want);
  ctl.unsubscribe(changer_id);  // it lives on this stack, not as long as the engine
}

// A subscriber that joins the chain during a Register is not part of that call: when a
// later one vetoes, the Unregister of the rollback goes to exactly those the call reached
// before the veto, counted on the list the call walked (not on the chain as it is now,
// where the newcomer sits before them).
TEST_F(Notifier, AVetoedRegisterRollsBackOverTheListTheCallWalked) {
  struct Joiner : Subscriber {
    std::vector<std::string>* journal = nullptr;
    Subscriber* newcomer = nullptr;
    SubscriptionId newcomer_id = 0;
    Result<void> on_event(Control& ctl, const EventInfo& ev) override {
      journal->push_back(fmt::format("joiner:{}:{}", to_string(ev.event), ev.dev.name()));
      if (ev.event == NetdevEvent::Register && !newcomer_id)
        newcomer_id = ctl.subscribe(*newcomer, {"new", 20, false});
      return ok();
    }
  } joiner;
  Recorder &newcomer = recorder("new"), &vetoer = recorder("vetoer");
  vetoer.veto = NetdevEvent::Register;
  joiner.journal = &j;
  joiner.newcomer = &newcomer;
  auto ctl = engine->control();
  SubscriptionId joiner_id = ctl.subscribe(joiner, {"joiner", 10, false});
  ctl.subscribe(vetoer, {"vetoer", 0, false});
  auto r = ctl.create_link(ns(ctl), test::link_req("dummy", "n0"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EPERM);
  std::vector<std::string> want = {"joiner:REGISTER:n0", "vetoer:REGISTER:n0",
                                   "joiner:UNREGISTER:n0"};
  EXPECT_EQ(j, want) << "the newcomer heard no Register, so it hears no Unregister";
  EXPECT_EQ(ctl.find(ns(ctl), "n0"), nullptr);
  ctl.unsubscribe(joiner.newcomer_id);
  ctl.unsubscribe(joiner_id);
}

}  // namespace
}  // namespace ifcore
