// Bridge multicast database: Linux net/bridge/br_mdb.c and br_multicast.c semantics for
// the groups users add and delete (br_mdb_add, br_mdb_add_group, br_mdb_del), gets and
// dumps (br_mdb_get, br_mdb_dump, __mdb_fill_info), the temporary entries' timers
// (br_multicast_port_group_expired, br_multicast_group_expired) and what a port's leaving or
// stopping takes with it (br_multicast_del_port, br_multicast_disable_port), written for
// ifcore. The bridge snoops no traffic: there are no learned groups and no router ports.
// Linux 6.18 here is built without CONFIG_BRIDGE_VLAN_FILTERING: an entry keeps the vlan
// it was given and no vlan is ever "configured", so no add is spread over a port's vlans.
//
// Lock order: control lock, then the plug-in lock (PluginGuard) for the bridges' state.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_bridge.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cerrno>

#include "ifcore/mdb.h"
#include "ifcore/namespace.h"
#include "kinds/bridge_priv.h"
#include "kinds/common.h"
#include "kinds/fdb_install.h"

namespace ifcore::mdb {

namespace {

const int kTag = 0;

struct State {
  std::vector<Listener*> listeners;
};

State* state(Control& ctl) {
  return ctl.engine().plugin_data<State>(&kTag);
}

}  // namespace
}  // namespace ifcore::mdb

