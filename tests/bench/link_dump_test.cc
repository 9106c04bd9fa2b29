// tests/bench/link_dump_test.cc — the link dump section of the bench: both daemons send
// every link, and the report names both runs (no timing or memory figure is asserted).
#include "bench/scenarios/link_dump.h"

#include <gtest/gtest.h>

#include <string>
#include "printed.h"

#ifdef IFCORED_PATH

namespace ifcore::bench {
namespace {

TEST(BenchLinkDump, BothDaemonsSendEveryLink) {
  auto f = measure_link_dump(3000, 2, IFCORED_PATH);
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_TRUE(f->parts) << f->why;
  ASSERT_TRUE(f->whole) << f->why;
  EXPECT_EQ(f->parts->messages, 3001);  // the dummies and lo
  EXPECT_EQ(f->whole->messages, 3001);
  EXPECT_EQ(f->parts->bytes, f->whole->bytes);
  std::string s = printed(*f, print_link_dump);
  EXPECT_NE(s.find("link-dump: one dump of 3000 dummies"), std::string::npos) << s;
  EXPECT_NE(s.find("in parts of 64 KiB"), std::string::npos) << s;
  EXPECT_NE(s.find("whole, at once"), std::string::npos) << s;
  EXPECT_EQ(s.find("the runs differ"), std::string::npos) << s;
}

}  // namespace
}  // namespace ifcore::bench

#endif  // IFCORED_PATH
