// daemon/daemon.cc — the epoll loop: accept, authorise (SO_PEERCRED), read datagrams into
// sessions, write replies and notifications through per-client outboxes, answer ifcore
// control messages, serve clients that switched to mapped rings (rtnl/wire/ring.h), shut down on
// SIGTERM/SIGINT and unlink the socket.
//
// Lock order: the loop takes no lock of its own; sessions take the engine's control lock
// inside handle(). Session wakeups (from any thread) only write to an eventfd.
#include "daemon/daemon.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ifcore/rtnl.h"
#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/ring.h"

namespace ifcore::daemon {

namespace {

constexpr std::size_t kOutboxHigh = 64;    // stop pulling notifications above this
constexpr std::size_t kOutboxStop = 1024;  // stop reading requests above this
constexpr int kReadBudget = 64;            // datagrams read from one client per turn
constexpr std::size_t kSendBatch = 64;     // datagrams per sendmmsg(2)
constexpr int kDumpPartsPerTurn = 16;      // dump parts made for one client per turn
// Linux builds one AF_UNIX datagram from at most KMALLOC_MAX_SIZE (4 MiB) of linear data
// plus MAX_SKB_FRAGS pages (sock_alloc_send_pskb): about 4.07 MiB with 4 KiB pages, whatever
// SO_SNDBUF the sender forces. A buffer twice that reads any datagram whole in ONE recv(2)
// (no MSG_PEEK for its size first); its pages are only committed when a datagram fills them.
constexpr std::size_t kRecvBuffer = std::size_t{8} << 20;
constexpr std::size_t kRecvKeep = std::size_t{64} << 10;  // committed pages kept after a big one
// Datagrams per recvmmsg(2), each into a buffer of its own: a pipelining client (ip -batch)
// costs one syscall per kRecvSlots requests. The buffers are address space (128 MiB of it),
// not memory, until datagrams fill them.
constexpr unsigned kRecvSlots = 16;
// A client on mapped rings that keeps sending requests on its socket while it reads none of
// its replies is closed when this many wait (its ring's requests simply stop being read).
constexpr std::size_t kRingOutboxLimit = 16 * kOutboxStop;

// Datagrams waiting to be sent to one client, and their bytes.
class Outbox {
 public:
  using Store = std::deque<rtnl::Datagram>;
  void push_back(rtnl::Datagram&& d) {
    bytes_ += d.size();
    q_.push_back(std::move(d));
  }
  void pop_front() {
    bytes_ -= q_.front().size();
    q_.pop_front();
  }
  void erase_front(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) bytes_ -= q_[i].size();
    q_.erase(q_.begin(), q_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  std::size_t size() const { return q_.size(); }
  std::size_t bytes() const { return bytes_; }
  bool empty() const { return q_.empty(); }
  const rtnl::Datagram& front() const { return q_.front(); }
  const rtnl::Datagram& operator[](std::size_t i) const { return q_[i]; }
  Store::iterator begin() { return q_.begin(); }
  Store::iterator end() { return q_.end(); }

 private:
  Store q_;
  std::size_t bytes_ = 0;
};

struct Client {
  int fd = -1;
  std::uint64_t serial = 0;  // the connection's number, from 1 (Config::record_dir)
  ucred cred{};
  bool may_write = false;          // everywhere: uid 0 or a member of --group
  bool session_may_write = false;  // in the session's namespace (may_write or its owner)
  std::string ns = "default";
  std::uint32_t port_id = 0;
  std::uint64_t groups = 0;  // what the daemon asked the session, to replay it
  std::map<std::uint32_t, std::uint32_t> options;
  std::unique_ptr<rtnl::Session> session;
  Outbox out;
  std::uint32_t events = 0;  // registered with epoll
  // Mapped rings, once the client asked for them: every datagram for it goes out through
  // the reply ring (or, too large for it, through the socket behind a socket record).
  std::optional<rtnl::MappedRings> ring;
  bool socket_full = false;  // a datagram for the socket met EAGAIN: wait for EPOLLOUT
  // Requests read with a dump's request, after it: served when the dump has ended, so
  // that their replies follow it (Linux would refuse a second dump with EBUSY meanwhile).
  std::deque<rtnl::Datagram> after_dump;
  // True while a dump goes out or requests wait for its end: no more are read.
  bool dumping() const { return session->dump_pending() || !after_dump.empty(); }
};

// Whether a read of 0 bytes on a client's socket was its end rather than an empty datagram
// (SOCK_SEQPACKET reads both as 0 bytes). A peer that closed, or shut its writing side, has
// shut down our reading side: poll(2) reports POLLRDHUP (POLLHUP once both sides are shut).
// A datagram it queued before closing is still read first (FIONREAD counts what remains).
bool peer_closed(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLRDHUP | POLLHUP))) return false;
  int queued = 0;
  return ioctl(fd, FIONREAD, &queued) != 0 || queued == 0;
}

bool in_group(const ucred& c, gid_t group) {
  if (c.gid == group) return true;
  passwd pw{}, *res = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(c.uid, &pw, buf.data(), buf.size(), &res) != 0 || !res) return false;
  int n = 64;
  std::vector<gid_t> gids(n);
  if (getgrouplist(pw.pw_name, pw.pw_gid, gids.data(), &n) < 0) {
    gids.resize(n);
    if (getgrouplist(pw.pw_name, pw.pw_gid, gids.data(), &n) < 0) return false;
  }
  gids.resize(n);
  return std::find(gids.begin(), gids.end(), group) != gids.end();
}

