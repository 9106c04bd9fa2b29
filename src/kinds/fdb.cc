// Forwarding databases through one door: Linux net/core/rtnetlink.c semantics for
// rtnl_fdb_add, rtnl_fdb_del, rtnl_fdb_get and rtnl_fdb_dump (which device's operations
// answer: the bridge of a port for NTF_MASTER, the device itself for NTF_SELF) and the
// default operations of a device without a database of its own (ndo_dflt_fdb_add/del/dump:
// its unicast and multicast address lists), written for ifcore.
//
// Lock order: control lock only (the bridge's table mutex inside bridge_fdb_ops.cc).
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_arp.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <map>

#include "ifcore/fdb.h"
#include "ifcore/namespace.h"
#include "kinds/bridge_priv.h"
#include "kinds/fdb_install.h"
#include "kinds/vxlan_priv.h"

namespace ifcore::fdb {

namespace {

const int kTag = 0;
constexpr std::uint16_t kVlanVidMask = 0x0fff;  // Linux: VLAN_VID_MASK (a kernel header)

// The addresses users added to devices without a database of their own (Linux: dev->uc,
// and dev->mc beside the protocols' groups).
struct Lists {
  std::vector<HwAddr> uc, mc;
};

struct State {
  std::vector<Listener*> listeners;
  std::map<const Device*, Lists> lists;  // control lock
  // lists.size(), read by ListsWatch without the plug-in lock. A device's lists are made
  // only under a control that covers it: a control that reads 0 knows its devices have none.
  std::atomic<std::size_t> listed{0};
};

State& state(Control& ctl) {
  return *ctl.engine().plugin_data<State>(&kTag);
}

kinds::bridge::Priv* bridge_of(const Device& dev) {
  return kinds::bridge::priv(dev);
}

// Linux: netif_is_bridge_port — the bridge a device is a port of, or nullptr.
Device* bridge_of_port(const Device& dev) {
  Device* m = dev.master();
  return m && bridge_of(*m) ? m : nullptr;
}

// Linux: is_link_local_ether_addr — 01:80:c2:00:00:0X goes to the unicast list.
bool link_local_group(const HwAddr& a) {
  return a.size() == 6 && a[0] == 0x01 && a[1] == 0x80 && a[2] == 0xc2 && a[3] == 0 && a[4] == 0 &&
         (a[5] & 0xf0) == 0;
}

Entry self_entry(const Device& dev, const HwAddr& mac, std::uint16_t state, std::uint16_t vid) {
  Entry e;  // Linux: nlmsg_populate_fdb_fill
  e.ifindex = dev.ifindex();
  e.state = state;
  e.flags = NTF_SELF;
  e.lladdr = mac;
  e.vlan = vid;
  return e;
}

// Linux: ndo_dflt_fdb_add.
Result<void> dflt_add(Control& ctl, Device& dev, const HwAddr& addr, const Request& q,
                      std::uint16_t vid) {
  if (q.state && !(q.state & NUD_PERMANENT))
    return fail_log_only(EINVAL, "default FDB implementation only supports local addresses");
  if (q.flags_ext)
    return fail_log_only(EINVAL, "invalid flags given to default FDB implementation");
  if (vid) return fail_log_only(EINVAL, "vlans aren't supported yet for dev_uc|mc_add()");
  State& s = state(ctl);
  Lists& l = s.lists[&dev];
  s.listed.store(s.lists.size(), std::memory_order_relaxed);
  bool uc = !addr.is_multicast() || link_local_group(addr);
  auto& list = uc ? l.uc : l.mc;
  if (std::find(list.begin(), list.end(), addr) != list.end()) {
    if (q.nlflags & NLM_F_EXCL) return fail_log_only(EEXIST, "address exists");
  } else {
    list.push_back(addr);
  }
  return ok();
}

// Linux: ndo_dflt_fdb_del.
Result<void> dflt_del(Control& ctl, Device& dev, const HwAddr& addr, const Request& q) {
  if (!(q.state & NUD_PERMANENT))
    return fail_log_only(EINVAL, "default FDB implementation only supports local addresses");
  auto& all = state(ctl).lists;
  auto it = all.find(&dev);
  if (it == all.end()) return fail_log_only(ENOENT, "no such address");
  bool uc = !addr.is_multicast() || link_local_group(addr);
  auto& list = uc ? it->second.uc : it->second.mc;
  auto pos = std::find(list.begin(), list.end(), addr);
  if (pos == list.end()) return fail_log_only(ENOENT, "no such address");
  list.erase(pos);
  return ok();
}

// Linux: ndo_dflt_fdb_dump — the unicast list, then the multicast one.
void dflt_dump(Control& ctl, const Device& dev, const GroupsOf& groups, std::vector<Entry>& out) {
  if (dev.hw_type() != ARPHRD_ETHER) return;
  auto& all = state(ctl).lists;
  auto it = all.find(&dev);
  std::vector<HwAddr> mc = groups ? groups(dev) : std::vector<HwAddr>{};
  if (it != all.end()) {
    for (const HwAddr& a : it->second.uc) out.push_back(self_entry(dev, a, NUD_PERMANENT, 0));
    for (const HwAddr& a : it->second.mc)
      if (std::find(mc.begin(), mc.end(), a) == mc.end()) mc.push_back(a);
  }
  for (const HwAddr& a : mc) out.push_back(self_entry(dev, a, NUD_PERMANENT, 0));
}

// Linux: fdb_vid_parse.
Result<std::uint16_t> vid_of(const Request& q) {
  if (!q.vlan) return std::uint16_t{0};
  if (!*q.vlan || *q.vlan >= kVlanVidMask) return fail(EINVAL, "invalid vlan id");
  return *q.vlan;
}

// Linux: the checks rtnl_fdb_add and rtnl_fdb_del share, in their order.
Result<Device*> target(Control& ctl, Namespace& ns, const Request& q, bool adding,
                       std::uint16_t* vid) {
  if (q.ifindex == 0) return fail(EINVAL, "invalid ifindex");
  Device* dev = ctl.find(ns, q.ifindex);
  if (!dev) return fail(ENODEV, "unknown ifindex");
  if (!q.lladdr || q.lladdr->size() != 6) return fail(EINVAL, "invalid address");
  if (adding && dev->hw_type() != ARPHRD_ETHER)
    return fail(EINVAL, "FDB add only supported for Ethernet devices");
  auto v = vid_of(q);
  if (!v) return fail(v.error());
  if (!adding && dev->hw_type() != ARPHRD_ETHER)
    return fail(EINVAL, "FDB delete only supported for Ethernet devices");
  *vid = *v;
  return dev;
}

}  // namespace

namespace {

// Linux: rtnl_fdb_add and rtnl_fdb_del dispatch alike — to the master's database first (a
// bridge port's), then, with NTF_SELF, to the device's own: a bridge's, a vxlan's, or the
// default handling of an Ethernet device's address lists (announced here).
template <class BridgeOp, class VxOp, class DfltOp>
Result<void> dispatch(Control& ctl, Namespace& ns, const Request& q, bool add, BridgeOp bridge_op,
                      VxOp vx_op, DfltOp dflt_op) {
  std::uint16_t vid = 0;
  auto dev = target(ctl, ns, q, add, &vid);
  if (!dev) return fail(dev.error());
  const HwAddr& addr = *q.lladdr;
  std::uint8_t flags = q.flags;
  Result<void> err = fail_log_only(EOPNOTSUPP, "no forwarding database answers");
  if ((!flags || (flags & NTF_MASTER))) {
    if (Device* br = bridge_of_port(**dev)) {
      err = bridge_op(ctl, *br, *bridge_of(*br), *dev, addr, q);
      if (!err) return err;
      flags &= ~NTF_MASTER;
    }
  }
  if (flags & NTF_SELF) {
    if (auto* bp = bridge_of(**dev)) {
      err = bridge_op(ctl, **dev, *bp, nullptr, addr, q);
    } else if (auto* vp = kinds::vx::vxlan_of(**dev)) {
      err = vx_op(ctl, **dev, *vp, addr, q);
    } else {
      err = dflt_op(**dev, addr, vid);
      if (err) notify(ctl, ns, add, self_entry(**dev, addr, q.state, vid));
    }
  }
  return err;
}

}  // namespace

Result<void> add(Control& ctl, Namespace& ns, const Request& q) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the bridges' and VXLANs' tables, their listeners
  return dispatch(ctl, ns, q, true, kinds::bridge::fdb_add, kinds::vx::fdb_add,
                  [&](Device& dev, const HwAddr& addr, std::uint16_t vid) {
                    return dflt_add(ctl, dev, addr, q, vid);
                  });
}

