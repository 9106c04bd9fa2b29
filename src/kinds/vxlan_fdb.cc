// The vxlan device's own forwarding database: Linux drivers/net/vxlan/vxlan_core.c
// semantics (vxlan_fdb_parse, vxlan_fdb_add, vxlan_fdb_update and its _existing/_create
// halves, __vxlan_fdb_delete, vxlan_fdb_get, vxlan_fdb_dump, vxlan_fdb_info, vxlan_flush),
// written for ifcore. ifcore sends no UDP and learns nothing: entries are the user's and
// the default entry of a configured remote. Nexthop entries (NDA_NH_ID) are refused as
// Linux refuses an unknown nexthop id.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cerrno>

#include "kinds/vxlan_priv.h"

namespace ifcore::kinds::vx {

namespace {

constexpr std::uint16_t kAddedByUser = 0x100;  // Linux: NTF_VXLAN_ADDED_BY_USER

std::uint32_t clock_t_of(Duration d) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return ms <= 0 ? 0 : static_cast<std::uint32_t>(ms / 10);
}

// Linux: vxlan_fdb_info for RTM_NEWNEIGH / RTM_DELNEIGH.
fdb::Entry to_entry(const Device& dev, const VxlanPriv& v, const FdbEntry& f, const Remote* rd,
                    TimePoint now) {
  fdb::Entry e;
  e.ifindex = dev.ifindex();
  e.state = f.state;
  e.flags = static_cast<std::uint8_t>(f.flags);
  e.type = RTN_UNICAST;
  e.lladdr = f.mac;
  if (rd) {
    e.dst = rd->ip;
    if (rd->port && rd->port != v.conf.port) e.port = rd->port;
    if (rd->vni != v.conf.vni) e.vni = rd->vni;
    if (rd->ifindex) e.via = rd->ifindex;
  }
  // Linux: vxlan_fdb_info — NDA_SRC_VNI for a collect_metadata device's keyed entries.
  if ((v.conf.flags & kMetadata) && f.src_vni) e.src_vni = f.src_vni;
  e.has_cacheinfo = true;
  e.used = clock_t_of(now - f.used);
  e.updated = clock_t_of(now - f.updated);
  return e;
}

void announce(Control& ctl, Device& dev, const VxlanPriv& v, const FdbEntry& f, const Remote* rd,
              bool added) {
  fdb::notify(ctl, dev.ns(), added, to_entry(dev, v, f, rd, dev.engine().time().now()));
}

bool is_any(const IpAddr& ip) {
  auto b = ip.bytes();
  return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

IpAddr any_of(bool v6) {
  std::array<std::uint8_t, 16> z{};
  return v6 ? IpAddr::v6(z) : IpAddr::v4(0);
}

std::uint32_t key_vni(const VxlanPriv& v, std::uint32_t vni) {
  // Linux: vxlan_find_mac_rcu — a device without collect_metadata keys by its own VNI.
  return (v.conf.flags & kMetadata) ? vni : v.conf.vni;
}

FdbEntry* find(VxlanPriv& v, const HwAddr& mac, std::uint32_t vni) {
  std::uint32_t k = key_vni(v, vni);
  for (auto& f : v.fdb)
    if (f.mac == mac && f.src_vni == k) return &f;
  return nullptr;
}

struct Parsed {
  Remote rd;
  std::uint32_t src_vni = 0;
};

// Linux: vxlan_fdb_parse.
Result<Parsed> parse(Control& ctl, Device& dev, const VxlanPriv& v, const fdb::Request& q) {
  if (q.nh_id && (q.dst || q.dst_bad || q.vni || q.via || q.port))
    return fail(EINVAL, "DST, VNI, ifindex and port are mutually exclusive with NH_ID");
  Parsed p;
  if (q.dst_bad) return fail(EAFNOSUPPORT, "Unsupported address family");
  p.rd.ip = q.dst ? *q.dst : any_of(v.conf.ipv6());
  p.rd.port = q.port.value_or(v.conf.port);
  p.rd.vni = q.vni.value_or(v.conf.vni);
  p.src_vni = q.src_vni.value_or(v.conf.vni);
  if (q.via) {
    if (!ctl.find(dev.ns(), static_cast<int>(*q.via)))
      return fail(EADDRNOTAVAIL, "Device not found");
    p.rd.ifindex = *q.via;
  }
  if (q.nh_id) return fail(EINVAL, "Nexthop id does not exist");
  return p;
}

bool is_group_or_zero(const HwAddr& mac) {
  return mac.is_multicast() || mac.is_zero();
}

// Linux: vxlan_fdb_update (its _existing and _create halves).
Result<void> update(Control& ctl, Device& dev, VxlanPriv& v, const HwAddr& mac, const Remote& rd,
                    std::uint16_t state, std::uint16_t nlflags, std::uint32_t src_vni,
                    std::uint16_t ndm_flags) {
  const std::uint16_t fdb_flags = ndm_flags & ~std::uint16_t{NTF_USE};
  TimePoint now = dev.engine().time().now();
  if (FdbEntry* f = find(v, mac, src_vni)) {
    if (nlflags & NLM_F_EXCL) return fail_log_only(EEXIST, "entry exists");
    bool notify = false;
    // Linux: an externally learned entry does not take over the user's.
    if (!(fdb_flags & NTF_EXT_LEARNED) || !(f->flags & kAddedByUser)) {
      if (f->state != state) f->state = state, notify = true;
      if (f->flags != fdb_flags) f->flags = fdb_flags, notify = true;
    }
    const Remote* shown = nullptr;
    if (nlflags & NLM_F_REPLACE) {
      if (is_group_or_zero(f->mac))
        return fail(EOPNOTSUPP, "Cannot replace non-unicast fdb entries");
      // Linux: vxlan_fdb_replace — the first remote becomes the new one.
      bool known = std::find(f->remotes.begin(), f->remotes.end(), rd) != f->remotes.end();
      if (!known && !f->remotes.empty()) {
        f->remotes.front() = rd;
        notify = true;
      }
    }
    if ((nlflags & NLM_F_APPEND) && is_group_or_zero(f->mac)) {
      if (std::find(f->remotes.begin(), f->remotes.end(), rd) == f->remotes.end()) {
        f->remotes.push_back(rd);
        shown = &f->remotes.back();
        notify = true;
      }
    }
    if (ndm_flags & NTF_USE) f->updated = now;
    if (notify) {
      if (!shown && !f->remotes.empty()) shown = &f->remotes.front();
      f->updated = now;
      announce(ctl, dev, v, *f, shown, true);
    }
    return ok();
  }
  if (!(nlflags & NLM_F_CREATE)) return fail_log_only(ENOENT, "no such entry");
  if ((nlflags & NLM_F_REPLACE) && is_group_or_zero(mac))
    return fail_log_only(EOPNOTSUPP, "replace cannot add a multicast entry");
  if (v.conf.limit && v.fdb.size() >= v.conf.limit)
    return fail_log_only(ENOSPC, "device \"{}\": forwarding table full", dev.name());
  FdbEntry f;
  f.mac = mac;
  f.src_vni = key_vni(v, src_vni);
  f.state = state;
  f.flags = fdb_flags;
  f.remotes.push_back(rd);
  f.updated = f.used = now;
  f.seq = ++v.fdb_seq;
  v.fdb.push_back(std::move(f));
  const FdbEntry& made = v.fdb.back();
  announce(ctl, dev, v, made, &made.remotes.front(), true);
  return ok();
}

void destroy(Control& ctl, Device& dev, VxlanPriv& v, std::size_t i) {
  for (const Remote& rd : v.fdb[i].remotes) announce(ctl, dev, v, v.fdb[i], &rd, false);
  v.fdb.erase(v.fdb.begin() + static_cast<std::ptrdiff_t>(i));
}

}  // namespace

void fdb_add_default(Control& ctl, Device& dev, VxlanPriv& v) {
  if (v.conf.remote.empty() || is_any(v.conf.remote)) return;
  Remote rd{v.conf.remote, v.conf.port, v.conf.vni, static_cast<std::uint32_t>(v.conf.lower)};
  (void)update(ctl, dev, v, HwAddr::ethernet({0, 0, 0, 0, 0, 0}), rd, NUD_REACHABLE | NUD_PERMANENT,
               NLM_F_EXCL | NLM_F_CREATE, v.conf.vni, NTF_SELF);
}

void fdb_flush(Control& ctl, Device& dev, VxlanPriv& v, bool all) {
  for (std::size_t i = v.fdb.size(); i-- > 0;) {
    const FdbEntry& f = v.fdb[i];
    // Linux: vxlan_stop keeps the default entry and the permanent and static ones.
    if (!all && (f.mac.is_zero() || (f.state & (NUD_PERMANENT | NUD_NOARP)))) continue;
    destroy(ctl, dev, v, i);
  }
}

namespace {

constexpr std::chrono::seconds kAgeInterval{10};  // Linux: FDB_AGE_INTERVAL

// Linux: vxlan_cleanup.
void cleanup(Control& ctl, Device& dev, VxlanPriv& v) {
  const TimePoint now = dev.engine().time().now();
  const Duration ageing = std::chrono::seconds(v.conf.ageing);
  TimePoint next = now + kAgeInterval;
  for (std::size_t i = v.fdb.size(); i-- > 0;) {
    FdbEntry& f = v.fdb[i];
    if ((f.state & (NUD_PERMANENT | NUD_NOARP)) || (f.flags & NTF_EXT_LEARNED)) continue;
    const TimePoint timeout = f.updated + ageing;
    if (timeout <= now) {
      f.state = NUD_STALE;
      destroy(ctl, dev, v, i);
    } else if (timeout < next) {
      next = timeout;
    }
  }
  arm_timer(ctl, v.age_timer, next);
}

}  // namespace

void fdb_start_ageing(Control& ctl, Device& dev, VxlanPriv& v) {
  if (!v.age_timer) {
    Device* d = &dev;
    v.age_timer = add_timer(ctl, [d](Control& c) {
      PluginGuard guard(c);  // the device's own state
      if (VxlanPriv* q = vxlan_of(*d)) cleanup(c, *d, *q);
    });
  }
  arm_timer(ctl, v.age_timer, dev.engine().time().now() + kAgeInterval);
}

void fdb_stop_ageing(Control& ctl, VxlanPriv& v) {
  if (v.age_timer) cancel_timer(ctl, v.age_timer);
}

Result<void> fdb_add(Control& ctl, Device& dev, VxlanPriv& v, const HwAddr& addr,
                     const fdb::Request& q) {
  if (!(q.state & (NUD_PERMANENT | NUD_REACHABLE)))
    return fail_log_only(EINVAL, "RTM_NEWNEIGH with invalid state {:#x}", q.state);
  if (!q.dst && !q.dst_bad && !q.nh_id) return fail_log_only(EINVAL, "no destination");
  auto p = parse(ctl, dev, v, q);
  if (!p) return fail(p.error());
  if (p->rd.ip.is_v6() != v.conf.ipv6())
    return fail_log_only(EAFNOSUPPORT, "destination of another family than the device's");
  return update(ctl, dev, v, addr, p->rd, q.state, q.nlflags, p->src_vni,
                static_cast<std::uint16_t>(q.flags | kAddedByUser));
}

Result<void> fdb_del(Control& ctl, Device& dev, VxlanPriv& v, const HwAddr& addr,
                     const fdb::Request& q) {
  auto p = parse(ctl, dev, v, q);
  if (!p) return fail(p.error());
  FdbEntry* f = find(v, addr, p->src_vni);
  if (!f) return fail_log_only(ENOENT, "no such entry");
  auto i = static_cast<std::size_t>(f - v.fdb.data());
  if (!is_any(p->rd.ip)) {
    auto it = std::find(f->remotes.begin(), f->remotes.end(), p->rd);
    if (it == f->remotes.end()) return ok();  // Linux: __vxlan_fdb_delete answers 0
    if (f->remotes.size() > 1) {
      announce(ctl, dev, v, *f, &*it, false);
      f->remotes.erase(it);
      return ok();
    }
  }
  destroy(ctl, dev, v, i);
  return ok();
}

Result<void> fdb_flush(Control& ctl, Device& dev, VxlanPriv& v, const fdb::Request& q) {
  if (q.vlan) return fail(EINVAL, "Unsupported attribute");  // not in the bulk policy
  if (q.vni || q.dst || q.port || q.via || q.nh_id)
    return fail(EOPNOTSUPP,
                "ifcore: a vxlan flush by remote (vni, dst, port, via, nhid) is not supported");
  const std::uint16_t flags = q.flags & ~(NTF_MASTER | NTF_SELF);
  const std::uint16_t state_mask = q.state_mask.value_or(0), flags_mask = q.flags_mask.value_or(0);
  for (std::size_t i = v.fdb.size(); i-- > 0;) {
    const FdbEntry& f = v.fdb[i];
    if (q.src_vni && f.src_vni != *q.src_vni) continue;
    if (state_mask && (f.state & state_mask) != q.state) continue;
    if (flags_mask && (f.flags & flags_mask) != flags) continue;
    destroy(ctl, dev, v, i);
  }
  return ok();
}

Result<void> fdb_vni_default(Control& ctl, Device& dev, VxlanPriv& v, std::uint32_t vni,
                             const IpAddr& del, const IpAddr& add) {
  const HwAddr zero = HwAddr::ethernet({0, 0, 0, 0, 0, 0});
  const auto lower = static_cast<std::uint32_t>(v.conf.lower);
  if (!add.empty())
    IFCORE_TRY(update(ctl, dev, v, zero, Remote{add, v.conf.port, vni, lower},
                      NUD_REACHABLE | NUD_PERMANENT, NLM_F_APPEND | NLM_F_CREATE, vni, NTF_SELF));
  if (del.empty()) return ok();
  // Linux: __vxlan_fdb_delete of that remote: the entry goes with its last remote.
  FdbEntry* f = find(v, zero, vni);
  if (!f) return ok();
  Remote rd{del, v.conf.port, vni, lower};
  auto it = std::find(f->remotes.begin(), f->remotes.end(), rd);
  if (it == f->remotes.end()) return ok();
  if (f->remotes.size() > 1) {
    announce(ctl, dev, v, *f, &*it, false);
    f->remotes.erase(it);
    return ok();
  }
  destroy(ctl, dev, v, static_cast<std::size_t>(f - v.fdb.data()));
  return ok();
}

Result<fdb::Entry> fdb_get(Device& dev, VxlanPriv& v, const HwAddr& addr, const fdb::Request& q) {
  FdbEntry* f = find(v, addr, q.vni.value_or(v.conf.vni));
  if (!f) return fail(ENOENT, "Fdb entry not found");
  return to_entry(dev, v, *f, f->remotes.empty() ? nullptr : &f->remotes.front(),
                  dev.engine().time().now());
}

void fdb_dump(Device& dev, VxlanPriv& v, std::vector<fdb::Entry>& out) {
  TimePoint now = dev.engine().time().now();
  std::vector<const FdbEntry*> rows;
  for (const auto& f : v.fdb) rows.push_back(&f);
  std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->seq > b->seq; });
  for (const FdbEntry* f : rows)
    for (const Remote& rd : f->remotes) out.push_back(to_entry(dev, v, *f, &rd, now));
}

}  // namespace ifcore::kinds::vx
