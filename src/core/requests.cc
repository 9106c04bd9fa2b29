// Whole requests, as RTM_NEWLINK and RTM_SETLINK carry them: create a device, or change
// many of its properties at once with an undo log, so that a failed request changes
// nothing.
//
// Lock order: runs under the control lock.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>

#include <algorithm>
#include <cerrno>
#include <functional>

#include "core/engine_impl.h"
#include "core/registry.h"

namespace ifcore {

namespace {

// Linux: rtnl_dev_combine_flags.
std::uint32_t combine_flags(const Device& dev, std::uint32_t flags, std::uint32_t change) {
  return LinkRequest::combine_link_flags(dev.flags(), flags, change);
}

// Checks of generic attributes that need no device (Linux: validate_linkmsg).
Result<void> validate_generic(const LinkRequest& req) {
  if (req.name && !is_name_pattern(*req.name)) IFCORE_TRY(validate_device_name(*req.name));
  if (req.ifalias && req.ifalias->size() >= 256)
    return fail(EINVAL, "alias is longer than 255 bytes");
  return ok();
}

// Linux: rtnl_create_link, after the kind's validate: 1 to 4096 queues each way.
Result<void> check_queues(const LinkRequest& req) {
  constexpr std::uint32_t kMaxQueues = 4096;
  auto bad = [&](const std::optional<std::uint32_t>& n) { return n && (!*n || *n > kMaxQueues); };
  if (bad(req.num_tx_queues)) return fail(EINVAL, "Invalid number of transmit queues");
  if (bad(req.num_rx_queues)) return fail(EINVAL, "Invalid number of receive queues");
  return ok();
}

}  // namespace

Result<Device*> Control::create_link(Namespace& ns, const LinkRequest& req) {
  IFCORE_TRY(check_covers(ns));
  if (!req.kind) return fail(EOPNOTSUPP, "Unknown device type");
  const Kind* kind = find_kind(*req.kind);
  if (!kind) return fail(EOPNOTSUPP, "Unknown device type");
  PluginGuard guard(*this, !kind->concurrent());  // the kind's own state
  IFCORE_TRY(validate_generic(req));
  if (req.master) {
    if (*req.master && !find(ns, static_cast<int>(*req.master)))
      return fail_log_only(EINVAL, "master device {} does not exist", *req.master);
  }
  IFCORE_TRY(kind->validate(*this, req));
  IFCORE_TRY(check_queues(req));
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
    auto r = change_flags(dev, combine_flags(dev, req.flags, req.change));
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
Result<std::unique_ptr<Device>> prepare_one(Control& ctl, Namespace& ns, const Kind* kind,
                                            const LinkRequest& req) {
  if (!kind) return fail(EOPNOTSUPP, "Unknown device type");
  IFCORE_TRY(check_batchable(req));
  IFCORE_TRY(validate_generic(req));
  IFCORE_TRY(kind->validate(ctl, req));
  IFCORE_TRY(check_queues(req));
  auto dev = kind->prepare_link(ctl, ns, req);
  if (!dev) return dev;
  if (!*dev) return fail(EOPNOTSUPP, "kind \"{}\" cannot be created in a batch", kind->name());
  return dev;
}

}  // namespace

namespace {

// A list of requests as a source.
class SpanSource final : public LinkRequestSource {
 public:
  explicit SpanSource(std::span<const LinkRequest> reqs) : reqs_(reqs) {}
  std::size_t size_hint() const override { return reqs_.size(); }
  Result<const LinkRequest*> next() override {
    return next_ < reqs_.size() ? &reqs_[next_++] : nullptr;
  }

