// proto/dst.cc — route-cache (dst) entries: every route's next hop holds its device through
// one; a dead route's entry drops that reference after a grace period (Linux: dst_release
// and call_rcu), or waits on the garbage list for its device's Unregister (Linux 2.6.36:
// dst_garbage and dst_dev_event/dst_ifdown). The dst subscriber's priority is a policy
// (Policies::dst_priority): at -10 it runs after inet6 has parked its routes' entries and
// releases them at once; at 0 it runs first, finds nothing, and the references stay until
// a legacy waiter re-broadcasts Unregister a second later (seed 000).
//
// Lock order: control lock only. RCU callbacks own the entries handed to them.
#include "base/rcu.h"
#include "proto/state.h"

namespace ifcore::proto {

namespace {

bool is_v6_link_local_prefix(const IpAddr& a) {
  return a.is_v6() && a.data()[0] == 0xfe && (a.data()[1] & 0xc0) == 0x80;
}

// Which dead routes' entries are still referenced when their device is being unregistered.
// Linux 2.6.36 parked an IPv6 entry on dst_garbage when something still held it: a global
// address's host route (ifp->rt) and its anycast entry's route. Link-local and multicast
// routes were released at once, which is why deleting a device with only a link-local
// address was fast in seed 000 and one with a global address took a second.
bool pinned(const Route& r) {
  if (r.info.family != AF_INET6 || !r.dev) return false;
  if (r.info.type != RTN_UNICAST && r.info.type != RTN_LOCAL) return false;
  if (is_v6_link_local_prefix(r.info.dst)) return false;
  return r.dev->state() != RegState::Registered;
}

class DstSubscriber final : public Subscriber {
 public:
  explicit DstSubscriber(EngineProto& ep) : ep_(ep) {}
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    // Linux: dst_dev_event(NETDEV_UNREGISTER) -> dst_ifdown for the garbage list. A legacy
    // waiter's re-broadcast comes here again.
    if (ev.event == NetdevEvent::Unregister) dst_ifdown(ep_, &ev.dev);
    return ok();
  }
  void on_batch(Control& ctl, BatchEvent ev, std::span<Device* const> devs) override {
    // Under the event policy nobody re-broadcasts Unregister: sweep once more at the end of
    // the batch so that a priority-0 dst subscriber cannot leave a device pinned forever.
    if (ev != BatchEvent::UnregisterBatch || ep_.ref_wait != RefWaitPolicy::Event) return;
    for (Device* d : devs) dst_ifdown(ep_, d);
  }

 private:
  EngineProto& ep_;
};

}  // namespace

std::unique_ptr<DstEntry> dst_alloc(EngineProto& ep, Device& d) {
  ++ep.dst_live;
  return std::make_unique<DstEntry>(d);
}

void dst_free(EngineProto& ep, const Route& r, std::unique_ptr<DstEntry> dst) {
  if (!dst) return;
  --ep.dst_live;
  if (pinned(r)) {
    ep.garbage.push_back(Garbage{r.dev, std::move(dst)});
    return;
  }
  rcu::retire(dst.release());  // readers may still use it: drop the Ref after a grace period
}

void dst_ifdown(EngineProto& ep, const Device* dev) {
  auto& g = ep.garbage;
  for (std::size_t i = 0; i < g.size();) {
    if (dev && g[i].dev != dev) {
      ++i;
      continue;
    }
    rcu::retire(g[i].dst.release());
    g[i] = std::move(g.back());
    g.pop_back();
  }
}

void dst_subscribe(Control& ctl, EngineProto& ep) {
  auto sub = std::make_unique<DstSubscriber>(ep);
  // Subscribed before inet, fib and inet6 so that at equal priority it runs first, as
  // dst_dev_notifier (registered at boot) did in 2.6.36.
  ep.dst_sub = ctl.subscribe(*sub, SubscribeOptions{"dst", ep.dst_priority, true});
  ep.subscribers.push_back(std::move(sub));
}

}  // namespace ifcore::proto
