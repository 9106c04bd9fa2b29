// proto/dev_routes.cc — the list of a device's routes (see dev_routes.h).
//
// Lock order: control lock only.
#include "proto/state.h"

namespace ifcore::proto {

void DevRoutes::push(Route* r) {
  r->dev_prev = nullptr;
  r->dev_next = head_;
  if (head_) head_->dev_prev = r;
  head_ = r;
}

void DevRoutes::erase(Route* r) {
  if (!r->dev_prev && head_ != r) return;
  (r->dev_prev ? r->dev_prev->dev_next : head_) = r->dev_next;
  if (r->dev_next) r->dev_next->dev_prev = r->dev_prev;
  r->dev_prev = r->dev_next = nullptr;
}

}  // namespace ifcore::proto
