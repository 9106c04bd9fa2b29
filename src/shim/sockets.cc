// shim/sockets.cc — redirected netlink sockets: connection, control exchanges, receive.
// Lock order: Table::mu_, then NetlinkSocket::mu (sockets.h).
#include "shim/sockets.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>

#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/netlink.h"
#include "shim/real.h"
#include "shim/translate.h"

namespace ifcore::shim {

namespace {

// How long a control exchange waits for ifcored's reply.
constexpr int kControlTimeoutMs = 10000;

int set_errno(int e) {
  errno = e;
  return -1;
}

nlmsghdr header_of(std::span<const std::uint8_t> dg) {
  nlmsghdr h{};
  if (dg.size() >= sizeof(h)) std::memcpy(&h, dg.data(), sizeof(h));
  return h;
}

// The header an NLMSG_ERROR echoes (zeroed when the datagram is not one).
nlmsghdr echoed_header(std::span<const std::uint8_t> dg) {
  nlmsghdr h = header_of(dg), e{};
  if (h.nlmsg_type == NLMSG_ERROR && dg.size() >= NLMSG_HDRLEN + sizeof(nlmsgerr))
    std::memcpy(&e, dg.data() + NLMSG_HDRLEN + offsetof(nlmsgerr, msg), sizeof(e));
  return e;
}

// What the program must not see: ifcore's control replies and their errors (a quiet
// control request that failed, a reply that outlived its exchange).
bool is_control_traffic(std::span<const std::uint8_t> dg) {
  if (dg.size() < sizeof(nlmsghdr)) return false;
  if (header_of(dg).nlmsg_type == rtnl::IFCORE_NLMSG_CONTROL) return true;
  return echoed_header(dg).nlmsg_type == rtnl::IFCORE_NLMSG_CONTROL &&
         !rtnl::is_overflow_datagram(dg);
}

// Reads one whole datagram (blocking up to `timeout_ms`; -1: no limit).
// Errors: ETIMEDOUT, ECONNRESET at end of file, the socket's.
Result<std::vector<std::uint8_t>> read_datagram(int fd, int timeout_ms) {
  const auto& r = real::fn();
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int n = r.poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno, "poll: {}", std::strerror(errno));
    if (n == 0) return fail(ETIMEDOUT, "ifcored did not answer");
    ssize_t len = r.recv(fd, nullptr, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
    if (len < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (len < 0) return fail(errno, "recv: {}", std::strerror(errno));
    std::vector<std::uint8_t> dg(static_cast<std::size_t>(len));
    ssize_t got = r.recv(fd, dg.data(), dg.size(), MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got < 0) return fail(errno, "recv: {}", std::strerror(errno));
    if (got == 0 && len == 0) {
      // An empty datagram and the end of the connection read alike; poll tells them apart.
      pollfd q{fd, POLLIN, 0};
      if (r.poll(&q, 1, 0) > 0 && (q.revents & POLLHUP))
        return fail(ECONNRESET, "ifcored closed the connection");
    }
    dg.resize(static_cast<std::size_t>(got));
    return dg;
  }
}

Result<void> send_datagram(int fd, std::span<const std::uint8_t> dg) {
  for (;;) {
    ssize_t n = real::fn().send(fd, dg.data(), dg.size(), MSG_NOSIGNAL);
    if (n >= 0) return ok();
    if (errno == EINTR) continue;
    if (errno == EAGAIN) {  // a non-blocking socket whose buffer is full: wait for room
      pollfd p{fd, POLLOUT, 0};
      real::fn().poll(&p, 1, kControlTimeoutMs);
      continue;
    }
    return fail(errno, "send: {}", std::strerror(errno));
  }
}

int connect_daemon(int type_flags) {
  const auto& r = real::fn();
  int fd = r.socket(AF_UNIX, SOCK_SEQPACKET | type_flags, 0);
  if (fd < 0) return -1;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::string path = socket_path();
  if (path.size() >= sizeof(a.sun_path)) {
    r.close(fd);
    return set_errno(ENAMETOOLONG);
  }
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  for (;;) {
    if (r.connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) return fd;
    if (errno == EINTR) continue;
    if (errno == EINPROGRESS || errno == EAGAIN) {  // non-blocking: wait for it
      pollfd p{fd, POLLOUT, 0};
      r.poll(&p, 1, kControlTimeoutMs);
      int err = 0;
      socklen_t len = sizeof(err);
      r.getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err == 0) return fd;
      errno = err;
    }
    int e = errno;
    r.close(fd);
    return set_errno(e);
  }
}

void apply_state(NetlinkSocket& s, const rtnl::ControlState& st) {
  s.port_id = st.port_id;
  s.ns = st.ns;
  if (st.netns_inode) s.daemon_netns = st.netns_inode;
  s.state_known = true;
}

// The connection's namespace request for the calling thread's kernel namespace.
rtnl::ControlRequest namespace_request(std::uint64_t daemon_netns) {
  rtnl::ControlRequest req;
  std::uint64_t ino = current_netns_inode();
  if (ino) {
    req.netns_inode = ino;
    req.ns = namespace_for_inode(ino, daemon_netns);
    req.create = true;
  }
  return req;
}

// ifcored's netns inode, as the first connection of the process learnt it.
std::atomic<std::uint64_t> g_daemon_netns{0};

}  // namespace

