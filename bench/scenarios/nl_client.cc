// bench/scenarios/nl_client.cc — the bench's rtnetlink client: sockets to the kernel and to
// ifcored, request/acknowledgement matching, pipelined batches, and the request encoders
// (thin wrappers over src/rtnl/wire).
#include "bench/scenarios/nl_client.h"

#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "rtnl/wire/address.h"
#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/netlink.h"
#include "rtnl/wire/ring_client.h"

namespace ifcore::bench {

namespace {
constexpr std::size_t kRecvBuffer = std::size_t{1} << 16;
constexpr unsigned kSlots = 32;  // datagrams per recvmmsg(2) and per sendmmsg(2) batch
// A socket client's first 20 µs of polling are recv(2) calls alone (see recv_into): seed 4's
// 100 creates over the socket took 2-9% less time than with a sched_yield(2) after each
// (1.2 µs a call here), in three alternating runs of 7.
constexpr auto kPureSpin = std::chrono::microseconds(20);
}  // namespace

NlClient::NlClient(int fd, bool kernel)
    : fd_(fd), kernel_(kernel), rbuf_(kRecvBuffer), rbufs_(new std::uint8_t[kSlots * kRecvBuffer]) {
  if (!kernel) busy_poll_ = std::chrono::microseconds(50);
}

NlClient::~NlClient() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<NlClient>> NlClient::open_kernel(std::vector<unsigned> groups) {
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return fail(errno, "netlink socket: {}", std::strerror(errno));
  std::unique_ptr<NlClient> c(new NlClient(fd, true));
  int one = 1;
  (void)::setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
  (void)::setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
  int buf = 4 << 20;
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0)
    return fail(errno, "netlink bind: {}", std::strerror(errno));
  for (unsigned g : groups)
    if (::setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof g) < 0)
      return fail(errno, "netlink group {}: {}", g, std::strerror(errno));
  return c;
}

Result<std::unique_ptr<NlClient>> NlClient::open_daemon(const std::string& path,
                                                        std::vector<unsigned> groups,
                                                        const std::string& ns) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (path.size() >= sizeof sa.sun_path) return fail(ENAMETOOLONG, "socket path {} too long", path);
  std::memcpy(sa.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno, "unix socket: {}", std::strerror(errno));
  std::unique_ptr<NlClient> c(new NlClient(fd, false));
  // A daemon that has just bound its path may not listen yet (ECONNREFUSED for a moment).
  for (int tries = 0;; ++tries) {
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) break;
    if (errno != ECONNREFUSED || tries == 200)
      return fail(errno, "cannot connect to ifcored at {}: {}", path, std::strerror(errno));
    ::usleep(5000);
  }
  // Options and groups: ifcored's control message (src/rtnl/wire/control_msg.h).
  rtnl::ControlRequest req;
  req.add_membership.assign(groups.begin(), groups.end());
  req.options = {{NETLINK_CAP_ACK, 1}, {NETLINK_EXT_ACK, 1}};
  if (!ns.empty()) {
    req.ns = ns;
    req.create = true;
  }
  wire::MessageBuilder b;
  std::uint32_t seq = c->next_seq();
  auto enc = rtnl::encode_control_request(b, seq, req);
  if (!enc) return fail(enc.error());
  auto sent = c->send(b.bytes());
  if (!sent) return fail(sent.error());
  // The reply: the connection's state (or an error from a daemon that does not know it).
  for (;;) {
    auto d = c->recv(5000);
    if (!d) return fail(d.error());
    if (!*d) return fail(ETIMEDOUT, "ifcored did not answer the control message");
    auto msgs = wire::split_messages(**d);
    if (!msgs) return fail(msgs.error());
    for (const auto& m : *msgs) {
      if (m.hdr.nlmsg_seq != seq) continue;
      if (m.hdr.nlmsg_type == rtnl::IFCORE_NLMSG_CONTROL) return c;
      if (m.hdr.nlmsg_type == NLMSG_ERROR) {
        auto e = wire::decode_error(m);
        if (e && e->error != 0 && (!groups.empty() || !ns.empty()))
          return fail(e->error, "ifcored refused the control message: {}", e->message);
        return c;
      }
    }
  }
}

