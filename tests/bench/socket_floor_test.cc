// tests/bench/socket_floor_test.cc — the socket's floor: the echo server answers as ifcored
// serves, both ways of sending get every answer, a peer that is gone is an error and not a
// hang, and a run prices a metric's requests at the floor.
#include "bench/scenarios/socket_floor.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ifcore::bench {
namespace {

struct Pair {
  int fd[2] = {-1, -1};
  Pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fd), 0); }
  ~Pair() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
};

TEST(SocketFloor, EchoAnswersEveryRequestOneAtATimeAndPipelined) {
  Pair p;
  EchoServer server(p.fd[1], -1);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(echo_round_trip(p.fd[0])) << i;
  // More requests than either side's batches and than the socket's queue holds at once.
  ASSERT_TRUE(echo_pipelined(p.fd[0], 3000));
  ASSERT_TRUE(echo_pipelined(p.fd[0], 1));
  // Nothing is left over: the next round trip reads its own answer.
  char extra;
  EXPECT_LT(::recv(p.fd[0], &extra, 1, MSG_DONTWAIT), 0);
  EXPECT_TRUE(echo_round_trip(p.fd[0]));
}

TEST(SocketFloor, APeerThatIsGoneIsAnErrorNotAHang) {
  {
    Pair p;
    ::close(p.fd[1]);
    p.fd[1] = -1;
    auto r = echo_round_trip(p.fd[0]);
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().code == ECONNRESET || r.error().code == EPIPE) << r.error().code;
    EXPECT_FALSE(echo_pipelined(p.fd[0], 10));
  }
  {
    // Open but silent: the client gives up after its timeout.
    Pair p;
    auto r = echo_round_trip(p.fd[0]);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ETIMEDOUT);
  }
}

TEST(SocketFloor, MeasuresBothFloorsAndGivesTheCallerItsCpusBack) {
  cpu_set_t before;
  ASSERT_EQ(::sched_getaffinity(0, sizeof before, &before), 0);
  CpuChoice cpus = choose_cpus();
  auto f = measure_socket_floor(cpus);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_GT(f->round_trip, 0.0);
  EXPECT_LT(f->round_trip, 0.1);
  EXPECT_GT(f->pipelined, 0.0);
  EXPECT_LT(f->pipelined, 0.1);
  cpu_set_t after;
  ASSERT_EQ(::sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(SocketFloor, PricesRequestsOneAtATimeAndPipelined) {
  SocketFloor f{.round_trip = 10e-6, .pipelined = 1e-6};
  EXPECT_DOUBLE_EQ(f.price({.one_at_a_time = 100}), 1e-3);
  EXPECT_DOUBLE_EQ(f.price({.pipelined = 100}), 1e-4);
  EXPECT_DOUBLE_EQ(f.price({.one_at_a_time = 1, .pipelined = 1000}), 1.01e-3);
  EXPECT_DOUBLE_EQ(f.price({}), 0.0);
}

}  // namespace
}  // namespace ifcore::bench
