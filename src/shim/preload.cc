// shim/preload.cc — libifcore-preload.so's interposers for the socket calls. Each looks its
// descriptor up in the table of redirected sockets (sockets.h) and, for anything else,
// calls the C library's own function untouched.
//
// Covered for NETLINK_ROUTE sockets: socket, bind, connect, getsockname, getpeername,
// getsockopt/setsockopt (SOL_NETLINK options, SO_TYPE/SO_DOMAIN/SO_PROTOCOL answered as a
// netlink socket would, the rest passed to the unix socket), send/sendto/sendmsg,
// recv/recvfrom/recvmsg, close, dup/dup2/dup3, fcntl(F_DUPFD*), and poll/ppoll/select/
// pselect (and epoll, epoll.cc) for datagrams held back during a control exchange.
// Everything else (read, write, fork, exec) works on the unix socket as it is.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/mount.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rtnl/wire/nsid.h"
#include "shim/epoll.h"
#include "shim/real.h"
#include "shim/sockets.h"
#include "shim/translate.h"

using ifcore::shim::NetlinkSocket;
using ifcore::shim::table;
namespace real = ifcore::shim::real;

namespace {

int fail_errno(int e) {
  errno = e;
  return -1;
}

// The socket behind `fd`, knowing its state (a socket inherited over exec is asked once).
std::shared_ptr<NetlinkSocket> lookup(int fd) {
  auto s = table().find(fd);
  if (s && !s->state_known) {
    ifcore::MutexLock lock(s->mu);
    if (!s->state_known) (void)ifcore::shim::control_exchange(fd, *s, {});
  }
  return s;
}

// Sends a quiet control request for `s`; errno on failure.
int control(int fd, NetlinkSocket& s, const ifcore::rtnl::ControlRequest& req) {
  auto r = ifcore::shim::control_send(fd, s, req);
  return r ? 0 : fail_errno(r.error().code);
}

// fcntl(2) with its argument read: F_DUPFD and F_DUPFD_CLOEXEC copy a redirected socket.
int fcntl_arg(int fd, int cmd, void* arg) {
  int n = real::fn().fcntl(fd, cmd, arg);
  if (n >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && !table().empty()) table().copy(fd, n);
  return n;
}

// A msghdr over one buffer (send, sendto, recv, recvfrom).
msghdr one_buffer(iovec& iov, void* name = nullptr, socklen_t namelen = 0) {
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_name = name;
  m.msg_namelen = namelen;
  return m;
}

// Writes a netlink address as getsockname(2) does: truncated to the caller's room, with
// its full length in *len.
int copy_out_address(sockaddr* addr, socklen_t* len, std::uint32_t port, std::uint32_t groups) {
  if (!addr || !len) return fail_errno(EFAULT);
  sockaddr_nl a{};
  a.nl_family = AF_NETLINK;
  a.nl_pid = port;
  a.nl_groups = groups;
  std::memcpy(addr, &a, std::min<std::size_t>(*len, sizeof(a)));
  *len = sizeof(a);
  return 0;
}

// The SOL_NETLINK options that are an on/off switch (Linux: netlink_setsockopt).
bool is_flag_option(int name) {
  switch (name) {
    case NETLINK_PKTINFO:
    case NETLINK_BROADCAST_ERROR:
    case NETLINK_NO_ENOBUFS:
    case NETLINK_LISTEN_ALL_NSID:
    case NETLINK_CAP_ACK:
    case NETLINK_EXT_ACK:
    case NETLINK_GET_STRICT_CHK:
      return true;
    default:
      return false;
  }
}

int copy_out_int(void* optval, socklen_t* optlen, int v) {
  if (!optval || !optlen || *optlen < sizeof(int)) return fail_errno(EINVAL);
  std::memcpy(optval, &v, sizeof(int));
  *optlen = sizeof(int);
  return 0;
}

// Library constructor: descriptors inherited over exec that are connections to ifcored
// are netlink sockets of the program that exec'd us.
__attribute__((constructor)) void adopt_inherited_sockets() {
  (void)real::fn();
  DIR* d = opendir("/proc/self/fd");
  if (!d) return;
  int self = dirfd(d);
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (!end || *end || fd == self || fd < 0) continue;
    if (auto s = ifcore::shim::adopt_inherited(static_cast<int>(fd)))
      table().insert(static_cast<int>(fd), s);
  }
  closedir(d);
}

