// Vrf: Linux drivers/net/vrf.c semantics (vrf_setup, vrf_dev_init, vrf_validate,
// vrf_newlink, vrf_dellink, vrf_add_slave / vrf_del_slave with cycle_netdev,
// vrf_fillinfo, vrf_fill_slave_info, vrf_device_event), written for ifcore. ifcore sends
// no packets through a vrf: frames sent on it leave it. Its table's l3mdev rule is the
// protocols' part (proto/l3mdev.cc).
#include "kinds/vrf.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "kinds/common.h"

namespace ifcore::kinds {

namespace {

constexpr std::uint32_t kMinMtu = 1280;        // Linux: IPV6_MIN_MTU
constexpr std::uint32_t kMaxMtu = 65535 + 40;  // Linux: IP6_MAX_MTU (65535 + ipv6hdr)

struct VrfPriv final : DevicePriv {
  std::uint32_t table = 0;  // Linux: net_vrf.tb_id; fixed at creation (vrf has no changelink)
};

VrfPriv* vrf_of(const Device& dev) {
  return priv_of<VrfPriv>(dev);
}

constexpr AttrPolicyEntry kPolicy[] = {
    {IFLA_VRF_TABLE, AttrShape::U32},
};
constexpr AttrPolicyEntry kSlavePolicy[] = {
    {IFLA_VRF_PORT_TABLE, AttrShape::U32},
};

// Linux: cycle_netdev — a running port goes down and up again, so that its neighbours are
// flushed and the routes its addresses make are made again in the right table.
void cycle(Control& ctl, Device& port) {
  if (!port.is_up() || port.state() != RegState::Registered) return;
  // (With dev_change_flags: each announced with ifi_change IFF_UP.)
  auto r = ctl.close(port, IFF_UP);
  if (r) r = ctl.open(port, IFF_UP);
  if (!r)
    ctl.engine().log(LogLevel::Warning,
                     fmt::format("failed to cycle device {}; route tables might be wrong: {}",
                                 port.name(), r.error().message));
}

// Linux: do_vrf_del_slave — unlinked, then cycled.
void release(Control& ctl, Device& vrf, Device& port) {
  ctl.unlink_upper(port, vrf);
  cycle(ctl, port);
}

// The devices enslaved to `vrf`, oldest first.
std::vector<Device*> ports_of(const Device& vrf) {
  std::vector<Device*> out;
  for (Device* d : vrf.lowers_locked())
    if (d->master() == &vrf) out.push_back(d);
  return out;
}

// Linux: vrf_device_event — a port that is unregistered (or leaves the namespace) is
// released from its vrf first.
class Watch final : public Subscriber {
 public:
  explicit Watch(const Kind& vrf) : vrf_(vrf) {}

  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    if (ev.event != NetdevEvent::Unregister) return ok();
    Device* master = ev.dev.master();
    if (!master || &master->kind() != &vrf_) return ok();
    PluginGuard guard(ctl);  // the VRF's own state
    release(ctl, *master, ev.dev);
    return ok();
  }

 private:
  const Kind& vrf_;
};

}  // namespace

AttrPolicy Vrf::policy() const {
  return kPolicy;
}
AttrPolicy Vrf::slave_policy() const {
  return kSlavePolicy;
}

Result<void> Vrf::validate(Control&, const LinkRequest& req) const {
  // Linux: vrf_validate.
  if (req.address) {
    if (req.address->size() != 6) return fail(EINVAL, "Invalid hardware address");
    if (!req.address->is_valid_ether()) return fail(EADDRNOTAVAIL, "Invalid hardware address");
  }
  return ok();
}