 private:
  std::span<const LinkRequest> reqs_;
  std::size_t next_ = 0;
};

// The flags a request of the batch asks for, applied once the batch is registered.
struct FlagChange {
  std::size_t item;
  std::uint32_t flags;
  std::uint32_t change;
};

}  // namespace

BatchResult Control::create_links(Namespace& ns, std::span<const LinkRequest> reqs) {
  SpanSource source(reqs);
  return create_links(ns, source);
}

BatchResult Control::create_links(Namespace& ns, LinkRequestSource& source) {
  if (auto r = check_covers(ns); !r) return tl::unexpected(BatchError{std::nullopt, r.error()});
  // A kind's own state is guarded from the first request of a kind that is not concurrent
  // (PluginGuard is recursive and nothing else is held in between).
  std::optional<PluginGuard> guard;
  RegisterBatch batch;
  batch.reserve(source.size_hint());
  std::vector<FlagChange> flag_changes;
  const Kind* kind = nullptr;  // the last request's: looked up again only when it changes
  for (std::size_t i = 0;; ++i) {
    auto next = source.next();
    if (!next) return tl::unexpected(BatchError{i, std::move(next).error()});
    const LinkRequest* req = *next;
    if (!req) break;
    if (!req->kind)
      kind = nullptr;
    else if (!kind || kind->name() != *req->kind)
      kind = find_kind(*req->kind);
    if ((!kind || !kind->concurrent()) && !guard) guard.emplace(*this);
    auto dev = prepare_one(*this, ns, kind, *req);
    if (!dev) return tl::unexpected(BatchError{i, std::move(dev).error()});
    if (req->flags || req->change) flag_changes.push_back({i, req->flags, req->change});
    std::string name = req->name ? *req->name : std::string(req->kind.value_or("")) + "%d";
    batch.add(std::move(*dev), std::move(name), req->ifindex);
  }
  auto devs = register_batch(batch);
  if (!devs) return devs;
  // Linux: rtnl_configure_link (flags) after registration; a refusal undoes the batch.
  for (const FlagChange& f : flag_changes) {
    Device& d = *(*devs)[f.item];
    if (auto r = change_flags(d, combine_flags(d, f.flags, f.change)); !r) {
      UnregisterBatch undo;
      for (Device* x : *devs) undo.add(*x);
      commit(undo);
      return tl::unexpected(BatchError{f.item, std::move(r).error()});
    }
  }
  return devs;
}

namespace {

// What a change names besides the device: the namespace it moves to, its new master.
struct ChangeTargets {
  Namespace* ns = nullptr;
  Device* master = nullptr;
};

// Everything that can be checked before anything changes (Linux: validate_linkmsg and the
// checks at the top of do_setlink).
Result<ChangeTargets> check_link_change(Control& ctl, Device& dev, const LinkRequest& req) {
  IFCORE_TRY(validate_generic(req));
  ChangeTargets t;
  if (req.net_ns_name) {
    t.ns = ctl.find_namespace(*req.net_ns_name);
    if (!t.ns) return fail(EINVAL, "namespace \"{}\" does not exist", *req.net_ns_name);
  } else if (req.net_ns_id) {
    // Linux: the id is the device's namespace's name for the target (get_net_ns_by_id).
    t.ns = dev.ns().peer_by_id_locked(*req.net_ns_id);
    if (!t.ns) return fail_log_only(EINVAL, "invalid target namespace id {}", *req.net_ns_id);
  }
  // Linux: validate_linkmsg refuses an address or a broadcast address shorter than the
  // device's with EINVAL alone.
  if (req.address && req.address->size() < dev.address().size())
    return fail_log_only(EINVAL, "address of {} bytes is shorter than the device's {}",
                         req.address->size(), dev.address().size());
  if (req.broadcast && req.broadcast->size() < dev.broadcast().size())
    return fail_log_only(EINVAL, "broadcast address of {} bytes is shorter than the device's {}",
                         req.broadcast->size(), dev.broadcast().size());
  IFCORE_TRY(check_offload_limits(req, dev.kind().tso_max_size(dev)));
  if (req.master && *req.master) {
    t.master = ctl.find(dev.ns(), static_cast<int>(*req.master));
    if (!t.master) return fail_log_only(EINVAL, "master device {} does not exist", *req.master);
  }
  // Linux: rtnl_changelink, data for another kind: EOPNOTSUPP alone.
  if (req.kind && *req.kind != dev.kind().name())
    return fail_log_only(EOPNOTSUPP, "device \"{}\" is of kind \"{}\", not \"{}\"", dev.name(),
                         dev.kind().name(), *req.kind);
  if (req.has_info_data) IFCORE_TRY(dev.kind().validate(ctl, req));
  // Linux: dev_change_carrier without ndo_change_carrier is EOPNOTSUPP alone;
  // do_set_proto_down explains its refusal.
  if (req.carrier && !dev.kind().can_change_carrier())
    return fail_log_only(EOPNOTSUPP, "device \"{}\" cannot change its carrier", dev.name());
  if ((req.proto_down || req.proto_down_reason) && !dev.kind().can_change_proto_down())
    return fail(EOPNOTSUPP, "Protodown not supported by device");
  // Linux: do_set_proto_down sets the reasons first, then refuses to clear protodown.
  std::uint32_t reason = dev.proto_down_reason();
  if (req.proto_down_reason) reason = req.proto_down_reason->apply(reason);
  if (req.proto_down && !*req.proto_down && reason)
    return fail(EBUSY, "Cannot clear protodown, active reasons");
  return t;
}

// The steps of a change made so far, each with its undo: a step that fails has the ones
// before it undone, in reverse. An undo that fails is reported in the log with the
// request's error (the state may then differ).
class UndoLog {
 public:
  UndoLog(Control& ctl, Device& dev) : ctl_(ctl), dev_(dev) {}
  using Revert = std::function<Result<void>()>;
  // Keeps `revert` if `r` succeeded; otherwise rolls back and returns the error.
  Result<void> step(Result<void> r, Revert revert) {
    if (!r) return rollback(std::move(r).error());
    undo_.push_back(std::move(revert));
    return ok();
  }
  Result<void> rollback(Error e) {
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it)
      if (auto u = (*it)(); !u)
        ctl_.engine().log(LogLevel::Error,
                          fmt::format("device \"{}\": undoing a change after \"{}\" failed: {}",
                                      dev_.name(), e.message, u.error().message));
    undo_.clear();
    return fail(std::move(e));
  }

