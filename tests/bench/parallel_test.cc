// tests/bench/parallel_test.cc — the parallel-namespaces section and the floor it is set
// against: every configuration is measured, both ceilings are stated beside the ratio, and
// the floor's rows are printed against their target (no timing is asserted).
#include "bench/scenarios/parallel.h"

#include <gtest/gtest.h>

#include <string>

#include "bench/scenarios/floor.h"
#include "printed.h"

namespace ifcore::bench {
namespace {

TEST(BenchParallel, EveryConfigurationAndBothCeilingsAreMeasured) {
  auto f = measure_parallel_namespaces(200, 2, 1);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->devices, 200);
  EXPECT_EQ(f->rounds, 2);
  EXPECT_GT(f->engine_wide, 0.0);
  EXPECT_GT(f->one, 0.0);
  EXPECT_GT(f->two, 0.0);
  EXPECT_GT(f->ceiling, 0.0);
  EXPECT_GT(f->floor_ceiling, 0.0);
  EXPECT_DOUBLE_EQ(f->ratio(), f->two / f->one);
  std::string s = printed(*f, print_parallel_namespaces);
  EXPECT_NE(s.find("parallel-namespaces: each writer in its own namespace makes 200 dummies"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("2 writers ÷ 1:"), std::string::npos) << s;
  EXPECT_NE(s.find("target ≥ 1.7×"), std::string::npos) << s;
  EXPECT_NE(s.find("2 threads of a loop that shares nothing"), std::string::npos) << s;
  EXPECT_NE(s.find("2 threads of the bare floor"), std::string::npos) << s;
}

TEST(BenchFloor, EachSizeIsSetAgainstTheBareFloor) {
  auto one = bare_floor_seconds(500);
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_GT(*one, 0.0);
  auto f = measure_floor({100, 1000}, 1);
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_EQ(f->rows.size(), 2u);
  EXPECT_EQ(f->rows[0].devices, 100);
  EXPECT_EQ(f->rows[1].devices, 1000);
  for (const FloorRow& r : f->rows) {
    EXPECT_GT(r.create, 0.0);
    EXPECT_GT(r.floor_create + r.floor_remove, 0.0);
    EXPECT_GT(r.ratio, 0.0);
  }
  std::string s = printed(*f, print_floor);
  EXPECT_NE(s.find("× floor"), std::string::npos) << s;
  EXPECT_NE(s.find("target: create + delete within 3× the floor's"), std::string::npos) << s;
}

}  // namespace
}  // namespace ifcore::bench
