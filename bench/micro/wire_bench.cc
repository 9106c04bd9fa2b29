// ifcore-micro: the wire codec's share of a create batch through ifcored. BM_DecodeCreateBatch
// reads the items of one batch of N dummies (what `ifc -batch` and the bench send) as the
// daemon's handler does, one at a time into the same place (wire::BulkCreateReader);
// BM_EncodeBulkResults writes the N per-item results into datagrams of 4 KiB, as the reply
// to that batch is written (wire::put_filling, as ifcored's send_bulk_results). Neither
// touches the engine: what they measure is the codec.
#include <benchmark/benchmark.h>
#include <linux/rtnetlink.h>

#include <string>
#include <vector>

#include "bench/scenarios/paths.h"
#include "rtnl/wire/bulk.h"
#include "rtnl/wire/bulk_create.h"

namespace {

using namespace ifcore;

// One create batch of n dummies named dummy0..dummyN-1, in group 7.
std::vector<std::uint8_t> batch_of(int n) {
  std::vector<wire::BulkLinkRequest> items(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    items[i].link = bench::dummy_request("dummy" + std::to_string(i), {.group = 7});
  wire::MessageBuilder b(std::size_t{8} << 20);
  wire::Header h{RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, 1, 0};
  if (!wire::encode_bulk_create(b, h, items)) return {};
  return {b.bytes().begin(), b.bytes().end()};
}

void BM_DecodeCreateBatch(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::vector<std::uint8_t> bytes = batch_of(n);
  auto m = wire::only_message(bytes);
  if (!m) {
    state.SkipWithError("the batch was not encoded");
    return;
  }
  wire::DecodeContext ctx;
  wire::BulkLink item;
  for (auto _ : state) {
    auto reader = wire::BulkCreateReader::open(*m, ctx);
    if (!reader || !*reader) {
      state.SkipWithError("the batch did not open");
      return;
    }
    int read = 0;
    for (;;) {
      auto more = (*reader)->next(item);
      if (!more || !*more) break;
      ++read;
    }
    if (read != n) {
      state.SkipWithError("an item did not decode");
      return;
    }
    benchmark::DoNotOptimize(item);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_DecodeCreateBatch)->Arg(10000)->Unit(benchmark::kMicrosecond);

void BM_EncodeBulkResults(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("dummy" + std::to_string(i));
  wire::BulkResult res;
  for (auto _ : state) {
    wire::MessageBuilder b(4096);
    b.reserve(4096);
    std::size_t datagrams = 0;
    for (int i = 0; i < n; ++i) {
      res.index = static_cast<std::uint32_t>(i);
      res.ifindex = i + 2;
      res.name = names[i];
      auto put = wire::put_filling(
          b, [&] { return wire::encode_bulk_result(b, 1, 0, res, RTM_NEWLINK); },
          [&](std::vector<std::uint8_t>&& dg) {
            benchmark::DoNotOptimize(dg);
            ++datagrams;
          });
      if (!put) {
        state.SkipWithError("a result did not encode");
        return;
      }
    }
    benchmark::DoNotOptimize(datagrams);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_EncodeBulkResults)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace
