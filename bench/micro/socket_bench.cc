// ifcore-micro: the floor under every request through ifcored. A 36-byte answer to a
// 32-byte request over a unix SOCK_SEQPACKET pair (what ifcored's clients use), between two
// threads on two CPUs that both poll without sleeping, as the bench's client and ifcored do:
// the cost of the two sockets and of the two CPUs handing the bytes over, with no work
// between. A request through the daemon takes this plus its work; through the kernel the
// work runs in the caller's own syscall, without the hand-over. BM_RingRoundTrip is the
// same exchange through mapped rings (src/rtnl/ring.h): the hand-over alone, no syscall.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

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
