// tests/rtnl/sysctl_test.cc — ifcore's sysctl message: the codec (bytes, round trip,
// malformed input), names and values, and the handler (read, write all/default/device,
// unknown names and devices, bad values, read-only peers).
#include "rtnl/wire/sysctl_msg.h"

#include <sys/socket.h>

#include <cstring>

#include "fixture.h"
#include "ifcore/inet.h"

namespace ifcore::rtnl::test {
namespace {

Bytes sysctl_request(std::uint32_t seq, const std::string& name,
                     std::optional<std::string> value = {}, std::uint16_t flags = NLM_F_ACK) {
  wire::MessageBuilder b;
  EXPECT_TRUE(encode_sysctl_request(b, seq, SysctlRequest{name, std::move(value)}, flags));
  return b.take();
}

const wire::Message& only(const Result<std::vector<wire::Message>>& msgs) {
  EXPECT_TRUE(msgs);
  EXPECT_EQ(msgs->size(), 1u);
  return (*msgs)[0];
}

// ---- codec

TEST(SysctlCodec, RequestBytes) {
  Bytes b = sysctl_request(7, "net.ipv6.conf.all.forwarding", "1");
  // nlmsghdr, rtgenmsg (padded to 4), NAME ("…forwarding\0": 29 + 1 bytes), VALUE ("1\0").
  const std::size_t name_len = std::strlen("net.ipv6.conf.all.forwarding") + 1;
  const std::size_t want = 16 + 4 + NLA_ALIGN(4 + name_len) + NLA_ALIGN(4 + 2);
  ASSERT_EQ(b.size(), want);
  std::uint32_t len;
  std::uint16_t type, flags;
  std::memcpy(&len, b.data(), 4);
  std::memcpy(&type, b.data() + 4, 2);
  std::memcpy(&flags, b.data() + 6, 2);
  EXPECT_EQ(len, want);
  EXPECT_EQ(type, 0x3ff3);
  EXPECT_EQ(flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(b[16], AF_UNSPEC);
  std::uint16_t alen, atype;
  std::memcpy(&alen, b.data() + 20, 2);
  std::memcpy(&atype, b.data() + 22, 2);
  EXPECT_EQ(alen, 4 + name_len);
  EXPECT_EQ(atype, IFCORE_SYSCTL_NAME);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data() + 24)),
            "net.ipv6.conf.all.forwarding");
  const std::size_t v = 20 + NLA_ALIGN(4 + name_len);
  std::memcpy(&alen, b.data() + v, 2);
  std::memcpy(&atype, b.data() + v + 2, 2);
  EXPECT_EQ(alen, 6);
  EXPECT_EQ(atype, IFCORE_SYSCTL_VALUE);
  EXPECT_EQ(b[v + 4], '1');
  EXPECT_EQ(b[v + 5], 0);
}

TEST(SysctlCodec, RoundTrip) {
  Bytes b = sysctl_request(7, "net.ipv4.conf.v0.forwarding");
  auto msgs = wire::split_messages(b);
  auto read = decode_sysctl_request(only(msgs));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->name, "net.ipv4.conf.v0.forwarding");
  EXPECT_FALSE(read->value);  // a read

  b = sysctl_request(8, "net.ipv6.conf.all.forwarding", "");
  msgs = wire::split_messages(b);
  auto write = decode_sysctl_request(only(msgs));
  ASSERT_TRUE(write);
  EXPECT_EQ(write->value, std::optional<std::string>(""));  // an empty write is still a write

  wire::MessageBuilder rb;
  ASSERT_TRUE(encode_sysctl_reply(rb, 8, 42, SysctlReply{"net.ipv6.conf.all.forwarding", "1"}));
  Bytes reply = rb.take();
  msgs = wire::split_messages(reply);
  const wire::Message& m = only(msgs);
  EXPECT_EQ(m.hdr.nlmsg_type, IFCORE_NLMSG_SYSCTL);
  EXPECT_EQ(m.hdr.nlmsg_seq, 8u);
  EXPECT_EQ(m.hdr.nlmsg_pid, 42u);
  auto rep = decode_sysctl_reply(m);
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->name, "net.ipv6.conf.all.forwarding");
  EXPECT_EQ(rep->value, "1");
}