Result<void> del(Control& ctl, Namespace& ns, const Request& q) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the bridges' and VXLANs' tables, their listeners
  return dispatch(
      ctl, ns, q, false, kinds::bridge::fdb_del, kinds::vx::fdb_del,
      [&](Device& dev, const HwAddr& addr, std::uint16_t) { return dflt_del(ctl, dev, addr, q); });
}

Result<void> flush(Control& ctl, Namespace& ns, const Request& q) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the bridges' and VXLANs' tables, their listeners
  // Linux: rtnl_fdb_del with NLM_F_BULK: the address and vlan are the drivers' to read.
  if (q.ifindex == 0) return fail(EINVAL, "invalid ifindex");
  Device* dev = ctl.find(ns, q.ifindex);
  if (!dev) return fail(ENODEV, "unknown ifindex");
  if (dev->hw_type() != ARPHRD_ETHER)
    return fail(EINVAL, "FDB delete only supported for Ethernet devices");
  std::uint8_t flags = q.flags;
  Result<void> err = fail_log_only(EOPNOTSUPP, "no bulk delete answers");
  if (!flags || (flags & NTF_MASTER)) {
    if (Device* br = bridge_of_port(*dev)) {
      err = kinds::bridge::fdb_flush(ctl, *br, *bridge_of(*br), dev, q);
      if (!err) return err;
      flags &= ~NTF_MASTER;
    }
  }
  if (flags & NTF_SELF) {
    if (auto* bp = bridge_of(*dev))
      err = kinds::bridge::fdb_flush(ctl, *dev, *bp, nullptr, q);
    else if (auto* vp = kinds::vx::vxlan_of(*dev))
      err = kinds::vx::fdb_flush(ctl, *dev, *vp, q);
    else
      err = fail_log_only(EOPNOTSUPP, "device \"{}\" has no bulk delete", dev->name());
  }
  return err;
}

