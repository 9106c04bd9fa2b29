// proto/state.h — the protocols' private state: per engine (listeners, per-device state,
// the dst garbage list), per namespace (route tables, "all"/"default" settings) and per
// device (Linux: in_device, inet6_dev). Not a public header.
//
// Everything here is touched under the control lock only, except what an RCU callback
// owns after it was handed over (a retired address, a released dst entry).
// Lock order: everything here runs under the control lock.
#pragma once

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "base/rcu.h"
#include "ifcore/device.h"
#include "ifcore/engine.h"
#include "ifcore/inet.h"
#include "ifcore/timer.h"
#include "proto/addrlabel.h"
#include "proto/dev_routes.h"
#include "proto/idle.h"
#include "proto/mcast.h"
#include "proto/table_map.h"

namespace ifcore::proto {

using inet::AddrInfo;
using inet::Inet4Conf;
using inet::Inet6Conf;
using inet::RouteInfo;

// What an object that is freed after a grace period carries (Linux: the rcu member of
// dst_entry, in_ifaddr, in_device, inet6_dev), so that retiring it allocates nothing.
struct RcuHook {
  rcu_head rcu{};                       // first: rcu_head* <-> RcuHook*
  RcuHook* next_retired = nullptr;      // EngineProto::retired
  void (*destroy)(RcuHook*) = nullptr;  // deletes the whole object
};
static_assert(std::is_standard_layout_v<RcuHook> && offsetof(RcuHook, rcu) == 0);

// A route-cache entry (Linux: struct dst_entry): holds the next hop's device.
struct DstEntry : RcuHook {
  explicit DstEntry(Device& d) : dev(d, "dst") {}
  Ref dev;
};

// Where a route came from: made by an address (Linux: fib_magic / addrconf), the IPv6
// multicast route of an up device, or a user request.
enum class Origin : std::uint8_t { User, Addr, Mcast };

struct RouteKey;
struct Route;
// The routes with one key, by metric and then insertion (Linux lists a new route after the
// others with the same metric): a list, so that a key that thousands of devices share
// (fe80::/64, ff00::/8) costs O(1) per route removed (the route knows its node) and, as
// new routes go after those of their metric, O(1) per route added unless the metrics
// differ. A route lives in its list node (one allocation per route; nodes do not move).
using RouteList = std::list<Route>;
using Table = std::map<RouteKey, RouteList>;

struct Route {
  RouteInfo info;
  Origin origin = Origin::User;
  std::uint64_t seq = 0;  // insertion order among routes with the same key and metric
  // Where it lives, set by insertion: its table, the routes with its key (map and list
  // nodes do not move) and its node; erasing it looks nothing up until its key empties.
  Table* table = nullptr;
  RouteList* list = nullptr;
  RouteList::iterator self{};  // its node in *list
  Device* dev = nullptr;       // valid while `dst` holds it
  std::unique_ptr<DstEntry> dst;
  Route *dev_prev = nullptr, *dev_next = nullptr;  // DevRoutes of `dev`
  // A multipath route's hops after the first (info.nexthops[1..]), each holding its device
  // through a dst entry; the route is on each such device's DevState::extra_routes.
  struct Hop {
    Device* dev = nullptr;
    std::unique_ptr<DstEntry> dst;
  };
  std::vector<Hop> extra;
  // An IPv6 multipath route of siblings (each with its own metrics, as Linux's fib6_info):
  // each hop's metrics, the first's being info.metrics; empty otherwise (fib_insert.cc).
  std::vector<inet::RouteMetrics> hop_metrics;
  // The nexthop object it names (info.nhid; on its `routes`; nexthop.cc binds the hops).
  struct Nexthop* nh = nullptr;
  // Link state kept as Linux keeps it (fib_linkdown.cc): IPv4 hops made without `linkdown`
  // while their carrier is off (bit h: hop h), and an IPv4 multipath route's own `linkdown`.
  std::uint32_t quiet_hops = 0;
  bool linkdown = false;
};

struct RouteKey {
  IpAddr dst;
  std::uint8_t len = 0;
  friend auto operator<=>(const RouteKey&, const RouteKey&) = default;
};

// A neighbour entry (Linux: struct neighbour). Only the control lock reads the tables, so
// an entry is a plain value, freed at once.
struct NeighFields {  // what NeighInfo reports but the times, the address and refcnt
  IpAddr dst;
  int ifindex = 0;
  std::uint32_t probes = 0;
  std::uint16_t state = 0;
  std::uint8_t family = 0, flags = 0, type = 0, protocol = 0;
};
struct Neigh {
  NeighFields info;
  HwAddr lladdr;  // Linux: neigh->ha (kept while the state is not valid)
  TimePoint confirmed{}, used{}, updated{};
};

// A proxy entry (Linux: struct pneigh_entry); holds its device, if it names one.
struct PNeigh : RcuHook {
  Ref ref;
  inet::NeighInfo info;
};

// One family's proxy entries of a namespace, newest first.
struct NeighTable {
  std::list<std::unique_ptr<PNeigh>> proxies;
};

// A policy-routing rule (Linux: struct fib_rule): what it reports, and the devices it
// names by index while they exist (0: none named; -1: named, not there).
struct Rule {
  inet::RuleInfo info;
  int iifindex = 0, oifindex = 0;
};

// A nexthop object (Linux: struct nexthop with its nh_info or nh_group): what it reports,
// the device it holds (none for a group or an fdb nexthop), the groups it is a member of
// (oldest first) and the routes that name it.
struct Nexthop : RcuHook {
  inet::NexthopInfo info;
  Ref ref;
  std::vector<std::uint32_t> parents;
  std::vector<Route*> routes;
  std::unique_ptr<struct ResTable> res;  // a resilient group's buckets (nexthop_res.cc)
};

// One bucket of a resilient group (Linux: struct nh_res_bucket).
struct ResBucket {
  std::uint32_t nhid = 0;  // the member it holds, when occupied
  bool occupied = false;
  TimePoint used{}, migrated{};  // last use and last move (equal: unused since the move)
};

// A resilient group's table (Linux: struct nh_res_table): its buckets, what each member
// (by position in info.group) wants and holds, the members still short of what they want
// (the first is filled first) and since when the table has been so.
struct ResTable {
  std::vector<ResBucket> buckets;
  std::vector<std::uint32_t> wants, count;
  std::vector<std::uint32_t> underweight;  // member ids, the one filled next first
  TimePoint unbalanced_since{};
};

// Per-namespace state (Linux: net->ipv4, net->ipv6): tables and settings.
struct NetState {
  NeighTable neigh4, neigh6;
  std::vector<Rule> rules4, rules6;  // in order: priority, then insertion
  // An IPv4 rule was ever added or deleted (Linux: fib_has_custom_rules, which unmerges
  // the local table from main: lookups report the table they found the route in).
  bool custom_rules4 = false;
  TableMap<Table> tables4{false}, tables6{true};
  // By id, in no order (dumps sort; a device's unregister finds each of its nexthops at
  // once). A removed nexthop is retired to RCU itself (routes point at it).
  std::unordered_map<std::uint32_t, std::unique_ptr<Nexthop>> nexthops;
  std::uint32_t nh_last_id = 0;  // the last id given out (Linux: last_id_allocated)
  // The l3mdev rules were added, with the namespace's first L3 master (Linux: vrf.c's
  // netns_vrf.add_fib_rules, cleared once): they are not added again.
  bool l3mdev_rules_added = false;
  std::uint64_t route_seq = 0;      // Route::seq of the next route
  inet::MultipathHashConf mp_hash;  // the fib_multipath_hash_* sysctls (multipath.cc)
  // net.ipv4.nexthop_compat_mode (both families): a route through a nexthop object shows
  // the object's hops, and a nexthop's replacement or deletion announces its routes.
  bool nh_compat = true;
  Inet4Conf all4, default4;
  Inet6Conf all6, default6;
  // The snapshot of default4/default6 that devices registered now refer to (made at the
  // first registration after a write of either; see ConfSnap).
  ConfSnap* snap = nullptr;
  // The local address of every address on the namespace's devices, both families, with
  // how many devices have it: a route's prefsrc is checked without a walk of them all.
  std::map<IpAddr, std::uint32_t> local_addrs;
  void count_local(const IpAddr& a) { ++local_addrs[a]; }
  void uncount_local(const IpAddr& a) {
    auto it = local_addrs.find(a);
    if (it != local_addrs.end() && --it->second == 0) local_addrs.erase(it);
  }
  TableMap<Table>& tables(int family) { return family == AF_INET ? tables4 : tables6; }
  AddrLabels labels;  // the IPv6 address label table (addrlabel.cc)
};

struct Ifa : RcuHook {  // one address (Linux: in_ifaddr / inet6_ifaddr); holds its device
  Ifa(Device& d, const char* holder) : ref(d, holder) {}
  AddrInfo info;
  Ref ref;
  std::unique_ptr<DstEntry> rt;  // IPv6: the address's host-route entry (Linux: ifp->rt)
};

struct InDev : RcuHook {  // Linux: in_device
  explicit InDev(Device& d) : ref(d, "inet") {}
  Ref ref;
  Inet4Conf conf;
  std::uint32_t own = 0;                    // Own4 bits
  std::vector<std::unique_ptr<Ifa>> addrs;  // primaries first, then secondaries
  std::vector<McGroup> mc_list;             // groups joined, newest first (mcast.h)
};

struct Inet6Dev : RcuHook {  // Linux: inet6_dev; its rcu carries the release (inet6.cc)
  explicit Inet6Dev(Device& d) : ref(d, "inet6") {}
  Ref ref;
  Inet6Conf conf;
  std::vector<std::unique_ptr<Ifa>> addrs;
  std::vector<McGroup> mc_list;  // groups joined, newest first (mcast.h)
  std::vector<IpAddr> ac_list;   // anycast addresses (subnet-router anycast when forwarding)
  bool mroute = false;           // ff00::/8 is wanted: the device was configured since it came up
  // The carrier went while the device was up (Linux: rt6_sync_down_dev at NETDEV_CHANGE
  // marks its routes RTNH_F_LINKDOWN; rt6_sync_up clears the mark): what the routes a
  // close deletes say in their RTM_DELROUTE.
  bool carrier_lost = false;
  // The device was configured once its link was ready (Linux: IF_READY, set at NETDEV_UP or
  // NETDEV_CHANGE with the link ready, cleared by addrconf_ifdown): a carrier that comes back
  // makes no new link-local address.
  bool ready = false;
};

struct DevState {
  std::unique_ptr<InDev> in;
  std::unique_ptr<Inet6Dev> in6;
  std::vector<HwMc> mc;  // Linux: dev->mc, the link-layer multicast list (mcast.h)
  // Its neighbour entries, both families, oldest first (Linux keeps them in arp_tbl and
  // nd_tbl, each entry holding the device). One reference holds the device while it has
  // any: a device's entries go together (down, unregister), so an unregister batch frees
  // one buffer per device, in the state it already touches.
  std::vector<Neigh> neighs;
  Ref neigh_ref;
  DevRoutes routes;                     // routes through the device (owned by the tables)
  std::vector<Route*> extra_routes;     // multipath routes with a later hop through it
  std::vector<std::uint32_t> nexthops;  // ids of the nexthop objects on it (its namespace's)
  DevState* prev = nullptr;             // EngineProto::dev_states
  DevState* next = nullptr;
};

// A dead route's dst entry that must wait for its device's Unregister (see dst.cc).
struct Garbage {
  Device* dev;
  std::unique_ptr<DstEntry> dst;
};

// Per-engine state, kept as the engine's plug-in data (see install.cc).
struct RetiredNeighs;  // neigh.cc

struct EngineProto {
  EngineProto() = default;
  EngineProto(const EngineProto&) = delete;
  EngineProto& operator=(const EngineProto&) = delete;
  // Frees what is still retired and the device states still listed (devices never
  // unregistered). Context: after the engine's last rcu barrier.
  ~EngineProto();

