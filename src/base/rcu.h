// The one place that names the liburcu flavor (memb). Switching to urcu-bp (no thread
// registration, fork-safe) is a change of this header and rcu.cc only.
//
// Include this header, never <urcu.h>: the generic header turns synchronize_rcu, call_rcu
// and rcu_barrier into macros.
#pragma once

#include <urcu/urcu-memb.h>
// urcu-memb.h maps the generic names to urcu_memb_*; undo the macros so C++ code that
// says e.g. `call_rcu` means what it says.
#include <urcu/map/clear.h>

#include "ifcore/rcu.h"

namespace ifcore::rcu {

// The flavor table, for cds_lfht_new_flavor().
inline const struct rcu_flavor_struct* flavor() {
  return &urcu_memb_flavor;
}

// Queues fn(head) to run after a grace period on the library's callback thread.
// Context: the calling thread is registered (done here). Never blocks.
void call(rcu_head* head, void (*fn)(rcu_head*));

// Frees `p` with `delete` after a grace period. T need not be standard layout.
template <class T>
void retire(T* p) {
  if (!p) return;
  struct Node {
    rcu_head head;
    T* p;
  };
  auto* n = new Node{{}, p};
  call(&n->head, [](rcu_head* h) {
    auto* node =
        reinterpret_cast<Node*>(h);  // head is the first member of a standard-layout struct
    delete node->p;
    delete node;
  });
}

}  // namespace ifcore::rcu
