// The vrf kind: an L3 master device (Linux's VRF) bound to one FIB table. Devices enslaved
// to it route in that table: the protocols ask `Kind::l3mdev_table` of a device or of its
// master and put the routes its addresses make there; lookups reach the table through the
// namespace's l3mdev rule (proto/l3mdev.cc adds it with the first vrf). A port is cycled
// down and up when it joins or leaves, so that its routes move between the tables.
#pragma once

#include "ifcore/engine.h"

namespace ifcore::kinds {

class Vrf final : public Kind {
 public:
  std::string_view name() const override { return "vrf"; }
  AttrPolicy policy() const override;
  AttrPolicy slave_policy() const override;
  Result<void> validate(Control& ctl, const LinkRequest& req) const override;
  Result<Device*> new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const override;
  Result<void> del_link(Control& ctl, Device& dev, UnregisterBatch& batch) const override;
  AttrList fill_info(const Device& dev) const override;
  AttrList fill_slave_info(const Device& master, const Device& port) const override;
  Result<void> add_port(Control& ctl, Device& master, Device& port) const override;
  Result<void> del_port(Control& ctl, Device& master, Device& port) const override;
  void uninit(Control& ctl, Device& dev) const override;
  std::uint32_t l3mdev_table(const Device& dev) const override;
  // Linux: vrf_setup sets NETIF_F_NETNS_LOCAL (netns_immutable).
  bool can_move_namespace() const override { return false; }

  static void install(Engine& engine);
};

}  // namespace ifcore::kinds
