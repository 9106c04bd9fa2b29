// bench/scenarios/parallel.cc — see parallel.h.
#include "bench/scenarios/parallel.h"

#include <fmt/core.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench/scenarios/bench.h"
#include "bench/scenarios/floor.h"
#include "bench/scenarios/paths.h"
#include "ifcore/ifcore.h"

namespace ifcore::bench {

namespace {

enum class Scope { Engine, Namespace };

// Seconds for `threads` threads started together, each running body(its number).
template <class Body>
double together(int threads, Body body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      body(t);
    });
  while (ready.load() < threads) std::this_thread::yield();
  auto t0 = BenchClock::now();
  go.store(true, std::memory_order_release);
  for (auto& t : pool) t.join();
  return seconds_between(t0, BenchClock::now());
}

// One writer's rounds in `ns`: `names.size()` dummies made one by one, then deleted in one
// batch, each round under one control.
Result<void> write_rounds(Engine& eng, Namespace& ns, Scope scope,
                          const std::vector<LinkRequest>& reqs, int rounds) {
  std::vector<Device*> made;
  made.reserve(reqs.size());
  for (int r = 0; r < rounds; ++r) {
    auto ctl = scope == Scope::Engine ? eng.control() : eng.control(ns);
    made.clear();
    for (const LinkRequest& req : reqs) {
      auto d = ctl.create_link(ns, req);
      if (!d) return fail(d.error().code, "create {}: {}", *req.name, d.error().message);
      made.push_back(*d);
    }
    if (auto del = ctl.delete_links(made); !del) return del;
  }
  return ok();
}

// Devices made and deleted per second by `writers` writers, each in its own namespace.
Result<double> throughput(int writers, Scope scope, int devices, int rounds) {
  auto eng = make_engine();
  std::vector<Namespace*> spaces;
  {
    auto ctl = eng->control();
    for (int w = 0; w < writers; ++w) {
      auto ns = ctl.create_namespace(fmt::format("writer{}", w));
      if (!ns) return fail(ns.error());
      spaces.push_back(*ns);
    }
  }
  std::vector<LinkRequest> reqs(static_cast<std::size_t>(devices));
  for (int i = 0; i < devices; ++i) {
    reqs[static_cast<std::size_t>(i)].kind = "dummy";
    reqs[static_cast<std::size_t>(i)].name = fmt::format("dummy{}", i);
  }
  // A round each first, so that the timed rounds reuse the allocator's memory.
  for (Namespace* ns : spaces)
    if (auto w = write_rounds(*eng, *ns, scope, reqs, 1); !w) return fail(w.error());
  std::vector<Result<void>> results(spaces.size(), ok());
  double took = together(writers, [&](int w) {
    results[static_cast<std::size_t>(w)] =
        write_rounds(*eng, *spaces[static_cast<std::size_t>(w)], scope, reqs, rounds);
  });
  for (auto& r : results)
    if (!r) return fail(r.error());
  eng->drain();
  return static_cast<double>(writers) * rounds * devices / took;
}

// Iterations per second of `threads` threads each running the same arithmetic loop, which
// touches no memory but its registers.
double loop_rate(int threads) {
  constexpr std::uint64_t kIterations = 30'000'000;  // about 30 ms on one CPU here
  double took = together(threads, [](int t) {
    std::uint64_t x = 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(t);
    for (std::uint64_t i = 0; i < kIterations; ++i) x = x * 6364136223846793005ull + i;
    volatile std::uint64_t sink = x;
    (void)sink;
  });
  return static_cast<double>(threads) * kIterations / took;
}

// Devices per second of `threads` threads each running the bare floor (floor.h) of
// `devices` devices `rounds` times, each in its own table: the same objects allocated and
// the same keys inserted and removed as the writers, with nothing shared but the host.
Result<double> floor_rate(int threads, int devices, int rounds) {
  std::vector<Result<double>> results(static_cast<std::size_t>(threads), 0.0);
  double took = together(threads, [&](int t) {
    for (int r = 0; r < rounds; ++r) {
      auto s = bare_floor_seconds(devices);
      results[static_cast<std::size_t>(t)] = s;
      if (!s) return;
    }
  });
  for (auto& r : results)
    if (!r) return fail(r.error());
  return static_cast<double>(threads) * rounds * devices / took;
}

}  // namespace

Result<ParallelFigures> measure_parallel_namespaces(int devices, int rounds, int repeat) {
  ParallelFigures f{.devices = devices, .rounds = rounds, .repeat = repeat};
  std::vector<double> wide, one, two, ceiling, floor_ceiling;
  for (int i = 0; i < repeat; ++i) {
    const double alone = loop_rate(1);
    ceiling.push_back(loop_rate(2) / alone);
    for (auto [writers, scope, out] :
         {std::tuple{1, Scope::Engine, &wide}, std::tuple{1, Scope::Namespace, &one},
          std::tuple{2, Scope::Namespace, &two}}) {
      auto t = throughput(writers, scope, devices, rounds);
      if (!t) return fail(t.error());
      out->push_back(*t);
    }
    // After the writers, whose engines it would otherwise find in a heap it reshaped.
    auto floor_one = floor_rate(1, devices, rounds);
    if (!floor_one) return fail(floor_one.error());
    auto floor_two = floor_rate(2, devices, rounds);
    if (!floor_two) return fail(floor_two.error());
    floor_ceiling.push_back(*floor_two / *floor_one);
  }
  f.engine_wide = median_of(wide);
  f.one = median_of(one);
  f.two = median_of(two);
  f.ceiling = median_of(ceiling);
  f.floor_ceiling = median_of(floor_ceiling);
  return f;
}

void print_parallel_namespaces(const ParallelFigures& f, std::FILE* out) {
  fmt::print(out,
             "\n{}: each writer in its own namespace makes {} dummies one by one and deletes "
             "them in one batch, {} rounds; devices made and deleted per second, median of {}\n",
             kParallelName, f.devices, f.rounds, f.repeat);
  auto row = [&](const char* what, double rate) {
    fmt::print(out, "  {:<48} {:>12.0f} /s  {:>6.3f} µs a device\n", what, rate,
               rate > 0 ? 1e6 / rate : 0);
  };
  row("1 writer, the engine's control", f.engine_wide);
  row("1 writer, its namespace's control", f.one);
  row("2 writers, each its namespace's control", f.two);
  fmt::print(out, "  2 writers ÷ 1: {:.2f}× (target ≥ {:.1f}× on 2 CPUs): {}\n", f.ratio(),
             kParallelTarget, f.ratio() >= kParallelTarget ? "met" : "MISSED");
  fmt::print(out,
             "  the host's ceiling in the same run: 2 threads of a loop that shares nothing "
             "÷ 1: {:.2f}×\n",
             f.ceiling);
  fmt::print(out,
             "  and for memory-bound work: 2 threads of the bare floor (floor.h) of the same "
             "devices and rounds ÷ 1: {:.2f}×\n",
             f.floor_ceiling);
}

}  // namespace ifcore::bench