namespace ifcore::kinds::bridge {

namespace {

std::uint32_t clock_t_of(Duration d) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return ms <= 0 ? 0 : static_cast<std::uint32_t>(ms / 10);
}

TimePoint now_of(const Device& br) {
  return br.engine().time().now();
}

// Linux: br_multicast_is_star_g / br_group_is_l2.
bool is_l2(const mdb::Group& g) {
  return g.proto == 0;
}

// Linux: multicast_membership_interval (IFLA_BR_MCAST_MEMBERSHIP_INTVL, in 1/100 s).
Duration membership_interval(const Priv& p) {
  std::uint64_t cs = 26000;
  if (auto it = p.s.opts.find(IFLA_BR_MCAST_MEMBERSHIP_INTVL); it != p.s.opts.end())
    cs = it->second.num;
  return std::chrono::milliseconds(cs * 10);
}

bool snooping(const Priv& p) {
  auto it = p.s.opts.find(IFLA_BR_MCAST_SNOOPING);
  return it == p.s.opts.end() || it->second.num != 0;
}

// Linux: __mdb_fill_info — the host join (pg nullptr) or one port group.
mdb::Entry entry_of(const Device& br, const MdbGroup& g, const MdbPortGroup* pg, TimePoint now) {
  mdb::Entry e;
  e.group = g.key;
  auto left = [&](const std::optional<TimePoint>& t) {
    return t && *t > now ? clock_t_of(*t - now) : 0u;
  };
  if (pg) {
    e.ifindex = pg->port->ifindex();
    e.state = pg->permanent ? MDB_PERMANENT : MDB_TEMPORARY;
    e.timer = left(pg->expires);
    e.rtprot = pg->rtprot;
  } else {
    e.ifindex = br.ifindex();
    e.state = MDB_TEMPORARY;
    e.timer = left(g.host_expires);
  }
  if (is_l2(g.key)) e.state = MDB_PERMANENT;  // Linux: an L2 entry always reads permanent
  return e;
}

void announce(Control& ctl, const Device& br, bool added, const mdb::Entry& e) {
  mdb::State* s = mdb::state(ctl);
  if (!s) return;
  for (mdb::Listener* l : s->listeners) l->on_mdb(br.ns(), br.ifindex(), added, e);
}

// Arms the bridge's timer for the earliest temporary entry, or disarms it.
void rearm(Control& ctl, Priv& p) {
  std::optional<TimePoint> first;
  auto take = [&](const std::optional<TimePoint>& t) {
    if (t && (!first || *t < *first)) first = t;
  };
  for (const auto& g : p.mdb) {
    take(g.host_expires);
    for (const auto& pg : g.ports) take(pg.expires);
  }
  if (first)
    arm_timer(ctl, p.mdb_timer, *first);
  else
    cancel_timer(ctl, p.mdb_timer);
}

// Linux: br_multicast_del_pg, then the group's deletion once it has neither ports nor a
// host join (its timer, run at once).
void del_port_group(Control& ctl, Device& br, Priv& p, std::size_t gi, std::size_t pi,
                    TimePoint now) {
  MdbGroup& g = p.mdb[gi];
  mdb::Entry e = entry_of(br, g, &g.ports[pi], now);
  g.ports.erase(g.ports.begin() + static_cast<std::ptrdiff_t>(pi));
  if (g.ports.empty() && !g.host_joined)
    p.mdb.erase(p.mdb.begin() + static_cast<std::ptrdiff_t>(gi));
  announce(ctl, br, false, e);
}

// Deletes the port groups of `port` that `which` selects, announcing each.
template <class Pred>
void del_port_groups(Control& ctl, Device& br, Priv& p, const Device& port, Pred which) {
  const TimePoint now = now_of(br);
  for (std::size_t gi = p.mdb.size(); gi-- > 0;) {
    auto& ports = p.mdb[gi].ports;
    for (std::size_t pi = 0; pi < ports.size(); ++pi)
      if (ports[pi].port == &port && which(ports[pi])) {
        del_port_group(ctl, br, p, gi, pi, now);
        break;  // one port group per port and group
      }
  }
  rearm(ctl, p);
}

// Linux: br_multicast_port_group_expired and br_multicast_group_expired, for every entry
// due: while the bridge is down the entry stays, its timer spent.
void expire(Control& ctl, Device& br, Priv& p) {
  const TimePoint now = now_of(br);
  const bool running = br.is_up();
  std::vector<mdb::Entry> gone;  // announced once the table is whole again
  auto due = [&](std::optional<TimePoint>& t) {
    if (!t || *t > now) return false;
    t.reset();
    return running;
  };
  for (auto gi = p.mdb.begin(); gi != p.mdb.end();) {
    MdbGroup& g = *gi;
    for (auto pi = g.ports.begin(); pi != g.ports.end();) {
      if (!due(pi->expires)) {
        ++pi;
        continue;
      }
      gone.push_back(entry_of(br, g, &*pi, now));
      pi = g.ports.erase(pi);
    }
    if (due(g.host_expires) && g.host_joined) {  // Linux: br_multicast_host_leave(notify)
      gone.push_back(entry_of(br, g, nullptr, now));
      g.host_joined = false;
    }
    if (g.ports.empty() && !g.host_joined)
      gi = p.mdb.erase(gi);
    else
      ++gi;
  }
  for (const auto& e : gone) announce(ctl, br, false, e);
  rearm(ctl, p);
}

constexpr std::uint8_t kRouterPermanent = 2;  // Linux: MDB_RTR_TYPE_PERM

std::uint8_t router_type(const Port& port) {
  auto it = port.s.opts.find(IFLA_BRPORT_MULTICAST_ROUTER);
  return it == port.s.opts.end() ? 1 : static_cast<std::uint8_t>(it->second.num);
}

// Linux: br_multicast_add_router / br_multicast_rport_del_notify, announced (br_rtr_notify).
void set_router(Control& ctl, Device& br, Priv& p, const Device& port, bool on) {
  Port* e = p.find(port);
  if (!e || e->mc_router == on) return;
  e->mc_router = on;
  if (mdb::State* s = mdb::state(ctl))
    for (mdb::Listener* l : s->listeners)
      l->on_mdb_router(br.ns(), br.ifindex(), on, port.ifindex());
}

Priv* bridge_of(Device* dev) {
  return dev ? priv(*dev) : nullptr;
}

// Linux: rtnl_mdb_add/del's "ndo" lookup, then br_mdb_config_init's checks.
struct Config {
  Device* br = nullptr;
  Priv* p = nullptr;
  Device* port = nullptr;  // nullptr: the host join
};

Result<Config> config(Control& ctl, Namespace& ns, const mdb::Request& q) {
  IFCORE_TRY(ctl.check_covers(ns));
  if (!q.bridge) return fail(EINVAL, "Invalid ifindex");
  Device* dev = ctl.find(ns, q.bridge);
  if (!dev) return fail(ENODEV, "Device doesn't exist");
  if (!q.has_entry) return fail(EINVAL, "Missing MDBA_SET_ENTRY attribute");
  Config c{dev, bridge_of(dev), nullptr};
  if (!c.p) return fail(EOPNOTSUPP, "Device does not support MDB operations");
  if (!dev->is_up()) return fail(EINVAL, "bridge: Bridge device is not running");
  if (!snooping(*c.p)) return fail(EINVAL, "bridge: Bridge's multicast processing is disabled");
  if (q.ifindex != dev->ifindex()) {
    Device* pdev = ctl.find(ns, q.ifindex);
    if (!pdev) return fail(ENODEV, "bridge: Port net device doesn't exist");
    Device* m = pdev->master();
    if (!m || !bridge_of(m) || !bridge_of(m)->find(*pdev))
      return fail(EINVAL, "bridge: Net device is not a bridge port");
    if (m != dev) return fail(EINVAL, "bridge: Port belongs to a different bridge device");
    c.port = pdev;
  }
  const auto& d = q.group.dst;
  if (q.group.proto == ETH_P_IP && !d[0] && !d[1] && !d[2] && !d[3])
    return fail(EINVAL, "bridge: IPv4 entry group address 0.0.0.0 is not allowed");
  if (q.rtprot && !c.port) return fail(EINVAL, "bridge: Protocol cannot be set for host groups");
  return c;
}

MdbGroup* find_group(Priv& p, const mdb::Group& key) {
  for (auto& g : p.mdb)
    if (g.key == key) return &g;
  return nullptr;
}

}  // namespace

