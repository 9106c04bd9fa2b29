// Bridge: Linux net/bridge semantics for ports joining and leaving (br_if.c br_add_if,
// br_del_if, br_mtu_auto_adjust; br_stp_if.c br_stp_recalculate_bridge_id; br.c
// br_device_event), written for ifcore. Attributes are in bridge_attrs.cc.
#include "kinds/bridge.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/if_arp.h>

#include <algorithm>
#include <cerrno>

#include "kinds/bridge_priv.h"
#include "kinds/common.h"
#include "kinds/macvlan.h"

namespace ifcore::kinds {

using bridge::Port;
using bridge::Priv;

namespace {

// Linux: netif_running(dev) && netif_oper_up(dev), what enables a port (br_stp_enable_bridge,
// br_device_event's NETDEV_UP, br_port_carrier_check): the operstate the link watch last set.
bool port_can_forward(const Device& d) {
  return d.is_up() && (d.operstate() == IF_OPER_UP || d.operstate() == IF_OPER_UNKNOWN);
}

bool contains(const std::vector<Port*>& v, const Port* e) {
  return std::find(v.begin(), v.end(), e) != v.end();
}

// Linux: br_port_state_selection without STP timers: an enabled port (bridge up, port up
// and operationally up) forwards; with STP on it stays listening (ifcore runs no STP
// timers). The bridge has carrier while a port forwards, once it has had a port
// (Priv::had_port). The ports it enables are announced as br_stp_enable_port announces
// them, a blocking port that may forward as br_make_forwarding does, newest first (the
// order of Linux's port_list, list_add_rcu); then `also` is announced once more, if it
// was not enabled (br_device_event's announcement of a port event that enabled nothing)
// or `always` (br_add_if's); all before the bridge's carrier follows (Linux's link watch
// announces that later). Returns the ports it enabled.
std::vector<Port*> update_states(Control& ctl, Device& br, Port* also = nullptr,
                                 bool always = false) {
  std::vector<Port*> enabled_now, disabled_now;
  Priv* p = bridge::priv(br);
  if (!p || br.state() != RegState::Registered) return enabled_now;
  bool any = false;
  for (auto it = p->ports.rbegin(); it != p->ports.rend(); ++it) {
    auto& port = *it;
    Device& d = *port->dev;
    bool enabled = br.is_up() && port_can_forward(d);
    std::uint8_t next = !enabled         ? BR_STATE_DISABLED
                        : p->s.stp_state ? BR_STATE_LISTENING
                                         : BR_STATE_FORWARDING;
    bool was_enabled = port->s.state != BR_STATE_DISABLED;
    if (!enabled || !was_enabled || p->s.stp_state) port->s.state = next;
    if (enabled && was_enabled && port->s.state == BR_STATE_BLOCKING) {
      port->s.state = next;  // Linux: br_make_forwarding (a user set it blocking)
      if (!p->s.stp_state) bridge::stop_forward_delay(ctl, *port);  // forwarding at once
      bridge::announce_port(ctl, br, *port);
      bridge::arm_forward_delay(ctl, br, *p, *port);
    }
    if (was_enabled && !enabled) {
      bridge::mdb_port_disabled(ctl, br, *p, d);
      disabled_now.push_back(port.get());
    }
    if (!was_enabled && enabled) {
      bridge::mdb_port_enabled(ctl, br, *p, d);
      bridge::announce_enabled(ctl, br, *p, *port);
      enabled_now.push_back(port.get());
    }
    any = any || port->s.state == BR_STATE_FORWARDING;
  }
  if (also && (always || !contains(enabled_now, also))) bridge::announce_port(ctl, br, *also);
  // Linux: br_stp_disable_port stops the forward delay timer after announcing the port.
  for (Port* e : disabled_now) bridge::stop_forward_delay(ctl, *e);
  bridge::publish_ports(ctl, br, *p);
  if (p->had_port) ctl.set_carrier(br, any && br.is_up());
  return enabled_now;
}

// Linux: br_mtu_auto_adjust: the smallest port mtu (1500 without ports), unless the
// user set the bridge's mtu.
void adjust_mtu(Control& ctl, Device& br) {
  Priv* p = bridge::priv(br);
  if (!p || p->mtu_set_by_user || br.state() != RegState::Registered) return;
  std::uint32_t mtu = 0;
  for (auto& port : p->ports) mtu = mtu ? std::min(mtu, port->dev->mtu()) : port->dev->mtu();
  if (!mtu) mtu = 1500;
  if (mtu == br.mtu()) return;
  p->adjusting = true;
  (void)ctl.set_mtu(br, mtu);
  p->adjusting = false;
}

// Linux: br_port_state_selection as br_stp_change_bridge_id runs it: the ports keep their
// states (a port being added is still disabled) and the carrier follows them.
void select_carrier(Control& ctl, Device& br, const Priv& p) {
  if (!p.had_port) return;
  bool any = std::any_of(p.ports.begin(), p.ports.end(),
                         [](const auto& e) { return e->s.state == BR_STATE_FORWARDING; });
  ctl.set_carrier(br, any && br.is_up());
}

// Linux: br_stp_recalculate_bridge_id (called when a port comes, goes or changes its
// address): the lowest port address, all zeros once the last port left, unless the user
// set one. A new bridge id reselects the port states (br_stp_change_bridge_id): adding the
// first port to an up bridge turns its carrier off and, once the port forwards, on again,
// which takes its operstate from UNKNOWN to UP as on Linux 6.18. With `later`, the address
// is set (with its forwarding entry) without NETDEV_CHANGEADDR, which the caller sends with
// notify_address (Linux: br_add_if announces the port in between). True if it changed.
bool adjust_address(Control& ctl, Device& br, bool later = false) {
  Priv* p = bridge::priv(br);
  if (!p || p->addr_set_by_user || br.state() != RegState::Registered) return false;
  HwAddr lowest = HwAddr::ethernet({0, 0, 0, 0, 0, 0});
  if (!p->ports.empty()) {
    lowest = p->ports.front()->dev->address();
    for (auto& port : p->ports) lowest = std::min(lowest, port->dev->address());
  }
  if (lowest == br.address()) return false;
  p->adjusting = true;
  if (later) {
    br.set_address_locked(ctl, lowest);
    bridge::fdb_bridge_changed_addr(ctl, br, *p);  // Linux: br_stp_change_bridge_id
  } else {
    (void)ctl.set_address_from_kind(br, lowest);
  }
  p->adjusting = false;
  select_carrier(ctl, br, *p);
  return true;
}

// The NETDEV_CHANGEADDR of an address adjust_address(later) set.
void notify_address(Control& ctl, Device& br) {
  Priv* p = bridge::priv(br);
  HwAddr addr = br.address();
  EventInfo ev{NetdevEvent::ChangeAddr, br};
  ev.new_addr = &addr;
  p->adjusting = true;
  (void)ctl.notify(ev);
  p->adjusting = false;
}

// Linux: br_set_gso_limits, when a port comes or goes: the bridge's TSO limit is its
// ports' least (Bridge::tso_max_size), and netif_set_tso_max_size lowers the gso sizes
// above it, without a notification.
void adjust_gso(Control& ctl, Device& br) {
  std::uint32_t tso = br.kind().tso_max_size(br);
  OffloadLimits l = br.offload_limits_locked();
  if (tso < l.gso_max_size) {
    l.gso_max_size = tso;
    if (tso <= Kind::kLegacyTsoMaxSize) l.gso_ipv4_max_size = tso;
  }
  l.gso_ipv4_max_size = std::min(l.gso_ipv4_max_size, tso);
  br.set_offload_limits_locked(ctl, l);
}

// Linux: update_headroom, from br_add_if and br_del_if — every port asked to keep what
// the bridge now needs.
void adjust_headroom(Control& ctl, Device& br) {
  const std::uint32_t bytes = br.kind().needed_headroom(br);
  if (Priv* p = bridge::priv(br))
    for (auto& port : p->ports) port->dev->kind().set_rx_headroom(ctl, *port->dev, bytes);
}

// A port's promiscuity taken or given back: announced whatever the flags show (Linux:
// dev_set_promiscuity's __dev_notify_flags, ifi_change IFF_PROMISC; br_manage_promisc makes
// every port promiscuous while vlan filtering is off). Nothing about a device that is
// being unregistered (the hub's rule).
void announce_promisc(Control& ctl, Device& port) {
  EventInfo ev{NetdevEvent::NotifyFlags, port};
  ev.flags_changed = IFF_PROMISC;
  (void)ctl.notify(ev);
}

// Releases `port` from `br` (Linux: del_nbp, then what br_del_if does for the bridge
// unless `bridge_goes`: br_dev_delete releases the ports of a bridge being deleted with
// del_nbp alone).
void remove_port(Control& ctl, Device& br, Device& port, bool bridge_goes = false) {
  Priv* p = bridge::priv(br);
  if (!p) return;
  auto it = std::find_if(p->ports.begin(), p->ports.end(),
                         [&](const auto& e) { return e->dev.get() == &port; });
  if (it == p->ports.end()) return;
  // Linux: del_nbp — nbp_delete_promisc first (the port's promiscuity given back), then
  // br_stp_disable_port announces the port disabled (whatever its state was), then the
  // port is announced leaving (RTM_DELLINK).
  announce_promisc(ctl, port);
  Port& e = **it;
  e.s.state = BR_STATE_DISABLED;
  bridge::announce_port(ctl, br, e);
  bridge::drop_forward_delay(ctl, e);
  bridge::announce_port(ctl, br, e, /*deleted=*/true);
  std::unique_ptr<Port> gone = std::move(*it);
  p->ports.erase(it);
  bridge::detach_port(ctl, port);
  bridge::fdb_delete_by_port(ctl, br, *p, &port);  // Linux: del_nbp
  // Linux: del_nbp's nbp_backup_clear — the ports it backed lose it, silently.
  for (auto& other : p->ports)
    if (other->s.backup == port.ifindex()) other->s.backup = 0;
  ctl.unlink_upper(port, br);
  bridge::mdb_del_port(ctl, br, *p, port);    // Linux: del_nbp's br_multicast_del_port
  port.kind().set_rx_headroom(ctl, port, 0);  // Linux: del_nbp's netdev_reset_rx_headroom
  gone.reset();                               // drops the reference on the port
  if (bridge_goes) return;
  adjust_mtu(ctl, br);
  adjust_gso(ctl, br);
  adjust_headroom(ctl, br);
  // Linux: br_del_if — br_stp_recalculate_bridge_id changes the bridge's own entry, then
  // NETDEV_CHANGEADDR.
  if (adjust_address(ctl, br, /*later=*/true)) notify_address(ctl, br);
  // Linux: br_del_if ends with netdev_update_features: the bridge's features are its
  // ports' again, its own when the last one leaves (NETDEV_FEAT_CHANGE).
  if (p->ports.empty()) (void)ctl.notify(EventInfo{NetdevEvent::FeatChange, br});
  update_states(ctl, br);
}

// Linux: br_device_event for ports, and the bridge's own mtu/address changes.
// It hears of every device; of the others (neither a bridge nor a bridge's port) it reads
// only the kind and the master, not their private state (priv_of reads that state's type
// and, for a type that is not the one asked, compares the types' names).
class Watch final : public Subscriber {
 public:
  explicit Watch(const Kind& bridge) : bridge_(bridge) {}

  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    Device& dev = ev.dev;
    if (&dev.kind() == &bridge_) {
      PluginGuard guard(ctl);  // the bridge's own state
      Priv* self = bridge::priv(dev);
      if (!self) return ok();
      if (!self->adjusting && ev.event == NetdevEvent::ChangeMtu) self->mtu_set_by_user = true;
      // (A null new_addr: its broadcast address changed.)
      if (!self->adjusting && ev.event == NetdevEvent::ChangeAddr && ev.new_addr)
        self->addr_set_by_user = true;
      // (An address adjust_address set `later` has its entry already.)
      if (ev.event == NetdevEvent::ChangeAddr && self->own_addr != dev.address())
        bridge::fdb_bridge_changed_addr(ctl, dev, *self);
      return ok();
    }
    Device* br = dev.master();
    if (!br || &br->kind() != &bridge_) return ok();
    PluginGuard guard(ctl);  // the bridge's own state
    Priv* port_of = bridge::priv(*br);
    Port* port = port_of ? port_of->find(dev) : nullptr;
    if (!port) return ok();
    switch (ev.event) {
      case NetdevEvent::Unregister:  // also a move to another namespace
        remove_port(ctl, *br, dev);
        break;
      case NetdevEvent::ChangeMtu:
        adjust_mtu(ctl, *br);
        break;
      case NetdevEvent::ChangeAddr:
        // Linux: br_device_event — the entries, the bridge id (its own entry), then the
        // bridge's NETDEV_CHANGEADDR.
        bridge::fdb_port_changed_addr(ctl, *br, *port_of, dev);
        if (adjust_address(ctl, *br, /*later=*/true)) notify_address(ctl, *br);
        bridge::announce_port(ctl, *br, *port);  // Linux: "may cause spanning tree to refresh"
        break;
      case NetdevEvent::Up:
      case NetdevEvent::Down:
      case NetdevEvent::Change: {
        // Linux: br_device_event — NETDEV_UP enables the port if the bridge runs and the
        // port is operationally up, NETDEV_DOWN disables it if the bridge is up, NETDEV_CHANGE
        // does either as its state calls for (br_port_carrier_check); an event that did
        // neither announces the port once all the same.
        update_states(ctl, *br, port);
        break;
      }
      default:
        break;
    }
    return ok();
  }

