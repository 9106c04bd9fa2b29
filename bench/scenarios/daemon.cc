// bench/scenarios/daemon.cc — the daemon path: for every repetition the bench starts the
// ifcored found next to its own binary on a socket in a temporary directory, with the run's
// policies, waits for the socket, runs the scenario's requests over it and stops the daemon.
// Settings and frames go through ifcore's sysctl and probe messages (daemon_msgs.h).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "bench/scenarios/cpu_pair.h"
#include "bench/scenarios/daemon_msgs.h"
#include "bench/scenarios/daemon_process.h"
#include "bench/scenarios/wire.h"

extern char** environ;

namespace ifcore::bench {
namespace {

constexpr int kWarmFullMax = 10000;  // larger runs are warmed at a size of 2

}  // namespace

std::string daemon_unavailable() {
  std::string bin = daemon_binary();
  if (bin.empty()) return "cannot read /proc/self/exe";
  if (::access(bin.c_str(), X_OK) != 0) return "ifcored not built (no " + bin + ")";
  return {};
}

Result<RunOutput> run_daemon(const ScenarioSpec& s, const RunParams& p, bool rings) {
  if (auto why = daemon_unavailable(); !why.empty()) return fail(EOPNOTSUPP, "{}", why);
  // With --state: the file in a directory of its own on the disk the temporary files are
  // on, made fresh for every repetition (removed with the daemon's directory).
  std::vector<std::string> extra;
  std::string state_dir;
  if (!p.daemon_state.empty()) {
    char tmpl[] = "/tmp/ifcore-bench-state-XXXXXX";
    if (!::mkdtemp(tmpl)) return fail(errno, "mkdtemp: {}", std::strerror(errno));
    state_dir = tmpl;
    extra = {"--state", state_dir + "/state.db", "--sync", p.daemon_state};
  }
  struct RemoveDir {
    std::string dir;
    ~RemoveDir() {
      std::error_code ec;
      if (!dir.empty()) std::filesystem::remove_all(dir, ec);
    }
  } remove_state{state_dir};
  DaemonProcess d;  // stopped before its state directory goes
  auto st = d.start(p.policies.to_string(), extra);
  if (!st) return fail(st.error());
  WireEnv env = daemon_env(d.socket(), rings);
  // A fresh process pays a minor page fault for every page of code and data it touches
  // first, and for every page its heap grows by: in a profile of a fresh daemon making
  // 1000 vlans, more than half of its CPU time was page faults. The kernel it is compared
  // with is long warm (its slab caches hold the memory of earlier runs). So the scenario
  // first runs once, untimed, at its full size up to kWarmFullMax devices (every scenario
  // removes what it made; the allocator keeps the freed memory for the next run), and
  // then for the figures.
  RunParams warm = p;
  // The sweep is warmed at its full size at every N (the bench keeps its daemons' freed heap:
  // main.cc), so that its figures are ifcored's, not the machine's first backing of pages.
  warm.n = p.n <= kWarmFullMax || s.name == "scale-sweep" ? p.n : std::min(p.n, 2);
  warm.progress = nullptr;
  if (auto w = run_wire(s, warm, env); !w)
    return fail(w.error().code, "warm-up: {}", w.error().message);
  CpuPair pinned(d.pid(), p.cpus);
  return run_wire(s, p, env);
}

}  // namespace ifcore::bench
