// tests/rtnl/daemon_test.cc — the real ifcored binary on a temporary socket: requests and
// replies over SOCK_SEQPACKET, the control message, notifications and ENOBUFS, peers
// without the right to write, and a clean SIGTERM.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>

#include "rtnl/daemon_fixture.h"

#ifdef IFCORED_PATH

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

TEST_F(DaemonTest, CreateGetDumpOverTheSocket) {
  start();
  Conn c(try_connect());
  ControlState st = c.control({});
  EXPECT_EQ(st.ns, "default");
  EXPECT_TRUE(st.may_write);
  EXPECT_NE(st.port_id, 0u);
  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 3, named("d0", "dummy")));
  Replies r = c.until_end();
  EXPECT_EQ(r.last_error(), 0);
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_seq, 3u);
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_pid, st.port_id);
  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 4, named("d0", "dummy")));
  EXPECT_EQ(c.until_end().last_error(), EEXIST);
  wire::GetLinkRequest g;
  g.name = "d0";
  c.send_dg(getlink(5, g));
  Datagram d = c.recv_dg();
  auto lm = wire::decode_link_message(one(d));
  ASSERT_TRUE(lm);
  EXPECT_EQ(lm->name, "d0");
  g = {};
  g.dump = true;
  c.send_dg(getlink(6, g));
  r = c.until_end();
  ASSERT_EQ(r.msgs.size(), 3u);  // lo, d0, DONE
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE);
}

// The facts ifcored relies on to tell an empty datagram from the end of a connection
// (daemon_io.cc, peer_closed): on AF_UNIX SOCK_SEQPACKET both read as 0 bytes, but only the
// end shows POLLRDHUP, and FIONREAD counts what a closed peer left queued.
TEST(SeqpacketSemantics, EmptyDatagramAndEndOfFileReadAlikeAndPollTellsThemApart) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
  char buf[16];
  ASSERT_EQ(send(sv[0], buf, 0, 0), 0);
  EXPECT_EQ(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), 0);  // the empty datagram
  pollfd p{sv[1], POLLIN | POLLRDHUP, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0);  // nothing more, and no hang-up
  EXPECT_EQ(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), -1);
  EXPECT_EQ(errno, EAGAIN);

  ASSERT_EQ(send(sv[0], "abc", 3, 0), 3);
  ASSERT_EQ(shutdown(sv[0], SHUT_WR), 0);
  p = {sv[1], POLLIN | POLLRDHUP, 0};
  ASSERT_EQ(poll(&p, 1, 0), 1);
  EXPECT_TRUE(p.revents & POLLRDHUP);
  int queued = 0;
  ASSERT_EQ(ioctl(sv[1], FIONREAD, &queued), 0);
  EXPECT_EQ(queued, 3);  // what the peer sent before it shut down is still there
  EXPECT_EQ(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), 3);
  ASSERT_EQ(ioctl(sv[1], FIONREAD, &queued), 0);
  EXPECT_EQ(queued, 0);
  EXPECT_EQ(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), 0);  // end of file, again and again
  EXPECT_EQ(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), 0);

  close(sv[0]);
  p = {sv[1], POLLIN | POLLRDHUP, 0};
  ASSERT_EQ(poll(&p, 1, 0), 1);
  EXPECT_TRUE(p.revents & POLLHUP);
  close(sv[1]);
}

// Linux ignores an empty netlink datagram and keeps the socket; so does ifcored.
TEST_F(DaemonTest, EmptyDatagramIsIgnoredAndTheConnectionStays) {
  start();
  Conn c(try_connect());
  c.control({});
  c.send_dg({});
  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 3, named("d0", "dummy")));
  Replies r = c.until_end();
  EXPECT_EQ(r.last_error(), 0);
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_seq, 3u);
  // A burst: empty datagrams between requests, read in one go.
  for (std::uint32_t seq = 4; seq < 8; ++seq) {
    c.send_dg({});
    c.send_dg(link_msg(RTM_NEWLINK, kCreate, seq, named("e" + std::to_string(seq), "dummy")));
  }
  c.send_dg({});
  for (std::uint32_t seq = 4; seq < 8; ++seq) {
    r = c.until_end();
    EXPECT_EQ(r.last_error(), 0);
    EXPECT_EQ(r.msgs.back().hdr.nlmsg_seq, seq);
  }
  wire::GetLinkRequest g;
  g.name = "e7";
  c.send_dg(getlink(9, g));
  EXPECT_EQ(wire::decode_link_message(one(c.recv_dg()))->name, "e7");
}

