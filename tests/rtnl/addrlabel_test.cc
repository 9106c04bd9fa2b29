// tests/rtnl/addrlabel_test.cc — RTM_NEWADDRLABEL / RTM_DELADDRLABEL / RTM_GETADDRLABEL (`ip
// addrlabel`): the default table, the order of adds, replace, delete, the table's seq, the
// get's lookup, and the errors of bad requests, each as Linux 6.18 answers (checked on the
// kernel with the same raw requests, in a fresh namespace).
#include <linux/if_addrlabel.h>

#include <arpa/inet.h>

#include "ifcore/addrlabel.h"
#include "rtnl/fixture.h"
#include "rtnl/wire/addrlabel.h"

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

Bytes ifal(std::uint8_t family, std::uint8_t plen, std::uint32_t index = 0, std::uint8_t flags = 0,
           std::uint32_t seq = 0) {
  Bytes b{family, 0, plen, flags};
  add(b, le32(index));
  add(b, le32(seq));
  return b;
}
Bytes v6(const char* text) {
  Bytes b(16);
  EXPECT_EQ(inet_pton(AF_INET6, text, b.data()), 1) << text;
  return b;
}
Bytes address(const char* text) {
  return attr(IFAL_ADDRESS, v6(text));
}
Bytes label(std::uint32_t v) {
  return attr(IFAL_LABEL, le32(v));
}
Bytes req(std::uint16_t type, std::uint16_t flags, const Bytes& body) {
  return nlmsg(type, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), 5, 0, body);
}
// `ip addrlabel add prefix P/LEN [dev IFINDEX] label L`.
Bytes add_req(const char* prefix, std::uint8_t plen, std::uint32_t l, std::uint32_t index = 0,
              std::uint16_t flags = 0) {
  return req(RTM_NEWADDRLABEL, NLM_F_ACK | flags,
             cat({ifal(AF_INET6, plen, index), address(prefix), label(l)}));
}
Bytes del_req(const char* prefix, std::uint8_t plen, std::uint32_t l, std::uint32_t index = 0) {
  return req(RTM_DELADDRLABEL, NLM_F_ACK,
             cat({ifal(AF_INET6, plen, index), address(prefix), label(l)}));
}

struct Entry {
  std::string prefix;
  int plen = 0;
  std::uint32_t index = 0, label = 0, seq = 0;
  friend bool operator==(const Entry&, const Entry&) = default;
};
std::ostream& operator<<(std::ostream& o, const Entry& e) {
  return o << e.prefix << "/" << e.plen << " dev " << e.index << " label " << e.label << " seq "
           << e.seq;
}
Entry entry_of(const wire::AddrLabelMessage& m) {
  char text[INET6_ADDRSTRLEN] = "";
  if (m.address) inet_ntop(AF_INET6, m.address->data(), text, sizeof text);
  return Entry{text, m.prefix_len, m.ifindex, m.label.value_or(0xdead), m.seq};
}

class AddrLabelTest : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
  }
  std::vector<Entry> dump() {
    Replies r = send(req(RTM_GETADDRLABEL, NLM_F_DUMP, ifal(AF_INET6, 0)));
    std::vector<Entry> out;
    for (const auto& m : r.msgs) {
      if (m.hdr.nlmsg_type != RTM_NEWADDRLABEL) continue;
      EXPECT_EQ(m.hdr.nlmsg_flags, NLM_F_MULTI);
      auto d = wire::decode_addrlabel(m);
      EXPECT_TRUE(d);
      if (d) out.push_back(entry_of(*d));
    }
    EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
    return out;
  }
};

// The table of a new namespace, as `ip addrlabel list` prints it on Linux 6.18 (its
// ip6addrlbl_init_table added in order: ten adds, seq 10).
const std::vector<Entry> kDefaults = {
    {"::1", 128, 0, 0, 10},   {"::", 96, 0, 3, 10},        {"::ffff:0.0.0.0", 96, 0, 4, 10},
    {"2001::", 32, 0, 6, 10}, {"2001:10::", 28, 0, 7, 10}, {"3ffe::", 16, 0, 12, 10},
    {"2002::", 16, 0, 2, 10}, {"fec0::", 10, 0, 11, 10},   {"fc00::", 7, 0, 5, 10},
    {"::", 0, 0, 1, 10},
};

