// ifcore/kind.h — a kind of device (Linux: struct rtnl_link_ops), plugged into core.
//
// Core never names a kind: kinds register themselves with the engine
// (`Engine::register_kind`) and core calls them through this interface.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "ifcore/attr.h"
#include "ifcore/link_request.h"
#include "ifcore/result.h"

namespace ifcore {

class Control;
class Device;
struct Frame;
class Namespace;
class UnregisterBatch;

class Kind {
 public:
  virtual ~Kind() = default;

  // "dummy", "veth", ... (IFLA_INFO_KIND).
  virtual std::string_view name() const = 0;

  // Policy for IFLA_INFO_DATA and, for master kinds, IFLA_INFO_SLAVE_DATA of their ports.
  virtual AttrPolicy policy() const { return {}; }
  virtual AttrPolicy slave_policy() const { return {}; }

  // Checks a create or change request without touching state.
  // Context: control lock. Errors: EINVAL (and friends) with a message.
  virtual Result<void> validate(Control& ctl, const LinkRequest& req) const { return ok(); }

  // Allocates, sets up and registers the device(s) the request asks for, in `ns`.
  // Generic attributes (mtu, address, txqlen, group...) are applied by core before
  // registration; flags and master after. Both-or-neither: on error nothing stays registered.
  // Context: control lock.
  virtual Result<Device*> new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const = 0;

  // For a kind whose create makes one device and nothing else: allocates and sets up the
  // device the request asks for (generic attributes applied), without registering it, so
  // that Control::create_links can register many in one RegisterBatch. Default: nullptr,
  // the kind cannot be created in a batch. Context: control lock. Errors: as new_link's
  // before registration.
  virtual Result<std::unique_ptr<Device>> prepare_link(Control& ctl, Namespace& ns,
                                                       const LinkRequest& req) const;

  // Applies IFLA_INFO_DATA to an existing device. Default: EOPNOTSUPP if data is given.
  virtual Result<void> change_link(Control& ctl, Device& dev, const LinkRequest& req) const;

  // Puts back what change_link or change_slave changed, when a later step of the same
  // request fails (a failed request changes nothing). Called under the control lock; its
  // error is reported in the engine's log, never dropped.
  using Undo = std::function<Result<void>(Control&)>;
  // Captures, before change_link(dev, ...), what it may change. A kind that overrides
  // change_link overrides this too. Default: nothing to put back (an empty Undo).
  virtual Undo save_link(Device& dev) const { return {}; }
  // The same before change_slave(master, port, ...), for master kinds.
  virtual Undo save_slave(Device& master, const Device& port) const { return {}; }

  // Adds `dev` and whatever must die with it to `batch` (veth peer, vlans on it...).
  // Errors: EOPNOTSUPP where the kind cannot be deleted (loopback). Context: control lock.
  virtual Result<void> del_link(Control& ctl, Device& dev, UnregisterBatch& batch) const;

  // The attributes Linux reports in IFLA_INFO_DATA. Context: control lock.
  virtual AttrList fill_info(const Device& dev) const { return {}; }
  // For master kinds: IFLA_INFO_SLAVE_DATA of one port. Context: control lock.
  virtual AttrList fill_slave_info(const Device& master, const Device& port) const { return {}; }
  // For master kinds: applies IFLA_INFO_SLAVE_DATA to a port. Default: EOPNOTSUPP.
  virtual Result<void> change_slave(Control& ctl, Device& master, Device& port,
                                    const AttrList& data) const;

  // Master kinds: make `port` a port of `master`, or release it. Default: EOPNOTSUPP
  // (the device cannot be a master).
  virtual Result<void> add_port(Control& ctl, Device& master, Device& port) const;
  virtual Result<void> del_port(Control& ctl, Device& master, Device& port) const;

  // Linux: ndo_change_mtu — a kind may refuse an mtu within the device's range (a macvlan
  // one above its lower device's). Called before the change is announced. Context:
  // control lock. Errors: the kind's (EINVAL).
  virtual Result<void> change_mtu(Control& ctl, Device& dev, std::uint32_t mtu) const {
    return ok();
  }

  // Open/stop (Linux: ndo_open/ndo_stop): called when the device goes up/down, after the
  // flag changes, so the kind can update carrier. Context: control lock.
  virtual Result<void> open(Control& ctl, Device& dev) const { return ok(); }
  // Refuses a new hardware address before anything changes (Linux: the driver's
  // ndo_set_mac_address, e.g. macvlan's EADDRINUSE).
  virtual Result<void> check_address(const Device& dev, const HwAddr& addr) const { return ok(); }
  // Sets a hardware address the user asked for, after check_address and
  // NETDEV_PRE_CHANGEADDR and before NETDEV_CHANGEADDR (Linux: ndo_set_mac_address, e.g. a
  // bridge's own forwarding entry changed before its address is announced). The default
  // sets it on the device. Context: control lock.
  virtual void set_address(Control& ctl, Device& dev, const HwAddr& addr) const;
  virtual void stop(Control& ctl, Device& dev) const {}

  // Called by core when a device has been unregistered (before the grace period): the
  // kind drops links to other devices (Linux: ndo_uninit). Context: control lock.
  virtual void uninit(Control& ctl, Device& dev) const {}
  // Called by the finalizer when the last reference dropped, before the device is
  // freed (Linux: priv_destructor). Context: the finalizer thread, no lock.
  virtual void destruct(Device& dev) const {}