Result<void> NlClient::use_rings(std::uint32_t size) {
  if (kernel_) return fail(EOPNOTSUPP, "mapped rings are ifcored's");
  if (ring_) return fail(EBUSY, "the connection uses mapped rings already");
  auto r = rtnl::RingClient::open(fd_, next_seq(), size, before_rings_);
  if (!r) return fail(r.error());
  ring_ = std::move(*r);
  ring_->set_busy_poll(busy_poll_);
  return ok();
}

void NlClient::set_busy_poll(std::chrono::microseconds us) {
  busy_poll_ = us;
  if (ring_) ring_->set_busy_poll(us);
}

Result<std::size_t> NlClient::ring_recv_into(int timeout_ms) {
  // rbuf_ takes the datagram's size: on rings it is never a socket's receive buffer again.
  if (!before_rings_.empty()) {
    rbuf_ = std::move(before_rings_.front());
    before_rings_.pop_front();
  } else {
    auto got = ring_->recv(rbuf_, timeout_ms);
    if (!got) return fail(got.error());
    if (!*got) return std::size_t(0);
  }
  return rbuf_.size();
}

Result<void> NlClient::send(std::span<const std::uint8_t> d) {
  if (ring_) return ring_->send(d);
  ssize_t r;
  if (kernel_) {
    sockaddr_nl sa{};
    sa.nl_family = AF_NETLINK;
    r = ::sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  } else {
    r = ::send(fd_, d.data(), d.size(), MSG_NOSIGNAL);
  }
  if (r < 0) return fail(errno, "send: {}", std::strerror(errno));
  return ok();
}

