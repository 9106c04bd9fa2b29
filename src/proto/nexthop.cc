// proto/nexthop.cc — nexthop objects (Linux: net/ipv4/nexthop.c, semantics only): per
// namespace a map by id of single nexthops (a gateway and/or a device, or a blackhole) and
// groups of them; creation with the kernel's checks, replacement in place (the routes and
// groups that use one follow), deletion with its cascade (routes, groups, groups left
// empty), and the device events that take nexthops away.
//
// Context: control lock, everywhere. A single nexthop with a device holds it by a Ref; a
// route that names a nexthop holds the hops' devices through its dst entries, as any
// route (fib.cc binds them from nexthop_hops).
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include <algorithm>

#include "proto/state.h"

namespace ifcore::proto {

using inet::NexthopInfo;
using inet::NexthopMember;
using inet::NexthopRequest;
using inet::ProtoEvent;

namespace {

TimePoint now_of(EngineProto& ep) {
  return ep.clock ? ep.clock->now() : TimePoint{};
}

// `nh` as reported: a resilient group's unbalanced time counted at `now`.
NexthopInfo reported(const Nexthop& nh, TimePoint now) {
  NexthopInfo i = nh.info;
  if (nh.res) i.resilient.unbalanced_time = res_unbalanced_ticks(nh, now);
  return i;
}

void notify(EngineProto& ep, Namespace& ns, ProtoEvent ev, const Nexthop& nh) {
  if (ep.listeners.empty()) return;
  const NexthopInfo i = reported(nh, now_of(ep));
  for (auto* l : ep.listeners) l->on_nexthop(ns, ev, i);
}

// Linux: nexthop_num_path.
std::size_t num_paths(const Nexthop& nh) {
  return nh.info.is_group() ? nh.info.group.size() : 1;
}

// Linux: nh_find_unused_id — after the last id given out, wrapping, skipping ids in use.
std::uint32_t unused_id(NetState& st) {
  std::uint32_t id = st.nh_last_id;
  for (std::uint64_t tries = 0; tries < 0xffffffffull; ++tries) {
    id = id == 0xffffffffu ? 1 : id + 1;
    if (!st.nexthops.count(id)) {
      st.nh_last_id = id;
      return id;
    }
  }
  return 0;
}

// Linux: nh_check_attr_group and valid_group_nh, from the duplicates on.
Result<void> check_group(NetState& st, const NexthopRequest& req) {
  const auto& g = req.group;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (g[i].weight < 1 || g[i].weight > 256) return fail(EINVAL, "Invalid value for weight");
    for (std::size_t j = i + 1; j < g.size(); ++j)
      if (g[i].id == g[j].id) return fail(EINVAL, "Nexthop id can not be used twice in a group");
  }
  int fdb_family = AF_UNSPEC;
  for (const NexthopMember& m : g) {
    Nexthop* nh = nexthop_find(st, m.id);
    if (!nh) return fail(EINVAL, "Invalid nexthop id");
    bool is_fdb = nh->info.fdb;
    if (nh->info.is_group()) {
      if (nh->info.group_type == NEXTHOP_GRP_TYPE_MPATH)
        return fail(EINVAL, "Hash-threshold group can not be a nexthop within a group");
      return fail(EINVAL, "Resilient group can not be a nexthop within a group");
    }
    if (nh->info.blackhole && g.size() > 1)
      return fail(EINVAL, "Blackhole nexthop can not be used in a group with more than 1 path");
    if (req.fdb) {
      if (!nh->info.fdb) return fail(EINVAL, "FDB nexthop group can only have fdb nexthops");
      if (fdb_family == AF_UNSPEC)
        fdb_family = nh->info.family;
      else if (fdb_family != nh->info.family)
        return fail(EINVAL, "FDB nexthop group cannot have mixed family nexthops");
    }
    if (!req.fdb && is_fdb) return fail(EINVAL, "Non FDB nexthop group cannot have fdb nexthops");
  }
  return ok();
}

// A single nexthop made from `req` (Linux: nexthop_create with nh_create_ipv4 /
// nh_create_ipv6): its device checked and resolved as a route's next hop would be.
Result<Nexthop> make_single(Control& ctl, Namespace& ns, const NexthopRequest& req) {
  Nexthop nh;
  NexthopInfo& i = nh.info;
  i.family = req.family;
  i.protocol = req.protocol;
  i.flags = req.flags;
  i.fdb = req.fdb;
  i.blackhole = req.blackhole;
  if (req.blackhole) {
    // Linux: a blackhole nexthop is made on the loopback device.
    Device* lo = ns.loopback();
    if (!lo) return fail(ENODEV, "Device for nexthop is not up");
    if (!lo->is_up()) return fail(ENETDOWN, "Device for nexthop is not up");
    i.oif = lo->ifindex();
    nh.ref = Ref(*lo, "nexthop");
    return nh;
  }
  if (req.gateway) i.gateway = *req.gateway;
  i.scope = i.gateway.empty() ? RT_SCOPE_HOST : RT_SCOPE_LINK;
  if (req.fdb) return nh;  // Linux: an fdb nexthop is not checked against a device
  if (req.oif) {
    Device* dev = ctl.find(ns, req.oif);
    if (!dev) return fail(EINVAL, "Invalid device index");
    if (!dev->is_up()) return fail(ENETDOWN, "Nexthop device is not up");
    if (!dev->carrier()) return fail(ENETDOWN, "Carrier for nexthop device is down");
  }
  if (i.gateway.empty() && (req.flags & RTNH_F_ONLINK))
    return fail(EINVAL, "ONLINK flag can not be set for nexthop without a gateway");
  auto dev = fib_resolve_hop(ctl, ns, i.family, i.gateway, req.oif, req.flags);
  if (!dev) return fail(std::move(dev).error());
  if (!*dev) return fail(EINVAL, "Invalid device index");
  i.oif = (*dev)->ifindex();
  nh.ref = Ref(**dev, "nexthop");
  return nh;
}

// The routes that name `nh`, or a group holding it, take their hops again (after a
// replace, or a group's member went); `announce`: RTM_NEWROUTE for each (Linux:
// nexthop_replace_notify in compat mode, for the nexthop's routes and then its groups').
void rebind_routes(const Control& ctl, EngineProto& ep, Namespace& ns, NetState& st, Nexthop& nh,
                   bool announce) {
  std::vector<inet::NextHop> hops;
  std::vector<Device*> devs;
  auto rebind = [&](Nexthop& n) {
    hops.clear();
    devs.clear();
    nexthop_hops(st, n, hops, devs);
    for (Route* r : n.routes) {
      fib_bind_hops(ctl, ep, r, hops, devs, n.info.blackhole, n.info.is_group());
      if (announce && st.nh_compat && route_news_wanted(ep, ns, r->info.family))
        notify_route(ep, ns, ProtoEvent::New, fib_report(*r), NLM_F_REPLACE);
    }
  };
  rebind(nh);
  for (auto it = nh.parents.rbegin(); it != nh.parents.rend(); ++it)
    if (Nexthop* g = nexthop_find(st, *it)) rebind(*g);
}

void unlink_device(EngineProto& ep, Nexthop& nh) {
  if (!nh.ref) return;
  if (DevState* ds = find_dev(ep, *nh.ref)) std::erase(ds->nexthops, nh.info.id);
}

void link_device(const Control& ctl, EngineProto& ep, Nexthop& nh) {
  if (nh.ref) dev_state(ctl, ep, *nh.ref).nexthops.push_back(nh.info.id);
}

void remove_nexthop(const Control& ctl, EngineProto& ep, Namespace& ns, NetState& st,
                    std::uint32_t id, bool announce);

// Linux: remove_nh_grp_entry — `member` leaves the group `gid`; the last member takes the
// group with it.
void leave_group(const Control& ctl, EngineProto& ep, Namespace& ns, NetState& st,
                 std::uint32_t gid, std::uint32_t member, bool announce) {
  Nexthop* g = nexthop_find(st, gid);
  if (!g) return;
  if (g->info.group.size() == 1) {
    remove_nexthop(ctl, ep, ns, st, gid, announce);
    return;
  }
  std::erase_if(g->info.group, [&](const NexthopMember& m) { return m.id == member; });
  // Linux: replace_nexthop_grp_res — the member's buckets go to the others, silently.
  if (g->res) res_table_regroup(ep, ns, *g, now_of(ep));
  std::vector<inet::NextHop> hops;
  std::vector<Device*> devs;
  nexthop_hops(st, *g, hops, devs);
  for (Route* r : g->routes) fib_bind_hops(ctl, ep, r, hops, devs, false, true);
  if (announce) notify(ep, ns, ProtoEvent::New, *g);
}

// Linux: remove_nexthop — RTM_DELNEXTHOP (for a user's delete), the routes that name it
// (IPv6 ones announced: nexthop_compat_mode), then its place in its groups (newest first).
void remove_nexthop(const Control& ctl, EngineProto& ep, Namespace& ns, NetState& st,
                    std::uint32_t id, bool announce) {
  auto it = st.nexthops.find(id);
  if (it == st.nexthops.end()) return;
  Nexthop& nh = *it->second;
  if (announce) notify(ep, ns, ProtoEvent::Del, nh);
  std::vector<Route*> routes = nh.routes;
  for (Route* r : routes) fib_erase(ep, ns, r, r->info.family == AF_INET6 && st.nh_compat);
  // A group leaves its members' lists.
  for (const NexthopMember& m : nh.info.group)
    if (Nexthop* x = nexthop_find(st, m.id)) std::erase(x->parents, id);
  std::vector<std::uint32_t> parents = nh.parents;
  if (nh.res) ep.nh_res_due.erase({ns.id(), id});  // Linux: nh_res_table_cancel_upkeep
  unlink_device(ep, nh);
  nh.ref.reset();
  // The object is freed after a grace period on the RCU thread (Linux: nexthop_put's
  // call_rcu), not in an unregister batch's pass.
  retire_hooked(ep, it->second.release());
  st.nexthops.erase(it);
  for (auto p = parents.rbegin(); p != parents.rend(); ++p)
    leave_group(ctl, ep, ns, st, *p, id, announce);
}

// Linux: replace_nexthop — checks that what uses `old` can use `req`'s nexthop, then swaps
// the definitions in place.
Result<void> replace(Control& ctl, Namespace& ns, NetState& st, Nexthop& old,
                     const NexthopRequest& req) {
  EngineProto& ep = engine_proto(ctl.engine());
  const bool group = !req.group.empty();
  // Linux: fib_check_nh_list / fib6_check_nh_list over the routes of the nexthop and of
  // the groups holding it, with the new definition.
  NexthopInfo probe;
  probe.family = req.family;
  probe.blackhole = req.blackhole;
  probe.fdb = req.fdb;
  probe.group = req.group;
  if (req.gateway) probe.gateway = *req.gateway;
  Nexthop probe_nh;
  probe_nh.info = probe;
  auto routes_ok = [&](const Nexthop& user) -> Result<void> {
    for (const Route* r : user.routes)
      IFCORE_TRY(nexthop_check_route(st, probe_nh, r->info.family, r->info.scope, false));
    return ok();
  };
  if (!group) {
    if (old.info.is_group()) return fail(EINVAL, "Can not replace a nexthop group with a nexthop.");
  }
  IFCORE_TRY(routes_ok(old));
  for (std::uint32_t pid : old.parents) {
    Nexthop* p = nexthop_find(st, pid);
    if (!p) continue;
    if (req.blackhole && num_paths(*p) > 1)
      return fail(EINVAL,
                  "Blackhole nexthop can not be a member of a group with more than one path");
    IFCORE_TRY(routes_ok(*p));
  }
  if (group) {
    if (!old.info.is_group())
      return fail(EINVAL, "Can not replace a nexthop with a nexthop group.");
    if (req.group_type != old.info.group_type)
      return fail(EINVAL, "Can not replace a nexthop group with one of a different type.");
    if (req.group_type == NEXTHOP_GRP_TYPE_RES && req.buckets &&
        *req.buckets != old.info.resilient.buckets)
      return fail(EINVAL, "Can not change number of buckets of a resilient nexthop group.");
    for (const NexthopMember& m : old.info.group)
      if (Nexthop* x = nexthop_find(st, m.id)) std::erase(x->parents, old.info.id);
    old.info.group = req.group;
    old.info.fdb = req.fdb;
    old.info.protocol = req.protocol;
    if (req.idle_timer) old.info.resilient.idle_timer = *req.idle_timer;
    if (req.unbalanced_timer) old.info.resilient.unbalanced_timer = *req.unbalanced_timer;
    for (const NexthopMember& m : old.info.group)
      if (Nexthop* x = nexthop_find(st, m.id)) x->parents.push_back(old.info.id);
    if (old.res) res_table_regroup(ep, ns, old, now_of(ep));
  } else {
    auto made = make_single(ctl, ns, req);
    if (!made) return fail(made.error());
    unlink_device(ep, old);
    made->info.id = old.info.id;
    old.info = made->info;
    old.ref = std::move(made->ref);
    link_device(ctl, ep, old);
  }
  notify(ep, ns, ProtoEvent::New, old);
  rebind_routes(ctl, ep, ns, st, old, true);
  return ok();
}

}  // namespace

