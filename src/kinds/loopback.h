// The loopback kind: one per namespace, made with it (ifindex 1), never deleted by a user.
#pragma once

#include "ifcore/engine.h"

namespace ifcore::kinds {

class Loopback final : public Kind, public PernetHooks {
 public:
  std::string_view name() const override { return "loopback"; }
  Result<Device*> new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const override;
  // Linux: loopback has no rtnl_link_ops dellink: RTM_DELLINK says EOPNOTSUPP.
  Result<void> del_link(Control& ctl, Device& dev, UnregisterBatch& batch) const override;
  bool can_move_namespace() const override { return false; }
  bool xmit(Device& dev, Frame&& f) const override;  // NETIF_F_NETNS_LOCAL

  // PernetHooks: make "lo" in every namespace.
  Result<void> init(Control& ctl, Namespace& ns) override;

  // Registers the kind and its pernet hook with `engine`.
  static void install(Engine& engine);
};

}  // namespace ifcore::kinds