// The socket's directory: made 0755 if missing (its parent must exist); refused when
// another user may replace the socket in it — writable by others without the sticky bit,
// or owned by neither the daemon's user nor root.
Result<void> check_socket_dir(const std::string& socket_path) {
  auto slash = socket_path.rfind('/');
  std::string dir = slash == std::string::npos ? "."
                    : slash == 0               ? "/"
                                               : socket_path.substr(0, slash);
  if (mkdir(dir.c_str(), 0755) == 0) {
    if (chmod(dir.c_str(), 0755) < 0)  // whatever the umask
      return fail(errno, "chmod {}: {}", dir, std::strerror(errno));
  } else if (errno != EEXIST) {
    return fail(errno, "socket directory {}: {}", dir, std::strerror(errno));
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) < 0)
    return fail(errno, "socket directory {}: {}", dir, std::strerror(errno));
  if (S_ISLNK(st.st_mode) && stat(dir.c_str(), &st) < 0)
    return fail(errno, "socket directory {}: {}", dir, std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return fail(ENOTDIR, "socket directory {} is not a directory", dir);
  if (st.st_uid != geteuid() && st.st_uid != 0)
    return fail(EPERM, "socket directory {} is owned by uid {}, not by uid {} or root", dir,
                st.st_uid, geteuid());
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
    return fail(EPERM,
                "socket directory {} is writable by every user without the sticky bit (mode "
                "{:04o}): anyone could replace the socket",
                dir, st.st_mode & 07777);
  return ok();
}

class Loop {
 public:
  Loop(Engine& e, const Config& cfg) : engine_(e), cfg_(cfg), server_(e) {}
  ~Loop();
  Result<void> start();
  Result<void> run();

 private:
  Result<void> bind_socket();
  void accept_clients();
  void on_client(Client& c, std::uint32_t ev);
  int read_some(Client& c);
  int read_socket(Client& c);
  int read_ring(Client& c);
  void flush_ring(Client& c);
  void doorbell(Client& c);
  // Before blocking: tells every client on rings that the loop sleeps. False when one of
  // them has a request waiting (the loop then serves it instead of sleeping).
  bool rings_allow_sleep();
  void rings_awake();
  int poll_rings();  // requests served
  void reap();
  void handle_datagram(Client& c, std::span<const std::uint8_t> dg);
  void handle_control(Client& c, std::span<const std::uint8_t> dg);
  // What the client's socket options ask of acknowledgements and errors.
  wire::AckOptions ack_options(const Client& c) const;
  // Queues an NLMSG_ERROR (error 0: an ACK) answering `request`.
  void answer_error(Client& c, std::span<const std::uint8_t> request, const Error& e,
                    const wire::AckOptions& ack);
  void switch_to_rings(Client& c, const wire::Message& req, rtnl::Datagram state,
                       rtnl::MappedRings rings);
  Result<void> open_session(Client& c, const std::string& ns, std::uint32_t port);
  void collect(Client& c);
  void pump(Client& c);
  void flush(Client& c);
  // Sends the client's outbox on its socket. False when the client was dropped.
  bool send_outbox(Client& c);
  // Makes the next parts of the client's pending dump while its outbox is empty, up to
  // kDumpPartsPerTurn parts (the rest on the next turn). True when it made any.
  bool feed_dump(Client& c);
  // Where the session's replies go: the outbox, after the notifications already queued.
  rtnl::SendFn reply_to(Client& c);
  void update_events(Client& c);
  // Backpressure: a client whose replies wait beyond Config::max_outbox_bytes (or
  // kOutboxStop datagrams) is not read until they leave.
  bool outbox_full(const Client& c) const {
    return c.out.size() >= kOutboxStop || c.out.bytes() >= cfg_.max_outbox_bytes;
  }
  // A client on rings whose socket requests' replies wait beyond this is closed.
  bool ring_outbox_over(const Client& c) const {
    return c.out.size() >= kRingOutboxLimit || c.out.bytes() >= 16 * cfg_.max_outbox_bytes;
  }
  // With a state store: commits what it recorded, then sends what was held for the
  // clients meanwhile. Context: the end of each pass of the loop.
  void settle();
  void drop(int fd);
  // Logs why a client that broke the protocol is closed, and closes it (as drop).
  void close_for(Client& c, std::string_view why);
  // Writes `d` to Config::record_dir when set (`dir`: "in" or "out").
  void record(const Client& c, std::span<const std::uint8_t> d, const char* dir);
  std::uint32_t pick_port(pid_t pid);

  Engine& engine_;
  Config cfg_;
  rtnl::Server server_;
  int ep_ = -1, lfd_ = -1, sfd_ = -1, efd_ = -1;
  bool bound_ = false;
  std::map<int, std::unique_ptr<Client>> clients_;
  std::set<std::uint32_t> ports_;
  std::uint32_t next_port_ = 0x80000000u;
  // The kernel network namespace ifcored runs in (its inode; 0 if /proc does not say): a
  // shim's socket in that namespace is served by "default".
  std::uint64_t own_netns_ = 0;
  // Namespaces made by a control message's IFCORE_CTRL_CREATE, and the uid that made them:
  // that peer may change them as root may (Linux: a user owns the network namespaces its
  // user namespace makes, e.g. `unshare -rn`).
  // Keyed by name; the namespace's id tells a namespace made again under the same name
  // (by RTM_NEWNSID, say) from the one the peer made.
  struct Owner {
    uid_t uid;
    int ns_id;
  };
  std::map<std::string, Owner> ns_owner_;
  std::vector<int> dead_;
  int hot_ = -1;  // the client whose datagrams were read last: busy polling asks it first
  std::uint8_t* rbuf_ = nullptr;  // kRecvSlots buffers of kRecvBuffer bytes, mapped lazily
  // recvmmsg(2)'s headers, one per buffer, set once: the kernel only writes msg_len and
  // msg_flags.
  std::array<mmsghdr, kRecvSlots> rmsgs_{};
  std::array<iovec, kRecvSlots> riov_{};
  std::vector<std::uint8_t> ring_in_;     // a request copied out of a request ring
  std::set<int> ring_fds_;                // the clients on mapped rings
  std::uint64_t connections_ = 0;         // connections accepted so far
  std::map<uid_t, std::size_t> per_uid_;  // open connections by peer uid
  std::uint64_t recorded_ = 0;            // datagrams written to Config::record_dir
  // Set by session wakeups (any thread) until the loop pumps: one eventfd write per turn,
  // however many notifications are queued meanwhile.
  std::atomic<bool> wake_pending_{false};
  // Clients whose datagrams wait for the state store's commit (Config::state).
  std::set<int> held_;
  std::optional<Error> state_failed_;
};

