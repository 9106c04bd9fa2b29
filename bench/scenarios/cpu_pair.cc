// bench/scenarios/cpu_pair.cc — the CPUs of a timed run (see cpu_pair.h).
#include "bench/scenarios/cpu_pair.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace ifcore::bench {

namespace {

bool set_one(pid_t tid, int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return ::sched_setaffinity(tid, sizeof one, &one) == 0;
}

// One pass of the calibration loop: a chain of dependent multiply-adds (no memory, no
// vectorising), about 1 ms here. Returns its duration in ns.
double loop_ns() {
  constexpr int kSteps = 1 << 19;
  auto t0 = std::chrono::steady_clock::now();
  std::uint64_t x = 1;
  for (int i = 0; i < kSteps; ++i) x = x * 6364136223846793005u + 1442695040888963407u;
  volatile std::uint64_t sink = x;
  (void)sink;
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CpuChoice choose_cpus() {
  constexpr int kRounds = 3;
  // The first few allowed CPUs only: the loop runs before every repetition.
  constexpr std::size_t kCandidates = 4;
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return {};
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < kCandidates; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  if (cpus.size() < 2) return {};
  std::vector<std::vector<double>> times(cpus.size());
  bool ok = true;
  for (int round = 0; round < kRounds && ok; ++round)
    for (std::size_t i = 0; i < cpus.size() && ok; ++i) {
      if (!(ok = set_one(0, cpus[i]))) break;
      times[i].push_back(loop_ns());
    }
  (void)::sched_setaffinity(0, sizeof allowed, &allowed);
  if (!ok) return {};
  std::vector<std::pair<double, int>> ranked;
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    auto& t = times[i];
    std::nth_element(t.begin(), t.begin() + kRounds / 2, t.end());
    ranked.emplace_back(t[kRounds / 2], cpus[i]);
  }
  std::sort(ranked.begin(), ranked.end());
  return {ranked[0].second, ranked[1].second};
}

bool pin_self(int cpu) {
  return cpu >= 0 && set_one(0, cpu);
}

CpuPair::CpuPair(pid_t server, CpuChoice cpus) {
  if (!cpus.valid()) return;
  cpu_set_t mine;
  if (::sched_getaffinity(0, sizeof mine, &mine) != 0) return;
  if (!set_one(server, cpus.server)) return;
  if (!set_one(0, cpus.client)) return;
  saved_ = mine;
  pinned_ = true;
  client_ = cpus.client;
  server_ = cpus.server;
}

CpuPair::~CpuPair() {
  if (pinned_) (void)::sched_setaffinity(0, sizeof saved_, &saved_);
}

}  // namespace ifcore::bench
