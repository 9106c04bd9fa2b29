// bench/scenarios/cpu_pair.h — the daemon path's client and server on two CPUs.
#pragma once

#include <sched.h>
#include <sys/types.h>

namespace ifcore::bench {

// For its lifetime: the calling thread runs on the first CPU it may use, and the thread
// `server` (a process's main thread: its pid) on the last one; the calling thread's own
// set comes back on destruction (the server's does not: it is a run's daemon, stopped
// after). Nothing when fewer than two CPUs are allowed or a call fails (pinned() says).
//
// Why (the daemon path, docs/BENCH.md): left to the scheduler, the bench's client and
// ifcored were at times put on one CPU, where they take turns (the wakeup of a unix
// socket's reader pulls it to the writer's CPU), and 100 pipelined creates took 500-570 µs
// instead of 330-380 µs. Pin after the daemon's warm-up, which starts its other threads
// (RCU callbacks, the finalizer): threads made later inherit the pin, those made before
// stay free. Context: any thread; not thread-safe.
class CpuPair {
 public:
  explicit CpuPair(pid_t server);
  ~CpuPair();
  CpuPair(const CpuPair&) = delete;
  CpuPair& operator=(const CpuPair&) = delete;

  bool pinned() const { return pinned_; }
  int client_cpu() const { return client_; }
  int server_cpu() const { return server_; }

 private:
  cpu_set_t saved_{};
  bool pinned_ = false;
  int client_ = -1, server_ = -1;
};

}  // namespace ifcore::bench
