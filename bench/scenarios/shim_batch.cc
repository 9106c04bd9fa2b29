// bench/scenarios/shim_batch.cc — the preload shim's cost against ifc and the kernel
// (shim_batch.h).
#include "bench/scenarios/shim_batch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace ifcore::bench {

namespace {

using Clock = std::chrono::steady_clock;

std::string self_dir() {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return ".";
  std::string s(exe, static_cast<std::size_t>(n));
  return s.substr(0, s.rfind('/'));
}

// Runs argv with `env` added, output discarded; returns its wall time, or nothing when it
// failed to start or exited non-zero.
std::optional<double> timed_run(const std::vector<std::string>& argv,
                                const std::vector<std::string>& env = {}) {
  auto t0 = Clock::now();
  pid_t pid = fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) {
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    if (int fd = ::open("/dev/null", O_WRONLY); fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execvp(a[0], a.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  double t = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return t;
}

// ifcored on a socket of its own for one repetition.
class Daemon {
 public:
  ~Daemon() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (!sock_.empty()) unlink(sock_.c_str());
  }
  std::string start(const std::string& bin, const std::string& dir) {
    sock_ = dir + "/ifcore.sock";
    pid_ = fork();
    if (pid_ < 0) return "fork failed";
    if (pid_ == 0) {
      if (int fd = ::open("/dev/null", O_WRONLY); fd >= 0) dup2(fd, 2);
      execl(bin.c_str(), bin.c_str(), "--socket", sock_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 500; ++i) {
      int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_.c_str());
      bool up = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
      close(fd);
      if (up) return {};
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return "ifcored exited at start";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return "ifcored did not start";
  }
  const std::string& socket() const { return sock_; }

 private:
  pid_t pid_ = -1;
  std::string sock_;
};

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

Result<ShimBatchFigures> measure_shim_batch(int lines, int repeat, std::string bin_dir) {
  if (bin_dir.empty()) bin_dir = self_dir();
  ShimBatchFigures f;
  f.lines = lines;
  f.repeat = repeat;
  char tmpl[] = "/tmp/ifcore-bench-shim.XXXXXX";
  if (!mkdtemp(tmpl)) return fail(errno, "mkdtemp: {}", std::strerror(errno));
  std::string dir = tmpl;
  std::string add = dir + "/add.batch", del = dir + "/del.batch";
  {
    std::ofstream a(add), d(del);
    for (int i = 0; i < lines; ++i) {
      a << "link add b" << i << " group 7 type bridge\n";
      d << "link del b" << i << "\n";
    }
    if (!a || !d) return fail(EIO, "cannot write the batch files in {}", dir);
  }
  std::string ifcored = bin_dir + "/ifcored", run = bin_dir + "/ifcore-run", ifc = bin_dir + "/ifc";
  std::vector<double> shim, sock, rings, kernel;
  std::string ns = fmt::format("ifcore-bench-shim-{}", getpid());
  for (int r = 0; r <= repeat; ++r) {  // r == 0: untimed warm-up of every path
    Daemon d;
    if (f.daemon_why.empty()) f.daemon_why = d.start(ifcored, dir);
    if (f.daemon_why.empty()) {
      const std::string& s = d.socket();
      auto one = [&](const std::vector<std::string>& head, const std::vector<std::string>& env,
                     std::vector<double>& into) {
        std::vector<std::string> argv = head, back = head;
        argv.insert(argv.end(), {"-batch", add});
        back.insert(back.end(), {"-batch", del});
        auto t = timed_run(argv, env);
        if (t && r > 0) into.push_back(*t);
        (void)timed_run(back, env);
      };
      one({run, "--socket", s, "--", "ip"}, {}, shim);
      one({ifc, "--socket", s}, {"IFC_RINGS=0"}, sock);
      one({ifc, "--socket", s}, {}, rings);
    }
    // The kernel once: removing a thousand bridges takes it a minute one by one (seed 004)
    // and still seconds in one batch; the namespace goes, with them, at the end.
    if (r == 1 && f.kernel_why.empty()) {
      if (!timed_run({"ip", "netns", "add", ns})) {
        f.kernel_why = "cannot make a network namespace";
      } else if (auto t = timed_run({"ip", "-n", ns, "-batch", add})) {
        kernel.push_back(*t);
      }
    }
  }
  if (!kernel.empty()) (void)timed_run({"ip", "netns", "del", ns});
  unlink(add.c_str());
  unlink(del.c_str());
  rmdir(dir.c_str());
  f.shim = median(shim);
  f.ifc_socket = median(sock);
  f.ifc_rings = median(rings);
  f.kernel = median(kernel);
  if (f.daemon_why.empty() && !f.shim) f.daemon_why = "ip through the shim failed";
  return f;
}

void print_shim_batch(const ShimBatchFigures& f, std::FILE* out) {
  fmt::print(out, "\n{}: ip -batch of {} `link add` lines, whole programs timed (median of {})\n",
             kShimBatchName, f.lines, f.repeat);
  auto row = [&](const char* what, const std::optional<double>& t, const std::string& why) {
    if (t)
      fmt::print(out, "  {:<48} {:>9.1f} ms {:>8.1f} µs/line\n", what, *t * 1e3,
                 *t * 1e6 / f.lines);
    else
      fmt::print(out, "  {:<48} {}\n", what, why.empty() ? "no figure" : why);
  };
  row("ip through the shim (ifcore-run, socket)", f.shim, f.daemon_why);
  row("ifc -batch over ifcored's socket", f.ifc_socket, f.daemon_why);
  row("ifc -batch on mapped rings", f.ifc_rings, f.daemon_why);
  row("ip on this kernel (a fresh namespace, one run)", f.kernel, f.kernel_why);
  if (f.shim && f.ifc_socket) {
    double ratio = *f.shim / *f.ifc_socket;
    fmt::print(out, "  the shim costs {:.2f}× ifc's socket path (target ≤ {:.1f}×): {}\n", ratio,
               kShimTarget, ratio <= kShimTarget ? "MET" : "MISSED");
  }
  if (f.shim && f.kernel)
    fmt::print(out, "  ip through the shim is {:.1f}× faster than ip on the kernel\n",
               *f.kernel / *f.shim);
}

}  // namespace ifcore::bench
