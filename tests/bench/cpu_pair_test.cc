// tests/bench/cpu_pair_test.cc — the CPUs of a timed run: the fastest chosen, the daemon
// path's client and server on two of them.
#include "bench/scenarios/cpu_pair.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace ifcore::bench {
namespace {

int count(const cpu_set_t& s) {
  return CPU_COUNT(&s);
}

// The calling thread's CPUs.
cpu_set_t my_cpus() {
  cpu_set_t s;
  CPU_ZERO(&s);
  EXPECT_EQ(::sched_getaffinity(0, sizeof s, &s), 0);
  return s;
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
  cpu_set_t before = my_cpus();
  if (count(before) < 2) GTEST_SKIP() << "one CPU allowed: nothing to pin";
  Sleeper server;
  ASSERT_GT(server.pid, 0);
  pid_t child = server.pid;
  {
    CpuChoice cpus = choose_cpus();
    ASSERT_TRUE(cpus.valid());
    CpuPair pair(child, cpus);
    ASSERT_TRUE(pair.pinned());
    EXPECT_EQ(pair.server_cpu(), cpus.server);
    EXPECT_EQ(pair.client_cpu(), cpus.client);
    EXPECT_NE(pair.client_cpu(), pair.server_cpu());
    cpu_set_t mine, theirs;
    ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
    ASSERT_EQ(::sched_getaffinity(child, sizeof theirs, &theirs), 0);
    EXPECT_EQ(count(mine), 1);
    EXPECT_TRUE(CPU_ISSET(pair.client_cpu(), &mine));
    EXPECT_EQ(count(theirs), 1);
    EXPECT_TRUE(CPU_ISSET(pair.server_cpu(), &theirs));
  }
  cpu_set_t after = my_cpus();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(CpuPairTest, AServerThatIsGoneLeavesEverythingAsItWas) {
  cpu_set_t before = my_cpus();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // reaped: no such thread
  {
    CpuPair pair(child, choose_cpus());
    EXPECT_FALSE(pair.pinned());
  }
  cpu_set_t after = my_cpus();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(CpuPairTest, ChoiceIsTwoAllowedCpusAndTheCallerKeepsItsSet) {
  cpu_set_t before = my_cpus();
  CpuChoice cpus = choose_cpus();
  cpu_set_t after = my_cpus();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  if (count(before) < 2) {
    EXPECT_FALSE(cpus.valid());
    return;
  }
  ASSERT_TRUE(cpus.valid());
  EXPECT_TRUE(CPU_ISSET(cpus.server, &before));
  EXPECT_TRUE(CPU_ISSET(cpus.client, &before));
}

TEST(CpuPairTest, NoChoiceNoPin) {
  cpu_set_t before = my_cpus();
  Sleeper server;
  ASSERT_GT(server.pid, 0);
  {
    CpuPair pair(server.pid, CpuChoice{});
    EXPECT_FALSE(pair.pinned());
  }
  cpu_set_t after = my_cpus();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

// A thread pinned with pin_self runs on that CPU alone.
TEST(CpuPairTest, PinSelfPinsTheCallingThreadOnly) {
  cpu_set_t before = my_cpus();
  int cpu = -1;
  for (int c = CPU_SETSIZE - 1; c >= 0 && cpu < 0; --c)
    if (CPU_ISSET(c, &before)) cpu = c;
  ASSERT_GE(cpu, 0);
  cpu_set_t in_thread;
  bool pinned = false;
  std::thread t([&] {
    pinned = pin_self(cpu);
    (void)::sched_getaffinity(0, sizeof in_thread, &in_thread);
  });
  t.join();
  ASSERT_TRUE(pinned);
  EXPECT_EQ(count(in_thread), 1);
  EXPECT_TRUE(CPU_ISSET(cpu, &in_thread));
  cpu_set_t after = my_cpus();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  EXPECT_FALSE(pin_self(-1));
}

}  // namespace
}  // namespace ifcore::bench