TEST(SysctlCodec, MalformedIsAnErrorNeverACrash) {
  Bytes good = sysctl_request(1, "net.ipv6.conf.all.forwarding", "1");
  // Every truncation: split or decode fails with an errno, never crashes.
  for (std::size_t n = 0; n < good.size(); ++n) {
    Bytes cut(good.begin(), good.begin() + static_cast<long>(n));
    if (n >= 4) {
      std::uint32_t len = static_cast<std::uint32_t>(n);
      std::memcpy(cut.data(), &len, 4);
    }
    auto msgs = wire::split_messages(cut);
    if (!msgs || msgs->empty()) continue;
    auto d = decode_sysctl_request((*msgs)[0]);
    if (!d) {
      EXPECT_NE(d.error().code, 0);
    }
    auto r = decode_sysctl_reply((*msgs)[0]);
    if (!r) {
      EXPECT_NE(r.error().code, 0);
    }
  }
  // No rtgenmsg.
  wire::MessageBuilder b;
  b.begin({IFCORE_NLMSG_SYSCTL, NLM_F_REQUEST, 1, 0});
  ASSERT_TRUE(b.end());
  Bytes bytes = b.take();
  auto msgs = wire::split_messages(bytes);
  EXPECT_EQ(decode_sysctl_request(only(msgs)).error().code, EINVAL);
  // No name.
  b.begin({IFCORE_NLMSG_SYSCTL, NLM_F_REQUEST, 1, 0});
  b.put_struct(rtgenmsg{AF_UNSPEC});
  b.put_string(IFCORE_SYSCTL_VALUE, "1");
  ASSERT_TRUE(b.end());
  bytes = b.take();
  msgs = wire::split_messages(bytes);
  EXPECT_EQ(decode_sysctl_request(only(msgs)).error().code, EINVAL);
  EXPECT_EQ(decode_sysctl_reply(only(msgs)).error().code, EINVAL);
  // Empty and overlong names; an overlong value.
  b.begin({IFCORE_NLMSG_SYSCTL, NLM_F_REQUEST, 1, 0});
  b.put_struct(rtgenmsg{AF_UNSPEC});
  b.put_attr(IFCORE_SYSCTL_NAME, "", 0);
  ASSERT_TRUE(b.end());
  bytes = b.take();
  msgs = wire::split_messages(bytes);
  EXPECT_EQ(decode_sysctl_request(only(msgs)).error().code, ERANGE);
  bytes = sysctl_request(1, std::string(kSysctlMaxName + 1, 'x'));
  msgs = wire::split_messages(bytes);
  EXPECT_EQ(decode_sysctl_request(only(msgs)).error().code, ERANGE);
  bytes = sysctl_request(1, "net.ipv6.conf.all.forwarding", std::string(kSysctlMaxValue + 1, '1'));
  msgs = wire::split_messages(bytes);
  EXPECT_EQ(decode_sysctl_request(only(msgs)).error().code, ERANGE);
  // An attribute running past the end of the message.
  bytes = sysctl_request(1, "net.ipv6.conf.all.forwarding");
  bytes[20] = 0xff;  // NAME's nla_len
  msgs = wire::split_messages(bytes);
  EXPECT_EQ(decode_sysctl_request(only(msgs)).error().code, EINVAL);
  // Another message type.
  b.begin({RTM_GETLINK, NLM_F_REQUEST, 1, 0});
  b.put_struct(rtgenmsg{AF_UNSPEC});
  ASSERT_TRUE(b.end());
  bytes = b.take();
  msgs = wire::split_messages(bytes);
  EXPECT_EQ(decode_sysctl_request(only(msgs)).error().code, EINVAL);
  EXPECT_EQ(decode_sysctl_reply(only(msgs)).error().code, EINVAL);
}

