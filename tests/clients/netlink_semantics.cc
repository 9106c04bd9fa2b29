// tests/clients/netlink_semantics.cc — what a NETLINK_ROUTE socket does, asserted the same
// way against the kernel (run in a fresh network namespace) and through the preload shim
// against ifcored (run under ifcore-run): addresses, sizing with MSG_PEEK|MSG_TRUNC,
// truncation, socket options, memberships and notifications, non-blocking reads, poll,
// epoll, dup, port ids. Plain system calls only, as a C program would make them.
#include <fcntl.h>
#include <net/if.h>  // before any <linux/if*.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<std::uint8_t>;

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

int open_route(int flags = 0) {
  return socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | flags, NETLINK_ROUTE);
}

void put_attr(Bytes& b, std::uint16_t type, const void* data, std::size_t len) {
  nlattr a{static_cast<std::uint16_t>(NLA_HDRLEN + len), type};
  std::size_t at = b.size();
  b.resize(at + NLA_ALIGN(a.nla_len));
  std::memcpy(b.data() + at, &a, sizeof(a));
  if (len) std::memcpy(b.data() + at + NLA_HDRLEN, data, len);
}

// An RTM_*LINK request: header, ifinfomsg, then attributes added by the caller.
Bytes link_request(std::uint16_t type, std::uint16_t flags, std::uint32_t seq) {
  Bytes b(NLMSG_SPACE(sizeof(ifinfomsg)));
  nlmsghdr h{};
  h.nlmsg_type = type;
  h.nlmsg_flags = static_cast<std::uint16_t>(NLM_F_REQUEST | flags);
  h.nlmsg_seq = seq;
  std::memcpy(b.data(), &h, sizeof(h));
  return b;
}

void finish(Bytes& b) {
  std::uint32_t len = static_cast<std::uint32_t>(b.size());
  std::memcpy(b.data(), &len, sizeof(len));
}

Bytes new_bridge(const std::string& name, std::uint32_t seq) {
  Bytes b = link_request(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, seq);
  put_attr(b, IFLA_IFNAME, name.c_str(), name.size() + 1);
  Bytes info;
  put_attr(info, IFLA_INFO_KIND, "bridge", 7);
  put_attr(b, IFLA_LINKINFO, info.data(), info.size());
  finish(b);
  return b;
}

Bytes get_link(const std::string& name, std::uint32_t seq) {
  Bytes b = link_request(RTM_GETLINK, 0, seq);
  put_attr(b, IFLA_IFNAME, name.c_str(), name.size() + 1);
  finish(b);
  return b;
}

Bytes dump_links(std::uint32_t seq) {
  Bytes b = link_request(RTM_GETLINK, NLM_F_DUMP, seq);
  finish(b);
  return b;
}

void send_all(int fd, const Bytes& b) {
  ASSERT_EQ(send(fd, b.data(), b.size(), 0), ssize_t(b.size()));
}

Bytes recv_one(int fd) {
  Bytes b(65536);
  ssize_t n = recv(fd, b.data(), b.size(), 0);
  b.resize(n > 0 ? std::size_t(n) : 0);
  return b;
}

nlmsghdr header(const Bytes& b) {
  nlmsghdr h{};
  if (b.size() >= sizeof(h)) std::memcpy(&h, b.data(), sizeof(h));
  return h;
}

int error_of(const Bytes& b) {
  if (header(b).nlmsg_type != NLMSG_ERROR || b.size() < NLMSG_HDRLEN + sizeof(int)) return 1;
  int e;
  std::memcpy(&e, b.data() + NLMSG_HDRLEN, sizeof(e));
  return -e;
}

