// proto/neigh.cc — the neighbour tables (Linux: net/core/neighbour.c with the ARP and ND
// constructors of net/ipv4/arp.c and net/ipv6/ndisc.c): entries that hold their device,
// proxy entries, the updates RTM_NEWNEIGH asks for, and the flushes of a device that goes
// down, loses its carrier, changes its address or is unregistered.
//
// ifcore sends no ARP or ND frames and runs no neighbour timers: a state stays as it was
// set, except that a DELAY entry turns PROBE at once with one probe counted, as Linux's
// timer does with a zero delay (neigh_timer_handler), so that what a dump shows matches.
//
// Lock order: everything here runs under the control lock.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_arp.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <array>
#include <type_traits>

#include "proto/install.h"
#include "proto/multipath.h"
#include "proto/state.h"

namespace ifcore::proto {

namespace {

static_assert(std::is_trivially_destructible_v<Neigh>);

using inet::NeighInfo;
using inet::NeighRequest;
using inet::ProtoEvent;

constexpr std::uint16_t kNudValid =
    NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY;
constexpr std::uint16_t kNudConnected = NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE;
NeighTable& table_of(NetState& st, int family) {
  return family == AF_INET6 ? st.neigh6 : st.neigh4;
}

void notify_neigh(EngineProto& ep, Namespace& ns, ProtoEvent ev, const NeighInfo& n) {
  for (auto* l : ep.listeners) l->on_neigh(ns, ev, n);
}

std::uint32_t ticks_since(TimePoint now, TimePoint then) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(now - then).count();
  return d <= 0 ? 0u : static_cast<std::uint32_t>(d / 10);  // clock_t at USER_HZ 100
}

NeighInfo report(const Neigh& n, TimePoint now) {
  NeighInfo i;
  i.family = n.info.family;
  i.ifindex = n.info.ifindex;
  i.dst = n.info.dst;
  i.state = n.info.state;
  i.flags = n.info.flags;
  i.type = n.info.type;
  i.protocol = n.info.protocol;
  i.probes = n.info.probes;
  if (i.state & kNudValid)
    i.lladdr = n.lladdr;
  else
    i.lladdr.reset();
  i.refcnt = (i.state & (NUD_REACHABLE | NUD_DELAY | NUD_PROBE)) ? 1 : 0;
  i.confirmed = ticks_since(now, n.confirmed);
  i.used = ticks_since(now, n.used);
  i.updated = ticks_since(now, n.updated);
  return i;
}

NeighInfo report(const PNeigh& p) {
  NeighInfo i = p.info;
  i.flags |= NTF_PROXY;
  i.type = RTN_UNICAST;
  return i;
}

// Linux: inet_addr_type_dev_table — the type of `dst` in the local table; a namespace
// that never had a local table answers RTN_BROADCAST.
std::uint8_t ipv4_type(NetState& st, const IpAddr& dst) {
  std::uint32_t h = dst.v4_host();
  if (h == 0 || h == 0xffffffffu) return RTN_BROADCAST;
  if (dst.is_multicast()) return RTN_MULTICAST;
  auto t = st.tables4.find(RT_TABLE_LOCAL);
  if (t == st.tables4.end()) return RTN_BROADCAST;
  std::uint8_t type = RTN_UNICAST;
  int best = -1;
  for (const auto& [key, routes] : t->second) {
    if (routes.empty() || key.len <= best || !dst.in_prefix(key.dst, key.len)) continue;
    best = key.len;
    type = routes.front().info.type;
  }
  return type;
}

// Linux: arp_constructor / ndisc_constructor — the entry's type and, for destinations that
// need no resolution, its NUD_NOARP state and link-layer address.
void construct(NetState& st, Device& dev, Neigh& n) {
  NeighFields& i = n.info;
  const bool v6 = i.family == AF_INET6;
  const std::uint32_t fl = dev.flags();
  auto mcast_map = [&]() {
    auto b = i.dst.bytes();
    if (v6) return HwAddr::ethernet({0x33, 0x33, b[12], b[13], b[14], b[15]});
    return HwAddr::ethernet({0x01, 0x00, 0x5e, static_cast<std::uint8_t>(b[1] & 0x7f), b[2], b[3]});
  };
  i.type =
      v6 ? std::uint8_t(i.dst.is_multicast() ? RTN_MULTICAST : RTN_UNICAST) : ipv4_type(st, i.dst);
  // Devices without a link-layer header (ipip, gre: ifcore's tunnels) resolve nothing.
  const bool headers = dev.hw_type() == ARPHRD_ETHER || dev.hw_type() == ARPHRD_LOOPBACK;
  if (!headers) {
    i.state = NUD_NOARP;
    n.lladdr = dev.address();
  } else if (i.type == RTN_MULTICAST) {
    i.state = NUD_NOARP;
    n.lladdr = mcast_map();
  } else if (fl & (IFF_NOARP | IFF_LOOPBACK)) {
    i.state = NUD_NOARP;
    n.lladdr = dev.address();
    if (v6 && (fl & IFF_LOOPBACK)) i.type = RTN_LOCAL;
  } else if ((!v6 && i.type == RTN_BROADCAST) || (fl & IFF_POINTOPOINT)) {
    i.state = NUD_NOARP;
    n.lladdr = dev.broadcast();
  }
}

// The entry of `family` and `key` on the device (Linux: neigh_lookup), newest first.
Neigh* find_entry(DevState* ds, int family, const IpAddr& key) {
  if (!ds) return nullptr;
  auto& v = ds->neighs;
  for (auto it = v.rbegin(); it != v.rend(); ++it)
    if (it->info.family == family && it->info.dst == key) return &*it;
  return nullptr;
}

}  // namespace

