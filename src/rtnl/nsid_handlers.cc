// rtnl/nsid_handlers.cc — namespace ids: RTM_GETNSID, RTM_NEWNSID, RTM_DELNSID.
//
// An nsid is what one namespace calls another (Namespace::peer_id_locked): the session's
// namespace gives its peers ids when asked to (RTM_NEWNSID) or when a message must name one
// (rtnl/fill.cc), never when asked about one (RTM_GETNSID), as Linux does. Peers are named
// by IFCORE_NETNSA_NAME (the shim turns NETNSA_FD / NETNSA_PID into it) or by NETNSA_NSID.
//
// ifcore's extensions: RTM_NEWNSID with NLM_F_CREATE makes the namespace it names,
// RTM_DELNSID destroys it, and a dump that carries IFCORE_NETNSA_NAME lists every
// namespace (with the id the session's gives it, or -1), not only those with an id.
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <optional>

#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/wire/nsid.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl {

namespace {

// The offset of the request's attribute of `type` (for NLMSGERR_ATTR_OFFS), 0 if absent.
int attr_offset(const wire::Message& m, std::uint16_t type) {
  auto p = m.payload();
  std::size_t start = std::min<std::size_t>(NLMSG_ALIGN(sizeof(rtgenmsg)), p.size());
  auto attrs = wire::parse_raw_attrs(p.subspan(start), static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return 0;
  for (const wire::RawAttr& a : *attrs)
    if (a.type == type) return a.offset;
  return 0;
}

// One RTM_NEWNSID about `peer` as `view` sees it; `own` is the session's namespace, which
// adds NETNSA_CURRENT_NSID when it is not `view` (Linux: rtnl_net_fill with add_ref).
Result<void> emit_nsid(Request& r, std::uint16_t flags, const Namespace& view, const Namespace& own,
                       const Namespace& peer) {
  wire::NsidMessage n;
  n.nsid = view.peer_id_locked(peer);
  if (&view != &own) n.current_nsid = own.peer_id_locked(peer);
  n.name = peer.name();
  return emit(r.out, [&](wire::MessageBuilder& b) {
    return wire::encode_nsid(b, {RTM_NEWNSID, flags, r.seq(), r.port()}, n);
  });
}

Result<void> check_nsid_refs(const wire::NsidMessage& n) {
  if (!n.name && (n.pid || n.fd))
    return fail(EOPNOTSUPP, "namespaces by pid or fd are not supported: name the namespace");
  return ok();
}

// The peer a request names by IFCORE_NETNSA_NAME (ENOENT "Peer netns reference is
// invalid", as Linux answers a reference that finds nothing), else nullptr.
Result<Namespace*> peer_by_name(Request& r, Control& ctl, const wire::NsidMessage& n) {
  if (!n.name) return nullptr;
  Namespace* peer = ctl.find_namespace(*n.name);
  if (!peer)
    return wire::fail_at(attr_offset(r.m, wire::IFCORE_NETNSA_NAME), ENOENT,
                         "Peer netns reference is invalid");
  return peer;
}

// Linux: rtnl_net_dumpid — the peers `view` has given ids, in id order.
Result<void> dump_nsids(Request& r, Control& ctl, Namespace& own, const wire::NsidMessage& n) {
  Namespace* view = &own;
  if (r.s.strict_check()) {
    // Linux: rtnl_valid_dump_net_req.
    auto p = r.m.payload();
    std::size_t start = std::min<std::size_t>(NLMSG_ALIGN(sizeof(rtgenmsg)), p.size());
    auto attrs = wire::parse_raw_attrs(p.subspan(start), static_cast<int>(NLMSG_HDRLEN + start));
    if (!attrs) return fail(attrs.error());
    for (const wire::RawAttr& a : *attrs) {
      if (a.type == wire::IFCORE_NETNSA_NAME) continue;
      if (a.type != NETNSA_TARGET_NSID)
        return wire::fail_at(a.offset, EINVAL, "Unsupported attribute in dump request");
      view = own.peer_by_id_locked(a.s32().value_or(-1));
      if (!view) return wire::fail_at(a.offset, EINVAL, "Invalid target network namespace id");
    }
  }
  if (n.name) {
    // ifcore: every namespace by name (`ifc netns list`).
    for (Namespace* ns : ctl.namespaces()) {
      if (ns == &own) continue;
      IFCORE_TRY(emit_nsid(r, NLM_F_MULTI, *view, own, *ns));
    }
    return ok();
  }
  for (const auto& [id, peer] : view->peer_ids_locked())
    IFCORE_TRY(emit_nsid(r, NLM_F_MULTI, *view, own, *peer));
  return ok();
}

}  // namespace

Result<void> handle_getnsid(Request& r) {
  auto n = wire::decode_nsid(r.m);
  if (!n) return fail(n.error());
  Control ctl = r.s.hub().engine().control();
  auto own = session_ns(ctl, r.s);
  if (!own) return fail(own.error());
  if (r.dump()) {
    auto e = dump_nsids(r, ctl, **own, *n);
    if (!e) {
      end_dump(r, -e.error().code);
      return e;
    }
    end_dump(r);
    return ok();
  }
  // Linux: rtnl_net_getid — the peer by pid, fd or id; the answer is the id of the target
  // namespace (the session's, or NETNSA_TARGET_NSID's) for it, -1 when it has none: asking
  // gives none.
  IFCORE_TRY(check_nsid_refs(*n));
  auto named = peer_by_name(r, ctl, *n);
  if (!named) return fail(named.error());
  Namespace* peer = *named;
  if (!peer && n->nsid) {
    peer = (*own)->peer_by_id_locked(*n->nsid);
    if (!peer)
      return wire::fail_at(attr_offset(r.m, NETNSA_NSID), ENOENT,
                           "Peer netns reference is invalid");
  }
  if (!peer) return fail(EINVAL, "Peer netns reference is missing");
  Namespace* view = *own;
  if (n->target_nsid) {
    view = (*own)->peer_by_id_locked(*n->target_nsid);
    if (!view)
      return wire::fail_at(attr_offset(r.m, NETNSA_TARGET_NSID), EINVAL,
                           "Target netns reference is invalid");
  }
  return emit_nsid(r, 0, *view, **own, *peer);
}

// Linux: rtnl_net_newid — the session's namespace gives the peer the id NETNSA_NSID names,
// or the lowest free one for a negative id, and announces it on RTNLGRP_NSID with the
// request's seq and port id. ifcore: with NLM_F_CREATE, makes the namespace named instead.
Result<void> handle_newnsid(Request& r) {
  auto n = wire::decode_nsid(r.m);
  if (!n) return fail(n.error());
  IFCORE_TRY(check_nsid_refs(*n));
  Control ctl = r.s.hub().engine().control();
  if (r.flags() & NLM_F_CREATE) {
    if (!n->name) return fail(EINVAL, "namespace name is missing");
    auto made = ctl.create_namespace(*n->name);
    if (!made) return fail(made.error());
    return ok();
  }
  auto own = session_ns(ctl, r.s);
  if (!own) return fail(own.error());
  if (!n->nsid) return fail(EINVAL, "nsid is missing");
  auto named = peer_by_name(r, ctl, *n);
  if (!named) return fail(named.error());
  Namespace* peer = *named;
  if (!peer) return fail(EINVAL, "Peer netns reference is missing");
  int peer_at = attr_offset(r.m, wire::IFCORE_NETNSA_NAME);
  if ((*own)->peer_id_locked(*peer) >= 0)
    return wire::fail_at(peer_at, EEXIST, "Peer netns already has a nsid assigned");
  int nsid_at = attr_offset(r.m, NETNSA_NSID);
  if (*n->nsid >= 0 && (*own)->peer_by_id_locked(*n->nsid))
    return wire::fail_at(nsid_at, EEXIST, "The specified nsid is already used");
  ScopeGuard guard(r, ctl, (*own)->id());
  guard.scope().nsid_request = true;
  auto id = (*own)->assign_peer_id_locked(*peer, *n->nsid);
  if (!id) return fail(id.error());
  return ok();
}

// ifcore: RTM_DELNSID with IFCORE_NETNSA_NAME destroys a namespace and its devices. Linux
// has no RTM_DELNSID: without a name it is EOPNOTSUPP alone.
Result<void> handle_delnsid(Request& r) {
  auto n = wire::decode_nsid(r.m);
  if (!n) return fail(n.error());
  if (!n->name) return fail_log_only(EOPNOTSUPP, "RTM_DELNSID without a namespace name");
  Control ctl = r.s.hub().engine().control();
  Namespace* ns = ctl.find_namespace(*n->name);
  if (!ns) return fail(ENOENT, "namespace \"{}\" does not exist", *n->name);
  return ctl.destroy_namespace(*ns);
}

}  // namespace ifcore::rtnl
