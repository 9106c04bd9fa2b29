// Bridge forwarding database, control side: Linux net/bridge/br_fdb.c semantics for the
// entries users add and delete (br_fdb_add, fdb_add_entry, br_fdb_external_learn_add,
// br_fdb_delete), dumps and gets (br_fdb_dump, br_fdb_get, fdb_fill_info) and the local
// entries of the bridge's and its ports' addresses (fdb_add_local, fdb_delete_local,
// br_fdb_changeaddr, br_fdb_change_mac_address, br_fdb_delete_by_port), written for ifcore.
// Linux 6.18 here is built without CONFIG_BRIDGE_VLAN_FILTERING: no vlan is ever configured
// on a bridge or a port, so an entry with a vlan is refused as Linux refuses one for an
// unconfigured vlan.
//
// Lock order: control lock, then Fdb::mu_ (a leaf: events are announced after it is
// released).
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/neighbour.h>

#include <algorithm>
#include <cerrno>

#include "ifcore/fdb.h"
#include "kinds/bridge_priv.h"

namespace ifcore::kinds::bridge {

namespace {

constexpr std::uint32_t kNtfExtLocked = 1u << 1;  // NTF_EXT_LOCKED (Linux 6.2+ uapi)

std::uint32_t clock_t_of(Duration d) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return ms <= 0 ? 0 : static_cast<std::uint32_t>(ms / 10);
}

bool expired(const FdbEntry& f, TimePoint now, Duration ageing) {
  return !f.is_static && !f.ext_learn && now - f.updated >= ageing;  // Linux: has_expired
}

// Linux: fdb_fill_info.
fdb::Entry to_entry(const Device& br, const FdbEntry& f, TimePoint now, Duration ageing) {
  fdb::Entry e;
  e.ifindex = f.dst ? f.dst->ifindex() : br.ifindex();
  // Linux: fdb_to_nud.
  e.state = f.local                   ? NUD_PERMANENT
            : f.is_static             ? NUD_NOARP
            : expired(f, now, ageing) ? NUD_STALE
                                      : NUD_REACHABLE;
  if (f.ext_learn) e.flags |= NTF_EXT_LEARNED;
  if (f.sticky) e.flags |= NTF_STICKY;
  e.lladdr = f.mac;
  e.vlan = f.vid;
  e.master = static_cast<std::uint32_t>(br.ifindex());
  e.flags_ext = 0;
  e.has_cacheinfo = true;
  e.used = clock_t_of(now - f.used);
  e.updated = clock_t_of(now - f.updated);
  return e;
}

}  // namespace

void fdb_announce_learned(Control& ctl, Device& br, Priv& p) {
  const TimePoint now = br.engine().time().now();
  std::vector<fdb::Entry> out;
  {
    MutexLock lk(p.fdb.mutex());
    auto& table = p.fdb.table_locked();
    for (const Fdb::Key& k : p.fdb.take_learned_locked())
      if (auto it = table.find(k); it != table.end())
        out.push_back(to_entry(br, it->second, now, p.fdb.ageing()));
  }
  for (const auto& e : out) fdb::notify(ctl, br.ns(), true, e);
}

void fdb_announce_removed(Control& ctl, Device& br, Priv& p, const std::vector<FdbEntry>& gone) {
  const TimePoint now = br.engine().time().now();
  for (const FdbEntry& f : gone)
    fdb::notify(ctl, br.ns(), false, to_entry(br, f, now, p.fdb.ageing()));
}

namespace {

// The events of one change, announced once the table's mutex is released.
struct Events {
  Device& br;
  Priv& p;
  TimePoint now;
  std::vector<std::pair<bool, fdb::Entry>> list;