Loop::~Loop() {
  for (auto& [fd, c] : clients_) {
    c->session.reset();
    close(fd);
  }
  clients_.clear();
  for (int fd : {lfd_, sfd_, efd_, ep_})
    if (fd >= 0) close(fd);
  if (rbuf_) munmap(rbuf_, kRecvSlots * kRecvBuffer);
  if (bound_) unlink(cfg_.socket_path.c_str());
}

Result<void> Loop::bind_socket() {
  if (cfg_.listen_fd >= 0) {
    // Inherited, already listening (its mode is the unit's SocketMode): made non-blocking
    // like ours, named for the log.
    lfd_ = cfg_.listen_fd;
    int fl = fcntl(lfd_, F_GETFL);
    if (fl < 0 || fcntl(lfd_, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(lfd_, F_SETFD, FD_CLOEXEC) < 0)
      return fail(errno, "inherited socket {}: {}", lfd_, std::strerror(errno));
    sockaddr_un named{};
    socklen_t len = sizeof(named);
    if (getsockname(lfd_, reinterpret_cast<sockaddr*>(&named), &len) == 0 &&
        len > offsetof(sockaddr_un, sun_path) && named.sun_path[0])
      cfg_.socket_path.assign(named.sun_path, strnlen(named.sun_path, sizeof(named.sun_path)));
    return ok();
  }
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (cfg_.socket_path.empty() || cfg_.socket_path.size() >= sizeof(sa.sun_path))
    return fail(ENAMETOOLONG, "socket path \"{}\" is empty or too long", cfg_.socket_path);
  std::strcpy(sa.sun_path, cfg_.socket_path.c_str());
  IFCORE_TRY(check_socket_dir(cfg_.socket_path));
  lfd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (lfd_ < 0) return fail(errno, "socket: {}", std::strerror(errno));
  // bind(2) makes the path appear, and a client that sees it and connects before listen(2)
  // gets ECONNREFUSED: listen comes right after bind (the mode is set once listening).
  auto bind_and_listen = [&]() -> int {
    if (bind(lfd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0) return errno;
    bound_ = true;
    if (listen(lfd_, 128) < 0) return errno;
    return 0;
  };
  int e = bind_and_listen();
  if (e == EADDRINUSE) {
    // A stale socket from a daemon that died is replaced; a live one is left alone.
    int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (probe < 0) return fail(errno, "socket: {}", std::strerror(errno));
    bool live = connect(probe, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0;
    close(probe);
    if (live) return fail(EADDRINUSE, "another daemon serves {}", cfg_.socket_path);
    unlink(cfg_.socket_path.c_str());
    e = bind_and_listen();
  }
  if (e) return fail(e, "bind {}: {}", cfg_.socket_path, std::strerror(e));
  // Anyone may connect and read, as anyone may open a NETLINK_ROUTE socket; changes are
  // authorised per peer (SO_PEERCRED), never by the file's mode.
  if (chmod(cfg_.socket_path.c_str(), 0666) < 0)
    return fail(errno, "chmod {}: {}", cfg_.socket_path, std::strerror(errno));
  return ok();
}

Result<void> Loop::start() {
  // Everything kept is back before a client can connect.
  if (cfg_.state) IFCORE_TRY(cfg_.state->start(engine_, server_));
  IFCORE_TRY(bind_socket());
  ep_ = epoll_create1(EPOLL_CLOEXEC);
  efd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sfd_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (ep_ < 0 || efd_ < 0 || sfd_ < 0)
    return fail(errno, "epoll/eventfd/signalfd: {}", std::strerror(errno));
  void* buf = mmap(nullptr, kRecvSlots * kRecvBuffer, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (buf == MAP_FAILED) return fail(errno, "receive buffer: {}", std::strerror(errno));
  rbuf_ = static_cast<std::uint8_t*>(buf);
  for (unsigned k = 0; k < kRecvSlots; ++k) {
    riov_[k] = {rbuf_ + k * kRecvBuffer, kRecvBuffer};
    rmsgs_[k].msg_hdr.msg_iov = &riov_[k];
    rmsgs_[k].msg_hdr.msg_iovlen = 1;
  }
  for (int fd : {lfd_, efd_, sfd_}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) < 0)
      return fail(errno, "epoll_ctl: {}", std::strerror(errno));
  }
  if (struct stat st{}; stat("/proc/self/ns/net", &st) == 0) own_netns_ = st.st_ino;
  engine_.log(LogLevel::Info, fmt::format("ifcored: listening on {}", cfg_.socket_path));
  return ok();
}

std::uint32_t Loop::pick_port(pid_t pid) {
  // Linux: netlink_autobind tries the process id first, then negative numbers.
  std::uint32_t p = static_cast<std::uint32_t>(pid);
  if (p == 0 || ports_.count(p)) {
    do p = next_port_++;
    while (ports_.count(p) || p == 0);
  }
  return p;
}

Result<void> Loop::open_session(Client& c, const std::string& ns, std::uint32_t port) {
  rtnl::SessionOptions o;
  o.ns = ns;
  bool owns = false;
  if (auto owner = ns_owner_.find(ns);
      owner != ns_owner_.end() && owner->second.uid == c.cred.uid) {
    Namespace* n = engine_.control().find_namespace(ns);
    owns = n && n->id() == owner->second.ns_id;
  }
  o.may_write = c.may_write || owns;
  o.may_write_elsewhere = c.may_write;
  o.port_id = port;
  o.max_queued = cfg_.max_queued;
  o.max_queued_bytes = cfg_.max_queued_bytes;
  o.datagram_size = cfg_.datagram_size;
  o.dump_chunk_bytes = cfg_.dump_part_bytes;
  auto s = server_.open_session(o);
  if (!s) return fail(s.error());
  int efd = efd_;
  std::atomic<bool>* pending = &wake_pending_;
  (*s)->set_wakeup([efd, pending] {
    if (pending->exchange(true, std::memory_order_acq_rel)) return;  // a wakeup is on its way
    std::uint64_t one = 1;
    (void)!write(efd, &one, sizeof(one));
  });
  // Replay what the client asked of its previous session.
  (*s)->set_group_mask(static_cast<std::uint32_t>(c.groups));
  for (unsigned g = 33; g <= 64; ++g)
    if ((c.groups >> (g - 1)) & 1) (*s)->add_membership(g);
  for (auto [name, value] : c.options)
    (*s)->set_option(static_cast<int>(name), static_cast<int>(value));
  c.session = std::move(*s);
  c.session_may_write = o.may_write;
  c.ns = ns;
  c.port_id = port;
  return ok();
}

void Loop::accept_clients() {
  for (;;) {
    int fd = accept4(lfd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    auto c = std::make_unique<Client>();
    c->serial = ++connections_;
    c->fd = fd;
    socklen_t len = sizeof(c->cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0) {
      close(fd);
      continue;
    }
    std::size_t& conns = per_uid_[c->cred.uid];
    if (cfg_.max_connections_per_uid && conns >= cfg_.max_connections_per_uid) {
      // Closed at once: the peer reads the end of the connection.
      engine_.log(LogLevel::Warning,
                  fmt::format("ifcored: uid {} (pid {}) has {} connections, the limit of "
                              "--max-connections-per-uid; refusing another",
                              c->cred.uid, c->cred.pid, conns));
      close(fd);
      continue;
    }
    c->may_write = c->cred.uid == 0 || (cfg_.write_group && in_group(c->cred, *cfg_.write_group));
    std::uint32_t port = pick_port(c->cred.pid);
    if (!open_session(*c, "default", port)) {
      if (conns == 0) per_uid_.erase(c->cred.uid);
      close(fd);
      continue;
    }
    c->events = EPOLLIN;
    epoll_event ev{};
    ev.events = c->events;
    ev.data.fd = fd;
    if (epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) < 0) {
      // Not watched, it would never be served: refused like a client over a limit.
      engine_.log(LogLevel::Warning,
                  fmt::format("ifcored: epoll_ctl for a new client: {}", std::strerror(errno)));
      c->session.reset();
      if (conns == 0) per_uid_.erase(c->cred.uid);
      close(fd);
      continue;
    }
    ports_.insert(port);
    ++conns;
    clients_[fd] = std::move(c);
  }
}

void Loop::drop(int fd) {
  dead_.push_back(fd);
}

void Loop::close_for(Client& c, std::string_view why) {
  engine_.log(LogLevel::Warning, fmt::format("ifcored: client {}: {}; closing it", c.port_id, why));
  drop(c.fd);
}

void Loop::update_events(Client& c) {
  std::uint32_t want = 0;
  if (c.ring) {
    // The socket brings doorbells and control messages: always read. Backpressure is on the
    // request ring, which is not read while the outbox is full.
    want = EPOLLIN;
    if (c.socket_full || (c.out.empty() && c.dumping())) want |= EPOLLOUT;
  } else {
    // A client's requests wait while its dump goes out, so that replies keep their order.
    if (!outbox_full(c) && !c.dumping()) want |= EPOLLIN;
    if (!c.out.empty() || c.dumping()) want |= EPOLLOUT;
  }
  if (want == c.events) return;
  c.events = want;
  epoll_event ev{};
  ev.events = want;
  ev.data.fd = c.fd;
  if (epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev) < 0)
    close_for(c, fmt::format("epoll_ctl: {}", std::strerror(errno)));
}

void Loop::flush(Client& c) {
  // Acknowledged means durable: nothing leaves while a recorded change is not committed
  // (settle() sends it after the commit that ends the loop's pass).
  if (cfg_.state && cfg_.state->dirty()) {
    held_.insert(c.fd);
    return;
  }
  if (c.ring) return flush_ring(c);
  if (!send_outbox(c)) return;
  // One turn of the client's dump at most: the next turn comes with EPOLLOUT, after the
  // other clients had theirs.
  if (feed_dump(c) && !send_outbox(c)) return;
  update_events(c);
}

bool Loop::feed_dump(Client& c) {
  if (!c.out.empty() || !c.dumping()) return false;
  rtnl::SendFn send = reply_to(c);
  for (int part = 0; part < kDumpPartsPerTurn && c.dumping() && !outbox_full(c); ++part) {
    if (c.session->dump_pending()) {
      c.session->continue_dump(send);
      continue;
    }
    handle_datagram(c, c.after_dump.front());
    c.after_dump.pop_front();
  }
  return true;
}

rtnl::SendFn Loop::reply_to(Client& c) {
  return [this, &c](rtnl::Datagram&& d) {
    collect(c);
    c.out.push_back(std::move(d));
  };
}

bool Loop::send_outbox(Client& c) {
  // One sendmmsg(2) for up to kSendBatch datagrams; SOCK_SEQPACKET keeps each one whole.
  std::array<mmsghdr, kSendBatch> msgs;
  std::array<iovec, kSendBatch> iov;
  while (!c.out.empty()) {
    unsigned k = 0;
    for (auto it = c.out.begin(); it != c.out.end() && k < kSendBatch; ++it, ++k) {
      iov[k] = {it->data(), it->size()};
      msgs[k] = {};
      msgs[k].msg_hdr.msg_iov = &iov[k];
      msgs[k].msg_hdr.msg_iovlen = 1;
    }
    int n = sendmmsg(c.fd, msgs.data(), k, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      drop(c.fd);
      return false;
    }
    if (!cfg_.record_dir.empty())
      for (int i = 0; i < n; ++i) record(c, c.out[static_cast<std::size_t>(i)], "out");
    c.out.erase_front(static_cast<std::size_t>(n));
    if (static_cast<unsigned>(n) < k) break;  // the peer's queue is full
  }
  return true;
}

void Loop::doorbell(Client& c) {
  // EAGAIN: the socket holds doorbells the client has not read yet; one is enough.
  (void)!send(c.fd, &rtnl::kDoorbell, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

void Loop::flush_ring(Client& c) {
  bool wrote = false;
  c.socket_full = false;
  for (bool fed = false;; fed = true) {  // one turn of the client's dump at most, as flush
    while (!c.out.empty()) {
      const rtnl::Datagram& d = c.out.front();
      const bool big = d.size() > c.ring->max_datagram();
      Result<bool> r = false;
      if (!big) {
        r = c.ring->push(d);
      } else if (c.ring->fits(0)) {
        // Too large for the ring: the datagram goes on the socket and a socket record keeps
        // its place in the ring (it fits: checked above, and only this thread writes).
        if (send(c.fd, d.data(), d.size(), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
          if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return drop(c.fd);
          c.socket_full = true;
          break;
        }
        r = c.ring->push_socket_record();
      }
      if (!r)
        return close_for(c, fmt::format("{}: {}", errno_name(r.error().code), r.error().message));
      if (!*r) {
        // Full: the client rings the doorbell once it has read (unless room appeared).
        if (c.ring->prepare_wait_room(big ? 0 : d.size())) break;
        continue;
      }
      wrote = true;
      record(c, d, "out");
      c.out.pop_front();
    }
    if (fed || !feed_dump(c)) break;
  }
  if (wrote && c.ring->take_peer_asleep()) doorbell(c);
  update_events(c);
}

void Loop::collect(Client& c) {
  // Linux: a socket whose receive queue overflowed gets ENOBUFS from its next recvmsg; the
  // messages already queued stay readable after it.
  if (c.session->take_overflow()) c.out.push_back(rtnl::overflow_datagram());
  rtnl::Datagram d;
  while (c.out.size() < kOutboxHigh && c.session->pop_notification(d))
    c.out.push_back(std::move(d));
}

void Loop::pump(Client& c) {
  for (;;) {
    collect(c);
    std::size_t before = c.out.size();
    flush(c);
    // Everything went out and the queue may hold more: go on (no wakeup comes for
    // notifications queued while one was pending). Otherwise EPOLLOUT resumes.
    if (before < kOutboxHigh || !c.out.empty()) break;
  }
}

wire::AckOptions Loop::ack_options(const Client& c) const {
  auto on = [&c](std::uint32_t name) {
    auto it = c.options.find(name);
    return it != c.options.end() && it->second != 0;
  };
  wire::AckOptions ack;
  ack.cap_ack = on(NETLINK_CAP_ACK);
  ack.ext_ack = on(NETLINK_EXT_ACK);
  return ack;
}

void Loop::answer_error(Client& c, std::span<const std::uint8_t> request, const Error& e,
                        const wire::AckOptions& ack) {
  wire::MessageBuilder b;
  if (wire::encode_error(b, request, c.port_id, e, ack)) c.out.push_back(b.take());
}

void Loop::handle_control(Client& c, std::span<const std::uint8_t> dg) {
  wire::AckOptions ack = ack_options(c);  // errors are answered as the options were
  auto msgs = wire::split_messages(dg);
  if (!msgs || msgs->size() != 1) {
    // A control message that does not parse is answered, not dropped: the client waits for
    // its reply. The error echoes the datagram's first header.
    Error e = msgs ? Error{EINVAL, "a control message must be alone in its datagram"}
                   : Error{EINVAL, "malformed control message: " + msgs.error().message};
    return answer_error(c, dg, e, ack);
  }
  const wire::Message& m = (*msgs)[0];
  auto answer = [&](const Error& e) { answer_error(c, m.bytes, e, ack); };
  auto req = rtnl::decode_control_request(m);
  if (!req) return answer(req.error());
  // The rings are made first, so that a refusal changes nothing.
  std::optional<rtnl::MappedRings> rings;
  if (req->ring) {
    if (c.ring) return answer(Error{EBUSY, "the connection uses mapped rings already"});
    auto r = rtnl::MappedRings::create(*req->ring ? *req->ring : rtnl::kRingDefaultSize);
    if (!r) return answer(r.error());
    rings.emplace(std::move(*r));
  }
  std::string ns = req->ns.value_or(c.ns);
  if (req->netns_inode && own_netns_ && *req->netns_inode == own_netns_) ns = "default";
  std::uint32_t port = c.port_id;
  if (req->port_id && *req->port_id != c.port_id) {
    if (*req->port_id == 0 || ports_.count(*req->port_id))
      return answer(Error{EADDRINUSE, fmt::format("port id {} is in use", *req->port_id)});
    port = *req->port_id;
  }
  // Made last among the checks, so that a refused request makes no namespace.
  if (req->create && ns != c.ns) {
    auto ctl = engine_.control();
    if (!ctl.find_namespace(ns)) {
      auto made = ctl.create_namespace(ns);
      if (!made) return answer(made.error());
      ns_owner_[ns] = Owner{c.cred.uid, (*made)->id()};
    }
  }
  if (req->groups) c.groups = (c.groups & ~std::uint64_t{0xffffffff}) | *req->groups;
  for (auto g : req->add_membership)
    if (g >= 1 && g <= 64) c.groups |= std::uint64_t{1} << (g - 1);
  for (auto g : req->drop_membership)
    if (g >= 1 && g <= 64) c.groups &= ~(std::uint64_t{1} << (g - 1));
  for (auto [name, value] : req->options) {
    if (name == NETLINK_ADD_MEMBERSHIP && value >= 1 && value <= 64)
      c.groups |= std::uint64_t{1} << (value - 1);
    else if (name == NETLINK_DROP_MEMBERSHIP && value >= 1 && value <= 64)
      c.groups &= ~(std::uint64_t{1} << (value - 1));
    else
      c.options[name] = value;
  }
  if (ns != c.ns || port != c.port_id) {
    std::uint32_t old = c.port_id;
    auto r = open_session(c, ns, port);
    if (!r) return answer(r.error());
    ports_.erase(old);
    ports_.insert(port);
  } else {
    // Same session: apply the changes in place.
    c.session->set_group_mask(static_cast<std::uint32_t>(c.groups));
    for (unsigned g = 33; g <= 64; ++g)
      ((c.groups >> (g - 1)) & 1) ? c.session->add_membership(g) : c.session->drop_membership(g);
    for (auto [name, value] : c.options)
      c.session->set_option(static_cast<int>(name), static_cast<int>(value));
  }
  ack = ack_options(c);
  rtnl::ControlState st{c.port_id,
                        c.ns,
                        static_cast<std::uint32_t>(c.groups),
                        c.session_may_write,
                        c.ring  ? c.ring->size()
                        : rings ? rings->size()
                                : 0,
                        own_netns_};
  if (req->quiet && !rings) {
    if (m.hdr.nlmsg_flags & NLM_F_ACK) answer(Error{});
    return;
  }
  wire::MessageBuilder b;
  if (!rtnl::encode_control_state(b, m.hdr.nlmsg_seq, c.port_id, st)) return;
  if (rings) return switch_to_rings(c, m, b.take(), std::move(*rings));
  c.out.push_back(b.take());
  if (m.hdr.nlmsg_flags & NLM_F_ACK) answer(Error{});
}

void Loop::switch_to_rings(Client& c, const wire::Message& req, rtnl::Datagram state,
                           rtnl::MappedRings rings) {
  // The reply carries the ring file (SCM_RIGHTS) and goes on the socket after every earlier
  // datagram; from the next datagram on, everything for the client goes through the rings.
  auto answer = [&](const Error& e) { answer_error(c, req.bytes, e, ack_options(c)); };
  settle();
  flush(c);
  if (!c.out.empty())
    return answer(Error{EAGAIN, "the connection's socket is full: read it, then ask again"});
  if (auto r = rtnl::send_with_fd(c.fd, state, rings.fd(), MSG_DONTWAIT | MSG_NOSIGNAL); !r)
    return answer(Error{r.error().code, "cannot pass the ring file: " + r.error().message});
  if (req.hdr.nlmsg_flags & NLM_F_ACK) {
    answer(Error{});
    flush(c);
  }
  c.ring.emplace(std::move(rings));
  ring_fds_.insert(c.fd);
  update_events(c);
}

void Loop::record(const Client& c, std::span<const std::uint8_t> d, const char* dir) {
  if (cfg_.record_dir.empty()) return;
  std::string path =
      fmt::format("{}/{:08}-c{}-{}.bin", cfg_.record_dir, ++recorded_, c.serial, dir);
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    if (!d.empty()) (void)!std::fwrite(d.data(), 1, d.size(), f);
    std::fclose(f);
  }
}

void Loop::handle_datagram(Client& c, std::span<const std::uint8_t> dg) {
  record(c, dg, "in");
  collect(c);  // a pending ENOBUFS goes before the replies
  nlmsghdr h{};
  if (dg.size() >= sizeof(h)) std::memcpy(&h, dg.data(), sizeof(h));
  if (dg.size() >= sizeof(h) && h.nlmsg_type == rtnl::IFCORE_NLMSG_CONTROL) {
    handle_control(c, dg);
  } else {
    // Notifications the request caused go before its replies, as on Linux, where
    // rtnl_notify queues them on a listening socket before netlink_ack queues the ACK.
    c.session->handle(dg, reply_to(c));
  }
}

int Loop::read_some(Client& c) {
  int got = read_socket(c);
  if (c.ring) got += read_ring(c);
  return got;
}

int Loop::read_ring(Client& c) {
  // Requests from the ring, as read_socket reads them from the socket, with no syscall: a
  // lone request's reply is pushed at once, the rest at the end.
  int got = 0;
  while (got < kReadBudget && !outbox_full(c) && !c.dumping()) {
    auto p = c.ring->pop(ring_in_);
    if (p && *p == rtnl::MappedRings::Popped::OnSocket)
      p = fail(EPROTO, "ring: a socket record in the request ring");
    if (!p) {
      close_for(c, fmt::format("{}: {}", errno_name(p.error().code), p.error().message));
      break;
    }
    if (*p == rtnl::MappedRings::Popped::Empty) break;
    ++got;
    handle_datagram(c, ring_in_);
    if (got == 1 || c.out.size() >= kSendBatch) flush(c);
  }
  if (got > 0) {
    if (c.ring->take_peer_wants_room()) doorbell(c);
    flush(c);
    hot_ = c.fd;
  }
  return got;
}

int Loop::read_socket(Client& c) {
  // Reads what the client queued, up to a budget (other clients get their turn), up to
  // kRecvSlots datagrams per recvmmsg(2). The first read of a turn takes one datagram, and
  // its reply leaves at once: a lone request (as `ip` sends them) is answered with no
  // syscall in between, not even the look for a second datagram that a longer read makes
  // before it returns. The rest leave in batches, at the latest when the client has nothing
  // more queued.
  auto& msgs = rmsgs_;
  int got = 0;   // requests handled
  int seen = 0;  // datagrams read, doorbells too: the budget counts them all
  // A client on rings is always read: its socket brings doorbells (and little else).
  // A client's requests wait while its dump goes out (those read with the dump's request
  // wait in after_dump). A client on rings is read for its doorbells, up to a bound.
  auto may_read = [&] {
    if (c.ring) return !ring_outbox_over(c) && c.after_dump.size() < kOutboxStop;
    return !outbox_full(c) && !c.dumping();
  };
  while (seen < kReadBudget && may_read()) {
    const unsigned slots = seen == 0 ? 1 : kRecvSlots;
    int n = recvmmsg(c.fd, msgs.data(), slots, MSG_DONTWAIT | MSG_TRUNC, nullptr);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) drop(c.fd);
      break;
    }
    seen += n;
    bool eof = false;
    for (int k = 0; k < n; ++k) {
      std::uint8_t* buf = rbuf_ + static_cast<std::size_t>(k) * kRecvBuffer;
      std::size_t len = msgs[k].msg_len;
      if (len == 0) {
        // An empty datagram, or the end of the connection: both read as 0 bytes. Linux
        // ignores an empty netlink datagram (netlink_rcv_skb finds no message in it) and
        // keeps the socket, so only a peer that is gone ends the connection.
        bool later_data = false;
        for (int j = k + 1; j < n; ++j) later_data |= msgs[j].msg_len > 0;
        if (!later_data && peer_closed(c.fd)) {
          eof = true;
          break;
        }
        continue;
      }
      if (len > kRecvBuffer || (msgs[k].msg_hdr.msg_flags & MSG_TRUNC)) {
        // Cannot happen on Linux (see kRecvBuffer); answered as Linux answers a message
        // larger than the socket accepts, and never half-read.
        nlmsghdr h{};
        std::memcpy(&h, buf, sizeof(h));
        wire::MessageBuilder b;
        wire::AckOptions ack{true, false};
        if (wire::encode_error(
                b, std::span<const std::uint8_t>(buf, sizeof(h)), c.port_id,
                Error{EMSGSIZE, fmt::format("datagram of {} bytes exceeds {}", len, kRecvBuffer)},
                ack))
          c.out.push_back(b.take());
        continue;
      }
      if (c.ring && len == 1 && buf[0] == rtnl::kDoorbell) continue;
      ++got;
      if (c.dumping())
        c.after_dump.emplace_back(buf, buf + len);
      else
        handle_datagram(c, {buf, len});
      if (len > kRecvKeep) madvise(buf + kRecvKeep, len - kRecvKeep, MADV_DONTNEED);
      if (got == 1 || c.out.size() >= kSendBatch) flush(c);
    }
    if (eof) {
      drop(c.fd);
      break;
    }
    if (static_cast<unsigned>(n) < slots) break;  // the queue is empty
  }
  flush(c);
  if (got > 0) hot_ = c.fd;
  if (c.ring && ring_outbox_over(c))
    close_for(c, fmt::format("{} replies of {} bytes unread", c.out.size(), c.out.bytes()));
  return got;
}

void Loop::on_client(Client& c, std::uint32_t ev) {
  if (ev & EPOLLOUT) {
    flush(c);
    pump(c);
  }
  if (ev & EPOLLIN)
    read_some(c);
  else if (ev & (EPOLLHUP | EPOLLERR))
    drop(c.fd);
}

bool Loop::rings_allow_sleep() {
  bool may = true;
  for (int fd : ring_fds_)
    if (!clients_.at(fd)->ring->prepare_sleep()) may = false;
  if (!may) rings_awake();
  return may;
}

void Loop::rings_awake() {
  for (int fd : ring_fds_) clients_.at(fd)->ring->awake();
}

int Loop::poll_rings() {
  int got = 0;
  for (int fd : ring_fds_) {
    Client& c = *clients_.at(fd);
    if (c.ring->readable()) got += read_ring(c);
  }
  return got;
}

void Loop::settle() {
  if (!cfg_.state) return;
  if (cfg_.state->dirty() && !state_failed_) {
    if (auto r = cfg_.state->commit(); !r) {
      // Nothing held is sent: its changes may not be durable.
      engine_.log(LogLevel::Error, fmt::format("ifcored: state: {}; stopping", r.error().message));
      state_failed_ = r.error();
      return;
    }
  }
  if (state_failed_) return;
  auto held = std::move(held_);
  held_.clear();
  // pump, not flush: a client held while its session queued more notifications than one
  // turn collects gets the rest now (no other wakeup would come for them).
  for (int fd : held)
    if (auto it = clients_.find(fd); it != clients_.end()) pump(*it->second);
}

void Loop::reap() {
  settle();
  for (int fd : dead_) {
    auto it = clients_.find(fd);
    if (it == clients_.end()) continue;
    ports_.erase(it->second->port_id);
    if (auto u = per_uid_.find(it->second->cred.uid); u != per_uid_.end() && --u->second == 0)
      per_uid_.erase(u);
    ring_fds_.erase(fd);
    if (epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr) < 0 && errno != ENOENT)
      engine_.log(LogLevel::Warning, fmt::format("ifcored: epoll_ctl for client {}: {}",
                                                 it->second->port_id, std::strerror(errno)));
    it->second->session.reset();
    close(fd);
    clients_.erase(it);
    if (hot_ == fd) hot_ = -1;
  }
  dead_.clear();
}

