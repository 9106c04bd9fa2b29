// bench/scenarios/floor.cc — see floor.h.
#include "bench/scenarios/floor.h"

#include <fmt/core.h>

#include <urcu/rculfhash.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "base/rcu.h"
#include "bench/scenarios/bench.h"
#include "bench/scenarios/paths.h"
#include "core/registry.h"
#include "ifcore/ifcore.h"
#include "proto/state.h"

namespace ifcore::bench {

namespace {

// ---------------------------------------------------------------- the bare floor
// One name's entry in the floor's table, as small as a name entry can be.
struct FloorName {
  cds_lfht_node node;
  void* dev = nullptr;
  char key[16] = {};
  std::uint8_t len = 0;
  std::string_view name() const { return {key, len}; }
};

// The objects a dummy is made of, at the engine's sizes, zeroed as `new T()` would.
struct FloorDevice {
  std::unique_ptr<std::byte[]> device, in, in6, proto;
  std::unique_ptr<FloorName> name;
  int ifindex = 0;
};

int match_name(cds_lfht_node* node, const void* key) {
  return reinterpret_cast<FloorName*>(node)->name() == *static_cast<const std::string_view*>(key);
}

std::unique_ptr<std::byte[]> zeroed(std::size_t n) {
  return std::make_unique<std::byte[]>(n);
}

struct FloorTimes {
  double create = 0, remove = 0;
};

// N devices made, named and indexed; then unindexed, unnamed, one grace period, freed.
Result<FloorTimes> run_floor(int n) {
  unsigned long buckets = 1;
  while (buckets < static_cast<unsigned long>(n)) buckets <<= 1;
  cds_lfht* table = cds_lfht_new_flavor(buckets, buckets, 0, 0, rcu::flavor(), nullptr);
  if (!table) return fail(ENOMEM, "floor: no hash table");
  std::vector<FloorDevice> devs(static_cast<std::size_t>(n));
  std::vector<void*> index;  // by ifindex, grown as devices come (as the engine's pages)
  auto t0 = BenchClock::now();
  {
    rcu::ReadGuard g;
    for (int i = 0; i < n; ++i) {
      FloorDevice& d = devs[static_cast<std::size_t>(i)];
      d.device = zeroed(sizeof(Device));
      d.in = zeroed(sizeof(proto::InDev));
      d.in6 = zeroed(sizeof(proto::Inet6Dev));
      d.proto = zeroed(sizeof(proto::DevState));
      d.name = std::make_unique<FloorName>();
      std::string name = "dummy" + std::to_string(i);
      std::memcpy(d.name->key, name.data(), name.size());
      d.name->len = static_cast<std::uint8_t>(name.size());
      d.name->dev = d.device.get();
      std::string_view key = d.name->name();
      cds_lfht_node_init(&d.name->node);
      cds_lfht_add_unique(table, Registry::name_hash(key), match_name, &key, &d.name->node);
      d.ifindex = i + 2;
      if (index.size() <= static_cast<std::size_t>(d.ifindex)) index.resize(2 * d.ifindex + 2);
      index[static_cast<std::size_t>(d.ifindex)] = d.device.get();
    }
  }
  auto t1 = BenchClock::now();
  {
    rcu::ReadGuard g;
    for (FloorDevice& d : devs) {
      cds_lfht_del(table, &d.name->node);
      index[static_cast<std::size_t>(d.ifindex)] = nullptr;
    }
  }
  rcu::synchronize();
  devs.clear();
  auto t2 = BenchClock::now();
  cds_lfht_destroy(table, nullptr);
  return FloorTimes{seconds_between(t0, t1), seconds_between(t1, t2)};
}

// ---------------------------------------------------------------- ifcore
// N dummies created one by one, deleted in one batch (the scale sweep's embedded run).
Result<FloorTimes> run_ifcore(int n) {
  auto eng = make_engine();
  std::vector<Device*> devs;
  devs.reserve(static_cast<std::size_t>(n));
  auto t0 = BenchClock::now();
  {
    auto ctl = eng->control();
    Namespace& ns = *ctl.find_namespace("default");
    LinkRequest r;
    r.kind = "dummy";
    for (int i = 0; i < n; ++i) {
      r.name = "dummy" + std::to_string(i);
      auto d = ctl.create_link(ns, r);
      if (!d) return fail(d.error().code, "create dummy{}: {}", i, d.error().message);
      devs.push_back(*d);
    }
  }
  auto t1 = BenchClock::now();
  {
    auto ctl = eng->control();
    auto r = ctl.delete_links(devs);
    if (!r) return fail(r.error().code, "batch delete: {}", r.error().message);
  }
  auto t2 = BenchClock::now();
  eng->drain();
  return FloorTimes{seconds_between(t0, t1), seconds_between(t1, t2)};
}

}  // namespace

Result<double> bare_floor_seconds(int n) {
  auto t = run_floor(n);
  if (!t) return fail(t.error());
  return t->create + t->remove;
}

Result<FloorFigures> measure_floor(const std::vector<int>& sizes, int repeat) {
  FloorFigures f;
  f.repeat = repeat;
  // One untimed round of each first, at the largest N: the process's first engine pays for
  // the allocator's first growth (tcmalloc's page map set up in fresh pages, 6-10 ms: 10 000
  // dummies made in 1.1-1.6 µs each instead of 0.35), which the floor, run after it, never
  // does; and each round at a new high pays for the machine's backing of fresh memory
  // (runner.cc), which the bench, keeping its heap (main.cc), pays once here.
  if (!sizes.empty()) {
    const int most = *std::max_element(sizes.begin(), sizes.end());
    if (auto a = run_ifcore(most); !a) return fail(a.error());
    if (auto b = run_floor(most); !b) return fail(b.error());
  }
  for (int n : sizes) {
    std::vector<double> create, remove, fcreate, fremove, ratio;
    for (int i = 0; i < repeat; ++i) {
      auto a = run_ifcore(n);
      if (!a) return fail(a.error());
      auto b = run_floor(n);
      if (!b) return fail(b.error());
      create.push_back(a->create);
      remove.push_back(a->remove);
      fcreate.push_back(b->create);
      fremove.push_back(b->remove);
      ratio.push_back((a->create + a->remove) / (b->create + b->remove));
    }
    f.rows.push_back(FloorRow{n, median_of(create), median_of(remove), median_of(fcreate),
                              median_of(fremove), median_of(ratio)});
  }
  return f;
}

void print_floor(const FloorFigures& f, std::FILE* out) {
  fmt::print(out,
             "\n{}: N dummies created one by one and deleted in one batch, embedded, beside the "
             "bare floor (median of {})\n",
             kFloorName, f.repeat);
  fmt::print(out, "  {:>8} {:>14} {:>14} {:>14} {:>14} {:>8}\n", "N", "create µs/dev",
             "delete µs/dev", "floor create", "floor delete", "× floor");
  for (const FloorRow& r : f.rows) {
    double per = 1e6 / r.devices;
    fmt::print(out, "  {:>8} {:>14.3f} {:>14.3f} {:>14.3f} {:>14.3f} {:>7.2f}× {}\n", r.devices,
               r.create * per, r.remove * per, r.floor_create * per, r.floor_remove * per, r.ratio,
               r.ratio <= kFloorTarget ? "MET" : "MISSED");
  }
  fmt::print(out, "  target: create + delete within {:.0f}× the floor's\n", kFloorTarget);
}

}  // namespace ifcore::bench
