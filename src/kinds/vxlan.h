// The vxlan kind: a VXLAN tunnel endpoint (VNI, remote or group, local, lower device, UDP
// ports, TTL/TOS/DF/flow label, learning and the rest of Linux's configuration), with
// Linux's checks, the attributes that may change after creation and those that may not
// (EOPNOTSUPP), and its death with its lower device. ifcore sends no UDP: frames sent on a
// vxlan device leave it.
#pragma once

#include "ifcore/engine.h"

namespace ifcore::kinds {

class Vxlan final : public Kind, public PernetHooks {
 public:
  std::string_view name() const override { return "vxlan"; }
  // A new device is checked against the others of its kind (Namespace::devices_of_kind).
  bool listed_by_kind() const override { return true; }
  AttrPolicy policy() const override;
  Result<void> validate(Control& ctl, const LinkRequest& req) const override;
  Result<Device*> new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const override;
  Result<void> change_link(Control& ctl, Device& dev, const LinkRequest& req) const override;
  Undo save_link(Device& dev) const override;
  AttrList fill_info(const Device& dev) const override;
  std::uint32_t tso_max_size(const Device& dev) const override;
  std::uint32_t setup_tso_max_size() const override { return kLegacyTsoMaxSize; }
  std::uint32_t needed_headroom(const Device& dev) const override;
  Result<void> change_mtu(Control& ctl, Device& dev, std::uint32_t mtu) const override;
  Result<void> open(Control& ctl, Device& dev) const override;
  void stop(Control& ctl, Device& dev) const override;
  Result<void> del_link(Control& ctl, Device& dev, UnregisterBatch& batch) const override;
  void uninit(Control& ctl, Device& dev) const override;
  bool dies_with_lower() const override { return true; }
  // The link namespace (VxlanPriv::net), reported as IFLA_LINK_NETNSID when elsewhere.
  Namespace* link_ns(const Device& dev) const override;
  // PernetHooks: each namespace's list of the devices it is the link namespace of
  // (vx::net_devices); the devices elsewhere whose link namespace goes die with it (Linux:
  // vxlan_exit_batch_rtnl).
  Result<void> init(Control& ctl, Namespace& ns) override;
  void pre_exit(Control& ctl, Namespace& ns) override;
  bool can_change_proto_down() const override { return true; }  // vxlan_setup

  static void install(Engine& engine);
};

}  // namespace ifcore::kinds
