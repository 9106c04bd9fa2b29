// Loopback: Linux's loopback_setup values (mtu 65536, IFF_LOOPBACK, zero address).
#include "kinds/loopback.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/if_arp.h>

#include <cerrno>

#include "ifcore/frame.h"

namespace ifcore::kinds {

Result<Device*> Loopback::new_link(Control& ctl, Namespace& ns, const LinkRequest&) const {
  // Linux: loopback has no rtnl_link_ops, so `ip link add NAME type loopback` is a kind
  // rtnl_newlink does not know (loopback devices are made with their namespace).
  return fail(EOPNOTSUPP, "Unknown device type");
}

Result<void> Loopback::del_link(Control&, Device& dev, UnregisterBatch&) const {
  // Linux: lo has no rtnl_link_ops, so rtnl_dellink answers EOPNOTSUPP alone.
  return fail_log_only(EOPNOTSUPP, "device \"{}\" is a loopback device: it cannot be deleted",
                       dev.name());
}

Result<void> Loopback::init(Control& ctl, Namespace& ns) {
  auto dev = ctl.alloc_device(*this, ns);
  dev->set_hw_type_locked(ctl, ARPHRD_LOOPBACK);
  dev->set_mtu_locked(ctl, 65536);
  dev->set_mtu_range_locked(ctl, 0, 0);
  dev->set_flags_locked(ctl, IFF_LOOPBACK);
  dev->set_address_locked(ctl, HwAddr::ethernet({0, 0, 0, 0, 0, 0}));
  dev->set_broadcast_locked(ctl, HwAddr::ethernet({0, 0, 0, 0, 0, 0}));
  dev->set_txqlen_locked(ctl, 1000);
  dev->set_operstate_locked(ctl, IF_OPER_UNKNOWN);
  auto r = ctl.register_device(std::move(dev), "lo", 1);
  if (!r) return fail(r.error());
  ns.set_loopback_locked(*r);
  return ok();
}

bool Loopback::xmit(Device& dev, Frame&& f) const {
  // Linux: loopback_xmit: what is sent comes back in.
  receive(dev, std::move(f));
  return true;
}

void Loopback::install(Engine& engine) {
  static Loopback kind;
  engine.register_kind(kind);
  auto ctl = engine.control();
  auto r = ctl.add_pernet(kind);
  if (!r) engine.log(LogLevel::Error, "loopback: " + r.error().message);
}

}  // namespace ifcore::kinds