// Devices' entry buffers on their way to RCU (flush_dev), gathered until the next
// hand-over (EngineProto::neigh_retiring).
struct RetiredNeighs : RcuHook {
  std::vector<std::vector<Neigh>> bufs;
};

namespace {

void retire_buffer(EngineProto& ep, std::vector<Neigh>& v) {
  if (!ep.neigh_retiring) {
    ep.neigh_retiring = new RetiredNeighs;
    retire_hooked(ep, ep.neigh_retiring);
  }
  ep.neigh_retiring->bufs.emplace_back().swap(v);
}

// Removes one entry; the device's last takes its reference with it.
void erase_entry(DevState& ds, const Neigh* n) {
  auto& v = ds.neighs;
  v.erase(v.begin() + (n - v.data()));
  if (v.empty()) {
    std::vector<Neigh>().swap(v);
    ds.neigh_ref.reset();
  }
}

// Linux: neigh_flush_dev — every entry of `dev` (not the permanent ones when `skip_perm`),
// each announced with RTM_DELNEIGH as it was; and with `proxies`, its proxy entries
// (pneigh_ifdown: no announcement).
void flush_dev(Control& ctl, Namespace& ns, Device& dev, bool skip_perm, bool proxies) {
  EngineProto& ep = engine_proto(ctl.engine());
  DevState* ds = find_dev(ep, dev);
  if (ds && !ds->neighs.empty()) {
    auto& v = ds->neighs;
    auto goes = [&](const Neigh& n) { return !(skip_perm && (n.info.state & NUD_PERMANENT)); };
    if (!ep.listeners.empty()) {
      // Linux: arp_tbl's flush, then nd_tbl's, each through the device's list, newest first.
      TimePoint now = ctl.engine().time().now();
      for (int family : {AF_INET, AF_INET6})
        for (auto it = v.rbegin(); it != v.rend(); ++it)
          if (it->info.family == family && goes(*it))
            notify_neigh(ep, ns, ProtoEvent::Del, report(*it, now));
    }
    if (skip_perm) std::erase_if(v, goes);
    if (!skip_perm || v.empty()) {
      // Every entry goes: the buffer is freed whole, after a grace period, on the RCU
      // thread (Linux frees its entries with call_rcu too), so that an unregister batch
      // frees no buffer per device in its pass.
      retire_buffer(ep, v);
      ds->neigh_ref.reset();
    }
  }
  if (!proxies) return;
  NetState& st = net_state(ns);
  for (NeighTable* t : {&st.neigh4, &st.neigh6})
    for (auto it = t->proxies.begin(); it != t->proxies.end();) {
      if ((*it)->info.ifindex == dev.ifindex()) {
        retire_hooked(ep, it->release());
        it = t->proxies.erase(it);
      } else {
        ++it;
      }
    }
}

// Whether flush_dev(..., proxies) would find nothing of `dev`, read without the plug-in
// lock: no entry in the device's own state (find_dev_locally), and with `proxies` none in
// its namespace's proxy lists (which its namespace's lock guards).
bool nothing_to_flush(EngineProto& ep, Namespace& ns, const Device& dev, bool proxies) {
  auto local = find_dev_locally(ep, dev);
  if (!local || (*local && !(*local)->neighs.empty())) return false;
  if (!proxies) return true;
  const NetState& st = net_state(ns);
  return st.neigh4.proxies.empty() && st.neigh6.proxies.empty();
}

Result<Device*> request_device(Control& ctl, Namespace& ns, const NeighRequest& req) {
  if (!req.ifindex) return static_cast<Device*>(nullptr);
  Device* dev = ctl.find(ns, req.ifindex);
  if (!dev) return fail_log_only(ENODEV, "no device of ifindex {}", req.ifindex);
  return dev;
}

Result<void> check_family(int family) {
  if (family != AF_INET && family != AF_INET6)
    return fail_log_only(EAFNOSUPPORT, "no neighbour table for family {}", family);
  return ok();
}

Result<void> check_dst(const NeighRequest& req) {
  if (!req.dst || req.dst->family() != req.family) return fail(EINVAL, "Invalid network address");
  return ok();
}

// What neigh_add and neigh_delete check first, in their order: a destination, the device
// (and, adding, an address as long as the device's), the family, the destination's size.
Result<Device*> checked_request(Control& ctl, Namespace& ns, const NeighRequest& req, bool adding) {
  if (!req.dst) return fail(EINVAL, "Network address not specified");
  auto dev = request_device(ctl, ns, req);
  if (!dev) return fail(dev.error());
  if (adding && *dev && req.lladdr && req.lladdr->size() < (*dev)->address().size())
    return fail(EINVAL, "Invalid link address");
  IFCORE_TRY(check_family(req.family));
  IFCORE_TRY(check_dst(req));
  return *dev;
}

// Linux: arp_tbl keys loopback and point-to-point devices' entries by 0.0.0.0.
IpAddr entry_key(const Device& dev, int family, const IpAddr& dst) {
  if (family == AF_INET && (dev.flags() & (IFF_LOOPBACK | IFF_POINTOPOINT))) return IpAddr::v4(0);
  return dst;
}

// Linux: pneigh_hash — the key's last 4 bytes read as a little-endian word (the hosts it
// runs on here), folded to 4 bits.
unsigned pneigh_bucket(const IpAddr& dst) {
  auto b = dst.bytes();
  if (b.size() < 4) return 0;
  const std::uint8_t* k = b.data() + b.size() - 4;
  std::uint32_t h = k[0] | (k[1] << 8) | (k[2] << 16) | (std::uint32_t(k[3]) << 24);
  h ^= h >> 16;
  h ^= h >> 8;
  h ^= h >> 4;
  return h & 0xF;
}

PNeigh* find_proxy(NeighTable& t, const IpAddr& dst, int ifindex, bool exact) {
  for (auto& p : t.proxies)
    if (p->info.dst == dst && (p->info.ifindex == ifindex || (!exact && p->info.ifindex == 0)))
      return p.get();
  return nullptr;
}

// Linux: __neigh_update with NEIGH_UPDATE_F_ADMIN. Returns whether RTM_NEWNEIGH is due.
Result<bool> update(Neigh& n, Device& dev, const std::optional<HwAddr>& lladdr, std::uint16_t want,
                    bool override, bool override_isrouter, bool isrouter, bool ext_learned,
                    TimePoint now) {
  NeighFields& i = n.info;
  bool notify = false;
  std::uint16_t old = i.state;
  // Linux: neigh_update_flags — an administrative update sets NTF_EXT_LEARNED as asked:
  // without `extern_learn` it clears it.
  if (ext_learned != bool(i.flags & NTF_EXT_LEARNED)) {
    i.flags ^= NTF_EXT_LEARNED;
    notify = true;
  }
  auto set_router = [&]() {
    if (!override_isrouter) return;
    std::uint8_t f = isrouter ? (i.flags | NTF_ROUTER) : (i.flags & ~NTF_ROUTER);
    if (f != i.flags) {
      i.flags = f;
      notify = true;
    }
  };
  if (!(want & kNudValid)) {
    i.state = want;
    i.probes = 0;
    // (Linux: its own verdict, a flag change above or not.)
    notify = (old & kNudValid) || ((old & (NUD_INCOMPLETE | NUD_PROBE)) && (want & NUD_FAILED));
    if (want != old) n.updated = now;
    set_router();
    return notify;
  }
  HwAddr ha = n.lladdr;
  if (dev.address().empty()) {
    // The device needs no address: the entry keeps what it has.
  } else if (lladdr) {
    ha = HwAddr(lladdr->bytes().first(dev.address().size()));
  } else if (!(old & kNudValid)) {
    return fail(EINVAL, "No link layer address given");
  }
  if (want & kNudConnected) n.confirmed = now;
  if ((old & kNudValid) && ha != n.lladdr && !override) {
    set_router();
    return notify;
  }
  if (want != old || ha != n.lladdr) n.updated = now;
  if (want != old) {
    i.state = want;
    if (want & NUD_PROBE) i.probes = 0;
    notify = true;
  }
  if (ha != n.lladdr) {
    n.lladdr = ha;
    if (!(want & kNudConnected)) n.confirmed = now - unconfirmed_age(dev.engine(), &dev, i.family);
    notify = true;
  }
  set_router();
  return notify;
}

}  // namespace

