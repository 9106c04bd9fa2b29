// RCU flavor wrapper: registration guard and the calls the engine uses.
#include "base/rcu.h"

// Only for the reader's `registered` flag: threads that liburcu registers itself (its
// call_rcu workers, which run our callbacks) must not be registered a second time.
#include <urcu/static/urcu-memb.h>

namespace ifcore::rcu {
namespace {

struct Registration {
  bool registered = false;
  bool owned = false;  // registered by us (so we unregister at thread exit)
  ~Registration() {
    if (owned) urcu_memb_unregister_thread();
  }
};

thread_local Registration t_registration;

}  // namespace

void register_thread() {
  if (t_registration.registered) return;
  t_registration.registered = true;
  if (URCU_TLS(urcu_memb_reader).registered) return;  // a liburcu thread (call_rcu worker)
  urcu_memb_register_thread();
  t_registration.owned = true;
}

void read_lock() { urcu_memb_read_lock(); }
void read_unlock() { urcu_memb_read_unlock(); }
bool read_ongoing() { return urcu_memb_read_ongoing(); }

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
