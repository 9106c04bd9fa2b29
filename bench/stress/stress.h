// bench/stress/stress.h — ifcore-stress: one engine, served by ifcored's loop in the same
// process, churned at once by embedded writers, RCU readers that hold references, daemon
// clients over the socket and over mapped rings, a subscriber that never reads and clients
// that leave in the middle of a dump, a batch or a ring; then SIGTERM and the final checks
// (main.cc). Bounded in time and in operations: it always stops by itself.
//
// Context: the workers run on threads of their own and share the engine and a Shared; each
// keeps what it believes in its own thread and checks it against the engine at its end.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "ifcore/engine.h"
#include "ifcore/mutex.h"

namespace ifcore::stress {

struct Options {
  double seconds = 10;        // the run's length (the bound in time)
  std::uint64_t max_ops = 0;  // the bound in operations (0: time only)
  int writers = 3;            // embedded writers, one namespace each
  int readers = 2;            // RCU readers holding references
  int socket_clients = 2;     // daemon clients pipelining over the socket
  int ring_clients = 1;       // daemon clients pipelining over mapped rings
  bool hostile = true;        // the never-reading subscriber and the leaving clients
  std::uint64_t seed = 1;     // every worker's random choices derive from it
  std::string socket_path;    // where the in-process daemon listens
  double heap_slack_mib = 8;  // heap in use at the end may exceed the start by this much
  bool leak = false;          // hold one deleted device's reference for the whole run
};

// What the workers share: the stop signal, the operation count and the failures.
struct Shared {
  explicit Shared(const Options& o) : opts(o) {}
  const Options& opts;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> ops{0};

  // True once the run's time is up (main sets stop) or the operation bound is reached.
  bool done() const {
    return stop.load(std::memory_order_relaxed) ||
           (opts.max_ops && ops.load(std::memory_order_relaxed) >= opts.max_ops);
  }
  void count(std::uint64_t n = 1) { ops.fetch_add(n, std::memory_order_relaxed); }

  // Records a broken promise (a refused request that should have been made, a dump that
  // differs from what a client believes...). Thread-safe.
  void fail(std::string what);
  std::vector<std::string> failures() const;

 private:
  mutable Mutex mu_;  // LOCK ORDERING: a leaf
  std::vector<std::string> failures_ IFCORE_GUARDED_BY(mu_);
};

// Per-worker figures for the report (written by the worker, read after it is joined).
struct WriterStats {
  std::uint64_t creates = 0, deletes = 0, batch_deletes = 0, changes = 0, checks = 0;
};
struct ReaderStats {
  std::uint64_t lookups = 0, refs = 0, long_holds = 0;
};
struct ClientStats {
  std::uint64_t requests = 0, rounds = 0, dumps_checked = 0;
};
struct HostileStats {
  std::uint64_t mid_dump = 0, mid_batch = 0, mid_ring = 0, cleanups = 0;
  std::uint64_t subscriber_datagrams = 0, subscriber_overflows = 0;
};

// The namespace of embedded writer `i`, and of daemon client `i`.
std::string writer_namespace(int i);
std::string client_namespace(int i);
inline constexpr const char* kHostileNamespace = "stress-h";

// Embedded writer `index` (workers.cc): churns dummies with an IPv4 address, a route and a
// permanent neighbour each through the Control API in its own namespace (create, delete,
// batch delete, down and up, MTU), until done; then checks that the namespace holds
// exactly the devices it believes.
void run_writer(Engine& engine, Shared& sh, int index, WriterStats& st);

// RCU reader (workers.cc): looks devices up in `namespaces` without a lock, takes a Ref on
// what it finds and holds it for a random short time (now and then a few milliseconds, so
// that deletes wait for it), until done. Context: the namespaces outlive the reader.
void run_reader(Shared& sh, std::vector<Namespace*> namespaces, int index, ReaderStats& st);

// Daemon client `index` (clients.cc): in its own namespace, rounds of pipelined creates
// (with an IPv6 address each), sets and deletes, over the socket or over mapped rings,
// checking now and then (and at its end) that a dump shows exactly what it believes.
void run_client(Shared& sh, int index, bool rings, ClientStats& st);

// The hostile clients (clients.cc): clients that leave in the middle of a dump, of a
// pipelined batch and of a ring, and one that subscribes to everything in writer 0's
// namespace and never reads until the end; then it cleans up after the batches left and
// checks that nothing of them is half-made.
void run_hostile(Shared& sh, HostileStats& st);

}  // namespace ifcore::stress