  void add(bool added, const FdbEntry& f) {
    list.emplace_back(added, to_entry(br, f, now, p.fdb.ageing()));
  }
  void announce(Control& ctl) {
    for (auto& [added, e] : list) fdb::notify(ctl, br.ns(), added, e);
    list.clear();
  }
};

using Table = std::map<Fdb::Key, FdbEntry>;

void erase(Table& t, Table::iterator it, Events& ev) {
  ev.add(false, it->second);
  t.erase(it);
}

// Linux: fdb_delete_local — a local entry stays while another port (or, as `port` leaves,
// the bridge) has its address.
void delete_local(Table& t, Table::iterator it, const Device* port, Events& ev) {
  FdbEntry& f = it->second;
  for (auto& op : ev.p.ports)
    if (op->dev.get() != port && op->dev->address() == f.mac) {
      f.dst = op->dev.get();
      f.added_by_user = false;
      return;
    }
  if (port && ev.br.address() == f.mac) {
    f.dst = nullptr;
    f.added_by_user = false;
    return;
  }
  erase(t, it, ev);
}

FdbEntry& create(Fdb& fdb, const HwAddr& mac, std::uint16_t vid, Device* dst, TimePoint now)
    IFCORE_REQUIRES(fdb.mutex()) {
  FdbEntry& f = fdb.table_locked()[Fdb::key(mac, vid)];
  f = FdbEntry{};
  f.mac = mac;
  f.vid = vid;
  f.dst = dst;
  f.updated = f.used = now;
  f.seq = fdb.next_seq_locked();
  return f;
}

void add_local_locked(Fdb& fdb, Device* port, const HwAddr& addr, Events& ev)
    IFCORE_REQUIRES(fdb.mutex()) {
  Table& t = fdb.table_locked();
  if (!addr.is_valid_ether()) return;
  auto it = t.find(Fdb::key(addr, 0));
  if (it != t.end()) {
    if (it->second.local) return;  // Linux: several ports may share an address
    erase(t, it, ev);
  }
  FdbEntry& f = create(fdb, addr, 0, port, ev.now);
  f.local = f.is_static = true;
  ev.add(true, f);
}

// Linux: br_fdb_external_learn_add (not locked, announced).
void external_learn_add(Fdb& fdb, Device* port, const HwAddr& addr, Events& ev)
    IFCORE_REQUIRES(fdb.mutex()) {
  Table& t = fdb.table_locked();
  auto it = t.find(Fdb::key(addr, 0));
  if (it == t.end()) {
    FdbEntry& f = create(fdb, addr, 0, port, ev.now);
    f.ext_learn = f.added_by_user = true;
    f.local = !port;
    ev.add(true, f);
    return;
  }
  FdbEntry& f = it->second;
  bool modified = false;
  f.updated = ev.now;
  if (f.dst != port) {
    f.dst = port;
    modified = true;
  }
  if (f.ext_learn) {
    f.used = ev.now;
  } else {
    f.ext_learn = true;
    modified = true;
  }
  f.added_by_user = true;
  if (!port) f.local = true;
  if (modified) ev.add(true, f);
}

// Linux: fdb_add_entry.
Result<void> add_entry(Fdb& fdb, Port* port, const HwAddr& addr, const fdb::Request& q, Events& ev)
    IFCORE_REQUIRES(fdb.mutex()) {
  Table& t = fdb.table_locked();
  const std::uint16_t state = q.state;
  const bool sticky = q.flags & NTF_STICKY;
  Device* source = port ? port->dev.get() : nullptr;
  if (port && !(state & (NUD_PERMANENT | NUD_NOARP)) && port->s.state != BR_STATE_LEARNING &&
      port->s.state != BR_STATE_FORWARDING)
    return fail_log_only(EPERM, "port \"{}\" cannot learn", source->name());
  if (!port && !(state & NUD_PERMANENT))
    return fail_log_only(EINVAL, "bridge: RTM_NEWNEIGH {} without NUD_PERMANENT", ev.br.name());
  if (sticky && (state & NUD_PERMANENT)) return fail_log_only(EINVAL, "sticky and permanent");
  auto it = t.find(Fdb::key(addr, 0));
  bool modified = false;
  FdbEntry* f;
  if (it == t.end()) {
    if (!(q.nlflags & NLM_F_CREATE)) return fail_log_only(ENOENT, "no such entry");
    f = &create(fdb, addr, 0, source, ev.now);
    f->added_by_user = true;
    modified = true;
  } else {
    if (q.nlflags & NLM_F_EXCL) return fail_log_only(EEXIST, "entry exists");
    f = &it->second;
    if (f->dst != source) {
      f->dst = source;
      modified = true;
    }
    f->added_by_user = true;
  }
  std::uint16_t nud = f->local ? NUD_PERMANENT : f->is_static ? NUD_NOARP : NUD_REACHABLE;
  if (nud != state) {
    f->local = state & NUD_PERMANENT;
    f->is_static = state & (NUD_PERMANENT | NUD_NOARP);
    modified = true;
  }
  if (sticky != f->sticky) {
    f->sticky = sticky;
    modified = true;
  }
  f->used = ev.now;
  if (modified) {
    f->updated = ev.now;
    ev.add(true, *f);
  }
  return ok();
}

// Linux: br_fdb_update as NTF_USE asks it (added by the user).
void use_entry(Fdb& fdb, Port& port, const HwAddr& addr, Events& ev) IFCORE_REQUIRES(fdb.mutex()) {
  Table& t = fdb.table_locked();
  auto it = t.find(Fdb::key(addr, 0));
  Device* source = port.dev.get();
  if (it == t.end()) {
    FdbEntry& f = create(fdb, addr, 0, source, ev.now);
    f.added_by_user = true;
    ev.add(true, f);
    return;
  }
  FdbEntry& f = it->second;
  if (f.local) return;
  f.updated = ev.now;
  bool modified = false;
  if (f.dst != source && !f.sticky) {
    f.dst = source;
    f.ext_learn = false;
    modified = true;
  }
  f.added_by_user = true;
  if (modified) ev.add(true, f);
}

}  // namespace

