// bench/scenarios/runner.cc — runs a suite: scenarios × paths × repetitions (legacy
// policies at the scenarios' small sizes), the scale sweep's sizes, the ablation, and the
// progress line on a terminal.
#include "bench/scenarios/runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "bench/scenarios/paths.h"
#include "bench/scenarios/settle.h"

namespace ifcore::bench {
namespace {

class Progress {
 public:
  explicit Progress(bool on) : on_(on) {}
  ~Progress() { clear(); }
  void set(std::string label) {
    label_ = std::move(label);
    show(0);
  }
  void show(double frac) {
    if (!on_) return;
    auto now = BenchClock::now();
    if (frac > 0 && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    std::string line = fmt::format("\r\033[K{} {:3.0f}%", label_, std::clamp(frac, 0.0, 1.0) * 100);
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
  }
  void clear() {
    if (!on_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }

 private:
  bool on_;
  std::string label_;
  BenchClock::time_point last_{};
};

Result<RunOutput> real_runner(Path path, const ScenarioSpec& s, const RunParams& p) {
  switch (path) {
    case Path::Embedded:
      return run_embedded(s, p);
    case Path::Daemon:
      return run_daemon(s, p, false);
    case Path::Ring:
      return run_daemon(s, p, true);
    case Path::Kernel:
      return run_kernel(s, p);
  }
  return fail(EINVAL, "bad path");
}

struct Runner {
  const SuiteOptions& o;
  Progress& progress;
  std::string daemon_why, kernel_why;

  Result<RunOutput> run(Path path, const ScenarioSpec& s, const RunParams& p) {
    return o.runner ? o.runner(path, s, p) : real_runner(path, s, p);
  }

  // The daemon path's metrics that were measured get what their requests cost over the
  // socket alone, on the CPUs of the last repetition, measured now (socket_floor.h).
  void price_at_floor(const std::map<std::string, Traffic>& traffic, const CpuChoice& cpus,
                      std::map<std::string, Measurement>& by_metric) {
    if (traffic.empty() || (o.runner && !o.measure_floor)) return;
    if (!o.runner) settle();
    auto floor = o.measure_floor ? o.measure_floor(cpus) : measure_socket_floor(cpus);
    if (!floor) return;
    for (const auto& [metric, t] : traffic)
      if (auto it = by_metric.find(metric); it != by_metric.end() && it->second.status.empty()) {
        it->second.socket_floor = floor->price(t);
        it->second.requests = t.one_at_a_time + t.pipelined;
      }
  }

  // Runs `reps` repetitions of s on `path` at n; appends one Measurement per metric.
  void measure(const ScenarioSpec& s, Path path, int n, int reps, const Policies& pol,
               const std::string& policy_name, std::vector<std::string> notes,
               std::vector<Measurement>& out) {
    std::map<std::string, Measurement> by_metric;
    for (const auto& m : s.metrics) {
      Measurement& x = by_metric[m.name];
      x.scenario = s.name;
      x.metric = m.name;
      x.path = path;
      x.policy = policy_name;
      x.n = n;
      x.notes = notes;
    }
    std::map<std::string, Traffic> traffic;  // the last repetition's
    CpuChoice cpus;                          // the last repetition's
    std::string why = path == Path::Daemon || path == Path::Ring ? daemon_why
                      : path == Path::Kernel                     ? kernel_why
                                                                 : "";
    if (!o.runner && !why.empty()) {
      for (auto& [_, x] : by_metric) x.status = "not available: " + why;
    } else {
      for (int rep = 0; rep < reps; ++rep) {
        std::string label =
            fmt::format("{} N={} {} {}/{}", s.name, n, to_string(path), rep + 1, reps);
        progress.set(label);
        RunParams p;
        p.n = n;
        p.daemon_state = o.daemon_state;
        p.policies = pol;
        p.policy_name = policy_name;
        p.progress = [this](double f) { progress.show(f); };
        // Every run starts on a quiet machine (settle.h): not while the kernel still
        // tears down the namespace of the run before.
        if (!o.runner) settle();
        // The server's work on the CPU that is fastest now (cpu_pair.h); the embedded
        // path stays where the scheduler puts it, with the engine's threads.
        if (o.pin && !o.runner && path != Path::Embedded) p.cpus = choose_cpus();
        cpus = p.cpus;
        auto r = run(path, s, p);
        if (!r) {
          for (auto& [_, x] : by_metric)
            if (x.status.empty())
              x.status =
                  fmt::format("{}: {}", r.error().code == EOPNOTSUPP ? "not available" : "failed",
                              r.error().message);
          break;
        }
        for (auto& [metric, samples] : r->samples) {
          auto it = by_metric.find(metric);
          if (it == by_metric.end()) continue;
          auto& x = it->second;
          x.samples.insert(x.samples.end(), samples.begin(), samples.end());
          if (auto d = r->devices.find(metric); d != r->devices.end()) x.devices = d->second;
        }
        for (auto& [_, x] : by_metric)
          for (const auto& note : r->notes)
            if (std::find(x.notes.begin(), x.notes.end(), note) == x.notes.end())
              x.notes.push_back(note);
        traffic = r->traffic;
      }
    }
    if (path == Path::Daemon) price_at_floor(traffic, cpus, by_metric);
    for (const auto& m : s.metrics) {
      Measurement& x = by_metric[m.name];
      if (x.status.empty() && x.samples.empty()) x.status = "not measured on this path";
      summarize(x);
      out.push_back(std::move(x));
    }
  }
};

// Repetitions for a size: the biggest runs once (they are long and steady).
int reps_for(int n, int repeat) {
  return n >= 100000 ? std::min(repeat, 1) : repeat;
}

}  // namespace

Result<SuiteResult> run_suite(const SuiteOptions& o) {
  auto t_start = BenchClock::now();
  SuiteResult res;
  res.machine = describe_machine();
  res.policy = o.policy;
  auto pol = bench_policy(o.policy);
  if (!pol) return fail(pol.error());
  res.policy_detail = pol->to_string();
  res.repeat = o.repeat;
  const bool legacy = is_legacy(*pol);

  std::vector<const ScenarioSpec*> list;
  if (o.scenarios.empty()) {
    for (const auto& s : scenarios()) list.push_back(&s);
  } else {
    for (const auto& name : o.scenarios) {
      const ScenarioSpec* s = find_scenario(name);
      if (!s) return fail(EINVAL, "unknown scenario \"{}\" (see --list)", name);
      list.push_back(s);
    }
  }

  Progress progress(o.progress);
  Runner run{o, progress, {}, {}};
  if (!o.runner) {
    if (std::find(o.paths.begin(), o.paths.end(), Path::Daemon) != o.paths.end() ||
        std::find(o.paths.begin(), o.paths.end(), Path::Ring) != o.paths.end())
      run.daemon_why = daemon_unavailable();
    if (std::find(o.paths.begin(), o.paths.end(), Path::Kernel) != o.paths.end())
      run.kernel_why = kernel_unavailable();
  }

  // The kernel's runs come after all of ifcore's. A kernel run leaves work behind that
  // outlasts the quiet-machine wait (its namespace is torn down by the kernel's workers,
  // bit by bit): daemon runs that followed kernel runs took up to 40% longer (100
  // pipelined creates: 480 µs against 348 µs). The table puts each path in its row.
  const bool kernel_last = o.paths.size() > 1;
  for (int phase = 0; phase < (kernel_last ? 2 : 1); ++phase) {
    for (const ScenarioSpec* s : list) {
      std::vector<int> sizes;
      if (s->name == "scale-sweep")
        sizes = sweep_sizes(legacy ? s->legacy_count : o.scale_max);
      else
        sizes = {legacy ? s->legacy_count : s->count};
      // The sweep's embedded runs come after an untimed one at its largest N, whose heap the
      // bench keeps (main.cc): each N is then timed on resident memory, not on the machine's
      // backing of fresh pages (on a virtual machine 0.2-0.7 GB/s, several times ifcore's
      // own cost at 10^6). What the first creation cost is the row's note.
      std::string warmed;
      const bool embedded_sweep =
          s->name == "scale-sweep" && phase == 0 && !o.runner &&
          std::find(o.paths.begin(), o.paths.end(), Path::Embedded) != o.paths.end();
      if (embedded_sweep && !sizes.empty()) {
        progress.set(fmt::format("{} warm-up N={} embedded", s->name, sizes.back()));
        if (auto first = warm_embedded(sizes.back(), Policies{}))
          warmed = fmt::format("after an untimed run at N={} (its creation: {:.2f} µs a device)",
                               sizes.back(), *first * 1e6);
      }
      for (int n : sizes) {
        for (Path path : o.paths) {
          if (kernel_last && (path == Path::Kernel) != (phase == 1)) continue;
          std::vector<std::string> notes;
          if (path == Path::Embedded && !warmed.empty()) notes.push_back(warmed);
          if (legacy && s->name != "scale-sweep")
            notes.push_back(
                fmt::format("scaled: N={} instead of {} (legacy sleeps are real)", n, s->count));
          if (path == Path::Kernel && legacy) notes.push_back("the kernel ignores --policy");
          if (path == Path::Kernel && s->name == "scale-sweep" && n > kKernelSweepMax) continue;
          run.measure(*s, path, n, reps_for(n, o.repeat), *pol, o.policy, notes, res.measurements);
        }
      }
    }
  }

  // The ablation: for each seed, legacy / legacy with only its fix / default (embedded).
  bool embedded = std::find(o.paths.begin(), o.paths.end(), Path::Embedded) != o.paths.end();
  if (o.ablation && embedded) {
    for (const ScenarioSpec* s : list) {
      if (s->fix_seed < 0) continue;
      AblationRow row;
      row.scenario = s->name;
      row.metric = s->metrics.front().name;
      row.seed = s->seed;
      row.fix_policy = fmt::format("legacy-fix{}", s->fix_seed);
      row.n = s->legacy_count;
      row.seed_n = s->count;
      row.seed_before = s->metrics.front().seed_before;
      row.seed_after = s->metrics.front().seed_after;
      row.linear = !s->median_of_samples;
      auto figure = [&](const Policies& p, const std::string& name) -> std::optional<double> {
        std::vector<Measurement> tmp;
        run.measure(*s, Path::Embedded, row.n, 1, p, name, {}, tmp);
        for (auto& m : tmp)
          if (m.metric == row.metric) {
            if (!m.ok()) {
              row.error = m.status;
              return std::nullopt;
            }
            return m.median;
          }
        return std::nullopt;
      };
      row.legacy = figure(Policies::legacy(), "legacy");
      row.fixed = figure(legacy_with_fix(s->fix_seed), row.fix_policy);
      row.deflt = figure(Policies{}, "default");
      res.ablation.push_back(std::move(row));
    }
  }
  progress.clear();
  res.wall_seconds = seconds_between(t_start, BenchClock::now());
  return res;
}

}  // namespace ifcore::bench