Nexthop* nexthop_find(NetState& st, std::uint32_t id) {
  auto it = st.nexthops.find(id);
  return it == st.nexthops.end() ? nullptr : it->second.get();
}

void nexthop_hops(NetState& st, const Nexthop& nh, std::vector<inet::NextHop>& hops,
                  std::vector<Device*>& devs) {
  auto one = [&](const Nexthop& n, std::uint16_t weight) {
    inet::NextHop h;
    h.gateway = n.info.gateway;
    h.oif = n.info.oif;
    h.flags = n.info.flags & RTNH_F_ONLINK;
    h.weight = static_cast<std::uint8_t>(std::min<std::uint16_t>(weight, 255));
    hops.push_back(h);
    devs.push_back(n.ref.get());
  };
  if (!nh.info.is_group()) {
    one(nh, 1);
    return;
  }
  for (const NexthopMember& m : nh.info.group)
    if (const Nexthop* x = nexthop_find(st, m.id)) one(*x, m.weight);
}

Result<void> nexthop_check_route(NetState& st, const Nexthop& nh, int family, std::uint8_t scope,
                                 bool has_src) {
  const NexthopInfo& i = nh.info;
  if (family == AF_INET6) {
    // Linux: fib6_check_nexthop.
    if (has_src)
      return fail(EINVAL, "IPv6 routes using source address can not use nexthop objects");
    bool v4 = i.family == AF_INET;
    for (const NexthopMember& m : i.group)
      if (const Nexthop* x = nexthop_find(st, m.id)) v4 = v4 || x->info.family == AF_INET;
    if (v4) return fail(EINVAL, "IPv6 routes can not use an IPv4 nexthop");
    if (i.fdb) return fail(EINVAL, "Route cannot point to a fdb nexthop");
    return ok();
  }
  // Linux: fib_check_nexthop and nexthop_check_scope (a group's members share a scope).
  if (i.fdb) return fail(EINVAL, "Route cannot point to a fdb nexthop");
  const NexthopInfo* first = &i;
  if (i.is_group()) {
    if (scope == RT_SCOPE_HOST)
      return fail(EINVAL, "Route with host scope can not have multiple nexthops");
    const Nexthop* x = nexthop_find(st, i.group.front().id);
    if (!x) return ok();
    first = &x->info;
  }
  if (scope == RT_SCOPE_HOST && !first->gateway.empty())
    return fail(EINVAL, "Route with host scope can not have a gateway");
  if ((first->flags & RTNH_F_ONLINK) && scope >= RT_SCOPE_LINK)
    return fail(EINVAL, "Scope mismatch with nexthop");
  return ok();
}

