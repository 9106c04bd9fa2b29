// ifcore-micro: Google Benchmark figures for the core's hot paths.
#include <benchmark/benchmark.h>

#include <thread>

#include "ifcore/ifcore.h"

using namespace ifcore;

namespace {

Namespace& default_ns(Control& ctl) {
  return *ctl.find_namespace("default");
}

LinkRequest dummy(std::string name) {
  LinkRequest r;
  r.kind = "dummy";
  r.name = std::move(name);
  return r;
}

void BM_RegisterUnregisterOne(benchmark::State& state) {
  auto engine = make_engine();
  for (auto _ : state) {
    auto ctl = engine->control();
    auto d = ctl.create_link(default_ns(ctl), dummy("bench0"));
    if (!d) state.SkipWithError(d.error().message.c_str());
    (void)ctl.delete_link(**d);
  }
  engine->drain();
}
BENCHMARK(BM_RegisterUnregisterOne);

void BM_Batch10k(benchmark::State& state) {
  auto engine = make_engine();
  const int n = static_cast<int>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    auto ctl = engine->control();
    std::vector<Device*> devs;
    for (int i = 0; i < n; ++i) devs.push_back(*ctl.create_link(default_ns(ctl), dummy("d%d")));
    state.ResumeTiming();
    (void)ctl.delete_links(devs);
  }
  state.counters["per_device_ns"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * n,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  engine->drain();
}
BENCHMARK(BM_Batch10k)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_Create10k(benchmark::State& state) {
  auto engine = make_engine();
  for (auto _ : state) {
    auto ctl = engine->control();
    std::vector<Device*> devs;
    for (int i = 0; i < 10000; ++i) devs.push_back(*ctl.create_link(default_ns(ctl), dummy("d%d")));
    state.PauseTiming();
    (void)ctl.delete_links(devs);
    state.ResumeTiming();
  }
  engine->drain();
}
BENCHMARK(BM_Create10k)->Unit(benchmark::kMillisecond);

struct Populated {
  std::unique_ptr<Engine> engine = make_engine();
  Namespace* ns = nullptr;
  explicit Populated(int n) {
    auto ctl = engine->control();
    ns = &default_ns(ctl);
    for (int i = 0; i < n; ++i) (void)ctl.create_link(*ns, dummy(fmt::format("dev{}", i)));
  }
};

void BM_LookupByName(benchmark::State& state) {
  static Populated p(static_cast<int>(state.range(0)));
  int i = 0;
  std::vector<std::string> names;
  for (int k = 0; k < 1024; ++k) names.push_back(fmt::format("dev{}", (k * 7919) % state.range(0)));
  for (auto _ : state) {
    rcu::ReadGuard g;
    benchmark::DoNotOptimize(p.ns->find_by_name_rcu(names[i++ & 1023]));
  }
}
BENCHMARK(BM_LookupByName)->Arg(10000);

void BM_LookupByIndex(benchmark::State& state) {
  static Populated p(static_cast<int>(state.range(0)));
  int i = 0;
  for (auto _ : state) {
    rcu::ReadGuard g;
    benchmark::DoNotOptimize(p.ns->find_by_index_rcu(2 + (i++ * 7919) % state.range(0)));
  }
}
BENCHMARK(BM_LookupByIndex)->Arg(10000);

void BM_RefGetPut(benchmark::State& state) {
  static Populated p(1);
  Device* d = nullptr;
  {
    rcu::ReadGuard g;
    d = p.ns->find_by_name_rcu("dev0");
  }
  for (auto _ : state) {
    Ref r(*d, "bench");
    benchmark::DoNotOptimize(r.get());
  }
}
BENCHMARK(BM_RefGetPut)->Threads(1)->Threads(2);

}  // namespace

BENCHMARK_MAIN();
