// rtnl/wire/ring_client.h — a client's end of mapped rings (ring.h) on its connection to ifcored:
// asks for them with the control message, then writes requests to the request ring and
// reads replies from the reply ring, ringing and answering doorbells on the socket, reading
// the datagrams that socket records stand for, polling for a while before it sleeps.
// Used by ifc (-batch) and ifcore-bench; the protocol is in docs/WIRE.md ("Mapped rings").
//
// Context: one thread at a time; the socket stays the caller's (not closed here), and the
// caller reads nothing from it while the rings are in use.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "ifcore/result.h"
#include "rtnl/wire/ring.h"

namespace ifcore::rtnl {

class RingClient {
 public:
  // Sends a control request for rings of `size` bytes each (0: the daemon's default) with
  // sequence number `seq` on the connected socket `sock`, and maps the file that comes
  // with the reply. Datagrams that come before the reply (notifications) are appended to
  // `before`, whatever the outcome: the caller delivers them before anything it reads
  // next. Errors: the daemon's refusal (its errno and message; the connection goes on on
  // its socket); EPROTO for a reply without a ring file; ETIMEDOUT after 5 s without a
  // reply; ECONNRESET when the daemon closed the connection.
  static Result<std::unique_ptr<RingClient>> open(int sock, std::uint32_t seq, std::uint32_t size,
                                                  std::deque<std::vector<std::uint8_t>>& before);

  // How long recv() polls the ring before it sleeps in poll(2) (default 50 µs).
  void set_busy_poll(std::chrono::microseconds us) { busy_poll_ = us; }
  const MappedRings& rings() const { return rings_; }

  // Writes one request, waiting up to 30 s for room; rings the doorbell if the daemon
  // sleeps. Errors: EMSGSIZE above rings().max_datagram(); EPROTO; ETIMEDOUT; the
  // socket's errno.
  Result<void> send(std::span<const std::uint8_t> datagram);
  // The next datagram for this client into `out` (resized to it), waiting up to
  // timeout_ms (-1: forever, 0: not at all). False on timeout.
  // Errors: ECONNRESET when the daemon closed the connection; EPROTO; the socket's errno.
  Result<bool> recv(std::vector<std::uint8_t>& out, int timeout_ms);

 private:
  RingClient(int sock, MappedRings rings) : sock_(sock), rings_(std::move(rings)) {}
  // Waits up to timeout_ms for the socket, then reads what it holds (doorbells dropped,
  // other datagrams kept). False on timeout. Errors: as recv().
  Result<bool> wait_socket(int timeout_ms);
  // Reads what the socket holds without waiting.
  Result<void> drain_socket();
  void doorbell();

  int sock_;
  MappedRings rings_;
  std::chrono::microseconds busy_poll_{50};
  // Datagrams that came on the socket since, for the ring's socket records, in order.
  std::deque<std::vector<std::uint8_t>> kept_;
  bool closed_ = false;  // the socket said end of file
};

}  // namespace ifcore::rtnl
