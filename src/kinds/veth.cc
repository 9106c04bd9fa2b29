// Veth: Linux drivers/net/veth.c semantics (veth_newlink, veth_dellink, veth_open,
// veth_close), written for ifcore.
#include "kinds/veth.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/veth.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

#include "ifcore/frame.h"
#include "kinds/common.h"

namespace ifcore::kinds {

namespace {

struct VethPriv final : DevicePriv {
  // The other end. Both ends die in the same batch, so no reference is held (Linux keeps
  // an RCU pointer, no dev_hold, for the same reason).
  Device* peer = nullptr;
  // What this end's master asked it to keep free (Linux: requested_headroom). Atomic: the
  // peer's namespace reads it.
  std::atomic<std::uint32_t> rx_headroom{0};
};

constexpr AttrPolicyEntry kPolicy[] = {
    {VETH_INFO_PEER, AttrShape::LinkMsg},
};

// The peer's part of the request (VETH_INFO_PEER), nullptr when the request has none.
const LinkRequest* peer_part(const LinkRequest& req) {
  if (const Attr* a = find_attr(req.info_data, VETH_INFO_PEER); a && a->link) return &*a->link;
  return nullptr;
}

const LinkRequest& peer_request(const LinkRequest& req) {
  static const LinkRequest kEmpty;
  const LinkRequest* p = peer_part(req);
  return p ? *p : kEmpty;
}

Result<Namespace*> covered(Control& ctl, Namespace* n) {
  IFCORE_TRY(ctl.check_covers(*n));
  return n;
}

// Linux: rtnl_get_peer_net and rtnl_newlink_peer_net — the namespace the peer's own
// attributes name (without VETH_INFO_PEER, the device's: a namespace named by pid or fd,
// here by name), else the link namespace (IFLA_LINK_NETNSID's, else the requester's),
// else the device's.
Result<Namespace*> peer_namespace(Control& ctl, Namespace& ns, const LinkRequest& req) {
  const LinkRequest* peer = peer_part(req);
  if (!peer && req.net_ns_name) return &ns;
  if (peer && peer->net_ns_name) {
    Namespace* n = ctl.find_namespace(*peer->net_ns_name);
    if (!n) return fail(EINVAL, "namespace \"{}\" does not exist", *peer->net_ns_name);
    return covered(ctl, n);
  }
  if (peer && peer->net_ns_id) {
    // ifcore: the peer's IFLA_TARGET_NETNSID, an id of the device's namespace's.
    Namespace* n = ns.peer_by_id_locked(*peer->net_ns_id);
    if (!n) return fail_log_only(EINVAL, "invalid target namespace id {}", *peer->net_ns_id);
    return covered(ctl, n);
  }
  if (req.link_ns_name) {
    Namespace* n = ctl.find_namespace(*req.link_ns_name);
    if (!n) return fail(EINVAL, "namespace \"{}\" does not exist", *req.link_ns_name);
    return covered(ctl, n);
  }
  return &ns;
}

// Linux: veth_get_num_queues — one tx and one rx queue per possible CPU (IFLA_NUM_TX_QUEUES
// / IFLA_NUM_RX_QUEUES in the request still win). Read once: glibc's sysconf reads sysfs
// on every call, which cost more than the rest of a veth pair's creation.
std::uint32_t num_queues() {
  static const std::uint32_t n = [] {
    long c = ::sysconf(_SC_NPROCESSORS_CONF);
    return c > 0 ? static_cast<std::uint32_t>(c) : 1u;
  }();
  return n;
}

// Linux: veth_setup (ether_setup). Carrier goes off once registered (veth_newlink).
std::unique_ptr<Device> alloc_end(Control& ctl, const Kind& kind, Namespace& ns) {
  auto dev = ctl.alloc_device(kind, ns);
  dev->set_queues_locked(ctl, num_queues(), num_queues());
  dev->set_operstate_locked(ctl, IF_OPER_DOWN);
  dev->set_priv(std::make_unique<VethPriv>());
  return dev;
}

// Unlinks `dev` and its peer from each other (Linux: the RCU_INIT_POINTERs of
// veth_dellink; the frame path sees no peer from now on).
void untie(Control& ctl, Device& dev) {
  auto* me = priv_of<VethPriv>(dev);
  if (!me) return;
  if (Device* other_dev = me->peer) {
    if (auto* other = priv_of<VethPriv>(*other_dev); other && other->peer == &dev) {
      other->peer = nullptr;
      other_dev->set_link_locked(ctl, nullptr);
    }
  }
  me->peer = nullptr;
  dev.set_link_locked(ctl, nullptr);
}

}  // namespace

AttrPolicy Veth::policy() const {
  return kPolicy;
}

Device* Veth::peer(const Device& dev) {
  auto* p = priv_of<VethPriv>(dev);
  return p ? p->peer : nullptr;
}

// Linux: veth_set_rx_headroom — both ends keep the most either end's master asked.
std::uint32_t Veth::needed_headroom(const Device& dev) const {
  auto* me = priv_of<VethPriv>(dev);
  if (!me) return 0;
  std::uint32_t most = me->rx_headroom.load(std::memory_order_relaxed);
  if (auto* other = me->peer ? priv_of<VethPriv>(*me->peer) : nullptr)
    most = std::max(most, other->rx_headroom.load(std::memory_order_relaxed));
  return most;
}

void Veth::set_rx_headroom(Control&, Device& dev, std::uint32_t bytes) const {
  if (auto* me = priv_of<VethPriv>(dev)) me->rx_headroom.store(bytes, std::memory_order_relaxed);
}

namespace {

// Linux: veth_validate — the address, then the mtu (68..65535); its errors carry no extack.
Result<void> validate_end(const LinkRequest& req) {
  if (auto a = check_ether_address(req); !a) return fail_log_only(std::move(a).error());
  if (req.mtu && (*req.mtu < 68 || *req.mtu > 65535))
    return fail_log_only(EINVAL, "veth mtu {} is outside 68..65535", *req.mtu);
  return ok();
}

}  // namespace

Result<void> Veth::validate(Control&, const LinkRequest& req) const {
  // Linux: rtnl_newlink runs veth_validate on the device; veth_newlink on the peer.
  IFCORE_TRY(validate_end(req));
  IFCORE_TRY(validate_end(peer_request(req)));
  return ok();
}

Result<Device*> Veth::new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const {
  const LinkRequest& preq = peer_request(req);
  auto pns = peer_namespace(ctl, ns, req);
  if (!pns) return fail(pns.error());
  std::string peer_name = preq.name.value_or("veth%d");
  std::string dev_name = req.name.value_or("veth%d");
  // Both or neither: refuse a taken name before anything is registered.
  auto taken = [&](Namespace& n, const std::string& name) {
    return name.find('%') == std::string::npos && ctl.find(n, name) != nullptr;
  };
  if (taken(**pns, peer_name))
    return fail_log_only(EEXIST, "device \"{}\" already exists", peer_name);
  if (taken(ns, dev_name)) return fail_log_only(EEXIST, "device \"{}\" already exists", dev_name);
  if (*pns == &ns && peer_name == dev_name && dev_name.find('%') == std::string::npos) {
    // Linux registers the peer, which takes an ifindex, before the device's name is found
    // taken; the peer goes again, its ifindex is not handed out again (cyclic allocation).
    // Refused here before anything is registered, the ifindex is passed over as there.
    if (preq.ifindex == 0) ns.pass_over_ifindex_locked();
    return fail_log_only(EEXIST, "device \"{}\" already exists", dev_name);
  }

  // Room for both ends before either is registered.
  if (*pns == &ns) {
    IFCORE_TRY(ctl.check_device_room(ns, 2));
  } else {
    IFCORE_TRY(ctl.check_device_room(**pns, 1));
    IFCORE_TRY(ctl.check_device_room(ns, 1));
  }
  auto peer = alloc_end(ctl, *this, **pns);
  IFCORE_TRY(ctl.apply_create_attrs(*peer, preq));
  auto dev = alloc_end(ctl, *this, ns);
  IFCORE_TRY(ctl.apply_create_attrs(*dev, req));

  // Linux (veth_newlink): the peer is registered first and configured, which announces it
  // before the pair is tied: with IFLA_LINK 0 (`ip` prints "@NONE"). Then the device the
  // request names, and the two are tied; rtnetlink announces that one after the create.
  // Linux: the peer keeps the index asked for only when the device is given one too.
  auto p = ctl.register_device(std::move(peer), peer_name, req.ifindex ? preq.ifindex : 0);
  if (!p) return fail(p.error());
  // Linux: rtnl_configure_link(peer, its ifinfomsg): its flags; up fails (veth_open finds
  // no peer yet: ENOTCONN), and the peer goes again.
  if (preq.flags || preq.change) {
    std::uint32_t flags = preq.combined_flags((*p)->flags());
    Result<void> f = flags & IFF_UP ? fail_log_only(ENOTCONN,
                                                    "a veth's peer cannot come up "
                                                    "before the pair is made")
                                    : ctl.change_flags(**p, flags);
    if (!f) {
      (void)ctl.delete_link(**p);
      return fail(std::move(f).error());
    }
  }
  (void)ctl.notify(EventInfo{NetdevEvent::Configured, **p});
  auto d = ctl.register_device(std::move(dev), dev_name, req.ifindex);
  if (!d) {
    (void)ctl.delete_link(**p);  // nothing may stay registered
    return fail(d.error());
  }
  priv_of<VethPriv>(**p)->peer = *d;
  priv_of<VethPriv>(**d)->peer = *p;
  (*p)->set_link_locked(ctl, *d);
  (*d)->set_link_locked(ctl, *p);
  // Linux turns each end's carrier off right after registering it, and its link watch runs
  // those events once the pair is tied: the operstates it derives see the peer
  // (LOWERLAYERDOWN once up). The kernel policy's one-second window opens here.
  // Difference: the peer's announcement above still says carrier on (IFLA_CARRIER; `ip`
  // shows no flag for it on a device that is down).
  ctl.set_carriers({*p, *d}, false);
  return *d;
}

Result<void> Veth::del_link(Control& ctl, Device& dev, UnregisterBatch& batch) const {
  // Linux: veth_dellink queues both ends in the caller's list and unties them at once, so
  // the batch's notifications carry no IFLA_LINK (`ip monitor` prints "@NONE").
  batch.add(dev);
  Device* p = peer(dev);
  untie(ctl, dev);
  if (p && p->state() == RegState::Registered) batch.add(*p);
  return ok();
}

Result<void> Veth::open(Control& ctl, Device& dev) const {
  // Linux: veth_open: carrier on for both ends once the peer is up too.
  Device* p = peer(dev);
  if (p && p->is_up()) ctl.set_carriers({&dev, p}, true);
  return ok();
}

void Veth::stop(Control& ctl, Device& dev) const {
  // Linux: veth_close: carrier off for both ends.
  Device* p = peer(dev);
  if (p && p->state() == RegState::Registered)
    ctl.set_carriers({&dev, p}, false);
  else
    ctl.set_carrier(dev, false);
}

bool Veth::xmit(Device& dev, Frame&& f) const {
  // Linux: veth_xmit: the frame arrives at the peer, or is dropped if the peer is down.
  Ref peer = hold_registered([&] { return dev.link(); });
  if (!peer || !peer->is_up()) return false;
  receive(*peer, std::move(f));
  return true;
}

void Veth::uninit(Control& ctl, Device& dev) const {
  untie(ctl, dev);  // a device unregistered without del_link (its namespace went)
}

void Veth::install(Engine& engine) {
  static Veth kind;
  engine.register_kind(kind);
}

}  // namespace ifcore::kinds