// The notifier side: Linux's arp_netdev_event and ndisc_netdev_event, and neigh_ifdown
// from the protocols' NETDEV_DOWN / NETDEV_UNREGISTER.
class NeighSubscriber final : public Subscriber {
 public:
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    EngineProto& ep = engine_proto(ctl.engine());
    Namespace& ns = ev.dev.ns();
    // Concurrent: a device with nothing to flush takes no engine-wide lock.
    const bool proxies = ev.event == NetdevEvent::Down || ev.event == NetdevEvent::Unregister;
    if (nothing_to_flush(ep, ns, ev.dev, proxies)) return ok();
    PluginGuard guard(ctl);
    RetireScope scope(ep, ev.batched);
    switch (ev.event) {
      case NetdevEvent::Down:
      case NetdevEvent::Unregister:
        flush_dev(ctl, ns, ev.dev, false, true);
        break;
      case NetdevEvent::ChangeAddr:
        flush_dev(ctl, ns, ev.dev, false, false);
        break;
      case NetdevEvent::Change:
        if (ev.flags_changed & IFF_NOARP) flush_dev(ctl, ns, ev.dev, false, false);
        if (!ev.dev.carrier()) flush_dev(ctl, ns, ev.dev, true, false);
        break;
      default:
        break;
    }
    return ok();
  }
};

