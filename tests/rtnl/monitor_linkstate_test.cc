// tests/rtnl/monitor_linkstate_test.cc — carrier changes seen by a monitor: a session in
// RTNLGRP_LINK gets RTM_NEWLINK with the new operstate when a veth pair's second end comes
// up, at once under the adaptive link watch, after the one-second window under the
// kernel's (with a FakeTime driving the link watch by hand).
#include <net/if.h>

#include <linux/if.h>
#include <linux/veth.h>

#include <chrono>

#include "fixture.h"
#include "ifcore/linkwatch.h"

namespace ifcore::rtnl::test {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kRunning = std::uint32_t{IFF_LOWER_UP} | std::uint32_t{IFF_RUNNING};

class MonitorLinkState : public RtnlTest {
 protected:
  void configure(EngineConfig& cfg) override {
    cfg.time = clock;
    cfg.policies.linkwatch = policy;
  }
  void SetUp() override {
    RtnlTest::SetUp();
    other = open();
    mon = open();
    mon->add_membership(RTNLGRP_LINK);
  }
  void TearDown() override {
    mon.reset();
    other.reset();
    RtnlTest::TearDown();
  }
  // Creates the veth pair a/b (both down) through the first session.
  void make_pair() {
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, veth_pair("a", "b"))).last_error(), 0);
  }
  void set_up(Session& s, const std::string& name) {
    LinkRequest req = named(name);
    req.flags = IFF_UP;
    req.change = IFF_UP;
    ASSERT_EQ(roundtrip(s, link_msg(RTM_SETLINK, NLM_F_ACK, 2, req)).last_error(), 0);
  }
  // The RTM_NEWLINK notifications queued for the monitor since the last call.
  std::vector<wire::LinkMessage> drain() {
    std::vector<wire::LinkMessage> out;
    Datagram d;
    while (mon->pop_notification(d)) {
      auto msgs = wire::split_messages(d);
      EXPECT_TRUE(msgs);
      if (!msgs) continue;
      for (const auto& m : *msgs) {
        if (m.hdr.nlmsg_type != RTM_NEWLINK) continue;
        auto lm = wire::decode_link_message(m);
        EXPECT_TRUE(lm);
        if (lm) out.push_back(*lm);
      }
    }
    return out;
  }
  // The first notification about `name` that reports it operationally up and running.
  static const wire::LinkMessage* up_and_running(const std::vector<wire::LinkMessage>& v,
                                                 const std::string& name) {
    for (const auto& m : v)
      if (m.name == name && m.operstate == IF_OPER_UP && (m.flags & kRunning) == kRunning)
        return &m;
    return nullptr;
  }

  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
  LinkWatchPolicy policy = LinkWatchPolicy::Adaptive;
  std::unique_ptr<Session> other, mon;
};

class KernelMonitorLinkState : public MonitorLinkState {
 protected:
  KernelMonitorLinkState() { policy = LinkWatchPolicy::Kernel; }
};

TEST_F(MonitorLinkState, SecondEndUpAnnouncesBothEndsUpAtOnce) {
  make_pair();
  set_up(*session, "a");
  auto before = drain();
  EXPECT_EQ(up_and_running(before, "a"), nullptr);  // its peer is still down
  set_up(*other, "b");  // another client; no sleep, no run of the link watch
  auto after = drain();
  const wire::LinkMessage* a = up_and_running(after, "a");
  const wire::LinkMessage* b = up_and_running(after, "b");
  ASSERT_NE(a, nullptr) << "no RTM_NEWLINK with IF_OPER_UP and LOWER_UP|RUNNING for a";
  ASSERT_NE(b, nullptr) << "no RTM_NEWLINK with IF_OPER_UP and LOWER_UP|RUNNING for b";
  EXPECT_TRUE(a->flags & IFF_UP);
  EXPECT_TRUE(b->flags & IFF_UP);
  // The last word about each end is that it is up (nothing older follows it).
  for (const std::string name : {"a", "b"}) {
    const wire::LinkMessage* last = nullptr;
    for (const auto& m : after)
      if (m.name == name) last = &m;
    ASSERT_NE(last, nullptr);
    EXPECT_EQ(last->operstate, std::optional<std::uint8_t>(IF_OPER_UP)) << name;
  }
}

TEST_F(KernelMonitorLinkState, FirstEndIsAnnouncedUpOnlyAfterTheWindow) {
  make_pair();
  {
    auto ctl = engine->control();
    run_link_watch(ctl);  // the creation's events: a full run, which opens the window
  }
  set_up(*session, "a");
  set_up(*other, "b");
  {
    auto ctl = engine->control();
    run_link_watch(ctl);  // what the worker would do at once: nothing is urgent
  }
  auto early = drain();
  EXPECT_EQ(up_and_running(early, "a"), nullptr);
  for (const auto& m : early) {
    if (m.name == "a" && (m.flags & IFF_UP)) {
      EXPECT_NE(m.operstate, IF_OPER_UP);
    }
  }

  clock->advance(999ms);
  {
    auto ctl = engine->control();
    run_link_watch(ctl);
  }
  EXPECT_EQ(up_and_running(drain(), "a"), nullptr);

  clock->advance(1ms);
  {
    auto ctl = engine->control();
    run_link_watch(ctl);
  }
  auto late = drain();
  EXPECT_NE(up_and_running(late, "a"), nullptr);
  EXPECT_NE(up_and_running(late, "b"), nullptr);
}

}  // namespace
}  // namespace ifcore::rtnl::test
