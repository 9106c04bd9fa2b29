// tests/wire/fuzz_test.cc — random and mutated byte strings fed to every decoder: the only
// assertion is that each call returns a Result (no crash, no throw, no read past the end;
// run under ASan to make the last one strict).
#include <net/if.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include <gtest/gtest.h>

#include <random>

#include "rtnl/wire/address.h"
#include "rtnl/wire/bulk.h"
#include "rtnl/wire/bulk_create.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/nsid.h"
#include "rtnl/wire/route.h"
#include "wire/fixture.h"

namespace ifcore::wire {
namespace {

using namespace test;

constexpr AttrPolicyEntry kInner[] = {{1, AttrShape::U32}, {2, AttrShape::String}};
extern const AttrPolicyEntry kAll[];
constexpr AttrPolicy kAllPolicy{kAll, 8};
constexpr AttrPolicyEntry kAll[] = {{VETH_INFO_PEER, AttrShape::LinkMsg},
                                    {2, AttrShape::U16},
                                    {3, AttrShape::Nested, 0, 0, kInner},
                                    {4, AttrShape::Nested, 0, 0, kAllPolicy},
                                    {5, AttrShape::Binary, 1, 6},
                                    {6, AttrShape::Be32},
                                    {7, AttrShape::Flag},
                                    {8, AttrShape::U64}};

DecodeContext ctx() {
  DecodeContext c;
  c.kind_policy = [](std::string_view, bool) -> std::optional<AttrPolicy> { return kAllPolicy; };
  return c;
}

// Valid messages of every kind, to mutate.
std::vector<Bytes> seeds() {
  std::vector<Bytes> out;
  MessageBuilder b(1 << 16);
  LinkMessage lm;
  lm.name = "v0";
  lm.mtu = 1500;
  lm.kind = "veth";
  lm.info_data = AttrList{Attr::u16(2, 5), Attr::nest(3, {Attr::u32(1, 1)})};
  lm.inet6_addr_gen_mode = 1;
  lm.address = HwAddr::ethernet({2, 0, 0, 0, 0, 1});
  (void)encode_link_message(b, {RTM_NEWLINK, 0, 1, 0}, lm);
  LinkRequest rq;
  rq.name = "v0";
  rq.kind = "veth";
  rq.has_info_data = true;
  auto peer = std::make_shared<LinkRequest>();
  peer->name = "v1";
  Attr pa{VETH_INFO_PEER, AttrShape::LinkMsg};
  pa.link = peer;
  rq.info_data = {pa, Attr::nest(4, {Attr::nest(4, {Attr::u64(8, 9)})})};
  (void)encode_link_request(b, {RTM_NEWLINK, NLM_F_REQUEST, 2, 0}, rq);
  AddrMessage am;
  am.family = AF_INET;
  am.local = *IpAddr::parse("10.0.0.1");
  am.label = "eth0";
  (void)encode_addr(b, {RTM_NEWADDR, 0, 3, 0}, am);
  RouteMessage rm;
  rm.family = AF_INET;
  rm.dst = *IpAddr::parse("10.0.0.0");
  rm.multipath = {{0, 0, 2, *IpAddr::parse("10.0.0.2"), std::nullopt}};
  rm.metrics = {{RTAX_MTU, 1400, {}}, {RTAX_CC_ALGO, 0, "cubic"}};
  (void)encode_route(b, {RTM_NEWROUTE, 0, 4, 0}, rm);
  NsidMessage nm;
  nm.nsid = 3;
  (void)encode_nsid(b, {RTM_NEWNSID, 0, 5, 0}, nm);
  (void)encode_bulk_delete(b, {RTM_DELLINK, 0, 6, 0}, BulkDelete{{{1, {}}, {{}, "x"}}});
  (void)encode_bulk_result(b, 7, 0, BulkResult{0, 1, "x", 19, "m"});
  BulkLinkRequest bl;
  bl.link.kind = "dummy";
  bl.link.name = "d0";
  bl.addrs.push_back(am);
  (void)encode_bulk_create(b, {RTM_NEWLINK, NLM_F_CREATE, 8, 0}, {bl, bl});
  (void)encode_bulk_result(b, 8, 0, BulkResult{1, 3, "d0", 0, ""}, RTM_NEWLINK);
  (void)encode_error(b, out.empty() ? Bytes(20, 0) : out[0], 0, EINVAL, "msg", 16,
                     {.ext_ack = true});
  auto all = split_messages(b.bytes());
  for (const auto& m : *all) out.push_back(to_bytes(m.bytes));
  return out;
}

// Every decoder on one datagram; returns how many calls succeeded.
int feed(std::span<const std::uint8_t> d, const DecodeContext& c) {
  int okays = 0;
  auto msgs = split_messages(d);
  if (!msgs) return 0;
  for (const Message& m : *msgs) {
    okays += bool(decode_link_request(m, c));
    okays += bool(decode_getlink(m));
    okays += bool(decode_link_message(m, c));
    okays += bool(decode_addr(m));
    okays += bool(decode_route(m));
    okays += bool(decode_nsid(m));
    okays += bool(decode_bulk_delete(m));
    okays += bool(decode_bulk_result(m));
    okays += bool(decode_bulk_create(m, c));
    okays += bool(decode_error(m));
    okays += bool(decode_done(m));
    if (m.payload().size() >= 16)
      okays += bool(decode_attrs(m.payload().subspan(16), kAllPolicy, 32, c));
  }
  return okays;
}

TEST(Fuzz, RandomAndMutatedInputsNeverCrash) {
  std::mt19937 rng(12345);
  auto base = seeds();
  ASSERT_GE(base.size(), 8u);
  DecodeContext c = ctx();
  for (const auto& s : base) EXPECT_GT(feed(s, c), 0);
  long total = 0;
  for (int i = 0; i < 200000; ++i) {
    Bytes d;
    if (i % 4 == 0) {  // random bytes behind a plausible header
      std::size_t n = rng() % 200;
      d.resize(n);
      for (auto& x : d) x = std::uint8_t(rng());
      if (n >= 4 && rng() % 2) {
        std::uint32_t len = std::uint32_t(n);
        std::memcpy(d.data(), &len, 4);
      }
    } else {  // a seed with a few bytes flipped, cut or lengths rewritten
      d = base[rng() % base.size()];
      int edits = 1 + rng() % 4;
      for (int e = 0; e < edits && !d.empty(); ++e) {
        std::size_t at = rng() % d.size();
        switch (rng() % 4) {
          case 0:
            d[at] = std::uint8_t(rng());
            break;
          case 1:
            d[at] ^= std::uint8_t(1u << (rng() % 8));
            break;
          case 2:
            d.resize(at);
            break;
          case 3:
            d[at & ~std::size_t(3)] = std::uint8_t(rng() % 64);
            break;  // a length byte
        }
      }
    }
    total += feed(d, c);
  }
  EXPECT_GT(total, 0);
}

}  // namespace
}  // namespace ifcore::wire