TEST(SysctlNames, DottedAndSlashedForms) {
  auto n = parse_sysctl_name("net.ipv6.conf.all.keep_addr_on_down");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->family, AF_INET6);
  EXPECT_EQ(n->scope, "all");
  EXPECT_EQ(n->key, "keep_addr_on_down");
  // A device's dots are slashes in the dotted form, as sysctl(8) prints them.
  n = parse_sysctl_name("net.ipv4.conf.eth0/100.forwarding");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->family, AF_INET);
  EXPECT_EQ(n->scope, "eth0.100");
  EXPECT_EQ(sysctl_name(*n), "net.ipv4.conf.eth0/100.forwarding");
  EXPECT_EQ(sysctl_path(*n), "net/ipv4/conf/eth0.100/forwarding");
  n = parse_sysctl_name("net/ipv4/conf/eth0.100/forwarding");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->scope, "eth0.100");
  for (const char* bad :
       {"", "net", "net.ipv6.conf.all", "net.ipv6.conf.all.forwarding.x", "net.core.conf.all.x",
        "net.ipv6.route.all.x", "net.ipv6.conf..x", "kernel.ipv6.conf.all.forwarding"})
    EXPECT_EQ(parse_sysctl_name(bad).error().code, ENOENT) << bad;
}

TEST(SysctlNames, IntegersAsProcReadsThem) {
  EXPECT_EQ(parse_sysctl_int("1"), 1);
  EXPECT_EQ(parse_sysctl_int(" 0\n"), 0);
  EXPECT_EQ(parse_sysctl_int("+3"), 3);
  EXPECT_EQ(parse_sysctl_int("-1"), -1);
  for (const char* bad : {"", " ", "x", "1x", "0x1", "+-1", "99999999999", "1 2"})
    EXPECT_EQ(parse_sysctl_int(bad).error().code, EINVAL) << bad;
}

// ---- handler

class SysctlMsg : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
    ASSERT_EQ(create("d0"), 0);
    ASSERT_EQ(create("d1"), 0);
  }
  // Sends a read or write; returns the reply's value, or the errno as an error (with the
  // extack message).
  Result<std::string> ask(const std::string& name, std::optional<std::string> value = {},
                          Session* s = nullptr) {
    auto r = roundtrip(s ? *s : *session, sysctl_request(5, name, std::move(value)));
    if (r.msgs.empty()) return fail(EIO, "no reply");
    if (r.msgs[0].hdr.nlmsg_type == NLMSG_ERROR) {
      auto e = wire::decode_error(r.msgs[0]);
      return fail(e ? e->error : EIO, "{}", e ? e->message : "");
    }
    EXPECT_EQ(r.msgs.size(), 2u);  // the reply, then the ACK
    EXPECT_EQ(r.msgs[0].hdr.nlmsg_seq, 5u);
    if (!s) {
      EXPECT_EQ(r.msgs[0].hdr.nlmsg_pid, 4242u);
    }
    EXPECT_EQ(r.last_error(), 0);
    auto rep = decode_sysctl_reply(r.msgs[0]);
    if (!rep) return fail(rep.error());
    EXPECT_EQ(rep->name, sysctl_name(*parse_sysctl_name(name)));  // always dotted
    return rep->value;
  }
  inet::Inet6Conf conf6(int scope) {
    auto ctl = engine->control();
    return *inet::inet6_conf(ctl, *ctl.find_namespace("default"), scope);
  }
  inet::Inet4Conf conf4(int scope) {
    auto ctl = engine->control();
    return *inet::inet4_conf(ctl, *ctl.find_namespace("default"), scope);
  }
  int ifindex(const std::string& name) { return find(name)->ifindex(); }
};