// ---- Table

std::shared_ptr<NetlinkSocket> Table::find(int fd) {
  if (empty()) return nullptr;
  MutexLock lock(mu_);
  auto it = fds_.find(fd);
  return it == fds_.end() ? nullptr : it->second;
}

void Table::insert(int fd, std::shared_ptr<NetlinkSocket> s) {
  MutexLock lock(mu_);
  fds_[fd] = std::move(s);
  count_.store(fds_.size(), std::memory_order_relaxed);
}

void Table::erase(int fd) {
  if (empty()) return;
  MutexLock lock(mu_);
  fds_.erase(fd);
  count_.store(fds_.size(), std::memory_order_relaxed);
}

void Table::copy(int from, int to) {
  MutexLock lock(mu_);
  auto it = fds_.find(from);
  if (it != fds_.end())
    fds_[to] = it->second;
  else
    fds_.erase(to);
  count_.store(fds_.size(), std::memory_order_relaxed);
}

Table& table() {
  static Table* t = new Table;  // never destroyed: interposers run during exit too
  return *t;
}

// ---- Paths and namespaces

std::string socket_path() {
  if (const char* p = std::getenv("IFCORE_SOCKET"); p && *p) return p;
  if (geteuid() == 0) return "/run/ifcore/ifcore.sock";
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x)
    return std::string(x) + "/ifcore.sock";
  return "/tmp/ifcore-" + std::to_string(geteuid()) + ".sock";
}

std::uint64_t current_netns_inode() {
  struct stat st {};
  if (stat("/proc/thread-self/ns/net", &st) == 0 || stat("/proc/self/ns/net", &st) == 0)
    return st.st_ino;
  return 0;
}

std::string namespace_for_inode(std::uint64_t inode, std::uint64_t daemon_netns) {
  if (daemon_netns && inode == daemon_netns) return "default";
  if (DIR* d = opendir("/run/netns")) {
    std::string found;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      struct stat st {};
      std::string path = std::string("/run/netns/") + e->d_name;
      if (stat(path.c_str(), &st) == 0 && st.st_ino == inode) {
        found = e->d_name;
        break;
      }
    }
    closedir(d);
    if (!found.empty()) return found;
  }
  return "netns-" + std::to_string(inode);
}

// ---- Connections

int open_netlink(int type, int type_flags, std::shared_ptr<NetlinkSocket>* out) {
  int fd = connect_daemon(type_flags);
  if (fd < 0) return -1;
  auto s = std::make_shared<NetlinkSocket>();
  s->type = type;
  MutexLock lock(s->mu);
  rtnl::ControlRequest req = namespace_request(g_daemon_netns.load());
  auto st = control_exchange(fd, *s, req);
  if (!st) {
    real::fn().close(fd);
    return set_errno(st.error().code);
  }
  if (st->netns_inode) g_daemon_netns.store(st->netns_inode);
  *out = std::move(s);
  return fd;
}

std::shared_ptr<NetlinkSocket> adopt_inherited(int fd) {
  const auto& r = real::fn();
  int domain = 0, type = 0;
  socklen_t len = sizeof(domain);
  if (r.getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX)
    return nullptr;
  len = sizeof(type);
  if (r.getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET)
    return nullptr;
  sockaddr_un peer{};
  socklen_t plen = sizeof(peer);
  if (r.getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &plen) != 0) return nullptr;
  std::string path = socket_path();
  if (plen <= offsetof(sockaddr_un, sun_path) || path != peer.sun_path) return nullptr;
  auto s = std::make_shared<NetlinkSocket>();
  s->state_known = false;  // asked on first use (preload.cc: lookup)
  s->bound = true;         // the program that made it may have; its port id is kept
  return s;
}

