// ifcore-micro: the floor under every request through ifcored. A 36-byte answer to a
// 48-byte request over a unix SOCK_SEQPACKET pair (what ifcored's clients use), between two
// threads on two CPUs that both poll without sleeping, as the bench's client and ifcored do:
// the cost of the two sockets and of the two CPUs handing the bytes over, with no work
// between. A request through the daemon takes this plus its work; through the kernel the
// work runs in the caller's own syscall, without the hand-over. BM_RingRoundTrip is the
// same exchange through mapped rings (src/rtnl/wire/ring.h): the hand-over alone, no syscall.
// BM_SeqpacketPipelined is the floor under a pipelined batch (the sweep's creates): N
// requests in flight at once, sent 32 to a sendmmsg(2) as the bench's client sends them,
// read 16 to a recvmmsg(2) and answered with one sendmmsg(2) per read, as ifcored does.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "bench/scenarios/socket_floor.h"
#include "rtnl/wire/ring.h"

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

// Runs `step` on one end of a fresh socket pair once per iteration, against an echo server
// on the other end: the bench's own (bench/scenarios/socket_floor.h), which prices a
// daemon run's requests at this floor. The server runs on the last CPU, this thread on the
// first.
template <class Step>
void against_echo(benchmark::State& state, Step step) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    state.SkipWithError("socketpair failed");
    return;
  }
  auto [client_cpu, server_cpu] = two_cpus();
  cpu_set_t saved;
  bool restore = sched_getaffinity(0, sizeof saved, &saved) == 0;
  {
    ifcore::bench::EchoServer server(sv[1], server_cpu);
    pin(pthread_self(), client_cpu);
    for (auto _ : state) {
      if (!step(sv[0])) {
        state.SkipWithError("the echo server stopped");
        break;
      }
    }
  }
  close(sv[0]);
  close(sv[1]);
  if (restore) (void)sched_setaffinity(0, sizeof saved, &saved);
  state.counters["cpus"] = client_cpu == server_cpu ? 1 : 2;
}

void BM_SeqpacketRoundTrip(benchmark::State& state) {
  against_echo(state, [](int fd) { return ifcore::bench::echo_round_trip(fd); });
}
BENCHMARK(BM_SeqpacketRoundTrip)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_SeqpacketPipelined(benchmark::State& state) {
  const auto n = static_cast<unsigned>(state.range(0));
  against_echo(state, [n](int fd) { return ifcore::bench::echo_pipelined(fd, n); });
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