// A control message that does not parse, or shares its datagram, is answered with an
// error (the client waits for its reply), and the connection serves on.
TEST_F(DaemonTest, MalformedControlMessageIsAnsweredWithAnError) {
  start();
  Conn c(try_connect());
  c.control({});
  // A header whose length runs past the datagram.
  Bytes cut = nlmsg(IFCORE_NLMSG_CONTROL, NLM_F_REQUEST, 21, 0, attr(1, le32(1)));
  cut.resize(cut.size() - 4);
  c.send_dg(cut);
  auto e = wire::decode_error(one(c.recv_dg()));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error, EINVAL);
  EXPECT_EQ(e->request.nlmsg_seq, 21u);
  EXPECT_EQ(e->request.nlmsg_type, IFCORE_NLMSG_CONTROL);
  // Two control messages in one datagram.
  wire::MessageBuilder b;
  ASSERT_TRUE(encode_control_request(b, 22, ControlRequest{}));
  Bytes two = b.take();
  Bytes second = two;
  two.insert(two.end(), second.begin(), second.end());
  c.send_dg(two);
  e = wire::decode_error(one(c.recv_dg()));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error, EINVAL);
  EXPECT_EQ(e->request.nlmsg_seq, 22u);
  // Still served.
  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 23, named("d0", "dummy")));
  Replies r = c.until_end();
  EXPECT_EQ(r.last_error(), 0);
  EXPECT_EQ(r.msgs.back().hdr.nlmsg_seq, 23u);
}

// A client that sends its request and shuts its side at once still gets the answer; then
// the daemon sees the end and closes.
TEST_F(DaemonTest, RequestsSentBeforeTheEndAreServedAndTheEndCloses) {
  start();
  Conn c(try_connect());
  c.control({});
  c.send_dg({});
  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 3, named("d0", "dummy")));
  ASSERT_EQ(shutdown(c.fd, SHUT_WR), 0);
  Replies r = c.until_end();
  EXPECT_EQ(r.last_error(), 0);
  EXPECT_TRUE(c.recv_dg().empty());  // end of file: the daemon closed its side
  Conn other(try_connect());
  other.control({});
  wire::GetLinkRequest g;
  g.name = "d0";
  other.send_dg(getlink(4, g));
  EXPECT_EQ(wire::decode_link_message(one(other.recv_dg()))->name, "d0");
}