Result<std::size_t> NlClient::recv_into(int timeout_ms) {
  if (ring_) return ring_recv_into(timeout_ms);
  // The datagram may be queued already (always, from the kernel): read first, poll after.
  using Clock = std::chrono::steady_clock;
  Clock::time_point spin_start{};
  bool spun = busy_poll_.count() == 0 || timeout_ms == 0;
  for (;;) {
    ssize_t n = ::recv(fd_, rbuf_.data(), rbuf_.size(), MSG_DONTWAIT);
    if (n > 0) return std::size_t(n);
    if (n == 0) return fail(ECONNRESET, "the server closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return fail(errno, "receive: {}", std::strerror(errno));
    if (!spun) {
      // For the first kPureSpin only the recv(2) calls (an answer over the socket takes
      // 10-15 µs here); after that each also yields the CPU, to an ifcored that shares it
      // (--no-pin, a loaded machine).
      const auto now = Clock::now();
      if (spin_start == Clock::time_point{}) spin_start = now;
      if (now - spin_start < busy_poll_) {
        if (now - spin_start > kPureSpin) ::sched_yield();
        continue;
      }
      spun = true;
    }
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return fail(errno, "poll: {}", std::strerror(errno));
    if (r == 0) return std::size_t(0);
  }
}

Result<std::optional<Bytes>> NlClient::recv(int timeout_ms) {
  auto n = recv_into(timeout_ms);
  if (!n) return fail(n.error());
  if (*n == 0) return std::optional<Bytes>{};
  return std::optional<Bytes>(Bytes(rbuf_.begin(), rbuf_.begin() + std::ptrdiff_t(*n)));
}

void NlClient::drain() {
  for (;;) {
    auto d = recv(0);
    if (!d || !*d) return;
  }
}

Result<int> NlClient::count_answers(std::span<const std::uint8_t> d, std::uint32_t lo,
                                    std::uint32_t hi, std::optional<Error>& first) {
  auto msgs = wire::split_messages(d);
  if (!msgs) return fail(msgs.error());
  int answers = 0;
  for (const auto& m : *msgs) {
    if (m.hdr.nlmsg_type != NLMSG_ERROR || m.hdr.nlmsg_seq < lo || m.hdr.nlmsg_seq > hi) continue;
    ++answers;
    auto e = wire::decode_error(m);
    if (!e) {
      if (!first) first = e.error();
      continue;
    }
    if (e->error != 0 && !first)
      first =
          Error{e->error, e->message.empty() ? std::string(std::strerror(e->error)) : e->message};
  }
  return answers;
}

Result<int> NlClient::read_answers(std::uint32_t lo, std::uint32_t hi,
                                   std::optional<Error>& first) {
  auto got = recv_into(30000);
  if (!got) return fail(got.error());
  if (*got == 0) return fail(ETIMEDOUT, "no answer from the server in 30 s");
  return count_answers(std::span<const std::uint8_t>(rbuf_.data(), *got), lo, hi, first);
}

Result<int> NlClient::read_queued_answers(std::uint32_t lo, std::uint32_t hi,
                                          std::optional<Error>& first) {
  if (ring_) {
    int answers = 0;
    for (;;) {
      auto n = ring_recv_into(0);
      if (!n) return fail(n.error());
      if (*n == 0) return answers;
      auto c = count_answers(std::span<const std::uint8_t>(rbuf_.data(), *n), lo, hi, first);
      if (!c) return fail(c.error());
      answers += *c;
    }
  }
  std::array<mmsghdr, kSlots> msgs;
  std::array<iovec, kSlots> iov;
  for (unsigned k = 0; k < kSlots; ++k) {
    iov[k] = {rbufs_.get() + k * kRecvBuffer, kRecvBuffer};
    msgs[k] = {};
    msgs[k].msg_hdr.msg_iov = &iov[k];
    msgs[k].msg_hdr.msg_iovlen = 1;
  }
  int n;
  do n = ::recvmmsg(fd_, msgs.data(), kSlots, MSG_DONTWAIT, nullptr);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return fail(errno, "receive: {}", std::strerror(errno));
  }
  int answers = 0;
  for (int k = 0; k < n; ++k) {
    if (msgs[k].msg_len == 0) return fail(ECONNRESET, "the server closed the connection");
    auto c = count_answers(
        std::span<const std::uint8_t>(rbufs_.get() + std::size_t(k) * kRecvBuffer, msgs[k].msg_len),
        lo, hi, first);
    if (!c) return fail(c.error());
    answers += *c;
  }
  return answers;
}

Result<void> NlClient::send_all(std::span<const Bytes> datagrams) {
  if (ring_) {
    for (const Bytes& d : datagrams) IFCORE_TRY(ring_->send(d));
    return ok();
  }
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  std::array<mmsghdr, kSlots> msgs;
  std::array<iovec, kSlots> iov;
  for (std::size_t at = 0; at < datagrams.size();) {
    unsigned k = 0;
    for (; k < kSlots && at + k < datagrams.size(); ++k) {
      const Bytes& d = datagrams[at + k];
      iov[k] = {const_cast<std::uint8_t*>(d.data()), d.size()};
      msgs[k] = {};
      msgs[k].msg_hdr.msg_iov = &iov[k];
      msgs[k].msg_hdr.msg_iovlen = 1;
      if (kernel_) {
        msgs[k].msg_hdr.msg_name = &sa;
        msgs[k].msg_hdr.msg_namelen = sizeof sa;
      }
    }
    int n = ::sendmmsg(fd_, msgs.data(), k, kernel_ ? 0 : MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno, "send: {}", std::strerror(errno));
    at += std::size_t(n);
  }
  return ok();
}

Result<void> NlClient::call(std::span<const std::uint8_t> message) {
  if (message.size() < sizeof(nlmsghdr)) return fail(EINVAL, "request shorter than a header");
  nlmsghdr h;
  std::memcpy(&h, message.data(), sizeof h);
  auto s = send(message);
  if (!s) return s;
  std::optional<Error> first;
  for (int got = 0; got < 1;) {
    auto n = read_answers(h.nlmsg_seq, h.nlmsg_seq, first);
    if (!n) return fail(n.error());
    got += *n;
  }
  if (first) return fail(*first);
  return ok();
}

