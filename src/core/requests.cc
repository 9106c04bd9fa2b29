// Whole requests, as RTM_NEWLINK and RTM_SETLINK carry them: create a device, or change
// many of its properties at once with an undo log, so that a failed request changes
// nothing.
//
// Lock order: runs under the control lock.
#include <net/if.h>

#include <cerrno>
#include <functional>

#include "core/engine_impl.h"
#include "core/registry.h"

namespace ifcore {

namespace {

// Linux: rtnl_dev_combine_flags.
std::uint32_t combine_flags(const Device& dev, const LinkRequest& req) {
  std::uint32_t flags = req.flags;
  if (req.change) flags = (flags & req.change) | (dev.flags() & ~req.change);
  return flags;
}

// Checks of generic attributes that need no device (Linux: validate_linkmsg).
Result<void> validate_generic(const LinkRequest& req) {
  if (req.name && !is_name_pattern(*req.name)) IFCORE_TRY(validate_device_name(*req.name));
  if (req.ifalias && req.ifalias->size() >= 256)
    return fail(EINVAL, "alias is longer than 255 bytes");
  return ok();
}

}  // namespace

Result<Device*> Control::create_link(Namespace& ns, const LinkRequest& req) {
  if (!req.kind) return fail(EOPNOTSUPP, "Unknown device type");
  const Kind* kind = find_kind(*req.kind);
  if (!kind) return fail(EOPNOTSUPP, "Unknown device type");
  IFCORE_TRY(validate_generic(req));
  if (req.master) {
    if (*req.master && !find(ns, static_cast<int>(*req.master)))
      return fail_log_only(EINVAL, "master device {} does not exist", *req.master);
  }
  IFCORE_TRY(kind->validate(*this, req));
  IFCORE_TRY(check_device_room(ns, 1));
  auto made = kind->new_link(*this, ns, req);
  if (!made) return made;
  Device& dev = **made;
  // Linux: rtnl_configure_link (flags), then the master.
  auto undo = [&](Error e) -> Result<Device*> {
    (void)delete_link(dev);
    return fail(std::move(e));
  };
  if (req.flags || req.change) {
    auto r = change_flags(dev, combine_flags(dev, req));
    if (!r) return undo(std::move(r).error());
  }
  if (req.master && *req.master) {
    Device* m = find(ns, static_cast<int>(*req.master));
    auto r = set_master(dev, m);
    if (!r) return undo(std::move(r).error());
  }
  return &dev;
}

namespace {

// What a batched create refuses before asking the kind: what needs more than one device's
// registration (a master, another namespace).
Result<void> check_batchable(const LinkRequest& req) {
  if (req.master && *req.master) return fail(EOPNOTSUPP, "a batched create cannot set a master");
  if (req.net_ns_name || req.net_ns_id)
    return fail(EOPNOTSUPP, "a batched create cannot name another namespace");
  return ok();
}

// Checks and prepares one request of a batch: the device, not registered.
Result<std::unique_ptr<Device>> prepare_one(Control& ctl, Namespace& ns, const LinkRequest& req) {
  const Kind* kind = req.kind ? ctl.find_kind(*req.kind) : nullptr;
  if (!kind) return fail(EOPNOTSUPP, "Unknown device type");
  IFCORE_TRY(check_batchable(req));
  IFCORE_TRY(validate_generic(req));
  IFCORE_TRY(kind->validate(ctl, req));
  auto dev = kind->prepare_link(ctl, ns, req);
  if (!dev) return dev;
  if (!*dev) return fail(EOPNOTSUPP, "kind \"{}\" cannot be created in a batch", kind->name());
  return dev;
}

}  // namespace

BatchResult Control::create_links(Namespace& ns, std::span<const LinkRequest> reqs) {
  RegisterBatch batch;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    auto dev = prepare_one(*this, ns, reqs[i]);
    if (!dev) return tl::unexpected(BatchError{i, std::move(dev).error()});
    std::string name = reqs[i].name.value_or(std::string(reqs[i].kind.value_or("")) + "%d");
    batch.add(std::move(*dev), std::move(name), reqs[i].ifindex);
  }
  auto devs = register_batch(batch);
  if (!devs) return devs;
  // Linux: rtnl_configure_link (flags) after registration; a refusal undoes the batch.
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    if (!reqs[i].flags && !reqs[i].change) continue;
    Device& d = *(*devs)[i];
    if (auto r = change_flags(d, combine_flags(d, reqs[i])); !r) {
      UnregisterBatch undo;
      for (Device* x : *devs) undo.add(*x);
      commit(undo);
      return tl::unexpected(BatchError{i, std::move(r).error()});
    }
  }
  return devs;
}