 private:
  const Kind& bridge_;
};

}  // namespace

AttrPolicy Bridge::policy() const {
  return bridge::policy();
}
AttrPolicy Bridge::slave_policy() const {
  return bridge::port_policy();
}

Result<void> Bridge::validate(Control&, const LinkRequest& req) const {
  // Checks that need no device: on the defaults (never stricter than the device's own
  // settings, which change_link checks again).
  bridge::Settings s = bridge::default_settings();
  return bridge::change(s, req.info_data);
}

Result<Device*> Bridge::new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const {
  // Linux: br_dev_setup (random address, mtu 1500; the carrier stays on, and the operstate
  // unknown, until a port is added), then br_changelink with the request's data.
  auto priv = std::make_unique<Priv>();
  priv->s = bridge::default_settings();
  IFCORE_TRY(bridge::change(priv->s, req.info_data));
  priv->addr_set_by_user = req.address.has_value();
  auto dev = ctl.alloc_device(*this, ns);
  dev->set_priv(std::move(priv));
  IFCORE_TRY(ctl.apply_create_attrs(*dev, req));
  auto made = ctl.register_device(std::move(dev), req.name.value_or("bridge%d"), req.ifindex);
  if (made) {  // Linux: the bridge's own address has a local entry
    Priv& p = *bridge::priv(**made);
    bridge::fdb_add_local(ctl, **made, p, nullptr, (*made)->address());
    p.own_addr = (*made)->address();
    Device* br = *made;
    bridge::mdb_init(ctl, *br, p);
    p.announce_timer = add_timer(ctl, [br](Control& c) {
      if (Priv* q = bridge::priv(*br)) bridge::fdb_announce_learned(c, *br, *q);
    });
  }
  return made;
}

