// The frame path: frames cross veth, vlan, macvlan and bridge, are dropped without
// carrier, the counters match, and a device deleted with frames queued is finalized once
// they are gone. Also the probe.
#include <chrono>

#include "kinds/bridge.h"
#include "linkstate_fixture.h"

namespace ifcore::test {
namespace {

using namespace std::chrono_literals;

class FrameTest : public LinkStateTest {
 protected:
  void configure(EngineConfig& cfg) override {
    cfg.time = clock;
    cfg.track_refs = true;
  }
  // A veth pair, both ends up.
  std::pair<Device*, Device*> pair(Control& ctl, std::string a, std::string b) {
    Device* x = must(ctl.create_link(def(ctl), veth(a, b)));
    Device* y = ctl.find(def(ctl), b);
    EXPECT_TRUE(ctl.open(*x));
    EXPECT_TRUE(ctl.open(*y));
    return {x, y};
  }
  std::shared_ptr<RxQueue> queue(Control& ctl, Device* d) {
    auto q = open_rx_queue(ctl, *d, 64);
    EXPECT_TRUE(q);
    return q ? *q : nullptr;
  }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
};

TEST_F(FrameTest, VethDeliversToThePeerAndCounts) {
  auto ctl = engine->control();
  auto [a, b] = pair(ctl, "a", "b");
  auto qb = queue(ctl, b);
  EXPECT_TRUE(transmit(*a, frame(b->address(), a->address(), 100)));
  ASSERT_EQ(qb->size(), 1u);
  auto f = qb->pop();
  EXPECT_EQ(f->bytes.size(), 100u);
  EXPECT_EQ(f->dev.get(), b);
  EXPECT_EQ(tx(a), 1u);
  EXPECT_EQ(a->counters().tx_bytes.load(), 100u);
  EXPECT_EQ(rx(b), 1u);
  EXPECT_EQ(b->counters().rx_bytes.load(), 100u);
  EXPECT_EQ(rx(a), 0u);
}

TEST_F(FrameTest, NoCarrierDropsAndCounts) {
  auto ctl = engine->control();
  auto [a, b] = pair(ctl, "a", "b");
  ASSERT_TRUE(ctl.close(*b));  // a loses carrier
  EXPECT_FALSE(transmit(*a, frame(b->address(), a->address())));
  EXPECT_FALSE(transmit(*b, frame(a->address(), b->address())));  // down
  EXPECT_EQ(tx_dropped(a), 1u);
  EXPECT_EQ(tx_dropped(b), 1u);
  EXPECT_EQ(tx(a), 0u);
  EXPECT_EQ(rx(b), 0u);
  Device* d = dummy(ctl, "d0");  // down: dropped; up: sent (and gone)
  EXPECT_FALSE(transmit(*d, frame(broadcast(), d->address())));
  ASSERT_TRUE(ctl.open(*d));
  EXPECT_TRUE(transmit(*d, frame(broadcast(), d->address())));
  EXPECT_EQ(tx(d), 1u);
  EXPECT_EQ(tx_dropped(d), 1u);
}

TEST_F(FrameTest, VlansTagAndStrip) {
  auto ctl = engine->control();
  auto [a, b] = pair(ctl, "a", "b");
  Device* a10 = must(ctl.create_link(def(ctl), vlan("a.10", a->ifindex(), 10)));
  Device* b10 = must(ctl.create_link(def(ctl), vlan("b.10", b->ifindex(), 10)));
  Device* b20 = must(ctl.create_link(def(ctl), vlan("b.20", b->ifindex(), 20)));
  for (Device* v : {a10, b10, b20}) ASSERT_TRUE(ctl.open(*v));
  auto qb = queue(ctl, b), qb10 = queue(ctl, b10), qb20 = queue(ctl, b20);
  EXPECT_TRUE(transmit(*a10, frame(b10->address(), a10->address(), 60)));
  ASSERT_EQ(qb10->size(), 1u);
  EXPECT_EQ(qb->size(), 0u);
  EXPECT_EQ(qb20->size(), 0u);
  auto f = qb10->pop();
  EXPECT_EQ(f->bytes.size(), 60u);  // untagged again
  EXPECT_EQ(frame_ethertype(*f), 0x0800);
  EXPECT_EQ(a->counters().tx_bytes.load(), 64u);  // tagged on the wire
  EXPECT_EQ(tx(a10), 1u);
  EXPECT_EQ(tx(a), 1u);
  EXPECT_EQ(rx(b), 1u);
  EXPECT_EQ(rx(b10), 1u);
  // Untagged frames stay with the lower.
  EXPECT_TRUE(transmit(*a, frame(b->address(), a->address())));
  EXPECT_EQ(qb->size(), 1u);
  EXPECT_EQ(qb10->size(), 0u);
}

// The lower's vlan table: ids across the range, each frame to its own vlan; a deleted id takes
// nothing until a new vlan has it, and the same id twice is EEXIST.
TEST_F(FrameTest, VlanTableFindsEveryIdAndForgetsDeletedOnes) {
  auto ctl = engine->control();
  auto [a, b] = pair(ctl, "a", "b");
  Device* a777 = must(ctl.create_link(def(ctl), vlan("a.777", a->ifindex(), 777)));
  ASSERT_TRUE(ctl.open(*a777));
  for (int id = 3; id < 4095; id += 100)
    ASSERT_TRUE(ctl.create_link(def(ctl), vlan("b." + std::to_string(id), b->ifindex(), id)));
  Device* b777 = must(ctl.create_link(def(ctl), vlan("b.777", b->ifindex(), 777)));
  auto dup = ctl.create_link(def(ctl), vlan("b.777x", b->ifindex(), 777));
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, EEXIST);
  ASSERT_TRUE(ctl.open(*b777));
  auto qb = queue(ctl, b), qb777 = queue(ctl, b777);
  EXPECT_TRUE(transmit(*a777, frame(b777->address(), a777->address())));
  EXPECT_EQ(qb777->size(), 1u);
  EXPECT_EQ(qb->size(), 0u);
  // Deleted: the tagged frame ends at the lower, untaken.
  ASSERT_TRUE(ctl.delete_link(*b777));
  EXPECT_TRUE(transmit(*a777, frame(b->address(), a777->address())));
  EXPECT_EQ(qb->size(), 1u);
  // The id is free again.
  Device* again = must(ctl.create_link(def(ctl), vlan("b.777", b->ifindex(), 777)));
  ASSERT_TRUE(ctl.open(*again));
  auto qagain = queue(ctl, again);
  EXPECT_TRUE(transmit(*a777, frame(again->address(), a777->address())));
  EXPECT_EQ(qagain->size(), 1u);
  EXPECT_EQ(qb->size(), 1u);
}

TEST_F(FrameTest, MacvlansTakeTheirAddressAndAllTakeBroadcast) {
  auto ctl = engine->control();
  auto [a, b] = pair(ctl, "a", "b");
  Device* m1 = must(ctl.create_link(def(ctl), macvlan("m1", b->ifindex())));
  Device* m2 = must(ctl.create_link(def(ctl), macvlan("m2", b->ifindex())));
  ASSERT_TRUE(ctl.open(*m1));
  ASSERT_TRUE(ctl.open(*m2));
  auto qb = queue(ctl, b), q1 = queue(ctl, m1), q2 = queue(ctl, m2);
  ASSERT_TRUE(b->rx_hooks_rcu());
  EXPECT_TRUE(b->rx_hooks_rcu()->handler);
  EXPECT_EQ(b->rx_hooks_rcu()->handler_devs.size(), 2u);
  EXPECT_TRUE(transmit(*a, frame(m1->address(), a->address())));
  EXPECT_EQ(q1->size(), 1u);
  EXPECT_EQ(q2->size(), 0u);
  EXPECT_EQ(qb->size(), 0u);
  EXPECT_TRUE(transmit(*a, frame(broadcast(), a->address())));
  EXPECT_EQ(q1->size(), 2u);
  EXPECT_EQ(q2->size(), 1u);
  EXPECT_EQ(qb->size(), 1u);
  EXPECT_TRUE(transmit(*a, frame(HwAddr::ethernet({2, 9, 9, 9, 9, 9}), a->address())));
  EXPECT_EQ(qb->size(), 2u);  // nobody's address: the lower keeps it
  EXPECT_EQ(rx(m1), 2u);
  EXPECT_EQ(rx(m2), 1u);
  EXPECT_EQ(rx(b), 3u);
  // A macvlan sends through its lower.
  auto qa = queue(ctl, a);
  EXPECT_TRUE(transmit(*m2, frame(a->address(), m2->address())));
  EXPECT_EQ(qa->size(), 1u);
  EXPECT_EQ(tx(m2), 1u);
  EXPECT_EQ(tx(b), 1u);
}

TEST_F(FrameTest, BridgeLearnsFloodsForwardsAgesAndFlushes) {
  auto ctl = engine->control();
  Device* br = must(ctl.create_link(def(ctl), link_req("bridge", "br0")));
  ASSERT_TRUE(ctl.open(*br));
  std::vector<Device*> ports, hosts;
  std::vector<std::shared_ptr<RxQueue>> qs;
  for (int i = 0; i < 3; ++i) {
    auto [p, h] = pair(ctl, "p" + std::to_string(i), "h" + std::to_string(i));
    ASSERT_TRUE(ctl.set_master(*p, br));
    ports.push_back(p);
    hosts.push_back(h);
    qs.push_back(queue(ctl, h));
  }
  // Unknown destination: flooded to every port but the ingress.
  EXPECT_TRUE(transmit(*hosts[0], frame(hosts[1]->address(), hosts[0]->address())));
  EXPECT_EQ(qs[0]->size(), 0u);
  EXPECT_EQ(qs[1]->size(), 1u);
  EXPECT_EQ(qs[2]->size(), 1u);
  EXPECT_EQ(kinds::Bridge::fdb_size(*br), 1u);
  // The reply's destination is known: only its port.
  EXPECT_TRUE(transmit(*hosts[1], frame(hosts[0]->address(), hosts[1]->address())));
  EXPECT_EQ(qs[0]->size(), 1u);
  EXPECT_EQ(qs[2]->size(), 1u);
  EXPECT_EQ(kinds::Bridge::fdb_size(*br), 2u);
  EXPECT_EQ(tx(ports[0]), 1u);
  EXPECT_EQ(tx(ports[2]), 1u);
  EXPECT_EQ(rx(ports[1]), 1u);
  // Broadcast: every other port, and the bridge device itself.
  auto qbr = queue(ctl, br);
  EXPECT_TRUE(transmit(*hosts[2], frame(broadcast(), hosts[2]->address())));
  EXPECT_EQ(qs[0]->size(), 2u);
  EXPECT_EQ(qs[1]->size(), 2u);
  EXPECT_EQ(qbr->size(), 1u);
  EXPECT_EQ(kinds::Bridge::fdb_size(*br), 3u);
  // A port that leaves takes its entries with it.
  ASSERT_TRUE(ctl.set_master(*ports[2], nullptr));
  EXPECT_EQ(kinds::Bridge::fdb_size(*br), 2u);
  // Entries age out (ageing_time 300 s): h0 is unknown again, so flooded (to h1 only now).
  clock->advance(301s);
  EXPECT_TRUE(transmit(*hosts[1], frame(hosts[0]->address(), hosts[1]->address())));
  EXPECT_EQ(qs[0]->size(), 3u);
  EXPECT_EQ(qs[2]->size(), 1u);  // no longer a port
  // A port without carrier does not forward.
  ASSERT_TRUE(ctl.close(*hosts[0]));
  EXPECT_FALSE(transmit(*hosts[0], frame(hosts[1]->address(), hosts[0]->address())));
}

TEST_F(FrameTest, DeviceDeletedWithFramesQueuedIsFinalizedWhenTheyAreGone) {
  std::shared_ptr<RxQueue> qb;
  {
    auto ctl = engine->control();
    auto [a, b] = pair(ctl, "a", "b");
    qb = queue(ctl, b);
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(transmit(*a, frame(b->address(), a->address())));
    ASSERT_EQ(qb->size(), 5u);
    ASSERT_TRUE(ctl.delete_link(*a));  // takes b too
  }
  // b waits for the five frames' references; nothing sleeps meanwhile.
  EXPECT_GE(engine->pending_finalization(), 1u);
  auto waiting = engine->waiting_devices();
  ASSERT_FALSE(waiting.empty());
  EXPECT_EQ(waiting.front().usage_count, 5);
  while (auto f = qb->pop()) {
  }
  EXPECT_TRUE(engine->drain(5s));
  EXPECT_EQ(engine->pending_finalization(), 0u);
  EXPECT_TRUE(engine->waiting_devices().empty());
}

TEST_F(FrameTest, ProbeCountsArrivals) {
  {
    auto ctl = engine->control();
    pair(ctl, "a", "b");
  }
  ProbeOptions o;
  o.count = 3;
  o.max_attempts = 10;
  o.interval = Duration::zero();
  auto r = probe(*engine, "default", "a", "b", o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->attempts, 3u);
  EXPECT_EQ(r->received, 3u);
  ASSERT_TRUE(r->first_arrival);
  EXPECT_LT(*r->first_arrival, 1s);
  EXPECT_FALSE(probe(*engine, "default", "a", "nope", o));
  EXPECT_FALSE(probe(*engine, "nope", "a", "b", o));
}

class KernelFrameTest : public FrameTest {
 protected:
  void configure(EngineConfig& cfg) override {
    FrameTest::configure(cfg);
    cfg.policies.linkwatch = LinkWatchPolicy::Kernel;
  }
};

TEST_F(KernelFrameTest, ProbeSeesTheSecondOfSeed003) {
  {
    auto ctl = engine->control();
    must(ctl.create_link(def(ctl), veth("a", "b")));
    run_link_watch(ctl);  // the creation events open the window
    ASSERT_TRUE(ctl.open(*ctl.find(def(ctl), "a")));
    ASSERT_TRUE(ctl.open(*ctl.find(def(ctl), "b")));
  }
  ProbeOptions o;
  o.max_attempts = 3;
  o.interval = Duration::zero();
  auto r = probe(*engine, "default", "a", "b", o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->received, 0u);  // a's transmit path waits for the link watch
  EXPECT_EQ(r->sent, 0u);
  {
    auto ctl = engine->control();
    clock->advance(1s);
    run_link_watch(ctl);
  }
  r = probe(*engine, "default", "a", "b", o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->received, 1u);
}

}  // namespace
}  // namespace ifcore::test