Result<Entry> get(Control& ctl, Namespace& ns, const Request& q) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the bridges' and VXLANs' tables, their listeners
  // Linux: rtnl_fdb_get after valid_fdb_get_strict (the rtnetlink face checks the message).
  if (!q.lladdr) return fail(EINVAL, "Missing lookup address for fdb get request");
  auto v = vid_of(q);
  if (!v) return fail(v.error());
  Device* dev = nullptr;
  Device* br = nullptr;
  if (q.ifindex) {
    dev = ctl.find(ns, q.ifindex);
    if (!dev) return fail(ENODEV, "Unknown device ifindex");
  }
  if (q.master && *q.master) {
    if (dev) return fail(EINVAL, "Master and device are mutually exclusive");
    br = ctl.find(ns, static_cast<int>(*q.master));
    if (!br) return fail(EINVAL, "Invalid master ifindex");
  }
  Device* ops = br;
  if (dev) {
    if (!q.flags || (q.flags & NTF_MASTER)) {
      if (!bridge_of_port(*dev)) return fail(EINVAL, "Device is not a bridge port");
      br = ops = dev->master();
    } else {
      if (!(q.flags & NTF_SELF)) return fail(EINVAL, "Missing NTF_SELF");
      ops = dev;
    }
  }
  if (!br && !dev) return fail(ENODEV, "No device specified");
  Device& target = br ? *br : *dev;
  if (auto* bp = ops ? bridge_of(*ops) : nullptr)
    return kinds::bridge::fdb_get(target, *bp, *q.lladdr, *v);
  if (auto* vp = ops ? kinds::vx::vxlan_of(*ops) : nullptr)
    return kinds::vx::fdb_get(target, *vp, *q.lladdr, q);
  return fail(EOPNOTSUPP, "Fdb get operation not supported by device");
}