Result<void> Bridge::change_link(Control& ctl, Device& dev, const LinkRequest& req) const {
  Priv& p = *bridge::priv(dev);
  bridge::Settings next = p.s;
  IFCORE_TRY(bridge::change(next, req.info_data));
  bool stp_changed = next.stp_state != p.s.stp_state;
  auto snoops = [](const bridge::Settings& s) {
    auto it = s.opts.find(IFLA_BR_MCAST_SNOOPING);
    return it == s.opts.end() || it->second.num != 0;
  };
  bool snooping_off = snoops(p.s) && !snoops(next);
  bool snooping_on = !snoops(p.s) && snoops(next);
  p.s = std::move(next);
  // Linux: br_multicast_toggle disables the ports' multicast contexts, or enables those of
  // the ports that are enabled.
  for (auto& port : p.ports) {
    if (snooping_off) bridge::mdb_port_disabled(ctl, dev, p, *port->dev);
    if (snooping_on && port->s.state != BR_STATE_DISABLED)
      bridge::mdb_port_enabled(ctl, dev, p, *port->dev);
  }
  bridge::publish_ports(ctl, dev, p);  // the ageing time may have changed
  // Linux: br_set_ageing_time runs the collector at once (mod_delayed_work(gc_work, 0)).
  if (attr_num(req.info_data, IFLA_BR_AGEING_TIME) && p.gc_timer)
    arm_timer(ctl, p.gc_timer, dev.engine().time().now());
  if (stp_changed) update_states(ctl, dev);
  (void)ctl.notify(EventInfo{NetdevEvent::ChangeInfoData, dev});
  return ok();
}