void mdb_init(Control& ctl, Device& br, Priv& p) {
  Device* b = &br;
  p.mdb_timer = add_timer(ctl, [b](Control& c) {
    PluginGuard guard(c);  // the bridge's own state
    if (Priv* q = priv(*b)) expire(c, *b, *q);
  });
}

void mdb_port_disabled(Control& ctl, Device& br, Priv& p, const Device& port) {
  del_port_groups(ctl, br, p, port, [](const MdbPortGroup& pg) { return !pg.permanent; });
  set_router(ctl, br, p, port, false);
}

void mdb_port_enabled(Control& ctl, Device& br, Priv& p, const Device& port) {
  if (Port* e = p.find(port); e && router_type(*e) == kRouterPermanent)
    set_router(ctl, br, p, port, true);
}

void mdb_router_changed(Control& ctl, Device& br, Priv& p, const Device& port) {
  // Linux: a permanent router is listed at once, whatever the port's state; any other
  // type takes the port off the lists (no queries are heard to list it again).
  if (Port* e = p.find(port)) set_router(ctl, br, p, port, router_type(*e) == kRouterPermanent);
}

void mdb_del_port(Control& ctl, Device& br, Priv& p, const Device& port) {
  del_port_groups(ctl, br, p, port, [](const MdbPortGroup&) { return true; });
}

void mdb_uninit(Control& ctl, Priv& p) {
  p.mdb.clear();
  if (p.mdb_timer) remove_timer(ctl, p.mdb_timer);
  p.mdb_timer = 0;
}

}  // namespace ifcore::kinds::bridge

namespace ifcore::kinds {

void mdb_install(Engine& engine) {
  auto ctl = engine.control();
  engine.set_plugin_data(&mdb::kTag, std::make_shared<mdb::State>());
}

}  // namespace ifcore::kinds