bool neigh_usable(EngineProto& ep, const Device& dev, const IpAddr& gateway) {
  if (gateway.empty()) return true;
  const int family = gateway.family();
  const Neigh* n = find_entry(find_dev(ep, dev), family, entry_key(dev, family, gateway));
  return !n || (n->info.state & kNudValid);
}

void neigh_subscribe(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  auto sub = std::make_unique<NeighSubscriber>();
  ctl.subscribe(*sub, SubscribeOptions{"neigh", 0, true,
                                       events_of(NetdevEvent::Down, NetdevEvent::Change,
                                                 NetdevEvent::ChangeAddr, NetdevEvent::Unregister),
                                       true});  // the plug-in lock taken above when needed
  ep.subscribers.push_back(std::move(sub));
}

void neigh_exit(EngineProto& ep, NetState& st) {
  for (NeighTable* t : {&st.neigh4, &st.neigh6}) {
    for (auto& p : t->proxies) retire_hooked(ep, p.release());
    t->proxies.clear();
  }
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

Result<NeighInfo> add_neigh(Control& ctl, Namespace& ns, const NeighRequest& req) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  RetireScope scope(ep);
  auto devr = checked_request(ctl, ns, req, true);
  if (!devr) return fail(devr.error());
  Device* dev = *devr;
  NetState& st = net_state(ns);
  NeighTable& t = table_of(st, req.family);
  TimePoint now = ctl.engine().time().now();
  if (req.flags & NTF_PROXY) {
    // Linux: pneigh_create — found or made; no announcement. ND's constructor joins the
    // address's solicited-node group on the device, so an IPv6 proxy needs one: without,
    // pneigh_create fails and neigh_add answers ENOBUFS alone.
    if (req.family == AF_INET6 && !dev)
      return fail_log_only(ENOBUFS, "an IPv6 proxy entry needs a device");
    PNeigh* p = find_proxy(t, *req.dst, dev ? dev->ifindex() : 0, true);
    if (!p) {
      auto made = std::make_unique<PNeigh>();
      if (dev) made->ref = Ref(*dev, "pneigh");
      made->info.family = req.family;
      made->info.ifindex = dev ? dev->ifindex() : 0;
      made->info.dst = *req.dst;
      p = made.get();
      t.proxies.push_front(std::move(made));
    }
    p->info.flags = req.flags & ~NTF_PROXY;
    if (req.protocol && *req.protocol) p->info.protocol = *req.protocol;
    return report(*p);
  }
  if (!dev) return fail(EINVAL, "Device not specified");
  DevState* has = find_or_make_dev(ctl, ep, *dev);
  if (req.family == AF_INET6 && (!has || !has->in6 || has->in6->conf.disable_ipv6))
    return fail(EINVAL, "IPv6 is disabled on this device");
  if (req.family == AF_INET && (!has || !has->in))
    return fail_log_only(EINVAL, "device \"{}\" has no IPv4", dev->name());
  IpAddr key = entry_key(*dev, req.family, *req.dst);
  DevState& ds = *has;
  Neigh* n = find_entry(&ds, req.family, key);
  bool made = false;
  bool override = true, override_isrouter = true;
  if (!n) {
    if (!req.create)
      return fail_log_only(ENOENT, "no neighbour {} on \"{}\"", key.to_string(), dev->name());
    Neigh entry;
    entry.info.family = static_cast<std::uint8_t>(req.family);
    entry.info.ifindex = dev->ifindex();
    entry.info.dst = key;
    entry.updated = entry.used = now;
    // Linux: neigh_alloc — twice the table's default base_reachable_time ago.
    entry.confirmed = now - unconfirmed_age(ctl.engine(), nullptr, req.family);
    construct(st, *dev, entry);
    entry.info.flags = req.flags & NTF_EXT_LEARNED;
    if (ds.neighs.empty()) ds.neigh_ref = Ref(*dev, "neigh");
    ds.neighs.push_back(std::move(entry));
    n = &ds.neighs.back();
    made = true;
  } else {
    if (req.excl)
      return fail_log_only(EEXIST, "neighbour {} on \"{}\" exists", key.to_string(), dev->name());
    if (!req.replace) override = override_isrouter = false;
  }
  NeighFields before = n->info;
  std::uint8_t protocol_before = n->info.protocol;
  if (req.protocol && *req.protocol) n->info.protocol = *req.protocol;
  auto notify = update(*n, *dev, req.lladdr, req.state, override, override_isrouter,
                       req.flags & NTF_ROUTER, req.flags & NTF_EXT_LEARNED, now);
  if (!notify) {
    // Linux leaves a new entry it could not complete (NUD_NONE); ifcore takes it back, so
    // that a failed request changes nothing.
    if (made) {
      erase_entry(ds, n);
    } else {
      n->info = before;
      n->info.protocol = protocol_before;
    }
    return fail(notify.error());
  }
  // Linux: neigh_timer_handler with a zero delay takes a DELAY entry that was not
  // confirmed lately to PROBE and sends the first probe; a PROBE entry sends it too.
  bool delay = n->info.state == NUD_DELAY;
  // (A new entry left incomplete or failed is not announced: __neigh_update notifies an
  // invalid state only when the old one was valid.)
  if (*notify) notify_neigh(ep, ns, ProtoEvent::New, report(*n, now));
  if (delay) {
    n->info.state = NUD_PROBE;
    n->updated = now;
    notify_neigh(ep, ns, ProtoEvent::New, report(*n, now));
  }
  if (n->info.state == NUD_PROBE) n->info.probes = 1;
  return report(*n, now);
}

