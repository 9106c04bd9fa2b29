// tests/bench/output_test.cc — the bench's outputs from a suite run with a fake path runner:
// the JSON document against the schema in docs/BENCH.md, the SVG plot (well-formed, one
// series per path and metric), the table, and what a path that cannot run reports.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "bench/scenarios/runner.h"
#include "printed.h"

namespace ifcore::bench {
namespace {

// A path runner with fixed figures: the kernel is 1000 times slower than embedded.
Result<RunOutput> fake(Path path, const ScenarioSpec& s, const RunParams& p) {
  if (path == Path::Daemon) return fail(EOPNOTSUPP, "no daemon in this test");
  double scale = path == Path::Kernel ? 1000.0 : 1.0;
  RunOutput out;
  for (const auto& m : s.metrics) {
    int k = s.median_of_samples ? p.n : 1;
    for (int i = 0; i < k; ++i) out.samples[m.name].push_back(scale * 1e-6 * p.n * (1 + 0.01 * i));
    out.devices[m.name] = p.n;
  }
  out.notes.push_back("fake figures");
  return out;
}

SuiteResult fake_suite(std::vector<std::string> names = {}) {
  SuiteOptions o;
  o.scenarios = std::move(names);
  o.repeat = 2;
  o.scale_max = 10000;
  o.runner = fake;
  auto r = run_suite(o);
  EXPECT_TRUE(r);
  return *r;
}

TEST(BenchJson, FollowsTheSchema) {
  nlohmann::json j = to_json(fake_suite());
  EXPECT_EQ(j.at("schema"), "ifcore-bench/1");
  for (const char* k : {"kernel", "hostname", "cpu_model", "date"})
    EXPECT_TRUE(j.at("machine").at(k).is_string()) << k;
  EXPECT_TRUE(j.at("machine").at("cpus").is_number_integer());
  EXPECT_TRUE(j.at("machine").at("mem_bytes").is_number_unsigned());
  EXPECT_TRUE(j.at("policy").is_string());
  EXPECT_TRUE(j.at("policy_detail").is_string());
  EXPECT_TRUE(j.at("repeat").is_number_integer());
  EXPECT_TRUE(j.at("wall_seconds").is_number());
  ASSERT_TRUE(j.at("measurements").is_array());
  std::set<std::string> scenarios_seen;
  int ok = 0, missing = 0;
  for (const auto& m : j.at("measurements")) {
    for (const char* k : {"scenario", "metric", "path", "policy"})
      EXPECT_TRUE(m.at(k).is_string()) << k;
    EXPECT_TRUE(m.at("n").is_number_integer());
    EXPECT_TRUE(m.at("devices").is_number_integer());
    EXPECT_TRUE(m.at("samples").is_array());
    EXPECT_TRUE(m.at("notes").is_array());
    EXPECT_TRUE(m.at("ok").is_boolean());
    EXPECT_TRUE(m.at("seed_before").is_number() || m.at("seed_before").is_null());
    scenarios_seen.insert(m.at("scenario"));
    if (m.at("ok")) {
      ++ok;
      for (const char* k : {"median", "min", "max", "per_device"})
        EXPECT_TRUE(m.at(k).is_number()) << k;
      EXPECT_LE(m.at("min").get<double>(), m.at("median").get<double>());
      EXPECT_LE(m.at("median").get<double>(), m.at("max").get<double>());
      EXPECT_TRUE(m.at("kernel_ratio").is_number());
      if (m.at("path") == "embedded") {
        EXPECT_NEAR(m.at("kernel_ratio").get<double>(), 1000.0, 1.0);
      }
    } else {
      ++missing;
      EXPECT_TRUE(m.at("status").is_string());
      EXPECT_EQ(m.at("path"), "daemon");
    }
  }
  EXPECT_EQ(scenarios_seen.size(), scenarios().size());
  EXPECT_GT(ok, 0);
  EXPECT_GT(missing, 0);
  ASSERT_TRUE(j.at("ablation").is_array());
  EXPECT_EQ(j.at("ablation").size(), 6u);  // one row per seed scenario
  for (const auto& a : j.at("ablation")) {
    for (const char* k : {"scenario", "metric", "seed", "fix_policy"})
      EXPECT_TRUE(a.at(k).is_string()) << k;
    for (const char* k : {"legacy", "only_fix", "default"}) EXPECT_TRUE(a.at(k).is_number()) << k;
    EXPECT_TRUE(a.at("n").is_number_integer());
    EXPECT_TRUE(a.at("seed_n").is_number_integer());
    EXPECT_TRUE(a.at("linear").is_boolean());
  }
}

TEST(BenchJson, LegacyRunsAreScaled) {
  SuiteOptions o;
  o.scenarios = {"seed1-ipv6-100"};
  o.policy = "legacy";
  o.repeat = 1;
  o.runner = fake;
  auto r = run_suite(o);
  ASSERT_TRUE(r);
  ASSERT_FALSE(r->measurements.empty());
  for (const auto& m : r->measurements) {
    EXPECT_EQ(m.n, 10);
    EXPECT_EQ(m.policy, "legacy");
    bool scaled = false;
    for (const auto& n : m.notes) scaled |= n.find("scaled") != std::string::npos;
    EXPECT_TRUE(scaled);
  }
  EXPECT_FALSE(run_suite([] {
    SuiteOptions o;
    o.scenarios = {"seed9"};
    return o;
  }()));
}

// Minimal XML check: every tag closed in order, attributes quoted.
bool balanced(const std::string& xml) {
  std::vector<std::string> stack;
  std::regex tag(R"(<(/?)([A-Za-z][\w:-]*)([^<>]*?)(/?)>)");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), tag); it != std::sregex_iterator();
       ++it) {
    const auto& m = *it;
    if (m[1] == "/") {
      if (stack.empty() || stack.back() != m[2]) return false;
      stack.pop_back();
    } else if (m[4] != "/") {
      stack.push_back(m[2]);
    }
  }
  return stack.empty();
}

