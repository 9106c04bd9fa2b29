// The bridge kind: a master whose ports join and leave with set_master; ports are released
// (not deleted) when the bridge goes; its mtu, address and carrier follow its ports.
#pragma once

#include "ifcore/engine.h"

namespace ifcore::kinds {

class Bridge final : public Kind {
 public:
  std::string_view name() const override { return "bridge"; }
  AttrPolicy policy() const override;
  AttrPolicy slave_policy() const override;
  Result<void> validate(Control& ctl, const LinkRequest& req) const override;
  Result<Device*> new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const override;
  Result<void> change_link(Control& ctl, Device& dev, const LinkRequest& req) const override;
  Undo save_link(Device& dev) const override;
  Undo save_slave(Device& master, const Device& port) const override;
  AttrList fill_info(const Device& dev) const override;
  std::uint32_t tso_max_size(const Device& dev) const override;
  std::uint32_t setup_tso_max_size() const override { return kLegacyTsoMaxSize; }
  std::uint32_t needed_headroom(const Device& dev) const override;
  AttrList fill_slave_info(const Device& master, const Device& port) const override;
  Result<void> change_slave(Control& ctl, Device& master, Device& port,
                            const AttrList& data) const override;
  Result<void> add_port(Control& ctl, Device& master, Device& port) const override;
  Result<void> del_port(Control& ctl, Device& master, Device& port) const override;
  Result<void> del_link(Control& ctl, Device& dev, UnregisterBatch& batch) const override;
  void set_address(Control& ctl, Device& dev, const HwAddr& addr) const override;
  Result<void> open(Control& ctl, Device& dev) const override;
  void stop(Control& ctl, Device& dev) const override;
  void uninit(Control& ctl, Device& dev) const override;
  bool xmit(Device& dev, Frame&& f) const override;
  // Forwarding entries learned (tests). Context: any thread.
  static std::size_t fdb_size(const Device& br);

  static void install(Engine& engine);
};

}  // namespace ifcore::kinds
