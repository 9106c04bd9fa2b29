// proto/install.cc — plugs the protocols into an engine: the per-engine state (the
// engine's plug-in data), the per-namespace hooks, the subscribers in Linux's registration
// order (dst, inet, fib, inet6), the listeners and the policies.
//
// Lock order: runs under the control lock.
#include "proto/install.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "base/rcu.h"
#include "proto/multipath.h"
#include "proto/state.h"

namespace ifcore::proto {

namespace {

const char kEngineTag = 0;  // Engine::plugin_data key
const char kNetTag = 0;     // Namespace::data_locked key

// Re-applies the policies the protocols follow (dst priority, reference wait).
void apply(Control& ctl, EngineProto& ep, const Policies& p) {
  ep.ref_wait = p.ref_wait;
  if (ep.dst_priority != p.dst_priority) {
    ep.dst_priority = p.dst_priority;
    ctl.set_priority(ep.dst_sub, p.dst_priority);
  }
}

// Linux: the pernet_operations of ipv4/ipv6 (devconf "all"/"default", the fib tables).
class Hooks final : public PernetHooks {
 public:
  explicit Hooks(EngineProto& ep) : ep_(ep) {}
  Result<void> init(Control& ctl, Namespace& ns) override {
    auto st = std::make_shared<NetState>();
    rules_init(*st);
    addrlabels_init(st->labels);
    ns.set_data_locked(&kNetTag, std::move(st));
    return ok();
  }
  void exit(Control& ctl, Namespace& ns) override {
    // Every device is gone; routes left without a device (blackhole...) hold nothing.
    NetState* st = ns.data_locked<NetState>(&kNetTag);
    if (!st) return;
    RetireScope scope(ep_);
    for (auto* tables : {&st->tables4, &st->tables6})
      for (auto& [id, t] : *tables)
        for (auto& [k, v] : t)
          for (auto& r : v) dst_free(ep_, r, std::move(r.dst));
    st->tables4.clear();
    st->tables6.clear();
    neigh_exit(ep_, *st);
    nexthop_exit(*st);
    conf_snap_reset(ep_, *st);
  }

 private:
  EngineProto& ep_;
};

}  // namespace

EngineProto& engine_proto(Engine& e) {
  auto* ep = e.plugin_data<EngineProto>(&kEngineTag);
  if (!ep) {
    e.log(LogLevel::Error, "protocols used on an engine without proto::install_all");
    std::abort();
  }
  return *ep;
}

NetState& net_state(Namespace& ns) {
  NetState* st = ns.data_locked<NetState>(&kNetTag);
  if (!st) {
    // A namespace the hooks have not seen (cannot happen once installed): make it now.
    auto made = std::make_shared<NetState>();
    rules_init(*made);
    addrlabels_init(made->labels);
    ns.set_data_locked(&kNetTag, std::move(made));
    st = ns.data_locked<NetState>(&kNetTag);
  }
  return *st;
}

EngineProto::~EngineProto() {
  // Every grace period is over (the engine's barriers).
  for (RcuHook* h = retired.load(std::memory_order_relaxed); h;) {
    RcuHook* next = h->next_retired;
    h->destroy(h);
    h = next;
  }
  while (DevState* ds = dev_states) {
    dev_states = ds->next;
    delete ds;
  }
}

void retire_flush_now(EngineProto& ep) {
  RcuHook* head = ep.retired.exchange(nullptr, std::memory_order_relaxed);
  ep.neigh_retiring = nullptr;  // on its way with the rest
  rcu::call(&head->rcu, [](rcu_head* h) {
    for (auto* p = reinterpret_cast<RcuHook*>(h); p;) {
      RcuHook* next = p->next_retired;
      p->destroy(p);
      p = next;
    }
  });
}

namespace {

// A device's slot holds its DevState, or, with the low bit set, the ConfSnap of an idle
// device (both are aligned: the bit is free).
constexpr std::uintptr_t kIdleTag = 1;

void* raw_slot(EngineProto& ep, const Device& d) {
  if (ep.dev_slot >= 0) return d.plugin_slot_locked(ep.dev_slot);
  auto it = ep.devs.find(&d);
  return it == ep.devs.end() ? nullptr : it->second;
}

void set_raw_slot(const Control& ctl, EngineProto& ep, Device& d, void* p) {
  if (ep.dev_slot >= 0)
    d.set_plugin_slot_locked(ctl, ep.dev_slot, p);
  else if (p)
    ep.devs[&d] = p;
  else
    ep.devs.erase(&d);
}

ConfSnap* as_snap(void* p) {
  auto v = reinterpret_cast<std::uintptr_t>(p);
  return v & kIdleTag ? reinterpret_cast<ConfSnap*>(v & ~kIdleTag) : nullptr;
}

void snap_release(EngineProto& ep, ConfSnap* s) {
  if (s && --s->users == 0) ep.snaps.erase(s->self);
}

// The idle device's state, as Register would have made it (its groups joined once the
// state is in its slot).
void make_from_snap(Device& d, const ConfSnap& s, DevState& ds) {
  ds.in = std::make_unique<InDev>(d);
  ds.in->conf = idle_conf4(s, net_state(d.ns()));
  ds.in6 = std::make_unique<Inet6Dev>(d);
  ds.in6->conf = s.c6;
}

}  // namespace

DevState& dev_state(const Control& ctl, EngineProto& ep, Device& d) {
  void* p = raw_slot(ep, d);
  ConfSnap* idle = as_snap(p);
  if (p && !idle) return *static_cast<DevState*>(p);
  auto* ds = new DevState;
  ds->next = ep.dev_states;
  if (ds->next) ds->next->prev = ds;
  ep.dev_states = ds;
  if (idle) {
    make_from_snap(d, *idle, *ds);
    snap_release(ep, idle);
  }
  set_raw_slot(ctl, ep, d, ds);
  if (idle) mc6_init(ctl, d, *ds->in6);
  return *ds;
}

DevState* find_dev(EngineProto& ep, const Device& d) {
  void* p = raw_slot(ep, d);
  return as_snap(p) ? nullptr : static_cast<DevState*>(p);
}

std::optional<DevState*> find_dev_locally(EngineProto& ep, const Device& d) {
  if (ep.dev_slot < 0) return std::nullopt;
  return find_dev(ep, d);
}

DevState* find_or_make_dev(const Control& ctl, EngineProto& ep, Device& d) {
  return as_snap(raw_slot(ep, d)) ? &dev_state(ctl, ep, d) : find_dev(ep, d);
}

const ConfSnap* idle_snap(EngineProto& ep, const Device& d) {
  return as_snap(raw_slot(ep, d));
}

bool register_idle(const Control& ctl, EngineProto& ep, Device& d) {
  if (raw_slot(ep, d)) return false;
  NetState& st = net_state(d.ns());
  if (!st.snap) {
    ConfSnap& s = ep.snaps.emplace_front();
    s.self = ep.snaps.begin();
    s.c4 = fresh_conf4(ep, d.ns());
    s.c4.mc_forwarding = 0;  // Linux: inetdev_init, never inherited
    s.c6 = fresh_conf6(ep, d.ns());
    s.users = 1;  // the namespace's
    st.snap = &s;
  }
  ++st.snap->users;
  set_raw_slot(ctl, ep, d,
               reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(st.snap) | kIdleTag));
  return true;
}

