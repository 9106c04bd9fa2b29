// proto/dev_routes.h — the routes through one device (DevState::routes): an intrusive list
// through the routes themselves. Not a public header.
//
// Lock order: everything here runs under the control lock.
#pragma once

namespace ifcore::proto {

struct Route;

// The routes through one device, in no order: a list through Route::dev_prev/dev_next, so
// that adding and removing one allocates nothing and costs O(1). The tables own the
// routes; a route is on its device's list from insertion to erasure.
class DevRoutes {
 public:
  DevRoutes() = default;
  DevRoutes(const DevRoutes&) = delete;
  DevRoutes& operator=(const DevRoutes&) = delete;
  ~DevRoutes() {  // routes left behind (none once flushed) are unlinked, not freed
    while (head_) erase(head_);
  }
  bool empty() const { return head_ == nullptr; }
  void push(Route* r);
  // Does nothing if `r` is not on this list.
  void erase(Route* r);
  template <class F, class R = Route>  // R: Route, complete where this is called
  void for_each(F f) const {
    for (R* r = head_; r; r = r->dev_next) f(r);
  }

 private:
  Route* head_ = nullptr;
};

}  // namespace ifcore::proto
