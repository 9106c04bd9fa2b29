// cli/transport_kernel.cc — the kernel backend: an AF_NETLINK NETLINK_ROUTE socket,
// optionally opened inside a named network namespace (/var/run/netns/NAME, as `ip -n`).
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstring>

#include "cli/transport.h"

namespace ifcore::cli {
namespace {

class KernelTransport final : public Transport {
 public:
  explicit KernelTransport(int fd, std::uint32_t port) : fd_(fd), port_(port) {}
  ~KernelTransport() override { ::close(fd_); }

  Result<void> send(std::span<const std::uint8_t> d) override {
    sockaddr_nl sa{};
    sa.nl_family = AF_NETLINK;
    if (::sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0)
      return fail(errno, "cannot talk to rtnetlink: {}", std::strerror(errno));
    return ok();
  }

  Result<std::optional<Datagram>> recv(int timeout_ms) override {
    auto readable = wait_readable(fd_, timeout_ms);
    if (!readable) return fail(readable.error());
    if (!*readable) return std::optional<Datagram>{};
    // Peek at the size first: a dump datagram may be larger than a page.
    ssize_t n = ::recv(fd_, nullptr, 0, MSG_PEEK | MSG_TRUNC);
    if (n < 0) return fail(errno, "netlink receive error {}", std::strerror(errno));
    Datagram d(std::size_t(n) < 4096 ? 4096 : std::size_t(n));
    n = ::recv(fd_, d.data(), d.size(), 0);
    if (n < 0) return fail(errno, "netlink receive error {}", std::strerror(errno));
    d.resize(std::size_t(n));
    return std::optional<Datagram>(std::move(d));
  }

  Result<void> set_option(int opt, int value) override {
    if (::setsockopt(fd_, SOL_NETLINK, opt, &value, sizeof value) < 0)
      return fail(errno, "setsockopt: {}", std::strerror(errno));
    return ok();
  }

  Result<void> join_group(unsigned group) override {
    return set_option(NETLINK_ADD_MEMBERSHIP, int(group));
  }
  std::uint32_t port_id() const override { return port_; }
  const char* target() const override { return "kernel"; }

 private:
  int fd_;
  std::uint32_t port_;
};

Result<int> open_socket() {
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return fail(errno, "Cannot open netlink socket: {}", std::strerror(errno));
  int big = 1 << 20;
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
    int e = errno;
    ::close(fd);
    return fail(e, "Cannot bind netlink socket: {}", std::strerror(e));
  }
  return fd;
}

}  // namespace

Result<void> in_netns(const std::string& netns, const std::function<void()>& f) {
  if (netns.empty()) {
    f();
    return ok();
  }
  std::string path = "/var/run/netns/" + netns;
  int ns = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns < 0)
    return fail(errno, "Cannot open network namespace \"{}\": {}", netns, std::strerror(errno));
  int old_ns = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (old_ns < 0 || ::setns(ns, CLONE_NEWNET) < 0) {
    int e = errno;
    ::close(ns);
    if (old_ns >= 0) ::close(old_ns);
    return fail(e, "setting the network namespace \"{}\" failed: {}", netns, std::strerror(e));
  }
  ::close(ns);
  f();
  (void)::setns(old_ns, CLONE_NEWNET);
  ::close(old_ns);
  return ok();
}

Result<std::unique_ptr<Transport>> make_kernel_transport(const std::string& netns) {
  Result<int> fd = fail(EIO);
  IFCORE_TRY(in_netns(netns, [&] { fd = open_socket(); }));
  if (!fd) return fail(fd.error());
  sockaddr_nl sa{};
  socklen_t len = sizeof sa;
  ::getsockname(*fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return std::unique_ptr<Transport>(new KernelTransport(*fd, sa.nl_pid));
}

}  // namespace ifcore::cli