void conf_snap_reset(EngineProto& ep, NetState& st) {
  snap_release(ep, std::exchange(st.snap, nullptr));
}

Inet4Conf fresh_conf4(const EngineProto& ep, Namespace& ns) {
  Inet4Conf c = net_state(ns).default4;
  c.arp = ep.neigh_tables[0].parms;
  return c;
}

Inet6Conf fresh_conf6(const EngineProto& ep, Namespace& ns) {
  Inet6Conf c = net_state(ns).default6;
  c.nd = ep.neigh_tables[1].parms;
  return c;
}

std::optional<Inet4Conf> dev_conf4(EngineProto& ep, const Device& d) {
  if (const ConfSnap* s = idle_snap(ep, d)) return idle_conf4(*s, net_state(d.ns()));
  DevState* ds = find_dev(ep, d);
  if (!ds || !ds->in) return std::nullopt;
  return ds->in->conf;
}

std::optional<Inet6Conf> dev_conf6(EngineProto& ep, const Device& d) {
  if (const ConfSnap* s = idle_snap(ep, d)) return s->c6;
  DevState* ds = find_dev(ep, d);
  if (!ds || !ds->in6) return std::nullopt;
  return ds->in6->conf;
}

bool serve_idle_locally(const Control& ctl, EngineProto& ep, Device& d, NetdevEvent e, int family) {
  // Only what touches nothing of the engine's: no listener to tell (the netconf
  // announcements), the state in the device's own slot, the namespace's snapshot made and
  // not released to nothing (EngineProto::snaps is the engine's).
  if (!ctl.scope() || !ep.listeners.empty() || ep.dev_slot < 0) return false;
  void* p = raw_slot(ep, d);
  if (e == NetdevEvent::Register) {
    if (family == AF_INET6) return as_snap(p) != nullptr;  // inet registered it idle
    if (p || d.mtu() < kIpv6MinMtu || !net_state(d.ns()).snap) return false;
    return register_idle(ctl, ep, d);
  }
  ConfSnap* s = e == NetdevEvent::Unregister ? as_snap(p) : nullptr;
  if (!s) return false;
  if (family == AF_INET) return true;  // inet6 frees the slot
  if (s->users <= 1) return false;     // the last user takes it off the engine's list
  drop_dev_state(ctl, ep, d);
  return true;
}

void drop_dev_state(const Control& ctl, EngineProto& ep, Device& d) {
  void* p = raw_slot(ep, d);
  if (!p) return;
  set_raw_slot(ctl, ep, d, nullptr);
  if (ConfSnap* idle = as_snap(p)) return snap_release(ep, idle);
  auto* ds = static_cast<DevState*>(p);
  (ds->prev ? ds->prev->next : ep.dev_states) = ds->next;
  if (ds->next) ds->next->prev = ds->prev;
  delete ds;
}