void fdb_add_local(Control& ctl, Device& br, Priv& p, Device* port, const HwAddr& addr) {
  Events ev{br, p, br.engine().time().now(), {}};
  {
    MutexLock lk(p.fdb.mutex());
    add_local_locked(p.fdb, port, addr, ev);
  }
  ev.announce(ctl);
}

void fdb_delete_by_port(Control& ctl, Device& br, Priv& p, Device* port) {
  Events ev{br, p, br.engine().time().now(), {}};
  {
    MutexLock lk(p.fdb.mutex());
    Table& t = p.fdb.table_locked();
    // Linux walks the bridge's fdb_list, newest first.
    std::vector<Table::iterator> of_port;
    for (auto it = t.begin(); it != t.end(); ++it)
      if (it->second.dst == port) of_port.push_back(it);
    std::sort(of_port.begin(), of_port.end(),
              [](auto a, auto b) { return a->second.seq > b->second.seq; });
    for (auto it : of_port) {
      if (it->second.local)
        delete_local(t, it, port, ev);
      else
        erase(t, it, ev);
    }
  }
  ev.announce(ctl);
}

void fdb_port_changed_addr(Control& ctl, Device& br, Priv& p, Device& port) {
  Events ev{br, p, br.engine().time().now(), {}};
  {
    MutexLock lk(p.fdb.mutex());
    Table& t = p.fdb.table_locked();
    for (auto it = t.begin(); it != t.end(); ++it)
      if (it->second.dst == &port && it->second.local && !it->second.added_by_user) {
        delete_local(t, it, &port, ev);
        break;  // no vlans: one local entry per port
      }
    add_local_locked(p.fdb, &port, port.address(), ev);
  }
  ev.announce(ctl);
}

void fdb_bridge_changed_addr(Control& ctl, Device& br, Priv& p) {
  Events ev{br, p, br.engine().time().now(), {}};
  {
    MutexLock lk(p.fdb.mutex());
    Table& t = p.fdb.table_locked();
    auto it = t.find(Fdb::key(p.own_addr, 0));
    if (it != t.end() && it->second.local && !it->second.dst && !it->second.added_by_user)
      delete_local(t, it, nullptr, ev);
    add_local_locked(p.fdb, nullptr, br.address(), ev);
  }
  p.own_addr = br.address();
  ev.announce(ctl);
}