Result<void> delete_neigh(Control& ctl, Namespace& ns, const NeighRequest& req) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  RetireScope scope(ep);
  auto devr = checked_request(ctl, ns, req, false);
  if (!devr) return fail(devr.error());
  Device* dev = *devr;
  NetState& st = net_state(ns);
  NeighTable& t = table_of(st, req.family);
  if (req.flags & NTF_PROXY) {
    int ifindex = dev ? dev->ifindex() : 0;
    for (auto it = t.proxies.begin(); it != t.proxies.end(); ++it)
      if ((*it)->info.dst == *req.dst && (*it)->info.ifindex == ifindex) {
        retire_hooked(ep, it->release());
        t.proxies.erase(it);
        return ok();
      }
    return fail_log_only(ENOENT, "no proxy entry {}", req.dst->to_string());
  }
  if (!dev) return fail_log_only(EINVAL, "a neighbour delete names no device");
  IpAddr key = entry_key(*dev, req.family, *req.dst);
  DevState* ds = find_dev(ep, *dev);
  Neigh* n = find_entry(ds, req.family, key);
  if (!n) return fail_log_only(ENOENT, "no neighbour {} on \"{}\"", key.to_string(), dev->name());
  TimePoint now = ctl.engine().time().now();
  // Linux: neigh_delete turns the entry NUD_FAILED (announced if it was valid or being
  // resolved), then removes it (RTM_DELNEIGH).
  auto notify = update(*n, *dev, std::nullopt, NUD_FAILED, true, false, false, false, now);
  if (notify && *notify) notify_neigh(ep, ns, ProtoEvent::New, report(*n, now));
  NeighInfo last = report(*n, now);
  erase_entry(*ds, n);
  notify_neigh(ep, ns, ProtoEvent::Del, last);
  return ok();
}

