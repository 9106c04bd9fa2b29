// tests/bench/cpu_pair_test.cc — the daemon path's client and server on two CPUs.
#include "bench/scenarios/cpu_pair.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ifcore::bench {
namespace {

int count(const cpu_set_t& s) {
  return CPU_COUNT(&s);
}

// A child that waits to be killed, killed and reaped however the test ends.
struct Sleeper {
  pid_t pid = ::fork();
  Sleeper() {
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
  }
  ~Sleeper() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

TEST(CpuPairTest, ClientAndServerGetTwoCpusAndTheClientItsSetBack) {
  cpu_set_t before;
  ASSERT_EQ(::sched_getaffinity(0, sizeof before, &before), 0);
  if (count(before) < 2) GTEST_SKIP() << "one CPU allowed: nothing to pin";
  Sleeper server;
  ASSERT_GT(server.pid, 0);
  pid_t child = server.pid;
  {
    CpuPair pair(child);
    ASSERT_TRUE(pair.pinned());
    EXPECT_NE(pair.client_cpu(), pair.server_cpu());
    cpu_set_t mine, theirs;
    ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
    ASSERT_EQ(::sched_getaffinity(child, sizeof theirs, &theirs), 0);
    EXPECT_EQ(count(mine), 1);
    EXPECT_TRUE(CPU_ISSET(pair.client_cpu(), &mine));
    EXPECT_EQ(count(theirs), 1);
    EXPECT_TRUE(CPU_ISSET(pair.server_cpu(), &theirs));
  }
  cpu_set_t after;
  ASSERT_EQ(::sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(CpuPairTest, AServerThatIsGoneLeavesEverythingAsItWas) {
  cpu_set_t before;
  ASSERT_EQ(::sched_getaffinity(0, sizeof before, &before), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // reaped: no such thread
  {
    CpuPair pair(child);
    EXPECT_FALSE(pair.pinned());
  }
  cpu_set_t after;
  ASSERT_EQ(::sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

}  // namespace
}  // namespace ifcore::bench