Result<void> fdb_add(Control& ctl, Device& br, Priv& p, Device* port_dev, const HwAddr& addr,
                     const fdb::Request& q) {
  // Linux: br_fdb_add's checks, in its order; most refusals have no extack message.
  if (!(q.state & (NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE)))
    return fail_log_only(EINVAL, "bridge: RTM_NEWNEIGH with invalid state {:#x}", q.state);
  if (addr.is_zero()) return fail_log_only(EINVAL, "bridge: RTM_NEWNEIGH with invalid address");
  Port* port = port_dev ? p.find(*port_dev) : nullptr;
  if (port_dev && !port)
    return fail_log_only(EINVAL, "bridge: RTM_NEWNEIGH {} not a bridge port", port_dev->name());
  if (q.flags_ext && (*q.flags_ext & kNtfExtLocked))
    return fail(EINVAL, "bridge: Cannot add FDB entry with \"locked\" flag set");
  if (q.vlan && *q.vlan)
    return fail_log_only(EINVAL, "bridge: RTM_NEWNEIGH with unconfigured vlan {}", *q.vlan);
  Events ev{br, p, br.engine().time().now(), {}};
  Result<void> r = ok();
  {
    MutexLock lk(p.fdb.mutex());
    if (q.flags & NTF_USE) {
      if (!port) return fail_log_only(EINVAL, "bridge: NTF_USE is not supported");
      if (port->s.state == BR_STATE_LEARNING || port->s.state == BR_STATE_FORWARDING)
        use_entry(p.fdb, *port, addr, ev);
    } else if (q.flags & NTF_EXT_LEARNED) {
      if (!port && !(q.state & NUD_PERMANENT))
        return fail(EINVAL, "bridge: FDB entry towards bridge must be permanent");
      external_learn_add(p.fdb, port_dev, addr, ev);
    } else {
      r = add_entry(p.fdb, port, addr, q, ev);
    }
  }
  ev.announce(ctl);
  return r;
}

Result<void> fdb_del(Control& ctl, Device& br, Priv& p, Device* port_dev, const HwAddr& addr,
                     const fdb::Request& q) {
  if (port_dev && !p.find(*port_dev))
    return fail_log_only(EINVAL, "bridge: RTM_DELNEIGH {} not a bridge port", port_dev->name());
  if (q.vlan && *q.vlan)
    return fail_log_only(EINVAL, "bridge: RTM_DELNEIGH with unconfigured vlan {}", *q.vlan);
  Events ev{br, p, br.engine().time().now(), {}};
  {
    MutexLock lk(p.fdb.mutex());
    Table& t = p.fdb.table_locked();
    auto it = t.find(Fdb::key(addr, 0));
    if (it == t.end() || it->second.dst != port_dev) return fail_log_only(ENOENT, "no such entry");
    erase(t, it, ev);
  }
  ev.announce(ctl);
  return ok();
}

