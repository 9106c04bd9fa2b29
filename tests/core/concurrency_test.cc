// Lock-free readers against a churning writer: every device found is whole, and (under
// ASan) never freed while a reader holds it.
#include <atomic>
#include <thread>

#include "support/engine_fixture.h"

namespace ifcore {
namespace {

using Concurrency = test::CoreTest;

TEST_F(Concurrency, ReadersSeeWholeDevicesWhileAWriterChurns) {
  Namespace* space;
  {
    auto ctl = engine->control();
    space = &ns(ctl);
  }
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> found{0}, torn{0};
  auto reader = [&](int seed) {
    unsigned x = static_cast<unsigned>(seed);
    while (!stop.load(std::memory_order_relaxed)) {
      x = x * 1103515245 + 12345;
      int idx = 2 + static_cast<int>((x >> 8) % 400);
      std::string name = fmt::format("c{}", (x >> 4) % 200);
      rcu::ReadGuard g;
      if (Device* d = space->find_by_index_rcu(idx)) {
        found.fetch_add(1, std::memory_order_relaxed);
        if (d->ifindex() != idx || d->name_rcu().empty() || d->name_rcu()[0] != 'c') ++torn;
      }
      if (Device* d = space->find_by_name_rcu(name)) {
        found.fetch_add(1, std::memory_order_relaxed);
        if (d->name_rcu() != name && d->state() == RegState::Registered) {
          // A rename may race; our writer never renames, so this is a torn read.
          ++torn;
        }
        Ref keep(*d, "reader");  // taking a Ref inside the section is allowed
        if (keep->kind().name() != "dummy") ++torn;
      }
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) readers.emplace_back(reader, i + 1);
  // At least 30 rounds, and more until the readers have met a device: on a busy machine
  // the writer's 30 rounds (50 ms) can pass before a reader thread first runs.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int round = 0;
       round < 30 || (found.load() == 0 && std::chrono::steady_clock::now() < deadline); ++round) {
    auto ctl = engine->control();
    std::vector<Device*> devs;
    for (int i = 0; i < 200; ++i) {
      auto r = ctl.create_link(*space, test::link_req("dummy", fmt::format("c{}", i)));
      ASSERT_TRUE(r);
      devs.push_back(*r);
    }
    // Delete in two batches, half at a time, so that the readers see partial tables.
    std::vector<Device*> odd, even;
    for (std::size_t i = 0; i < devs.size(); ++i) (i % 2 ? odd : even).push_back(devs[i]);
    ASSERT_TRUE(ctl.delete_links(odd));
    ASSERT_TRUE(ctl.delete_links(even));
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(torn.load(), 0u);
  EXPECT_GT(found.load(), 0u);
  EXPECT_TRUE(engine->drain(std::chrono::seconds(5)));
}

}  // namespace
}  // namespace ifcore
