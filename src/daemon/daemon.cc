// daemon/daemon.cc — the epoll loop (daemon/loop.h): the listening socket, accepting and
// authorising (SO_PEERCRED) clients, the main loop with its busy polling, committing the
// state before replies leave, reaping closed clients, and shutdown on SIGTERM/SIGINT (the
// socket unlinked).
#include "daemon/loop.h"

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

}  // namespace

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
  // gets ECONNREFUSED: listen comes right after bind, and the mode is set between them, so
  // that a client that can connect finds it set. Anyone may connect and read, as anyone
  // may open a NETLINK_ROUTE socket; changes are authorised per peer (SO_PEERCRED), never
  // by the file's mode.
  const char* step = "bind";
  auto bind_and_listen = [&]() -> int {
    step = "bind";
    if (bind(lfd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0) return errno;
    bound_ = true;
    step = "chmod";
    if (chmod(cfg_.socket_path.c_str(), 0666) < 0) return errno;
    step = "listen";
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
  if (e) return fail(e, "{} {}: {}", step, cfg_.socket_path, std::strerror(e));
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

bool Loop::serve_hot(Clock::time_point now, Spin& spin) {
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
  // A session wakeup (notifications for some client) goes through epoll at once, so that
  // notifications reach their sockets as promptly as without busy polling.
  auto hot = hot_ >= 0 ? clients_.find(hot_) : clients_.end();
  if (hot == clients_.end() || wake_pending_.load(std::memory_order_acquire)) return false;
  Client& c = *hot->second;
  const bool ring = c.ring.has_value();
  const bool direct =
      ring ? now - spin.last_epoll < kEpollEveryRing : ++spin.turn % kEpollEvery != 0;
  if (!direct) return false;
  if ((ring ? read_ring(c) : read_some(c)) > 0)
    served(spin);
  else if (ring && now > spin.until - cfg_.busy_poll + kRingPureSpin)
    sched_yield();
  reap();
  return true;
}

void Loop::dispatch(const epoll_event& ev) {
  int fd = ev.data.fd;
  if (fd == lfd_) {
    accept_clients();
  } else if (fd == efd_) {
    std::uint64_t v;
    (void)!read(efd_, &v, sizeof(v));
    wake_pending_.store(false, std::memory_order_release);
    for (auto& [cfd, c] : clients_) pump(*c);
  } else if (auto it = clients_.find(fd); it != clients_.end()) {
    on_client(*it->second, ev.events);
  }
}

Result<void> Loop::shut_down() {
  signalfd_siginfo si;
  (void)!read(sfd_, &si, sizeof(si));
  engine_.log(LogLevel::Info, "ifcored: shutting down");
  settle();
  if (state_failed_) return fail(*state_failed_);
  if (cfg_.state) IFCORE_TRY(cfg_.state->stop());
  return ok();
}

Result<void> Loop::run() {
  std::vector<epoll_event> evs(64);
  Spin spin;
  for (;;) {
    if (state_failed_) return fail(*state_failed_);
    // Busy polling: for a short while after serving, look for the next request without
    // sleeping, as Linux's busy_poll does for sockets. A client that sends its next request
    // within the window is served without the wakeup of a sleeping thread, which on a
    // virtual machine costs tens of µs. Asking the last client with recvmmsg(2) rather than
    // epoll_wait(2) reads its request in the same call that finds it.
    const auto now = Clock::now();
    const bool spinning = cfg_.busy_poll.count() > 0 && now < spin.until;
    if (spinning && serve_hot(now, spin)) continue;
    // Before sleeping, clients on rings are told, so that their next request rings the
    // doorbell; one that has a request waiting already is served instead.
    if (!spinning && !rings_allow_sleep()) {
      poll_rings();
      reap();
      served(spin);
      continue;
    }
    // A sleep with big datagrams' pages committed ends after kRecvTrimAfterMs to give them
    // back, if nothing came in the meantime.
    const bool trim = !spinning && rbuf_used_ > kRecvKeep;
    int n = epoll_wait(ep_, evs.data(), static_cast<int>(evs.size()),
                       spinning ? 0
                       : trim   ? kRecvTrimAfterMs
                                : -1);
    spin.last_epoll = Clock::now();
    if (!spinning) rings_awake();
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno, "epoll_wait: {}", std::strerror(errno));
    }
    // Clients on rings that are not the hot one have no event to show. Requests served
    // here open a busy-poll window as any others do: a turn that served the last of a
    // pipelined batch and then slept had the client's next request wait for the thread's
    // wakeup (the sweep's group delete of 100 devices on rings: 150-250 µs against 40-50).
    if (poll_rings() > 0) served(spin);
    if (n == 0) {
      if (trim) {
        trim_receive_buffers();
        continue;
      }
      reap();
      sched_yield();
      continue;
    }
    for (int i = 0; i < n; ++i) {
      if (evs[i].data.fd == sfd_) return shut_down();
      dispatch(evs[i]);
    }
    reap();
    served(spin);
  }
}

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