TEST(AddrLabelWire, EncodesLinuxsBytes) {
  wire::MessageBuilder b;
  wire::AddrLabelMessage m;
  m.family = AF_INET6;
  m.prefix_len = 128;
  m.seq = 10;
  m.address = std::array<std::uint8_t, 16>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  m.label = 0;
  ASSERT_TRUE(wire::encode_addrlabel(b, {RTM_NEWADDRLABEL, NLM_F_MULTI, 5, 9}, m));
  // The kernel's dump entry for ::1/128 (ip6addrlbl_fill): 56 bytes.
  Bytes want = nlmsg(RTM_NEWADDRLABEL, NLM_F_MULTI, 5, 9,
                     cat({ifal(AF_INET6, 128, 0, 0, 10), address("::1"), label(0)}));
  EXPECT_EQ(to_bytes(b.bytes()), want);
  EXPECT_EQ(want.size(), 56u);
}

TEST_F(AddrLabelTest, ANewNamespaceHasLinuxsDefaultTable) {
  EXPECT_EQ(dump(), kDefaults);
  auto ctl = engine->control();
  auto ns = ctl.create_namespace("other");
  ASSERT_TRUE(ns);
  auto t = inet::addrlabels(ctl, **ns);
  EXPECT_EQ(t.entries.size(), 10u);
  EXPECT_EQ(t.seq, 10u);
}

TEST_F(AddrLabelTest, AddsGoInLinuxsOrderAndTheSeqCountsAddsAndReplaces) {
  ASSERT_EQ(create("d0"), 0);
  const std::uint32_t d0 = static_cast<std::uint32_t>(find("d0")->ifindex());
  EXPECT_EQ(send(add_req("2003::", 16, 9)).last_error(), 0);  // before 3ffe::/16
  EXPECT_EQ(send(add_req("2003::", 16, 5)).last_error(), EEXIST);
  EXPECT_EQ(send(add_req("2003::", 16, 5, 0, NLM_F_REPLACE)).last_error(), 0);  // in place
  EXPECT_EQ(send(add_req("2004:1::5", 16, 8)).last_error(), 0);                 // cut to 2004::/16
  EXPECT_EQ(send(add_req("2005::", 16, 7, d0)).last_error(), 0);                // a device's: first
  EXPECT_EQ(send(add_req("2006::", 16, 6, d0)).last_error(), 0);  // after the device's
  // Linux's walk stops at the first entry of the length for every device (2004::/16) before
  // it meets 2003::/16: a second entry of that key is made, and found first.
  EXPECT_EQ(send(add_req("2003::", 16, 4)).last_error(), 0);
  EXPECT_EQ(send(del_req("2004::", 16, 0)).last_error(), 0);  // any label deletes
  EXPECT_EQ(send(del_req("2004::", 16, 0)).last_error(), ESRCH);
  std::vector<Entry> got = dump();
  ASSERT_EQ(got.size(), 14u);
  // Ten defaults, five adds and a replace: 16 (a delete does not count).
  for (const Entry& e : got) EXPECT_EQ(e.seq, 16u);
  std::vector<Entry> sixteens(got.begin() + 5, got.begin() + 11);
  EXPECT_EQ(sixteens, (std::vector<Entry>{{"2005::", 16, d0, 7, 16},
                                          {"2006::", 16, d0, 6, 16},
                                          {"2003::", 16, 0, 4, 16},
                                          {"2003::", 16, 0, 5, 16},
                                          {"3ffe::", 16, 0, 12, 16},
                                          {"2002::", 16, 0, 2, 16}}));
  EXPECT_EQ(send(del_req("2003::", 16, 0)).last_error(), 0);  // the first of the two
  EXPECT_EQ(dump().at(7), (Entry{"2003::", 16, 0, 5, 16}));
  // The device's entries stay when it goes, as Linux's do (they hold no reference).
  Device* dev = find("d0");
  auto ctl = engine->control();
  ASSERT_TRUE(ctl.delete_link(*dev));
  EXPECT_EQ(inet::addrlabels(ctl, *ctl.find_namespace("default")).entries.size(), 13u);
}

