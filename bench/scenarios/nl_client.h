// bench/scenarios/nl_client.h — a small rtnetlink client for the bench's wire paths: the
// kernel over AF_NETLINK (in the calling thread's network namespace) and ifcored over its
// AF_UNIX SOCK_SEQPACKET socket, or through mapped rings set up on that socket
// (src/rtnl/wire/ring.h). Requests are encoded with ifcore's wire codec
// (src/rtnl/wire); this file only moves datagrams and matches acknowledgements.
//
// Context: one thread uses a client at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ifcore/link_request.h"
#include "ifcore/result.h"

namespace ifcore::rtnl {
class RingClient;
}

namespace ifcore::bench {

using Bytes = std::vector<std::uint8_t>;

class NlClient {
 public:
  ~NlClient();
  NlClient(const NlClient&) = delete;
  NlClient& operator=(const NlClient&) = delete;

  // A NETLINK_ROUTE socket in the calling thread's network namespace, with NETLINK_CAP_ACK
  // and NETLINK_EXT_ACK set; `groups` are RTNLGRP_* numbers to join (a monitor).
  // Errors: the socket's errno.
  static Result<std::unique_ptr<NlClient>> open_kernel(std::vector<unsigned> groups = {});
  // A connection to ifcored at `path`; the same options and groups travel in ifcored's
  // control message, and `ns` (when not empty) binds the connection to that ifcore
  // namespace, made for it if it does not exist. Errors: the connect errno; the control
  // exchange's errors.
  static Result<std::unique_ptr<NlClient>> open_daemon(const std::string& path,
                                                       std::vector<unsigned> groups = {},
                                                       const std::string& ns = {});

  // Switches a daemon connection to mapped rings of `size` bytes each (0: the daemon's
  // default): from then on datagrams go through shared memory, and the socket only wakes a
  // side that sleeps. Errors: the daemon's refusal; EPROTO for a reply without a ring file.
  Result<void> use_rings(std::uint32_t size = 0);
  bool uses_rings() const { return ring_ != nullptr; }

  bool is_kernel() const { return kernel_; }
  std::uint32_t next_seq() { return ++seq_; }

  // Errors: the socket's errno.
  Result<void> send(std::span<const std::uint8_t> datagram);
  // Waits up to timeout_ms (-1: forever); nullopt on timeout. Errors: errno, ECONNRESET.
  Result<std::optional<Bytes>> recv(int timeout_ms);
  // How long a wait for a reply polls without sleeping (yielding the CPU) before it blocks
  // in poll(2): a reply that comes within it costs no wakeup of a sleeping thread. 0 for the
  // kernel (its replies are queued before sendto returns), 50 µs for ifcored.
  // On mapped rings the poll reads memory; see rtnl/wire/ring_client.h.
  void set_busy_poll(std::chrono::microseconds us);
  std::chrono::microseconds busy_poll() const { return busy_poll_; }
  // Reads and drops every datagram already queued (a monitor before a timed step).
  void drain();

  // Sends one request (its nlmsg_seq set by the encoder from next_seq()) and waits for the
  // NLMSG_ERROR that answers it. Errors: the request's errno with the server's extack
  // message; ETIMEDOUT after 30 s.
  Result<void> call(std::span<const std::uint8_t> message);
  // Sends every message, keeping at most `window` unanswered (ip -batch, pipelined), packed
  // up to `per_datagram` messages (and ~16 KiB) per datagram as netlink allows; waits for
  // every answer. Errors: the first request that failed.
  Result<void> call_many(const std::vector<Bytes>& messages, std::size_t window = 64,
                         std::size_t per_datagram = 1);

  int fd() const { return fd_; }

 private:
  NlClient(int fd, bool kernel);
  // Reads one datagram into rbuf_ (its size; 0 on timeout). Errors: errno, ECONNRESET.
  Result<std::size_t> recv_into(int timeout_ms);
  // Reads one datagram and counts the answers it holds for seqs in [lo, hi].
  Result<int> read_answers(std::uint32_t lo, std::uint32_t hi, std::optional<Error>& first);
  // Counts the answers for seqs in [lo, hi] in `d`; notes the first error in `first`.
  Result<int> count_answers(std::span<const std::uint8_t> d, std::uint32_t lo, std::uint32_t hi,
                            std::optional<Error>& first);
  // Reads every datagram already queued (up to kSlots, one recvmmsg(2)) and counts the
  // answers; 0 if none was queued. Errors: errno, ECONNRESET.
  Result<int> read_queued_answers(std::uint32_t lo, std::uint32_t hi, std::optional<Error>& first);
  // Sends the datagrams with sendmmsg(2), all of them. Errors: errno.
  Result<void> send_all(std::span<const Bytes> datagrams);
  // Rings: the next datagram into rbuf_, as recv_into.
  Result<std::size_t> ring_recv_into(int timeout_ms);

  int fd_ = -1;
  bool kernel_ = false;
  std::uint32_t seq_ = 0;
  std::chrono::microseconds busy_poll_{0};
  // The receive buffer, reused (a datagram never exceeds 64 KiB here); on mapped rings, the
  // last datagram read, sized to it.
  Bytes rbuf_;
  // kSlots such buffers for read_queued_answers, made with the client and not zeroed: the
  // first timed batch of a fresh client used to zero 2 MiB and fault in its 512 pages
  // (a third of the daemon's figure for 100 pipelined creates); recvmmsg(2) touches only
  // the pages a datagram fills.
  std::unique_ptr<std::uint8_t[]> rbufs_;
  std::unique_ptr<rtnl::RingClient> ring_;  // mapped rings, once use_rings() switched
  std::deque<Bytes> before_rings_;          // datagrams that came before the rings' reply
};

// ---- requests, encoded with the wire codec (flags as `ip` sends them)
// RTM_NEWLINK with NLM_F_CREATE|NLM_F_EXCL|NLM_F_ACK.
Bytes newlink_msg(std::uint32_t seq, const LinkRequest& req);
// RTM_NEWLINK without NLM_F_CREATE (ip link set).
Bytes setlink_msg(std::uint32_t seq, const LinkRequest& req);
// RTM_DELLINK of one device by name.
Bytes dellink_msg(std::uint32_t seq, const std::string& name);
// RTM_DELLINK of every device of `group` (Linux: rtnl_group_dellink, one batch).
Bytes delgroup_msg(std::uint32_t seq, std::uint32_t group);
// RTM_NEWADDR (IPv6) of `addr`/plen on `ifindex`, NLM_F_CREATE|NLM_F_EXCL|NLM_F_ACK.
Bytes newaddr6_msg(std::uint32_t seq, int ifindex, const std::string& addr, int plen);

}  // namespace ifcore::bench