AttrList Bridge::fill_info(const Device& dev) const {
  return bridge::fill(dev, *bridge::priv(dev));
}

AttrList Bridge::fill_slave_info(const Device& master, const Device& port) const {
  const Priv* p = bridge::priv(master);
  const Port* e = p ? p->find(port) : nullptr;
  return e ? bridge::fill_port(master, *p, *e) : AttrList{};
}

Kind::Undo Bridge::save_link(Device& dev) const {
  const bridge::Settings saved = bridge::priv(dev)->s;
  Device* br = &dev;
  return [br, saved](Control& ctl) -> Result<void> {
    Priv& p = *bridge::priv(*br);
    const bool stp_changed = saved.stp_state != p.s.stp_state;
    p.s = saved;
    bridge::publish_ports(ctl, *br, p);
    if (stp_changed) update_states(ctl, *br);
    (void)ctl.notify(EventInfo{NetdevEvent::ChangeInfoData, *br});
    return ok();
  };
}

Kind::Undo Bridge::save_slave(Device& master, const Device& port) const {
  const Priv* p = bridge::priv(master);
  const Port* e = p ? p->find(port) : nullptr;
  if (!e) return {};
  const bridge::PortSettings saved = e->s;
  Device* br = &master;
  const Device* dev = &port;
  return [br, dev, saved](Control& ctl) -> Result<void> {
    Priv* q = bridge::priv(*br);
    Port* pe = q ? q->find(*dev) : nullptr;
    if (!pe) return fail(ENODEV, "\"{}\" is no longer a port of \"{}\"", dev->name(), br->name());
    pe->s = saved;
    update_states(ctl, *br);
    return ok();
  };
}

