// proto/install.cc — plugs the protocols into an engine: the per-engine state (kept in a
// process-wide registry keyed by engine, as the engine has no slot for plug-in state), the
// per-namespace hooks, the subscribers in Linux's registration order (dst, inet, fib,
// inet6), the listeners and the policies.
//
// Lock order: control lock -> registry mutex (leaf).
#include "proto/install.h"

#include <mutex>

#include "base/rcu.h"
#include "proto/state.h"

namespace ifcore::proto {

namespace {

std::mutex g_mu;
std::unordered_map<const Engine*, std::unique_ptr<EngineProto>>& registry() {
  static auto* r = new std::unordered_map<const Engine*, std::unique_ptr<EngineProto>>();
  return *r;
}

const char kNetTag = 0;  // Namespace::data_locked key

// Linux: the pernet_operations of ipv4/ipv6 (devconf "all"/"default", the fib tables).
class Hooks final : public PernetHooks {
 public:
  explicit Hooks(EngineProto& ep) : ep_(ep) {}
  Result<void> init(Control& ctl, Namespace& ns) override {
    ns.set_data_locked(&kNetTag, std::make_shared<NetState>());
    return ok();
  }
  void exit(Control& ctl, Namespace& ns) override {
    // Every device is gone; routes left without a device (blackhole...) hold nothing.
    NetState* st = ns.data_locked<NetState>(&kNetTag);
    if (!st) return;
    for (auto* tables : {&st->tables4, &st->tables6})
      for (auto& [id, t] : *tables)
        for (auto& [k, v] : t)
          for (auto& r : v) dst_free(ep_, *r, std::move(r->dst));
    st->tables4.clear();
    st->tables6.clear();
  }

 private:
  EngineProto& ep_;
};

}  // namespace

EngineProto& engine_proto(Engine& e) {
  std::lock_guard lk(g_mu);
  auto it = registry().find(&e);
  if (it == registry().end()) {
    e.log(LogLevel::Error, "protocols used on an engine without proto::install_all");
    std::abort();
  }
  return *it->second;
}

NetState& net_state(Namespace& ns) {
  NetState* st = ns.data_locked<NetState>(&kNetTag);
  if (!st) {
    // A namespace the hooks have not seen (cannot happen once installed): make it now.
    ns.set_data_locked(&kNetTag, std::make_shared<NetState>());
    st = ns.data_locked<NetState>(&kNetTag);
  }
  return *st;
}

DevState& dev_state(EngineProto& ep, Device& d) {
  auto& p = ep.devs[&d];
  if (!p) p = std::make_unique<DevState>();
  return *p;
}

DevState* find_dev(EngineProto& ep, const Device& d) {
  auto it = ep.devs.find(&d);
  return it == ep.devs.end() ? nullptr : it->second.get();
}

void notify_addr(EngineProto& ep, Namespace& ns, inet::ProtoEvent ev, const AddrInfo& a) {
  for (auto* l : ep.listeners) l->on_addr(ns, ev, a);
}

void notify_route(EngineProto& ep, Namespace& ns, inet::ProtoEvent ev, const RouteInfo& r) {
  for (auto* l : ep.listeners) l->on_route(ns, ev, r);
}

void install_all(Engine& engine) {
  Policies p = engine.policies();
  auto ep = std::make_unique<EngineProto>();
  ep->ref_wait = p.ref_wait;
  ep->dst_priority = p.dst_priority;
  EngineProto& ref = *ep;
  {
    std::lock_guard lk(g_mu);
    // An engine at the address of a destroyed one: its state has nothing left in it.
    registry()[&engine] = std::move(ep);
  }
  auto ctl = engine.control();
  ref.hooks = std::make_unique<Hooks>(ref);
  if (auto r = ctl.add_pernet(*ref.hooks); !r)
    engine.log(LogLevel::Error, "protocols: pernet init failed: " + r.error().message);
  dst_subscribe(ctl, ref);
  inet_subscribe(ctl);
  fib_subscribe(ctl);
  inet6_subscribe(ctl);
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

void add_listener(Control& ctl, ProtoListener& l) {
  engine_proto(ctl.engine()).listeners.push_back(&l);
}

void remove_listener(Control& ctl, ProtoListener& l) {
  auto& v = engine_proto(ctl.engine()).listeners;
  v.erase(std::remove(v.begin(), v.end(), &l), v.end());
}

void apply_policies(Engine& engine) {
  Policies p = engine.policies();
  auto ctl = engine.control();
  EngineProto& ep = engine_proto(engine);
  ep.ref_wait = p.ref_wait;
  if (ep.dst_priority != p.dst_priority) {
    ep.dst_priority = p.dst_priority;
    ctl.set_priority(ep.dst_sub, p.dst_priority);
  }
}

DstStats dst_stats(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  return DstStats{ep.dst_live, ep.garbage.size()};
}

}  // namespace ifcore::inet