  std::vector<inet::ProtoListener*> listeners;
  // Every device's state, owned by this list: made by dev_state, freed by drop_dev_state.
  // A device finds its own through the device slot `dev_slot` (Linux: dev->ip_ptr), or,
  // when every slot was taken by other plug-ins (dev_slot -1), through `devs`.
  DevState* dev_states = nullptr;
  int dev_slot = -1;
  std::unordered_map<const Device*, void*> devs;  // only when dev_slot is -1
  std::list<ConfSnap> snaps;                      // every settings snapshot still referred to
  std::vector<Garbage> garbage;
  // garbage.size(), read without the plug-in lock: an entry is parked only under a control
  // that covers its device, so a control that reads 0 knows none waits for its devices.
  std::atomic<std::size_t> garbage_count{0};
  // See retire_hooked. Atomic: Inet6Subscriber::on_batch reads it without the plug-in lock.
  std::atomic<RcuHook*> retired{nullptr};
  // The neighbour tables' own settings, [0] arp_cache, [1] ndisc_cache (neigh_table.cc).
  inet::NeighTableConf neigh_tables[2] = {{}, {.parms = inet::NeighParms::nd_defaults()}};
  // While IPv6 closes `closing` (addrconf_ifdown at a down): the link state its routes'
  // RTM_DELROUTE carry is the one they were marked with, not the closed device's.
  const Device* closing = nullptr;
  bool closing_linkdown = false;
  // The neighbour buffers flushed since the last hand-over, behind one hook on `retired`
  // (neigh.cc: an unregister batch allocates one for all its devices, not one each).
  RetiredNeighs* neigh_retiring = nullptr;
  // fib_sync_dev's and fib_flush_dev's working vectors, kept for their capacity; a call
  // nested in another (from a listener) finds them taken and uses vectors of its own.
  std::vector<std::pair<RouteInfo, Origin>> want_scratch;
  std::vector<Route*> route_scratch;
  std::size_t dst_live = 0;
  SubscriptionId dst_sub = 0;
  RefWaitPolicy ref_wait = RefWaitPolicy::Event;
  int dst_priority = -10;
  std::vector<std::unique_ptr<Subscriber>> subscribers;  // dst, inet, fib, inet6
  std::unique_ptr<PernetHooks> hooks;
  // Address lifetimes (lifetime.cc): the engine's clock, the timer that ages addresses
  // (Linux: check_lifetime_work, addr_chk_work) and the addresses it watches, by address,
  // with where to find each again (an entry whose address is gone is dropped when seen).
  const TimeSource* clock = nullptr;
  TimerId lifetime_timer = 0;
  struct Timed {
    int ns_id = 0, ifindex = 0, family = 0;
  };
  std::unordered_map<const Ifa*, Timed> timed;
  // Routes that expire (fib.cc: Linux's fib6 garbage collection): the timer, made on first
  // use, and the namespaces that have such routes.
  TimerId route_timer = 0;
  // Resilient groups with bucket moves to come (nexthop_res.cc: Linux's upkeep delayed
  // work), by (namespace id, group id), with when; one timer for all.
  TimerId nh_res_timer = 0;
  std::uint64_t mp_key = 0;  // the multipath hash's key when no seed is set (random)
  std::map<std::pair<int, std::uint32_t>, TimePoint> nh_res_due;
  std::set<int> expiring_ns;
};

// Deletes `p` (a T derived from RcuHook) after a grace period: queued on ep.retired, and
// handed to RCU with everything else retired in the same call into the protocols, in one
// rcu::call (call_rcu's queue is shared with the callback thread, and a vlan's delete
// retired five objects one enqueue each). Context: control lock, inside a RetireScope
// (outside one, `p` waits for the next scope's end, or the engine's).
//
// retire_hooked_then: the same, but `after` runs after the grace period instead of the
// delete (on the RCU callback thread; it may hand the object to rcu::call again for
// another generation).
inline void retire_hooked_then(EngineProto& ep, RcuHook* p, void (*after)(RcuHook*)) {
  p->destroy = after;
  p->next_retired = ep.retired.load(std::memory_order_relaxed);
  ep.retired.store(p, std::memory_order_relaxed);
}
template <class T>
void retire_hooked(EngineProto& ep, T* p) {
  static_assert(std::is_base_of_v<RcuHook, T>);
  if (!p) return;
  retire_hooked_then(ep, p, [](RcuHook* h) { delete static_cast<T*>(h); });
}
// Hands ep.retired to RCU. Context: control lock; never blocks.
void retire_flush_now(EngineProto& ep);
inline void retire_flush(EngineProto& ep) {
  if (ep.retired.load(std::memory_order_relaxed)) retire_flush_now(ep);
}
// Every entry into the protocols (subscriber callbacks, the public calls that remove
// addresses or routes) holds one: what it retired goes to RCU when it returns. A
// callback for an event of an unregister batch's pass (EventInfo::batched) defers: what
// the whole batch retired goes to RCU at once, from the UnregisterBatch event that ends
// the pass (Inet6Subscriber::on_batch).
class RetireScope {
 public:
  explicit RetireScope(EngineProto& ep, bool defer = false) : ep_(ep), defer_(defer) {}
  RetireScope(const RetireScope&) = delete;
  RetireScope& operator=(const RetireScope&) = delete;
  ~RetireScope() {
    if (!defer_) retire_flush(ep_);
  }

