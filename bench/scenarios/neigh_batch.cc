// bench/scenarios/neigh_batch.cc — see neigh_batch.h.
#include "bench/scenarios/neigh_batch.h"

#include <fmt/core.h>

#include <linux/neighbour.h>

#include <vector>

#include "bench/scenarios/bench.h"
#include "bench/scenarios/paths.h"
#include "ifcore/ifcore.h"
#include "ifcore/inet.h"

namespace ifcore::bench {

namespace {

// One repetition: N dummies (with `per_device` neighbours each), the batch delete timed.
Result<double> one_run(int devices, int per_device, std::size_t& left) {
  EngineConfig cfg;
  cfg.log = [](LogLevel level, std::string_view text) {
    if (level >= LogLevel::Error) fmt::print(stderr, "ifcore: {}\n", text);
  };
  auto eng = make_engine(std::move(cfg));
  std::vector<Device*> devs;
  devs.reserve(devices);
  {
    auto ctl = eng->control();
    Namespace& ns = *ctl.find_namespace("default");
    for (int i = 0; i < devices; ++i) {
      LinkRequest r;
      r.name = "dummy" + std::to_string(i);
      r.kind = "dummy";
      auto d = ctl.create_link(ns, r);
      if (!d) return fail(d.error().code, "create dummy{}: {}", i, d.error().message);
      devs.push_back(*d);
      for (int k = 0; k < per_device; ++k) {
        inet::NeighRequest q;
        q.family = AF_INET;
        q.ifindex = (*d)->ifindex();
        q.dst = IpAddr::v4(0x0a000000u | (std::uint32_t(k) << 8) | 1u);
        q.lladdr = HwAddr::ethernet({0x02, 0, 0, 0, std::uint8_t(k), 1});
        q.state = NUD_PERMANENT;
        auto n = inet::add_neigh(ctl, ns, q);
        if (!n) return fail(n.error().code, "neighbour on dummy{}: {}", i, n.error().message);
      }
    }
  }
  auto t0 = BenchClock::now();
  {
    auto ctl = eng->control();
    auto r = ctl.delete_links(devs);
    if (!r) return fail(r.error().code, "batch delete: {}", r.error().message);
  }
  auto t1 = BenchClock::now();
  {
    auto ctl = eng->control();
    left += inet::neigh_count(ctl);
  }
  eng->drain();
  return seconds_between(t0, t1);
}

}  // namespace

Result<NeighBatchFigures> measure_neigh_batch(int devices, int per_device, int repeat) {
  NeighBatchFigures f;
  f.devices = devices;
  f.per_device = per_device;
  f.repeat = repeat;
  std::vector<double> plain, with;
  for (int i = 0; i < repeat; ++i) {
    auto a = one_run(devices, 0, f.left);
    if (!a) return fail(a.error());
    plain.push_back(*a);
    auto b = one_run(devices, per_device, f.left);
    if (!b) return fail(b.error());
    with.push_back(*b);
  }
  f.plain = median_of(plain);
  f.with_neighbours = median_of(with);
  return f;
}

void print_neigh_batch(const NeighBatchFigures& f, std::FILE* out) {
  fmt::print(out, "\n{}: {} dummies deleted in one batch, embedded (median of {})\n",
             kNeighBatchName, f.devices, f.repeat);
  auto row = [&](const std::string& what, double t) {
    fmt::print(out, "  {:<48} {:>9.2f} ms {:>8.2f} µs/device\n", what, t * 1e3,
               t * 1e6 / f.devices);
  };
  row("without neighbours", f.plain);
  row(fmt::format("with {} permanent neighbours each", f.per_device), f.with_neighbours);
  if (f.plain > 0) {
    double ratio = f.with_neighbours / f.plain;
    fmt::print(out, "  neighbours cost {:.2f}× the plain delete (target ≤ {:.1f}×): {}\n", ratio,
               kNeighTarget, ratio <= kNeighTarget ? "MET" : "MISSED");
  }
  if (f.left) fmt::print(out, "  {} neighbour entries were left behind\n", f.left);
}

}  // namespace ifcore::bench
