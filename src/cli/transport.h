// cli/transport.h — how `ifc` reaches an rtnetlink server: the machine's kernel over
// AF_NETLINK, ifcored over an AF_UNIX SOCK_SEQPACKET socket, or an engine hosted inside
// the process. Every backend carries the same datagrams (netlink messages); the CLI never
// talks to the core directly.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <poll.h>

#include <cerrno>
#include <cstring>

#include "ifcore/result.h"

namespace ifcore::cli {

using Datagram = std::vector<std::uint8_t>;

class Transport {
 public:
  virtual ~Transport() = default;
  // Sends one request datagram.
  // Errors: the socket's errno.
  virtual Result<void> send(std::span<const std::uint8_t> datagram) = 0;
  // Waits up to `timeout_ms` (-1: forever) for the next datagram; nullopt on timeout.
  // Errors: the socket's errno; ECONNRESET when the server went away; ENOBUFS when
  // notifications were lost.
  virtual Result<std::optional<Datagram>> recv(int timeout_ms = -1) = 0;
  // setsockopt(SOL_NETLINK, opt, value): NETLINK_CAP_ACK, NETLINK_EXT_ACK...
  virtual Result<void> set_option(int opt, int value) = 0;
  // NETLINK_ADD_MEMBERSHIP with an RTNLGRP_* number.
  virtual Result<void> join_group(unsigned group) = 0;
  // The port id replies are addressed to.
  virtual std::uint32_t port_id() const = 0;
  // "kernel", "daemon" or "embedded".
  virtual const char* target() const = 0;
  // Many requests follow (-batch): the daemon's transport switches to mapped rings
  // (docs/WIRE.md), the others ignore it. Errors: the daemon's refusal; the transport
  // then goes on as before.
  virtual Result<void> prefer_rings() { return ok(); }
};

// Runs `f` with the calling thread in the network namespace /var/run/netns/NETNS (the
// current one when `netns` is empty) and moves it back, as `ip -n` does around opening its
// socket. Errors: errno from opening or entering the namespace (then `f` is not run).
Result<void> in_netns(const std::string& netns, const std::function<void()>& f);

// The machine's kernel. `netns` (when not empty) names a namespace under /var/run/netns
// the socket is opened in, as `ip -n` does.
// Errors: ENOENT "cannot open netns \"x\"", socket errors.
Result<std::unique_ptr<Transport>> make_kernel_transport(const std::string& netns);

// ifcored at `path`; `netns` (when not empty) selects an ifcore namespace.
// Errors: the connect errno with the path in the message.
Result<std::unique_ptr<Transport>> make_daemon_transport(const std::string& path,
                                                         const std::string& netns);

// An engine inside this process (the same one for every call in the process), served by
// ifcore's rtnl library. Errors: EOPNOTSUPP when ifc was built without it; ENOENT for an
// unknown namespace.
Result<std::unique_ptr<Transport>> make_embedded_transport(const std::string& netns);

// The default daemon socket: /run/ifcore/ifcore.sock as root, else
// $XDG_RUNTIME_DIR/ifcore.sock (or /tmp/ifcore-UID.sock without XDG_RUNTIME_DIR).
std::string default_socket_path();

// Waits until `fd` is readable: true, or false when `timeout_ms` passed first (-1: no limit).
// Shared by the socket transports. Errors: poll's errno.
inline Result<bool> wait_readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return fail(errno, "poll: {}", std::strerror(errno));
    return r > 0;
  }
}

}  // namespace ifcore::cli
