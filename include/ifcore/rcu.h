// ifcore/rcu.h — the read side of RCU, for embedders and faces.
//
// Lookups (Namespace::find_by_name_rcu, find_by_index_rcu) take no lock: call them inside
// an `rcu::ReadGuard`. A `Device*` found that way is valid until the guard ends; take a
// `Ref` (device.h) to keep the device beyond it.
//
// Hazards, as rules:
//  - never block, sleep or take the engine's control lock inside a ReadGuard;
//  - never call rcu::synchronize() or rcu::barrier() inside a ReadGuard (deadlock);
//  - guards nest.
// Every thread that uses a guard is registered with the RCU library on first use and
// unregistered when it exits; nothing for the caller to do.
#pragma once

namespace ifcore::rcu {

#if defined(__GNUC__)
#define IFCORE_TLS_IE __attribute__((tls_model("initial-exec")))
#else
#define IFCORE_TLS_IE
#endif

extern thread_local bool t_registered IFCORE_TLS_IE;
void register_thread_slow();

// Registers the calling thread with the RCU flavor (idempotent; one load after the first).
inline void register_thread() {
  if (!t_registered) register_thread_slow();
}

// Context: any registered thread; never blocks. Nests.
void read_lock();
void read_unlock();
bool read_ongoing();

// Waits for a grace period: every read-side section running at the call has ended.
// Context: must not be called inside a read-side section. May block (microseconds).
void synchronize();

// Waits until every callback queued with call() before this call has run.
// Context: must not be called inside a read-side section. May block (~10 ms: the
// callback worker batches its work).
void barrier();

class ReadGuard {
 public:
  ReadGuard() {
    register_thread();
    read_lock();
  }
  ~ReadGuard() { read_unlock(); }
  ReadGuard(const ReadGuard&) = delete;
  ReadGuard& operator=(const ReadGuard&) = delete;
};

}  // namespace ifcore::rcu