void nexthop_exit(NetState& st) {
  st.nexthops.clear();
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

Result<NexthopInfo> add_nexthop(Control& ctl, Namespace& ns, const NexthopRequest& req) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  RetireScope scope(ep);
  NetState& st = net_state(ns);
  const bool group = !req.group.empty();
  if (!group && req.family != AF_INET && req.family != AF_INET6)
    return fail(EINVAL, "Invalid address family");
  if (group) IFCORE_TRY(check_group(st, req));
  // Linux: nexthop_add.
  if (req.replace && !req.id) return fail(EINVAL, "Replace requires nexthop id");
  std::uint32_t id = req.id;
  if (Nexthop* old = id ? nexthop_find(st, id) : nullptr) {
    // Linux: insert_nexthop — the new nexthop is made (and checked) first, then an id in
    // use is replaced or refused.
    if (!group) {
      auto probe = make_single(ctl, ns, req);
      if (!probe) return fail(probe.error());
    }
    if (!req.replace) return fail(EEXIST);
    IFCORE_TRY(replace(ctl, ns, st, *old, req));
    res_arm(ctl);
    return reported(*old, now_of(ep));
  }
  if (req.replace && !req.create)
    return fail(ENOENT, "Replace specified without create and no entry exists");
  Nexthop nh;
  if (group) {
    nh.info.group = req.group;
    nh.info.group_type = req.group_type;
    nh.info.fdb = req.fdb;
    nh.info.protocol = req.protocol;
    nh.info.flags = req.flags;
    if (req.group_type == NEXTHOP_GRP_TYPE_RES) {
      if (!req.buckets)
        return fail(EINVAL, "Number of buckets not specified for nexthop group insertion");
      nh.info.resilient.buckets = *req.buckets;
      if (req.idle_timer) nh.info.resilient.idle_timer = *req.idle_timer;
      if (req.unbalanced_timer) nh.info.resilient.unbalanced_timer = *req.unbalanced_timer;
    }
  } else {
    auto made = make_single(ctl, ns, req);
    if (!made) return fail(made.error());
    nh = std::move(*made);
  }
  if (!id) {
    id = unused_id(st);
    if (!id) return fail(EINVAL, "No unused id");
  }
  nh.info.id = id;
  auto [it, fresh] = st.nexthops.emplace(id, std::make_unique<Nexthop>(std::move(nh)));
  Nexthop& n = *it->second;
  if (n.info.group_type == NEXTHOP_GRP_TYPE_RES && group) res_table_create(ep, ns, n, now_of(ep));
  link_device(ctl, ep, n);
  for (const NexthopMember& m : n.info.group)
    if (Nexthop* x = nexthop_find(st, m.id)) x->parents.push_back(id);
  notify(ep, ns, ProtoEvent::New, n);
  res_arm(ctl);
  return reported(n, now_of(ep));
}

