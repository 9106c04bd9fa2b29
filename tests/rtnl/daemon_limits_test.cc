// tests/rtnl/daemon_limits_test.cc — what bounds one client's cost to ifcored: connections
// per uid, notification bytes (ENOBUFS), replies waiting to be read (the daemon stops
// reading a client that pipelines without reading: backpressure); and the modes of the
// socket and of its directory.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "rtnl/daemon_fixture.h"

#ifdef IFCORED_PATH

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

// True when the daemon closed `fd` (end of file) within five seconds.
bool closed_by_daemon(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 5000) != 1) return false;
  char c;
  return recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

TEST_F(DaemonTest, ConnectionsPerUidAreLimitedAndARefusedOneIsClosedAtOnce) {
  start({"--max-connections-per-uid", "3"});
  std::vector<std::unique_ptr<Conn>> conns;
  for (int i = 0; i < 3; ++i) {
    conns.push_back(std::make_unique<Conn>(try_connect()));
    EXPECT_EQ(conns.back()->control({}).ns, "default");
  }
  int extra = try_connect();  // the kernel accepts it; the daemon closes it
  ASSERT_GE(extra, 0);
  EXPECT_TRUE(closed_by_daemon(extra));
  close(extra);
  // The three are still served.
  for (auto& c : conns) EXPECT_EQ(c->control({}).ns, "default");
  // Once one goes, another may come (after the daemon saw it go).
  conns.pop_back();
  bool served = false;
  for (int i = 0; i < 200 && !served; ++i) {
    Conn again(try_connect());
    ControlRequest req;
    wire::MessageBuilder b;
    ASSERT_TRUE(encode_control_request(b, 9, req));
    Bytes x = b.take();
    (void)!::send(again.fd, x.data(), x.size(), MSG_NOSIGNAL);
    served = !again.recv_dg().empty();
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(served);
}

TEST_F(DaemonTest, NotificationBytesPastTheLimitGiveEnobufs) {
  start({"--max-queued-bytes", "8192"});
  Conn lazy(join_link_group(try_connect()));
  int small = 4096;
  setsockopt(lazy.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  Conn w(try_connect());
  for (int i = 0; i < 200; ++i) {
    w.send_dg(link_msg(RTM_NEWLINK, kCreate, 10 + i, named("m" + std::to_string(i), "dummy")));
    ASSERT_EQ(w.until_end().last_error(), 0);
  }
  // 200 announcements of about 1 KiB do not fit 8 KiB (nor the small socket buffer).
  bool overflow = false;
  int got = 0;
  for (; got < 1000 && !overflow; ++got) {
    Datagram x = lazy.recv_dg();
    ASSERT_FALSE(x.empty());
    overflow = is_overflow_datagram(x);
  }
  EXPECT_TRUE(overflow);
  EXPECT_LT(got, 200);
}

// A client that sends dump after dump and reads nothing: the daemon answers until the
// client's replies waiting beyond --max-outbox-bytes, then stops reading its socket, so the
// client's sends block; nothing is lost, and another client is served meanwhile.
TEST_F(DaemonTest, APipeliningClientThatReadsNothingIsNoLongerRead) {
  start({"--max-outbox-bytes", "65536"});
  Conn w(try_connect());
  for (int i = 0; i < 64; ++i) {
    w.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("d" + std::to_string(i), "dummy")));
    ASSERT_EQ(w.until_end().last_error(), 0);
  }
  Conn greedy(try_connect());
  wire::GetLinkRequest g;
  g.dump = true;
  int sent = 0;
  for (; sent < 100000; ++sent) {
    Bytes req = getlink(1000 + sent, g);
    if (::send(greedy.fd, req.data(), req.size(), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
      ASSERT_EQ(errno, EAGAIN);
      // Blocked: does the daemon still read? Its reading would make room again.
      pollfd p{greedy.fd, POLLOUT, 0};
      if (poll(&p, 1, 500) == 0) break;
      --sent;  // room again: send it again
    }
  }
  ASSERT_LT(sent, 100000) << "the daemon kept reading a client that reads nothing";
  // Another client is served meanwhile.
  wire::GetLinkRequest lo;
  lo.name = "lo";
  w.send_dg(getlink(5, lo));
  EXPECT_EQ(one(w.recv_dg()).hdr.nlmsg_type, RTM_NEWLINK);
  // Every dump arrives whole, in order.
  for (int i = 0; i < sent; ++i) {
    Replies r = greedy.until_end();
    ASSERT_FALSE(r.msgs.empty());
    ASSERT_EQ(r.msgs.back().hdr.nlmsg_type, NLMSG_DONE) << "dump " << i;
    EXPECT_EQ(r.msgs.back().hdr.nlmsg_seq, 1000u + i);
    EXPECT_EQ(r.msgs.size(), 1u + 64u + 1u);
  }
}

// The socket's directory is made 0755 whatever the umask, the socket is 0666.
TEST_F(DaemonTest, SocketIs0666AndItsDirectoryIsMade0755) {
  std::string sub = dir_ + "/run";
  path_ = sub + "/ifcore.sock";
  mode_t old = umask(077);
  start();
  umask(old);
  struct stat st {};
  ASSERT_EQ(stat(sub.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_EQ(st.st_uid, geteuid());
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0666u);
  kill_daemon();
  unlink(path_.c_str());
  rmdir(sub.c_str());
}

// ifcored refuses a directory where another user could replace its socket, and says why;
// a world-writable directory with the sticky bit (/tmp) is fine.
TEST_F(DaemonTest, AnUnsafeSocketDirectoryIsRefused) {
  auto refused = [&](std::string* why) {
    std::string log = dir_ + ".log";
    int saved = dup(2);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    dup2(fd, 2);
    pid_t pid = ifcore::test::spawn_ifcored(IFCORED_PATH, path_);
    dup2(saved, 2);
    close(saved);
    close(fd);
    int status = 0;
    waitpid(pid, &status, 0);
    std::ifstream in(log);
    why->assign(std::istreambuf_iterator<char>(in), {});
    unlink(log.c_str());
    return WIFEXITED(status) && WEXITSTATUS(status) == 1;
  };
  std::string why;
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  EXPECT_TRUE(refused(&why));
  EXPECT_NE(why.find("writable by every user without the sticky bit"), std::string::npos) << why;
  struct stat st {};
  EXPECT_NE(stat(path_.c_str(), &st), 0) << "a refused daemon made its socket";
  if (geteuid() == 0) {
    ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
    ASSERT_EQ(chown(dir_.c_str(), 65534, 65534), 0);
    EXPECT_TRUE(refused(&why));
    EXPECT_NE(why.find("is owned by uid 65534"), std::string::npos) << why;
    ASSERT_EQ(chown(dir_.c_str(), 0, 0), 0);
  }
  ASSERT_EQ(chmod(dir_.c_str(), 01777), 0);
  start();
  EXPECT_EQ(stat(path_.c_str(), &st), 0);
}

}  // namespace
}  // namespace ifcore::rtnl::test

#endif  // IFCORED_PATH
