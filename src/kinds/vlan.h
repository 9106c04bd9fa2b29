// The vlan kind: 802.1Q / 802.1ad devices stacked on a lower device (IFLA_LINK), one per
// (protocol, id) and lower; they follow their lower's mtu, carrier and up/down state, and
// die with it in the same batch.
#pragma once

#include "ifcore/engine.h"

namespace ifcore::kinds {

class Vlan final : public Kind {
 public:
  std::string_view name() const override { return "vlan"; }
  bool can_change_proto_down() const override { return true; }  // vlan_setup
  AttrPolicy policy() const override;
  Result<void> validate(Control& ctl, const LinkRequest& req) const override;
  Result<Device*> new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const override;
  Result<void> change_link(Control& ctl, Device& dev, const LinkRequest& req) const override;
  Undo save_link(Device& dev) const override;
  AttrList fill_info(const Device& dev) const override;
  std::uint32_t tso_max_size(const Device& dev) const override;
  std::uint32_t setup_tso_max_size() const override { return kLegacyTsoMaxSize; }
  std::uint32_t needed_headroom(const Device& dev) const override;
  bool xmit(Device& dev, Frame&& f) const override;
  Result<void> open(Control& ctl, Device& dev) const override;
  void uninit(Control& ctl, Device& dev) const override;
  bool dies_with_lower() const override { return true; }
  bool closes_with_lower() const override { return true; }

  // Registers the kind and its subscriber (lower device events).
  static void install(Engine& engine);
};

}  // namespace ifcore::kinds
