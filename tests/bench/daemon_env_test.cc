// tests/bench/daemon_env_test.cc — the daemon path's environment against a real ifcored:
// seed 0's keep_addr_on_down and seed 1's forwarding are set through the sysctl message (no
// note says they were not), seed 3's frame is measured through the probe message, and every
// scenario runs on mapped rings.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench/scenarios/bench.h"
#include "bench/scenarios/daemon_msgs.h"
#include "bench/scenarios/wire.h"
#include "support/ifcored_process.h"

namespace ifcore::bench {
namespace {

#ifdef IFCORED_PATH
class BenchDaemonEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ifcore-bench-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/ifcore.sock";
    pid_ = ifcore::test::spawn_ifcored(IFCORED_PATH, path_);
    ASSERT_GT(pid_, 0);
    for (int i = 0; i < 500; ++i) {
      struct stat st {};
      if (stat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "ifcored did not open " << path_;
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  static ScenarioSpec scenario(const std::string& name) {
    for (const auto& s : scenarios())
      if (s.name == name) return s;
    ADD_FAILURE() << "no scenario " << name;
    return {};
  }
  std::string read(const std::string& name) {
    auto c = NlClient::open_daemon(path_);
    EXPECT_TRUE(c);
    auto v = daemon_sysctl_read(**c, name);
    EXPECT_TRUE(v) << name << ": " << v.error().message;
    return v ? *v : "";
  }
  // A scenario of `n` run against the daemon on its socket. Errors: the run's.
  Result<RunOutput> run_on_socket(const std::string& name, int n) {
    WireEnv env = daemon_env(path_);
    RunParams p;
    p.n = n;
    return run_wire(scenario(name), p, env);
  }
  static bool noted(const RunOutput& out, const std::string& what) {
    return std::any_of(out.notes.begin(), out.notes.end(),
                       [&](const std::string& n) { return n.find(what) != std::string::npos; });
  }

  std::string dir_, path_;
  pid_t pid_ = -1;
};

TEST_F(BenchDaemonEnv, Seed0SetsKeepAddrOnDown) {
  EXPECT_EQ(read("net.ipv6.conf.all.keep_addr_on_down"), "0");
  auto out = run_on_socket("seed0-macvlan-ipv6-delete", 1);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_FALSE(noted(*out, "keep_addr_on_down")) << out->notes.front();
  EXPECT_EQ(read("net.ipv6.conf.all.keep_addr_on_down"), "1");
}

TEST_F(BenchDaemonEnv, Seed1SetsForwarding) {
  auto out = run_on_socket("seed1-ipv6-100", 3);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_FALSE(noted(*out, "forwarding"));
  EXPECT_EQ(read("net.ipv6.conf.all.forwarding"), "1");
  EXPECT_EQ(read("net.ipv6.conf.default.forwarding"), "1");
}

TEST_F(BenchDaemonEnv, Seed3MeasuresTheFrame) {
  auto out = run_on_socket("seed3-veth-carrier", 2);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_FALSE(noted(*out, "frame"));
  ASSERT_EQ(out->samples["frame"].size(), 2u);
  EXPECT_GE(out->samples["frame"][0], out->samples["carrier"][0]);
}

// Past 10 000 dummies the create batch goes as batches of 10 000, one after another (one
// datagram of every request would not fit a socket's send buffer): 25 000 make three.
TEST_F(BenchDaemonEnv, TheSweepsCreateBatchIsSplitPastTenThousand) {
  auto out = run_on_socket("scale-sweep", 25000);
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_FALSE(out->samples["create-batch"].empty());
  for (double t : out->samples["create-batch"]) EXPECT_GT(t, 0.0);
  EXPECT_EQ(out->devices["create-batch"], 25000);
  EXPECT_EQ(out->traffic["create-batch"].one_at_a_time, 3);
  EXPECT_EQ(out->devices["delete"], 25000);
}

// The ring path: every scenario runs small with each connection on mapped rings, and each
// metric gets its sample (the batches pipeline requests through the request ring).
TEST_F(BenchDaemonEnv, EveryScenarioRunsSmallOnRings) {
  WireEnv env = daemon_env(path_, true);
  auto c = env.connect({});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE((*c)->uses_rings());
  for (const auto& s : scenarios()) {
    SCOPED_TRACE(s.name);
    RunParams p;
    p.n = 4;
    auto out = run_wire(s, p, env);
    ASSERT_TRUE(out) << out.error().message;
    for (const auto& m : s.metrics) {
      // A create batch is one datagram of every request: on the socket only (wire_paths.cc).
      if (m.name == "create-batch") {
        EXPECT_TRUE(out->samples[m.name].empty());
        continue;
      }
      ASSERT_FALSE(out->samples[m.name].empty()) << m.name;
      for (double t : out->samples[m.name]) EXPECT_GT(t, 0.0) << m.name;
    }
  }
}
#endif  // IFCORED_PATH

}  // namespace
}  // namespace ifcore::bench
