// Dumps sent in parts (SessionOptions::dump_chunk_bytes): each part under the control lock
// taken anew, the devices in ifindex order from where the last part stopped, NLMSG_DONE at
// the end, NLM_F_DUMP_INTR on a part sent after devices were listed or unlisted, EBUSY for
// a second dump while one runs (Linux: netlink_dump, nl_dump_check_consistent).
#include <set>
#include <string>
#include <vector>

#include "rtnl/fixture.h"

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

// The messages of every part, the first from handle(), the rest from continue_dump().
struct Parts {
  std::vector<Replies> parts;

  std::vector<const wire::Message*> messages() const {
    std::vector<const wire::Message*> out;
    for (const Replies& p : parts)
      for (const wire::Message& m : p.msgs) out.push_back(&m);
    return out;
  }
};

class DumpPartsTest : public RtnlTest {
 protected:
  std::unique_ptr<Session> parted(std::size_t part_bytes = 2048, std::string ns = "default") {
    SessionOptions o;
    o.port_id = 77;
    o.ns = std::move(ns);
    o.dump_chunk_bytes = part_bytes;
    return open(o);
  }
  static Replies next_part(Session& s) {
    Replies r;
    s.continue_dump([&](Datagram&& d) { r.dgs.push_back(std::move(d)); });
    r.split();
    return r;
  }
  // Sends the request, then asks for parts until the dump ends (at most `limit` parts).
  static Parts all_parts(Session& s, const Bytes& request, std::size_t limit = 1000) {
    Parts p;
    p.parts.push_back(roundtrip(s, request));
    while (s.dump_pending() && p.parts.size() < limit) p.parts.push_back(next_part(s));
    return p;
  }
  static std::vector<int> ifindexes(const Parts& p) {
    std::vector<int> out;
    for (const wire::Message* m : p.messages()) {
      if (m->hdr.nlmsg_type != RTM_NEWLINK) continue;
      auto lm = wire::decode_link_message(*m);
      EXPECT_TRUE(lm);
      if (lm) out.push_back(lm->ifindex);
    }
    return out;
  }
};

TEST_F(DumpPartsTest, PartsHoldEveryDeviceOnceInIfindexOrderThenDone) {
  for (int i = 0; i < 60; ++i) ASSERT_EQ(create("d" + std::to_string(i)), 0);
  auto s = parted();
  Parts p = all_parts(*s, getlink(9, dump_req(), NLM_F_ACK));
  EXPECT_FALSE(s->dump_pending());
  EXPECT_GT(p.parts.size(), 3u);  // 61 devices of several hundred bytes in parts of 2 KiB
  std::vector<int> idx = ifindexes(p);
  ASSERT_EQ(idx.size(), 61u);
  for (std::size_t i = 1; i < idx.size(); ++i) EXPECT_LT(idx[i - 1], idx[i]);
  auto msgs = p.messages();
  for (const wire::Message* m : msgs) {
    EXPECT_EQ(m->hdr.nlmsg_seq, 9u);
    EXPECT_EQ(m->hdr.nlmsg_pid, 77u);
    EXPECT_EQ(m->hdr.nlmsg_flags & NLM_F_DUMP_INTR, 0);
  }
  // NLMSG_DONE ends the last part, alone in its datagram as Linux sends a link dump's; a
  // dump is not acknowledged.
  ASSERT_EQ(msgs.back()->hdr.nlmsg_type, NLMSG_DONE);
  const Replies& last = p.parts.back();
  EXPECT_EQ(wire::split_messages(last.dgs.back())->size(), 1u);
  for (std::size_t i = 0; i + 1 < msgs.size(); ++i) EXPECT_EQ(msgs[i]->hdr.nlmsg_type, RTM_NEWLINK);
  // Nothing is left to send.
  EXPECT_TRUE(next_part(*s).dgs.empty());
}

TEST_F(DumpPartsTest, WithoutPartsTheWholeDumpComesFromHandle) {
  for (int i = 0; i < 60; ++i) ASSERT_EQ(create("d" + std::to_string(i)), 0);
  Replies r = send(getlink(3, dump_req()));
  EXPECT_FALSE(session->dump_pending());
  EXPECT_EQ(r.msgs.size(), 62u);
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
}

