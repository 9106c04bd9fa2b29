// ifcore/neigh_table.h — the neighbour tables' settings (Linux: struct neigh_table and
// struct neigh_parms of net/core/neighbour.c; `ip ntable`, RTM_GETNEIGHTBL and
// RTM_SETNEIGHTBL): each table's thresholds and garbage-collection interval, its default
// parameters, and the parameters of each device that has IPv4 (arp_cache) or IPv6
// (ndisc_cache) state.
//
// Like Linux's, the two tables are the engine's, not a namespace's: their thresholds,
// interval and default parameters are changed from the initial namespace only (Linux:
// init_net), and every namespace's new devices copy the default parameters. A device's
// parameters live with its protocol settings (Inet4Conf::arp, Inet6Conf::nd): made with
// them, gone with them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ifcore/result.h"

namespace ifcore {
class Control;
class Namespace;
}  // namespace ifcore

namespace ifcore::inet {

// Linux: SKB_TRUESIZE(ETH_FRAME_LEN) on this kernel (x86_64): a queue of N frames is kept
// as N times this many bytes (NDTPA_QUEUE_LEN), and reported as bytes / this.
inline constexpr std::uint32_t kNeighFrameTruesize = 2090;

// One set of parameters (Linux: struct neigh_parms, NEIGH_VAR_*). Times are milliseconds as
// Linux reports them: kept in jiffies of 4 ms (HZ 250), so a time set is rounded up to 4 ms
// (neigh_time_ms).
struct NeighParms {
  std::int32_t queue_len_bytes = 212992;  // Linux: SK_WMEM_MAX (unres_qlen_bytes)
  std::uint32_t proxy_qlen = 64;
  std::uint32_t app_probes = 0, ucast_probes = 3, mcast_probes = 3, mcast_reprobes = 0;
  std::uint32_t base_reachable_ms = 30000, gc_stale_ms = 60000, delay_probe_ms = 5000,
                retrans_ms = 1000, anycast_delay_ms = 1000, proxy_delay_ms = 800,
                locktime_ms = 1000, interval_probe_ms = 5000;

  // Linux: arp_tbl's and nd_tbl's defaults (ND has no locktime).
  static NeighParms arp_defaults() { return {}; }
  static NeighParms nd_defaults() {
    NeighParms p;
    p.locktime_ms = 0;
    return p;
  }
  // Linux: QUEUE_LEN_BYTES / SKB_TRUESIZE(ETH_FRAME_LEN), of an int read as unsigned long.
  std::uint32_t queue_len() const {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(std::int64_t{queue_len_bytes}) /
                                      kNeighFrameTruesize);
  }
};

// A time as Linux keeps a u64 of milliseconds it is given (nla_get_msecs: the low 32 bits
// to jiffies, rounded up; an int of jiffies read back as milliseconds).
std::uint32_t neigh_time_ms(std::uint64_t ms);

// A table's own settings (Linux: gc_interval, gc_thresh1..3 and the default parms).
struct NeighTableConf {
  std::uint32_t gc_interval_ms = 30000, thresh1 = 128, thresh2 = 512, thresh3 = 1024;
  NeighParms parms;
};

// One table as a dump reports it (Linux: neightbl_fill_info).
struct NeighTableInfo {
  int family = 0;  // AF_INET (arp_cache) or AF_INET6 (ndisc_cache)
  std::string name;
  NeighTableConf conf;
  std::uint16_t key_len = 0, entry_size = 0;
  std::uint32_t entries = 0;  // the namespace's entries of the family (Linux: all namespaces')
};

// One device's parameters (Linux: neightbl_fill_param_info).
struct NeighParmsInfo {
  int ifindex = 0;
  std::uint32_t refcnt = 1;  // Linux: the parms' own reference and one per neighbour entry
  NeighParms parms;
};

// A table and its devices' parameters, newest device first (Linux: tbl->parms_list).
struct NeighTableDump {
  NeighTableInfo table;
  std::vector<NeighParmsInfo> devices;
};

// The tables of `family` (0: both, IPv4 first; another: none) with the parameters of `ns`'s
// devices. Context: control lock.
std::vector<NeighTableDump> list_neigh_tables(Control& ctl, Namespace& ns, int family);

// What RTM_SETNEIGHTBL asks for (Linux: neightbl_set), read from the wire, which found the
// table by its name (and the family, if the request named one).
struct NeighTableRequest {
  int family = 0;  // the table's: AF_INET (arp_cache) or AF_INET6 (ndisc_cache)
  std::optional<std::uint32_t> thresh1, thresh2, thresh3;
  std::optional<std::uint64_t> gc_interval_ms;
  bool has_parms = false;  // NDTA_PARMS was given
  int ifindex = 0;         // NDTPA_IFINDEX: 0 the defaults
  std::optional<std::uint32_t> queue_len, queue_len_bytes, proxy_qlen, app_probes, ucast_probes,
      mcast_probes, mcast_reprobes;
  std::optional<std::uint64_t> base_reachable_ms, gc_stale_ms, delay_probe_ms, retrans_ms,
      anycast_delay_ms, proxy_delay_ms, locktime_ms, interval_probe_ms;
};

// Changes a table (Linux: neightbl_set). Announces nothing (Linux sends no RTM_NEWNEIGHTBL).
// Context: control lock (the engine's, for a table or its defaults).
// Errors: ENOENT (no parameters of that device or, outside the initial namespace, no
// defaults; thresholds or interval outside the initial namespace). A
// refused request changes nothing (Linux applies the parameters before it refuses the
// thresholds).
Result<void> set_neigh_table(Control& ctl, Namespace& ns, const NeighTableRequest& req);

}  // namespace ifcore::inet
