// bench/scenarios/report.cc — the terminal table (with the kernel ratio, the seed's figure
// and the ablation), the targets of the bench issue as measured, and the JSON document
// (schema in docs/BENCH.md).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "bench/scenarios/runner.h"

namespace ifcore::bench {
namespace {

const Measurement* find(const SuiteResult& r, const std::string& scenario,
                        const std::string& metric, Path path, int n) {
  for (const auto& m : r.measurements)
    if (m.scenario == scenario && m.metric == metric && m.path == path && m.n == n) return &m;
  return nullptr;
}

const MetricSpec* metric_spec(const std::string& scenario, const std::string& metric) {
  const ScenarioSpec* s = find_scenario(scenario);
  if (!s) return nullptr;
  for (const auto& m : s->metrics)
    if (m.name == metric) return &m;
  return nullptr;
}

std::optional<double> kernel_ratio(const SuiteResult& r, const Measurement& m) {
  if (!m.ok() || m.median <= 0) return std::nullopt;
  const Measurement* k = find(r, m.scenario, m.metric, Path::Kernel, m.n);
  if (!k || !k->ok()) return std::nullopt;
  return k->median / m.median;
}

std::string format_ratio(double x) {
  if (x >= 100) return fmt::format("{:.0f}×", x);
  if (x >= 10) return fmt::format("{:.1f}×", x);
  return fmt::format("{:.2f}×", x);
}

// "; the socket alone: 0.93 ms, at most 14.8×" for a daemon figure whose requests were
// priced at the socket's floor (socket_floor.h): the ratio no work in ifcored could pass.
std::string floor_text(const SuiteResult& r, const Measurement& m) {
  if (!m.socket_floor || *m.socket_floor <= 0) return "";
  std::string text = fmt::format("; the socket alone: {}", format_seconds(*m.socket_floor));
  if (auto k = kernel_ratio(r, m))
    text += fmt::format(", at most {}", format_ratio(*k * m.median / *m.socket_floor));
  return text;
}

// A daemon figure's time per request that is ifcored's own: what is left once the socket
// alone (its floor) and the engine's work (the embedded path's figure for the same metric
// and N) are taken out, per request (per device for requests that carry many: the bulk
// delete, the sweep's create batches of 10 000). None without a floor or an embedded figure.
struct OwnTime {
  double seconds = 0;  // may be below 0: the three figures' noise
  int per = 0;
  const char* unit = "request";
};
std::optional<OwnTime> own_time(const SuiteResult& r, const Measurement& m) {
  if (m.path != Path::Daemon || !m.ok() || !m.socket_floor || m.requests <= 0) return std::nullopt;
  const Measurement* e = find(r, m.scenario, m.metric, Path::Embedded, m.n);
  if (!e || !e->ok()) return std::nullopt;
  OwnTime t;
  t.per = m.requests;
  if (m.devices > m.requests) {
    t.per = m.devices;
    t.unit = m.requests == 1 ? "device of one request" : "device of batched requests";
  }
  t.seconds = (m.median - *m.socket_floor - e->median) / t.per;
  return t;
}

// Rows grouped by scenario and N (in run order), then by metric (the scenario's order),
// then by path, so that one metric's paths sit together.
std::vector<const Measurement*> table_order(const SuiteResult& r) {
  std::vector<std::string> groups;
  for (const auto& m : r.measurements) {
    std::string key = m.scenario + "/" + std::to_string(m.n);
    if (std::find(groups.begin(), groups.end(), key) == groups.end()) groups.push_back(key);
  }
  auto metric_rank = [](const Measurement& m) {
    const ScenarioSpec* s = find_scenario(m.scenario);
    if (!s) return 0;
    for (std::size_t i = 0; i < s->metrics.size(); ++i)
      if (s->metrics[i].name == m.metric) return int(i);
    return int(s->metrics.size());
  };
  std::vector<const Measurement*> out;
  for (const auto& m : r.measurements) out.push_back(&m);
  std::stable_sort(out.begin(), out.end(), [&](const Measurement* a, const Measurement* b) {
    auto ga = std::find(groups.begin(), groups.end(), a->scenario + "/" + std::to_string(a->n)) -
              groups.begin();
    auto gb = std::find(groups.begin(), groups.end(), b->scenario + "/" + std::to_string(b->n)) -
              groups.begin();
    if (ga != gb) return ga < gb;
    if (metric_rank(*a) != metric_rank(*b)) return metric_rank(*a) < metric_rank(*b);
    return int(a->path) < int(b->path);
  });
  return out;
}

}  // namespace

std::string format_seconds(double s) {
  if (s < 1e-6) return fmt::format("{:.0f} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.1f} µs", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

void print_table(const SuiteResult& r, std::FILE* out) {
  const auto& mi = r.machine;
  fmt::print(out, "ifcore-bench on {} (Linux {}, {} CPUs, {}), policy {}, {} repetitions\n\n",
             mi.hostname, mi.kernel, mi.cpus, mi.cpu_model, r.policy, r.repeat);
  fmt::print(out, "{:<26} {:<8} {:<8} {:>7}  {:>10}  {:<21} {:>9}  {}\n", "scenario", "metric",
             "path", "N", "median", "min–max", "kernel÷", "seed");
  fmt::print(out, "{}\n", std::string(118, '-'));
  std::string last, last_metric;
  std::vector<std::string> notes;
  for (const Measurement* mp : table_order(r)) {
    const Measurement& m = *mp;
    std::string key = m.scenario + "/" + std::to_string(m.n);
    if (!last.empty() && key != last) fmt::print(out, "\n");
    const MetricSpec* ms = metric_spec(m.scenario, m.metric);
    bool first_of_metric = key != last || m.metric != last_metric;
    last = key;
    last_metric = m.metric;
    std::string seed = ms && first_of_metric ? ms->seed_text : "";
    if (!m.ok()) {
      fmt::print(out, "{:<26} {:<8} {:<8} {:>7}  {}\n", m.scenario, m.metric, to_string(m.path),
                 m.n, m.status);
      continue;
    }
    auto ratio = kernel_ratio(r, m);
    std::string range = fmt::format("{} – {}", format_seconds(m.min), format_seconds(m.max));
    std::string mark;
    for (const auto& note : m.notes) {
      auto it = std::find(notes.begin(), notes.end(), note);
      std::size_t idx = it - notes.begin();
      if (it == notes.end()) notes.push_back(note);
      mark += fmt::format("[{}]", idx + 1);
    }
    fmt::print(out, "{:<26} {:<8} {:<8} {:>7}  {:>10}  {:<21} {:>9}  {}{}{}\n", m.scenario,
               m.metric, to_string(m.path), m.n, format_seconds(m.median), range,
               ratio ? format_ratio(*ratio) : "", seed, seed.empty() || mark.empty() ? "" : " ",
               mark);
  }
  if (!notes.empty()) {
    fmt::print(out, "\n");
    for (std::size_t i = 0; i < notes.size(); ++i) fmt::print(out, "[{}] {}\n", i + 1, notes[i]);
  }
  fmt::print(out,
             "\nkernel÷: the kernel's median divided by this path's (how many times faster).\n");

  if (!r.ablation.empty()) {
    fmt::print(out, "\nablation (embedded path, legacy sizes; sleeps are real):\n");
    fmt::print(out, "{:<26} {:>4} {:>5}  {:>10}  {:>10}  {:>10}  {:<16}  {}\n", "scenario", "seed",
               "N", "legacy", "only fix", "default", "legacy at seed N", "seed before → after");
    for (const auto& a : r.ablation) {
      auto f = [](const std::optional<double>& v) {
        return v ? format_seconds(*v) : std::string("—");
      };
      std::string extra = "";
      if (a.legacy) {
        extra = a.linear
                    ? "≈ " + format_seconds(*a.legacy * a.seed_n / std::max(1, a.n)) + " (extrap.)"
                    : format_seconds(*a.legacy) + " (median)";
      }
      std::string seed =
          fmt::format("{} → {}", a.seed_before ? format_seconds(*a.seed_before) : "—",
                      a.seed_after ? format_seconds(*a.seed_after) : "—");
      fmt::print(out, "{:<26} {:>4} {:>5}  {:>10}  {:>10}  {:>10}  {:<16}  {}{}\n", a.scenario,
                 a.seed, a.n, f(a.legacy), f(a.fixed), f(a.deflt), extra, seed,
                 a.error.empty() ? "" : "  " + a.error);
    }
    fmt::print(out,
               "only fix: legacy with that seed's fix (legacy-fixN): 0 dst-priority=-10, 1 and 4 "
               "ref-wait=backoff, 2 unregister=batched, 3 linkwatch=adaptive\n");
  }

  // The targets, as measured (not asserted).
  std::vector<std::string> lines;
  for (const auto& m : r.measurements) {
    if ((m.path != Path::Daemon && m.path != Path::Ring) || !m.ok()) continue;
    // "daemon": datagrams through its socket; "daemon on rings": through mapped rings.
    const char* via = m.path == Path::Ring ? "daemon on rings" : "daemon";
    auto ratio = kernel_ratio(r, m);
    if (m.metric == "delete" && ratio)
      lines.push_back(fmt::format(
          "{} delete N={}: {} {} faster than the kernel (target ≥ 100×): {}{}", m.scenario, m.n,
          via, format_ratio(*ratio), *ratio >= 100 ? "met" : "MISSED", floor_text(r, m)));
    if (m.metric == "create" && ratio)
      lines.push_back(fmt::format(
          "{} create N={}: {} {} faster than the kernel (target ≥ 30×): {}{}", m.scenario, m.n, via,
          format_ratio(*ratio), *ratio >= 30 ? "met" : "MISSED", floor_text(r, m)));
    if (auto own = own_time(r, m))
      lines.push_back(fmt::format(
          "{} {} N={}: ifcored's own time per {} above the socket alone and the engine: {} "
          "(over {}; target ≤ 1 µs): {}",
          m.scenario, m.metric, m.n, own->unit,
          own->seconds > 0 ? format_seconds(own->seconds) : "none (within the figures' noise)",
          own->per, own->seconds <= 1e-6 ? "met" : "MISSED"));
    if (m.scenario == "seed2-dummy-10k" && m.metric == "delete")
      lines.push_back(fmt::format("seed2-dummy-10k delete via {} {} (target < 20 ms): {}", via,
                                  format_seconds(m.median), m.median < 0.020 ? "met" : "MISSED"));
    if (m.scenario == "seed1-ipv6-100" && m.metric == "total")
      lines.push_back(fmt::format("seed1-ipv6-100 total via {} {} (target < 20 ms): {}", via,
                                  format_seconds(m.median), m.median < 0.020 ? "met" : "MISSED"));
    if (m.scenario == "seed3-veth-carrier" && m.metric == "carrier" && ratio)
      lines.push_back(fmt::format("seed3-veth-carrier via {} {} vs kernel (target ≤ kernel): {}",
                                  via, format_seconds(m.median), *ratio >= 1 ? "met" : "MISSED"));
  }
  for (const auto& m : r.measurements)
    if (m.path == Path::Embedded && m.ok() && m.scenario == "seed3-veth-carrier" &&
        m.metric == "carrier")
      lines.push_back(fmt::format("seed3-veth-carrier embedded {} (target < 5 µs): {}",
                                  format_seconds(m.median), m.median < 5e-6 ? "met" : "MISSED"));
  if (!lines.empty()) {
    fmt::print(out, "\ntargets (policy {}):\n", r.policy);
    for (const auto& l : lines) fmt::print(out, "  {}\n", l);
  }
  fmt::print(out, "\nwall time {:.1f} s\n", r.wall_seconds);
}

nlohmann::json to_json(const SuiteResult& r) {
  using nlohmann::json;
  json j;
  j["schema"] = "ifcore-bench/1";
  const auto& mi = r.machine;
  j["machine"] = {{"kernel", mi.kernel}, {"hostname", mi.hostname},   {"cpu_model", mi.cpu_model},
                  {"cpus", mi.cpus},     {"mem_bytes", mi.mem_bytes}, {"date", mi.date}};
  j["policy"] = r.policy;
  j["policy_detail"] = r.policy_detail;
  j["repeat"] = r.repeat;
  j["wall_seconds"] = r.wall_seconds;
  json ms = json::array();
  for (const auto& m : r.measurements) {
    json x = {{"scenario", m.scenario}, {"metric", m.metric}, {"path", to_string(m.path)},
              {"policy", m.policy},     {"n", m.n},           {"devices", m.devices},
              {"samples", m.samples},   {"notes", m.notes},   {"ok", m.ok()}};
    if (m.ok()) {
      x["median"] = m.median;
      x["min"] = m.min;
      x["max"] = m.max;
      x["per_device"] = m.devices > 0 ? m.median / m.devices : m.median;
      auto k = kernel_ratio(r, m);
      x["kernel_ratio"] = k ? json(*k) : json(nullptr);
      x["socket_floor"] = m.socket_floor ? json(*m.socket_floor) : json(nullptr);
      x["requests"] = m.requests;
    } else {
      x["status"] = m.status;
    }
    if (const MetricSpec* s = metric_spec(m.scenario, m.metric)) {
      x["seed_before"] = s->seed_before ? json(*s->seed_before) : json(nullptr);
      x["seed_after"] = s->seed_after ? json(*s->seed_after) : json(nullptr);
    }
    ms.push_back(std::move(x));
  }
  j["measurements"] = std::move(ms);
  json ab = json::array();
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  for (const auto& a : r.ablation) {
    json x = {{"scenario", a.scenario},
              {"metric", a.metric},
              {"seed", a.seed},
              {"n", a.n},
              {"seed_n", a.seed_n},
              {"fix_policy", a.fix_policy},
              {"legacy", opt(a.legacy)},
              {"only_fix", opt(a.fixed)},
              {"default", opt(a.deflt)},
              {"seed_before", opt(a.seed_before)},
              {"seed_after", opt(a.seed_after)},
              {"linear", a.linear}};
    x["legacy_extrapolated"] =
        a.legacy && a.linear ? json(*a.legacy * a.seed_n / std::max(1, a.n)) : json(nullptr);
    if (!a.error.empty()) x["error"] = a.error;
    ab.push_back(std::move(x));
  }
  j["ablation"] = std::move(ab);
  return j;
}

Result<void> write_json(const SuiteResult& r, const std::string& path) {
  std::ofstream f(path);
  if (!f) return fail(errno, "cannot write {}: {}", path, std::strerror(errno));
  f << to_json(r).dump(2) << "\n";
  if (!f) return fail(EIO, "cannot write {}", path);
  return ok();
}

}  // namespace ifcore::bench
