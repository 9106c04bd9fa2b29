// rtnl/wire/ring_client.cc — the client's end of mapped rings: the switch, requests, replies,
// doorbells and sleeping.
#include "rtnl/wire/ring_client.h"

#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::rtnl {

namespace {

// Polling memory costs no syscall; after this long each empty look also yields the CPU,
// which the daemon may need when it shares this one (on a loaded machine).
constexpr auto kPureSpin = std::chrono::microseconds(5);

// Reads one datagram of any size from `sock` (its size first, with MSG_PEEK|MSG_TRUNC).
// Empty at end of file; nullopt when nothing is queued (MSG_DONTWAIT).
Result<std::optional<std::vector<std::uint8_t>>> read_datagram(int sock, int flags) {
  for (;;) {
    ssize_t n = ::recv(sock, nullptr, 0, flags | MSG_PEEK | MSG_TRUNC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return std::optional<std::vector<std::uint8_t>>{};
    if (n < 0 && errno == ECONNRESET) return std::optional(std::vector<std::uint8_t>{});
    if (n < 0) return fail(errno, "receive: {}", std::strerror(errno));
    std::vector<std::uint8_t> d(static_cast<std::size_t>(n));
    ssize_t m = ::recv(sock, d.data(), d.size(), flags);
    if (m < 0 && errno == EINTR) continue;
    if (m < 0) return fail(errno, "receive: {}", std::strerror(errno));
    d.resize(static_cast<std::size_t>(m));
    return std::optional(std::move(d));
  }
}

}  // namespace

Result<std::unique_ptr<RingClient>> RingClient::open(
    int sock, std::uint32_t seq, std::uint32_t size,
    std::deque<std::vector<std::uint8_t>>& before) {
  ControlRequest req;
  req.ring = size;
  wire::MessageBuilder b;
  IFCORE_TRY(encode_control_request(b, seq, req));
  if (::send(sock, b.bytes().data(), b.bytes().size(), MSG_NOSIGNAL) < 0)
    return fail(errno, "send: {}", std::strerror(errno));
  std::vector<std::uint8_t> buf(std::size_t{1} << 16);
  for (;;) {
    pollfd p{sock, POLLIN, 0};
    int r = ::poll(&p, 1, 5000);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return fail(ETIMEDOUT, "ifcored did not answer the request for mapped rings");
    // The reply is one message in a datagram of its own; a larger datagram (a dump part)
    // is read whole as any other that comes before it.
    ssize_t len = ::recv(sock, nullptr, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
    if (len > static_cast<ssize_t>(buf.size())) buf.resize(static_cast<std::size_t>(len));
    auto got = recv_with_fd(sock, buf, 0);
    if (!got) return fail(got.error());
    if (got->size == 0) return fail(ECONNRESET, "ifcored closed the connection");
    std::span<const std::uint8_t> d(buf.data(), got->size);
    auto msgs = wire::split_messages(d);
    const wire::Message* reply = nullptr;
    if (msgs)
      for (const auto& m : *msgs)
        if (m.hdr.nlmsg_seq == seq &&
            (m.hdr.nlmsg_type == NLMSG_ERROR || m.hdr.nlmsg_type == IFCORE_NLMSG_CONTROL))
          reply = &m;
    if (!reply) {
      if (got->fd >= 0) ::close(got->fd);
      before.emplace_back(d.begin(), d.end());
      continue;
    }
    if (reply->hdr.nlmsg_type == NLMSG_ERROR) {
      if (got->fd >= 0) ::close(got->fd);
      auto e = wire::decode_error(*reply);
      if (!e) return fail(e.error());
      return fail(e->error, "ifcored refused mapped rings: {}", e->message);
    }
    if (got->fd < 0) return fail(EPROTO, "the reply for mapped rings came without a ring file");
    auto rings = MappedRings::attach(got->fd);
    if (!rings) return fail(rings.error());
    return std::unique_ptr<RingClient>(new RingClient(sock, std::move(*rings)));
  }
}

void RingClient::doorbell() {
  // EAGAIN: doorbells the daemon has not read yet are queued; one is enough.
  (void)!::send(sock_, &kDoorbell, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

Result<void> RingClient::send(std::span<const std::uint8_t> d) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    auto r = rings_.push(d);
    if (!r) return fail(r.error());
    if (*r) break;
    // Full: the daemon rings the doorbell once it has read, unless room appeared.
    if (rings_.prepare_wait_room(d.size())) {
      auto w = wait_socket(1000);
      if (!w) return fail(w.error());
      if (closed_) return fail(ECONNRESET, "ifcored closed the connection");
    }
    if (std::chrono::steady_clock::now() > deadline)
      return fail(ETIMEDOUT, "the request ring stayed full for 30 s");
  }
  if (rings_.take_peer_asleep()) doorbell();
  return ok();
}

Result<void> RingClient::drain_socket() {
  while (!closed_) {
    auto d = read_datagram(sock_, MSG_DONTWAIT);
    if (!d) return fail(d.error());
    if (!*d) return ok();  // nothing queued
    if ((*d)->empty()) {
      closed_ = true;
      break;
    }
    if ((*d)->size() == 1 && (**d)[0] == kDoorbell) continue;
    kept_.push_back(std::move(**d));
  }
  return ok();
}

Result<bool> RingClient::wait_socket(int timeout_ms) {
  pollfd p{sock_, POLLIN, 0};
  int r;
  do r = ::poll(&p, 1, timeout_ms);
  while (r < 0 && errno == EINTR);
  if (r < 0) return fail(errno, "poll: {}", std::strerror(errno));
  if (r == 0) return false;
  IFCORE_TRY(drain_socket());
  return true;
}

Result<bool> RingClient::recv(std::vector<std::uint8_t>& out, int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now(), spin_until = start + busy_poll_;
  const auto deadline = start + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  for (;;) {
    auto p = rings_.pop(out);
    if (!p) return fail(p.error());
    if (*p != MappedRings::Popped::Empty && rings_.take_peer_wants_room()) doorbell();
    if (*p == MappedRings::Popped::Datagram) return true;
    if (*p == MappedRings::Popped::OnSocket) {
      // The datagram was sent before its record: it is on the socket, or kept already.
      if (kept_.empty()) IFCORE_TRY(drain_socket());
      if (kept_.empty()) return fail(EPROTO, "a socket record without its datagram");
      out = std::move(kept_.front());
      kept_.pop_front();
      return true;
    }
    if (closed_) return fail(ECONNRESET, "ifcored closed the connection");
    if (timeout_ms == 0) return false;
    const auto now = Clock::now();
    if (now < spin_until) {
      if (now - start > kPureSpin) ::sched_yield();
      continue;
    }
    int wait_ms = -1;
    if (timeout_ms > 0) {
      if (now >= deadline) return false;
      wait_ms = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1);
    }
    if (!rings_.prepare_sleep()) continue;
    auto w = wait_socket(wait_ms);
    rings_.awake();
    if (!w) return fail(w.error());
  }
}

}  // namespace ifcore::rtnl
