// tests/rtnl/daemon_dump_test.cc — the real ifcored sends a dump in parts as its client
// reads it: the daemon serves others meanwhile, the client's next request waits for the
// dump's end, and a part sent after devices came or went carries NLM_F_DUMP_INTR.
#include <algorithm>
#include <set>
#include <string>

#include "rtnl/daemon_fixture.h"

#ifdef IFCORED_PATH

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

// Makes `n` dummies named PREFIX0.. in rounds (the acks of one round fit the socket).
void create_many(const Conn& c, const std::string& prefix, int n) {
  constexpr int kRound = 200;
  for (int done = 0; done < n; done += kRound) {
    int k = std::min(kRound, n - done);
    for (int i = 0; i < k; ++i)
      c.send_dg(
          link_msg(RTM_NEWLINK, kCreate, 1, named(prefix + std::to_string(done + i), "dummy")));
    for (int i = 0; i < k; ++i) ASSERT_EQ(c.until_end().last_error(), 0);
  }
}

TEST_F(DaemonTest, ALargeDumpGoesOutAsItIsReadAndOthersAreServedMeanwhile) {
  start();
  Conn a(try_connect());
  a.control({});
  constexpr int kDevices = 3000;  // about 4 MB of messages: more than a socket holds
  create_many(a, "d", kDevices);

  wire::GetLinkRequest dump;
  dump.dump = true;
  a.send_dg(getlink(10, dump));
  a.send_dg(link_msg(RTM_NEWLINK, kCreate, 11, named("after", "dummy")));

  // `a` reads nothing yet: its dump waits on its socket, and another client is served.
  Conn b(try_connect());
  b.control({});
  b.send_dg(link_msg(RTM_NEWLINK, kCreate, 20, named("during", "dummy")));
  Replies made = b.until_end();
  EXPECT_EQ(made.last_error(), 0);
  EXPECT_EQ(made.msgs.back().hdr.nlmsg_seq, 20u);

  Replies r = a.until_end();
  ASSERT_FALSE(r.msgs.empty());
  ASSERT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
  std::set<std::string> names;
  int last = 0;
  bool marked = false;
  for (std::size_t i = 0; i + 1 < r.msgs.size(); ++i) {
    const wire::Message& m = r.msgs[i];
    ASSERT_EQ(m.hdr.nlmsg_type, RTM_NEWLINK);
    EXPECT_EQ(m.hdr.nlmsg_seq, 10u);
    marked |= (m.hdr.nlmsg_flags & NLM_F_DUMP_INTR) != 0;
    auto lm = wire::decode_link_message(m);
    ASSERT_TRUE(lm);
    EXPECT_GT(lm->ifindex, last);
    last = lm->ifindex;
    names.insert(lm->name);
  }
  // lo, the dummies, and the device `b` made while the dump ran (it has the highest
  // ifindex); not the one `a` asked for after the dump: it waited.
  EXPECT_EQ(names.size(), std::size_t{kDevices} + 2);
  EXPECT_TRUE(names.count("during"));
  EXPECT_FALSE(names.count("after"));
  EXPECT_TRUE(marked) << "a part sent after `during` was made has NLM_F_DUMP_INTR";

  Replies next = a.until_end();
  EXPECT_EQ(next.last_error(), 0);
  EXPECT_EQ(next.msgs.back().hdr.nlmsg_seq, 11u);
}

}  // namespace
}  // namespace ifcore::rtnl::test

#endif  // IFCORED_PATH
