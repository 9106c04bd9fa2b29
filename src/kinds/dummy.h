// The dummy kind: a device with carrier always on, that drops what it is sent.
#pragma once

#include "ifcore/engine.h"

namespace ifcore::kinds {

class Dummy final : public Kind {
 public:
  std::string_view name() const override { return "dummy"; }
  bool can_change_carrier() const override { return true; }  // dummy_change_carrier
  bool concurrent() const override { return true; }          // its device alone, nothing shared
  Result<Device*> new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const override;
  Result<std::unique_ptr<Device>> prepare_link(Control& ctl, Namespace& ns,
                                               const LinkRequest& req) const override;
  static void install(Engine& engine);
};

}  // namespace ifcore::kinds