 private:
  Control& ctl_;
  Device& dev_;
  std::vector<Revert> undo_;
};

// The kind's data, the namespace or the name, the addresses (do_setlink's first steps).
Result<void> change_identity(Control& ctl, Device& dev, const LinkRequest& req,
                             const ChangeTargets& t, UndoLog& log, bool& notify) {
  if (req.has_info_data) {
    notify = true;  // Linux: rtnl_changelink's DO_SETLINK_NOTIFY
    Kind::Undo saved = dev.kind().save_link(dev);
    IFCORE_TRY(log.step(dev.kind().change_link(ctl, dev, req),
                        [&ctl, saved] { return saved ? saved(ctl) : ok(); }));
  }
  if (t.ns && t.ns != &dev.ns()) {
    Namespace* from = &dev.ns();
    std::string old = dev.name();
    IFCORE_TRY(
        log.step(ctl.move_to_namespace(dev, *t.ns, req.name.value_or("")),
                 [&ctl, &dev, from, old] { return ctl.move_to_namespace(dev, *from, old); }));
  } else if (req.name) {
    std::string old = dev.name();
    IFCORE_TRY(
        log.step(ctl.rename(dev, *req.name), [&ctl, &dev, old] { return ctl.rename(dev, old); }));
  }
  if (req.address) {
    HwAddr old = dev.address();
    HwAddr next(req.address->bytes().first(dev.address().size()));
    IFCORE_TRY(log.step(ctl.set_address(dev, next),
                        [&ctl, &dev, old] { return ctl.set_address(dev, old); }));
  }
  if (req.broadcast) {
    HwAddr old = dev.broadcast();
    IFCORE_TRY(log.step(ctl.set_broadcast(dev, *req.broadcast),
                        [&ctl, &dev, old] { return ctl.set_broadcast(dev, old); }));
  }
  return ok();
}

// The mtu, the group, the master and the port's data (do_setlink's middle steps).
Result<void> change_placement(Control& ctl, Device& dev, const LinkRequest& req,
                              const ChangeTargets& t, UndoLog& log, bool& notify) {
  if (req.mtu) {
    std::uint32_t old = dev.mtu();
    IFCORE_TRY(
        log.step(ctl.set_mtu(dev, *req.mtu), [&ctl, &dev, old] { return ctl.set_mtu(dev, old); }));
  }
  if (req.group) {
    // Linux: announced at the end, changed or not (netif_set_group, DO_SETLINK_NOTIFY).
    std::uint32_t old = dev.group();
    dev.set_group_locked(ctl, *req.group);
    notify = true;
    IFCORE_TRY(log.step(ok(), [&ctl, &dev, old] { return ctl.set_group(dev, old); }));
  }
  if (req.master) {
    Device* old = dev.master();
    IFCORE_TRY(log.step(ctl.set_master(dev, t.master),
                        [&ctl, &dev, old] { return ctl.set_master(dev, old); }));
  }
  if (req.has_slave_data) {
    notify = true;
    Device* m = dev.master();
    if (!m)
      return log.rollback(Error{EINVAL, fmt::format("device \"{}\" has no master", dev.name())});
    Kind::Undo saved = m->kind().save_slave(*m, dev);
    IFCORE_TRY(log.step(m->kind().change_slave(ctl, *m, dev, req.slave_data),
                        [&ctl, saved] { return saved ? saved(ctl) : ok(); }));
  }
  return ok();
}

// The flags, the queue length and the alias (do_setlink's last undoable steps).
Result<void> change_settings(Control& ctl, Device& dev, const LinkRequest& req, UndoLog& log,
                             bool& notify) {
  if (req.flags || req.change) {
    std::uint32_t old = dev.flags();
    IFCORE_TRY(log.step(ctl.change_flags(dev, combine_flags(dev, req.flags, req.change)),
                        [&ctl, &dev, old] { return ctl.change_flags(dev, old); }));
  }
  if (req.txqlen) {
    std::uint32_t old = dev.txqlen();
    IFCORE_TRY(log.step(ctl.set_txqlen(dev, *req.txqlen),
                        [&ctl, &dev, old] { return ctl.set_txqlen(dev, old); }));
  }
  OffloadLimits limits = apply_offload_limits(dev.offload_limits_locked(), req);
  if (limits != dev.offload_limits_locked()) {
    OffloadLimits old = dev.offload_limits_locked();
    IFCORE_TRY(log.step(ctl.set_offload_limits(dev, limits),
                        [&ctl, &dev, old] { return ctl.set_offload_limits(dev, old); }));
  }
  if (req.ifalias) {
    // Linux: announced at the end, changed or not (dev_set_alias, DO_SETLINK_NOTIFY).
    if (req.ifalias->size() >= 256)
      return log.rollback(Error{EINVAL, "alias is longer than 255 bytes"});
    std::string old = dev.alias();
    dev.set_alias_locked(ctl, *req.ifalias);
    notify = true;
    IFCORE_TRY(log.step(ok(), [&ctl, &dev, old] { return ctl.set_alias(dev, old); }));
  }
  return ok();
}

// Linux: set_operstate (IFLA_OPERSTATE) — a transition, not a value: UP from DORMANT,
// TESTING or UNKNOWN; TESTING and DORMANT only while operationally up; others ignored.
void apply_operstate(Control& ctl, Device& dev, std::uint8_t transition) {
  std::uint8_t op = dev.operstate();
  const bool oper_up = op == IF_OPER_UP || op == IF_OPER_UNKNOWN;
  switch (transition) {
    case IF_OPER_UP:
      if (op == IF_OPER_DORMANT || op == IF_OPER_TESTING || op == IF_OPER_UNKNOWN) op = IF_OPER_UP;
      break;
    case IF_OPER_TESTING:
    case IF_OPER_DORMANT:
      if (oper_up) op = transition;
      break;
    default:
      break;
  }
  ctl.set_operstate(dev, op);
}

}  // namespace

