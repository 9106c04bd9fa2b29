// RCU flavor wrapper: registration guard and the calls the engine uses.
#include "base/rcu.h"

// Only for the reader's `registered` flag: threads that liburcu registers itself (its
// call_rcu workers, which run our callbacks) must not be registered a second time.
#include <urcu/static/urcu-memb.h>

namespace ifcore::rcu {
namespace {

// Unregisters at thread exit the threads we registered. Constructed only on the slow path,
// so the fast path reads a trivial initial-exec thread-local (no __tls_get_addr).
struct Unregisterer {
  ~Unregisterer() { urcu_memb_unregister_thread(); }
};

}  // namespace

thread_local bool t_registered IFCORE_TLS_IE = false;

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
  urcu_memb_read_unlock();
}
bool read_ongoing() {
  return urcu_memb_read_ongoing();
}

void synchronize() {
  register_thread();
  urcu_memb_synchronize_rcu();
}

void barrier() {
  register_thread();
  urcu_memb_barrier();
}

void call(rcu_head* head, void (*fn)(rcu_head*)) {
  register_thread();
  urcu_memb_call_rcu(head, fn);
}

}  // namespace ifcore::rcu