Result<void> Control::change_link(Device& dev, const LinkRequest& req) {
  // Validate everything that can be checked before changing anything.
  IFCORE_TRY(validate_generic(req));
  Namespace* target = nullptr;
  if (req.net_ns_name) {
    target = find_namespace(*req.net_ns_name);
    if (!target) return fail(EINVAL, "namespace \"{}\" does not exist", *req.net_ns_name);
  } else if (req.net_ns_id) {
    target = find_namespace_by_id(*req.net_ns_id);
    if (!target) return fail_log_only(EINVAL, "invalid target namespace id {}", *req.net_ns_id);
  }
  // Linux: validate_linkmsg refuses an address or a broadcast address shorter than the
  // device's with EINVAL alone.
  if (req.address && req.address->size() < dev.address().size())
    return fail_log_only(EINVAL, "address of {} bytes is shorter than the device's {}",
                         req.address->size(), dev.address().size());
  if (req.broadcast && req.broadcast->size() < dev.broadcast().size())
    return fail_log_only(EINVAL, "broadcast address of {} bytes is shorter than the device's {}",
                         req.broadcast->size(), dev.broadcast().size());
  Device* master = nullptr;
  if (req.master && *req.master) {
    master = find(dev.ns(), static_cast<int>(*req.master));
    if (!master) return fail_log_only(EINVAL, "master device {} does not exist", *req.master);
  }
  // Linux: rtnl_changelink, data for another kind: EOPNOTSUPP alone.
  if (req.kind && *req.kind != dev.kind().name())
    return fail_log_only(EOPNOTSUPP, "device \"{}\" is of kind \"{}\", not \"{}\"", dev.name(),
                         dev.kind().name(), *req.kind);
  if (req.has_info_data) IFCORE_TRY(dev.kind().validate(*this, req));
  // Linux: dev_change_carrier without ndo_change_carrier is EOPNOTSUPP alone;
  // do_set_proto_down explains its refusal.
  if (req.carrier && !dev.kind().can_change_carrier())
    return fail_log_only(EOPNOTSUPP, "device \"{}\" cannot change its carrier", dev.name());
  if (req.proto_down && !dev.kind().can_change_proto_down())
    return fail(EOPNOTSUPP, "Protodown not supported by device");

  // Apply in Linux's order (do_setlink), remembering how to undo each step. An undo that
  // fails is reported in the log with the request's error (the state may then differ).
  std::vector<std::function<Result<void>()>> undo;
  auto rollback = [&](Error e) -> Result<void> {
    for (auto it = undo.rbegin(); it != undo.rend(); ++it)
      if (auto u = (*it)(); !u)
        engine_->log(LogLevel::Error,
                     fmt::format("device \"{}\": undoing a change after \"{}\" failed: {}",
                                 dev.name(), e.message, u.error().message));
    return fail(std::move(e));
  };
#define IFCORE_STEP(expr, revert)                              \
  do {                                                         \
    auto step_r_ = (expr);                                     \
    if (!step_r_) return rollback(std::move(step_r_).error()); \
    undo.push_back(revert);                                    \
  } while (0)

  if (req.has_info_data) {
    Kind::Undo saved = dev.kind().save_link(dev);
    IFCORE_STEP(dev.kind().change_link(*this, dev, req),
                ([this, saved] { return saved ? saved(*this) : ok(); }));
  }
  if (target && target != &dev.ns()) {
    Namespace* from = &dev.ns();
    std::string old = dev.name();
    IFCORE_STEP(move_to_namespace(dev, *target, req.name.value_or("")),
                ([this, &dev, from, old] { return move_to_namespace(dev, *from, old); }));
  } else if (req.name) {
    std::string old = dev.name();
    IFCORE_STEP(rename(dev, *req.name), ([this, &dev, old] { return rename(dev, old); }));
  }
  if (req.address) {
    HwAddr old = dev.address();
    HwAddr next(req.address->bytes().first(dev.address().size()));
    IFCORE_STEP(set_address(dev, next), ([this, &dev, old] { return set_address(dev, old); }));
  }
  if (req.broadcast) {
    HwAddr old = dev.broadcast();
    IFCORE_STEP(set_broadcast(dev, *req.broadcast),
                ([this, &dev, old] { return set_broadcast(dev, old); }));
  }
  if (req.mtu) {
    std::uint32_t old = dev.mtu();
    IFCORE_STEP(set_mtu(dev, *req.mtu), ([this, &dev, old] { return set_mtu(dev, old); }));
  }
  if (req.group) {
    std::uint32_t old = dev.group();
    IFCORE_STEP(set_group(dev, *req.group), ([this, &dev, old] { return set_group(dev, old); }));
  }
  if (req.master) {
    Device* old = dev.master();
    IFCORE_STEP(set_master(dev, master), ([this, &dev, old] { return set_master(dev, old); }));
  }
  if (req.has_slave_data) {
    Device* m = dev.master();
    if (!m) return rollback(Error{EINVAL, fmt::format("device \"{}\" has no master", dev.name())});
    Kind::Undo saved = m->kind().save_slave(*m, dev);
    IFCORE_STEP(m->kind().change_slave(*this, *m, dev, req.slave_data),
                ([this, saved] { return saved ? saved(*this) : ok(); }));
  }
  if (req.flags || req.change) {
    std::uint32_t old = dev.flags();
    IFCORE_STEP(change_flags(dev, combine_flags(dev, req)),
                ([this, &dev, old] { return change_flags(dev, old); }));
  }
  if (req.txqlen) {
    std::uint32_t old = dev.txqlen();
    IFCORE_STEP(set_txqlen(dev, *req.txqlen), ([this, &dev, old] { return set_txqlen(dev, old); }));
  }
  if (req.ifalias) {
    std::string old = dev.alias();
    IFCORE_STEP(set_alias(dev, *req.ifalias), ([this, &dev, old] { return set_alias(dev, old); }));
  }
  if (req.link_mode && *req.link_mode != dev.link_mode()) {
    dev.set_link_mode_locked(*req.link_mode);
    notify_change(dev);
  }
  if (req.carrier) set_carrier(dev, *req.carrier != 0);  // dummy_change_carrier
  if (req.operstate) set_operstate(dev, *req.operstate);
#undef IFCORE_STEP
  return ok();
}

}  // namespace ifcore
