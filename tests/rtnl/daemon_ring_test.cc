// tests/rtnl/daemon_ring_test.cc — the real ifcored serving clients on mapped rings
// (src/rtnl/wire/ring.h): requests, replies, dumps and notifications through shared memory, the
// doorbell when the daemon sleeps, replies too large for a ring, refusals that change
// nothing, and a ring written with nonsense.
#include <sys/mman.h>

#include <atomic>
#include <cstring>

#include "rtnl/daemon_fixture.h"
#include "rtnl/wire/ring_client.h"

#ifdef IFCORED_PATH

namespace ifcore::rtnl::test {
namespace {

TEST_F(DaemonTest, RingsCarryRepliesDumpsAndNotifications) {
  start();
  RingConn mon(try_connect());
  ControlRequest join;
  join.add_membership = {RTNLGRP_LINK};
  ASSERT_EQ(mon.switch_rings(join), 0);
  RingConn c(try_connect());
  ASSERT_EQ(c.switch_rings({}), 0);
  EXPECT_EQ(c.ring->size(), kRingDefaultSize);

  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 3, named("d0", "dummy")));
  Replies r = c.until_end();
  EXPECT_EQ(r.last_error(), 0);
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_seq, 3u);
  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 4, named("d0", "dummy")));
  EXPECT_EQ(c.until_end().last_error(), EEXIST);

  wire::GetLinkRequest g;
  g.dump = true;
  c.send_dg(getlink(5, g));
  r = c.until_end();
  ASSERT_EQ(r.msgs.size(), 3u);  // lo, d0, DONE
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);

  Datagram n = mon.recv_dg();
  ASSERT_FALSE(n.empty()) << "the monitor on rings heard nothing";
  auto lm = wire::decode_link_message(one(n));
  ASSERT_TRUE(lm);
  EXPECT_EQ(lm->name, "d0");
  // Nothing came on the sockets but the ring files and doorbells.
  EXPECT_TRUE(c.kept.empty());
  EXPECT_TRUE(mon.kept.empty());
}

// With --busy-poll 0 the loop sleeps in epoll_wait after every turn: each request reaches it
// through the doorbell, never through polling.
TEST_F(DaemonTest, RingRequestsWakeASleepingDaemon) {
  for (const char* busy_poll : {"0", "50"}) {
    SCOPED_TRACE(std::string("--busy-poll ") + busy_poll);
    start({"--busy-poll", busy_poll});
    RingConn c(try_connect());
    ASSERT_EQ(c.switch_rings({}), 0);
    for (std::uint32_t i = 1; i <= 20; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // long enough to sleep
      c.send_dg(link_msg(RTM_NEWLINK, kCreate, i, named("w" + std::to_string(i), "dummy")));
      Datagram d = c.recv_dg();
      ASSERT_FALSE(d.empty()) << "request " << i << " was not answered";
      EXPECT_EQ(one(d).hdr.nlmsg_seq, i);
      EXPECT_EQ(wire::decode_error(one(d))->error, 0);
    }
    kill_daemon();
  }
}

TEST_F(DaemonTest, PipelinedRingRequestsAreAnsweredInOrder) {
  start();
  RingConn c(try_connect());
  ASSERT_EQ(c.switch_rings({}, kRingMinSize), 0);
  // More requests than the 64 KiB reply ring holds answers for: the daemon waits for room.
  constexpr std::uint32_t kN = 3000;
  // The writer only polls for room (the socket and the sleep flag are the reader's).
  std::thread writer([&] {
    for (std::uint32_t i = 1; i <= kN; ++i) {
      Bytes m = link_msg(RTM_NEWLINK, kCreate, i, named("p" + std::to_string(i), "dummy"));
      while (!*c.ring->push(m)) std::this_thread::yield();
      if (c.ring->take_peer_asleep()) c.ring_doorbell();
    }
  });
  for (std::uint32_t i = 1; i <= kN; ++i) {
    Datagram d = c.recv_dg();
    ASSERT_FALSE(d.empty()) << "answer " << i << " is missing";
    auto m = one(d);
    ASSERT_EQ(m.hdr.nlmsg_seq, i);
    ASSERT_EQ(wire::decode_error(m)->error, 0);
  }
  writer.join();
}