TEST_F(SysctlMsg, ReadsEveryKey) {
  for (const char* k : {"net.ipv4.conf.all.forwarding", "net.ipv4.conf.d0.promote_secondaries",
                        "net.ipv6.conf.default.forwarding", "net.ipv6.conf.d0.disable_ipv6",
                        "net.ipv6.conf.d0.addr_gen_mode", "net.ipv6.conf.all.keep_addr_on_down"}) {
    auto v = ask(k);
    ASSERT_TRUE(v) << k << ": " << v.error().message;
    EXPECT_EQ(*v, "0") << k;
  }
}

TEST_F(SysctlMsg, WritesTheDevice) {
  auto v = ask("net.ipv6.conf.d0.forwarding", "1");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(*v, "1");  // the reply to a write carries the new value
  EXPECT_TRUE(conf6(ifindex("d0")).forwarding);
  EXPECT_FALSE(conf6(ifindex("d1")).forwarding);
  EXPECT_FALSE(conf6(inet::kConfAll).forwarding);
  EXPECT_EQ(ask("net.ipv6.conf.d0.forwarding"), "1");
  ASSERT_TRUE(ask("net.ipv6.conf.d1.addr_gen_mode", "1\n"));  // as `echo 1 >` writes it
  EXPECT_EQ(conf6(ifindex("d1")).addr_gen_mode, 1);
  ASSERT_TRUE(ask("net/ipv4/conf/d1/promote_secondaries", "1"));  // the slashed form
  EXPECT_TRUE(conf4(ifindex("d1")).promote_secondaries);
}

TEST_F(SysctlMsg, WritingAllCopiesOnlyThatKey) {
  // d0 forwards on its own; writing all.keep_addr_on_down must not touch that.
  ASSERT_TRUE(ask("net.ipv6.conf.d0.forwarding", "1"));
  ASSERT_TRUE(ask("net.ipv6.conf.all.keep_addr_on_down", "1"));
  EXPECT_TRUE(conf6(inet::kConfAll).keep_addr_on_down);
  EXPECT_FALSE(conf6(ifindex("d1")).keep_addr_on_down);  // ORed with "all", not copied
  EXPECT_TRUE(conf6(ifindex("d0")).forwarding);
  // all.forwarding is copied to every device and to the default (Linux:
  // addrconf_fixup_forwarding).
  ASSERT_TRUE(ask("net.ipv6.conf.all.forwarding", "1"));
  EXPECT_TRUE(conf6(ifindex("d1")).forwarding);
  EXPECT_TRUE(conf6(inet::kConfDefault).forwarding);
  ASSERT_TRUE(ask("net.ipv6.conf.all.forwarding", "0"));
  EXPECT_FALSE(conf6(ifindex("d0")).forwarding);
  // IPv4 likewise (devinet_sysctl_forward).
  ASSERT_TRUE(ask("net.ipv4.conf.all.forwarding", "1"));
  EXPECT_TRUE(conf4(ifindex("d0")).forwarding);
  EXPECT_TRUE(conf4(inet::kConfDefault).forwarding);
  ASSERT_TRUE(ask("net.ipv4.conf.all.promote_secondaries", "1"));
  EXPECT_FALSE(conf4(ifindex("d0")).promote_secondaries);
}

TEST_F(SysctlMsg, DefaultIsCopiedToNewDevices) {
  ASSERT_TRUE(ask("net.ipv6.conf.default.forwarding", "1"));
  EXPECT_FALSE(conf6(ifindex("d0")).forwarding);  // existing devices keep theirs
  ASSERT_EQ(create("d2"), 0);
  EXPECT_TRUE(conf6(ifindex("d2")).forwarding);
  EXPECT_EQ(ask("net.ipv6.conf.d2.forwarding"), "1");
}