Result<rtnl::ControlState> control_exchange(int fd, NetlinkSocket& s, rtnl::ControlRequest req) {
  wire::MessageBuilder b;
  std::uint32_t seq = ++s.seq;
  if (auto e = rtnl::encode_control_request(b, seq, req); !e) return fail(e.error());
  std::vector<std::uint8_t> out = b.take();
  IFCORE_TRY(send_datagram(fd, out));
  for (;;) {
    auto dg = read_datagram(fd, kControlTimeoutMs);
    if (!dg) return fail(dg.error());
    nlmsghdr h = header_of(*dg);
    if (h.nlmsg_type == rtnl::IFCORE_NLMSG_CONTROL && h.nlmsg_seq == seq) {
      auto m = wire::only_message(*dg);
      if (!m) return fail(EPROTO, "malformed control reply");
      auto st = rtnl::decode_control_state(*m);
      if (!st) return fail(st.error());
      apply_state(s, *st);
      return *st;
    }
    nlmsghdr e = echoed_header(*dg);
    if (h.nlmsg_type == NLMSG_ERROR && e.nlmsg_type == rtnl::IFCORE_NLMSG_CONTROL &&
        h.nlmsg_seq == seq) {
      // Its header and echo were read from raw bytes: a datagram that is no well-formed
      // single message is refused, not decoded.
      auto m = wire::only_message(*dg);
      if (!m) return fail(EPROTO, "malformed control reply");
      auto err = wire::decode_error(*m);
      if (err && err->error != 0) return fail(err->error, "{}", err->message);
      continue;  // an ACK
    }
    if (!is_control_traffic(*dg)) {
      s.stash.push_back(std::move(*dg));
      s.head_checked = false;  // what a peek checked is in the stash now
    }
  }
}

Result<void> control_send(int fd, NetlinkSocket& s, rtnl::ControlRequest req) {
  req.quiet = true;
  wire::MessageBuilder b;
  if (auto e = rtnl::encode_control_request(b, ++s.seq, req); !e) return fail(e.error());
  std::vector<std::uint8_t> out = b.take();
  return send_datagram(fd, out);
}

// ---- Receive

namespace {

std::size_t iov_total(const msghdr* msg) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < msg->msg_iovlen; ++i) n += msg->msg_iov[i].iov_len;
  return n;
}

std::size_t scatter(const msghdr* msg, std::span<const std::uint8_t> data) {
  std::size_t done = 0;
  for (std::size_t i = 0; i < msg->msg_iovlen && done < data.size(); ++i) {
    std::size_t n = std::min(msg->msg_iov[i].iov_len, data.size() - done);
    if (n) std::memcpy(msg->msg_iov[i].iov_base, data.data() + done, n);
    done += n;
  }
  return done;
}

// The kernel's sender: port 0, no group (replies and notifications alike).
void fill_sender(msghdr* msg) {
  if (msg->msg_name && msg->msg_namelen >= sizeof(sockaddr_nl)) {
    sockaddr_nl a{};
    a.nl_family = AF_NETLINK;
    std::memcpy(msg->msg_name, &a, sizeof(a));
  }
  if (msg->msg_name) msg->msg_namelen = sizeof(sockaddr_nl);
  msg->msg_controllen = 0;
}

// Linux: netlink_cmsg_listen_all_nsid and put_cmsg — the id as SOL_NETLINK /
// NETLINK_LISTEN_ALL_NSID control data in the program's `room` bytes (MSG_CTRUNC when they
// are too few). ifcored marks such a notification with an IFCORE_NLMSG_NSID message first.
void put_nsid_cmsg(msghdr* msg, socklen_t room, std::int32_t nsid) {
  if (!msg->msg_control || room < CMSG_LEN(sizeof(nsid))) {
    msg->msg_flags |= MSG_CTRUNC;
    return;
  }
  cmsghdr c{};
  c.cmsg_level = SOL_NETLINK;
  c.cmsg_type = NETLINK_LISTEN_ALL_NSID;
  c.cmsg_len = CMSG_LEN(sizeof(nsid));
  auto* at = static_cast<std::uint8_t*>(msg->msg_control);
  std::memcpy(at, &c, sizeof(c));
  std::memcpy(CMSG_DATA(static_cast<cmsghdr*>(msg->msg_control)), &nsid, sizeof(nsid));
  msg->msg_controllen = std::min<socklen_t>(room, CMSG_SPACE(sizeof(nsid)));
}