Result<void> Bridge::change_slave(Control& ctl, Device& master, Device& port,
                                  const AttrList& data) const {
  Priv* p = bridge::priv(master);
  Port* e = p ? p->find(port) : nullptr;
  if (!e) return fail(EINVAL, "device \"{}\" is not a port of \"{}\"", port.name(), master.name());
  bridge::PortSettings next = e->s;
  IFCORE_TRY(bridge::change_port(p->s, port, next, data));
  // Linux: br_setport's IFLA_BRPORT_BACKUP_PORT, last (nbp_backup_change): another port of
  // the same bridge, or 0 for none; errno alone.
  if (const Attr* a = find_attr(data, IFLA_BRPORT_BACKUP_PORT)) {
    const int to = static_cast<int>(a->num);
    const Device* backup = to ? ctl.find(master.ns(), to) : nullptr;
    if (to && (!backup || !backup->master() || !bridge::priv(*backup->master())))
      return fail_log_only(ENOENT, "backup port {} is not a bridge port", to);
    if (backup && (backup->master() != &master || backup == &port))
      return fail_log_only(EINVAL, "\"{}\" cannot be the backup port of \"{}\"", backup->name(),
                           port.name());
    next.backup = to;
  }
  auto router = [](const bridge::PortSettings& s) {
    auto it = s.opts.find(IFLA_BRPORT_MULTICAST_ROUTER);
    return it == s.opts.end() ? std::uint64_t{1} : it->second.num;
  };
  const bool router_changed = router(next) != router(e->s);
  e->s = std::move(next);
  if (router_changed) bridge::mdb_router_changed(ctl, master, *p, port);
  update_states(ctl, master);
  return ok();
}