TEST_F(AddrLabelTest, BadRequestsGetLinuxsErrorsAndChangeNothing) {
  struct Case {
    const char* what;
    Bytes msg;
    int error;
    const char* extack;
    int offset;
  };
  const Case cases[] = {
      {"family 4",
       req(RTM_NEWADDRLABEL, NLM_F_ACK, cat({ifal(AF_INET, 64), address("dead::"), label(1)})),
       EOPNOTSUPP, "", -1},
      {"length 129", add_req("dead::", 129, 1), EINVAL, "", -1},
      {"no address", req(RTM_NEWADDRLABEL, NLM_F_ACK, cat({ifal(AF_INET6, 64), label(1)})), EINVAL,
       "", -1},
      {"no label", req(RTM_NEWADDRLABEL, NLM_F_ACK, cat({ifal(AF_INET6, 64), address("dead::")})),
       EINVAL, "", -1},
      {"label ~0", add_req("dead::", 64, 0xffffffff), EINVAL, "", -1},
      {"no device 99", add_req("dead::", 64, 1, 99), EINVAL, "", -1},
      {"mapped /128", add_req("::ffff:1.2.3.4", 128, 1), EINVAL, "", -1},
      {"short address",
       req(RTM_NEWADDRLABEL, NLM_F_ACK,
           cat({ifal(AF_INET6, 64), attr(IFAL_ADDRESS, Bytes(8, 0xde)), label(1)})),
       ERANGE, "Attribute failed policy validation", 28},
      {"short label",
       req(RTM_NEWADDRLABEL, NLM_F_ACK,
           cat({ifal(AF_INET6, 64), address("beef::"), attr(IFAL_LABEL, {1, 0})})),
       ERANGE, "Attribute failed policy validation", 48},
      {"short header", req(RTM_NEWADDRLABEL, NLM_F_ACK, Bytes{AF_INET6, 0, 0, 0, 0, 0, 0, 0}),
       EINVAL, "Invalid header length", -1},
      {"delete of none", del_req("dead::", 64, 1), ESRCH, "", -1},
      {"delete without label",
       req(RTM_DELADDRLABEL, NLM_F_ACK, cat({ifal(AF_INET6, 16), address("2002::")})), EINVAL, "",
       -1},
  };
  for (const Case& c : cases) {
    Replies r = send(c.msg);
    EXPECT_EQ(r.last_error(), c.error) << c.what;
    EXPECT_EQ(r.last_error_reply().message, c.extack) << c.what;
    EXPECT_EQ(r.last_error_reply().attr_offset, c.offset) << c.what;
  }
  EXPECT_EQ(dump(), kDefaults);
  // Accepted with Linux's warning: bytes after the last attribute; a longer label (its
  // first 4 bytes), an unknown type (skipped).
  Replies r = send(req(RTM_NEWADDRLABEL, NLM_F_ACK,
                       cat({ifal(AF_INET6, 64), address("bee1::"), label(3), {1, 0}})));
  EXPECT_EQ(r.last_error(), 0);
  EXPECT_EQ(r.last_error_reply().message, "bytes leftover after parsing attributes");
  r = send(req(
      RTM_NEWADDRLABEL, NLM_F_ACK,
      cat({ifal(AF_INET6, 64), address("bee2::"), attr(IFAL_LABEL, le64(3)), attr(9, le32(1))})));
  EXPECT_EQ(r.last_error(), 0);
  EXPECT_EQ(r.last_error_reply().message, "");
  EXPECT_EQ(dump().at(3), (Entry{"bee2::", 64, 0, 3, 12}));
}

TEST_F(AddrLabelTest, TheDumpsStrictChecks) {
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  struct Case {
    Bytes body;
    const char* extack;
  };
  const Case cases[] = {
      {ifal(AF_INET6, 1), "ipv6: Invalid values in header for address label dump request"},
      {ifal(AF_INET6, 0, 1), "ipv6: Invalid values in header for address label dump request"},
      {Bytes{AF_INET6, 0, 0, 0, 0, 0, 0, 0}, "ipv6: Invalid header for address label dump request"},
      {cat({ifal(AF_INET6, 0), label(1)}),
       "ipv6: Invalid data after header for address label dump request"},
  };
  for (const Case& c : cases) {
    Replies r = send(req(RTM_GETADDRLABEL, NLM_F_DUMP, c.body));
    ASSERT_EQ(r.msgs.size(), 1u);
    ASSERT_EQ(r.msgs[0].hdr.nlmsg_type, NLMSG_DONE);
    EXPECT_EQ(wire::decode_done(r.msgs[0]).value_or(0), EINVAL);
    EXPECT_EQ(wire::decode_done_message(r.msgs[0]), c.extack);
  }
  // Another family has no dump handler, strict or not.
  EXPECT_EQ(send(req(RTM_GETADDRLABEL, NLM_F_DUMP, ifal(AF_INET, 0))).last_error(), EOPNOTSUPP);
}

