// ifcore-bench — the seeds' experiments measured through ifcore's library, through
// ifcored's socket and on the machine's kernel, with the seeds' own figures beside them.
//
//   ifcore-bench [SCENARIO...] [--path embedded,daemon,ring,kernel] [--repeat N] [--policy NAME]
//                [--json FILE] [--plot FILE.svg] [--list]
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include "bench/scenarios/fairness.h"
#include "bench/scenarios/floor.h"
#include "bench/scenarios/link_dump.h"
#include "bench/scenarios/neigh_batch.h"
#include "bench/scenarios/parallel.h"
#include "bench/scenarios/runner.h"
#include "bench/scenarios/shim_batch.h"
#include "ifcore/version.h"

#ifdef IFCORE_TCMALLOC_LINKED
#include <gperftools/malloc_extension.h>
#endif

using namespace ifcore::bench;

int main(int argc, char** argv) {
  CLI::App app{"ifcore-bench: the seeds' experiments on ifcore (embedded, daemon) and the kernel"};
  app.set_version_flag("-V,--version", "ifcore-bench " + std::string(ifcore::version()));
  std::vector<std::string> names;
  std::string paths = "embedded,daemon,ring,kernel";
  std::string json_path, plot_path;
  SuiteOptions o;
  bool list = false, no_ablation = false, no_pin = false;
  app.add_option("scenario", names, "scenarios to run (default: all; see --list)");
  app.add_option("--path", paths, "paths: embedded,daemon,ring,kernel");
  app.add_option("--repeat", o.repeat, "repetitions per scenario and path")
      ->check(CLI::Range(1, 1000));
  app.add_option("--policy", o.policy,
                 "default, legacy, legacy-fix0..legacy-fix4 (legacy with one seed's fix), or "
                 "key=value,... as ifcore's Policies::parse");
  app.add_option("--scale-max", o.scale_max, "largest N of scale-sweep (100 ... 1000000)")
      ->check(CLI::Range(100, 1000000));
  app.add_option("--json", json_path, "write every figure and the machine to FILE");
  app.add_option("--plot", plot_path, "draw time per device against N to FILE.svg");
  app.add_flag("--no-ablation", no_ablation, "skip the ablation table");
  app.add_option("--daemon-state", o.daemon_state,
                 "the daemon path's ifcored keeps its state (--state FILE) with this --sync mode: "
                 "full, batch or off (docs/STATE.md)")
      ->check(CLI::IsMember({"full", "batch", "off"}));
  app.add_flag("--no-pin", no_pin,
               "leave every thread to the scheduler (default: for the timed run, ifcored's "
               "serving thread and the kernel path's thread on the fastest CPU, the daemon "
               "path's client on another)");
  app.add_flag("--list", list, "print the scenario names, one a line");
  CLI11_PARSE(app, argc, argv);
#ifdef IFCORE_TCMALLOC_LINKED
  // The bench and the ifcored it starts keep the heap they have freed (tcmalloc returns none
  // of it to the system), as the kernel they are compared with keeps its slab caches: a run
  // is then timed on memory an earlier run made resident, not on the machine's backing of
  // fresh pages, which a virtual machine may take back as soon as they are freed (the
  // sweep's warm-up, runner.cc).
  MallocExtension::instance()->SetMemoryReleaseRate(0);
  ::setenv("TCMALLOC_RELEASE_RATE", "0", 0);
#endif

  if (list) {
    for (const auto& s : scenarios()) fmt::print("{}\n", s.name);
    fmt::print("{}\n", kShimBatchName);
    fmt::print("{}\n", kNeighBatchName);
    fmt::print("{}\n", kFairnessName);
    fmt::print("{}\n", kFloorName);
    fmt::print("{}\n", kLinkDumpName);
    fmt::print("{}\n", kParallelName);
    return 0;
  }
  // The shim's cost, the neighbours' batch, fairness, the floor, the parallel namespaces and the
  // link dump are sections of their own, after the suite's table: in the default suite, or when
  // named. A section named among the scenarios is taken out of the list (and the suite's table is
  // skipped when nothing else was asked for); with no names, every section runs.
  auto take = [&](const char* section) {
    auto it = std::find(names.begin(), names.end(), section);
    if (it == names.end()) return names.empty();
    names.erase(it);
    if (names.empty()) names.push_back("");  // nothing else was asked for
    return true;
  };
  bool shim = take(kShimBatchName), neigh = take(kNeighBatchName), fairness = take(kFairnessName),
       floor = take(kFloorName), link_dump = take(kLinkDumpName), parallel = take(kParallelName);
  // The sections of their own (after the suite's table, or alone when only they are named).
  auto sections = [&]() {
    if (shim) {
      if (auto f = measure_shim_batch(1000, o.repeat))
        print_shim_batch(*f, stdout);
      else
        fmt::print(stderr, "ifcore-bench: {}\n", f.error().message);
    }
    if (neigh) {
      if (auto f = measure_neigh_batch(10000, 10, o.repeat))
        print_neigh_batch(*f, stdout);
      else
        fmt::print(stderr, "ifcore-bench: {}\n", f.error().message);
    }
    if (floor) {
      std::vector<int> sizes;
      for (int n : sweep_sizes(o.scale_max))
        if (n >= 10000) sizes.push_back(n);
      if (auto f = measure_floor(sizes, o.repeat))
        print_floor(*f, stdout);
      else
        fmt::print(stderr, "ifcore-bench: {}\n", f.error().message);
    }
    if (parallel) {
      if (auto f = measure_parallel_namespaces(5000, 20, o.repeat))
        print_parallel_namespaces(*f, stdout);
      else
        fmt::print(stderr, "ifcore-bench: {}\n", f.error().message);
    }
    if (link_dump) {
      if (auto f = measure_link_dump(o.scale_max, o.repeat))
        print_link_dump(*f, stdout);
      else
        fmt::print(stderr, "ifcore-bench: {}\n", f.error().message);
    }
    if (fairness) {
      for (bool rings : {false, true}) {
        if (auto f = measure_fairness(5000, rings))
          print_fairness(*f, stdout);
        else
          fmt::print(stderr, "ifcore-bench: {}\n", f.error().message);
      }
    }
  };
  auto p = parse_paths(paths);
  if (!p) {
    fmt::print(stderr, "ifcore-bench: {}\n", p.error().message);
    return 2;
  }
  o.paths = *p;
  bool suite = !(names.size() == 1 && names[0].empty());
  o.scenarios = suite ? names : std::vector<std::string>{};
  o.ablation = !no_ablation && o.policy == "default";
  o.progress = ::isatty(STDERR_FILENO);
  o.pin = !no_pin;
  int rc = 0;
  if (!suite) {
    sections();
    return 0;
  }
  auto r = run_suite(o);
  if (!r) {
    fmt::print(stderr, "ifcore-bench: {}\n", r.error().message);
    return 2;
  }
  print_table(*r, stdout);
  sections();
  std::fflush(stdout);
  if (!json_path.empty()) {
    if (auto w = write_json(*r, json_path); !w) {
      fmt::print(stderr, "ifcore-bench: {}\n", w.error().message);
      rc = 1;
    }
  }
  if (!plot_path.empty()) {
    if (auto w = write_svg(*r, plot_path); !w) {
      fmt::print(stderr, "ifcore-bench: {}\n", w.error().message);
      rc = 1;
    }
  }
  return rc;
}