std::vector<NeighInfo> list_neighs(Control& ctl, Namespace& ns, int family, bool proxy,
                                   int ifindex) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  std::vector<NeighInfo> out;
  NetState& st = net_state(ns);
  TimePoint now = ctl.engine().time().now();
  std::vector<Device*> devs;
  if (!proxy) {
    if (ifindex) {
      if (Device* d = ctl.find(ns, ifindex)) devs.push_back(d);
    } else {
      devs = ns.devices_locked();
    }
  }
  for (int f : {AF_INET, AF_INET6}) {
    if (family && family != f) continue;
    if (proxy) {
      // Linux: pneigh_dump_table — its 16 buckets in order, each newest first (the list is).
      std::vector<std::pair<unsigned, NeighInfo>> found;
      for (const auto& p : table_of(st, f).proxies)
        if (!ifindex || p->info.ifindex == ifindex)
          found.emplace_back(pneigh_bucket(p->info.dst), report(*p));
      std::stable_sort(found.begin(), found.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& x : found) out.push_back(std::move(x.second));
      continue;
    }
    // By device (ifindex order), each device's newest first. (Linux's order is its hash
    // table's, seeded at random.)
    for (Device* d : devs) {
      DevState* ds = find_dev(ep, *d);
      if (!ds) continue;
      const auto& v = ds->neighs;
      for (auto it = v.rbegin(); it != v.rend(); ++it)
        if (it->info.family == f) out.push_back(report(*it, now));
    }
  }
  return out;
}

Result<NeighInfo> get_neigh(Control& ctl, Namespace& ns, const NeighRequest& req) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  if (!req.dst) return fail(EINVAL, "Network address not specified");
  auto devr = request_device(ctl, ns, req);
  if (!devr) return fail(ENODEV, "Unknown device ifindex");
  Device* dev = *devr;
  IFCORE_TRY(check_family(req.family));
  IFCORE_TRY(check_dst(req));
  NetState& st = net_state(ns);
  NeighTable& t = table_of(st, req.family);
  if (req.flags & NTF_PROXY) {
    PNeigh* p = find_proxy(t, *req.dst, dev ? dev->ifindex() : 0, false);
    if (!p) return fail(ENOENT, "Proxy neighbour entry not found");
    return report(*p);
  }
  if (!dev) return fail(EINVAL, "No device specified");
  IpAddr key = entry_key(*dev, req.family, *req.dst);
  Neigh* n = find_entry(find_dev(engine_proto(ctl.engine()), *dev), req.family, key);
  if (!n) return fail(ENOENT, "Neighbour entry not found");
  // Linux: neigh_get holds the entry while it answers: one more user in the reply.
  NeighInfo i = report(*n, ctl.engine().time().now());
  ++i.refcnt;
  return i;
}

std::size_t neigh_count(Control& ctl) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  std::size_t n = 0;
  for (DevState* ds = ep.dev_states; ds; ds = ds->next) n += ds->neighs.size();
  return n;
}

}  // namespace ifcore::inet