// NAME when `path` is /run/netns/NAME, or /var/run/netns/NAME (/var/run is /run: pyroute2
// names the namespaces' files so).
std::optional<std::string> netns_name(const char* path) {
  if (!path) return std::nullopt;
  std::string_view p(path);
  if (p.substr(0, 9) == "/var/run/") p.remove_prefix(4);
  constexpr std::string_view dir("/run/netns/");
  if (p.substr(0, dir.size()) != dir) return std::nullopt;
  std::string_view name = p.substr(dir.size());
  if (name.empty() || name.find('/') != std::string_view::npos || name == "." || name == "..")
    return std::nullopt;
  return std::string(name);
}

// Destroys ifcore's namespace NAME (RTM_DELNSID by name, ifcore's extension), if it exists.
void destroy_namespace(const std::string& name) {
  std::vector<std::uint8_t> req(NLMSG_SPACE(sizeof(rtgenmsg)));
  nlmsghdr h{};
  h.nlmsg_type = RTM_DELNSID;
  h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  std::memcpy(req.data(), &h, sizeof(h));
  nlattr a{static_cast<std::uint16_t>(NLA_HDRLEN + name.size() + 1),
           ifcore::wire::IFCORE_NETNSA_NAME};
  std::size_t at = req.size();
  req.resize(at + NLA_ALIGN(a.nla_len));
  std::memcpy(req.data() + at, &a, sizeof(a));
  std::memcpy(req.data() + at + NLA_HDRLEN, name.c_str(), name.size() + 1);
  h.nlmsg_len = static_cast<std::uint32_t>(req.size());
  std::memcpy(req.data(), &h, sizeof(h));
  (void)ifcore::shim::transact_in("default", false, req);
}

}  // namespace

