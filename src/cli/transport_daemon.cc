// cli/transport_daemon.cc — the daemon backend: an AF_UNIX SOCK_SEQPACKET connection to
// ifcored (one datagram per send/recv, end-of-file when the daemon goes away), and the
// default socket path.
//
// Socket options, multicast groups and namespace selection travel in ifcored's control
// message (src/rtnl/wire/control_msg.h): one request, answered with the connection's state.
// For a batch the connection switches to mapped rings (src/rtnl/wire/ring_client.h).
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string_view>
#include <vector>

#include "cli/transport.h"
#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/ring_client.h"

namespace ifcore::cli {
namespace {

class DaemonTransport final : public Transport {
 public:
  explicit DaemonTransport(int fd) : fd_(fd) {}
  ~DaemonTransport() override { ::close(fd_); }

  Result<void> send(std::span<const std::uint8_t> d) override {
    if (ring_) {
      if (auto r = ring_->send(d); !r)
        return fail(r.error().code, "cannot talk to ifcored: {}", r.error().message);
      return ok();
    }
    if (::send(fd_, d.data(), d.size(), MSG_NOSIGNAL) < 0)
      return fail(errno, "cannot talk to ifcored: {}", std::strerror(errno));
    return ok();
  }

  Result<std::optional<Datagram>> recv(int timeout_ms) override {
    auto d = next_datagram(timeout_ms);
    if (d && *d && rtnl::is_overflow_datagram(**d))
      return fail(ENOBUFS, "netlink receive error No buffer space available");
    return d;
  }

  // The next datagram: what came before the switch to rings, then from the rings or the
  // socket.
  Result<std::optional<Datagram>> next_datagram(int timeout_ms) {
    Datagram d;
    if (!before_rings_.empty()) {
      d = std::move(before_rings_.front());
      before_rings_.pop_front();
      return std::optional<Datagram>(std::move(d));
    }
    if (ring_) {
      auto got = ring_->recv(d, timeout_ms);
      if (!got && got.error().code == ECONNRESET)
        return fail(ECONNRESET, "ifcored closed the connection");
      if (!got) return fail(got.error().code, "netlink receive error {}", got.error().message);
      if (!*got) return std::optional<Datagram>{};
      return std::optional<Datagram>(std::move(d));
    }
    auto readable = wait_readable(fd_, timeout_ms);
    if (!readable) return fail(readable.error());
    if (!*readable) return std::optional<Datagram>{};
    // Most datagrams fit a page; a link message of a device with hundreds of altnames
    // takes up to ~70 KiB (Linux bounds IFLA_PROP_LIST by a u16 length). One read into
    // the datagram's 64 KiB and a spill area behind it covers both without a peek.
    constexpr std::size_t kFirst = 1 << 16, kSpill = 1 << 18;
    static thread_local std::vector<std::uint8_t> spill(kSpill);
    d.resize(kFirst);
    iovec iov[2] = {{d.data(), kFirst}, {spill.data(), kSpill}};
    msghdr mh{};
    mh.msg_iov = iov;
    mh.msg_iovlen = 2;
    ssize_t n = ::recvmsg(fd_, &mh, 0);
    if (n < 0) return fail(errno, "netlink receive error {}", std::strerror(errno));
    if (n == 0) return fail(ECONNRESET, "ifcored closed the connection");
    if (mh.msg_flags & MSG_TRUNC) return fail(EMSGSIZE, "netlink receive error: datagram too long");
    if (std::size_t(n) <= kFirst) {
      d.resize(std::size_t(n));
    } else {
      d.insert(d.end(), spill.begin(), spill.begin() + (n - std::ptrdiff_t(kFirst)));
    }
    return std::optional<Datagram>(std::move(d));
  }

  Result<void> set_option(int opt, int value) override {
    rtnl::ControlRequest r;
    r.options.emplace_back(std::uint32_t(opt), std::uint32_t(value));
    return control(r);
  }
  Result<void> join_group(unsigned group) override {
    rtnl::ControlRequest r;
    r.add_membership.push_back(group);
    return control(r);
  }
  std::uint32_t port_id() const override { return port_; }

  // Sends a control request and waits for the daemon's state (or its error).
  Result<void> control(const rtnl::ControlRequest& req) {
    wire::MessageBuilder b;
    std::uint32_t seq = ++seq_ + 0x40000000u;  // apart from the CLI's own sequence numbers
    if (auto e = rtnl::encode_control_request(b, seq, req); !e) return fail(e.error());
    auto bytes = b.take();
    IFCORE_TRY(send(bytes));
    for (;;) {
      auto d = recv(5000);
      if (!d) return fail(d.error());
      if (!*d) return fail(ETIMEDOUT, "ifcored did not answer the control request");
      auto msgs = wire::split_messages(**d);
      if (!msgs) return fail(msgs.error());
      for (const auto& m : *msgs) {
        if (m.hdr.nlmsg_seq != seq) continue;
        if (m.hdr.nlmsg_type == NLMSG_ERROR) {
          auto e = wire::decode_error(m);
          if (!e) return fail(e.error());
          if (e->error)
            return fail(e->error, e->message.empty() ? std::strerror(e->error) : e->message);
          continue;
        }
        if (m.hdr.nlmsg_type == rtnl::IFCORE_NLMSG_CONTROL) {
          auto st = rtnl::decode_control_state(m);
          if (!st) return fail(st.error());
          port_ = st->port_id;
          return ok();
        }
      }
    }
  }
  const char* target() const override { return "daemon"; }
  Result<void> prefer_rings() override {
    if (ring_) return ok();
    // IFC_RINGS=0 keeps a batch on the socket (the bench compares the two).
    if (const char* e = std::getenv("IFC_RINGS"); e && std::string_view(e) == "0") return ok();
    auto r = rtnl::RingClient::open(fd_, ++seq_ + 0x40000000u, 0, before_rings_);
    if (!r) return fail(r.error());
    ring_ = std::move(*r);
    return ok();
  }

 private:
  int fd_;
  std::unique_ptr<rtnl::RingClient> ring_;
  std::deque<Datagram> before_rings_;  // what came before the rings' reply, read first
  std::uint32_t port_ = 0;
  std::uint32_t seq_ = 0;
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
  auto t = std::make_unique<DaemonTransport>(fd);
  rtnl::ControlRequest r;
  if (!netns.empty()) r.ns = netns;
  if (auto c = t->control(r); !c) {
    if (!netns.empty() && c.error().code == ENOENT)
      return fail(ENOENT, "Cannot open network namespace \"{}\": No such file or directory", netns);
    return fail(c.error());
  }
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace ifcore::cli
