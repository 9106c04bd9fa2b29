// tests/bench/neigh_batch_test.cc — the neighbour section of the bench: both batches are
// measured, every neighbour entry lets go of its device, and the report states the ratio
// against its target (no timing is asserted).
#include "bench/scenarios/neigh_batch.h"

#include <gtest/gtest.h>

#include <string>
#include "printed.h"

namespace ifcore::bench {
namespace {

TEST(BenchNeighBatch, BothBatchesAreMeasuredAndNoEntryIsLeft) {
  auto f = measure_neigh_batch(50, 10, 1);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->devices, 50);
  EXPECT_EQ(f->per_device, 10);
  EXPECT_GT(f->plain, 0.0);
  EXPECT_GT(f->with_neighbours, 0.0);
  EXPECT_EQ(f->left, 0u);
  std::string s = printed(*f, print_neigh_batch);
  EXPECT_NE(s.find("neigh-10k-delete: 50 dummies"), std::string::npos) << s;
  EXPECT_NE(s.find("with 10 permanent neighbours each"), std::string::npos) << s;
  EXPECT_NE(s.find("target ≤ 2.0×"), std::string::npos) << s;
  EXPECT_EQ(s.find("left behind"), std::string::npos) << s;
}

}  // namespace
}  // namespace ifcore::bench