namespace ifcore::mdb {

using kinds::bridge::MdbGroup;
using kinds::bridge::MdbPortGroup;

Result<void> add(Control& ctl, Namespace& ns, const Request& q) {
  PluginGuard guard(ctl);  // the bridges' state
  auto c = kinds::bridge::config(ctl, ns, q);
  if (!c) return fail(c.error());
  auto& p = *c->p;
  Device& br = *c->br;
  // Linux: br_mdb_add — the host join's errors before the group is made.
  if (!c->port && !kinds::bridge::is_l2(q.group)) {
    if (q.state) return fail(EINVAL, "bridge: Flags are not allowed for host groups");
    if (q.group.has_source())
      return fail(EINVAL, "bridge: Groups with sources cannot be manually host joined");
  }
  if (kinds::bridge::is_l2(q.group) && q.state != MDB_PERMANENT)
    return fail(EINVAL, "bridge: Only permanent L2 entries allowed");
  if (c->port) {
    auto* port = p.find(*c->port);
    if (port->s.state == BR_STATE_DISABLED && q.state != MDB_PERMANENT)
      return fail(EINVAL, "bridge: Port is in disabled state and entry is not permanent");
  }
  const TimePoint now = kinds::bridge::now_of(br);
  const Duration interval = kinds::bridge::membership_interval(p);
  // Linux: br_multicast_new_group — a new group goes first (hlist_add_head).
  MdbGroup* g = kinds::bridge::find_group(p, q.group);
  if (!g) {
    p.mdb.insert(p.mdb.begin(), MdbGroup{q.group, false, std::nullopt, {}});
    g = &p.mdb.front();
  }
  if (!c->port) {  // Linux: br_multicast_host_join
    if (g->host_joined) return fail(EEXIST, "bridge: Group is already joined by host");
    g->host_joined = true;
    if (!kinds::bridge::is_l2(q.group)) g->host_expires = now + interval;
    kinds::bridge::announce(ctl, br, true, kinds::bridge::entry_of(br, *g, nullptr, now));
    kinds::bridge::rearm(ctl, p);
    return ok();
  }
  const bool star = !q.group.has_source();
  const std::uint8_t rtprot = q.rtprot.value_or(RTPROT_STATIC);
  const bool permanent = q.state == MDB_PERMANENT;
  auto it = std::find_if(g->ports.begin(), g->ports.end(),
                         [&](const MdbPortGroup& pg) { return pg.port == c->port; });
  MdbPortGroup* pg = nullptr;
  if (it != g->ports.end()) {
    // Linux: br_mdb_add_group_star_g / _sg without NLM_F_REPLACE, else the replace.
    if (!(q.nlflags & NLM_F_REPLACE))
      return fail(EEXIST, star ? "bridge: (*, G) group is already joined by port"
                               : "bridge: (S, G) group is already joined by port");
    pg = &*it;
  } else {
    // ifcore: port groups in the order of the ports' numbers, the highest first (Linux
    // orders them by the address of the port's struct, the highest first).
    const std::uint16_t no = p.find(*c->port)->no;
    auto at = std::find_if(g->ports.begin(), g->ports.end(),
                           [&](const MdbPortGroup& x) { return p.find(*x.port)->no < no; });
    pg = &*g->ports.insert(at, MdbPortGroup{c->port, false, 0, std::nullopt});
  }
  pg->permanent = permanent;
  pg->rtprot = rtprot;
  if (permanent)
    pg->expires.reset();
  else
    pg->expires = now + interval;
  kinds::bridge::announce(ctl, br, true, kinds::bridge::entry_of(br, *g, pg, now));
  kinds::bridge::rearm(ctl, p);
  return ok();
}

Result<void> del(Control& ctl, Namespace& ns, const Request& q) {
  PluginGuard guard(ctl);  // the bridges' state
  auto c = kinds::bridge::config(ctl, ns, q);
  if (!c) return fail(c.error());
  auto& p = *c->p;
  Device& br = *c->br;
  const TimePoint now = kinds::bridge::now_of(br);
  // Linux: __br_mdb_del — EINVAL, without a message, for what is not there.
  for (std::size_t gi = 0; gi < p.mdb.size(); ++gi) {
    MdbGroup& g = p.mdb[gi];
    if (!(g.key == q.group)) continue;
    if (q.ifindex == br.ifindex() && g.host_joined) {  // Linux: br_multicast_host_leave
      Entry e = kinds::bridge::entry_of(br, g, nullptr, now);
      g.host_joined = false;
      g.host_expires.reset();
      if (g.ports.empty()) p.mdb.erase(p.mdb.begin() + static_cast<std::ptrdiff_t>(gi));
      kinds::bridge::announce(ctl, br, false, e);
      kinds::bridge::rearm(ctl, p);
      return ok();
    }
    for (std::size_t pi = 0; pi < g.ports.size(); ++pi)
      if (g.ports[pi].port->ifindex() == q.ifindex) {
        kinds::bridge::del_port_group(ctl, br, p, gi, pi, now);
        kinds::bridge::rearm(ctl, p);
        return ok();
      }
    break;
  }
  return fail_log_only(EINVAL, "bridge \"{}\": no such mdb entry", br.name());
}

Result<std::vector<Entry>> get(Control& ctl, Namespace& ns, int bridge, const Group& key) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the bridges' state
  if (!bridge) return fail(EINVAL, "Invalid ifindex");
  Device* dev = ctl.find(ns, bridge);
  if (!dev) return fail(ENODEV, "Device doesn't exist");
  auto* p = kinds::bridge::priv(*dev);
  if (!p) return fail(EOPNOTSUPP, "Device does not support MDB operations");
  MdbGroup* g = kinds::bridge::find_group(*p, key);
  if (!g || (g->ports.empty() && !g->host_joined))
    return fail(ENOENT, "bridge: MDB entry not found");
  const TimePoint now = kinds::bridge::now_of(*dev);
  std::vector<Entry> out;
  if (g->host_joined) out.push_back(kinds::bridge::entry_of(*dev, *g, nullptr, now));
  for (const auto& pg : g->ports) out.push_back(kinds::bridge::entry_of(*dev, *g, &pg, now));
  return out;
}

