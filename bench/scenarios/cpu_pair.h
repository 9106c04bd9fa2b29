// bench/scenarios/cpu_pair.h — the CPUs of a timed run: the server's work (ifcored's serving
// thread, or the thread whose syscalls do the kernel's work) on the fastest CPU, the daemon
// path's client on another.
#pragma once

#include <sched.h>
#include <sys/types.h>

namespace ifcore::bench {

// The CPUs a run is pinned to; -1: none (fewer than two CPUs allowed, or a call failed).
struct CpuChoice {
  int server = -1;
  int client = -1;
  bool valid() const { return server >= 0 && client >= 0 && server != client; }
};

// Times the same short loop (about 1 ms) three times on each CPU the calling thread may use
// (the first four of them), in turns, and returns the fastest (by median) as `server`, the
// next as `client`. The calling thread's own set comes back before it returns.
//
// Why (docs/BENCH.md, "CPUs"): on this 2-vCPU VM one vCPU is at times 1.7-2.4 times slower
// than the other in the same loop, and which one changes within minutes. With ifcored
// always on the last CPU and the kernel's work wherever the scheduler put the bench's
// thread, the daemon's figures were 1.6 times slower than usual in some runs while the
// kernel's were not. Chosen before every repetition (the kernel's runs come after the
// others), the server's work of every path runs on the CPU that is fastest at the time.
// Context: any thread; not thread-safe; takes about 6 ms on two CPUs, 12 ms on four or more.
CpuChoice choose_cpus();

// Pins the calling thread to `cpu`. False when it could not (it runs where it did).
bool pin_self(int cpu);

// For its lifetime: the calling thread runs on cpus.client and the thread `server` (a
// process's main thread: its pid) on cpus.server; the calling thread's own set comes back
// on destruction (the server's does not: it is a run's daemon, stopped after). Nothing when
// `cpus` is not valid or a call fails (pinned() says).
//
// Why (the daemon path, docs/BENCH.md): left to the scheduler, the bench's client and
// ifcored were at times put on one CPU, where they take turns (the wakeup of a unix
// socket's reader pulls it to the writer's CPU), and 100 pipelined creates took 500-570 µs
// instead of 330-380 µs. Pin after the daemon's warm-up, which starts its other threads
// (RCU callbacks, the finalizer): threads made later inherit the pin, those made before
// stay free. Context: any thread; not thread-safe.
class CpuPair {
 public:
  CpuPair(pid_t server, CpuChoice cpus);
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