// The library is built with hidden visibility: only these are exported.
#pragma GCC visibility push(default)
extern "C" {

int socket(int domain, int type, int protocol) {
  if (domain != AF_NETLINK || protocol != NETLINK_ROUTE)
    return real::fn().socket(domain, type, protocol);
  int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (base != SOCK_RAW && base != SOCK_DGRAM) return fail_errno(ESOCKTNOSUPPORT);
  std::shared_ptr<NetlinkSocket> s;
  int fd = ifcore::shim::open_netlink(base, type & (SOCK_NONBLOCK | SOCK_CLOEXEC), &s);
  if (fd < 0) {
    int e = errno;
    if (std::getenv("IFCORE_SHIM_QUIET") == nullptr) {
      std::string msg = "ifcore-preload: cannot reach ifcored at " + ifcore::shim::socket_path() +
                        ": " + std::strerror(e) + "\n";
      (void)!write(2, msg.data(), msg.size());
    }
    return fail_errno(e);
  }
  table().insert(fd, std::move(s));
  return fd;
}

int bind(int fd, const sockaddr* addr, socklen_t len) {
  auto s = lookup(fd);
  if (!s) return real::fn().bind(fd, addr, len);
  if (!addr || len < sizeof(sockaddr_nl)) return fail_errno(EINVAL);
  sockaddr_nl a;
  std::memcpy(&a, addr, sizeof(a));
  if (a.nl_family != AF_NETLINK) return fail_errno(EINVAL);
  ifcore::MutexLock lock(s->mu);
  // Linux: netlink_bind: a bound socket may only rebind to the same port id.
  ifcore::rtnl::ControlRequest req;
  if (a.nl_pid && a.nl_pid != s->port_id) req.port_id = a.nl_pid;
  req.groups = a.nl_groups;
  if (!req.port_id && !a.nl_groups) {
    s->bind_groups = 0;
    s->bound = true;
    return control(fd, *s, req);
  }
  // Waited for: a port id may be refused, and groups must be joined when bind returns (a
  // change another process makes right after must reach this socket, as on Linux).
  auto st = ifcore::shim::control_exchange(fd, *s, req);
  if (!st) return fail_errno(st.error().code);
  s->bind_groups = a.nl_groups;
  s->bound = true;
  return 0;
}

int connect(int fd, const sockaddr* addr, socklen_t len) {
  auto s = lookup(fd);
  if (!s) return real::fn().connect(fd, addr, len);
  // Linux: netlink_connect sets the default destination; only the kernel (port 0) is
  // reachable through ifcored.
  if (!addr || len < sizeof(sa_family_t)) return fail_errno(EINVAL);
  if (addr->sa_family == AF_UNSPEC) return 0;
  if (len < sizeof(sockaddr_nl) || addr->sa_family != AF_NETLINK) return fail_errno(EINVAL);
  return 0;
}

int getsockname(int fd, sockaddr* addr, socklen_t* len) {
  auto s = lookup(fd);
  if (!s) return real::fn().getsockname(fd, addr, len);
  ifcore::MutexLock lock(s->mu);
  std::uint32_t groups = s->bind_groups;
  for (auto g : s->memberships)
    if (g >= 1 && g <= 32) groups |= 1u << (g - 1);
  // Linux: no port before bind or a first send.
  return copy_out_address(addr, len, s->bound ? s->port_id : 0, groups);
}

int getpeername(int fd, sockaddr* addr, socklen_t* len) {
  auto s = lookup(fd);
  if (!s) return real::fn().getpeername(fd, addr, len);
  return copy_out_address(addr, len, 0, 0);  // the kernel: port 0
}

int setsockopt(int fd, int level, int name, const void* val, socklen_t len) {
  auto s = lookup(fd);
  if (!s || level != SOL_NETLINK) return real::fn().setsockopt(fd, level, name, val, len);
  // Linux: netlink_setsockopt reads an int (at least 4 bytes) for every option it knows.
  int v = 0;
  if (len >= sizeof(int) && val) std::memcpy(&v, val, sizeof(int));
  ifcore::rtnl::ControlRequest req;
  ifcore::MutexLock lock(s->mu);
  switch (name) {
    case NETLINK_ADD_MEMBERSHIP:
    case NETLINK_DROP_MEMBERSHIP:
      if (len < sizeof(int) || !val) return fail_errno(EINVAL);
      if (v < 1 || v > 64) return fail_errno(EINVAL);  // RTNLGRP_MAX is below 64
      if (name == NETLINK_ADD_MEMBERSHIP)
        req.add_membership.push_back(static_cast<std::uint32_t>(v));
      else
        req.drop_membership.push_back(static_cast<std::uint32_t>(v));
      // Waited for, as bind's groups: joined (or left) when setsockopt returns.
      if (auto st = ifcore::shim::control_exchange(fd, *s, req); !st)
        return fail_errno(st.error().code);
      if (name == NETLINK_ADD_MEMBERSHIP)
        s->memberships.insert(static_cast<std::uint32_t>(v));
      else
        s->memberships.erase(static_cast<std::uint32_t>(v));
      return 0;
    default:
      if (!is_flag_option(name)) return fail_errno(ENOPROTOOPT);
      if (len < sizeof(int) || !val) return fail_errno(EINVAL);
      s->options[name] = v ? 1 : 0;
      req.options.emplace_back(static_cast<std::uint32_t>(name), v ? 1u : 0u);
      return control(fd, *s, req);
  }
}

int getsockopt(int fd, int level, int name, void* val, socklen_t* len) {
  auto s = lookup(fd);
  if (!s) return real::fn().getsockopt(fd, level, name, val, len);
  if (level == SOL_SOCKET) {
    if (name == SO_DOMAIN) return copy_out_int(val, len, AF_NETLINK);
    if (name == SO_PROTOCOL) return copy_out_int(val, len, NETLINK_ROUTE);
    if (name == SO_TYPE) return copy_out_int(val, len, s->type);
    return real::fn().getsockopt(fd, level, name, val, len);
  }
  if (level != SOL_NETLINK) return real::fn().getsockopt(fd, level, name, val, len);
  ifcore::MutexLock lock(s->mu);
  if (name == NETLINK_LIST_MEMBERSHIPS) {
    // Linux: netlink_getsockopt fills u32 words of group bits and reports the size needed.
    if (!len) return fail_errno(EINVAL);
    std::uint32_t words[2] = {s->bind_groups, 0};
    for (auto g : s->memberships) words[(g - 1) / 32] |= 1u << ((g - 1) % 32);
    socklen_t need = sizeof(words);
    if (val) std::memcpy(val, words, std::min(*len, need) & ~socklen_t{3});
    *len = need;
    return 0;
  }
  if (!is_flag_option(name)) return fail_errno(ENOPROTOOPT);
  auto it = s->options.find(name);
  return copy_out_int(val, len, it == s->options.end() ? 0 : it->second);
}

ssize_t sendmsg(int fd, const msghdr* msg, int flags) {
  auto s = lookup(fd);
  if (!s) return real::fn().sendmsg(fd, msg, flags);
  if (!msg) return fail_errno(EFAULT);
  return ifcore::shim::transmit(fd, *s, msg, flags);
}

ssize_t sendto(int fd, const void* buf, size_t n, int flags, const sockaddr* to, socklen_t tolen) {
  auto s = lookup(fd);
  if (!s) return real::fn().sendto(fd, buf, n, flags, to, tolen);
  iovec iov{const_cast<void*>(buf), n};
  msghdr m = one_buffer(iov);
  return ifcore::shim::transmit(fd, *s, &m, flags);
}

ssize_t send(int fd, const void* buf, size_t n, int flags) {
  auto s = lookup(fd);
  if (!s) return real::fn().send(fd, buf, n, flags);
  iovec iov{const_cast<void*>(buf), n};
  msghdr m = one_buffer(iov);
  return ifcore::shim::transmit(fd, *s, &m, flags);
}

ssize_t recvmsg(int fd, msghdr* msg, int flags) {
  auto s = lookup(fd);
  if (!s) return real::fn().recvmsg(fd, msg, flags);
  if (!msg) return fail_errno(EFAULT);
  return ifcore::shim::receive(fd, *s, msg, flags);
}

ssize_t recvfrom(int fd, void* buf, size_t n, int flags, sockaddr* from, socklen_t* fromlen) {
  auto s = lookup(fd);
  if (!s) return real::fn().recvfrom(fd, buf, n, flags, from, fromlen);
  iovec iov{buf, n};
  msghdr m = one_buffer(iov, from, from && fromlen ? *fromlen : 0);
  ssize_t r = ifcore::shim::receive(fd, *s, &m, flags);
  if (r >= 0 && from && fromlen) *fromlen = m.msg_namelen;
  return r;
}

ssize_t recv(int fd, void* buf, size_t n, int flags) {
  auto s = lookup(fd);
  if (!s) return real::fn().recv(fd, buf, n, flags);
  iovec iov{buf, n};
  msghdr m = one_buffer(iov);
  return ifcore::shim::receive(fd, *s, &m, flags);
}

// `ip netns add NAME` bind-mounts a new kernel namespace at /run/netns/NAME and `ip netns
// del NAME` unlinks it: ifcore's namespace NAME is made and destroyed with it.
int mount(const char* source, const char* target, const char* fstype, unsigned long flags,
          const void* data) {
  int r = real::fn().mount(source, target, fstype, flags, data);
  if (r == 0 && (flags & MS_BIND)) {
    if (auto name = netns_name(target)) {
      int e = errno;
      (void)ifcore::shim::ensure_namespace(*name);
      errno = e;
    }
  }
  return r;
}

int unlink(const char* path) {
  int r = real::fn().unlink(path);
  if (r == 0) {
    if (auto name = netns_name(path)) {
      int e = errno;
      destroy_namespace(*name);
      errno = e;
    }
  }
  return r;
}

int close(int fd) {
  table().erase(fd);
  ifcore::shim::epoll_forget(fd);
  return real::fn().close(fd);
}

int dup(int fd) {
  int n = real::fn().dup(fd);
  if (n >= 0 && !table().empty()) table().copy(fd, n);
  return n;
}

int dup2(int fd, int to) {
  int n = real::fn().dup2(fd, to);
  if (n >= 0 && n != fd) table().copy(fd, n);
  return n;
}

int dup3(int fd, int to, int flags) {
  int n = real::fn().dup3(fd, to, flags);
  if (n >= 0) table().copy(fd, n);
  return n;
}

// Every fcntl argument is an int or a pointer; it is read as the wider of the two, as the
// C library itself does.
int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl_arg(fd, cmd, arg);
}