Result<void> Loop::run() {
  using Clock = std::chrono::steady_clock;
  // While busy polling, three turns in four ask the client served last for its next
  // request directly; the fourth, and any turn after a session wakeup, asks epoll for
  // everyone (other clients, new connections, session wakeups, signals), looks at every
  // client's rings and yields the CPU.
  constexpr unsigned kEpollEvery = 4;
  // A client on rings is asked without a syscall (a few loads), for 50 µs between two
  // turns through epoll, however many of its requests those turns serve (against 10 µs,
  // seed 4's 100 creates on rings took 10% less time, in alternating runs).
  constexpr auto kEpollEveryRing = std::chrono::microseconds(50);
  // For 5 µs after serving, those loads are all a turn does; after that a turn that found
  // nothing also yields the CPU, to a client that shares it (a loaded machine) or to the
  // daemon's other threads.
  constexpr auto kRingPureSpin = std::chrono::microseconds(5);
  std::vector<epoll_event> evs(64);
  const bool busy = cfg_.busy_poll.count() > 0;
  Clock::time_point spin_until{}, last_epoll{};
  unsigned turn = 0;
  for (;;) {
    if (state_failed_) return fail(*state_failed_);
    // Busy polling: for a short while after serving, look for the next request without
    // sleeping, as Linux's busy_poll does for sockets. A client that sends its next request
    // within the window is served without the wakeup of a sleeping thread, which on a
    // virtual machine costs tens of µs. Asking the last client with recvmmsg(2) rather than
    // epoll_wait(2) reads its request in the same call that finds it.
    const auto now = Clock::now();
    bool spin = busy && now < spin_until;
    // A session wakeup (notifications for some client) goes through epoll at once, so
    // that notifications reach their sockets as promptly as without busy polling.
    auto hot = spin && hot_ >= 0 ? clients_.find(hot_) : clients_.end();
    const bool hot_ring = hot != clients_.end() && hot->second->ring;
    const bool direct = hot_ring ? now - last_epoll < kEpollEveryRing
                                 : hot != clients_.end() && ++turn % kEpollEvery != 0;
    if (direct && !wake_pending_.load(std::memory_order_acquire)) {
      if ((hot_ring ? read_ring(*hot->second) : read_some(*hot->second)) > 0)
        spin_until = Clock::now() + cfg_.busy_poll;
      else if (hot_ring && now > spin_until - cfg_.busy_poll + kRingPureSpin)
        sched_yield();
      reap();
      continue;
    }
    // Before sleeping, clients on rings are told, so that their next request rings the
    // doorbell; one that has a request waiting already is served instead.
    if (!spin && !rings_allow_sleep()) {
      poll_rings();
      reap();
      if (busy) spin_until = Clock::now() + cfg_.busy_poll;
      continue;
    }
    int n = epoll_wait(ep_, evs.data(), static_cast<int>(evs.size()), spin ? 0 : -1);
    last_epoll = Clock::now();
    if (!spin) rings_awake();
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno, "epoll_wait: {}", std::strerror(errno));
    }
    // Clients on rings that are not the hot one have no event to show. Requests served
    // here open a busy-poll window as any others do: a turn that served the last of a
    // pipelined batch and then slept had the client's next request wait for the thread's
    // wakeup (the sweep's group delete of 100 devices on rings: 150-250 µs against 40-50).
    if (poll_rings() > 0 && busy) spin_until = Clock::now() + cfg_.busy_poll;
    if (n == 0) {
      reap();
      sched_yield();
      continue;
    }
    for (int i = 0; i < n; ++i) {
      int fd = evs[i].data.fd;
      if (fd == sfd_) {
        signalfd_siginfo si;
        (void)!read(sfd_, &si, sizeof(si));
        engine_.log(LogLevel::Info, "ifcored: shutting down");
        settle();
        if (state_failed_) return fail(*state_failed_);
        if (cfg_.state) IFCORE_TRY(cfg_.state->stop());
        return ok();
      } else if (fd == lfd_) {
        accept_clients();
      } else if (fd == efd_) {
        std::uint64_t v;
        (void)!read(efd_, &v, sizeof(v));
        wake_pending_.store(false, std::memory_order_release);
        for (auto& [cfd, c] : clients_) pump(*c);
      } else if (auto it = clients_.find(fd); it != clients_.end()) {
        on_client(*it->second, evs[i].events);
      }
    }
    reap();
    if (busy) spin_until = Clock::now() + cfg_.busy_poll;
  }
}

}  // namespace

std::string default_socket_path() {
  if (geteuid() == 0) return "/run/ifcore/ifcore.sock";
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x)
    return std::string(x) + "/ifcore.sock";
  return "/tmp/ifcore-" + std::to_string(geteuid()) + ".sock";
}

void block_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

Result<void> serve(Engine& engine, const Config& cfg) {
  Loop loop(engine, cfg);
  IFCORE_TRY(loop.start());
  return loop.run();
}

}  // namespace ifcore::daemon
