// tests/rtnl/daemon_loop_test.cc — the real ifcored's loop under load: pipelined requests
// answered in order, a client that keeps it busy or polls it one request at a time does not
// hide the others, and a burst of notifications reaches a monitor whole.
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "rtnl/daemon_fixture.h"

#ifdef IFCORED_PATH

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

// Many requests queued before the daemon reads any (ip -batch): the daemon reads several
// per turn and sends the replies in batches; every request gets its own ACK, in order, with
// busy polling on (the default) and off.
TEST_F(DaemonTest, PipelinedRequestsAreAnsweredInOrder) {
  for (const char* busy_poll : {"50", "0"}) {
    SCOPED_TRACE(std::string("--busy-poll ") + busy_poll);
    start({"--busy-poll", busy_poll});
    Conn c(try_connect());
    c.control({});
    constexpr std::uint32_t kN = 300;
    for (std::uint32_t i = 1; i <= kN; ++i)
      c.send_dg(link_msg(RTM_NEWLINK, kCreate, i, named("p" + std::to_string(i), "dummy")));
    // One that fails in the middle of the stream keeps its place too.
    c.send_dg(link_msg(RTM_NEWLINK, kCreate, kN + 1, named("p1", "dummy")));
    for (std::uint32_t i = 1; i <= kN + 1; ++i) {
      Datagram d = c.recv_dg();
      auto m = one(d);
      ASSERT_EQ(m.hdr.nlmsg_type, NLMSG_ERROR);
      EXPECT_EQ(m.hdr.nlmsg_seq, i);
      EXPECT_EQ(wire::decode_error(m)->error, i <= kN ? 0 : EEXIST);
    }
    kill_daemon();
  }
}

// A client that keeps requests queued all the time does not starve another: the loop
// reads a budget of datagrams per client and turn.
TEST_F(DaemonTest, AClientThatKeepsTheDaemonBusyDoesNotStarveAnother) {
  start();
  Conn a(try_connect());
  a.control({});
  timeval tv{0, 200000};  // the writer stops within 0.2 s once asked to
  setsockopt(a.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  // One thread writes as fast as the socket takes requests (64 to a datagram), another
  // reads the answers.
  std::thread writer([&] {
    wire::GetLinkRequest lo;
    lo.ifindex = 1;
    Bytes m;
    for (std::uint32_t i = 0; i < 64; ++i) {
      Bytes one = getlink(100 + i, lo);
      m.insert(m.end(), one.begin(), one.end());
    }
    while (!stop.load()) (void)::send(a.fd, m.data(), m.size(), 0);
  });
  std::thread reader([&] {
    while (!stop.load())
      if (!a.recv_dg().empty()) answered.fetch_add(1);
  });
  while (answered.load() < 256) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Conn b(try_connect());  // SO_RCVTIMEO of 5 s: a starved client gets an empty datagram
  b.control({});
  for (std::uint32_t i = 1; i <= 20; ++i) {
    b.send_dg(link_msg(RTM_NEWLINK, kCreate, i, named("s" + std::to_string(i), "dummy")));
    Datagram d = b.recv_dg();
    ASSERT_FALSE(d.empty()) << "request " << i << " of the second client was not answered";
    auto m = one(d);
    EXPECT_EQ(m.hdr.nlmsg_seq, i);
    EXPECT_EQ(wire::decode_error(m)->error, 0);
  }
  stop = true;
  writer.join();
  reader.join();
}

// A client that sends one request at a time, each as soon as the last is answered, keeps
// the loop asking it directly (busy polling); the others are still heard: a new connection
// is accepted, its request answered, and a monitor gets the notification. When the busy
// client goes away, the loop goes on with the rest. A poll window of 1 s keeps the loop
// polling for as long as the busy client runs.
TEST_F(DaemonTest, OneRequestAtATimeClientDoesNotHideTheOthers) {
  start({"--busy-poll", "1000000"});
  Conn mon(join_link_group(try_connect()));
  auto busy = std::make_unique<Conn>(try_connect());
  busy->control({});
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::thread pinger([&] {
    wire::GetLinkRequest lo;
    lo.ifindex = 1;
    for (std::uint32_t seq = 100; !stop.load(); ++seq) {
      busy->send_dg(getlink(seq, lo));
      if (busy->recv_dg().empty()) return;
      answered.fetch_add(1);
    }
  });
  struct Joiner {  // however the test ends, the pinger stops (its reads time out in 5 s)
    std::atomic<bool>& stop;
    std::thread& t;
    ~Joiner() {
      stop = true;
      if (t.joinable()) t.join();
    }
  } joiner{stop, pinger};
  while (answered.load() < 200) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Conn w(try_connect());
  w.control({});
  w.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("q0", "dummy")));
  Datagram d = w.recv_dg();
  ASSERT_FALSE(d.empty()) << "the second client was not answered";
  EXPECT_EQ(wire::decode_error(one(d))->error, 0);
  Datagram n = mon.recv_dg();
  ASSERT_FALSE(n.empty()) << "the monitor heard nothing";
  EXPECT_EQ(one(n).hdr.nlmsg_type, RTM_NEWLINK);
  stop = true;
  pinger.join();
  EXPECT_GT(answered.load(), 200);
  busy.reset();  // the client the loop polled last closes
  w.send_dg(link_msg(RTM_NEWLINK, kCreate, 2, named("q1", "dummy")));
  d = w.recv_dg();
  ASSERT_FALSE(d.empty()) << "no answer after the busy client left";
  EXPECT_EQ(wire::decode_error(one(d))->error, 0);
}

// A burst of changes queues more notifications than the daemon moves per turn (and only
// the first one wakes its loop): the monitor still receives every one, in order.
TEST_F(DaemonTest, MonitorReceivesEveryNotificationOfABurst) {
  start();
  Conn mon(join_link_group(try_connect()));
  Conn w(try_connect());
  w.control({});
  constexpr int kN = 500;
  for (int i = 0; i < kN; ++i)
    w.send_dg(link_msg(RTM_NEWLINK, kCreate, static_cast<std::uint32_t>(i + 1),
                       named("m" + std::to_string(i), "dummy")));
  for (int i = 0; i < kN; ++i) EXPECT_EQ(one(w.recv_dg()).hdr.nlmsg_seq, std::uint32_t(i + 1));
  int seen = 0;
  while (seen < kN) {
    Datagram d = mon.recv_dg();
    ASSERT_FALSE(d.empty()) << "after " << seen << " notifications";
    auto msgs = wire::split_messages(d);
    ASSERT_TRUE(msgs);
    for (const auto& m : *msgs) {
      ASSERT_EQ(m.hdr.nlmsg_type, RTM_NEWLINK);
      auto lm = wire::decode_link_message(m);
      ASSERT_TRUE(lm);
      EXPECT_EQ(lm->name, "m" + std::to_string(seen));
      ++seen;
    }
  }
}

}  // namespace
}  // namespace ifcore::rtnl::test

#endif  // IFCORED_PATH