// A client on rings that keeps requests queued all the time is served without a syscall,
// but the loop still turns to epoll every few µs: another client is answered.
TEST_F(DaemonTest, ARingClientThatKeepsTheDaemonBusyDoesNotStarveAnother) {
  start();
  RingConn a(try_connect());
  ASSERT_EQ(a.switch_rings({}), 0);
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::thread writer([&] {
    wire::GetLinkRequest lo;
    lo.ifindex = 1;
    Bytes m = getlink(100, lo);
    while (!stop.load()) {
      auto r = a.ring->push(m);
      if (!r) return;
      if (!*r) std::this_thread::yield();
      if (a.ring->take_peer_asleep()) a.ring_doorbell();
    }
  });
  std::thread reader([&] {  // polls without sleeping, so the daemon never rings for it
    Datagram d;
    while (!stop.load()) {
      auto p = a.ring->pop(d);
      if (!p) return;
      if (*p == MappedRings::Popped::Empty) {
        std::this_thread::yield();
        continue;
      }
      if (a.ring->take_peer_wants_room()) a.ring_doorbell();
      answered.fetch_add(1);
    }
  });
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (answered.load() < 1000 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GE(answered.load(), 1000) << "the client on rings was not served";
  Conn b(try_connect());  // SO_RCVTIMEO of 5 s: a starved client gets an empty datagram
  b.control({});
  for (std::uint32_t i = 1; i <= 20; ++i) {
    b.send_dg(link_msg(RTM_NEWLINK, kCreate, i, named("s" + std::to_string(i), "dummy")));
    Datagram d = b.recv_dg();
    if (d.empty()) {  // not ASSERT: the threads must be joined
      ADD_FAILURE() << "request " << i << " of the second client was not answered";
      break;
    }
    EXPECT_EQ(wire::decode_error(one(d))->error, 0);
  }
  stop = true;
  writer.join();
  reader.join();
}

// An error echoes the whole request: for a request near the largest a 64 KiB ring takes,
// the error is larger than the ring takes, so it comes on the socket, in its place.
TEST_F(DaemonTest, ReplyTooLargeForTheRingComesThroughTheSocket) {
  start();
  RingConn c(try_connect());
  ASSERT_EQ(c.switch_rings({}, kRingMinSize), 0);
  const std::size_t max = c.ring->max_datagram();
  Bytes body = ifinfo(AF_UNSPEC, 0, 0, 0, 0);
  add(body, attr(IFLA_IFNAME, Bytes{'b', 'i', 'g', 0}));
  Bytes big = nlmsg(RTM_NEWLINK, NLM_F_REQUEST | kCreate, 1, 0, body);
  std::size_t filler = max - big.size() - 8;
  add(big, attr(IFLA_IFALIAS, Bytes(filler, 'a')));
  std::uint32_t len = static_cast<std::uint32_t>(big.size());
  std::memcpy(big.data(), &len, sizeof len);
  ASSERT_LE(big.size(), max);
  c.send_dg(big);
  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 2, named("after", "dummy")));
  Datagram e = c.recv_dg();
  ASSERT_GT(e.size(), max);
  auto err = wire::decode_error(one(e));
  ASSERT_TRUE(err);
  EXPECT_NE(err->error, 0);
  EXPECT_EQ(one(e).hdr.nlmsg_seq, 1u);
  Datagram a = c.recv_dg();  // the next answer keeps its order, through the ring
  EXPECT_EQ(one(a).hdr.nlmsg_seq, 2u);
  EXPECT_EQ(wire::decode_error(one(a))->error, 0);
}