ssize_t deliver(msghdr* msg, std::span<const std::uint8_t> dg, int flags, socklen_t room) {
  auto nsid = rtnl::nsid_of_prefix(dg);
  if (nsid) dg = dg.subspan(rtnl::kNsidPrefixSize);
  std::size_t copied = scatter(msg, dg);
  fill_sender(msg);
  msg->msg_flags = copied < dg.size() ? MSG_TRUNC : 0;
  if (nsid) put_nsid_cmsg(msg, room, *nsid);
  return static_cast<ssize_t>((flags & MSG_TRUNC) ? dg.size() : copied);
}

// Reads (or peeks at) the head datagram, which starts with an IFCORE_NLMSG_NSID message:
// that message into a buffer of its own, the rest into the program's buffers.
ssize_t read_with_nsid(int fd, msghdr* msg, int flags, socklen_t room) {
  std::array<std::uint8_t, rtnl::kNsidPrefixSize> prefix{};
  std::vector<iovec> iov(msg->msg_iovlen + 1);
  iov[0] = iovec{prefix.data(), prefix.size()};
  std::copy(msg->msg_iov, msg->msg_iov + msg->msg_iovlen, iov.begin() + 1);
  msghdr m{};
  m.msg_iov = iov.data();
  m.msg_iovlen = iov.size();
  ssize_t n =
      real::fn().recvmsg(fd, &m, flags & (MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT | MSG_WAITALL));
  if (n < 0) return -1;
  fill_sender(msg);
  msg->msg_flags = m.msg_flags & MSG_TRUNC;
  if (auto nsid = rtnl::nsid_of_prefix(prefix)) put_nsid_cmsg(msg, room, *nsid);
  return std::max<ssize_t>(0, n - static_cast<ssize_t>(prefix.size()));
}

// Reads (or peeks at) the head datagram into the program's buffers.
ssize_t read_into(int fd, msghdr* msg, int flags) {
  msghdr m{};
  m.msg_iov = msg->msg_iov;
  m.msg_iovlen = msg->msg_iovlen;
  ssize_t n =
      real::fn().recvmsg(fd, &m, flags & (MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT | MSG_WAITALL));
  if (n < 0) return -1;
  fill_sender(msg);
  msg->msg_flags = m.msg_flags & MSG_TRUNC;
  return n;
}

// Before a blocking read: looks for a datagram without sleeping for a short while. A
// program that sends a request and reads its answer (ip, one line of a batch after the
// other) would otherwise fall asleep just before ifcored answers, and pay the wakeup
// (tens of microseconds on a virtual machine) for every request. The kernel answers
// most requests inside sendmsg, so its clients never wait there.
void spin_for_datagram(int fd) {
  constexpr long kSpinNs = 30000;
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  std::uint8_t b;
  do {
    if (real::fn().recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) >= 0 || errno != EAGAIN) return;
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < kSpinNs);
}

}  // namespace

ssize_t receive(int fd, NetlinkSocket& s, msghdr* msg, int flags) {
  const auto& r = real::fn();
  const socklen_t room = msg->msg_control ? static_cast<socklen_t>(msg->msg_controllen) : 0;
  for (;;) {
    {
      MutexLock lock(s.mu);
      if (!s.stash.empty()) {
        std::vector<std::uint8_t> dg = s.stash.front();
        if (!(flags & MSG_PEEK)) s.stash.pop_front();
        lock.unlock();
        if (rtnl::is_overflow_datagram(dg)) return set_errno(ENOBUFS);
        return deliver(msg, dg, flags, room);
      }
    }
    bool checked;
    {
      MutexLock lock(s.mu);
      checked = std::exchange(s.head_checked, false) && !(flags & MSG_PEEK);
    }
    if (!checked) {
      if (!(flags & MSG_DONTWAIT)) spin_for_datagram(fd);
    } else {
      return read_into(fd, msg, flags);
    }
    // Look at the head datagram's first bytes first, to keep control traffic and the
    // overflow marker from the program whatever buffer it offers.
    std::uint8_t head[NLMSG_HDRLEN + sizeof(nlmsgerr) + 16];
    ssize_t len = r.recv(fd, head, sizeof(head), MSG_PEEK | MSG_TRUNC | (flags & MSG_DONTWAIT));
    if (len < 0) return -1;
    std::size_t have = std::min<std::size_t>(static_cast<std::size_t>(len), sizeof(head));
    std::span<const std::uint8_t> start(head, have);
    if (len == 0) {
      pollfd p{fd, POLLIN, 0};
      if (r.poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP))) {
        fill_sender(msg);
        msg->msg_flags = 0;
        return 0;  // ifcored went away: end of file
      }
    }
    bool overflow =
        static_cast<std::size_t>(len) <= sizeof(head) && rtnl::is_overflow_datagram(start);
    if (overflow || is_control_traffic(start)) {
      r.recv(fd, head, sizeof(head), MSG_DONTWAIT);  // drop it
      if (overflow) return set_errno(ENOBUFS);
      continue;
    }
    // A notification from another namespace (NETLINK_LISTEN_ALL_NSID): its id becomes
    // control data. Looked at again by each call (no head_checked).
    if (rtnl::nsid_of_prefix(start)) return read_with_nsid(fd, msg, flags, room);
    if (flags & MSG_PEEK) {
      MutexLock lock(s.mu);
      s.head_checked = true;
    }
    if ((flags & MSG_PEEK) && iov_total(msg) <= have) {
      // A peek that sizes the datagram (iproute2 peeks with no buffer): answered from
      // the bytes already read.
      std::size_t copied = scatter(msg, start);
      fill_sender(msg);
      msg->msg_flags = copied < static_cast<std::size_t>(len) ? MSG_TRUNC : 0;
      return (flags & MSG_TRUNC) ? len : static_cast<ssize_t>(copied);
    }
    return read_into(fd, msg, flags);
  }
}