Result<std::vector<Table>> dump(Control& ctl, Namespace& ns) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the bridges' state
  std::vector<Table> out;
  for (Device* dev : ns.devices_locked()) {
    auto* p = kinds::bridge::priv(*dev);
    if (!p) continue;
    const TimePoint now = kinds::bridge::now_of(*dev);
    Table t{dev->ifindex(), {}, {}};
    for (const auto& g : p->mdb) {
      std::vector<Entry> row;
      if (g.host_joined) row.push_back(kinds::bridge::entry_of(*dev, g, nullptr, now));
      for (const auto& pg : g.ports) row.push_back(kinds::bridge::entry_of(*dev, g, &pg, now));
      t.groups.push_back(std::move(row));
    }
    auto br_router = p->s.opts.find(IFLA_BR_MCAST_ROUTER);
    if (br_router == p->s.opts.end() || br_router->second.num != 0)
      for (auto it = p->ports.rbegin(); it != p->ports.rend(); ++it)  // Linux: list_add_rcu
        if ((*it)->mc_router)
          t.routers.push_back({(*it)->dev->ifindex(), kinds::bridge::router_type(**it)});
    out.push_back(std::move(t));
  }
  return out;
}

void add_listener(Control& ctl, Listener& l) {
  State* s = state(ctl);
  kinds::update_listeners(ctl, s ? &s->listeners : nullptr, l, true);
}

void remove_listener(Control& ctl, Listener& l) {
  State* s = state(ctl);
  kinds::update_listeners(ctl, s ? &s->listeners : nullptr, l, false);
}

}  // namespace ifcore::mdb