Result<void> Bridge::add_port(Control& ctl, Device& master, Device& port) const {
  // Linux: br_add_if's checks, in its order; only the bridge in a bridge has an extack
  // message, the others are the errno alone (log_only).
  if ((port.flags() & IFF_LOOPBACK) || port.hw_type() != ARPHRD_ETHER ||
      !port.address().is_valid_ether())
    return fail_log_only(EINVAL, "device \"{}\" cannot be a bridge port: not an Ethernet device",
                         port.name());
  if (bridge::priv(port)) return fail(ELOOP, "Can not enslave a bridge to a bridge");
  if (port.master())
    return fail_log_only(EBUSY, "device \"{}\" is already a port of \"{}\"", port.name(),
                         port.master()->name());
  // Linux: the port's receive handler is taken by macvlans (netdev_rx_handler_register).
  if (Macvlan::has_macvlans(port))
    return fail_log_only(EBUSY, "device \"{}\" has macvlans: it cannot be a bridge port",
                         port.name());
  Priv& p = *bridge::priv(master);
  IFCORE_TRY(ctl.link_upper(port, master, /*master=*/true));  // ELOOP/EBUSY on loops
  std::uint16_t no = 1;
  while (std::any_of(p.ports.begin(), p.ports.end(), [&](auto& e) { return e->no == no; })) ++no;
  auto e = std::make_unique<Port>();
  e->dev = Ref(port, "bridge");
  e->no = no;
  e->s = bridge::default_port_settings(port);
  p.ports.push_back(std::move(e));
  p.had_port = true;
  Port& added = *p.ports.back();
  announce_promisc(ctl, port);  // Linux: br_add_if's nbp_update_port_count
  // Linux: br_add_if's netdev_update_features — the first port's features replace the
  // bridge's own (NETDEV_FEAT_CHANGE); another port of the same features changes nothing.
  if (p.ports.size() == 1) (void)ctl.notify(EventInfo{NetdevEvent::FeatChange, master});
  bridge::attach_port(ctl, master, port);
  bridge::fdb_add_local(ctl, master, p, &port, port.address());  // Linux: br_add_if
  // Linux: br_add_if — the bridge id (address) recalculated, the port enabled if it and the
  // bridge run (br_stp_enable_port), the port announced, then the bridge's
  // NETDEV_CHANGEADDR, br_mtu_auto_adjust and br_set_gso_limits.
  const bool new_address = adjust_address(ctl, master, /*later=*/true);
  update_states(ctl, master, &added, /*always=*/true);
  if (new_address) notify_address(ctl, master);
  adjust_mtu(ctl, master);
  adjust_gso(ctl, master);
  adjust_headroom(ctl, master);
  return ok();
}

Result<void> Bridge::del_link(Control& ctl, Device& dev, UnregisterBatch& batch) const {
  // Linux: br_dev_delete releases every port, newest first (del_nbp: each announced leaving,
  // unlinked) before the bridge is queued, so they go before it is closed.
  // Then its own entries (br_fdb_delete_by_port with no port), announced before it goes.
  if (Priv* p = bridge::priv(dev)) {
    while (!p->ports.empty()) remove_port(ctl, dev, *p->ports.back()->dev, /*bridge_goes=*/true);
    bridge::fdb_delete_by_port(ctl, dev, *p, nullptr);
  }
  batch.add(dev);
  return ok();
}

Result<void> Bridge::del_port(Control& ctl, Device& master, Device& port) const {
  if (!bridge::priv(master)->find(port))
    return fail(EINVAL, "device \"{}\" is not a port of \"{}\"", port.name(), master.name());
  remove_port(ctl, master, port);
  return ok();
}

// Linux: br_set_gso_limits, at each port's coming and going — the least of its ports'
// (GSO_MAX_SIZE when the last has gone); a bridge that never had a port keeps the legacy
// limit alloc_netdev set.
std::uint32_t Bridge::tso_max_size(const Device& dev) const {
  const Priv* p = bridge::priv(dev);
  if (!p || !p->had_port) return kLegacyTsoMaxSize;
  std::uint32_t least = kGsoMaxSize;
  for (const auto& port : p->ports)
    least = std::min(least, port->dev->kind().tso_max_size(*port->dev));
  return least;
}

// Linux: br_add_if and br_del_if — the most its ports want (a veth's only repeats it),
// which the ports are then asked to keep (netdev_set_rx_headroom: Veth::needed_headroom).
std::uint32_t Bridge::needed_headroom(const Device& dev) const {
  const Priv* p = bridge::priv(dev);
  std::uint32_t most = 0;
  if (!p) return most;
  for (const auto& port : p->ports)
    if (const Kind& k = port->dev->kind(); !k.phony_headroom())
      most = std::max(most, k.needed_headroom(*port->dev));
  return most;
}