// --record writes what a client sends and receives, one file a datagram.
TEST_F(DaemonTest, RecordWritesEveryDatagramToItsFolder) {
  std::string rec = dir_ + "/rec";
  ASSERT_EQ(mkdir(rec.c_str(), 0700), 0);
  start({"--record", rec});
  {
    Conn c(try_connect());
    c.control({});
    Bytes req = link_msg(RTM_NEWLINK, kCreate, 3, named("d0", "dummy"));
    c.send_dg(req);
    EXPECT_EQ(c.until_end().last_error(), 0);
    // SIGTERM, not SIGKILL: a reply is recorded right after it is sent, so the client may
    // read it first; the loop handles the signal only after that.
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    int in = 0, out = 0;
    bool found = false;
    for (const auto& e : std::filesystem::directory_iterator(rec)) {
      std::string name = e.path().filename();
      in += name.ends_with("-in.bin");
      out += name.ends_with("-out.bin");
      std::ifstream f(e.path(), std::ios::binary);
      Bytes got((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      found |= got == req && name.ends_with("-in.bin");
      std::filesystem::remove(e.path());
    }
    EXPECT_EQ(in, 2);  // the control request and the create
    EXPECT_EQ(out, 2);
    EXPECT_TRUE(found);
  }
  rmdir(rec.c_str());
}

TEST_F(DaemonTest, ControlMessageSelectsNamespaceAndOptions) {
  start({"--namespace", "blue"});
  Conn c(try_connect());
  ControlRequest req;
  req.ns = "blue";
  req.options = {{NETLINK_EXT_ACK, 1}};
  EXPECT_EQ(c.control(req).ns, "blue");
  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("b0", "dummy")));
  EXPECT_EQ(c.until_end().last_error(), 0);
  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 2, named("x0", "nosuchkind")));
  Replies r = c.until_end();
  EXPECT_EQ(r.last_error(), EOPNOTSUPP);
  EXPECT_EQ(r.last_error_reply().message, "Unknown device type");
  // b0 lives in blue only.
  Conn d(try_connect());
  wire::GetLinkRequest g;
  g.name = "b0";
  d.send_dg(getlink(1, g));
  EXPECT_EQ(d.until_end().last_error(), ENODEV);
  // An unknown namespace is refused.
  wire::MessageBuilder b;
  ControlRequest bad;
  bad.ns = "nosuch";
  ASSERT_TRUE(encode_control_request(b, 1, bad));
  d.send_dg(b.take());
  EXPECT_EQ(d.until_end().last_error(), ENOENT);
}

TEST_F(DaemonTest, NotificationsAndEnobufsForAClientThatDoesNotRead) {
  start({"--max-queued", "4"});
  Conn mon(join_link_group(try_connect()));
  Conn lazy(join_link_group(try_connect()));
  int small = 4096;
  setsockopt(lazy.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  Conn w(try_connect());
  w.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("n0", "dummy")));
  EXPECT_EQ(w.until_end().last_error(), 0);
  Datagram d = mon.recv_dg();
  auto lm = wire::decode_link_message(one(d));
  ASSERT_TRUE(lm);
  EXPECT_EQ(lm->name, "n0");
  EXPECT_EQ(one(d).hdr.nlmsg_seq, 0u);
  // The lazy client never reads while 600 devices come and go; the writer is served.
  for (int i = 0; i < 600; ++i) {
    w.send_dg(link_msg(RTM_NEWLINK, kCreate, 10 + i, named("m" + std::to_string(i), "dummy")));
    ASSERT_EQ(w.until_end().last_error(), 0);
    if (i % 50 == 0) {
      // The monitor reads along.
      while (true) {
        Datagram x(65536);
        ssize_t n = recv(mon.fd, x.data(), x.size(), MSG_DONTWAIT);
        if (n <= 0) break;
        EXPECT_FALSE(is_overflow_datagram({x.data(), static_cast<std::size_t>(n)}));
      }
    }
  }
  // The lazy client's next read tells it ENOBUFS (perhaps after what was already in flight).
  bool overflow = false;
  for (int i = 0; i < 1000 && !overflow; ++i) {
    Datagram x = lazy.recv_dg();
    ASSERT_FALSE(x.empty());
    overflow = is_overflow_datagram(x);
  }
  EXPECT_TRUE(overflow);
  // It resynchronises with a dump.
  wire::GetLinkRequest g;
  g.dump = true;
  lazy.send_dg(getlink(77, g));
  Replies r;
  for (int i = 0; i < 1000; ++i) {
    Datagram x = lazy.recv_dg();
    ASSERT_FALSE(x.empty());
    auto msgs = wire::split_messages(x);
    ASSERT_TRUE(msgs);
    if (msgs->empty() || (*msgs)[0].hdr.nlmsg_seq != 77u) continue;  // late notifications
    r.dgs.push_back(std::move(x));
    r.split();
    if (r.msgs.back().hdr.nlmsg_type == NLMSG_DONE) break;
  }
  EXPECT_EQ(r.msgs.size(), 1u + 1u + 600u + 1u);
}

