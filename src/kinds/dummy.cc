// Dummy: Linux's dummy_setup values (IFF_NOARP, mtu 0..max, carrier on).
#include "kinds/dummy.h"

#include <net/if.h>

#include <linux/if.h>

namespace ifcore::kinds {

Result<std::unique_ptr<Device>> Dummy::prepare_link(Control& ctl, Namespace& ns,
                                                    const LinkRequest& req) const {
  auto dev = ctl.alloc_device(*this, ns);
  dev->set_flags_locked(ctl, (dev->flags() | IFF_NOARP) & ~IFF_MULTICAST);
  dev->set_mtu_range_locked(ctl, 0, 0);  // Linux: dummy has min_mtu 0, max_mtu 0 (no maximum)
  dev->set_operstate_locked(ctl, IF_OPER_UNKNOWN);
  IFCORE_TRY(ctl.apply_create_attrs(*dev, req));
  return dev;
}

Result<Device*> Dummy::new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const {
  auto dev = prepare_link(ctl, ns, req);
  if (!dev) return fail(dev.error());
  return ctl.register_device(std::move(*dev), req.name.value_or("dummy%d"), req.ifindex);
}

void Dummy::install(Engine& engine) {
  static Dummy kind;
  engine.register_kind(kind);
}

}  // namespace ifcore::kinds