Result<Device*> Vrf::new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const {
  // Linux: vrf_newlink — the table is required and not 0. Two vrfs may share a table (the
  // per-namespace strict_mode that refuses it with EBUSY is off by default).
  std::optional<std::uint64_t> table;
  if (req.has_info_data) table = attr_num(req.info_data, IFLA_VRF_TABLE);
  if (!table) return fail(EINVAL, "VRF table id is missing");
  if (*table == RT_TABLE_UNSPEC) return fail(EINVAL, "Invalid VRF table id");
  auto priv = std::make_unique<VrfPriv>();
  priv->table = static_cast<std::uint32_t>(*table);
  // Linux: vrf_setup (ether_setup, a random address, no qdisc, mtu IP6_MAX_MTU within
  // [IPV6_MIN_MTU, IP6_MAX_MTU]) and vrf_dev_init (flags exactly IFF_MASTER | IFF_NOARP,
  // operstate UP "to avoid confusion").
  auto dev = ctl.alloc_device(*this, ns);
  dev->set_priv(std::move(priv));
  dev->set_flags_locked(ctl, IFF_MASTER | IFF_NOARP);
  dev->set_mtu_range_locked(ctl, kMinMtu, kMaxMtu);
  dev->set_mtu_locked(ctl, kMaxMtu);
  dev->set_operstate_locked(ctl, IF_OPER_UP);
  IFCORE_TRY(ctl.apply_create_attrs(*dev, req));
  return ctl.register_device(std::move(dev), req.name.value_or("vrf%d"), req.ifindex);
}

Result<void> Vrf::del_link(Control& ctl, Device& dev, UnregisterBatch& batch) const {
  // Linux: vrf_dellink releases every port (each cycled) before the vrf is queued.
  for (Device* port : ports_of(dev)) release(ctl, dev, *port);
  batch.add(dev);
  return ok();
}

AttrList Vrf::fill_info(const Device& dev) const {
  const VrfPriv* p = vrf_of(dev);
  return p ? AttrList{Attr::u32(IFLA_VRF_TABLE, p->table)} : AttrList{};
}

AttrList Vrf::fill_slave_info(const Device& master, const Device&) const {
  const VrfPriv* p = vrf_of(master);
  return p ? AttrList{Attr::u32(IFLA_VRF_PORT_TABLE, p->table)} : AttrList{};
}

Result<void> Vrf::add_port(Control& ctl, Device& master, Device& port) const {
  // Linux: vrf_add_slave / do_vrf_add_slave, in their order.
  if (port.kind().l3mdev_table(port))
    return fail(EINVAL, "Can not enslave an L3 master device to a VRF");
  if (port.master() && port.master()->kind().l3mdev_table(*port.master()))
    return fail_log_only(EINVAL, "device \"{}\" is already enslaved to a vrf", port.name());
  if (port.flags() & IFF_LOOPBACK)
    return fail(EOPNOTSUPP, "Can not enslave loopback device to a VRF");
  IFCORE_TRY(ctl.link_upper(port, master, /*master=*/true));
  cycle(ctl, port);
  return ok();
}

Result<void> Vrf::del_port(Control& ctl, Device& master, Device& port) const {
  if (port.master() != &master)
    return fail(EINVAL, "device \"{}\" is not a port of \"{}\"", port.name(), master.name());
  release(ctl, master, port);
  return ok();
}

void Vrf::uninit(Control& ctl, Device& dev) const {
  // Ports left (a vrf unregistered without del_link) are unlinked; they are not cycled
  // while the batch's notifier pass is over.
  for (Device* port : ports_of(dev)) ctl.unlink_upper(*port, dev);
}

std::uint32_t Vrf::l3mdev_table(const Device& dev) const {
  const VrfPriv* p = vrf_of(dev);
  return p ? p->table : 0;
}

void Vrf::install(Engine& engine) {
  static Vrf kind;
  static Watch watch(kind);
  engine.register_kind(kind);
  auto ctl = engine.control();
  // Concurrent: it reads the device's master, and takes the plug-in lock for a VRF's port.
  (void)ctl.subscribe(watch,
                      SubscribeOptions{"vrf", 0, false, events_of(NetdevEvent::Unregister), true});
}

}  // namespace ifcore::kinds
