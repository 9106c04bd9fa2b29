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

// Which dead entries are still referenced when their device is being unregistered, and so
// wait on the garbage list (Linux 2.6.36: dst_free parks an entry whose refcount is not
// zero). An IPv6 address's host-route entry (ifp->rt) and the routes to global IPv6
// prefixes were; link-local and multicast entries and IPv4's fib_info were released at
// once. In 2.6.36 a permanent address survived the admin down that starts an unregister
// (ifcore: keep_addr_on_down), so it died in addrconf's NETDEV_UNREGISTER, after a
// priority-0 dst_dev_event had already run: seed 000.
bool pinnable_route(const Route& r) {
  if (r.info.family != AF_INET6 || !r.dev) return false;
  if (r.info.type != RTN_UNICAST && r.info.type != RTN_LOCAL) return false;
  return !is_v6_link_local_prefix(r.info.dst);
}

void park_or_release(EngineProto& ep, Device* dev, bool pinnable, std::unique_ptr<DstEntry> dst) {
  if (!dst) return;
  --ep.dst_live;
  if (pinnable && dev && dev->state() != RegState::Registered) {
    ep.garbage.push_back(Garbage{dev, std::move(dst)});
    ep.garbage_count.store(ep.garbage.size(), std::memory_order_relaxed);
    return;
  }
  retire_hooked(ep, dst.release());  // readers may still use it: drop the Ref after a grace period
}

class DstSubscriber final : public Subscriber {
 public:
  explicit DstSubscriber(EngineProto& ep) : ep_(ep) {}
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    // Linux: dst_dev_event(NETDEV_UNREGISTER) -> dst_ifdown for the garbage list. A legacy
    // waiter's re-broadcast comes here again. An empty list is read without the lock.
    if (ev.event != NetdevEvent::Unregister || !garbage_waits()) return ok();
    PluginGuard guard(ctl);
    RetireScope scope(ep_, ev.batched);
    dst_ifdown(ep_, &ev.dev);
    return ok();
  }
  void on_batch(Control& ctl, BatchEvent ev, std::span<Device* const> devs) override {
    // Under the event policy nobody re-broadcasts Unregister: sweep once more at the end of
    // the batch so that a priority-0 dst subscriber cannot leave a device pinned forever.
    if (ev != BatchEvent::UnregisterBatch || ep_.ref_wait != RefWaitPolicy::Event) return;
    if (!garbage_waits()) return;
    PluginGuard guard(ctl);
    RetireScope scope(ep_);
    for (Device* d : devs) dst_ifdown(ep_, d);
  }

 private:
  bool garbage_waits() const { return ep_.garbage_count.load(std::memory_order_relaxed) != 0; }
  EngineProto& ep_;
};

}  // namespace

std::unique_ptr<DstEntry> dst_alloc(EngineProto& ep, Device& d) {
  ++ep.dst_live;
  return std::make_unique<DstEntry>(d);
}

void dst_free(EngineProto& ep, const Route& r, std::unique_ptr<DstEntry> dst) {
  park_or_release(ep, r.dev, pinnable_route(r), std::move(dst));
}

void dst_free_hop(EngineProto& ep, Device* dev, std::unique_ptr<DstEntry> dst) {
  park_or_release(ep, dev, false, std::move(dst));
}

void dst_free_ifa(EngineProto& ep, const Ifa& ifa, std::unique_ptr<DstEntry> dst) {
  park_or_release(ep, ifa.ref.get(), !ifa.info.local.is_v6_link_local(), std::move(dst));
}

void dst_ifdown(EngineProto& ep, const Device* dev) {
  auto& g = ep.garbage;
  for (std::size_t i = 0; i < g.size();) {
    if (dev && g[i].dev != dev) {
      ++i;
      continue;
    }
    retire_hooked(ep, g[i].dst.release());
    g[i] = std::move(g.back());
    g.pop_back();
  }
  ep.garbage_count.store(g.size(), std::memory_order_relaxed);
}

void dst_subscribe(Control& ctl, EngineProto& ep) {
  auto sub = std::make_unique<DstSubscriber>(ep);
  // Subscribed before inet, fib and inet6 so that at equal priority it runs first, as
  // dst_dev_notifier (registered at boot) did in 2.6.36.
  ep.dst_sub = ctl.subscribe(
      *sub, SubscribeOptions{"dst", ep.dst_priority, true, event_bit(NetdevEvent::Unregister),
                             true});  // the plug-in lock taken above when needed
  ep.subscribers.push_back(std::move(sub));
}

}  // namespace ifcore::proto