Result<void> NlClient::call_many(const std::vector<Bytes>& messages, std::size_t window,
                                 std::size_t per_datagram) {
  if (messages.empty()) return ok();
  auto seq_of = [](const Bytes& m) {
    nlmsghdr h;
    std::memcpy(&h, m.data(), sizeof h);
    return h.nlmsg_seq;
  };
  std::uint32_t lo = seq_of(messages.front()), hi = seq_of(messages.back());
  std::optional<Error> first;
  std::size_t sent = 0, answered = 0;
  per_datagram = std::max<std::size_t>(1, per_datagram);
  // The window is refilled with one sendmmsg(2) per kSlots datagrams, and the answers
  // already queued are read with one recvmmsg(2): the client's syscalls per request are a
  // small fraction of the server's work, on both servers.
  std::vector<Bytes> batch;
  while (answered < messages.size()) {
    if (per_datagram == 1) {
      // One message per datagram: the messages are the datagrams, sent as they are.
      std::size_t k = std::min(messages.size() - sent, window - (sent - answered));
      if (auto s = send_all(std::span<const Bytes>(messages).subspan(sent, k)); !s) return s;
      sent += k;
    }
    batch.clear();
    while (per_datagram > 1 && sent < messages.size() && sent - answered < window) {
      // Pack up to per_datagram messages (at most ~16 KiB) into one datagram.
      Bytes datagram;
      std::size_t k = 0;
      while (sent < messages.size() && k < per_datagram && sent - answered < window &&
             (k == 0 || datagram.size() + messages[sent].size() <= 16384)) {
        datagram.resize(NLMSG_ALIGN(datagram.size()));
        datagram.insert(datagram.end(), messages[sent].begin(), messages[sent].end());
        ++sent;
        ++k;
      }
      batch.push_back(std::move(datagram));
    }
    if (auto s = send_all(batch); !s) return s;
    auto n = read_queued_answers(lo, hi, first);
    if (!n) return fail(n.error());
    if (*n == 0) n = read_answers(lo, hi, first);  // none queued yet: wait for one
    if (!n) return fail(n.error());
    answered += std::size_t(*n);
  }
  if (first) return fail(*first);
  return ok();
}

// ---------------------------------------------------------------- encoders

namespace {
Bytes link_msg(std::uint16_t type, std::uint16_t flags, std::uint32_t seq, const LinkRequest& req) {
  wire::MessageBuilder b(1 << 16);
  auto r = wire::encode_link_request(
      b, {type, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), seq, 0}, req);
  if (!r) return {};
  return b.take();
}
}  // namespace

Bytes newlink_msg(std::uint32_t seq, const LinkRequest& req) {
  return link_msg(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, seq, req);
}

Bytes setlink_msg(std::uint32_t seq, const LinkRequest& req) {
  return link_msg(RTM_NEWLINK, NLM_F_ACK, seq, req);
}

Bytes dellink_msg(std::uint32_t seq, const std::string& name) {
  LinkRequest r;
  r.name = name;
  return link_msg(RTM_DELLINK, NLM_F_ACK, seq, r);
}

Bytes delgroup_msg(std::uint32_t seq, std::uint32_t group) {
  LinkRequest r;
  r.group = group;
  return link_msg(RTM_DELLINK, NLM_F_ACK, seq, r);
}

Bytes newaddr6_msg(std::uint32_t seq, int ifindex, const std::string& addr, int plen) {
  wire::AddrMessage a;
  a.family = AF_INET6;
  a.prefixlen = static_cast<std::uint8_t>(plen);
  a.ifindex = static_cast<std::uint32_t>(ifindex);
  auto ip = IpAddr::parse(addr);
  if (!ip) return {};
  a.local = *ip;
  a.address = *ip;
  wire::MessageBuilder b;
  auto r = wire::encode_addr(
      b,
      {RTM_NEWADDR,
       static_cast<std::uint16_t>(NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK), seq, 0},
      a);
  if (!r) return {};
  return b.take();
}

}  // namespace ifcore::bench
