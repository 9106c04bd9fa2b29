// bench/scenarios/bench.h — ifcore-bench's model: the named scenarios (one per seed
// experiment, plus the scale sweep), the four paths a scenario is measured on (embedded
// library calls, ifcored over its socket, ifcored on mapped rings, the machine's kernel in
// a fresh network namespace), the figures a run produces, and the bench's policy names.
//
// A scenario run returns samples in seconds for each of its metrics ("delete", "create",
// "carrier"...). A metric's figure is the median of its samples; min and max are reported
// beside it. "Median of 100" scenarios give 100 samples per repetition; the others give one
// sample per repetition.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/scenarios/cpu_pair.h"
#include "ifcore/config.h"
#include "ifcore/result.h"

namespace ifcore::bench {

// Ring: the daemon path with the connection switched to mapped rings (src/rtnl/wire/ring.h).
enum class Path { Embedded, Daemon, Ring, Kernel };
inline constexpr Path kAllPaths[] = {Path::Embedded, Path::Daemon, Path::Ring, Path::Kernel};
const char* to_string(Path p);
// Errors: EINVAL "unknown path \"x\"".
Result<Path> parse_path(std::string_view text);
// "embedded,daemon" -> the paths in the order given. Errors: as parse_path.
Result<std::vector<Path>> parse_paths(std::string_view text);

// One measured quantity of a scenario, with the seed's own figures (seconds).
struct MetricSpec {
  std::string name;                   // "delete", "create", "total", "carrier"
  std::optional<double> seed_before;  // the seed's figure before its fix
  std::optional<double> seed_after;   // after the fix
  std::string seed_text;              // the text for the seed column
};

struct ScenarioSpec {
  std::string name;                 // part of the interface: "seed0-macvlan-ipv6-delete"...
  std::string seed;                 // "000".."004"; empty for the sweep
  std::string description;          // one line
  int count = 0;                    // devices, deletes or samples at the seed's scale
  int legacy_count = 0;             // the same under a legacy policy (kept small: sleeps are real)
  bool median_of_samples = false;   // one sample per operation (seed0, seed3)
  std::vector<MetricSpec> metrics;  // the primary metric first
  int fix_seed = -1;                // which seed's fix the ablation applies (0..4); -1: none
};

// Every scenario, in the default suite's order.
const std::vector<ScenarioSpec>& scenarios();
const ScenarioSpec* find_scenario(std::string_view name);

// The scale sweep's sizes up to `max_n` (100, 1 000, 10 000 ... 1 000 000), and the
// kernel's limit.
std::vector<int> sweep_sizes(int max_n);
inline constexpr int kKernelSweepMax = 10000;
// Samples of the create batch in a run of N dummies (embedded and ifcored alike): 3, so that
// one figure is not a single batch's on a host whose load varies; 1 past 10^5, where one
// batch of the sweep takes about a second.
inline int create_batch_samples(int n) {
  return n > 100000 ? 1 : 3;
}

// ---- policies
// Bench policy names: "default"; "legacy" (every seed's "before": poll250, single, kernel
// grace periods and link watch, dst priority 0); "legacy-fixN" (legacy with only seed N's
// fix, N = 0..4); anything else is passed to Policies::parse ("ref-wait=backoff,...").
// Errors: EINVAL from Policies::parse.
Result<Policies> bench_policy(std::string_view name);
// The legacy policies with only seed `seed`'s fix applied (0..4).
Policies legacy_with_fix(int seed);
// True when `p` has any legacy setting (then scenarios run at their legacy_count).
bool is_legacy(const Policies& p);

// ---- results
struct Measurement {
  std::string scenario;
  std::string metric;
  Path path = Path::Embedded;
  std::string policy = "default";
  int n = 0;                    // devices/operations of the run
  int devices = 0;              // devices the metric's time is spread over (per-device figure)
  std::vector<double> samples;  // seconds
  double median = 0, min = 0, max = 0;
  std::string status;              // empty: measured; else why there is no figure
  std::vector<std::string> notes;  // stand-in kinds, scaling, extrapolation...
  // The daemon path: what the metric's requests cost over the socket alone, measured after
  // its repetitions (socket_floor.h; seconds). None on the other paths or when not measured.
  std::optional<double> socket_floor;
  int requests = 0;  // the requests it was priced for (0: not priced)
  bool ok() const { return status.empty() && !samples.empty(); }
};
// Fills median/min/max from samples.
void summarize(Measurement& m);
double median_of(std::vector<double> v);

// The requests a metric's time covers on a wire path (daemon, ring, kernel): answered one
// at a time (the next is sent once the last is answered), or pipelined (many in flight).
// The runner prices them at the socket's floor (socket_floor.h).
struct Traffic {
  int one_at_a_time = 0;
  int pipelined = 0;
};

// What a path returns for one repetition of a scenario: samples per metric, and notes.
struct RunOutput {
  std::map<std::string, std::vector<double>> samples;  // metric -> seconds
  std::map<std::string, int> devices;                  // metric -> devices the time covers
  std::map<std::string, Traffic> traffic;              // metric -> its requests (wire paths)
  std::vector<std::string> notes;
};

struct RunParams {
  int n = 0;  // the scenario's count (scaled for legacy, or the sweep's N)
  Policies policies;
  std::string policy_name = "default";
  // Called now and then during long runs with a fraction done (0..1).
  std::function<void(double)> progress;
  // The CPUs of the timed run (cpu_pair.h): ifcored's serving thread and the kernel path's
  // thread on cpus.server, the daemon path's client on cpus.client. Not valid: no pinning.
  CpuChoice cpus;
  // The daemon path: ifcored keeps its state (--state FILE) with this --sync mode (full,
  // batch, off); empty: without --state.
  std::string daemon_state;
};

// The machine the figures were taken on.
struct MachineInfo {
  std::string kernel;  // uname -r
  std::string hostname;
  std::string cpu_model;
  int cpus = 0;
  std::uint64_t mem_bytes = 0;
  std::string date;  // ISO 8601, UTC
};
MachineInfo describe_machine();

}  // namespace ifcore::bench