// ---- Send

ssize_t transmit(int fd, NetlinkSocket& s, const msghdr* msg, int flags) {
  std::size_t total = iov_total(msg);
  std::vector<std::uint8_t> dg(total);
  std::size_t off = 0;
  for (std::size_t i = 0; i < msg->msg_iovlen; ++i) {
    if (msg->msg_iov[i].iov_len)
      std::memcpy(dg.data() + off, msg->msg_iov[i].iov_base, msg->msg_iov[i].iov_len);
    off += msg->msg_iov[i].iov_len;
  }
  std::uint64_t daemon_netns;
  {
    MutexLock lock(s.mu);
    daemon_netns = s.daemon_netns;
    s.bound = true;  // Linux: netlink_sendmsg autobinds
  }
  if (auto t = translate_request(dg, daemon_netns); !t) return set_errno(t.error().code);
  ssize_t n = real::fn().send(fd, dg.data(), dg.size(), (flags & MSG_DONTWAIT) | MSG_NOSIGNAL);
  if (n < 0) return -1;
  return static_cast<ssize_t>(total);
}

// ---- One-shot conversations

Result<std::vector<std::vector<std::uint8_t>>> transact_in(const std::string& ns, bool create,
                                                           std::span<const std::uint8_t> request) {
  int fd = connect_daemon(SOCK_CLOEXEC);
  if (fd < 0)
    return fail(errno, "cannot reach ifcored at {}: {}", socket_path(), std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { real::fn().close(fd); }
  } closer{fd};
  NetlinkSocket s;
  rtnl::ControlRequest req;
  if (ns.empty()) {
    req = namespace_request(g_daemon_netns.load());
  } else {
    req.ns = ns;
    req.create = create;
  }
  auto st = control_exchange(fd, s, req);
  if (!st) return fail(st.error());
  if (st->netns_inode) g_daemon_netns.store(st->netns_inode);
  std::vector<std::uint8_t> out(request.begin(), request.end());
  nlmsghdr h = header_of(out);
  h.nlmsg_seq = ++s.seq;
  h.nlmsg_pid = 0;
  std::memcpy(out.data(), &h, sizeof(h));
  IFCORE_TRY(send_datagram(fd, out));
  bool dump = (h.nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
  bool ack = h.nlmsg_flags & NLM_F_ACK;
  std::vector<std::vector<std::uint8_t>> replies;
  for (;;) {
    auto dg = read_datagram(fd, kControlTimeoutMs);
    if (!dg) return fail(dg.error());
    if (is_control_traffic(*dg)) continue;
    bool last = false;
    auto msgs = wire::split_messages(*dg);
    if (!msgs) return fail(EPROTO, "malformed reply from ifcored");
    for (const wire::Message& m : *msgs) {
      if (m.hdr.nlmsg_seq != h.nlmsg_seq) continue;
      if (m.hdr.nlmsg_type == NLMSG_DONE || m.hdr.nlmsg_type == NLMSG_ERROR)
        last = true;
      else if (!dump && !ack)
        last = true;
    }
    replies.push_back(std::move(*dg));
    if (last) return replies;
  }
}

Result<std::vector<std::vector<std::uint8_t>>> transact(std::span<const std::uint8_t> request) {
  return transact_in({}, true, request);
}

}  // namespace ifcore::shim
