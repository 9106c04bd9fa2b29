// bench/scenarios/daemon_process.h — ifcored found next to the bench's own binary, started
// on a socket in a temporary directory and stopped (SIGTERM, then SIGKILL) at the end.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/scenarios/bench.h"
#include "bench/scenarios/paths.h"

extern char** environ;

namespace ifcore::bench {

inline std::string daemon_binary() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return (exe.parent_path() / "ifcored").string();
}

// A running ifcored; stopped (SIGTERM, then SIGKILL) and its directory removed on
// destruction.
class DaemonProcess {
 public:
  explicit DaemonProcess(std::string binary = daemon_binary()) : bin_(std::move(binary)) {}
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;
  ~DaemonProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      for (int i = 0; i < 200; ++i) {
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
    }
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  // Extra arguments (`extra`) follow --socket and --policy.
  Result<void> start(const std::string& policy, const std::vector<std::string>& extra = {}) {
    const std::string& bin = bin_;
    char tmpl[] = "/tmp/ifcore-bench-XXXXXX";
    if (!::mkdtemp(tmpl)) return fail(errno, "mkdtemp: {}", std::strerror(errno));
    dir_ = tmpl;
    socket_ = dir_ + "/ifcore.sock";
    std::string log = dir_ + "/ifcored.log";
    std::vector<std::string> args = {bin, "--socket", socket_, "--policy", policy};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    int rc = ::posix_spawn(&pid_, bin.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      pid_ = -1;
      return fail(rc, "cannot start {}: {}", bin, std::strerror(rc));
    }
    // Wait for the socket to accept connections.
    auto deadline = BenchClock::now() + std::chrono::seconds(10);
    while (BenchClock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return fail(ECHILD, "ifcored exited at start (see its log: {})", tail_of_log(log));
      }
      struct stat st {};
      if (::stat(socket_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) return ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return fail(ETIMEDOUT, "ifcored did not open {} within 10 s", socket_);
  }

  const std::string& socket() const { return socket_; }
  pid_t pid() const { return pid_; }

 private:
  static std::string tail_of_log(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) return "no log";
    char buf[512];
    std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = 0;
    std::string s(buf);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s.empty() ? "empty log" : s;
  }

  std::string bin_;
  pid_t pid_ = -1;
  std::string dir_, socket_;
};

}  // namespace ifcore::bench
