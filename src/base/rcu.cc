// RCU flavor wrapper: registration guard and the calls the engine uses.
#include "base/rcu.h"

// Only for the reader's `registered` flag: threads that liburcu registers itself (its
// call_rcu workers, which run our callbacks) must not be registered a second time.
#include <urcu/static/urcu-memb.h>

#include "base/tsan.h"

namespace ifcore::rcu {
namespace {

// Unregisters at thread exit the threads we registered. Constructed only on the slow path,
// so the fast path reads a trivial initial-exec thread-local (no __tls_get_addr).
struct Unregisterer {
  ~Unregisterer() { urcu_memb_unregister_thread(); }
};

}  // namespace

thread_local bool t_registered IFCORE_TLS_IE = false;

namespace {

// ThreadSanitizer sees none of liburcu's ordering. Told with two addresses: every read-side
// section's end is released on `readers_done`, acquired by whoever a grace period lets go
// (synchronize's caller, a callback); every callback's end is released on
// `callbacks_done`, acquired by barrier's caller. A callback is queued in a wrapper that
// carries the queuing thread's release to the callback thread.
char readers_done, callbacks_done;

struct Queued {
  rcu_head head;
  rcu_head* user;
  void (*fn)(rcu_head*);
};

[[maybe_unused]] void run_queued(rcu_head* h) {
  auto* q = reinterpret_cast<Queued*>(h);  // head is the first member
  tsan::acquire(q);
  tsan::acquire(&readers_done);
  q->fn(q->user);
  tsan::release(&callbacks_done);
  delete q;
}

}  // namespace

void register_thread_slow() {
  t_registered = true;
  if (URCU_TLS(urcu_memb_reader).registered) return;  // a liburcu thread (call_rcu worker)
  urcu_memb_register_thread();
  static thread_local Unregisterer unregister_at_exit;
  (void)&unregister_at_exit;
}

void read_lock() {
  urcu_memb_read_lock();
}
void read_unlock() {
  tsan::release(&readers_done);
  urcu_memb_read_unlock();
}
bool read_ongoing() {
  return urcu_memb_read_ongoing();
}

void synchronize() {
  register_thread();
  urcu_memb_synchronize_rcu();
  tsan::acquire(&readers_done);
}

void barrier() {
  register_thread();
  urcu_memb_barrier();
  tsan::acquire(&callbacks_done);
}

void call(rcu_head* head, void (*fn)(rcu_head*)) {
  register_thread();
  if constexpr (tsan::kEnabled) {
    auto* q = new Queued{{}, head, fn};
    tsan::release(q);
    urcu_memb_call_rcu(&q->head, run_queued);
    return;
  }
  urcu_memb_call_rcu(head, fn);
}

}  // namespace ifcore::rcu
