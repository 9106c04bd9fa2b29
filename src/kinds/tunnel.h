// The ipip and gre kinds: IPv4 tunnels with local, remote, ttl, tos, pmtudisc and (gre)
// keys, optionally bound to a lower device; one tunnel per (local, remote, key, link) in a
// namespace. The per-namespace fallback devices (tunl0, gre0) are not made.
#pragma once

#include "ifcore/engine.h"

namespace ifcore::kinds {

class Tunnel final : public Kind {
 public:
  enum class Flavor { Ipip, Gre };
  explicit Tunnel(Flavor f) : flavor_(f) {}

  std::string_view name() const override { return flavor_ == Flavor::Ipip ? "ipip" : "gre"; }
  // A new device is checked against the others of its kind (Namespace::devices_of_kind).
  bool listed_by_kind() const override { return true; }
  AttrPolicy policy() const override;
  Result<void> validate(Control& ctl, const LinkRequest& req) const override;
  Result<Device*> new_link(Control& ctl, Namespace& ns, const LinkRequest& req) const override;
  Result<void> change_link(Control& ctl, Device& dev, const LinkRequest& req) const override;
  Undo save_link(Device& dev) const override;
  AttrList fill_info(const Device& dev) const override;
  int link_ifindex(const Device& dev) const override;
  bool reports_iflink() const override { return true; }  // Linux: ip_tunnel_get_iflink

  static void install(Engine& engine);

 private:
  Flavor flavor_;
};

}  // namespace ifcore::kinds
