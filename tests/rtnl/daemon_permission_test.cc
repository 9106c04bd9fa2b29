// tests/rtnl/daemon_permission_test.cc — a peer without the right to write (not uid 0, not
// in --group) reads as anyone may, and every request that would change state gets EPERM and
// changes nothing, over the socket and over mapped rings; a peer that owns a namespace it
// made may change that one, and no other.
#include <net/if.h>  // before any <linux/if*.h>

#include <arpa/inet.h>
#include <grp.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <sys/wait.h>

#include <functional>

#include "rtnl/daemon_fixture.h"
#include "rtnl/wire/nsid.h"
#include "rtnl/wire/probe_msg.h"
#include "rtnl/wire/sysctl_msg.h"

#ifdef IFCORED_PATH

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

// Runs `body` in a child process as uid and gid 65534 with no supplementary groups; returns
// its exit status (0: passed), -1 if it could not run.
template <class F>
int as_nobody(F body) {
  pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    if (setgroups(0, nullptr) < 0 || setresgid(65534, 65534, 65534) < 0 ||
        setresuid(65534, 65534, 65534) < 0)
      _exit(100);
    _exit(body());
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// One message of `type`: a fixed header `h`, then what `attrs` writes.
template <class H>
Bytes msg(std::uint16_t type, std::uint16_t flags, const H& h,
          const std::function<void(wire::MessageBuilder&)>& attrs = {}) {
  wire::MessageBuilder b;
  b.begin({type, static_cast<std::uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags), 1, 0});
  b.put_struct(h);
  if (attrs) attrs(b);
  EXPECT_TRUE(b.end());
  return b.take();
}

void put_in4(wire::MessageBuilder& b, std::uint16_t type, const char* a) {
  in_addr v{};
  inet_pton(AF_INET, a, &v);
  b.put_attr(type, &v, sizeof v);
}

struct Named {
  const char* what;
  Bytes bytes;
};

