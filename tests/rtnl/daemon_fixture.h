// tests/rtnl/daemon_fixture.h — the real ifcored on a temporary socket, and clients for it:
// Conn speaks datagrams over the socket, RingConn through mapped rings (src/rtnl/wire/ring.h).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rtnl/fixture.h"
#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/ring.h"
#include "support/ifcored_process.h"

#ifdef IFCORED_PATH

namespace ifcore::rtnl::test {

using namespace ifcore::wire::test;

// Receives datagrams from a client (Conn, RingConn) until one ends with NLMSG_ERROR or
// NLMSG_DONE, or none comes.
template <class Client>
Replies until_end_of(Client& c) {
  Replies r;
  for (int i = 0; i < 10000; ++i) {
    r.dgs.push_back(c.recv_dg());
    if (r.dgs.back().empty()) break;
    r.split();
    auto t = r.msgs.back().hdr.nlmsg_type;
    if (t == NLMSG_ERROR || t == NLMSG_DONE) break;
  }
  return r;
}

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ifcored-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    chmod(dir_.c_str(), 0755);  // so that an unprivileged peer can reach the socket
    path_ = dir_ + "/ifcore.sock";
  }
  void TearDown() override {
    kill_daemon();
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  void start(std::vector<std::string> extra = {}) {
    pid_ = ifcore::test::spawn_ifcored(IFCORED_PATH, path_, extra);
    ASSERT_GT(pid_, 0);
    for (int i = 0; i < 500; ++i) {
      int fd = try_connect();
      if (fd >= 0) {
        close(fd);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "ifcored did not start";
  }
  // Kills the daemon outright (SIGKILL) and reaps it; nothing if none runs.
  void kill_daemon() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  int try_connect() {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strcpy(sa.sun_path, path_.c_str());
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0) {
      close(fd);
      return -1;
    }
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
  }
  std::string dir_, path_;
  pid_t pid_ = -1;
};

// A connected client.
struct Conn {
  int fd = -1;
  explicit Conn(int f) : fd(f) {}
  ~Conn() {
    if (fd >= 0) close(fd);
  }
  void send_dg(const Bytes& b) const {
    ASSERT_EQ(::send(fd, b.data(), b.size(), 0), ssize_t(b.size()));
  }
  Datagram recv_dg() const {
    Datagram d(65536);
    ssize_t n = ::recv(fd, d.data(), d.size(), 0);
    d.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return d;
  }
  Replies until_end() const { return until_end_of(*this); }
  ControlState control(const ControlRequest& req) const {
    wire::MessageBuilder b;
    EXPECT_TRUE(encode_control_request(b, 9, req));
    send_dg(b.take());
    Datagram d = recv_dg();
    auto m = one(d);
    if (m.hdr.nlmsg_type == NLMSG_ERROR) {
      ADD_FAILURE() << "control refused: " << wire::decode_error(m)->error;
      return {};
    }
    auto st = decode_control_state(m);
    EXPECT_TRUE(st);
    return st ? *st : ControlState{};
  }
};

// Joins the connected client `fd` to RTNLGRP_LINK (a monitor) and returns it.
inline int join_link_group(int fd) {
  Conn c(fd);
  ControlRequest join;
  join.add_membership = {RTNLGRP_LINK};
  c.control(join);
  return std::exchange(c.fd, -1);
}

// A client on mapped rings: it switches a fresh connection, then writes requests to the
// request ring and reads everything from the reply ring, as docs/WIRE.md describes.
struct RingConn {
  Conn conn;
  std::optional<MappedRings> ring;
  std::deque<Datagram> kept;  // socket datagrams that were not doorbells

  explicit RingConn(int fd) : conn(fd) {}
  // Asks for rings; the reply (or the refusal) comes on the socket. Returns the error the
  // daemon answered (0: switched).
  int switch_rings(ControlRequest req, std::uint32_t size = 0) {
    req.ring = size;
    wire::MessageBuilder b;
    EXPECT_TRUE(encode_control_request(b, 7, req));
    conn.send_dg(b.take());
    Datagram d(65536);
    auto got = recv_with_fd(conn.fd, d, 0);
    if (!got || got->size == 0) {
      ADD_FAILURE() << "no answer to the ring request";
      return -1;
    }
    d.resize(got->size);
    int fd = got->fd;
    auto m = one(d);
    if (m.hdr.nlmsg_type == NLMSG_ERROR) {
      EXPECT_LT(fd, 0) << "a refusal passed a file";
      return wire::decode_error(m)->error;
    }
    auto st = decode_control_state(m);
    EXPECT_TRUE(st);
    EXPECT_GE(fd, 0) << "the reply carries no ring file";
    if (!st || fd < 0) return -1;
    auto r = MappedRings::attach(fd);
    EXPECT_TRUE(r) << r.error().message;
    if (!r) return -1;
    EXPECT_EQ(st->ring, r->size());
    ring.emplace(std::move(*r));
    return 0;
  }
  void send_dg(const Bytes& b) {
    for (;;) {
      auto r = ring->push(b);
      ASSERT_TRUE(r) << r.error().message;
      if (*r) break;
      if (ring->prepare_wait_room(b.size())) wait_socket(5000);
    }
    if (ring->take_peer_asleep()) ring_doorbell();
  }
  void ring_doorbell() const { (void)!::send(conn.fd, &kDoorbell, 1, MSG_NOSIGNAL); }
  // Waits for the socket; keeps what is not a doorbell. False on timeout or end of file.
  bool wait_socket(int timeout_ms) {
    pollfd p{conn.fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return false;
    for (;;) {
      Datagram d(65536);
      ssize_t n = ::recv(conn.fd, d.data(), d.size(), MSG_DONTWAIT);
      if (n == 0) return false;
      if (n < 0) return true;
      d.resize(static_cast<std::size_t>(n));
      if (n == 1 && d[0] == kDoorbell) continue;
      kept.push_back(std::move(d));
    }
  }
  // The next datagram for this client; empty after 5 s without one, or at end of file.
  Datagram recv_dg() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    Datagram d;
    for (;;) {
      auto p = ring->pop(d);
      EXPECT_TRUE(p) << p.error().message;
      if (!p) return {};
      if (*p != MappedRings::Popped::Empty && ring->take_peer_wants_room()) ring_doorbell();
      if (*p == MappedRings::Popped::Datagram) return d;
      if (*p == MappedRings::Popped::OnSocket) {
        if (kept.empty()) wait_socket(5000);
        if (kept.empty()) return {};
        d = std::move(kept.front());
        kept.pop_front();
        return d;
      }
      if (std::chrono::steady_clock::now() > deadline) return {};
      if (!ring->prepare_sleep()) continue;
      bool woke = wait_socket(100);
      ring->awake();
      if (!woke && !ring->readable() && eof()) return {};
    }
  }
  // The daemon closed the connection: end of file, or ECONNRESET when it closed with
  // datagrams of ours unread (a doorbell, say).
  bool eof() const {
    char c;
    ssize_t n = ::recv(conn.fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }
  Replies until_end() { return until_end_of(*this); }
};

}  // namespace ifcore::rtnl::test

#endif  // IFCORED_PATH
