// The macvlan kind: devices with their own address on a lower device (IFLA_LINK), in
// private, vepa, bridge, passthru or source mode; a macvlan on a macvlan attaches to the
// real lower; they follow their lower's mtu and carrier and die with it in one batch.
#pragma once

#include "ifcore/engine.h"

namespace ifcore::kinds {

class Macvlan final : public Kind {
 public:
  std::string_view name() const override { return "macvlan"; }
  bool can_change_proto_down() const override { return true; }  // macvlan_setup
  AttrPolicy policy() const override;
  Result<void> validate(Control& ctl, const LinkRequest& req) const override;
  Result<Device*> new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const override;
  Result<void> change_link(Control& ctl, Device& dev, const LinkRequest& req) const override;
  Undo save_link(Device& dev) const override;
  AttrList fill_info(const Device& dev) const override;
  std::uint32_t tso_max_size(const Device& dev) const override;
  std::uint32_t setup_tso_max_size() const override { return kLegacyTsoMaxSize; }
  Result<void> change_mtu(Control& ctl, Device& dev, std::uint32_t mtu) const override;
  Result<void> open(Control& ctl, Device& dev) const override;
  Result<void> check_address(const Device& dev, const HwAddr& addr) const override;
  bool xmit(Device& dev, Frame&& f) const override;
  void uninit(Control& ctl, Device& dev) const override;
  bool dies_with_lower() const override { return true; }

  // True if `dev` has macvlans on it (they own its receive path). Context: control lock.
  static bool has_macvlans(const Device& dev);

  static void install(Engine& engine);
};

}  // namespace ifcore::kinds