// Runs `body` in a child process as uid/gid 65534 (nobody) and returns its exit status
// (10 when the uid could not be dropped; `body`'s own codes otherwise, 0 for success).
template <class F>
int as_nobody(F body) {
  pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0) _exit(10);
    _exit(body());
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(DaemonTest, UnauthorisedPeerGetsEperm) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another uid";
  start();
  int status = as_nobody([&] {
    int fd = try_connect();
    if (fd < 0) return 11;
    Conn c(fd);
    c.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("u0", "dummy")));
    if (c.until_end().last_error() != EPERM) return 12;
    c.send_dg(link_msg(RTM_DELLINK, NLM_F_ACK, 2, named("lo")));
    if (c.until_end().last_error() != EPERM) return 13;
    wire::GetLinkRequest g;
    g.name = "lo";
    c.send_dg(getlink(3, g));
    Datagram d = c.recv_dg();
    if (one(d).hdr.nlmsg_type != RTM_NEWLINK) return 14;
    return 0;
  });
  EXPECT_EQ(status, 0);
  Conn c(try_connect());
  wire::GetLinkRequest g;
  g.name = "u0";
  c.send_dg(getlink(1, g));
  EXPECT_EQ(c.until_end().last_error(), ENODEV);
}

// The shim's control attributes: the daemon's own kernel namespace is "default" whatever
// name comes with it; IFCORE_CTRL_CREATE makes a namespace; IFCORE_CTRL_QUIET answers nothing
// on success and an error on failure; the reply names the daemon's namespace inode.
TEST_F(DaemonTest, ControlMessageMapsKernelNamespacesAndMakesThem) {
  start();
  struct stat own {};
  ASSERT_EQ(stat("/proc/self/ns/net", &own), 0);  // the daemon runs in the test's namespace
  Conn c(try_connect());
  ControlRequest req;
  req.ns = "netns-1";
  req.netns_inode = own.st_ino;
  req.create = true;
  ControlState st = c.control(req);
  EXPECT_EQ(st.ns, "default");
  EXPECT_EQ(st.netns_inode, own.st_ino);
  req.netns_inode = own.st_ino + 1;
  req.ns = "fresh";
  EXPECT_EQ(c.control(req).ns, "fresh");
  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("f0", "dummy")));
  EXPECT_EQ(c.until_end().last_error(), 0);
  // Quiet: the next datagram is the answer to the request after it.
  ControlRequest quiet;
  quiet.quiet = true;
  quiet.add_membership = {RTNLGRP_LINK};
  wire::MessageBuilder b;
  ASSERT_TRUE(encode_control_request(b, 2, quiet));
  c.send_dg(b.take());
  c.send_dg(link_msg(RTM_NEWLINK, kCreate, 3, named("f1", "dummy")));
  // Its notification (the quiet join took), then its ACK, in Linux's order (rtnl_notify
  // before netlink_ack).
  Datagram d = c.recv_dg();
  EXPECT_EQ(one(d).hdr.nlmsg_type, RTM_NEWLINK);
  EXPECT_EQ(one(d).hdr.nlmsg_seq, 0u);
  d = c.recv_dg();
  EXPECT_EQ(one(d).hdr.nlmsg_type, NLMSG_ERROR);
  EXPECT_EQ(wire::decode_error(one(d))->error, 0);
  // Without IFCORE_CTRL_CREATE an unknown namespace is refused, quiet or not.
  ControlRequest bad;
  bad.ns = "nosuch";
  bad.quiet = true;
  Conn e(try_connect());
  wire::MessageBuilder b2;
  ASSERT_TRUE(encode_control_request(b2, 4, bad));
  e.send_dg(b2.take());
  EXPECT_EQ(e.until_end().last_error(), ENOENT);
}

