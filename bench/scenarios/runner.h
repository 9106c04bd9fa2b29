// bench/scenarios/runner.h — running a suite: which scenarios on which paths, how many
// repetitions, under which policy; the ablation of the seeds' fixes; and the outputs
// (terminal table, JSON, SVG plot) made from the results.
#pragma once

#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/scenarios/bench.h"
#include "bench/scenarios/socket_floor.h"

namespace ifcore::bench {

struct SuiteOptions {
  std::vector<std::string> scenarios;  // empty: the default suite (every scenario)
  std::vector<Path> paths = {Path::Embedded, Path::Daemon, Path::Ring, Path::Kernel};
  int repeat = 5;
  std::string policy = "default";
  int scale_max = 100000;    // the sweep's largest N
  bool ablation = true;      // run the ablation (embedded path, legacy sizes)
  bool progress = false;     // a progress line on standard error
  bool pin = true;           // the daemon path pins client and server to two CPUs
  std::string daemon_state;  // ifcored --state with this --sync mode (empty: none)
  // Runs a path; tests replace it (empty: the real paths).
  std::function<Result<RunOutput>(Path, const ScenarioSpec&, const RunParams&)> runner;
  // Measures the socket's floor after a scenario's daemon runs (socket_floor.h); tests
  // replace it. Empty: the real measurement, unless `runner` is set (then none).
  std::function<Result<SocketFloor>(const CpuChoice&)> measure_floor;
};

// One row of the ablation: a seed's scenario under the legacy policies, with only that
// seed's fix, and with ifcore's defaults (embedded path, at the legacy size).
struct AblationRow {
  std::string scenario, metric, seed, fix_policy;
  int n = 0;                                   // the size run
  int seed_n = 0;                              // the seed's size
  std::optional<double> legacy, fixed, deflt;  // medians, seconds
  std::optional<double> seed_before, seed_after;
  bool linear = false;  // the figure grows with n: the legacy figure is extrapolated to seed_n
  std::string error;
};

struct SuiteResult {
  MachineInfo machine;
  std::string policy;
  std::string policy_detail;  // Policies::to_string()
  int repeat = 0;
  std::vector<Measurement> measurements;
  std::vector<AblationRow> ablation;
  double wall_seconds = 0;
};

// Errors: EINVAL for an unknown scenario or policy.
Result<SuiteResult> run_suite(const SuiteOptions& opts);

// ---- outputs (report.cc, plot.cc)
// Human-readable duration: "850 ns", "12.3 µs", "4.56 ms", "1.23 s".
std::string format_seconds(double s);
void print_table(const SuiteResult& r, std::FILE* out);
nlohmann::json to_json(const SuiteResult& r);
// Errors: the file's errno.
Result<void> write_json(const SuiteResult& r, const std::string& path);
// The SVG plot: time per device against N (log-log), one series per path and metric.
std::string render_svg(const SuiteResult& r);
Result<void> write_svg(const SuiteResult& r, const std::string& path);

}  // namespace ifcore::bench
