// Default behaviour of a kind's optional hooks.
#include "ifcore/kind.h"

#include <cerrno>

#include "ifcore/engine.h"

namespace ifcore {

// The errors below are Linux's errno alone (log_only): rtnl_changelink refuses data for a
// kind without changelink, a master without slave_changelink, and do_set_master a device
// without ndo_add_slave/ndo_del_slave, all with EOPNOTSUPP and no extack message.
Result<std::unique_ptr<Device>> Kind::prepare_link(Control&, Namespace&, const LinkRequest&) const {
  return std::unique_ptr<Device>();
}

Result<void> Kind::change_link(Control&, Device& dev, const LinkRequest& req) const {
  if (req.has_info_data && !req.info_data.empty())
    return fail_log_only(EOPNOTSUPP, "kind \"{}\" cannot change its attributes", name());
  return ok();
}

Result<void> Kind::del_link(Control& ctl, Device& dev, UnregisterBatch& batch) const {
  batch.add(dev);
  return ok();
}

Result<void> Kind::change_slave(Control&, Device& master, Device&, const AttrList&) const {
  return fail_log_only(EOPNOTSUPP, "device \"{}\" has no port attributes", master.name());
}

Result<void> Kind::add_port(Control&, Device& master, Device&) const {
  return fail_log_only(EOPNOTSUPP, "device \"{}\" cannot be a master", master.name());
}

Result<void> Kind::del_port(Control&, Device& master, Device&) const {
  return fail_log_only(EOPNOTSUPP, "device \"{}\" cannot be a master", master.name());
}

void Kind::set_address(Control& ctl, Device& dev, const HwAddr& addr) const {
  dev.set_address_locked(ctl, addr);
}

int Kind::link_ifindex(const Device& dev) const {
  Device* l = dev.link();
  return l ? l->ifindex() : 0;
}

Namespace* Kind::link_ns(const Device& dev) const {
  Device* l = dev.link();
  return l ? &l->ns() : nullptr;
}

}  // namespace ifcore
