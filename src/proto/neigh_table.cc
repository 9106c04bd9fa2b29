// proto/neigh_table.cc — the neighbour tables' settings (ifcore/neigh_table.h; Linux:
// neightbl_fill_info, neightbl_fill_param_info, neightbl_set and lookup_neigh_parms of
// net/core/neighbour.c): the engine's two tables and the parameters each device keeps in its
// protocol settings.
//
// Lock order: everything here runs under the control lock, then the plug-in lock.
#include <net/if.h>  // before any <linux/if*.h>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "proto/idle.h"
#include "proto/install.h"
#include "proto/state.h"

namespace ifcore::proto {

// Linux: __neigh_update — an unconfirmed entry was confirmed twice its device's
// base_reachable_time ago (the parms of `ip ntable`, neigh_table.cc).
// `dev` null: the table's default's (neigh_alloc).
Duration unconfirmed_age(Engine& e, Device* dev, int family) {
  EngineProto& ep = engine_proto(e);
  std::uint32_t ms = ep.neigh_tables[family == AF_INET6 ? 1 : 0].parms.base_reachable_ms;
  if (dev && family == AF_INET6) {
    if (auto c = dev_conf6(ep, *dev)) ms = c->nd.base_reachable_ms;
  } else if (dev) {
    if (auto c = dev_conf4(ep, *dev)) ms = c->arp.base_reachable_ms;
  }
  return std::chrono::milliseconds(std::uint64_t{ms} * 2);
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

namespace {

// Linux: jiffies_to_msecs(MAX_JIFFY_OFFSET) truncated to unsigned int, at HZ 250.
constexpr std::uint32_t kMaxMs = 0xfffffff8u;

int table_index(int family) {
  return family == AF_INET6 ? 1 : 0;
}

// Linux: neigh_tables[] — key_len and entry_size (ALIGN(offsetof(struct neighbour,
// primary_key) + key_len, NEIGH_PRIV_ALIGN) on this kernel).
NeighTableInfo table_info(const EngineProto& ep, int family) {
  NeighTableInfo t;
  t.family = family;
  t.name = family == AF_INET6 ? "ndisc_cache" : "arp_cache";
  t.conf = ep.neigh_tables[table_index(family)];
  t.key_len = family == AF_INET6 ? 16 : 4;
  t.entry_size = family == AF_INET6 ? 344 : 336;
  return t;
}

// The device's parameters of `family`, if it has that family's settings.
std::optional<NeighParms> dev_parms(EngineProto& ep, const Device& d, int family) {
  if (family == AF_INET6) {
    auto c = dev_conf6(ep, d);
    return c ? std::optional(c->nd) : std::nullopt;
  }
  auto c = dev_conf4(ep, d);
  return c ? std::optional(c->arp) : std::nullopt;
}

bool is_initial(const Control& ctl, const Namespace& ns) {
  return ns.name() == ctl.engine().config().default_namespace;
}

// Linux: neightbl_set's NDTPA_* cases, in the order of their types (QUEUE_LEN before
// QUEUE_LENBYTES: both set the queue's bytes).
void apply(NeighParms& p, const NeighTableRequest& r) {
  if (r.queue_len)
    p.queue_len_bytes = static_cast<std::int32_t>(
        static_cast<std::uint32_t>(std::uint64_t{*r.queue_len} * kNeighFrameTruesize));
  if (r.base_reachable_ms) p.base_reachable_ms = neigh_time_ms(*r.base_reachable_ms);
  if (r.retrans_ms) p.retrans_ms = neigh_time_ms(*r.retrans_ms);
  if (r.gc_stale_ms) p.gc_stale_ms = neigh_time_ms(*r.gc_stale_ms);
  if (r.delay_probe_ms) p.delay_probe_ms = neigh_time_ms(*r.delay_probe_ms);
  if (r.app_probes) p.app_probes = *r.app_probes;
  if (r.ucast_probes) p.ucast_probes = *r.ucast_probes;
  if (r.mcast_probes) p.mcast_probes = *r.mcast_probes;
  if (r.anycast_delay_ms) p.anycast_delay_ms = neigh_time_ms(*r.anycast_delay_ms);
  if (r.proxy_delay_ms) p.proxy_delay_ms = neigh_time_ms(*r.proxy_delay_ms);
  if (r.proxy_qlen) p.proxy_qlen = *r.proxy_qlen;
  if (r.locktime_ms) p.locktime_ms = neigh_time_ms(*r.locktime_ms);
  if (r.queue_len_bytes) p.queue_len_bytes = static_cast<std::int32_t>(*r.queue_len_bytes);
  if (r.mcast_reprobes) p.mcast_reprobes = *r.mcast_reprobes;
  if (r.interval_probe_ms) p.interval_probe_ms = neigh_time_ms(*r.interval_probe_ms);
}

}  // namespace

std::uint32_t neigh_time_ms(std::uint64_t ms) {
  // Linux: msecs_to_jiffies takes an unsigned int; above jiffies_to_msecs(MAX_JIFFY_OFFSET)
  // it answers MAX_JIFFY_OFFSET, which reads back as kMaxMs; else it rounds up to a jiffy.
  const auto m = static_cast<std::uint32_t>(ms);
  if (m > kMaxMs) return kMaxMs;
  return static_cast<std::uint32_t>((std::uint64_t{m} + 3) / 4 * 4);
}

std::vector<NeighTableDump> list_neigh_tables(Control& ctl, Namespace& ns, int family) {
  std::vector<NeighTableDump> out;
  if (family != AF_UNSPEC && family != AF_INET && family != AF_INET6) return out;
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  std::vector<Device*> devs = ns.devices_locked();
  // Linux: neigh_parms_alloc puts a device's parms first in tbl->parms_list; ifcore takes
  // the newest device to be the one of the highest ifindex.
  std::sort(devs.begin(), devs.end(),
            [](const Device* a, const Device* b) { return a->ifindex() > b->ifindex(); });
  for (int f : {AF_INET, AF_INET6}) {
    if (family != AF_UNSPEC && family != f) continue;
    NeighTableDump& t = out.emplace_back();
    t.table = table_info(ep, f);
    for (Device* d : devs) {
      auto p = dev_parms(ep, *d, f);
      if (!p) continue;
      NeighParmsInfo& i = t.devices.emplace_back();
      i.ifindex = d->ifindex();
      i.parms = *p;
      // Linux: each neighbour entry holds its device's parms (neigh_parms_clone).
      if (DevState* ds = find_dev(ep, *d))
        for (const Neigh& n : ds->neighs)
          if (n.info.family == f) ++i.refcnt;
      t.table.entries += i.refcnt - 1;
    }
  }
  return out;
}

Result<void> set_neigh_table(Control& ctl, Namespace& ns, const NeighTableRequest& req) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  const int f = req.family == AF_INET6 ? AF_INET6 : AF_INET;
  const bool initial = is_initial(ctl, ns);
  // Linux: lookup_neigh_parms — a device of the namespace with that family's state, or the
  // defaults, which only the initial namespace finds.
  Device* dev = nullptr;
  if (req.has_parms) {
    if (req.ifindex) {
      dev = ctl.find(ns, req.ifindex);
      if (!dev || !dev_parms(ep, *dev, f))
        return fail_log_only(ENOENT, "ntable: no {} parameters of device {}",
                             f == AF_INET6 ? "ndisc_cache" : "arp_cache", req.ifindex);
    } else if (!initial) {
      return fail_log_only(ENOENT, "ntable: the defaults belong to the initial namespace");
    }
  }
  // Linux: the thresholds and the interval are init_net's (it refuses them after it has
  // applied the parameters; ifcore refuses before anything changes).
  const bool table = req.thresh1 || req.thresh2 || req.thresh3 || req.gc_interval_ms;
  if (table && !initial)
    return fail_log_only(ENOENT, "ntable: thresholds belong to the initial namespace");
  if (table) IFCORE_TRY(ctl.check_engine_wide("a neighbour table's thresholds"));
  if (req.has_parms && !dev) IFCORE_TRY(ctl.check_engine_wide("a neighbour table's defaults"));
  NeighTableConf& t = ep.neigh_tables[table_index(f)];
  if (dev) {
    DevState& ds = dev_state(ctl, ep, *dev);  // an idle device gets its state
    apply(f == AF_INET6 ? ds.in6->conf.nd : ds.in->conf.arp, req);
  } else if (req.has_parms) {
    apply(t.parms, req);
    // Devices registered from now on copy the new defaults.
    for (Namespace* n : ctl.namespaces()) conf_snap_reset(ep, net_state(*n));
  }
  if (req.thresh1) t.thresh1 = *req.thresh1;
  if (req.thresh2) t.thresh2 = *req.thresh2;
  if (req.thresh3) t.thresh3 = *req.thresh3;
  if (req.gc_interval_ms) t.gc_interval_ms = neigh_time_ms(*req.gc_interval_ms);
  return ok();
}

}  // namespace ifcore::inet
