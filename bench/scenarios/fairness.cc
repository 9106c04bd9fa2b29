// bench/scenarios/fairness.cc — see fairness.h.
#include "bench/scenarios/fairness.h"

#include <fmt/core.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "bench/scenarios/bench.h"
#include "bench/scenarios/daemon_process.h"
#include "bench/scenarios/nl_client.h"
#include "bench/scenarios/paths.h"
#include "rtnl/wire/link.h"

namespace ifcore::bench {

namespace {

Bytes get_lo(NlClient& c) {
  wire::MessageBuilder b;
  wire::GetLinkRequest g;
  g.name = "lo";
  (void)wire::encode_getlink(b, {RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK, c.next_seq(), 0}, g);
  return b.take();
}

Result<std::unique_ptr<NlClient>> open(const std::string& socket, bool rings) {
  auto c = NlClient::open_daemon(socket);
  if (!c) return fail(c.error());
  if (rings)
    if (auto r = (*c)->use_rings(); !r) return fail(r.error());
  return c;
}

// `n` round trips of `c`, one at a time.
Result<Latency> round_trips(NlClient& c, int n) {
  std::vector<double> t;
  t.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Bytes m = get_lo(c);
    auto t0 = BenchClock::now();
    if (auto r = c.call(m); !r) return fail(r.error());
    t.push_back(seconds_between(t0, BenchClock::now()));
  }
  std::sort(t.begin(), t.end());
  Latency l;
  l.median = t[t.size() / 2];
  l.p99 = t[std::min(t.size() - 1, t.size() * 99 / 100)];
  return l;
}

}  // namespace

Result<FairnessFigures> measure_fairness(int n, bool rings) {
  if (auto why = daemon_unavailable(); !why.empty()) return fail(EOPNOTSUPP, "{}", why);
  DaemonProcess d;
  if (auto st = d.start("default"); !st) return fail(st.error());
  FairnessFigures f;
  f.round_trips = n;
  f.rings = rings;
  auto light = open(d.socket(), rings);
  if (!light) return fail(light.error());
  if (auto w = round_trips(**light, n / 10 + 1); !w) return fail(w.error());  // warm
  auto alone = round_trips(**light, n);
  if (!alone) return fail(alone.error());
  f.alone = *alone;

  auto heavy = open(d.socket(), rings);
  if (!heavy) return fail(heavy.error());
  std::atomic<bool> stop{false}, started{false};
  std::atomic<long> answered{0};
  Result<void> heavy_result = ok();
  std::thread flood([&] {
    constexpr std::size_t kBatch = 1024, kWindow = 64;
    while (!stop.load(std::memory_order_relaxed)) {
      std::vector<Bytes> batch;
      batch.reserve(kBatch);
      for (std::size_t i = 0; i < kBatch; ++i) batch.push_back(get_lo(**heavy));
      if (auto r = (*heavy)->call_many(batch, kWindow); !r) {
        heavy_result = r;
        break;
      }
      answered.fetch_add(static_cast<long>(kBatch), std::memory_order_relaxed);
      started.store(true, std::memory_order_release);
    }
  });
  while (!started.load(std::memory_order_acquire) && heavy_result)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  long before = answered.load();
  auto t0 = BenchClock::now();
  auto flooded = round_trips(**light, n);
  double took = seconds_between(t0, BenchClock::now());
  long after = answered.load();
  stop.store(true);
  flood.join();
  if (!heavy_result) return fail(heavy_result.error());
  if (!flooded) return fail(flooded.error());
  f.flooded = *flooded;
  f.heavy_rate = static_cast<double>(after - before) / took;
  return f;
}

void print_fairness(const FairnessFigures& f, std::FILE* out) {
  fmt::print(out,
             "\n{}: a light client's round trip (RTM_GETLINK lo + ACK, one at a time) over {}, "
             "{} each\n",
             kFairnessName, f.rings ? "mapped rings" : "the socket", f.round_trips);
  fmt::print(out, "  {:<44} {:>12} {:>12}\n", "", "median", "p99");
  auto row = [&](const char* what, const Latency& l) {
    fmt::print(out, "  {:<44} {:>9.1f} µs {:>9.1f} µs\n", what, l.median * 1e6, l.p99 * 1e6);
  };
  row("alone", f.alone);
  row("while a heavy client floods (64 in flight)", f.flooded);
  fmt::print(out, "  the heavy client meanwhile: {:.0f} requests/s answered\n", f.heavy_rate);
}

}  // namespace ifcore::bench
