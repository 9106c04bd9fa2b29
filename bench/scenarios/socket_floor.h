// bench/scenarios/socket_floor.h — the floor under the daemon path: what ifcored's kind of
// socket (AF_UNIX, SOCK_SEQPACKET) costs per request by itself, between two threads of the
// bench that poll without sleeping, on the CPUs a run uses, with no work between a request
// and its answer.
//
// Why: a request through ifcored crosses the socket twice, a syscall on each side each
// time (about 1.2 µs each on the 2-vCPU VM), and a hand-over between two CPUs; a request to
// the kernel does its work inside the caller's own syscall. Seed 4's creates, one at a time,
// cannot go faster through the daemon than one round trip each, whatever ifcored does, and
// the table's targets say how far that floor leaves a ratio to the kernel (docs/BENCH.md).
#pragma once

#include <thread>

#include "bench/scenarios/bench.h"

namespace ifcore::bench {

// Datagrams read per recvmmsg(2) by the echo server (ifcored's kRecvSlots), and sent per
// sendmmsg(2) or read per recvmmsg(2) by a pipelining client (NlClient's batches).
inline constexpr unsigned kEchoServerSlots = 16, kPipelineSlots = 32;
// Requests in flight for SocketFloor::pipelined (the scale sweep's smallest N).
inline constexpr unsigned kFloorBatch = 100;

struct SocketFloor {
  double round_trip = 0;  // one request and its answer, one at a time (seconds)
  double pipelined = 0;   // per request, kFloorBatch in flight (seconds)
  // What `t`'s requests cost at this floor (seconds).
  double price(const Traffic& t) const {
    return t.one_at_a_time * round_trip + t.pipelined * pipelined;
  }
};

// Answers every datagram on `fd` with 36 bytes from a thread of its own, pinned to `cpu`
// (-1: anywhere): up to kEchoServerSlots datagrams per recvmmsg(2), answered with one
// sendmmsg(2), polling with sched_yield(2) between empty reads, as ifcored serves a busy
// client. The thread ends at end of file or on an error on `fd`. The destructor shuts
// `fd` down (the thread's next read finds the end of file) and joins the thread; it does
// not close `fd`. Context: any thread.
class EchoServer {
 public:
  EchoServer(int fd, int cpu);
  ~EchoServer();
  EchoServer(const EchoServer&) = delete;
  EchoServer& operator=(const EchoServer&) = delete;

 private:
  int fd_;
  std::thread thread_;
};

// One 48-byte request on `fd` and its answer, awaited by polling recv(2) without sleeping.
// Errors: errno; ECONNRESET at end of file; ETIMEDOUT after 1 s without an answer.
Result<void> echo_round_trip(int fd);
// `n` 48-byte requests, sent kPipelineSlots per sendmmsg(2) while every answer is read
// (kPipelineSlots per recvmmsg(2)), as NlClient::call_many pipelines. Errors: as above.
Result<void> echo_pipelined(int fd, unsigned n);

// Medians of 1000 round trips (after 100 untimed) and of 30 pipelined batches of
// kFloorBatch (after 3 untimed), over a fresh socket pair: the echo server on
// cpus.server, the calling thread on cpus.client for the time of the measurement (its own
// CPU set comes back). About 15-40 ms. Errors: socketpair(2)'s errno, or as above.
Result<SocketFloor> measure_socket_floor(const CpuChoice& cpus);

}  // namespace ifcore::bench
