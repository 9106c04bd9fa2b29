// ifcore-demo: a short walk through the engine (what `make run` shows until the bench
// exists): create devices, look them up without locks, delete 10 000 in one batch.
#include <fmt/format.h>

#include <chrono>

#include "ifcore/ifcore.h"

using namespace ifcore;

int main() {
  auto engine = make_engine();
  auto t = [] { return std::chrono::steady_clock::now(); };
  auto us = [](auto d) { return std::chrono::duration<double, std::micro>(d).count(); };
  {
    auto ctl = engine->control();
    Namespace& ns = *ctl.find_namespace("default");
    LinkRequest req;
    req.kind = "dummy";
    req.name = "dummy%d";
    auto t0 = t();
    for (int i = 0; i < 10000; ++i) {
      auto r = ctl.create_link(ns, req);
      if (!r) {
        fmt::print(stderr, "create failed: {}\n", r.error().message);
        return 1;
      }
    }
    auto t1 = t();
    fmt::print("created 10000 dummies in {:.1f} ms ({:.2f} us each)\n", us(t1 - t0) / 1000,
               us(t1 - t0) / 10000);
    {
      rcu::ReadGuard g;
      Device* d = ns.find_by_name_rcu("dummy4242");
      fmt::print("lookup dummy4242 -> ifindex {}\n", d ? d->ifindex() : 0);
    }
    UnregisterBatch batch;
    for (Device* d : ns.devices_locked())
      if (d->kind().name() == "dummy") (void)ctl.queue_unregister(*d, batch);
    auto t2 = t();
    ctl.commit(batch);
    auto t3 = t();
    fmt::print("deleted 10000 dummies in one batch in {:.1f} ms\n", us(t3 - t2) / 1000);
  }
  engine->drain();
  auto s = engine->stats();
  fmt::print(
      "stats: registered {} unregistered {} released {} batches {} grace periods {} "
      "notifier passes {}\n",
      s.devices_registered, s.devices_unregistered, s.devices_released, s.batches, s.grace_periods,
      s.notifier_passes);
  return 0;
}