  // True for kinds that stack on a lower device and die with it (vlan, macvlan): when the
  // lower is queued for unregister, its uppers of such kinds are queued into the same batch.
  virtual bool dies_with_lower() const { return false; }
  // For those: true if the device is closed as its lower closes (Linux: a vlan, from its
  // lower's NETDEV_DOWN); false if it stays up until the batch of its own that its lower's
  // unregistering makes closes it first thing (a macvlan, a vxlan: their dellink, and a
  // vxlan's entries announced deleted, come between the lower's down and their own).
  virtual bool closes_with_lower() const { return false; }

  // Frame path (frame.h): a frame sent on `dev`, whose carrier and transmit path core has
  // checked. The kind hands it on (veth: to the peer; vlan: tagged, to the lower) and
  // returns true, or returns false if it dropped it; core counts tx or tx_dropped.
  // Default: the frame leaves the device and is gone (a dummy's). Context: any thread, no
  // lock, not inside an rcu::ReadGuard; `f` holds a Ref on `dev`.
  virtual bool xmit(Device& dev, Frame&& f) const;

  // L3 master kinds (Linux: dev->l3mdev_ops->l3mdev_fib_table, IFF_L3MDEV_MASTER): the FIB
  // table the device and its ports route in; 0 for every other kind. Context: control lock.
  virtual std::uint32_t l3mdev_table(const Device& dev) const { return 0; }

  // The largest TSO packet the device takes (IFLA_TSO_MAX_SIZE). Default: Linux's
  // GSO_MAX_SIZE, which its virtual devices set (veth, loopback); a kind that inherits its
  // lower's (macvlan, vlan, vxlan) or its ports' least (bridge) overrides it. Context:
  // control lock.
  static constexpr std::uint32_t kGsoMaxSize = 524280;       // Linux: GSO_MAX_SIZE
  static constexpr std::uint32_t kLegacyTsoMaxSize = 65536;  // Linux: TSO_LEGACY_MAX_SIZE
  virtual std::uint32_t tso_max_size(const Device& dev) const { return kGsoMaxSize; }
  // The limit a new device has before it is set on its lower or its ports (Linux: what the
  // kind's setup leaves, against which rtnl_create_link checks IFLA_GSO_MAX_SIZE): the
  // legacy 64 KiB for the kinds that inherit theirs later.
  virtual std::uint32_t setup_tso_max_size() const { return kGsoMaxSize; }

  // The bytes the device wants free before a frame (Linux: needed_headroom, reported as
  // IFLA_HEADROOM): a vxlan's headers and its lower's, a bridge's ports' most, a veth's
  // the most its or its peer's master asked. Default: none. Context: control lock.
  virtual std::uint32_t needed_headroom(const Device& dev) const { return 0; }
  // Whether needed_headroom only repeats what a master asked (Linux: IFF_PHONY_HEADROOM,
  // veth): a master takes no headroom from such a port.
  virtual bool phony_headroom() const { return false; }
  // A master asks a port to keep `bytes` free (Linux: ndo_set_rx_headroom; a bridge, as its
  // ports come and go; 0 once released). Default: ignored. Context: control lock.
  virtual void set_rx_headroom(Control& ctl, Device& dev, std::uint32_t bytes) const {}

  // Virtual devices' link changes are urgent for the link watch's adaptive policy.
  virtual bool is_virtual() const { return true; }
  // The ifindex IFLA_LINK reports (0 = none); default: dev.link().
  virtual int link_ifindex(const Device& dev) const;
  // The namespace the device links to (Linux: rtnl_link_ops::get_link_net), reported as
  // IFLA_LINK_NETNSID when it is not the device's own; nullptr: none. Default: dev.link()'s.
  // Context: control lock.
  virtual Namespace* link_ns(const Device& dev) const;
  // True when the kind answers for IFLA_LINK itself (Linux: it has ndo_get_iflink: veth,
  // the IP tunnels), so that a link not set is reported as 0 (`ip` prints "@NONE")
  // instead of being left out.
  virtual bool reports_iflink() const { return false; }
  // Deletable as a cascade victim only? (loopback: never deletable).
  virtual bool can_move_namespace() const { return true; }
  // IFLA_CARRIER may set the carrier (Linux: the kind has ndo_change_carrier: dummy).
  virtual bool can_change_carrier() const { return false; }
  // IFLA_PROTO_DOWN[_REASON] is taken (Linux: IFF_CHANGE_PROTO_DOWN: macvlan, vlan, vxlan):
  // protodown turns the carrier off (Control::set_proto_down).
  virtual bool can_change_proto_down() const { return false; }
  // True when the namespace keeps a list of this kind's devices (Namespace::devices_of_kind),
  // for a kind that checks a new device against its others (a tunnel's endpoints, a VXLAN's
  // VNI) without a walk of every device.
  virtual bool listed_by_kind() const { return false; }
  // The kind's methods touch only their devices and those devices' namespace, and no
  // state of the kind shared across namespaces: a namespace's control (Engine::control(
  // Namespace&)) calls them without the engine's plug-in lock (PluginGuard, engine.h), so
  // that two namespaces make such devices at once. False (the default): under that lock.
  virtual bool concurrent() const { return false; }
};

}  // namespace ifcore
