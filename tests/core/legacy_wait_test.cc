// The legacy reference waits the seeds measured, reproduced for real: under poll250 and
// backoff the caller waits (after dropping the control lock) for references that RCU
// callbacks release, re-broadcasting UNREGISTER every second; under event nobody waits.
#include <chrono>

#include "base/rcu.h"
#include "support/engine_fixture.h"

namespace ifcore {
namespace {

using namespace std::chrono_literals;

// Holds a Ref on every device registered, and releases it on UNREGISTER through a chain of
// `generations` RCU callbacks (as IPv6's per-device state does), or only when the event
// is a re-broadcast (`only_on_replay`, as a dst entry found too late does in seed 000).
struct RcuHolder : Subscriber {
  int generations = 1;
  bool only_on_replay = false;
  std::map<Device*, Ref> refs;

  struct Node {
    rcu_head head;
    int left;
    Ref ref;
  };
  static void step(rcu_head* h) {
    auto* n = reinterpret_cast<Node*>(h);
    if (--n->left > 0) {
      rcu::call(&n->head, step);  // queues the next generation
      return;
    }
    delete n;  // drops the Ref
  }

  Result<void> on_event(Control&, const EventInfo& ev) override {
    if (ev.event == NetdevEvent::Register && ev.dev.kind().name() == "dummy")
      refs.emplace(&ev.dev, Ref(ev.dev, "rcu-holder"));
    if (ev.event == NetdevEvent::Unregister && (!only_on_replay || ev.replay)) {
      auto it = refs.find(&ev.dev);
      if (it != refs.end()) {
        auto* n = new Node{{}, generations, std::move(it->second)};
        refs.erase(it);
        rcu::call(&n->head, step);
      }
    }
    return ok();
  }
};

class LegacyWait : public test::CoreTest {
 protected:
  void configure(EngineConfig& cfg) override { cfg.policies = policies; }

  // Makes a fresh engine with `p`, subscribes the holder, deletes one dummy; returns the
  // time the delete took, as its caller saw it.
  Duration delete_one(const Policies& p, int generations, bool only_on_replay = false) {
    engine.reset();
    policies = p;
    SetUp();
    holder.generations = generations;
    holder.only_on_replay = only_on_replay;
    Device* d;
    {
      auto ctl = engine->control();
      ctl.subscribe(holder, {"rcu-holder", 0, false});
      d = dummy(ctl, "w0");
    }
    auto t0 = Clock::now();
    {
      auto ctl = engine->control();
      EXPECT_TRUE(ctl.delete_link(*d));
    }  // the legacy wait runs here, as netdev_run_todo ran at rtnl_unlock
    auto took = Clock::now() - t0;
    EXPECT_TRUE(engine->drain(5s));
    return took;
  }

  Policies policies;
  RcuHolder holder;
};

TEST_F(LegacyWait, EventPolicyNeverWaits) {
  Policies p;
  delete_one(p, 2);
  EXPECT_EQ(engine->stats().ref_waits, 0u);
  EXPECT_EQ(engine->stats().ref_wait_time, Duration::zero());
}

TEST_F(LegacyWait, Poll250SleepsWhenOneBarrierIsNotEnough) {
  Policies p;
  p.ref_wait = RefWaitPolicy::Poll250;
  auto took = delete_one(p, 2);  // seed 001: a second RCU generation is still in flight
  EXPECT_GE(took, 250ms);
  EXPECT_EQ(engine->stats().ref_waits, 1u);
  EXPECT_GE(engine->stats().ref_wait_time, 250ms);
}

TEST_F(LegacyWait, BackoffPaysASecondBarrierInsteadOf250Ms) {
  Policies p;
  p.ref_wait = RefWaitPolicy::Backoff;
  auto took = delete_one(p, 2);
  EXPECT_LT(took, 250ms);
  EXPECT_GE(engine->stats().barriers, 2u);
}

TEST_F(LegacyWait, Poll250WaitsForTheRebroadcastWhenTheReleaseComesLate) {
  Policies p;
  p.ref_wait = RefWaitPolicy::Poll250;
  auto took = delete_one(p, 1, /*only_on_replay=*/true);  // seed 000 with dst at priority 0
  EXPECT_GE(took, 1s);
  EXPECT_GE(engine->stats().rebroadcasts, 1u);
}

}  // namespace
}  // namespace ifcore