 private:
  EngineProto& ep_;
  bool defer_;
};

// Context: any thread; the engine has had install_all(). Aborts if it has not.
EngineProto& engine_proto(Engine& e);
// Per-namespace state. Context: control lock; the namespace was initialized by our hooks.
NetState& net_state(Namespace& ns);
// Per-device state, made on first use (nullptr from find_dev if none, or if the device is
// idle). An idle device's state is made from its settings snapshot: an InDev and an
// Inet6Dev with the settings the device has, no address. Context: control lock, which
// `ctl` proves.
DevState& dev_state(const Control& ctl, EngineProto& ep, Device& d);
DevState* find_dev(EngineProto& ep, const Device& d);
// find_dev read in the device's own slot, without the plug-in lock (only a control that
// covers the device writes it); nullopt when only EngineProto::devs could tell (no slot).
std::optional<DevState*> find_dev_locally(EngineProto& ep, const Device& d);
// find_dev, making the state of an idle device (a request that needs it: an address, a
// setting written, a neighbour).
DevState* find_or_make_dev(const Control& ctl, EngineProto& ep, Device& d);
// Frees the device's state, or its reference to its snapshot (at Unregister, when the
// last protocol is done with it).
void drop_dev_state(const Control& ctl, EngineProto& ep, Device& d);
// Listeners. Context: control lock.
void notify_addr(EngineProto& ep, Namespace& ns, inet::ProtoEvent ev, const AddrInfo& a);
// `nlflags`: the RTM_NEWROUTE's NLM_F_* flags (see ProtoListener::on_route_flagged).
void notify_route(EngineProto& ep, Namespace& ns, inet::ProtoEvent ev, const RouteInfo& r,
                  std::uint16_t nlflags = 0);
void notify_netconf(EngineProto& ep, Namespace& ns, inet::ProtoEvent ev,
                    const inet::NetconfInfo& n);

// ---- netconf (netconf.cc)
// Every attribute of a scope's settings (Linux: NETCONFA_ALL).
inet::NetconfInfo netconf_full4(int ifindex, const Inet4Conf& c);
inet::NetconfInfo netconf_full6(int ifindex, const Inet6Conf& c);
// A device's protocol state was made (RTM_NEWNETCONF, every attribute) or goes
// (RTM_DELNETCONF, the ifindex alone). Context: control lock.
void netconf_new4(EngineProto& ep, Namespace& ns, const Device& dev, const Inet4Conf& c);
void netconf_new6(EngineProto& ep, Namespace& ns, const Device& dev, const Inet6Conf& c);
void netconf_del(EngineProto& ep, Namespace& ns, int family, const Device& dev);
// RTM_NEWNETCONF with forwarding alone (a copy made by a write of "all").
void netconf_forwarding(EngineProto& ep, Namespace& ns, int family, int ifindex,
                        std::int32_t value);
// A scope's settings went from `was` to `now`: one RTM_NEWNETCONF per attribute that
// changed, in Linux's rules (inet.h set_inet4_conf / set_inet6_conf). IPv6's forwarding
// and ignore_routes_with_linkdown count as changed when they turn on or off.
void netconf_changed4(EngineProto& ep, Namespace& ns, int ifindex, const Inet4Conf& was,
                      const Inet4Conf& now);
void netconf_changed6(EngineProto& ep, Namespace& ns, int ifindex, const Inet6Conf& was,
                      const Inet6Conf& now);
// Whether a listener would hear of a route of `family` in `ns` (notify_route's callers
// need not build the RouteInfo otherwise).
bool route_news_wanted(const EngineProto& ep, Namespace& ns, int family);

// ---- dst (dst.cc)
std::unique_ptr<DstEntry> dst_alloc(EngineProto& ep, Device& d);
// A route died: its entry is released after a grace period, or, if still referenced
// (see dst.cc) while its device is being unregistered, parked on the garbage list until the
// dst subscriber sees that device's Unregister.
void dst_free(EngineProto& ep, const Route& r, std::unique_ptr<DstEntry> dst);
// The same for a multipath route's later hop through `dev` (never parked).
void dst_free_hop(EngineProto& ep, Device* dev, std::unique_ptr<DstEntry> dst);
// The same for an IPv6 address's own host-route entry (Linux: ifp->rt).
void dst_free_ifa(EngineProto& ep, const Ifa& ifa, std::unique_ptr<DstEntry> dst);
// Releases (after a grace period) the garbage entries pinned to `dev` (nullptr: all).
void dst_ifdown(EngineProto& ep, const Device* dev);
void dst_subscribe(Control& ctl, EngineProto& ep);

// ---- fib (fib.cc)
// Adds a kernel-made route (no validation). Notifies RTM_NEWROUTE.
void fib_insert_kernel(Control& ctl, Namespace& ns, Device& dev, const RouteInfo& info,
                       Origin origin);
// Removes the routes through `dev` of `family` whose origin passes `which`.
enum class Which : std::uint8_t { All, User, Derived };
void fib_flush_dev(Control& ctl, Namespace& ns, Device& dev, int family, Which which, bool notify);
// Makes the address-derived routes of `dev` match its addresses and state (Linux:
// fib_add_ifaddr/fib_del_ifaddr, addrconf's prefix and local routes). `notify`: send
// RTM_DELROUTE for removed ones (added ones always notify).
// `down`: the device closes (IPv6: Linux's fib6_ifdown at NETDEV_DOWN), and the routes users
// added through it go too (a multipath one once none of its other hops' devices is up).
void fib_sync_dev(Control& ctl, Namespace& ns, Device& dev, int family, bool notify_del,
                  bool down = false);
// A route of `ns` expires at `at`: the garbage collection runs then. Context: control lock.
void watch_route_expiry(Control& ctl, Namespace& ns, TimePoint at);
void fib_subscribe(Control& ctl);
// The device a next hop of `family` with gateway `gw` (empty: none) on `oif` (0: any)
// goes through, checked as a route's next hop in table main (Linux: fib_check_nh,
// fib6_nh_init). Errors: the route's (ENETUNREACH "Nexthop has invalid gateway",
// ENETDOWN "Device for nexthop is not up", EHOSTUNREACH...).
Result<Device*> fib_resolve_hop(Control& ctl, Namespace& ns, int family, const IpAddr& gw, int oif,
                                std::uint32_t flags);
// Gives `r` the hops `hops` through `devs` (one each; nullptr: none): its dst entries and
// device lists follow, its gateway and oif are the first hop's, and two hops or more are
// its multipath (an IPv6 route's even of one, from a `group`). `blackhole`: it answers as
// a blackhole route. Context: control lock.
void fib_bind_hops(const Control& ctl, EngineProto& ep, Route* r,
                   const std::vector<inet::NextHop>& hops, const std::vector<Device*>& devs,
                   bool blackhole, bool group);
// Removes `r` from its table (RTM_DELROUTE if `notify`); `r` is freed.
void fib_erase(EngineProto& ep, Namespace& ns, Route* r, bool notify);
// `r` as it is reported (its hops' link state added).
RouteInfo fib_report(const Route& r);
// What a message shows of a route in `st`: with nexthop_compat_mode off, a route through a
// nexthop object shows its id alone (Linux: fib_dump_info, rt6_fill_node), without the
// object's hops and their flags.
void shown_in(const NetState& st, RouteInfo& r);

// ---- nexthop objects (nexthop.cc)
Nexthop* nexthop_find(NetState& st, std::uint32_t id);
// The hops a route naming `nh` takes and their devices (a group: its members').
void nexthop_hops(NetState& st, const Nexthop& nh, std::vector<inet::NextHop>& hops,
                  std::vector<Device*>& devs);
// Linux: fib_check_nexthop / fib6_check_nexthop — whether a route of `family` and `scope`
// may name `nh`. Errors: EINVAL with the kernel's messages.
Result<void> nexthop_check_route(NetState& st, const Nexthop& nh, int family, std::uint8_t scope,
                                 bool has_src);
void nexthop_subscribe(Control& ctl);
// ---- resilient groups' buckets (nexthop_res.cc)
// Makes the table of a new resilient group `g` and fills it (Linux: nh_res_group_rebalance
// and a silent nh_res_table_upkeep in insert_nexthop).
void res_table_create(EngineProto& ep, Namespace& ns, Nexthop& g, TimePoint now);
// `g`'s members changed (a replace, a member gone): buckets of members that left are
// freed and refilled, the wants computed again (Linux: replace_nexthop_grp_res).
void res_table_regroup(EngineProto& ep, Namespace& ns, Nexthop& g, TimePoint now);
// The member a lookup with `hash` takes, its bucket marked used (Linux:
// nexthop_select_path_res). `g` must have a table.
std::uint32_t res_select(Nexthop& g, std::uint32_t hash, TimePoint now);
// NHA_RES_GROUP_UNBALANCED_TIME of `g` at `now` (0 when balanced or not resilient).
std::uint64_t res_unbalanced_ticks(const Nexthop& g, TimePoint now);
// Arms (or cancels) the engine's bucket timer for the earliest due move. Context: control
// lock; called at the end of each entry that may have changed a table.
void res_arm(Control& ctl);
// Registers the bucket timer. Context: control lock, at install.
void res_init(Control& ctl, EngineProto& ep);
// The namespace's nexthops at its exit (every device is gone by then).
void nexthop_exit(NetState& st);

// ---- policy rules (rules.cc)
// The default rules of a new namespace (IPv4: 0 local, 32766 main, 32767 default; IPv6:
// 0 local, 32766 main).
void rules_init(NetState& st);
// A rule as reported: its flags with DETACHED and UNRESOLVED (no rule has its goto target).
inet::RuleInfo rule_report(const Rule& r, const std::vector<Rule>& list);
// The rule a goto jumps to: the first with the target priority (nullptr: unresolved).
const Rule* goto_target(const std::vector<Rule>& list, const Rule& r);
// Linux: fib_rule_match with the family's match. `l3mdev_table`: the table of the flow's L3
// master (0: none), which an l3mdev rule needs to match (l3mdev_fib_rule_match).
bool rule_matches(const Rule& r, const inet::Flow& fl, std::uint32_t l3mdev_table = 0);
void rules_subscribe(Control& ctl);

// ---- L3 master devices (l3mdev.cc; Linux: net/l3mdev/l3mdev.c)
// Linux: l3mdev_fib_table — the table of `dev`'s L3 master (its own if it is one), 0 if it
// has none: the table its addresses' routes go in instead of local and main.
std::uint32_t l3mdev_fib_table(const Device& dev);
// Linux: l3mdev_master_ifindex — the L3 master's ifindex (its own for a master), or 0.
int l3mdev_master_ifindex(const Device& dev);
bool is_l3mdev_master(const Device& dev);  // Linux: netif_is_l3_master
void l3mdev_subscribe(Control& ctl);

// ---- address lifetimes (lifetime.cc)
// Linux: rtm_to_ifaddr / inet6_rtm_newaddr — a zero valid lifetime, or a preferred one
// longer than the valid one, is EINVAL ("ipv4: address lifetime invalid").
Result<void> check_lifetime_request(int family, const inet::AddrRequest& req);
// Linux: set_ifa_lifetime, inet6_addr_add/inet6_addr_modify — sets the lifetimes and the
// PERMANENT and DEPRECATED flags they imply, and stamps the update with `now`.
void set_lifetime(AddrInfo& a, std::uint32_t valid, std::uint32_t preferred, TimePoint now);
// `a` as reported at `now`: lifetimes counted down (Linux: inet{,6}_fill_ifaddr).
AddrInfo reported(const AddrInfo& a, TimePoint now);
// Watches `ifa` (on `dev`, in `ns`) if its lifetimes are finite, and ages the addresses at
// once (Linux queues the check with no delay). Context: control lock.
void watch_lifetime(Control& ctl, Namespace& ns, const Device& dev, const Ifa& ifa);
// Registers the lifetime timer. Context: control lock, at install.
void lifetime_init(Control& ctl, EngineProto& ep);
// Removes an expired address (inet.cc: as a user's delete, secondaries and all; inet6.cc).
// Context: control lock, in a RetireScope.
void expire_address4(Control& ctl, Namespace& ns, Device& dev, InDev& in, std::size_t idx);
void expire_address6(Control& ctl, Namespace& ns, Device& dev, Inet6Dev& in6, std::size_t idx);

// ---- inet / inet6 (inet.cc, inet6.cc)
void inet_subscribe(Control& ctl);
void inet6_subscribe(Control& ctl);
// neigh.cc: the neighbour subscriber, and the namespace's proxy entries at its exit.
void neigh_subscribe(Control& ctl);
// Linux: __neigh_update — how long ago an unconfirmed entry of `dev` (null: the table's
// default, neigh_alloc) was confirmed: twice its base_reachable_time (neigh_table.cc).
Duration unconfirmed_age(Engine& e, Device* dev, int family);
void neigh_exit(EngineProto& ep, NetState& st);
Result<AddrInfo> add_address6(Control& ctl, Namespace& ns, const inet::AddrRequest& req);
Result<void> delete_address6(Control& ctl, Namespace& ns, const inet::AddrRequest& req);
// The IPv4 primary address a route via `dev` would use as its source (empty if none).
IpAddr inet_select_addr(EngineProto& ep, const Device& dev);
IpAddr inet6_select_addr(EngineProto& ep, const Device& dev, const IpAddr& dst);
// Applies a device's new IPv6 settings (Linux: addrconf_disable_ipv6 takes the device down or
// configures it again). Context: control lock.
void apply_conf6(Control& ctl, Namespace& ns, Device& dev, Inet6Dev& in6, const Inet6Conf& c);
// Whether IPv6 runs on the device (it has an inet6_dev and it is not disabled).
bool inet6_enabled(EngineProto& ep, const Device& dev);

// Helpers.
bool addr_is_zero(const IpAddr& a);
// a.masked(len), byte by byte (IpAddr::masked clears bit by bit: slow at every lookup).
IpAddr prefix_of(const IpAddr& a, int len);
IpAddr v4_or(const IpAddr& a, std::uint32_t host_bits);
std::uint32_t v4_mask(int len);

}  // namespace ifcore::proto