TEST_F(AddrLabelTest, GetFindsTheFirstMatchAsLinuxsLookupDoes) {
  ASSERT_EQ(send(add_req("2003::", 16, 9)).last_error(), 0);
  auto get = [&](const char* a, const Bytes& hdr = ifal(AF_INET6, 128), const Bytes& more = {}) {
    return send(req(RTM_GETADDRLABEL, NLM_F_ACK, cat({hdr, address(a), more})));
  };
  auto found = [&](Replies r) -> Entry {
    EXPECT_EQ(r.msgs.size(), 2u);
    EXPECT_EQ(r.msgs[0].hdr.nlmsg_flags, 0);
    auto d = wire::decode_addrlabel(r.msgs[0]);
    return d ? entry_of(*d) : Entry{};
  };
  for (bool strict : {false, true}) {
    session->set_option(NETLINK_GET_STRICT_CHK, strict ? 1 : 0);
    EXPECT_EQ(found(get("2003::1")), (Entry{"2003::", 16, 0, 9, 11}));
    // Linux compares an entry's kind with the address's whole type: ::1 passes over ::1/128.
    EXPECT_EQ(found(get("::1")), (Entry{"::", 96, 0, 3, 11}));
    EXPECT_EQ(found(get("::ffff:1.2.3.4")), (Entry{"::ffff:0.0.0.0", 96, 0, 4, 11}));
    EXPECT_EQ(get("2003::1", ifal(AF_INET6, 64)).last_error(), EINVAL);
    EXPECT_EQ(get("2003::1", ifal(AF_INET6, 128, 99)).last_error(), EINVAL);
    EXPECT_EQ(send(req(RTM_GETADDRLABEL, NLM_F_ACK, ifal(AF_INET6, 128))).last_error(), EINVAL);
    EXPECT_EQ(get("2003::1", ifal(AF_INET, 128)).last_error(), EOPNOTSUPP);
    Replies r = send(req(RTM_GETADDRLABEL, NLM_F_ACK, Bytes{AF_INET6, 0, 0, 0, 0, 0, 0, 0}));
    EXPECT_EQ(r.last_error(), EINVAL);
    EXPECT_EQ(r.last_error_reply().message, "ipv6: Invalid header for addrlabel get request");
  }
  // What only a strict get refuses.
  session->set_option(NETLINK_GET_STRICT_CHK, 0);
  EXPECT_EQ(found(get("2003::1", ifal(AF_INET6, 128, 0, 1))).label, 9u);
  EXPECT_EQ(found(get("2003::1", ifal(AF_INET6, 128), label(1))).label, 9u);
  Replies r = get("2003::1", ifal(AF_INET6, 128), Bytes{1, 0});
  EXPECT_EQ(r.last_error(), 0);
  EXPECT_EQ(r.last_error_reply().message, "bytes leftover after parsing attributes");
  session->set_option(NETLINK_GET_STRICT_CHK, 1);
  struct Case {
    Replies r;
    const char* extack;
    int offset;
  };
  const Case cases[] = {
      {get("2003::1", ifal(AF_INET6, 128, 0, 1)),
       "ipv6: Invalid values in header for addrlabel get request", -1},
      {get("2003::1", ifal(AF_INET6, 128, 0, 0, 1)),
       "ipv6: Invalid values in header for addrlabel get request", -1},
      {get("2003::1", ifal(AF_INET6, 128), label(1)),
       "ipv6: Unsupported attribute in addrlabel get request", -1},
      {get("2003::1", ifal(AF_INET6, 128), Bytes{1, 0}), "bytes leftover after parsing attributes",
       -1},
      {get("2003::1", ifal(AF_INET6, 128), attr(9, le32(1))), "Unknown attribute type", 48},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.r.last_error(), EINVAL) << c.extack;
    EXPECT_EQ(c.r.last_error_reply().message, c.extack);
    EXPECT_EQ(c.r.last_error_reply().attr_offset, c.offset) << c.extack;
  }
}

}  // namespace
}  // namespace ifcore::rtnl::test
