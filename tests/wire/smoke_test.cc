// tests/wire/smoke_test.cc — placeholder so the wire test binary links.
#include <gtest/gtest.h>

#include "rtnl/wire/netlink.h"

TEST(WireSmoke, EmptyDatagramSplitsIntoNothing) {
  auto r = ifcore::wire::split_messages({});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->empty());
}