// A namespace a peer made with IFCORE_CTRL_CREATE is that peer's to change (Linux: the
// owner of a user namespace has CAP_NET_ADMIN over the network namespaces it makes);
// elsewhere the peer may only read.
TEST_F(DaemonTest, APeerMayChangeTheNamespaceItMade) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another uid";
  start();
  int status = as_nobody([&] {
    Conn c(try_connect());
    ControlRequest req;
    req.ns = "mine";
    req.create = true;
    ControlState st = c.control(req);
    if (st.ns != "mine" || !st.may_write) return 11;
    c.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("m0", "dummy")));
    if (c.until_end().last_error() != 0) return 12;
    req = {};
    req.ns = "default";
    if (c.control(req).may_write) return 13;
    c.send_dg(link_msg(RTM_NEWLINK, kCreate, 2, named("m1", "dummy")));
    if (c.until_end().last_error() != EPERM) return 14;
    return 0;
  });
  EXPECT_EQ(status, 0);
}

TEST_F(DaemonTest, SecondDaemonOnALivePathFailsAndAStalePathIsReplaced) {
  start();
  pid_t second = fork();
  ASSERT_GE(second, 0);
  if (second == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    execl(IFCORED_PATH, IFCORED_PATH, "--socket", path_.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(second, &status, 0), second);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  {
    Conn c(try_connect());  // the first one still serves
    EXPECT_EQ(c.control({}).ns, "default");
  }
  // A daemon killed outright leaves its socket behind; the next one replaces it.
  kill_daemon();
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  start();
  Conn c(try_connect());
  EXPECT_EQ(c.control({}).ns, "default");
}

TEST_F(DaemonTest, SigtermExitsZeroAndRemovesTheSocket) {
  start();
  {
    Conn c(try_connect());
    c.control({});
  }
  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid_, &status, 0), pid_);
  pid_ = -1;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  struct stat st;
  EXPECT_NE(stat(path_.c_str(), &st), 0);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define IFCORE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define IFCORE_TEST_SANITIZED 1
#endif
#endif

// A field of /proc/PID/stat: 10 is minflt (after the command's closing parenthesis).
long proc_stat_field(pid_t pid, int field) {
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return -1;
  char buf[4096];
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');
  if (!p) return -1;
  int at = 2;  // the fields after ")" start with the 3rd (state)
  for (const char* q = p + 1; *q; ++q) {
    if (*q != ' ') continue;
    if (++at == field) return std::strtol(q + 1, nullptr, 10);
  }
  return -1;
}

// The daemon's page faults while `n` dummies are created, one request at a time.
long faults_creating(pid_t pid, const Conn& c, int n) {
  long before = proc_stat_field(pid, 10);
  for (int i = 0; i < n; ++i) {
    c.send_dg(link_msg(RTM_NEWLINK, kCreate, std::uint32_t(100 + i),
                       named("d" + std::to_string(i), "dummy")));
    if (c.until_end().last_error() != 0) return -1;
  }
  return proc_stat_field(pid, 10) - before;
}

TEST_F(DaemonTest, ReservedHeapTakesTheFirstDevicesWithoutPageFaults) {
#ifdef IFCORE_TEST_SANITIZED
  GTEST_SKIP() << "the sanitizers' allocator keeps a heap of its own";
#endif
  // Without a reserve, a fresh daemon's heap grows page by page under the creates.
  start({"--reserve", "0"});
  long plain = 0;
  {
    Conn c(try_connect());
    c.control({});
    plain = faults_creating(pid_, c, 2000);
  }
  ASSERT_GE(plain, 0) << "a create failed";
  kill_daemon();
  if (plain < 200)
    GTEST_SKIP() << "only " << plain << " page faults without a reserve (huge pages?)";
  // With one, the pages were touched at start.
  start({"--reserve", "16"});
  Conn c(try_connect());
  c.control({});
  long reserved = faults_creating(pid_, c, 2000);
  ASSERT_GE(reserved, 0) << "a create failed";
  EXPECT_LT(reserved, plain / 4) << "without a reserve: " << plain << " page faults";
}

}  // namespace
}  // namespace ifcore::rtnl::test

#endif  // IFCORED_PATH
