// The veth kind: a pair of devices made and deleted together, each the other's link,
// possibly in two namespaces; an end has carrier only while both ends are up.
#pragma once

#include "ifcore/engine.h"
#include "ifcore/frame.h"

namespace ifcore::kinds {

class Veth final : public Kind {
 public:
  std::string_view name() const override { return "veth"; }
  AttrPolicy policy() const override;
  Result<void> validate(Control& ctl, const LinkRequest& req) const override;
  Result<Device*> new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const override;
  Result<void> del_link(Control& ctl, Device& dev, UnregisterBatch& batch) const override;
  bool xmit(Device& dev, Frame&& f) const override;
  Result<void> open(Control& ctl, Device& dev) const override;
  void stop(Control& ctl, Device& dev) const override;
  void uninit(Control& ctl, Device& dev) const override;
  bool reports_iflink() const override { return true; }  // Linux: veth_get_iflink
  std::uint32_t needed_headroom(const Device& dev) const override;
  bool phony_headroom() const override { return true; }
  void set_rx_headroom(Control& ctl, Device& dev, std::uint32_t bytes) const override;

  // The other end, or nullptr once it is gone. Context: control lock.
  static Device* peer(const Device& dev);

  static void install(Engine& engine);
};

}  // namespace ifcore::kinds