Result<void> delete_nexthop(Control& ctl, Namespace& ns, std::uint32_t id) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  RetireScope scope(ep);
  NetState& st = net_state(ns);
  if (!nexthop_find(st, id)) return fail(ENOENT);
  remove_nexthop(ctl, ep, ns, st, id, true);
  res_arm(ctl);
  return ok();
}

Result<NexthopInfo> get_nexthop(Control& ctl, Namespace& ns, std::uint32_t id) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  Nexthop* nh = nexthop_find(net_state(ns), id);
  if (!nh) return fail(ENOENT);
  return reported(*nh, ctl.engine().time().now());
}

std::vector<NexthopInfo> list_nexthops(Control& ctl, Namespace& ns, const NexthopFilter& f) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  std::vector<NexthopInfo> out;
  const TimePoint now = ctl.engine().time().now();
  for (auto& [id, nh] : net_state(ns).nexthops) {
    const NexthopInfo& i = nh->info;
    // Linux: nh_dump_filtered.
    if (f.groups && !i.is_group()) continue;
    if (f.oif || f.master || f.family) {
      if (i.is_group()) continue;
      if (f.family && i.family != f.family) continue;
      Device* dev = nh->ref.get();
      if (f.oif && (!dev || dev->ifindex() != f.oif)) continue;
      if (f.master) {
        Device* m = dev ? dev->master() : nullptr;
        if (!m || m->ifindex() != f.master) continue;
      }
    }
    out.push_back(reported(*nh, now));
  }
  // Linux dumps its tree in id order.
  std::sort(out.begin(), out.end(),
            [](const NexthopInfo& a, const NexthopInfo& b) { return a.id < b.id; });
  return out;
}

}  // namespace ifcore::inet