Result<std::vector<Entry>> dump(Control& ctl, Namespace& ns, int br_idx, int brport,
                                const GroupsOf& groups) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the bridges' and VXLANs' tables, their listeners
  std::vector<Entry> out;
  Device* br_dev = nullptr;
  if (br_idx) {
    br_dev = ctl.find(ns, br_idx);
    if (!br_dev) return fail_log_only(ENODEV, "unknown bridge");
  }
  for (Device* dev : ns.devices_locked()) {
    if (brport && dev->ifindex() != brport) continue;
    Device* port_of = bridge_of_port(*dev);
    Device* cbr = port_of;
    if (br_idx) {
      if (dev != br_dev && !port_of) continue;
      if (br_dev != dev->master() && !bridge_of(*dev)) continue;
      cbr = br_dev;
    }
    if (port_of && cbr)
      if (auto* bp = bridge_of(*cbr)) kinds::bridge::fdb_dump(*cbr, *bp, dev, out);
    if (auto* bp = bridge_of(*dev)) {
      dflt_dump(ctl, *dev, groups, out);  // Linux: br_fdb_dump without a filter device
      kinds::bridge::fdb_dump(*dev, *bp, nullptr, out);
    } else if (auto* vp = kinds::vx::vxlan_of(*dev)) {
      kinds::vx::fdb_dump(*dev, *vp, out);
    } else {
      dflt_dump(ctl, *dev, groups, out);
    }
  }
  return out;
}

void add_listener(Control& ctl, Listener& l) {
  PluginGuard guard(ctl);  // the bridges' and VXLANs' tables, their listeners
  state(ctl).listeners.push_back(&l);
}

void remove_listener(Control& ctl, Listener& l) {
  PluginGuard guard(ctl);  // the bridges' and VXLANs' tables, their listeners
  auto& v = state(ctl).listeners;
  v.erase(std::remove(v.begin(), v.end(), &l), v.end());
}

void notify(Control& ctl, Namespace& ns, bool added, const Entry& e) {
  PluginGuard guard(ctl);  // the bridges' and VXLANs' tables, their listeners
  for (Listener* l : state(ctl).listeners) l->on_fdb(ns, added, e);
}

}  // namespace ifcore::fdb

namespace ifcore::kinds {

namespace {

// Drops a device's address lists as it goes (Linux: they are freed with the device).
class ListsWatch final : public Subscriber {
 public:
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    auto* s = ctl.engine().plugin_data<fdb::State>(&fdb::kTag);
    if (!s || s->listed.load(std::memory_order_relaxed) == 0) return ok();
    PluginGuard guard(ctl);  // the lists are the engine's
    s->lists.erase(&ev.dev);
    s->listed.store(s->lists.size(), std::memory_order_relaxed);
    return ok();
  }
};

}  // namespace

void fdb_install(Engine& engine) {
  static ListsWatch watch;
  auto ctl = engine.control();
  engine.set_plugin_data(&fdb::kTag, std::make_shared<fdb::State>());
  (void)ctl.subscribe(watch, SubscribeOptions{"fdb", 0, false, events_of(NetdevEvent::Unregister),
                                              true});  // the plug-in lock taken when needed
}

}  // namespace ifcore::kinds