Result<void> Control::change_link(Device& dev, const LinkRequest& req, bool* state_changed) {
  IFCORE_TRY(check_covers(dev));
  auto t = check_link_change(*this, dev, req);
  if (!t) return fail(std::move(t).error());
  if (t->ns) IFCORE_TRY(check_engine_wide("moving a device to another namespace"));
  if (t->master) IFCORE_TRY(check_covers(*t->master));
  // The kind's (and a master's) own state.
  PluginGuard guard(*this,
                    !dev.kind().concurrent() || (t->master && !t->master->kind().concurrent()));
  // Applied in Linux's order (do_setlink), each step with its undo.
  UndoLog log(*this, dev);
  // Linux: do_setlink's DO_SETLINK_NOTIFY — one netdev_state_change at the end.
  bool notify = false;
  IFCORE_TRY(change_identity(*this, dev, req, *t, log, notify));
  IFCORE_TRY(change_placement(*this, dev, req, *t, log, notify));
  IFCORE_TRY(change_settings(*this, dev, req, log, notify));
  // What follows cannot fail.
  if (req.link_mode && *req.link_mode != dev.link_mode()) {
    dev.set_link_mode_locked(*this, *req.link_mode);
    notify = true;
  }
  if (req.carrier) set_carrier(dev, *req.carrier != 0);  // dummy_change_carrier
  if (req.operstate) apply_operstate(*this, dev, *req.operstate);
  if (req.proto_down || req.proto_down_reason) {
    std::optional<bool> down;
    if (req.proto_down) down = *req.proto_down != 0;
    set_proto_down(dev, down, req.proto_down_reason, false);
    notify = true;
  }
  if (state_changed)
    *state_changed = notify;
  else if (notify)
    notify_change(dev);
  return ok();
}

}  // namespace ifcore
