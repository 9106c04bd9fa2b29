// tests/bench/shim_batch_test.cc — the shim's cost section: ip through ifcore-run, ifc over
// the socket and on rings against a real ifcored each give a figure, and the report says
// how the shim compares with its target.
#include "bench/scenarios/shim_batch.h"

#include <gtest/gtest.h>

#include <string>
#include "printed.h"

namespace ifcore::bench {
namespace {

#ifdef IFCORED_PATH
TEST(BenchShimBatch, EveryIfcoredPathGivesAFigure) {
  std::string dir = IFCORED_PATH;
  dir.resize(dir.rfind('/'));
  auto f = measure_shim_batch(20, 1, dir);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->daemon_why, "");
  ASSERT_TRUE(f->shim);
  ASSERT_TRUE(f->ifc_socket);
  ASSERT_TRUE(f->ifc_rings);
  EXPECT_GT(*f->shim, 0.0);
  std::string s = printed(*f, print_shim_batch);
  EXPECT_NE(s.find("ip through the shim"), std::string::npos) << s;
  EXPECT_NE(s.find("target ≤ 1.5×"), std::string::npos) << s;
}
#endif

}  // namespace
}  // namespace ifcore::bench
