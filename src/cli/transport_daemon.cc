// cli/transport_daemon.cc — the daemon backend: an AF_UNIX SOCK_SEQPACKET connection to
// ifcored (one datagram per send/recv, end-of-file when the daemon goes away), and the
// default socket path.
//
// Socket options, multicast groups and namespace selection travel in ifcored's control
// message (src/rtnl/control_msg.h), which has not landed yet: until it does they are
// accepted and have no effect, and a namespace other than the default is refused.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cli/transport.h"

namespace ifcore::cli {
namespace {

class DaemonTransport final : public Transport {
 public:
  explicit DaemonTransport(int fd) : fd_(fd) {}
  ~DaemonTransport() override { ::close(fd_); }

  Result<void> send(std::span<const std::uint8_t> d) override {
    if (::send(fd_, d.data(), d.size(), MSG_NOSIGNAL) < 0)
      return fail(errno, "cannot talk to ifcored: {}", std::strerror(errno));
    return ok();
  }

  Result<std::optional<Datagram>> recv(int timeout_ms) override {
    pollfd p{fd_, POLLIN, 0};
    for (;;) {
      int r = ::poll(&p, 1, timeout_ms);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return fail(errno, "poll: {}", std::strerror(errno));
      if (r == 0) return std::optional<Datagram>{};
      break;
    }
    Datagram d(1 << 16);
    ssize_t n = ::recv(fd_, d.data(), d.size(), 0);
    if (n < 0) return fail(errno, "netlink receive error {}", std::strerror(errno));
    if (n == 0) return fail(ECONNRESET, "ifcored closed the connection");
    d.resize(std::size_t(n));
    return std::optional<Datagram>(std::move(d));
  }

  Result<void> set_option(int, int) override { return ok(); }
  Result<void> join_group(unsigned) override { return ok(); }
  std::uint32_t port_id() const override { return 0; }
  const char* target() const override { return "daemon"; }

 private:
  int fd_;
};

}  // namespace

std::string default_socket_path() {
  if (::geteuid() == 0) return "/run/ifcore/ifcore.sock";
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x)
    return std::string(x) + "/ifcore.sock";
  return "/tmp/ifcore-" + std::to_string(::geteuid()) + ".sock";
}

Result<std::unique_ptr<Transport>> make_daemon_transport(const std::string& path,
                                                         const std::string& netns) {
  if (!netns.empty() && netns != "default")
    return fail(EOPNOTSUPP,
                "Cannot select namespace \"{}\": ifcored's control message is not available",
                netns);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (path.size() >= sizeof sa.sun_path)
    return fail(ENAMETOOLONG, "socket path \"{}\" is too long", path);
  std::memcpy(sa.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno, "Cannot open socket: {}", std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
    int e = errno;
    ::close(fd);
    return fail(e, "Cannot connect to ifcored at {}: {}", path, std::strerror(e));
  }
  return std::unique_ptr<Transport>(new DaemonTransport(fd));
}

}  // namespace ifcore::cli