void notify_addr(EngineProto& ep, Namespace& ns, inet::ProtoEvent ev, const AddrInfo& a) {
  if (ep.listeners.empty()) return;
  const AddrInfo shown = ep.clock ? reported(a, ep.clock->now()) : a;
  for (auto* l : ep.listeners) l->on_addr(ns, ev, shown);
}

void notify_route(EngineProto& ep, Namespace& ns, inet::ProtoEvent ev, const RouteInfo& r,
                  std::uint16_t nlflags) {
  if (ep.listeners.empty()) return;
  const NetState& st = net_state(ns);
  if (!st.nh_compat && r.nhid) {
    RouteInfo shown = r;
    shown_in(st, shown);
    for (auto* l : ep.listeners) l->on_route_flagged(ns, ev, shown, nlflags);
    return;
  }
  for (auto* l : ep.listeners) l->on_route_flagged(ns, ev, r, nlflags);
}

void notify_netconf(EngineProto& ep, Namespace& ns, inet::ProtoEvent ev,
                    const inet::NetconfInfo& n) {
  for (auto* l : ep.listeners) l->on_netconf(ns, ev, n);
}

bool route_news_wanted(const EngineProto& ep, Namespace& ns, int family) {
  return std::any_of(ep.listeners.begin(), ep.listeners.end(),
                     [&](const inet::ProtoListener* l) { return l->wants_routes(ns, family); });
}

void install_all(Engine& engine) {
  auto ctl = engine.control();
  const Policies& p = ctl.policies();
  auto ep = std::make_shared<EngineProto>();
  ep->ref_wait = p.ref_wait;
  ep->dst_priority = p.dst_priority;
  ep->dev_slot = engine.claim_device_slot();
  EngineProto& ref = *ep;
  engine.set_plugin_data(&kEngineTag, std::move(ep));
  ctl.on_policies_changed([&ref](Control& c, const Policies& np) { apply(c, ref, np); });
  ref.hooks = std::make_unique<Hooks>(ref);
  if (auto r = ctl.add_pernet(*ref.hooks); !r)
    engine.log(LogLevel::Error, "protocols: pernet init failed: " + r.error().message);
  dst_subscribe(ctl, ref);
  lifetime_init(ctl, ref);
  res_init(ctl, ref);
  mp_init(ref);
  inet_subscribe(ctl);
  nexthop_subscribe(ctl);  // before fib and inet6: routes that name a nexthop go with it
  fib_subscribe(ctl);
  rules_subscribe(ctl);
  l3mdev_subscribe(ctl);
  neigh_subscribe(ctl);  // before inet6, which drops the device's state at Unregister
  inet6_subscribe(ctl);
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

void add_listener(Control& ctl, ProtoListener& l) {
  ctl.require_engine_wide("a protocol listener");  // read without the plug-in lock
  engine_proto(ctl.engine()).listeners.push_back(&l);
}

void remove_listener(Control& ctl, ProtoListener& l) {
  ctl.require_engine_wide("a protocol listener");  // read without the plug-in lock
  auto& v = engine_proto(ctl.engine()).listeners;
  v.erase(std::remove(v.begin(), v.end(), &l), v.end());
}

inet::LinkAfInfo link_af_info(const Device& dev) {
  inet::LinkAfInfo r;
  r.loopback = (dev.flags() & IFF_LOOPBACK) != 0;
  auto* ep = dev.engine().plugin_data<EngineProto>(&kEngineTag);
  if (!ep) return r;
  if (const ConfSnap* idle = idle_snap(*ep, dev)) {  // down, no address: no flags
    r.conf4 = idle_conf4(*idle, net_state(dev.ns()));
    r.conf6 = idle->c6;
    return r;
  }
  DevState* ds = find_dev(*ep, dev);
  if (!ds) return r;
  if (ds->in) r.conf4 = ds->in->conf;
  if (ds->in6) {
    r.conf6 = ds->in6->conf;
    // Linux: addrconf_notify sets IF_READY when the device is up and netif_oper_up
    // (addrconf_link_ready); addrconf_dad_completed sends a router solicitation from the
    // link-local address (IF_RS_SENT) unless forwarding or loopback.
    std::uint8_t op = dev.operstate();
    bool ready =
        dev.is_up() && !ds->in6->conf.disable_ipv6 && (op == IF_OPER_UP || op == IF_OPER_UNKNOWN);
    if (ready) {
      r.inet6_flags |= inet::kIf6Ready;
      bool ll = std::any_of(ds->in6->addrs.begin(), ds->in6->addrs.end(), [](const auto& a) {
        return a->info.local.is_v6_link_local() && !(a->info.flags & IFA_F_TENTATIVE);
      });
      if (ll && !r.loopback && !ds->in6->conf.forwarding) r.inet6_flags |= inet::kIf6RsSent;
    }
  }
  return r;
}

DstStats dst_stats(Control& ctl) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  return DstStats{ep.dst_live, ep.garbage.size()};
}

}  // namespace ifcore::inet
