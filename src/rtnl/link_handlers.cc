// rtnl/link_handlers.cc — RTM_NEWLINK (with ifcore's create batch), RTM_SETLINK and
// RTM_DELLINK (with ifcore's bulk delete): decode, find the device, call the engine under
// one control lock.
//
// Lock order: each handler takes the control lock once (then Hub::mu_ through the
// notifications it causes).
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cerrno>

#include "ifcore/inet.h"
#include "ifcore/namespace.h"
#include "rtnl/fill.h"
#include "rtnl/handlers.h"
#include "rtnl/proto.h"
#include "rtnl/wire/attrs.h"
#include "rtnl/wire/bulk.h"
#include "rtnl/wire/bulk_create.h"
#include "rtnl/wire/link.h"

namespace ifcore::rtnl {

wire::DecodeContext decode_context(Control& ctl) {
  wire::DecodeContext c;
  c.kind_policy = [&ctl](std::string_view kind, bool slave) -> std::optional<AttrPolicy> {
    const Kind* k = ctl.find_kind(kind);
    if (!k) return std::nullopt;
    return slave ? k->slave_policy() : k->policy();
  };
  return c;
}

Device* find_device(Control& ctl, Namespace& ns, const LinkRequest& req) {
  if (req.ifindex > 0) return ctl.find(ns, req.ifindex);
  if (req.name) return ctl.find(ns, *req.name);
  if (req.alt_name) return ctl.find(ns, *req.alt_name);
  return nullptr;
}

namespace {

// Refuses what ifcore cannot honour: namespaces by pid or file descriptor.
Result<void> check_netns_refs(const LinkRequest& req) {
  if (req.net_ns_pid || req.net_ns_fd)
    return fail(EOPNOTSUPP, "namespaces by pid or fd are not supported: name the namespace");
  return ok();
}

// A peer that may write only in its session's namespace (the owner of a namespace it made,
// SessionOptions::may_write_elsewhere false) may not name another as a target, a peer's or a
// lower device's. Linux: rtnl_link_get_net_capable, and the checks of the peer's and the
// link's namespaces in rtnl_newlink, are EPERM without a message when the caller lacks
// CAP_NET_ADMIN over the namespace named.
Result<void> check_other_ns(const Request& r, Control& ctl, const Namespace& own,
                            const LinkRequest& req) {
  if (r.s.options().may_write_elsewhere) return ok();
  auto other = [&](const Namespace* n) { return n && n != &own; };
  if (req.net_ns_name && other(ctl.find_namespace(*req.net_ns_name))) return fail(EPERM);
  if (req.link_ns_name && other(ctl.find_namespace(*req.link_ns_name))) return fail(EPERM);
  if (req.net_ns_id && other(own.peer_by_id_locked(*req.net_ns_id))) return fail(EPERM);
  for (const Attr& a : req.info_data)
    if (a.shape == AttrShape::LinkMsg && a.link) IFCORE_TRY(check_other_ns(r, ctl, own, *a.link));
  return ok();
}

// Linux: rtnl_newlink — IFLA_LINK_NETNSID is an id the target namespace gives (the
// requester's unless the request names another), looked up before the device is, whatever
// the request then does with it: EINVAL "Unknown network namespace id" when nobody has it.
// The namespace found goes on by name (LinkRequest::link_ns_name).
Result<void> resolve_link_ns(Control& ctl, Namespace& own, LinkRequest& req) {
  req.link_ns_name.reset();  // never from the wire
  if (!req.link_netnsid) return ok();
  Namespace* target = &own;
  if (req.net_ns_name)
    target = ctl.find_namespace(*req.net_ns_name);
  else if (req.net_ns_id)
    target = own.peer_by_id_locked(*req.net_ns_id);
  if (!target) return ok();  // refused as such when the target is looked up
  Namespace* link = target->peer_by_id_locked(*req.link_netnsid);
  if (!link) return fail(EINVAL, "Unknown network namespace id");
  req.link_ns_name = link->name();
  return ok();
}

// Kind data of a change: decoded with the device's kind (Linux: rtnl_changelink hands
// IFLA_INFO_DATA to the device's own ops, and refuses another kind's).
Result<void> decode_change_data(Control& ctl, Device& dev, wire::DecodedLink& d) {
  LinkRequest& req = d.req;
  auto ctx = decode_context(ctl);
  if (req.has_info_data) {
    // Linux: rtnl_changelink — data for another kind (or a kind without changelink) is
    // EOPNOTSUPP without an extack message.
    if (req.kind && *req.kind != dev.kind().name())
      return fail_log_only(EOPNOTSUPP, "device \"{}\" is of kind \"{}\", not \"{}\"", dev.name(),
                           dev.kind().name(), *req.kind);
    if (!d.info_data_decoded) {
      auto a = wire::decode_attrs(d.info_data_raw, dev.kind().policy(), d.info_data_offset, ctx);
      if (!a) return fail(a.error());
      req.info_data = std::move(*a);
    }
  } else if (req.kind) {
    // A kind named without data changes nothing, but Linux's rtnl_newlink runs the named
    // kind's validate first (a vxlan's refuses a request without data).
    if (const Kind* named = ctl.find_kind(*req.kind)) IFCORE_TRY(named->validate(ctl, req));
    req.kind.reset();
  }
  if (req.has_slave_data) {
    Device* m = dev.master();
    // Linux: rtnl_changelink, no master ops with slave_changelink: EOPNOTSUPP alone.
    if (!m) return fail_log_only(EOPNOTSUPP, "device \"{}\" has no master", dev.name());
    if (!d.slave_data_decoded) {
      auto a =
          wire::decode_attrs(d.slave_data_raw, m->kind().slave_policy(), d.slave_data_offset, ctx);
      if (!a) return fail(a.error());
      req.slave_data = std::move(*a);
    }
  }
  return ok();
}

// Linux: inet6_validate_link_af — the mode must be one Linux knows; stable_privacy needs a
// stable secret, which ifcore does not keep (check_stable_privacy); `dev` (if any) must have
// IPv6 state. No extack message, as in Linux.
Result<void> check_af_spec(const Device* dev, const LinkRequest& req) {
  if (!req.inet6_addr_gen_mode && !req.inet6_token) return ok();
  std::optional<inet::Inet6Conf> conf;
  if (dev && !(conf = inet::link_af_info(*dev).conf6)) return fail(EAFNOSUPPORT);
  if (req.inet6_addr_gen_mode) {
    std::uint8_t mode = *req.inet6_addr_gen_mode;
    if (mode > IN6_ADDR_GEN_MODE_RANDOM) return fail(EINVAL);
    if (dev && mode == IN6_ADDR_GEN_MODE_STABLE_PRIVACY) return fail(EINVAL);
  }
  // Linux: inet6_set_iftoken (checked here, before anything changes; Linux checks when it
  // sets the token, after the request's other changes). ifcore keeps accept_ra at 1 and
  // rtr_solicits at its default, so RAs are refused only while the device forwards.
  if (dev && req.inet6_token) {
    if (dev->flags() & IFF_LOOPBACK) return fail(EINVAL, "ipv6: Device is loopback");
    if (dev->flags() & IFF_NOARP)
      return fail(EINVAL, "ipv6: Device does not do neighbour discovery");
    if (conf->forwarding) return fail(EINVAL, "ipv6: Router advertisement is disabled on device");
  }
  return ok();
}

// The link changes, then IFLA_AF_SPEC (Linux: do_setlink calls the families' set_link_af
// last, after checking them first, and then announces the device with RTM_NEWLINK).
Result<void> change_link(Hub& hub, Control& ctl, Device& dev, const LinkRequest& req) {
  IFCORE_TRY(check_af_spec(&dev, req));
  bool notify = false;
  IFCORE_TRY(ctl.change_link(dev, req, &notify));
  if (req.inet6_addr_gen_mode || req.inet6_token) {
    // Linux: inet6_set_link_af sets the token's interface identifier (its low 8 bytes) and
    // announces the device on RTNLGRP_IPV6_IFINFO, then the mode; the addresses stay as
    // they are (ifcore makes none from router advertisements, which the token is for).
    auto conf = inet::inet6_conf(ctl, dev.ns(), dev.ifindex());
    if (!conf) return fail(conf.error());
    if (req.inet6_token)
      std::copy(req.inet6_token->begin() + 8, req.inet6_token->end(), conf->token.begin());
    if (req.inet6_addr_gen_mode) conf->addr_gen_mode = *req.inet6_addr_gen_mode;
    IFCORE_TRY(inet::set_inet6_conf(ctl, dev.ns(), dev.ifindex(), *conf, inet::kCopyNone));
    if (req.inet6_token) hub.publish_inet6_link(dev);
    notify = true;  // DO_SETLINK_NOTIFY
  }
  // Linux: do_setlink's one netdev_state_change at the end, for an up device (NETDEV_CHANGE,
  // on which a bridge announces its port, then RTM_NEWLINK). What is not announced (a down
  // device's settings, the offload limits) the tap is given all the same.
  if (notify && dev.is_up())
    ctl.notify_change(dev);
  else
    hub.record_link(ctl, dev);
  return ok();
}

// Linux: do_setlink without the driver's ndo_set_vf_*, ndo_set_vf_port or ndo_set_config
// (no ifcore kind has them).
Result<void> check_driver_ops(const wire::DecodedLink& d, const Device& dev) {
  if (d.driver_ops)
    return fail_log_only(EOPNOTSUPP, "device \"{}\" takes no hardware driver's settings",
                         dev.name());
  return ok();
}

Result<void> change_existing(Hub& hub, Control& ctl, Device& dev, wire::DecodedLink& d) {
  IFCORE_TRY(check_driver_ops(d, dev));
  // Linux: do_setlink renames only for a name that is not empty.
  if (d.req.name && d.req.name->empty()) d.req.name.reset();
  IFCORE_TRY(check_netns_refs(d.req));
  IFCORE_TRY(decode_change_data(ctl, dev, d));
  return change_link(hub, ctl, dev, d.req);
}

// Linux: rtnl_group_changelink — every device of the group, stopping at the first error.
Result<void> change_group(Hub& hub, Control& ctl, Namespace& ns, wire::DecodedLink& d) {
  std::uint32_t group = *d.req.group;
  d.req.group.reset();
  IFCORE_TRY(check_netns_refs(d.req));
  for (Device* dev : ns.devices_locked()) {
    if (dev->group() != group) continue;
    wire::DecodedLink copy = d;
    IFCORE_TRY(check_driver_ops(copy, *dev));
    IFCORE_TRY(decode_change_data(ctl, *dev, copy));
    IFCORE_TRY(change_link(hub, ctl, *dev, copy.req));
  }
  return ok();
}

Result<void> create(Request& r, Control& ctl, ScopeGuard& guard, Namespace& ns,
                    wire::DecodedLink& d) {
  LinkRequest& req = d.req;
  IFCORE_TRY(check_create(r, ctl, ns, d));
  const Kind* kind = ctl.find_kind(*req.kind);
  // Linux: rtnl_newlink_create makes the device directly in the target namespace.
  Namespace* target = &ns;
  if (req.net_ns_name) {
    target = ctl.find_namespace(*req.net_ns_name);
    if (!target) return fail(EINVAL, "namespace \"{}\" does not exist", *req.net_ns_name);
  } else if (req.net_ns_id) {
    target = ns.peer_by_id_locked(*req.net_ns_id);
    // Linux: rtnl_newlink answers a missing IFLA_TARGET_NETNSID with EINVAL and no extack.
    if (!target) return fail_log_only(EINVAL, "Invalid target network namespace id");
  }
  // The kind sees net_ns_name still (a veth without peer data puts its peer where a
  // namespace named by pid or fd puts the device: Linux's rtnl_get_peer_net reads the
  // device's attributes then). IFLA_TARGET_NETNSID is done with.
  req.net_ns_id.reset();
  // Linux: rtnl_newlink_link_net — the link namespace is IFLA_LINK_NETNSID's, else the
  // requester's (a device made elsewhere links back to where it was asked for).
  Namespace* link = req.link_ns_name ? ctl.find_namespace(*req.link_ns_name) : &ns;
  if (!link || link == target)
    req.link_ns_name.reset();
  else
    req.link_ns_name = link->name();
  // Linux: rtnl_create_link names an unnamed device "<kind>%d".
  if (!req.name || req.name->empty()) req.name = std::string(kind->name()) + "%d";
  RequestScope& sc = guard.scope();
  sc.defer_new = true;
  auto made = ctl.create_link(*target, req);
  sc.defer_new = false;
  std::vector<Device*> created = std::move(sc.created);
  sc.created.clear();
  if (!made) return fail(made.error());
  // Linux: rtnl_configure_link announces each new device once, configured.
  for (Device* dev : created)
    if (dev->state() == RegState::Registered) r.s.hub().publish_link(ctl, *dev, RTM_NEWLINK, ~0u);
  return ok();
}

}  // namespace

// The checks of a create request before the engine sees it, and its kind data decoded.
Result<void> check_create(Request& r, Control& ctl, Namespace& ns, wire::DecodedLink& d,
                          const Kind* kind) {
  LinkRequest& req = d.req;
  // Linux: __rtnl_newlink — "Unknown device type" when no kind (or an unknown one) is named.
  if (!kind && req.kind) kind = ctl.find_kind(*req.kind);
  if (!kind) return fail(EOPNOTSUPP, "Unknown device type");
  IFCORE_TRY(check_netns_refs(req));
  // Linux: the families' attributes are checked before the device exists (EINVAL for a mode
  // it does not know), then again for the new device, which has no IPv6 state until it is
  // registered: a create with IFLA_AF_SPEC is EAFNOSUPPORT, and nothing is made.
  IFCORE_TRY(check_af_spec(nullptr, req));
  if (req.inet6_addr_gen_mode || req.inet6_token) return fail(EAFNOSUPPORT);
  if (req.has_info_data && !d.info_data_decoded) {
    auto a = wire::decode_attrs(d.info_data_raw, kind->policy(), d.info_data_offset,
                                decode_context(ctl));
    if (!a) return fail(a.error());
    req.info_data = std::move(*a);
  }
  IFCORE_TRY(resolve_link_ns(ctl, ns, req));
  return check_other_ns(r, ctl, ns, req);
}

// The results are written straight into datagrams of the reply's size, one builder's
// buffer each (10^4 results are 10^4 messages): a message that overflows the datagram is
// written again at the start of the next.
Result<void> send_bulk_results(Request& r, std::size_t n, std::uint16_t type,
                               const BulkResultOf& result) {
  r.out.flush();
  wire::MessageBuilder b(r.out.limit());
  b.reserve(r.out.limit());
  auto put = [&](auto&& encode) {
    return wire::put_filling(b, encode, [&](Datagram&& dg) { r.out.send_alone(std::move(dg)); });
  };
  wire::BulkResult scratch;
  for (std::size_t i = 0; i < n; ++i) {
    const wire::BulkResult& res = result(i, scratch);
    IFCORE_TRY(put([&] { return wire::encode_bulk_result(b, r.seq(), r.port(), res, type); }));
  }
  IFCORE_TRY(put([&] { return wire::encode_done(b, r.seq(), r.port(), 0); }));
  r.out.send_alone(b.take());
  return ok();
}

Result<void> send_bulk_results(Request& r, const std::vector<wire::BulkResult>& results,
                               std::uint16_t type) {
  return send_bulk_results(
      r, results.size(), type,
      [&](std::size_t i, wire::BulkResult&) -> const wire::BulkResult& { return results[i]; });
}

Result<void> handle_newlink(Request& r) {
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  wire::DecodeContext ctx = decode_context(ctl);
  auto bulk = wire::BulkCreateReader::open(r.m, ctx);
  if (!bulk) return fail(bulk.error());
  // Linux knows no such attribute; ifcore's batch is a create (NLM_F_CREATE) or nothing.
  if (*bulk && !(r.flags() & NLM_F_CREATE)) {
    IFCORE_TRY((*bulk)->check_rest());  // a malformed request is refused as such first
    return fail(EINVAL, "a create batch needs NLM_F_CREATE");
  }
  if (*bulk) return create_batch(r, ctl, **ns, **bulk);
  auto d = wire::decode_link_request(r.m, ctx);
  if (!d) return fail(d.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  LinkRequest& req = d->req;
  IFCORE_TRY(resolve_link_ns(ctl, **ns, req));
  // Linux: __rtnl_newlink — the device is named by index, else by name.
  bool link_specified = req.ifindex > 0 || req.name || req.alt_name;
  Device* dev = find_device(ctl, **ns, req);
  if (dev) {
    if (r.flags() & NLM_F_EXCL) return fail(EEXIST);
    if (r.flags() & NLM_F_REPLACE) return fail(EOPNOTSUPP);
    IFCORE_TRY(check_other_ns(r, ctl, **ns, req));
    return change_existing(r.s.hub(), ctl, *dev, *d);
  }
  if (!(r.flags() & NLM_F_CREATE)) {
    // `ip` probes with an empty RTM_NEWLINK and falls back to ioctls on anything but ENODEV.
    if (link_specified || !req.group) return fail(ENODEV);
    IFCORE_TRY(check_other_ns(r, ctl, **ns, req));
    return change_group(r.s.hub(), ctl, **ns, *d);
  }
  return create(r, ctl, guard, **ns, *d);
}

Result<void> handle_setlink(Request& r) {
  // Linux: PF_BRIDGE's RTM_SETLINK is rtnl_bridge_setlink (`bridge link set`).
  if (!r.m.payload().empty() && r.m.payload()[0] == AF_BRIDGE) return handle_bridge_setlink(r);
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  auto d = wire::decode_link_request(r.m, decode_context(ctl));
  if (!d) return fail(d.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  LinkRequest& req = d->req;
  // Linux: rtnl_setlink — by index or name, else EINVAL; do_setlink ignores IFLA_LINKINFO.
  if (req.ifindex <= 0 && !req.name && !req.alt_name) return fail(EINVAL);
  Device* dev = find_device(ctl, **ns, req);
  if (!dev) return fail(ENODEV);
  req.kind.reset();
  req.has_info_data = false;
  req.has_slave_data = false;
  req.slave_kind.reset();
  IFCORE_TRY(check_driver_ops(*d, *dev));
  IFCORE_TRY(check_netns_refs(req));
  IFCORE_TRY(check_other_ns(r, ctl, **ns, req));
  return change_link(r.s.hub(), ctl, *dev, req);
}

namespace {

Result<void> bulk_delete(Request& r, const wire::BulkDelete& bulk) {
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  std::vector<wire::BulkResult> results;
  {
    ScopeGuard guard(r, ctl, (*ns)->id());
    UnregisterBatch batch;
    results.reserve(bulk.items.size());
    for (std::size_t i = 0; i < bulk.items.size(); ++i) {
      const wire::BulkItem& it = bulk.items[i];
      wire::BulkResult res;
      res.index = static_cast<std::uint32_t>(i);
      Device* dev = nullptr;
      if (it.ifindex) {
        dev = ctl.find(**ns, static_cast<int>(*it.ifindex));
        if (!dev) res.message = fmt::format("no device with ifindex {}", *it.ifindex);
      } else if (it.name) {
        dev = ctl.find(**ns, *it.name);
        res.name = *it.name;
        if (!dev) res.message = fmt::format("device \"{}\" does not exist", *it.name);
      }
      if (!dev) {
        res.error = ENODEV;
      } else {
        res.ifindex = dev->ifindex();
        res.name = dev->name();
        auto q = ctl.queue_unregister(*dev, batch);
        if (!q) {
          res.error = q.error().code;
          res.message = q.error().message;
        }
      }
      results.push_back(std::move(res));
    }
    // One batch for every device (Linux: unregister_netdevice_many).
    ctl.commit(batch);
  }  // the echoed notifications go first
  // Like a dump: NLMSG_DONE, then the dispatcher's ACK if NLM_F_ACK was set.
  return send_bulk_results(r, results, RTM_DELLINK);
}

// Linux: rtnl_group_dellink — every device of the group in one batch; refused as a whole
// if one of them cannot be deleted; ENODEV when the group is empty.
// Group 0 (the default group) is EPERM before any device is looked at.
Result<void> delete_group(Control& ctl, Namespace& ns, std::uint32_t group) {
  if (group == 0) return fail(EPERM);
  std::vector<Device*> devs;
  for (Device* dev : ns.devices_locked())
    if (dev->group() == group) devs.push_back(dev);
  if (devs.empty()) return fail(ENODEV);
  return ctl.delete_links(devs);
}

}  // namespace

Result<void> handle_dellink(Request& r) {
  // Linux: PF_BRIDGE's RTM_DELLINK is rtnl_bridge_dellink (`bridge vlan del`).
  if (!r.m.payload().empty() && r.m.payload()[0] == AF_BRIDGE) return handle_bridge_dellink(r);
  auto bulk = wire::decode_bulk_delete(r.m);
  if (!bulk) return fail(bulk.error());
  if (*bulk) return bulk_delete(r, **bulk);
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  auto d = wire::decode_link_request(r.m, decode_context(ctl));
  if (!d) return fail(d.error());
  const LinkRequest& req = d->req;
  // Linux: rtnl_dellink looks the device up in the IFLA_TARGET_NETNSID namespace; a
  // missing one is EINVAL with no extack.
  if (req.net_ns_id) {
    Namespace* target = (*ns)->peer_by_id_locked(*req.net_ns_id);
    if (!target) return fail_log_only(EINVAL, "Invalid target network namespace id");
    ns = target;
  }
  ScopeGuard guard(r, ctl, (*ns)->id());
  // Linux: rtnl_dellink — by index, by name, else by group, else EINVAL.
  if (req.ifindex > 0 || req.name || req.alt_name) {
    Device* dev = find_device(ctl, **ns, req);
    if (!dev) return fail(ENODEV);
    return ctl.delete_link(*dev);
  }
  if (req.group) return delete_group(ctl, **ns, *req.group);
  return fail(EINVAL);
}

}  // namespace ifcore::rtnl