Result<void> fdb_flush(Control& ctl, Device& br, Priv& p, Device* port, const fdb::Request& q) {
  // Linux: br_fdb_del_bulk_policy, then br_fdb_delete_bulk's checks in their order.
  if (q.vlan && (*q.vlan < 1 || *q.vlan > 4094)) return fail(EINVAL, "integer out of range");
  if (q.via && static_cast<std::int32_t>(*q.via) < 1) return fail(EINVAL, "integer out of range");
  if (port && !p.find(*port)) return fail(EINVAL, "bridge: Device is not a bridge port");
  const std::uint8_t ndm_flags = q.flags & ~(NTF_MASTER | NTF_SELF);
  if (ndm_flags & ~(NTF_USE | NTF_EXT_LEARNED | NTF_STICKY | NTF_OFFLOADED))
    return fail(EINVAL, "Unsupported fdb flush ndm flag bits set");
  if (q.state & ~(NUD_PERMANENT | NUD_NOARP))
    return fail(EINVAL, "Unsupported fdb flush ndm state bits set");
  // An entry's flags in the message's terms: NUD_PERMANENT local, NUD_NOARP static, NTF_USE
  // added by the user, NTF_EXT_LEARNED, NTF_STICKY (nothing is offloaded here).
  auto bits = [](const FdbEntry& f) {
    return std::uint32_t{(f.local ? NUD_PERMANENT : 0u) | (f.is_static ? NUD_NOARP : 0u)} |
           std::uint32_t{(f.added_by_user ? NTF_USE : 0u) | (f.ext_learn ? NTF_EXT_LEARNED : 0u) |
                         (f.sticky ? NTF_STICKY : 0u)}
               << 16;
  };
  const std::uint32_t want = std::uint32_t{q.state} | std::uint32_t{ndm_flags} << 16;
  // Linux: __fdb_flush_matches compares the masked flags with all of the request's, so a
  // requested bit outside the mask matches nothing.
  std::uint32_t mask = 0;
  if (q.state_mask) mask |= *q.state_mask & (NUD_PERMANENT | NUD_NOARP);
  if (q.flags_mask)
    mask |= static_cast<std::uint32_t>(*q.flags_mask &
                                       (NTF_USE | NTF_EXT_LEARNED | NTF_STICKY | NTF_OFFLOADED))
            << 16;
  int port_ifindex = port ? port->ifindex() : 0;
  if (q.via) {
    // Linux: __fdb_flush_validate_ifindex.
    Device* d = ctl.find(br.ns(), static_cast<int>(*q.via));
    if (!d) return fail(ENODEV, "bridge: Unknown flush device ifindex");
    Device* m = d->master();
    const bool is_bridge = priv(*d) != nullptr;
    const bool is_port = m && priv(*m) && priv(*m)->find(*d);
    if (!is_bridge && !is_port)
      return fail(EINVAL, "bridge: Flush device is not a bridge or bridge port");
    if (is_bridge && d != &br)
      return fail(EINVAL, "bridge: Flush bridge device does not match target bridge device");
    if (is_port && m != &br)
      return fail(EINVAL, "bridge: Port belongs to a different bridge device");
    port_ifindex = d->ifindex();
  }
  // Linux: br_fdb_flush over the list, newest first, each entry deleted and announced.
  Events ev{br, p, br.engine().time().now(), {}};
  {
    MutexLock lk(p.fdb.mutex());
    Table& t = p.fdb.table_locked();
    std::vector<Table::iterator> gone;
    for (auto it = t.begin(); it != t.end(); ++it) {
      const FdbEntry& f = it->second;
      if (q.vlan && *q.vlan != f.vid) continue;
      if (port_ifindex && port_ifindex != (f.dst ? f.dst : &br)->ifindex()) continue;
      if (mask && (bits(f) & mask) != want) continue;
      gone.push_back(it);
    }
    std::sort(gone.begin(), gone.end(),
              [](auto a, auto b) { return a->second.seq > b->second.seq; });
    for (auto it : gone) erase(t, it, ev);
  }
  ev.announce(ctl);
  return ok();
}

Result<fdb::Entry> fdb_get(Device& br, Priv& p, const HwAddr& addr, std::uint16_t vid) {
  TimePoint now = br.engine().time().now();
  MutexLock lk(p.fdb.mutex());
  Table& t = p.fdb.table_locked();
  auto it = t.find(Fdb::key(addr, vid));
  if (it == t.end()) return fail(ENOENT, "Fdb entry not found");
  return to_entry(br, it->second, now, p.fdb.ageing());
}

void fdb_dump(Device& br, Priv& p, const Device* filter, std::vector<fdb::Entry>& out) {
  TimePoint now = br.engine().time().now();
  std::vector<const FdbEntry*> rows;
  MutexLock lk(p.fdb.mutex());
  for (const auto& [k, f] : p.fdb.table_locked()) {
    // Linux: br_fdb_dump — the bridge's own entries for the bridge, a port's for the port.
    if (filter ? f.dst != filter : f.dst != nullptr) continue;
    rows.push_back(&f);
  }
  std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->seq > b->seq; });
  for (const FdbEntry* f : rows) out.push_back(to_entry(br, *f, now, p.fdb.ageing()));
}

}  // namespace ifcore::kinds::bridge