// Requests that would change state if root sent them (the device "keep0", ifindex `keep`,
// exists). Linux: rtnetlink_rcv_msg refuses every kind but GET without CAP_NET_ADMIN before
// it looks at the message, with EPERM and no extack message.
std::vector<Named> changing_requests(int keep) {
  std::vector<Named> v;
  auto ifi = [&](int index) {
    ifinfomsg i{};
    i.ifi_index = index;
    return i;
  };
  v.push_back({"link create", link_msg(RTM_NEWLINK, kCreate, 1, named("u0", "dummy"))});
  LinkRequest mtu = named("lo");
  mtu.mtu = 1280;
  v.push_back({"link change (newlink)", link_msg(RTM_NEWLINK, NLM_F_ACK, 1, mtu)});
  v.push_back({"link change (setlink)", link_msg(RTM_SETLINK, NLM_F_ACK, 1, mtu)});
  v.push_back({"link delete", link_msg(RTM_DELLINK, NLM_F_ACK, 1, named("keep0"))});
  v.push_back({"link delete by group (bulk)",
               msg(RTM_DELLINK, 0, ifi(0), [](auto& b) { b.put_u32(IFLA_GROUP, 0); })});
  v.push_back({"altname add", msg(RTM_NEWLINKPROP, 0, ifi(keep), [](auto& b) {
                 auto n = b.begin_nest(IFLA_PROP_LIST);
                 b.put_string(IFLA_ALT_IFNAME, "alt0");
                 b.end_nest(n);
               })});
  v.push_back({"altname delete", msg(RTM_DELLINKPROP, 0, ifi(keep), [](auto& b) {
                 auto n = b.begin_nest(IFLA_PROP_LIST);
                 b.put_string(IFLA_ALT_IFNAME, "alt0");
                 b.end_nest(n);
               })});
  ifaddrmsg a{AF_INET, 24, 0, 0, static_cast<std::uint32_t>(keep)};
  v.push_back({"address add", msg(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, a, [](auto& b) {
                 put_in4(b, IFA_LOCAL, "10.9.9.9");
                 put_in4(b, IFA_ADDRESS, "10.9.9.9");
               })});
  ifaddrmsg lo{AF_INET, 8, 0, 0, 1};
  v.push_back({"address delete",
               msg(RTM_DELADDR, 0, lo, [](auto& b) { put_in4(b, IFA_LOCAL, "127.0.0.1"); })});
  rtmsg rt{};
  rt.rtm_family = AF_INET;
  rt.rtm_dst_len = 16;
  rt.rtm_table = RT_TABLE_MAIN;
  rt.rtm_protocol = RTPROT_BOOT;
  rt.rtm_scope = RT_SCOPE_LINK;
  rt.rtm_type = RTN_UNICAST;
  v.push_back({"route add", msg(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, rt, [&](auto& b) {
                 put_in4(b, RTA_DST, "10.8.0.0");
                 b.put_u32(RTA_OIF, static_cast<std::uint32_t>(keep));
               })});
  rtmsg local = rt;
  local.rtm_dst_len = 32;
  local.rtm_table = RT_TABLE_LOCAL;
  local.rtm_scope = RT_SCOPE_HOST;
  local.rtm_type = RTN_LOCAL;
  v.push_back({"route delete", msg(RTM_DELROUTE, 0, local, [](auto& b) {
                 put_in4(b, RTA_DST, "127.0.0.1");
                 b.put_u32(RTA_OIF, 1);
               })});
  ndmsg nd{};
  nd.ndm_family = AF_INET;
  nd.ndm_ifindex = keep;
  nd.ndm_state = NUD_PERMANENT;
  static const std::uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x09};
  v.push_back({"neighbour add", msg(RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_EXCL, nd, [](auto& b) {
                 put_in4(b, NDA_DST, "10.9.9.1");
                 b.put_attr(NDA_LLADDR, mac, sizeof mac);
               })});
  v.push_back({"neighbour delete",
               msg(RTM_DELNEIGH, 0, nd, [](auto& b) { put_in4(b, NDA_DST, "10.9.9.1"); })});
  ndmsg fdb{};
  fdb.ndm_family = AF_BRIDGE;
  fdb.ndm_ifindex = keep;
  fdb.ndm_flags = NTF_SELF;
  fdb.ndm_state = NUD_PERMANENT;
  v.push_back({"fdb add", msg(RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_EXCL, fdb,
                              [](auto& b) { b.put_attr(NDA_LLADDR, mac, sizeof mac); })});
  v.push_back({"fdb delete", msg(RTM_DELNEIGH, 0, fdb,
                                 [](auto& b) { b.put_attr(NDA_LLADDR, mac, sizeof mac); })});
  ndmsg flush{};
  flush.ndm_family = AF_BRIDGE;
  flush.ndm_ifindex = keep;
  v.push_back({"fdb flush (bulk delete)", msg(RTM_DELNEIGH, NLM_F_BULK, flush)});
  fib_rule_hdr rule{};
  rule.family = AF_INET;
  rule.table = 100;
  rule.action = FR_ACT_TO_TBL;
  v.push_back({"rule add", msg(RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL, rule,
                               [](auto& b) { b.put_u32(FRA_PRIORITY, 1000); })});
  fib_rule_hdr main_rule{};
  main_rule.family = AF_INET;
  main_rule.table = RT_TABLE_MAIN;
  main_rule.action = FR_ACT_TO_TBL;
  v.push_back({"rule delete",
               msg(RTM_DELRULE, 0, main_rule, [](auto& b) { b.put_u32(FRA_PRIORITY, 32766); })});
  nhmsg nh{};
  nh.nh_family = AF_UNSPEC;
  v.push_back({"nexthop add", msg(RTM_NEWNEXTHOP, NLM_F_CREATE | NLM_F_EXCL, nh, [](auto& b) {
                 b.put_u32(NHA_ID, 7);
                 b.put_flag(NHA_BLACKHOLE);
               })});
  v.push_back(
      {"nexthop delete", msg(RTM_DELNEXTHOP, 0, nh, [](auto& b) { b.put_u32(NHA_ID, 7); })});
  netconfmsg nc{};
  nc.ncm_family = AF_INET;
  v.push_back({"netconf set",
               msg(RTM_NEWNETCONF, 0, nc, [](auto& b) { b.put_s32(NETCONFA_FORWARDING, 1); })});
  wire::NsidMessage ns;
  ns.name = "made";
  wire::MessageBuilder b;
  EXPECT_TRUE(
      wire::encode_nsid(b, {RTM_NEWNSID, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE, 1, 0}, ns));
  v.push_back({"namespace create (newnsid)", b.take()});
  ns.name = "default";
  EXPECT_TRUE(wire::encode_nsid(b, {RTM_DELNSID, NLM_F_REQUEST | NLM_F_ACK, 1, 0}, ns));
  v.push_back({"namespace delete (delnsid)", b.take()});
  SysctlRequest sc;
  sc.name = "net.ipv4.conf.all.forwarding";
  sc.value = "1";
  EXPECT_TRUE(encode_sysctl_request(b, 1, sc, NLM_F_ACK));
  v.push_back({"sysctl write", b.take()});
  ProbeRequest pr;
  pr.from.name = "keep0";
  pr.to.name = "keep0";
  EXPECT_TRUE(encode_probe_request(b, 1, pr, NLM_F_ACK));
  v.push_back({"probe (sends frames)", b.take()});
  return v;
}

