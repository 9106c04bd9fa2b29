// The vxlan device's VNI filter: Linux drivers/net/vxlan/vxlan_vnifilter.c semantics for the
// VNIs added and deleted (vxlan_vni_add, vxlan_vni_update_group, vxlan_vni_del,
// vxlan_vni_delete_group), the default forwarding entry each VNI's remote makes, and the
// announcements (vxlan_vnifilter_notify), written for ifcore. ifcore joins no multicast
// group for a VNI's group (it sends no IGMP) and keeps no per-VNI counters (all zero).
//
// Lock order: control lock, then the plug-in lock (PluginGuard) for the devices' VNIs.
#include <net/if.h>  // before any <linux/if*.h>

#include <algorithm>
#include <cerrno>

#include "ifcore/namespace.h"
#include "ifcore/vnifilter.h"
#include "kinds/fdb_install.h"
#include "kinds/vxlan_priv.h"

namespace ifcore::vnifilter {
namespace {

const int kTag = 0;

struct State {
  std::vector<Listener*> listeners;
};

State* state(Control& ctl) {
  return ctl.engine().plugin_data<State>(&kTag);
}

void announce(Control& ctl, Device& dev, bool added, const kinds::vx::VniNode& n) {
  if (State* s = state(ctl))
    for (Listener* l : s->listeners) l->on_vni(dev.ns(), dev.ifindex(), added, {n.vni, n.remote});
}

using kinds::vx::VniNode;
using kinds::vx::VxlanPriv;

bool is_any(const IpAddr& ip) {
  if (ip.empty()) return true;
  auto b = ip.bytes();
  return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

// Linux: vxlan_vni_in_use, for a VNI this device is to take.
bool in_use(Control& ctl, Device& dev, const VxlanPriv& v, std::uint32_t vni) {
  for (Device* d : kinds::vx::net_devices(*v.net)) {
    const VxlanPriv* o = d != &dev ? kinds::vx::vxlan_of(*d) : nullptr;
    if (!o || o->conf.port != v.conf.port) continue;
    if ((o->conf.flags & kinds::vx::kVniFilter) ? !o->has_vni(vni) : o->conf.vni != vni) continue;
    if ((o->conf.flags & kinds::vx::kRcvFlags) != (v.conf.flags & kinds::vx::kRcvFlags) ||
        o->conf.ipv6() != v.conf.ipv6())
      continue;
    return true;
  }
  (void)ctl;
  return false;
}

// Linux: vxlan_vni_update_group — the default entry moves to the VNI's new remote (or the
// device's); the node takes `group`. False when nothing was to be done (no announcement).
Result<bool> update_group(Control& ctl, Device& dev, VxlanPriv& v, VniNode& n,
                          const IpAddr& group) {
  IpAddr newrip = !is_any(group) ? group : !is_any(v.conf.remote) ? v.conf.remote : IpAddr();
  // Linux: only without a new remote is the old one's entry deleted.
  IpAddr oldrip = newrip.empty() && !is_any(n.remote) ? n.remote : IpAddr();
  if (newrip.empty() && oldrip.empty()) return false;
  IFCORE_TRY(kinds::vx::fdb_vni_default(ctl, dev, v, n.vni, oldrip, newrip));
  n.remote = is_any(group) ? IpAddr() : group;
  return true;
}

Result<void> add_one(Control& ctl, Device& dev, VxlanPriv& v, std::uint32_t vni,
                     const IpAddr& group) {
  auto it =
      std::find_if(v.vnis.begin(), v.vnis.end(), [&](const VniNode& n) { return n.vni >= vni; });
  if (it != v.vnis.end() && it->vni == vni) {  // Linux: vxlan_vni_update
    IFCORE_TRY(update_group(ctl, dev, v, *it, group));
    announce(ctl, dev, true, *it);  // Linux: announced whether it changed or not
    return ok();
  }
  if (in_use(ctl, dev, v, vni)) return fail(EEXIST, "VNI in use");
  it = v.vnis.insert(it, VniNode{vni, IpAddr()});
  auto changed = update_group(ctl, dev, v, *it, group);
  if (!changed) return fail(changed.error());
  if (*changed) announce(ctl, dev, true, *it);
  return ok();
}

Result<void> del_one(Control& ctl, Device& dev, VxlanPriv& v, std::uint32_t vni) {
  auto it =
      std::find_if(v.vnis.begin(), v.vnis.end(), [&](const VniNode& n) { return n.vni == vni; });
  if (it == v.vnis.end())
    return fail_log_only(ENOENT, "device \"{}\" has no vni {}", dev.name(), vni);
  // Linux: vxlan_vni_delete_group — the default entry of the VNI's remote or the device's.
  const IpAddr rip = !is_any(it->remote)      ? it->remote
                     : !is_any(v.conf.remote) ? v.conf.remote
                                              : IpAddr();
  if (!rip.empty()) IFCORE_TRY(kinds::vx::fdb_vni_default(ctl, dev, v, vni, rip, IpAddr()));
  VniNode gone = *it;
  v.vnis.erase(it);
  announce(ctl, dev, false, gone);
  return ok();
}

Result<std::pair<Device*, VxlanPriv*>> vxlan_dev(Control& ctl, Namespace& ns, int ifindex) {
  IFCORE_TRY(ctl.check_covers(ns));
  Device* dev = ctl.find(ns, ifindex);
  if (!dev) return fail_log_only(ENODEV, "no device {}", ifindex);
  VxlanPriv* v = kinds::vx::vxlan_of(*dev);
  if (!v) return fail(EINVAL, "The device is not a vxlan device");
  return std::make_pair(dev, v);
}

}  // namespace

Result<void> change(Control& ctl, Namespace& ns, int ifindex, bool add,
                    const std::vector<Range>& ranges) {
  PluginGuard guard(ctl);  // the devices' VNIs and the listeners
  auto d = vxlan_dev(ctl, ns, ifindex);
  if (!d) {
    Error e = d.error();
    if (e.code == EINVAL) e.message = "vxlan: " + e.message;  // Linux: NL_SET_ERR_MSG_MOD here
    return tl::unexpected(e);
  }
  auto [dev, v] = *d;
  if (!(v->conf.flags & kinds::vx::kVniFilter))
    return fail_log_only(EOPNOTSUPP, "device \"{}\" has no vnifilter", dev->name());
  for (const Range& r : ranges) {
    if (!r.start && !r.end) return fail(EINVAL, "vni start nor end found in vni entry");
    if (!r.group.empty() && r.group.is_multicast() && !v->conf.lower)
      return fail(EINVAL, "Local interface required for multicast remote group");
    for (std::uint64_t vni = r.start; vni <= r.end; ++vni)
      IFCORE_TRY(add ? add_one(ctl, *dev, *v, static_cast<std::uint32_t>(vni), r.group)
                     : del_one(ctl, *dev, *v, static_cast<std::uint32_t>(vni)));
  }
  if (ranges.empty()) return fail(EINVAL, "vxlan: No vnis found to process");
  return ok();
}

Result<std::vector<Vni>> list(Control& ctl, Namespace& ns, int ifindex) {
  PluginGuard guard(ctl);  // the devices' VNIs
  auto d = vxlan_dev(ctl, ns, ifindex);
  if (!d) return fail(d.error());
  const VxlanPriv& v = *d->second;
  if (!(v.conf.flags & kinds::vx::kVniFilter))
    return fail_log_only(EINVAL, "device \"{}\" has no vnifilter", d->first->name());
  std::vector<Vni> out;
  for (const auto& n : v.vnis) out.push_back({n.vni, n.remote});
  return out;
}

std::vector<std::pair<int, std::vector<Vni>>> list_all(Control& ctl, Namespace& ns) {
  std::vector<std::pair<int, std::vector<Vni>>> out;
  if (!ctl.check_covers(ns)) return out;
  PluginGuard guard(ctl);  // the devices' VNIs
  for (Device* dev : ns.devices_locked()) {
    const VxlanPriv* v = kinds::vx::vxlan_of(*dev);
    if (!v || !(v->conf.flags & kinds::vx::kVniFilter) || v->vnis.empty()) continue;
    std::vector<Vni> row;
    for (const auto& n : v->vnis) row.push_back({n.vni, n.remote});
    out.emplace_back(dev->ifindex(), std::move(row));
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

}  // namespace ifcore::vnifilter

namespace ifcore::kinds {

namespace vx {

void vni_uninit(Control& ctl, Device& dev, VxlanPriv& v) {
  auto gone = std::move(v.vnis);
  v.vnis.clear();
  for (const auto& n : gone) vnifilter::announce(ctl, dev, false, n);
}

}  // namespace vx

void vnifilter_install(Engine& engine) {
  auto ctl = engine.control();
  engine.set_plugin_data(&vnifilter::kTag, std::make_shared<vnifilter::State>());
}

}  // namespace ifcore::kinds