TEST(NetlinkSocket, BoundSocketHasATwelveByteNetlinkAddress) {
  Fd s(open_route());
  ASSERT_GE(s.fd, 0) << std::strerror(errno);
  sockaddr_nl a{};
  a.nl_family = AF_NETLINK;
  ASSERT_EQ(bind(s.fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  sockaddr_nl got{};
  socklen_t len = sizeof(got);
  ASSERT_EQ(getsockname(s.fd, reinterpret_cast<sockaddr*>(&got), &len), 0);
  EXPECT_EQ(len, sizeof(sockaddr_nl));
  EXPECT_EQ(got.nl_family, AF_NETLINK);
  EXPECT_NE(got.nl_pid, 0u);
  int v = 0;
  socklen_t vl = sizeof(v);
  ASSERT_EQ(getsockopt(s.fd, SOL_SOCKET, SO_PROTOCOL, &v, &vl), 0);
  EXPECT_EQ(v, NETLINK_ROUTE);
  ASSERT_EQ(getsockopt(s.fd, SOL_SOCKET, SO_DOMAIN, &v, &vl), 0);
  EXPECT_EQ(v, AF_NETLINK);
  ASSERT_EQ(getsockopt(s.fd, SOL_SOCKET, SO_TYPE, &v, &vl), 0);
  EXPECT_EQ(v, SOCK_RAW);
}

TEST(NetlinkSocket, ATakenPortIdIsRefused) {
  Fd a(open_route()), b(open_route());
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  ASSERT_EQ(bind(a.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(a.fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  EXPECT_EQ(bind(b.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), -1);
  EXPECT_EQ(errno, EADDRINUSE);
  addr.nl_pid = 0x7ffff123;  // free: taken as asked
  ASSERT_EQ(bind(b.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  sockaddr_nl got{};
  len = sizeof(got);
  ASSERT_EQ(getsockname(b.fd, reinterpret_cast<sockaddr*>(&got), &len), 0);
  EXPECT_EQ(got.nl_pid, 0x7ffff123u);
  // Replies carry it.
  send_all(b.fd, get_link("lo", 5));
  Bytes r = recv_one(b.fd);
  EXPECT_EQ(header(r).nlmsg_type, RTM_NEWLINK);
  EXPECT_EQ(header(r).nlmsg_pid, 0x7ffff123u);
  EXPECT_EQ(header(r).nlmsg_seq, 5u);
}

// Linux 6.18: a link dump's NLMSG_DONE comes in a datagram of its own
// (RTNL_FLAG_DUMP_SPLIT_NLM_DONE), as this test reads it.
TEST(NetlinkSocket, PeekWithTruncSizesEachDatagramOfADump) {
  Fd s(open_route());
  send_all(s.fd, dump_links(7));
  for (;;) {
    ssize_t size = recv(s.fd, nullptr, 0, MSG_PEEK | MSG_TRUNC);
    ASSERT_GT(size, 0) << std::strerror(errno);
    Bytes b(static_cast<std::size_t>(size));
    sockaddr_nl from{};
    iovec iov{b.data(), b.size()};
    msghdr m{};
    m.msg_name = &from;
    m.msg_namelen = sizeof(from);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    ASSERT_EQ(recvmsg(s.fd, &m, 0), size);
    EXPECT_EQ(m.msg_namelen, sizeof(sockaddr_nl));
    EXPECT_EQ(from.nl_family, AF_NETLINK);
    EXPECT_EQ(from.nl_pid, 0u);  // the kernel
    EXPECT_EQ(m.msg_flags & MSG_TRUNC, 0);
    nlmsghdr h = header(b);
    EXPECT_EQ(h.nlmsg_seq, 7u);
    if (h.nlmsg_type == NLMSG_DONE) {
      EXPECT_EQ(h.nlmsg_len, NLMSG_LENGTH(sizeof(int)));
      EXPECT_TRUE(h.nlmsg_flags & NLM_F_MULTI);
      break;
    }
    EXPECT_EQ(h.nlmsg_type, RTM_NEWLINK);
  }
}

TEST(NetlinkSocket, ASmallBufferTruncatesAndLosesTheRest) {
  Fd s(open_route());
  send_all(s.fd, get_link("lo", 1));
  send_all(s.fd, get_link("lo", 2));
  std::uint8_t small[16];
  iovec iov{small, sizeof(small)};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  ASSERT_EQ(recvmsg(s.fd, &m, 0), 16);
  EXPECT_TRUE(m.msg_flags & MSG_TRUNC);
  Bytes next = recv_one(s.fd);
  EXPECT_EQ(header(next).nlmsg_seq, 2u);  // the rest of the first is gone
  // With MSG_TRUNC the call returns the datagram's real length.
  send_all(s.fd, get_link("lo", 3));
  ssize_t n = recv(s.fd, small, sizeof(small), MSG_TRUNC);
  EXPECT_EQ(n, ssize_t(header(Bytes(small, small + 16)).nlmsg_len));
  EXPECT_GT(n, 16);
}

TEST(NetlinkSocket, CapAckAndExtAckShapeTheErrors) {
  Fd s(open_route());
  int one = 1;
  Bytes req = get_link("nosuchdev0", 9);
  send_all(s.fd, req);
  Bytes full = recv_one(s.fd);
  EXPECT_EQ(error_of(full), ENODEV);
  EXPECT_EQ(full.size(), NLMSG_HDRLEN + sizeof(int) + req.size());  // the whole request echoed
  ASSERT_EQ(setsockopt(s.fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one)), 0);
  int v = 0;
  socklen_t vl = sizeof(v);
  ASSERT_EQ(getsockopt(s.fd, SOL_NETLINK, NETLINK_CAP_ACK, &v, &vl), 0);
  EXPECT_EQ(v, 1);
  send_all(s.fd, req);
  Bytes capped = recv_one(s.fd);
  EXPECT_EQ(error_of(capped), ENODEV);
  EXPECT_EQ(capped.size(), NLMSG_HDRLEN + sizeof(nlmsgerr));  // header only
  EXPECT_TRUE(header(capped).nlmsg_flags & NLM_F_CAPPED);
  // EXT_ACK: an error the kernel explains carries its message.
  ASSERT_EQ(setsockopt(s.fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)), 0);
  Bytes bad = link_request(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, 10);
  put_attr(bad, IFLA_IFNAME, "x0", 3);
  Bytes info;
  put_attr(info, IFLA_INFO_KIND, "nosuchkind", 11);
  put_attr(bad, IFLA_LINKINFO, info.data(), info.size());
  finish(bad);
  send_all(s.fd, bad);
  Bytes err = recv_one(s.fd);
  EXPECT_EQ(error_of(err), EOPNOTSUPP);
  EXPECT_TRUE(header(err).nlmsg_flags & NLM_F_ACK_TLVS);
  std::string text(err.begin(), err.end());
  EXPECT_NE(text.find("Unknown device type"), std::string::npos);
}

TEST(NetlinkSocket, NonBlockingReadsAndPoll) {
  Fd s(open_route(SOCK_NONBLOCK));
  std::uint8_t b[64];
  EXPECT_EQ(recv(s.fd, b, sizeof(b), 0), -1);
  EXPECT_EQ(errno, EAGAIN);
  pollfd p{s.fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0);
  send_all(s.fd, get_link("lo", 4));
  EXPECT_EQ(poll(&p, 1, 2000), 1);
  EXPECT_TRUE(p.revents & POLLIN);
  EXPECT_GT(recv(s.fd, b, sizeof(b), 0), 0);
  EXPECT_EQ(recv(s.fd, b, sizeof(b), MSG_DONTWAIT), -1);
  EXPECT_EQ(errno, EAGAIN);
}

TEST(NetlinkSocket, APortIdComesWithBindOrTheFirstSend) {
  Fd s(open_route());
  sockaddr_nl a{};
  socklen_t la = sizeof(a);
  ASSERT_EQ(getsockname(s.fd, reinterpret_cast<sockaddr*>(&a), &la), 0);
  EXPECT_EQ(a.nl_pid, 0u);  // Linux: netlink_autobind runs at the first send
  send_all(s.fd, get_link("lo", 1));
  Bytes r = recv_one(s.fd);
  ASSERT_EQ(getsockname(s.fd, reinterpret_cast<sockaddr*>(&a), &la), 0);
  EXPECT_NE(a.nl_pid, 0u);
  EXPECT_EQ(header(r).nlmsg_pid, a.nl_pid);
}

TEST(NetlinkSocket, ADuplicateIsTheSameSocket) {
  Fd s(open_route());
  sockaddr_nl self{};
  self.nl_family = AF_NETLINK;
  ASSERT_EQ(bind(s.fd, reinterpret_cast<sockaddr*>(&self), sizeof(self)), 0);
  Fd d(dup(s.fd));
  Fd f(fcntl(s.fd, F_DUPFD_CLOEXEC, 100));
  sockaddr_nl a{}, b{};
  socklen_t la = sizeof(a), lb = sizeof(b);
  ASSERT_EQ(getsockname(s.fd, reinterpret_cast<sockaddr*>(&a), &la), 0);
  ASSERT_EQ(getsockname(f.fd, reinterpret_cast<sockaddr*>(&b), &lb), 0);
  EXPECT_EQ(a.nl_pid, b.nl_pid);
  send_all(d.fd, get_link("lo", 6));
  Bytes r = recv_one(f.fd);
  EXPECT_EQ(header(r).nlmsg_seq, 6u);
  EXPECT_EQ(header(r).nlmsg_pid, a.nl_pid);
}

TEST(NetlinkSocket, MembersHearChangesUntilTheyLeave) {
  Fd mon(open_route()), w(open_route());
  // Bound first: Linux's do_one_broadcast skips a socket whose port is the sender's (0:
  // the kernel), which an unbound socket's is.
  sockaddr_nl self{};
  self.nl_family = AF_NETLINK;
  ASSERT_EQ(bind(mon.fd, reinterpret_cast<sockaddr*>(&self), sizeof(self)), 0);
  int group = RTNLGRP_LINK;
  ASSERT_EQ(setsockopt(mon.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)), 0);
  std::uint32_t groups[4] = {};
  socklen_t len = sizeof(groups);
  ASSERT_EQ(getsockopt(mon.fd, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, groups, &len), 0);
  EXPECT_TRUE(groups[0] & (1u << (RTNLGRP_LINK - 1)));
  send_all(w.fd, new_bridge("sem0", 1));
  EXPECT_EQ(error_of(recv_one(w.fd)), 0);
  Bytes note = recv_one(mon.fd);
  EXPECT_EQ(header(note).nlmsg_type, RTM_NEWLINK);
  EXPECT_EQ(header(note).nlmsg_seq, 0u);
  EXPECT_EQ(header(note).nlmsg_pid, 0u);
  std::string text(note.begin(), note.end());
  EXPECT_NE(text.find("sem0"), std::string::npos);
  ASSERT_EQ(setsockopt(mon.fd, SOL_NETLINK, NETLINK_DROP_MEMBERSHIP, &group, sizeof(group)), 0);
  // Whatever was queued before leaving stays readable; nothing after.
  std::uint8_t b[8192];
  while (recv(mon.fd, b, sizeof(b), MSG_DONTWAIT) > 0) {
  }
  send_all(w.fd, new_bridge("sem1", 2));
  EXPECT_EQ(error_of(recv_one(w.fd)), 0);
  pollfd p{mon.fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 200), 0);
  // An unknown group number is refused as Linux refuses it.
  int bad = 0;
  EXPECT_EQ(setsockopt(mon.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &bad, sizeof(bad)), -1);
  EXPECT_EQ(errno, EINVAL);
}

// A notification queued before the socket changes its options stays readable, and poll
// and epoll say so (through the shim the option change is an exchange with ifcored that
// reads past it).
TEST(NetlinkSocket, ANotificationQueuedBeforeAnOptionChangeIsStillReady) {
  Fd mon(open_route()), w(open_route());
  sockaddr_nl self{};
  self.nl_family = AF_NETLINK;
  ASSERT_EQ(bind(mon.fd, reinterpret_cast<sockaddr*>(&self), sizeof(self)), 0);
  int group = RTNLGRP_LINK;
  ASSERT_EQ(setsockopt(mon.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)), 0);
  Fd ep(epoll_create1(EPOLL_CLOEXEC));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = 77;
  ASSERT_EQ(epoll_ctl(ep.fd, EPOLL_CTL_ADD, mon.fd, &ev), 0);
  send_all(w.fd, new_bridge("sem2", 1));
  EXPECT_EQ(error_of(recv_one(w.fd)), 0);
  int other = RTNLGRP_IPV4_IFADDR;
  ASSERT_EQ(setsockopt(mon.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &other, sizeof(other)), 0);
  epoll_event got[4] = {};
  ASSERT_EQ(epoll_wait(ep.fd, got, 4, 2000), 1);
  const std::uint64_t data = got[0].data.u64;  // epoll_event is packed: no reference to it
  EXPECT_EQ(data, 77u);
  EXPECT_TRUE(got[0].events & EPOLLIN);
  pollfd p{mon.fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 2000), 1);
  Bytes note = recv_one(mon.fd);
  EXPECT_EQ(header(note).nlmsg_type, RTM_NEWLINK);
  // Read: nothing is left for either to report.
  std::uint8_t b[8192];
  while (recv(mon.fd, b, sizeof(b), MSG_DONTWAIT) > 0) {
  }
  EXPECT_EQ(epoll_wait(ep.fd, got, 4, 100), 0);
  EXPECT_EQ(poll(&p, 1, 100), 0);
  // One-shot: reported once, then not until re-armed.
  ev.events = EPOLLIN | EPOLLONESHOT;
  ASSERT_EQ(epoll_ctl(ep.fd, EPOLL_CTL_MOD, mon.fd, &ev), 0);
  send_all(w.fd, new_bridge("sem3", 2));
  EXPECT_EQ(error_of(recv_one(w.fd)), 0);
  ASSERT_EQ(setsockopt(mon.fd, SOL_NETLINK, NETLINK_DROP_MEMBERSHIP, &other, sizeof(other)), 0);
  EXPECT_EQ(epoll_wait(ep.fd, got, 4, 2000), 1);
  EXPECT_EQ(epoll_wait(ep.fd, got, 4, 100), 0);
  ASSERT_EQ(epoll_ctl(ep.fd, EPOLL_CTL_MOD, mon.fd, &ev), 0);
  EXPECT_EQ(epoll_wait(ep.fd, got, 4, 2000), 1);
  EXPECT_EQ(header(recv_one(mon.fd)).nlmsg_type, RTM_NEWLINK);
}

// One notification read with recvmsg: its bytes and its NETLINK_LISTEN_ALL_NSID control
// data (-1: none, -2: truncated or malformed).
struct Heard {
  Bytes msg;
  int nsid = -1;
};

Heard recv_with_nsid(int fd) {
  Heard h;
  h.msg.resize(65536);
  iovec iov{h.msg.data(), h.msg.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int)) * 2];
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof(control);
  ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT);
  h.msg.resize(n > 0 ? std::size_t(n) : 0);
  if (m.msg_flags & MSG_CTRUNC) h.nsid = -2;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_NETLINK || c->cmsg_type != NETLINK_LISTEN_ALL_NSID ||
        c->cmsg_len != CMSG_LEN(sizeof(int))) {
      h.nsid = -2;
      continue;
    }
    std::memcpy(&h.nsid, CMSG_DATA(c), sizeof(int));
  }
  return h;
}