TEST_F(SysctlMsg, UnknownKeysAndDevicesAreENOENT) {
  for (const char* k : {"net.ipv6.conf.nope.forwarding", "net.ipv6.conf.all.nope",
                        "net.ipv4.conf.all.disable_ipv6", "net.core.somaxconn", "nope"}) {
    auto v = ask(k);
    ASSERT_FALSE(v) << k;
    EXPECT_EQ(v.error().code, ENOENT) << k;
    EXPECT_FALSE(ask(k, "1")) << k;
  }
  EXPECT_EQ(ask("net.ipv6.conf.nope.forwarding").error().message,
            "unknown setting \"net.ipv6.conf.nope.forwarding\": no device \"nope\"");
}

TEST_F(SysctlMsg, BadValuesAreEINVALAndChangeNothing) {
  for (const char* v : {"x", "", "1 1"}) {
    auto r = ask("net.ipv6.conf.all.forwarding", v);
    ASSERT_FALSE(r) << v;
    EXPECT_EQ(r.error().code, EINVAL) << v;
  }
  EXPECT_EQ(ask("net.ipv6.conf.all.forwarding", "x").error().message,
            "setting \"net.ipv6.conf.all.forwarding\": value \"x\" is not an integer");
  EXPECT_EQ(ask("net.ipv6.conf.all.keep_addr_on_down", "2").error().message,
            "setting \"net.ipv6.conf.all.keep_addr_on_down\": value \"2\" is not 0 or 1");
  // Stable privacy needs a stable_secret, which ifcore does not have: EINVAL, as Linux.
  EXPECT_EQ(ask("net.ipv6.conf.d0.addr_gen_mode", "2").error().code, EINVAL);
  EXPECT_EQ(ask("net.ipv6.conf.d0.addr_gen_mode", "4").error().code, EINVAL);
  EXPECT_FALSE(conf6(inet::kConfAll).forwarding);
  EXPECT_FALSE(conf6(ifindex("d0")).forwarding);
  EXPECT_EQ(conf6(ifindex("d0")).addr_gen_mode, 0);
  EXPECT_EQ(ask("net.ipv6.conf.d0.addr_gen_mode", "3"), "3");
}

// Linux keeps forwarding, rp_filter, proxy_arp, proxy_ndp... as the integer written
// (proc_dointvec), and mc_forwarding is read-only (mode 0444: EACCES).
TEST_F(SysctlMsg, NetconfSettingsKeepTheIntegerWritten) {
  EXPECT_EQ(ask("net.ipv4.conf.all.forwarding", "2"), "2");
  EXPECT_EQ(conf4(ifindex("d0")).forwarding, 2);
  EXPECT_EQ(ask("net.ipv6.conf.d0.forwarding", "-1"), "-1");
  EXPECT_EQ(ask("net.ipv4.conf.d1.rp_filter", "7"), "7");
  EXPECT_EQ(ask("net.ipv4.conf.default.proxy_arp", "1"), "1");
  EXPECT_EQ(ask("net.ipv6.conf.all.proxy_ndp", "3"), "3");
  EXPECT_EQ(ask("net.ipv6.conf.d1.ignore_routes_with_linkdown", "1"), "1");
  EXPECT_EQ(ask("net.ipv4.conf.d0.bc_forwarding", "1"), "1");
  EXPECT_EQ(ask("net.ipv4.conf.all.mc_forwarding"), "0");
  EXPECT_EQ(ask("net.ipv4.conf.all.mc_forwarding", "1").error().code, EACCES);
  EXPECT_EQ(ask("net.ipv6.conf.all.mc_forwarding").error().code, ENOENT);
}

TEST_F(SysctlMsg, ReadOnlyPeersReadButMayNotWrite) {
  SessionOptions o;
  o.may_write = false;
  auto ro = open(o);
  EXPECT_EQ(ask("net.ipv6.conf.all.forwarding", std::nullopt, ro.get()), "0");
  auto w = ask("net.ipv6.conf.all.forwarding", "1", ro.get());
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, EPERM);
  EXPECT_FALSE(conf6(inet::kConfAll).forwarding);
}

}  // namespace
}  // namespace ifcore::rtnl::test