// Programs built with 64-bit file offsets call fcntl64 (the same function on 64-bit).
int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl_arg(fd, cmd, arg);
}

// _FORTIFY_SOURCE's checked forms (Debian builds programs with them).
ssize_t __recv_chk(int fd, void* buf, size_t n, size_t buflen, int flags) {
  if (n > buflen) std::abort();
  return recv(fd, buf, n, flags);
}

ssize_t __recvfrom_chk(int fd, void* buf, size_t n, size_t buflen, int flags, sockaddr* from,
                       socklen_t* fromlen) {
  if (n > buflen) std::abort();
  return recvfrom(fd, buf, n, flags, from, fromlen);
}

// Readiness: a datagram held back during a control exchange (sockets.h) is readable
// although the unix socket may have nothing left.
int ppoll(pollfd* fds, nfds_t n, const struct timespec* timeout, const sigset_t* mask) {
  int ready = 0;
  if (!table().empty()) {
    for (nfds_t i = 0; i < n; ++i) {
      auto s = table().find(fds[i].fd);
      if (!s || !(fds[i].events & POLLIN)) continue;
      ifcore::MutexLock lock(s->mu);
      if (!s->stash.empty()) ++ready;
    }
  }
  if (!ready) return real::fn().ppoll(fds, n, timeout, mask);
  struct timespec zero {};
  int r = real::fn().ppoll(fds, n, &zero, mask);
  if (r < 0) return r;
  r = 0;
  for (nfds_t i = 0; i < n; ++i) {
    if (auto s = table().find(fds[i].fd); s && (fds[i].events & POLLIN)) {
      ifcore::MutexLock lock(s->mu);
      if (!s->stash.empty()) fds[i].revents |= POLLIN;
    }
    if (fds[i].revents) ++r;
  }
  return r;
}

