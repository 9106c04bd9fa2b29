// bench/scenarios/scenarios.cc — the scenario registry (names, sizes, the seeds' own
// figures), path and policy names, summaries of samples, and the machine's description.
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>

#include "bench/scenarios/bench.h"

namespace ifcore::bench {

const char* to_string(Path p) {
  switch (p) {
    case Path::Embedded:
      return "embedded";
    case Path::Daemon:
      return "daemon";
    case Path::Ring:
      return "ring";
    case Path::Kernel:
      return "kernel";
  }
  return "?";
}

Result<Path> parse_path(std::string_view text) {
  for (Path p : kAllPaths)
    if (text == to_string(p)) return p;
  return fail(EINVAL, "unknown path \"{}\" (want embedded, daemon, ring or kernel)", text);
}

Result<std::vector<Path>> parse_paths(std::string_view text) {
  std::vector<Path> out;
  while (!text.empty()) {
    auto comma = text.find(',');
    auto item = text.substr(0, comma);
    if (!item.empty()) {
      auto p = parse_path(item);
      if (!p) return fail(p.error());
      if (std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(*p);
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (out.empty()) return fail(EINVAL, "no path given");
  return out;
}

const std::vector<ScenarioSpec>& scenarios() {
  static const std::vector<ScenarioSpec> all = {
      {"seed0-macvlan-ipv6-delete",
       "000",
       "a macvlan on a lower device gets 2002::1/64, then is deleted; median of 100 deletes",
       100,
       3,
       true,
       {{"delete", 1.03, 0.030, "000: 1.03 s, ~30 ms after the fix"}},
       0},
      {"seed1-ipv6-100",
       "001",
       "100 devices (dummy), each up with 2021:i::1/120, forwarding on, deleted one request "
       "at a time",
       100,
       10,
       false,
       {{"total", 31.5, 7.7, "001: 31.5 s, 7.7 s after"}, {"delete", {}, {}, ""}},
       1},
      {"seed2-dummy-10k",
       "002",
       "10 000 dummies registered, then removed in one batch",
       10000,
       100,
       false,
       {{"delete", 120.3, 1.111, "002: 2 min, 1.1 s after"},
        {"create", {}, {}, ""},
        {"create-batch", {}, {}, "ifcored: one create batch"}},
       2},
      {"seed2-vlan-1000",
       "002",
       "1 000 UP vlans on one dummy, then the dummy is deleted",
       1000,
       100,
       false,
       {{"delete", 40.41, 4.392, "002: 40 s, 4.4 s after"}, {"create", {}, {}, ""}},
       2},
      {"seed3-veth-carrier",
       "003",
       "a veth pair is set up at both ends; time until both report carrier and a frame "
       "crosses; median of 100",
       100,
       3,
       true,
       {{"carrier", 1.005, {}, "003: ~1 s"}, {"frame", {}, {}, ""}},
       3},
      {"seed4-veth-100",
       "004",
       "100 veth pairs created, then deleted one request at a time",
       100,
       10,
       false,
       {{"delete", 27.917, {}, "004: delete 27.9 s"}, {"create", 1.549, {}, "004: create 1.5 s"}},
       4},
      {"scale-sweep",
       "",
       "N devices created and deleted in batches, N = 100 ... 1 000 000 (kernel up to 10 000)",
       100000,
       100,
       false,
       {{"delete", {}, {}, "—"},
        {"create", {}, {}, "—"},
        {"create-batch", {}, {}, "one batch (ifcored: of 10 000)"}},
       -1},
  };
  return all;
}

const ScenarioSpec* find_scenario(std::string_view name) {
  for (const auto& s : scenarios())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<int> sweep_sizes(int max_n) {
  std::vector<int> out;
  for (int n = 100; n <= max_n && n <= 1000000; n *= 10) out.push_back(n);
  return out;
}

Policies legacy_with_fix(int seed) {
  Policies p = Policies::legacy();
  Policies d;
  switch (seed) {
    case 0:
      p.dst_priority = d.dst_priority;
      break;  // dst subscriber after the others
    case 1:
      p.ref_wait = RefWaitPolicy::Backoff;
      break;  // barrier, then 1..250 ms backoff
    case 2:
      p.unregister = d.unregister;
      break;  // unregister_netdevice_many
    case 3:
      p.linkwatch = d.linkwatch;
      break;  // virtual devices urgent
    case 4:
      p.ref_wait = RefWaitPolicy::Backoff;
      break;  // the wait that cost 2/3 of 004
    default:
      break;
  }
  return p;
}

Result<Policies> bench_policy(std::string_view name) {
  if (name.empty() || name == "default") return Policies{};
  if (name == "legacy") return Policies::legacy();
  if (name.size() == 11 && name.substr(0, 10) == "legacy-fix" && name[10] >= '0' && name[10] <= '4')
    return legacy_with_fix(name[10] - '0');
  return Policies::parse(name);
}

bool is_legacy(const Policies& p) {
  Policies d;
  return p.ref_wait != d.ref_wait || p.unregister != d.unregister || p.grace != d.grace ||
         p.linkwatch != d.linkwatch || p.dst_priority != d.dst_priority;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void summarize(Measurement& m) {
  if (m.samples.empty()) return;
  m.median = median_of(m.samples);
  auto [lo, hi] = std::minmax_element(m.samples.begin(), m.samples.end());
  m.min = *lo;
  m.max = *hi;
}

MachineInfo describe_machine() {
  MachineInfo mi;
  utsname u{};
  if (::uname(&u) == 0) {
    mi.kernel = u.release;
    mi.hostname = u.nodename;
  }
  mi.cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  struct sysinfo si {};
  if (::sysinfo(&si) == 0) mi.mem_bytes = std::uint64_t(si.totalram) * si.mem_unit;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos)
        mi.cpu_model = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  mi.date = buf;
  return mi;
}

}  // namespace ifcore::bench
