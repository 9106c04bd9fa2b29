// ifcore-micro: the floor under every request through ifcored. A 36-byte answer to a
// 32-byte request over a unix SOCK_SEQPACKET pair (what ifcored's clients use), between two
// threads on two CPUs that both poll without sleeping, as the bench's client and ifcored do:
// the cost of the two sockets and of the two CPUs handing the bytes over, with no work
// between. A request through the daemon takes this plus its work; through the kernel the
// work runs in the caller's own syscall, without the hand-over. BM_RingRoundTrip is the
// same exchange through mapped rings (src/rtnl/ring.h): the hand-over alone, no syscall.
// BM_SeqpacketPipelined is the floor under a pipelined batch (the sweep's creates): N
// requests in flight at once, sent 32 to a sendmmsg(2) as the bench's client sends them,
// read 16 to a recvmmsg(2) and answered with one sendmmsg(2) per read, as ifcored does.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <thread>
#include <vector>

#include "rtnl/ring.h"

namespace {

// The first and the last CPU this thread may use (equal with one CPU).
std::pair<int, int> two_cpus() {
  cpu_set_t allowed;
  int first = -1, last = -1;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) {
        if (first < 0) first = c;
        last = c;
      }
  return {first, last};
}

void pin(std::thread::native_handle_type t, int cpu) {
  if (cpu < 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  (void)pthread_setaffinity_np(t, sizeof one, &one);
}

// Reads one datagram, polling without sleeping; 0 at end of file, -1 on an error.
ssize_t poll_recv(int fd, void* buf, std::size_t len) {
  for (;;) {
    ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
    if (n >= 0) return n;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    sched_yield();
  }
}

void BM_SeqpacketRoundTrip(benchmark::State& state) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    state.SkipWithError("socketpair failed");
    return;
  }
  auto [client_cpu, server_cpu] = two_cpus();
  std::thread server([fd = sv[1]] {
    std::array<char, 4096> in;
    std::array<char, 36> answer{};
    while (poll_recv(fd, in.data(), in.size()) > 0)
      if (send(fd, answer.data(), answer.size(), MSG_NOSIGNAL) < 0) return;
  });
  pin(server.native_handle(), server_cpu);
  cpu_set_t saved;
  bool restore = sched_getaffinity(0, sizeof saved, &saved) == 0;
  pin(pthread_self(), client_cpu);
  std::array<char, 32> request{};
  std::array<char, 4096> in;
  for (auto _ : state) {
    if (send(sv[0], request.data(), request.size(), MSG_NOSIGNAL) < 0 ||
        poll_recv(sv[0], in.data(), in.size()) <= 0) {
      state.SkipWithError("the echo thread stopped");
      break;
    }
  }
  shutdown(sv[0], SHUT_RDWR);
  server.join();
  close(sv[0]);
  close(sv[1]);
  if (restore) (void)sched_setaffinity(0, sizeof saved, &saved);
  state.counters["cpus"] = client_cpu == server_cpu ? 1 : 2;
}
BENCHMARK(BM_SeqpacketRoundTrip)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Requests sent per sendmmsg(2) and read per recvmmsg(2) by the client (the bench's
// NlClient::kSlots), and read per recvmmsg(2) by the server (ifcored's kRecvSlots).
constexpr unsigned kClientSlots = 32, kServerSlots = 16;

// mmsghdr entries over `bufs` buffers of `size` bytes each, starting at `base`.
std::vector<mmsghdr> mmsg_headers(std::vector<iovec>& iov, char* base, std::size_t size, unsigned n,
                                  bool same_buffer) {
  iov.resize(n);
  std::vector<mmsghdr> m(n);
  for (unsigned i = 0; i < n; ++i) {
    iov[i] = {base + (same_buffer ? 0 : i * size), size};
    m[i].msg_hdr.msg_iov = &iov[i];
    m[i].msg_hdr.msg_iovlen = 1;
  }
  return m;
}

void BM_SeqpacketPipelined(benchmark::State& state) {
  const auto n = static_cast<unsigned>(state.range(0));
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    state.SkipWithError("socketpair failed");
    return;
  }
  auto [client_cpu, server_cpu] = two_cpus();
  std::thread server([fd = sv[1]] {
    std::vector<char> in(kServerSlots * 4096);
    std::array<char, 36> answer{};
    std::vector<iovec> in_iov, out_iov;
    auto in_msgs = mmsg_headers(in_iov, in.data(), 4096, kServerSlots, false);
    auto out_msgs = mmsg_headers(out_iov, answer.data(), answer.size(), kServerSlots, true);
    for (;;) {
      int got = recvmmsg(fd, in_msgs.data(), kServerSlots, MSG_DONTWAIT, nullptr);
      if (got < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return;
        sched_yield();
        continue;
      }
      if (got == 0 || in_msgs[0].msg_len == 0) return;  // end of file
      for (int sent = 0; sent < got;) {
        int k =
            sendmmsg(fd, out_msgs.data() + sent, static_cast<unsigned>(got - sent), MSG_NOSIGNAL);
        if (k < 0) return;
        sent += k;
      }
    }
  });
  pin(server.native_handle(), server_cpu);
  cpu_set_t saved;
  bool restore = sched_getaffinity(0, sizeof saved, &saved) == 0;
  pin(pthread_self(), client_cpu);
  std::array<char, 48> request{};
  std::vector<char> in(kClientSlots * 512);
  std::vector<iovec> req_iov, in_iov;
  auto req_msgs = mmsg_headers(req_iov, request.data(), request.size(), kClientSlots, true);
  auto in_msgs = mmsg_headers(in_iov, in.data(), 512, kClientSlots, false);
  for (auto _ : state) {
    unsigned sent = 0, answered = 0;
    while (answered < n) {
      if (sent < n) {
        int k = sendmmsg(sv[0], req_msgs.data(), std::min(kClientSlots, n - sent),
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (k > 0) sent += static_cast<unsigned>(k);
      }
      int got = recvmmsg(sv[0], in_msgs.data(), kClientSlots, MSG_DONTWAIT, nullptr);
      if (got > 0)
        answered += static_cast<unsigned>(got);
      else if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        break;
    }
    if (answered < n) {
      state.SkipWithError("the echo thread stopped");
      break;
    }
  }
  shutdown(sv[0], SHUT_RDWR);
  server.join();
  close(sv[0]);
  close(sv[1]);
  if (restore) (void)sched_setaffinity(0, sizeof saved, &saved);
  state.counters["cpus"] = client_cpu == server_cpu ? 1 : 2;
  state.counters["per_request"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * n,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SeqpacketPipelined)->Arg(100)->Arg(1000)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_RingRoundTrip(benchmark::State& state) {
  using ifcore::Result;
  using ifcore::rtnl::MappedRings;
  auto daemon = MappedRings::create(ifcore::rtnl::kRingDefaultSize);
  if (!daemon) {
    state.SkipWithError(daemon.error().message.c_str());
    return;
  }
  auto client = MappedRings::attach(dup(daemon->fd()));
  if (!client) {
    state.SkipWithError(client.error().message.c_str());
    return;
  }
  auto [client_cpu, server_cpu] = two_cpus();
  std::atomic<bool> stop{false};
  std::thread server([&stop, &d = *daemon] {
    std::vector<std::uint8_t> in;
    const std::array<std::uint8_t, 36> answer{};
    while (!stop.load(std::memory_order_relaxed)) {
      auto p = d.pop(in);
      if (!p) return;
      if (*p == MappedRings::Popped::Datagram && !d.push(answer)) return;
    }
  });
  pin(server.native_handle(), server_cpu);
  cpu_set_t saved;
  bool restore = sched_getaffinity(0, sizeof saved, &saved) == 0;
  pin(pthread_self(), client_cpu);
  const std::array<std::uint8_t, 32> request{};
  std::vector<std::uint8_t> in;
  for (auto _ : state) {
    if (!client->push(request).value_or(false)) {
      state.SkipWithError("the request ring refused");
      break;
    }
    Result<MappedRings::Popped> p = MappedRings::Popped::Empty;
    do p = client->pop(in);
    while (p && *p != MappedRings::Popped::Datagram);
    if (!p) {
      state.SkipWithError("the reply ring is corrupt");
      break;
    }
  }
  stop = true;
  server.join();
  if (restore) (void)sched_setaffinity(0, sizeof saved, &saved);
  state.counters["cpus"] = client_cpu == server_cpu ? 1 : 2;
}
BENCHMARK(BM_RingRoundTrip)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