// The client library's end (rtnl/wire/ring_client.h): what came on the socket before the switch
// is handed back (a refusal loses nothing), a reply too large for the ring is read from
// the socket in its place, and the daemon's end is ECONNRESET.
TEST_F(DaemonTest, RingClientReadsInOrderAcrossTheSwitchAndTheSocket) {
  start();
  Conn mon(join_link_group(try_connect()));
  Conn w(try_connect());
  w.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("n0", "dummy")));
  EXPECT_EQ(w.until_end().last_error(), 0);  // the notification now waits on mon's socket
  std::deque<Datagram> before;
  EXPECT_EQ(RingClient::open(mon.fd, 2, 1000, before).error().code, EINVAL);
  ASSERT_EQ(before.size(), 1u) << "the notification that came before the refusal is kept";
  auto lm = wire::decode_link_message(one(before.front()));
  ASSERT_TRUE(lm);
  EXPECT_EQ(lm->name, "n0");
  before.clear();
  auto rc = RingClient::open(mon.fd, 3, kRingMinSize, before);
  ASSERT_TRUE(rc) << rc.error().message;
  EXPECT_TRUE(before.empty());
  Datagram d;

  Bytes body = ifinfo(AF_UNSPEC, 0, 0, 0, 0);
  add(body, attr(IFLA_IFNAME, Bytes{'b', 'i', 'g', 0}));
  Bytes big = nlmsg(RTM_NEWLINK, NLM_F_REQUEST | kCreate, 4, 0, body);
  add(big, attr(IFLA_IFALIAS, Bytes((*rc)->rings().max_datagram() - big.size() - 8, 'a')));
  std::uint32_t len = static_cast<std::uint32_t>(big.size());
  std::memcpy(big.data(), &len, sizeof len);
  ASSERT_TRUE((*rc)->send(big));
  ASSERT_TRUE((*rc)->send(link_msg(RTM_NEWLINK, kCreate, 5, named("n1", "dummy"))));
  std::vector<std::uint32_t> seqs;
  for (int i = 0; i < 3; ++i) {  // the error for 4 (on the socket), n1's notification, 5's ack
    ASSERT_TRUE(*(*rc)->recv(d, 5000));
    auto m = one(d);
    if (m.hdr.nlmsg_type == NLMSG_ERROR) seqs.push_back(m.hdr.nlmsg_seq);
    if (m.hdr.nlmsg_seq == 4) {
      EXPECT_GT(d.size(), (*rc)->rings().max_datagram());
    }
  }
  EXPECT_EQ(seqs, (std::vector<std::uint32_t>{4, 5}));
  EXPECT_FALSE(*(*rc)->recv(d, 0));  // nothing more
  kill_daemon();
  auto end = (*rc)->recv(d, 5000);
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().code, ECONNRESET);
}

TEST_F(DaemonTest, RefusedRingRequestsChangeNothing) {
  start();
  RingConn c(try_connect());
  ControlRequest req;
  req.ns = "nosuch";
  EXPECT_EQ(c.switch_rings({}, 1000), EINVAL);  // not a power of two
  EXPECT_EQ(c.switch_rings(req), ENOENT);       // the namespace is checked too
  EXPECT_FALSE(c.ring);
  // Still on the socket.
  EXPECT_EQ(c.conn.control({}).ring, 0u);
  c.conn.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("s0", "dummy")));
  EXPECT_EQ(c.conn.until_end().last_error(), 0);
  // Once on rings, a second request for them is EBUSY, answered through the ring.
  ASSERT_EQ(c.switch_rings({}), 0);
  ControlRequest again;
  again.ring = 0;
  wire::MessageBuilder b;
  ASSERT_TRUE(encode_control_request(b, 8, again));
  c.send_dg(b.take());
  EXPECT_EQ(c.until_end().last_error(), EBUSY);
}

TEST_F(DaemonTest, ARingWrittenWithNonsenseClosesOnlyItsConnection) {
  start();
  RingConn bad(try_connect());
  ASSERT_EQ(bad.switch_rings({}, kRingMinSize), 0);
  auto* h = static_cast<std::uint8_t*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, bad.ring->fd(), 0));
  ASSERT_NE(h, MAP_FAILED);
  std::uint64_t head = 12345;  // the request ring's head: not a record boundary
  std::memcpy(h + 64, &head, sizeof head);
  munmap(h, 4096);
  bad.ring_doorbell();
  pollfd p{bad.conn.fd, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1);
  EXPECT_TRUE(bad.eof()) << "the daemon kept a connection whose ring is corrupt";
  RingConn good(try_connect());
  ASSERT_EQ(good.switch_rings({}), 0);
  good.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("g0", "dummy")));
  EXPECT_EQ(good.until_end().last_error(), 0);
}

}  // namespace
}  // namespace ifcore::rtnl::test

#endif  // IFCORED_PATH