namespace ifcore::proto {

namespace {

// Linux: nh_netdev_event — a device that goes down, loses its carrier or is unregistered
// takes its nexthops (a blackhole one only at unregister), silently.
class NexthopSubscriber final : public Subscriber {
 public:
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    EngineProto& ep = engine_proto(ctl.engine());
    // The device's list of nexthops is read in its own state (find_dev_locally); only a
    // device with some takes the plug-in lock.
    if (auto local = find_dev_locally(ep, ev.dev); local && (!*local || (*local)->nexthops.empty()))
      return ok();
    PluginGuard guard(ctl);
    DevState* ds = find_dev(ep, ev.dev);
    if (!ds || ds->nexthops.empty()) return ok();
    bool flush = false, keep_blackhole = true;
    switch (ev.event) {
      case NetdevEvent::Down:
        flush = true;
        break;
      case NetdevEvent::Change:
        flush = !ev.dev.carrier();
        break;
      case NetdevEvent::Unregister:
        flush = true;
        keep_blackhole = false;
        break;
      default:
        break;
    }
    if (!flush) return ok();
    RetireScope scope(ep, ev.batched);
    Namespace& ns = ev.dev.ns();
    NetState& st = net_state(ns);
    // The device's list is taken whole (no copy): what stays (a blackhole on a down
    // loopback) goes back on it.
    std::vector<std::uint32_t> ids;
    ids.swap(ds->nexthops);
    for (std::uint32_t id : ids) {
      Nexthop* nh = nexthop_find(st, id);
      if (!nh) continue;
      if (keep_blackhole && nh->info.blackhole)
        ds->nexthops.push_back(id);
      else
        remove_nexthop(ctl, ep, ns, st, id, false);
    }
    res_arm(ctl);
    return ok();
  }
};

}  // namespace

void nexthop_subscribe(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  auto sub = std::make_unique<NexthopSubscriber>();
  ctl.subscribe(*sub, SubscribeOptions{"nexthop", 1, false,
                                       events_of(NetdevEvent::Down, NetdevEvent::Change,
                                                 NetdevEvent::Unregister),
                                       true});  // the plug-in lock taken above when needed
  ep.subscribers.push_back(std::move(sub));
}

}  // namespace ifcore::proto