TEST(BenchPlot, SvgIsWellFormedWithASeriesPerPath) {
  SuiteResult r = fake_suite({"scale-sweep"});
  std::string svg = render_svg(r);
  ASSERT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("viewBox=\"0 0 "), std::string::npos);
  std::string body = svg.substr(svg.find("?>") + 2);
  EXPECT_TRUE(balanced(body));
  for (const char* path : {"embedded", "kernel"})
    for (const char* metric : {"create", "delete"}) {
      std::string key = std::string("data-path=\"") + path + "\" data-metric=\"" + metric + "\"";
      EXPECT_NE(svg.find(key), std::string::npos) << key;
    }
  // The daemon has no figures in this run: no series for it.
  EXPECT_EQ(svg.find("data-path=\"daemon\""), std::string::npos);
  // Three sizes (100, 1000, 10000): three points per polyline.
  auto at = svg.find("<polyline");
  auto pts = svg.find("points=\"", at);
  std::string points = svg.substr(pts + 8, svg.find('"', pts + 8) - pts - 8);
  EXPECT_EQ(std::count(points.begin(), points.end(), ','), 3);

  char tmpl[] = "/tmp/bench-plot-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_TRUE(write_svg(r, tmpl));
  std::ifstream f(tmpl);
  std::string back((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(back, svg);
  std::remove(tmpl);
}

TEST(BenchTable, PrintsEveryRowAndTheSeed) {
  SuiteResult r = fake_suite({"seed0-macvlan-ipv6-delete"});
  std::string text = printed(r, print_table);
  EXPECT_NE(text.find("seed0-macvlan-ipv6-delete"), std::string::npos);
  EXPECT_NE(text.find("000: 1.03 s, ~30 ms after the fix"), std::string::npos);
  EXPECT_NE(text.find("not available"), std::string::npos);  // the daemon's row
  EXPECT_NE(text.find("1000×"), std::string::npos);          // embedded vs the fake kernel
  EXPECT_NE(text.find("ablation"), std::string::npos);
  EXPECT_EQ(format_seconds(2.5e-6), "2.5 µs");
  EXPECT_EQ(format_seconds(0.0123), "12.30 ms");
  EXPECT_EQ(format_seconds(1.5), "1.50 s");
}

// The daemon path's requests are priced at the socket's floor after its repetitions, and
// the targets say how far that floor leaves the ratio to the kernel.
TEST(BenchTable, DaemonTargetsShowTheSocketsFloor) {
  SuiteOptions o;
  o.scenarios = {"seed4-veth-100"};
  o.repeat = 1;
  o.ablation = false;
  o.runner = [](Path path, const ScenarioSpec& s, const RunParams& p) -> Result<RunOutput> {
    RunOutput out;
    // The kernel takes 100 µs a request, the daemon 10 µs.
    double each = path == Path::Kernel ? 100e-6 : 10e-6;
    for (const auto& m : s.metrics) {
      out.samples[m.name].push_back(each * p.n);
      out.devices[m.name] = 2 * p.n;
      out.traffic[m.name] = {.one_at_a_time = p.n};
    }
    return out;
  };
  int probes = 0;
  o.measure_floor = [&probes](const CpuChoice&) -> Result<SocketFloor> {
    ++probes;
    return SocketFloor{.round_trip = 8e-6, .pipelined = 1e-6};
  };
  auto r = run_suite(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(probes, 1);  // once, after the daemon path's repetitions
  for (const auto& m : r->measurements) {
    SCOPED_TRACE(std::string(to_string(m.path)) + " " + m.metric);
    if (m.path == Path::Daemon) {
      ASSERT_TRUE(m.socket_floor);
      EXPECT_DOUBLE_EQ(*m.socket_floor, 100 * 8e-6);
    } else {
      EXPECT_FALSE(m.socket_floor);
    }
  }
  std::string text = printed(*r, print_table);
  // 10×, and at most 12.5× over a socket whose round trip alone takes 8 µs.
  EXPECT_NE(text.find("seed4-veth-100 create N=100: daemon 10.0× faster than the kernel (target "
                      "≥ 30×): MISSED; the socket alone: 800.0 µs, at most 12.5×"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("daemon on rings 10.0× faster than the kernel (target ≥ 30×): MISSED;"),
            std::string::npos);
  nlohmann::json j = to_json(*r);
  for (const auto& m : j.at("measurements")) {
    if (m.at("path") == "daemon")
      EXPECT_DOUBLE_EQ(m.at("socket_floor").get<double>(), 800e-6);
    else
      EXPECT_TRUE(m.at("socket_floor").is_null());
  }
}

}  // namespace
}  // namespace ifcore::bench