// Everything a reader can see: dumps of links, addresses, routes, neighbours, the fdb,
// rules, nexthops and netconf, and a sysctl, in one byte string.
template <class Client>
Bytes state_of(Client& c) {
  Bytes all;
  auto dump = [&](std::uint16_t type, std::uint8_t family, std::size_t len) {
    wire::MessageBuilder b;
    b.begin({type, NLM_F_REQUEST | NLM_F_DUMP, 2, 0});
    std::vector<std::uint8_t> hdr(len, 0);
    hdr[0] = family;
    b.put_raw(hdr.data(), hdr.size());
    EXPECT_TRUE(b.end());
    c.send_dg(b.take());
    Replies r = c.until_end();
    for (auto& d : r.dgs) all.insert(all.end(), d.begin(), d.end());
  };
  dump(RTM_GETLINK, AF_UNSPEC, sizeof(ifinfomsg));
  dump(RTM_GETADDR, AF_UNSPEC, sizeof(ifaddrmsg));
  dump(RTM_GETROUTE, AF_UNSPEC, sizeof(rtmsg));
  dump(RTM_GETNEIGH, AF_UNSPEC, sizeof(ndmsg));
  dump(RTM_GETNEIGH, AF_BRIDGE, sizeof(ndmsg));
  dump(RTM_GETRULE, AF_UNSPEC, sizeof(fib_rule_hdr));
  dump(RTM_GETNEXTHOP, AF_UNSPEC, sizeof(nhmsg));
  dump(RTM_GETNETCONF, AF_UNSPEC, sizeof(netconfmsg));
  wire::MessageBuilder b;
  SysctlRequest sc;
  sc.name = "net.ipv4.conf.all.forwarding";
  EXPECT_TRUE(encode_sysctl_request(b, 3, sc, NLM_F_ACK));  // the ACK ends the reply
  c.send_dg(b.take());
  Replies r = c.until_end();
  for (auto& d : r.dgs) all.insert(all.end(), d.begin(), d.end());
  return all;
}

class PermissionTest : public DaemonTest {
 protected:
  // Starts ifcored with a dummy "keep0" and returns its ifindex.
  int start_with_device() {
    start();
    Conn root(try_connect());
    root.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("keep0", "dummy")));
    EXPECT_EQ(root.until_end().last_error(), 0);
    wire::GetLinkRequest g;
    g.name = "keep0";
    root.send_dg(getlink(2, g));
    Datagram d = root.recv_dg();
    auto m = one(d);
    ifinfomsg i{};
    if (m.payload().size() >= sizeof i) std::memcpy(&i, m.payload().data(), sizeof i);
    return i.ifi_index;
  }
  // Sends every changing request through `c` and reports (as the child's exit status) the
  // first that was not refused with EPERM, counting from 1; 0 when all were.
  template <class Client>
  static int expect_all_refused(Client& c, int keep) {
    int k = 0;
    for (auto& [what, bytes] : changing_requests(keep)) {
      ++k;
      c.send_dg(bytes);
      Replies r = c.until_end();
      if (r.last_error() != EPERM) {
        std::fprintf(stderr, "%s: errno %d, not EPERM\n", what, r.last_error());
        return k;
      }
      // Linux: EPERM comes with no extack message (no NLM_F_ACK_TLVS) and, without
      // NETLINK_CAP_ACK, the whole request echoed.
      const auto& h = r.msgs.back().hdr;
      if (h.nlmsg_flags != 0 || h.nlmsg_len != NLMSG_HDRLEN + sizeof(int) + bytes.size()) {
        std::fprintf(stderr, "%s: flags %#x, length %u\n", what, h.nlmsg_flags, h.nlmsg_len);
        return k;
      }
      if (!r.last_error_reply().message.empty()) {
        std::fprintf(stderr, "%s: extack \"%s\"\n", what, r.last_error_reply().message.c_str());
        return k;
      }
    }
    return 0;
  }
};

