// daemon/daemon_io.cc — the loop's traffic with one client (daemon/loop.h): requests read
// from its socket (recvmmsg) or its mapped ring, replies, notifications and the parts of a
// dump written through its outbox (sendmmsg, or the ring), backpressure and epoll events.
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

#include <algorithm>
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

}  // namespace

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

void Loop::trim_receive_buffers() {
  if (rbuf_used_ <= kRecvKeep) return;
  for (unsigned k = 0; k < kRecvSlots; ++k)
    madvise(rbuf_ + k * kRecvBuffer + kRecvKeep, rbuf_used_ - kRecvKeep, MADV_DONTNEED);
  rbuf_used_ = 0;
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
      rbuf_used_ = std::max(rbuf_used_, len);
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

}  // namespace ifcore::daemon