int poll(pollfd* fds, nfds_t n, int timeout_ms) {
  if (table().empty()) return real::fn().poll(fds, n, timeout_ms);
  struct timespec ts {
    timeout_ms / 1000, (timeout_ms % 1000) * 1000000L
  };
  return ppoll(fds, n, timeout_ms < 0 ? nullptr : &ts, nullptr);
}

int __poll_chk(pollfd* fds, nfds_t n, int timeout_ms, size_t fdslen) {
  if (fdslen / sizeof(pollfd) < n) std::abort();
  return poll(fds, n, timeout_ms);
}

int pselect(int nfds, fd_set* rd, fd_set* wr, fd_set* ex, const struct timespec* timeout,
            const sigset_t* mask) {
  fd_set held;
  FD_ZERO(&held);
  int ready = 0;
  if (rd && !table().empty()) {
    for (int fd = 0; fd < nfds && fd < FD_SETSIZE; ++fd) {
      if (!FD_ISSET(fd, rd)) continue;
      auto s = table().find(fd);
      if (!s) continue;
      ifcore::MutexLock lock(s->mu);
      if (!s->stash.empty()) {
        FD_SET(fd, &held);
        ++ready;
      }
    }
  }
  if (!ready) return real::fn().pselect(nfds, rd, wr, ex, timeout, mask);
  struct timespec zero {};
  int r = real::fn().pselect(nfds, rd, wr, ex, &zero, mask);
  if (r < 0) return r;
  for (int fd = 0; fd < nfds && fd < FD_SETSIZE; ++fd)
    if (FD_ISSET(fd, &held) && !FD_ISSET(fd, rd)) {
      FD_SET(fd, rd);
      ++r;
    }
  return r;
}

int select(int nfds, fd_set* rd, fd_set* wr, fd_set* ex, struct timeval* timeout) {
  if (table().empty()) return real::fn().select(nfds, rd, wr, ex, timeout);
  struct timespec ts {};
  if (timeout) ts = {timeout->tv_sec, timeout->tv_usec * 1000};
  return pselect(nfds, rd, wr, ex, timeout ? &ts : nullptr, nullptr);
}

}  // extern "C"
#pragma GCC visibility pop
