// bench/scenarios/socket_floor.cc — the socket's floor: an echo server that serves as
// ifcored does, the two ways the bench's client sends requests, and their medians.
#include "bench/scenarios/socket_floor.h"

#include <sched.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "bench/scenarios/paths.h"

namespace ifcore::bench {
namespace {

constexpr std::size_t kRequestBytes = 48, kAnswerBytes = 36, kReadBuffer = 4096;
constexpr auto kAnswerTimeout = std::chrono::seconds(1);

// `n` message headers, each over its own `size` bytes of `base` (or all over the first
// when `shared`).
std::vector<mmsghdr> headers(std::vector<iovec>& iov, char* base, std::size_t size, unsigned n,
                             bool shared) {
  iov.resize(n);
  std::vector<mmsghdr> m(n);
  for (unsigned i = 0; i < n; ++i) {
    iov[i] = {base + (shared ? 0 : i * size), size};
    m[i].msg_hdr.msg_iov = &iov[i];
    m[i].msg_hdr.msg_iovlen = 1;
  }
  return m;
}

bool would_block(int err) {
  return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

void serve(int fd, int cpu) {
  (void)pin_self(cpu);
  std::vector<char> in(kEchoServerSlots * kReadBuffer);
  std::array<char, kAnswerBytes> answer{};
  std::vector<iovec> in_iov, out_iov;
  auto reads = headers(in_iov, in.data(), kReadBuffer, kEchoServerSlots, false);
  auto answers = headers(out_iov, answer.data(), answer.size(), kEchoServerSlots, true);
  for (;;) {
    int got = ::recvmmsg(fd, reads.data(), kEchoServerSlots, MSG_DONTWAIT, nullptr);
    if (got < 0) {
      if (!would_block(errno)) return;
      ::sched_yield();
      continue;
    }
    if (got == 0 || reads[0].msg_len == 0) return;  // end of file
    for (int sent = 0; sent < got;) {
      int k =
          ::sendmmsg(fd, answers.data() + sent, static_cast<unsigned>(got - sent), MSG_NOSIGNAL);
      if (k < 0) return;
      sent += k;
    }
  }
}

Error lost_echo(int err) {
  return err == 0 ? Error{ECONNRESET, "the echo server stopped"}
                  : Error{err, "the echo server did not answer"};
}

}  // namespace

EchoServer::EchoServer(int fd, int cpu) : fd_(fd), thread_(serve, fd, cpu) {}

EchoServer::~EchoServer() {
  ::shutdown(fd_, SHUT_RDWR);
  thread_.join();
}

Result<void> echo_round_trip(int fd) {
  std::array<char, kRequestBytes> request{};
  std::array<char, kReadBuffer> in;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) return fail(lost_echo(errno));
  const auto deadline = BenchClock::now() + kAnswerTimeout;
  for (;;) {
    ssize_t n = ::recv(fd, in.data(), in.size(), MSG_DONTWAIT);
    if (n > 0) return ok();
    if (n == 0) return fail(lost_echo(0));
    if (!would_block(errno)) return fail(lost_echo(errno));
    if (BenchClock::now() > deadline) return fail(lost_echo(ETIMEDOUT));
  }
}

Result<void> echo_pipelined(int fd, unsigned n) {
  std::array<char, kRequestBytes> request{};
  std::vector<char> in(kPipelineSlots * 512);
  std::vector<iovec> req_iov, in_iov;
  auto requests = headers(req_iov, request.data(), request.size(), kPipelineSlots, true);
  auto reads = headers(in_iov, in.data(), 512, kPipelineSlots, false);
  unsigned sent = 0, answered = 0;
  auto deadline = BenchClock::now() + kAnswerTimeout;
  while (answered < n) {
    if (sent < n) {
      int k = ::sendmmsg(fd, requests.data(), std::min(kPipelineSlots, n - sent),
                         MSG_DONTWAIT | MSG_NOSIGNAL);
      if (k > 0)
        sent += static_cast<unsigned>(k);
      else if (k < 0 && !would_block(errno))
        return fail(lost_echo(errno));
    }
    int got = ::recvmmsg(fd, reads.data(), kPipelineSlots, MSG_DONTWAIT, nullptr);
    if (got > 0) {
      if (reads[0].msg_len == 0) return fail(lost_echo(0));
      answered += static_cast<unsigned>(got);
      deadline = BenchClock::now() + kAnswerTimeout;
    } else if (got == 0) {
      return fail(lost_echo(0));
    } else if (!would_block(errno)) {
      return fail(lost_echo(errno));
    } else if (BenchClock::now() > deadline) {
      return fail(lost_echo(ETIMEDOUT));
    }
  }
  return ok();
}

Result<SocketFloor> measure_socket_floor(const CpuChoice& cpus) {
  constexpr int kRoundTrips = 1000, kBatches = 30;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return fail(errno, "socketpair: {}", std::strerror(errno));
  cpu_set_t saved;
  const bool restore = ::sched_getaffinity(0, sizeof saved, &saved) == 0;
  if (cpus.valid()) (void)pin_self(cpus.client);
  Result<SocketFloor> out = SocketFloor{};
  {
    EchoServer server(sv[1], cpus.valid() ? cpus.server : -1);
    std::vector<double> trips, batches;
    for (int i = 0; i < 100 + kRoundTrips && out; ++i) {
      auto t0 = BenchClock::now();
      if (auto r = echo_round_trip(sv[0]); !r) out = fail(r.error());
      if (i >= 100) trips.push_back(seconds_between(t0, BenchClock::now()));
    }
    for (int i = 0; i < 3 + kBatches && out; ++i) {
      auto t0 = BenchClock::now();
      if (auto r = echo_pipelined(sv[0], kFloorBatch); !r) out = fail(r.error());
      if (i >= 3) batches.push_back(seconds_between(t0, BenchClock::now()));
    }
    if (out) {
      out->round_trip = median_of(std::move(trips));
      out->pipelined = median_of(std::move(batches)) / kFloorBatch;
    }
  }
  ::close(sv[0]);
  ::close(sv[1]);
  if (restore) (void)::sched_setaffinity(0, sizeof saved, &saved);
  return out;
}

}  // namespace ifcore::bench