TEST_F(PermissionTest, EveryChangingRequestOverTheSocketIsEpermAndChangesNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another uid";
  int keep = start_with_device();
  ASSERT_GT(keep, 0);
  Conn root(try_connect());
  Bytes before = state_of(root);
  int status = as_nobody([&] {
    int fd = try_connect();
    if (fd < 0) return 101;
    Conn c(fd);
    ControlRequest ext;
    ext.options = {{NETLINK_EXT_ACK, 1}};
    if (c.control(ext).may_write) return 102;
    if (int k = expect_all_refused(c, keep)) return k;
    // Reading is open to everyone.
    if (state_of(c).empty()) return 103;
    return 0;
  });
  EXPECT_EQ(status, 0) << "request " << status << " of the list was not refused (see stderr)";
  EXPECT_EQ(state_of(root), before);
}

TEST_F(PermissionTest, EveryChangingRequestOverRingsIsEpermAndChangesNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another uid";
  int keep = start_with_device();
  ASSERT_GT(keep, 0);
  Conn root(try_connect());
  Bytes before = state_of(root);
  int status = as_nobody([&] {
    int fd = try_connect();
    if (fd < 0) return 101;
    RingConn c(fd);
    ControlRequest ext;
    ext.options = {{NETLINK_EXT_ACK, 1}};
    if (c.switch_rings(ext) != 0) return 102;
    if (int k = expect_all_refused(c, keep)) return k;
    if (state_of(c).empty()) return 103;
    return 0;
  });
  EXPECT_EQ(status, 0) << "request " << status << " of the list was not refused (see stderr)";
  EXPECT_EQ(state_of(root), before);
}

// Linux: the owner of a user namespace administers the network namespaces it makes, and
// nothing else (rtnl_link_get_net_capable and the peer's and link's namespace checks).
TEST_F(PermissionTest, AnOwnerMayChangeItsNamespaceAndNoOther) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another uid";
  start();
  Conn root(try_connect());
  Bytes before = state_of(root);
  int status = as_nobody([&] {
    int fd = try_connect();
    if (fd < 0) return 101;
    Conn c(fd);
    ControlRequest mine;
    mine.ns = "mine";
    mine.create = true;
    if (!c.control(mine).may_write) return 102;
    c.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("m0", "dummy")));
    if (c.until_end().last_error() != 0) return 103;  // its own: allowed
    LinkRequest there = named("m1", "dummy");
    there.net_ns_name = "default";
    c.send_dg(link_msg(RTM_NEWLINK, kCreate, 2, there));
    if (c.until_end().last_error() != EPERM) return 104;
    c.send_dg(link_msg(RTM_NEWLINK, kCreate, 3, [] {
      LinkRequest v = veth_pair("m2", "m3");
      auto peer = std::make_shared<LinkRequest>(*v.info_data[0].link);
      peer->net_ns_name = "default";
      v.info_data[0].link = peer;
      return v;
    }()));
    if (c.until_end().last_error() != EPERM) return 105;
    LinkRequest move = named("m0");
    move.net_ns_name = "default";
    c.send_dg(link_msg(RTM_NEWLINK, NLM_F_ACK, 4, move));
    if (c.until_end().last_error() != EPERM) return 106;
    c.send_dg(link_msg(RTM_SETLINK, NLM_F_ACK, 5, move));
    if (c.until_end().last_error() != EPERM) return 107;
    wire::MessageBuilder b;
    wire::NsidMessage ns;
    ns.name = "default";
    if (!wire::encode_nsid(b, {RTM_DELNSID, NLM_F_REQUEST | NLM_F_ACK, 6, 0}, ns)) return 108;
    c.send_dg(b.take());
    if (c.until_end().last_error() != EPERM) return 109;
    ns.name = "another";
    if (!wire::encode_nsid(b, {RTM_NEWNSID, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE, 7, 0}, ns))
      return 110;
    c.send_dg(b.take());
    if (c.until_end().last_error() != EPERM) return 111;
    return 0;
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(state_of(root), before);
  ControlRequest look;
  look.ns = "another";
  wire::MessageBuilder b;
  ASSERT_TRUE(encode_control_request(b, 9, look));
  root.send_dg(b.take());
  EXPECT_EQ(root.until_end().last_error(), ENOENT);
}

}  // namespace
}  // namespace ifcore::rtnl::test

#endif  // IFCORED_PATH
