// proto/mcast.cc — a device's multicast lists (see mcast.h and ifcore/mcast.h).
//
// Lock order: control lock only.
#include "proto/mcast.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_arp.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "ifcore/mcast.h"
#include "proto/state.h"

namespace ifcore::proto {

namespace {

// Linux: IPV6_ADDR_MC_SCOPE below IPV6_ADDR_SCOPE_LINKLOCAL — node-local groups load
// nothing into the device's filter (igmp6_group_added).
bool below_link_scope(const IpAddr& g) {
  return (g.data()[1] & 0x0f) < 2;
}

// Linux: ndisc_mc_map and arp_mc_map for an Ethernet-like device (ipv6_eth_mc_map,
// ip_eth_mc_map); other types (the loopback, tunnels) map no group.
bool mc_map(const Device& dev, const IpAddr& g, HwAddr* out) {
  const std::uint16_t t = dev.hw_type();
  if (t != ARPHRD_ETHER && t != ARPHRD_IEEE802 && t != ARPHRD_FDDI) return false;
  const std::uint8_t* p = g.data();
  std::array<std::uint8_t, 6> b{};
  if (g.is_v6())
    b = {0x33, 0x33, p[12], p[13], p[14], p[15]};
  else
    b = {0x01, 0x00, 0x5e, static_cast<std::uint8_t>(p[1] & 0x7f), p[2], p[3]};
  *out = HwAddr::ethernet(b);
  return true;
}

// Linux: __hw_addr_add_ex — a global add of an address already added globally changes
// nothing; a new address goes at the list's tail.
void ll_add(std::vector<HwMc>& list, const HwAddr& a, bool global) {
  for (HwMc& e : list)
    if (e.addr == a) {
      if (global && e.global) return;
      e.global = e.global || global;
      ++e.refcount;
      return;
    }
  list.push_back({a, 1, global});
}

// Linux: __hw_addr_del_ex. Errors (as an errno): ENOENT when absent, or not added globally
// for a global delete.
int ll_del(std::vector<HwMc>& list, const HwAddr& a, bool global) {
  auto it = std::find_if(list.begin(), list.end(), [&](const HwMc& e) { return e.addr == a; });
  if (it == list.end() || (global && !it->global)) return ENOENT;
  if (global) it->global = false;
  if (--it->refcount == 0) list.erase(it);
  return 0;
}

// Linux: igmp6_group_added / igmp_group_added (the filter part) and their _dropped.
using HwList = std::vector<HwMc>;

void group_added(HwList& ll, const Device& dev, McGroup& g) {
  if (g.loaded || (g.group.is_v6() && below_link_scope(g.group))) return;
  g.loaded = true;
  HwAddr hw;
  if (mc_map(dev, g.group, &hw)) ll_add(ll, hw, false);
}

void group_dropped(HwList& ll, const Device& dev, McGroup& g) {
  if (!g.loaded) return;
  g.loaded = false;
  HwAddr hw;
  if (mc_map(dev, g.group, &hw)) (void)ll_del(ll, hw, false);
}

void inc(HwList& ll, const Device& dev, std::vector<McGroup>& list, const IpAddr& group,
         TimePoint now) {
  for (McGroup& g : list)
    if (g.group == group) {
      ++g.users;
      return;
    }
  list.insert(list.begin(), McGroup{group, 1, false, now});
  group_added(ll, dev, list.front());
}

void dec(HwList& ll, const Device& dev, std::vector<McGroup>& list, const IpAddr& group) {
  auto it =
      std::find_if(list.begin(), list.end(), [&](const McGroup& g) { return g.group == group; });
  if (it == list.end() || --it->users > 0) return;
  group_dropped(ll, dev, *it);
  list.erase(it);
}

IpAddr v6_group(std::uint8_t scope, std::uint8_t last) {
  std::array<std::uint8_t, 16> b{0xff, scope};
  b[15] = last;
  return IpAddr::v6(std::span<const std::uint8_t, 16>(b));
}

// Linux: addrconf_addr_solict_mult — ff02::1:ffXX:XXXX from the address's last 24 bits.
IpAddr solicited(const IpAddr& a) {
  std::array<std::uint8_t, 16> b{0xff, 0x02};
  b[11] = 1;
  b[12] = 0xff;
  std::copy(a.data() + 13, a.data() + 16, b.begin() + 13);
  return IpAddr::v6(std::span<const std::uint8_t, 16>(b));
}

void init6(HwList& ll, const Device& dev, std::vector<McGroup>& list, bool forwarding,
           TimePoint now) {
  inc(ll, dev, list, v6_group(0x01, 1), now);
  inc(ll, dev, list, v6_group(0x02, 1), now);
  if (forwarding && (dev.flags() & IFF_MULTICAST)) inc(ll, dev, list, v6_group(0x02, 2), now);
}

// Linux: the kinds whose ndo_set_rx_mode copies their list into the lower device's.
Device* synced_lower(const Device& dev) {
  const std::string_view k = dev.kind().name();
  return k == "macvlan" || k == "vlan" ? dev.link() : nullptr;
}

// Linux: __hw_addr_sync_one — the lower's entry gains a synced user, the upper's a user.
void sync_one(HwList& to, HwMc& from) {
  auto it = std::find_if(to.begin(), to.end(), [&](const HwMc& e) { return e.addr == from.addr; });
  if (it != to.end()) {
    ++it->synced;
    ++it->refcount;
  } else {
    to.push_back({from.addr, 1, false, 1, 0});
  }
  ++from.sync_cnt;
  ++from.refcount;
}

// Linux: __hw_addr_unsync_one. Returns whether from[i] is gone.
bool unsync_one(HwList& to, HwList& from, std::size_t i) {
  auto it =
      std::find_if(to.begin(), to.end(), [&](const HwMc& e) { return e.addr == from[i].addr; });
  if (it != to.end() && it->synced) {
    --it->synced;
    if (--it->refcount == 0) to.erase(it);
  }
  --from[i].sync_cnt;
  if (--from[i].refcount > 0) return false;
  from.erase(from.begin() + static_cast<std::ptrdiff_t>(i));
  return true;
}

// Linux: __hw_addr_sync (dev_mc_sync: an entry only the copy holds goes from both, one not
// copied yet is copied) and __hw_addr_unsync (dev_mc_unsync: every copy withdrawn).
void sync_lower(const Control& ctl, Device& dev, bool unsync) {
  Device* lower = synced_lower(dev);
  if (!lower || (!unsync && !dev.is_up())) return;
  EngineProto& ep = engine_proto(ctl.engine());
  DevState* ds = find_dev(ep, dev);
  if (!ds || ds->mc.empty()) return;
  HwList& to = dev_state(ctl, ep, *lower).mc;
  HwList& from = ds->mc;
  for (std::size_t i = 0; i < from.size();) {
    HwMc& e = from[i];
    if (e.sync_cnt && (unsync || e.sync_cnt == e.refcount)) {
      if (!unsync_one(to, from, i)) ++i;
      continue;
    }
    if (!unsync && !e.sync_cnt) sync_one(to, e);
    ++i;
  }
}

// The device's link-layer list and the engine's time (null list: the device has no
// state); at the end of the call, the list's copy in the lower device.
struct Ctx {
  Ctx(const Control& c, Device& d) : ctl(c), dev(d), now(c.engine().time().now()) {
    DevState* ds = find_dev(engine_proto(c.engine()), d);
    ll = ds ? &ds->mc : nullptr;
  }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;
  ~Ctx() {
    if (ll) sync_lower(ctl, dev, false);
  }
  const Control& ctl;
  Device& dev;
  HwList* ll = nullptr;
  TimePoint now{};
};

}  // namespace

void mc_sync(const Control& ctl, Device& dev) {
  sync_lower(ctl, dev, false);
}

void mc6_init(const Control& ctl, Device& dev, Inet6Dev& in6) {
  if (Ctx c(ctl, dev); c.ll) init6(*c.ll, dev, in6.mc_list, in6.conf.forwarding != 0, c.now);
}

void join_solicited(const Control& ctl, Device& dev, Inet6Dev& in6, const IpAddr& addr) {
  if (dev.flags() & (IFF_LOOPBACK | IFF_NOARP)) return;
  if (Ctx c(ctl, dev); c.ll) inc(*c.ll, dev, in6.mc_list, solicited(addr), c.now);
}

void leave_solicited(const Control& ctl, Device& dev, Inet6Dev& in6, const IpAddr& addr) {
  if (dev.flags() & (IFF_LOOPBACK | IFF_NOARP)) return;
  if (Ctx c(ctl, dev); c.ll) dec(*c.ll, dev, in6.mc_list, solicited(addr));
}

void mc6_up(const Control& ctl, Device& dev, Inet6Dev& in6) {
  if (Ctx c(ctl, dev); c.ll)
    for (McGroup& g : in6.mc_list) group_added(*c.ll, dev, g);
}

void mc6_down(const Control& ctl, Device& dev, Inet6Dev& in6) {
  if (Ctx c(ctl, dev); c.ll)
    for (McGroup& g : in6.mc_list) group_dropped(*c.ll, dev, g);
}

void mc6_destroy(const Control& ctl, Device& dev, Inet6Dev& in6) {
  mc6_down(ctl, dev, in6);
  in6.mc_list.clear();
}

void mc6_forwarding(const Control& ctl, Device& dev, Inet6Dev& in6, bool on) {
  if (!(dev.flags() & IFF_MULTICAST)) return;
  Ctx c(ctl, dev);
  if (!c.ll) return;
  for (int scope : {2, 1, 5}) {
    const IpAddr routers = v6_group(static_cast<std::uint8_t>(scope), 2);
    if (on)
      inc(*c.ll, dev, in6.mc_list, routers, c.now);
    else
      dec(*c.ll, dev, in6.mc_list, routers);
  }
}

void mc4_up(const Control& ctl, Device& dev, InDev& in) {
  Ctx c(ctl, dev);
  if (!c.ll) return;
  inc(*c.ll, dev, in.mc_list, IpAddr::v4(0xe0000001), c.now);  // IGMP_ALL_HOSTS
  for (McGroup& g : in.mc_list) group_added(*c.ll, dev, g);
}

void mc4_down(const Control& ctl, Device& dev, InDev& in) {
  sync_lower(ctl, dev, true);  // Linux: macvlan_stop, before NETDEV_DOWN
  Ctx c(ctl, dev);
  if (!c.ll) return;
  for (McGroup& g : in.mc_list) group_dropped(*c.ll, dev, g);
  dec(*c.ll, dev, in.mc_list, IpAddr::v4(0xe0000001));
}

void refresh_anycast(Inet6Dev& in6, bool up, bool forwarding) {
  in6.ac_list.clear();
  if (!up || !forwarding) return;
  for (auto& ifa : in6.addrs)
    if (ifa->info.prefixlen < 127)
      in6.ac_list.push_back(prefix_of(ifa->info.local, ifa->info.prefixlen));
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

namespace {

// Linux: the devices whose ndo_set_rx_mode lets SIOCADDMULTI in (dev_ifsioc).
bool has_rx_filter(const Device& dev) {
  static constexpr std::string_view kinds[] = {"dummy", "veth",  "bridge",
                                               "vlan",  "vxlan", "macvlan"};
  return std::find(std::begin(kinds), std::end(kinds), dev.kind().name()) != std::end(kinds);
}

std::uint32_t flags6(const McGroup& g) {
  static const IpAddr all_nodes = *IpAddr::parse("ff02::1");
  std::uint32_t f = g.loaded ? kMafLoaded : 0;
  // Linux: mca_alloc — no report for the link's all-nodes group nor below link scope.
  if (g.group == all_nodes || below_link_scope(g.group)) f |= kMafNoReport;
  return f;
}

void push_groups(std::vector<McEntry>& out, const Device& dev, int family,
                 const std::vector<McGroup>& list) {
  for (const McGroup& g : list) {
    McEntry e;
    e.family = family;
    e.ifindex = dev.ifindex();
    e.name = dev.name();
    auto b = g.group.bytes();
    e.addr.assign(b.begin(), b.end());
    e.users = static_cast<std::uint32_t>(g.users);
    e.flags = family == AF_INET6 ? flags6(g) : static_cast<std::uint32_t>(list.size());
    e.cstamp = g.cstamp;
    out.push_back(std::move(e));
  }
}

}  // namespace

Result<std::vector<McEntry>> multicast_lists(Control& ctl, Namespace& ns, int family) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  EngineProto& ep = engine_proto(ctl.engine());
  const TimePoint now = ctl.engine().time().now();
  std::vector<McEntry> out;
  for (Device* dev : ns.devices_locked()) {
    const DevState* ds = find_dev(ep, *dev);
    const ConfSnap* idle = ds ? nullptr : idle_snap(ep, *dev);
    if (!ds && !idle) continue;
    // An idle device has the lists its registration made (Linux: ipv6_add_dev).
    HwList fresh_ll;
    std::vector<McGroup> fresh6;
    if (idle) init6(fresh_ll, *dev, fresh6, idle->c6.forwarding != 0, now);
    const HwList& ll = ds ? ds->mc : fresh_ll;
    if (family == AF_UNSPEC || family == AF_PACKET)
      for (const HwMc& m : ll) {
        McEntry e;
        e.family = AF_PACKET;
        e.ifindex = dev->ifindex();
        e.name = dev->name();
        auto b = m.addr.bytes();
        e.addr.assign(b.begin(), b.end());
        e.users = static_cast<std::uint32_t>(m.refcount);
        e.flags = m.global ? 1 : 0;
        out.push_back(std::move(e));
      }
    if ((family == AF_UNSPEC || family == AF_INET) && ds && ds->in)
      push_groups(out, *dev, AF_INET, ds->in->mc_list);
    if (family == AF_UNSPEC || family == AF_INET6) {
      if (ds && ds->in6) push_groups(out, *dev, AF_INET6, ds->in6->mc_list);
      if (idle) push_groups(out, *dev, AF_INET6, fresh6);
    }
  }
  return out;
}

Result<void> change_multicast(Control& ctl, Namespace& ns, const std::string& name,
                              std::span<const std::uint8_t> hw, int hw_family, bool add) {
  IFCORE_TRY(ctl.check_covers(ns));
  Device* dev = ctl.find(ns, name);  // an alternative name too (Linux: __dev_get_by_name)
  if (!dev) return fail(ENODEV, "device \"{}\" not found", name);
  if (!has_rx_filter(*dev) || hw_family != AF_UNSPEC)
    return fail(EINVAL, "device \"{}\": no multicast filter to change", name);
  const std::size_t len = dev->address().size();
  if (hw.size() < len) return fail(EINVAL, "address shorter than the device's ({})", len);
  PluginGuard guard(ctl);
  EngineProto& ep = engine_proto(ctl.engine());
  DevState& ds = dev_state(ctl, ep, *dev);
  HwAddr a(hw.first(len));
  if (add) {
    ll_add(ds.mc, a, true);
  } else if (ll_del(ds.mc, a, true)) {
    return fail(ENOENT, "device \"{}\": {} not added", name, a.to_string());
  }
  mc_sync(ctl, *dev);  // Linux: dev_mc_add_global's __dev_set_rx_mode
  return ok();
}

}  // namespace ifcore::inet