TEST_F(DumpPartsTest, DevicesListedOrUnlistedBetweenPartsMarkTheNextPartInterrupted) {
  for (int i = 0; i < 60; ++i) ASSERT_EQ(create("d" + std::to_string(i)), 0);
  auto s = parted();
  Replies first = roundtrip(*s, getlink(5, dump_req()));
  ASSERT_TRUE(s->dump_pending());
  Replies quiet = next_part(*s);
  ASSERT_TRUE(s->dump_pending());
  for (const wire::Message& m : quiet.msgs) EXPECT_EQ(m.hdr.nlmsg_flags & NLM_F_DUMP_INTR, 0);

  // A device made now has the highest ifindex: the dump reaches it. d0 went out in the
  // first part and is deleted: the dump cannot take it back, and says so.
  ASSERT_EQ(create("late"), 0);
  ASSERT_EQ(send(link_msg(RTM_DELLINK, NLM_F_ACK, 2, named("d0"))).last_error(), 0);
  Replies marked = next_part(*s);
  ASSERT_FALSE(marked.msgs.empty());
  for (const wire::Message& m : marked.msgs)
    EXPECT_EQ(m.hdr.nlmsg_flags & NLM_F_DUMP_INTR, NLM_F_DUMP_INTR);

  // The part after that saw no change: no mark.
  Parts rest;
  while (s->dump_pending()) rest.parts.push_back(next_part(*s));
  ASSERT_FALSE(rest.parts.empty());
  for (const wire::Message* m : rest.messages()) EXPECT_EQ(m->hdr.nlmsg_flags & NLM_F_DUMP_INTR, 0);
  std::vector<int> idx = ifindexes(rest);
  ASSERT_FALSE(idx.empty());
  EXPECT_EQ(idx.back(), find("late")->ifindex());
}

TEST_F(DumpPartsTest, ASecondDumpWhileOneRunsGetsEbusyAndOtherRequestsAreServed) {
  for (int i = 0; i < 60; ++i) ASSERT_EQ(create("d" + std::to_string(i)), 0);
  auto s = parted();
  (void)roundtrip(*s, getlink(1, dump_req()));
  ASSERT_TRUE(s->dump_pending());
  EXPECT_EQ(roundtrip(*s, getlink(2, dump_req())).last_error(), EBUSY);
  Replies made = roundtrip(*s, link_msg(RTM_NEWLINK, kCreate, 3, named("x0", "dummy")));
  EXPECT_EQ(made.last_error(), 0);
  wire::GetLinkRequest one;
  one.name = "d1";
  Replies got = roundtrip(*s, getlink(4, one));
  ASSERT_EQ(got.msgs.size(), 1u);
  EXPECT_EQ(got.msgs[0].hdr.nlmsg_type, RTM_NEWLINK);
  while (s->dump_pending()) (void)next_part(*s);
  Parts again = all_parts(*s, getlink(5, dump_req()));
  EXPECT_EQ(ifindexes(again).size(), 62u);  // lo, d0..d59, x0
}

TEST_F(DumpPartsTest, AFilteredDumpInPartsKeepsItsFilterAndMark) {
  for (int i = 0; i < 40; ++i) ASSERT_EQ(create("d" + std::to_string(i)), 0);
  auto s = parted(1024);
  wire::GetLinkRequest g = dump_req();
  g.filter_kind = "dummy";
  Parts p = all_parts(*s, getlink(6, g));
  EXPECT_GT(p.parts.size(), 2u);
  std::vector<int> idx = ifindexes(p);
  EXPECT_EQ(idx.size(), 40u);  // not lo
  for (const wire::Message* m : p.messages()) {
    if (m->hdr.nlmsg_type == RTM_NEWLINK) {
      EXPECT_EQ(m->hdr.nlmsg_flags & NLM_F_DUMP_FILTERED, NLM_F_DUMP_FILTERED);
    }
  }
}

TEST_F(DumpPartsTest, ANamespaceDestroyedDuringTheDumpEndsItWithAnError) {
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.create_namespace("gone"));
  }
  auto s = parted(1024, "gone");
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(
        roundtrip(*s, link_msg(RTM_NEWLINK, kCreate, 1, named("g" + std::to_string(i), "dummy")))
            .last_error(),
        0);
  (void)roundtrip(*s, getlink(8, dump_req()));
  ASSERT_TRUE(s->dump_pending());
  {
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.destroy_namespace(*ctl.find_namespace("gone")));
  }
  Replies end = next_part(*s);
  EXPECT_FALSE(s->dump_pending());
  ASSERT_EQ(end.msgs.size(), 1u);
  EXPECT_EQ(end.msgs[0].hdr.nlmsg_type, NLMSG_DONE);
  auto done = wire::decode_done(end.msgs[0]);
  ASSERT_TRUE(done);
  EXPECT_EQ(*done, ENOENT);
  EXPECT_EQ(wire::decode_done_message(end.msgs[0]), "");  // no NETLINK_EXT_ACK asked for
}

}  // namespace
}  // namespace ifcore::rtnl::test