bool names(const Bytes& msg, const std::string& name) {
  return header(msg).nlmsg_type == RTM_NEWLINK &&
         std::string(msg.begin(), msg.end()).find(name) != std::string::npos;
}

// NETLINK_LISTEN_ALL_NSID (Linux: do_one_broadcast, netlink_cmsg_listen_all_nsid): a member
// hears another namespace once its own gives that one an id, each message with the id as
// SOL_NETLINK control data; its own namespace's messages come without.
TEST(NetlinkSocket, ListenAllNsidHearsOtherNamespacesWithTheirIds) {
  Fd mon(open_route()), w(open_route());
  sockaddr_nl self{};
  self.nl_family = AF_NETLINK;
  ASSERT_EQ(bind(mon.fd, reinterpret_cast<sockaddr*>(&self), sizeof(self)), 0);
  int group = RTNLGRP_LINK, one = 1;
  ASSERT_EQ(setsockopt(mon.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)), 0);
  ASSERT_EQ(setsockopt(mon.fd, SOL_NETLINK, NETLINK_LISTEN_ALL_NSID, &one, sizeof(one)), 0);
  int v = 0;
  socklen_t vl = sizeof(v);
  ASSERT_EQ(getsockopt(mon.fd, SOL_NETLINK, NETLINK_LISTEN_ALL_NSID, &v, &vl), 0);
  EXPECT_EQ(v, 1);
  // A child in a namespace of its own (through the shim, ifcored makes it when the
  // child's first socket there connects), which makes a bridge once it has an id here.
  int ready[2], go[2];
  ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(go, O_CLOEXEC), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (unshare(CLONE_NEWNET) != 0) _exit(2);
    int s = open_route();
    if (s < 0) _exit(3);
    Bytes q = get_link("lo", 1);
    if (send(s, q.data(), q.size(), 0) != ssize_t(q.size()) || recv_one(s).empty()) _exit(4);
    char c = 'r';
    if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) _exit(5);
    Bytes b = new_bridge("nsid0", 2);
    if (send(s, b.data(), b.size(), 0) != ssize_t(b.size())) _exit(6);
    _exit(error_of(recv_one(s)) == 0 ? 0 : 7);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  // `ip netns set`: RTM_NEWNSID naming the child's namespace by a descriptor.
  std::string path = "/proc/" + std::to_string(pid) + "/ns/net";
  Fd nsfd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_GE(nsfd.fd, 0);
  Bytes req(NLMSG_SPACE(4));
  nlmsghdr h{};
  h.nlmsg_type = RTM_NEWNSID;
  h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  h.nlmsg_seq = 3;
  std::memcpy(req.data(), &h, sizeof(h));
  std::uint32_t fdv = static_cast<std::uint32_t>(nsfd.fd);
  std::int32_t id = 77;
  put_attr(req, NETNSA_FD, &fdv, sizeof(fdv));
  put_attr(req, NETNSA_NSID, &id, sizeof(id));
  finish(req);
  send_all(w.fd, req);
  EXPECT_EQ(error_of(recv_one(w.fd)), 0);
  c = 'g';
  ASSERT_EQ(write(go[1], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  for (int fd : {ready[0], ready[1], go[0], go[1]}) close(fd);
  bool found = false;
  pollfd p{mon.fd, POLLIN, 0};
  while (!found && poll(&p, 1, 2000) == 1) {
    Heard got = recv_with_nsid(mon.fd);
    EXPECT_EQ(got.nsid, 77) << "every message came from the child's namespace";
    found = names(got.msg, "nsid0");
  }
  EXPECT_TRUE(found);
  // The socket's own namespace: no control data.
  send_all(w.fd, new_bridge("nsid1", 4));
  EXPECT_EQ(error_of(recv_one(w.fd)), 0);
  found = false;
  while (!found && poll(&p, 1, 2000) == 1) {
    Heard got = recv_with_nsid(mon.fd);
    if (!names(got.msg, "nsid1")) continue;  // what the child's namespace said as it went
    found = true;
    EXPECT_EQ(got.nsid, -1);
  }
  EXPECT_TRUE(found);
}

TEST(NetlinkSocket, OtherNetlinkFamiliesAreLeftAlone) {
  Fd g(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC));
  ASSERT_GE(g.fd, 0);
  int v = 0;
  socklen_t vl = sizeof(v);
  ASSERT_EQ(getsockopt(g.fd, SOL_SOCKET, SO_PROTOCOL, &v, &vl), 0);
  EXPECT_EQ(v, NETLINK_GENERIC);
}

}  // namespace