void Bridge::set_address(Control& ctl, Device& dev, const HwAddr& addr) const {
  // Linux: br_set_mac_address — the address is the user's from now on; a new one changes
  // the bridge id with its own entry (br_stp_change_bridge_id), before NETDEV_CHANGEADDR.
  Priv* p = bridge::priv(dev);
  if (p) p->addr_set_by_user = true;
  if (addr == dev.address()) return;
  dev.set_address_locked(ctl, addr);
  if (p) bridge::fdb_bridge_changed_addr(ctl, dev, *p);
}

Result<void> Bridge::open(Control& ctl, Device& dev) const {
  // Linux: br_dev_open -> br_stp_enable_bridge enables (and announces) each port that runs,
  // before the bridge is announced up.
  update_states(ctl, dev);
  if (Priv* p = bridge::priv(dev)) bridge::fdb_gc_start(ctl, dev, *p);
  return ok();
}

void Bridge::stop(Control& ctl, Device& dev) const {
  // Linux: br_dev_stop disables the ports; no port forwards, so no carrier (a bridge that
  // never had a port keeps its carrier).
  Priv* p = bridge::priv(dev);
  if (!p) return;
  bridge::fdb_gc_stop(ctl, *p);
  // Linux: br_stp_disable_bridge -> br_stp_disable_port (announced) for each port that is
  // not disabled already, newest first.
  for (auto it = p->ports.rbegin(); it != p->ports.rend(); ++it) {
    auto& port = *it;
    if (port->s.state == BR_STATE_DISABLED) continue;
    bridge::mdb_port_disabled(ctl, dev, *p, *port->dev);
    port->s.state = BR_STATE_DISABLED;
    bridge::announce_port(ctl, dev, *port);
    bridge::stop_forward_delay(ctl, *port);
  }
  bridge::publish_ports(ctl, dev, *p);
  if (p->had_port) ctl.set_carrier(dev, false);
}

void Bridge::uninit(Control& ctl, Device& dev) const {
  // Linux: br_dev_delete releases every port; the ports stay.
  Priv* p = bridge::priv(dev);
  if (!p) return;
  remove_timer(ctl, p->announce_timer);
  if (p->gc_timer) remove_timer(ctl, p->gc_timer);
  p->gc_timer = 0;
  for (auto& port : p->ports) {
    bridge::drop_forward_delay(ctl, *port);
    bridge::fdb_delete_by_port(ctl, dev, *p, port->dev.get());
    bridge::mdb_del_port(ctl, dev, *p, *port->dev);  // Linux: del_nbp, announced
  }
  bridge::mdb_uninit(ctl, *p);
  auto ports = std::move(p->ports);
  p->ports.clear();
  bridge::publish_ports(ctl, dev, *p);
  bridge::fdb_delete_by_port(ctl, dev, *p, nullptr);
  for (auto& port : ports) {
    bridge::detach_port(ctl, *port->dev);
    ctl.unlink_upper(*port->dev, dev);
  }
}

bool Bridge::xmit(Device& dev, Frame&& f) const {
  Priv* p = bridge::priv(dev);  // set before registration, freed with the device
  if (!p) return false;
  bridge::xmit(dev, *p, std::move(f));
  return true;
}

std::size_t Bridge::fdb_size(const Device& br) {
  Priv* p = bridge::priv(br);
  return p ? p->fdb.size() : 0;
}

void Bridge::install(Engine& engine) {
  static Bridge kind;
  static Watch watch(kind);
  engine.register_kind(kind);
  auto ctl = engine.control();
  (void)ctl.subscribe(
      watch, SubscribeOptions{
                 "bridge", 0, false,
                 events_of(NetdevEvent::Unregister, NetdevEvent::ChangeMtu, NetdevEvent::ChangeAddr,
                           NetdevEvent::Up, NetdevEvent::Down, NetdevEvent::Change),
                 true});  // the plug-in lock taken above for a bridge or a bridge's port
}

}  // namespace ifcore::kinds
