// rtnl/handlers.h — internal: one function per RTM_* request, called by the session's
// dispatcher (session.cc). Each takes the control lock itself, writes its reply messages
// (data, dump parts, NLMSG_DONE) into the Request's Reply, and returns the error the
// dispatcher turns into NLMSG_ERROR; on success the dispatcher sends the ACK (NLM_F_ACK)
// unless the handler ended the exchange itself (`done`: dumps).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rtnl/hub.h"
#include "rtnl/wire/attrs.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {
struct BulkResult;
struct DecodedLink;
class BulkCreateReader;
}  // namespace ifcore::wire

namespace ifcore::rtnl {

struct Request {
  SessionImpl& s;
  const wire::Message& m;
  Reply& out;
  bool done = false;  // the handler ended the exchange (NLMSG_DONE): no ACK follows
  // Set by a dump's handler that refuses a family Linux registers no dump of: its error
  // is an NLMSG_ERROR, as rtnetlink_rcv_msg answers, not a dump's NLMSG_DONE.
  bool no_dumpit = false;
  // An extack message for the ACK of a request that succeeded (Linux: a warning the
  // parser left, e.g. "bytes leftover after parsing attributes"); sent only with ext_ack.
  std::string warning;
  // A dump's rest, when it stopped after a part (SessionOptions::dump_chunk_bytes).
  std::unique_ptr<DumpRest> rest;

  std::uint32_t port() const { return s.options().port_id; }
  std::uint32_t seq() const { return m.hdr.nlmsg_seq; }
  std::uint16_t flags() const { return m.hdr.nlmsg_flags; }
  bool dump() const { return (m.hdr.nlmsg_flags & NLM_F_DUMP) != 0; }
  // True once a dump sent in parts has sent its part's bytes.
  bool part_full() const {
    std::size_t part = s.options().dump_chunk_bytes;
    return part != 0 && out.bytes() >= part;
  }
};

// Takes the scope of a request on the hub for as long as the Control is held: the
// subscriber then knows who asked (NLM_F_ECHO) and which devices a create is making.
class ScopeGuard {
 public:
  ScopeGuard(Request& r, Control& ctl, int ns_id);
  ~ScopeGuard();
  RequestScope& scope() { return scope_; }
  // Sends the echoed notifications to the requester (after the Control is released or
  // before the ACK: either keeps Linux's order, the echo precedes the ACK).
  void flush_echo();

 private:
  Request& r_;
  RequestScope scope_;
};

// Namespace of the session, or ENOENT if it was destroyed. Context: control lock.
Result<Namespace*> session_ns(Control& ctl, const SessionImpl& s);

// Kind policies for the wire decoders, looked up under the control lock.
wire::DecodeContext decode_context(Control& ctl);
// The device a link request names: by ifindex (> 0), else by IFLA_IFNAME, else by
// IFLA_ALT_IFNAME; a name finds a device by its name or any of its altnames (Linux:
// rtnl_dev_get -> __dev_get_by_name). Context: control lock.
Device* find_device(Control& ctl, Namespace& ns, const LinkRequest& req);

// The checks of a create request before the engine sees it (kind, namespaces, address
// families), and its kind data decoded. `kind` is the request's kind when the caller has
// looked it up already (a create batch's items mostly name the same one), else nullptr.
// Context: control lock.
Result<void> check_create(Request& r, Control& ctl, Namespace& ns, wire::DecodedLink& d,
                          const Kind* kind = nullptr);
// A bulk request's per-item results (multipart, of `type`), then NLMSG_DONE: `result(i,
// scratch)` gives item i's, from a list or written into `scratch` (the same one each time,
// holding the last item's: assign every field).
using BulkResultOf =
    std::function<const wire::BulkResult&(std::size_t i, wire::BulkResult& scratch)>;
Result<void> send_bulk_results(Request& r, std::size_t n, std::uint16_t type,
                               const BulkResultOf& result);
Result<void> send_bulk_results(Request& r, const std::vector<wire::BulkResult>& results,
                               std::uint16_t type);
// ifcore's create batch (create_batch.cc), read from `bulk` as it is created.
Result<void> create_batch(Request& r, Control& ctl, Namespace& ns, wire::BulkCreateReader& bulk);

// Appends an encoded message to the reply: `encode(builder)` writes exactly one message.
template <class F>
Result<void> emit(Reply& out, F&& encode) {
  wire::MessageBuilder b;
  auto r = encode(b);
  if (!r) return r;
  out.append(b.bytes());
  return ok();
}
// Ends a dump: NLMSG_DONE with `error` (0, or the negative errno that stopped it).
void end_dump(Request& r, int error = 0, std::uint16_t flags = 0);
// Sends the first part of a dump kept in `rest` (all of it when the session takes dumps
// whole); when parts are left, the request keeps it for SessionImpl::continue_dump.
Result<void> start_dump(Request& r, std::unique_ptr<DumpRest> rest);
// The messages of a dump: `encode(builder, header, item)` writes one for each of `items`
// (the header is the dump's, NLM_F_MULTI, of type `type`); an encoding that fails ends
// the dump with its error. Does not end the dump (a dump of several lists calls it for
// each, then end_dump). Errors: the encoding's.
template <class Items, class F>
Result<void> dump_items(Request& r, std::uint16_t type, const Items& items, F&& encode) {
  for (const auto& x : items) {
    auto e = emit(r.out, [&](wire::MessageBuilder& b) {
      return encode(b, wire::Header{type, NLM_F_MULTI, r.seq(), r.port()}, x);
    });
    if (!e) {
      end_dump(r, -e.error().code);
      return e;
    }
  }
  return ok();
}
// Ends a dump that failed: NLMSG_DONE with the error and, for a client that asked for
// extended acks, its message (Linux: netlink_dump_done).
void end_dump_error(Request& r, const Error& e);

Result<void> handle_newlink(Request& r);
Result<void> handle_setlink(Request& r);
Result<void> handle_dellink(Request& r);
Result<void> handle_getlink(Request& r);
// Family AF_BRIDGE (bridge_link_handlers.cc): the bridge ports' dump, a port's settings.
Result<void> handle_bridge_getlink(Request& r);
Result<void> handle_bridge_setlink(Request& r);
Result<void> handle_bridge_dellink(Request& r);
// RTM_GETSTATS (link_stats_handlers.cc; not ifcore's own IFCORE_NLMSG_GETSTATS).
Result<void> handle_getlinkstats(Request& r);
Result<void> handle_newlinkprop(Request& r);
Result<void> handle_dellinkprop(Request& r);
Result<void> handle_getnsid(Request& r);
Result<void> handle_newaddr(Request& r);
Result<void> handle_deladdr(Request& r);
Result<void> handle_getaddr(Request& r);
Result<void> handle_newroute(Request& r);
Result<void> handle_delroute(Request& r);
Result<void> handle_getroute(Request& r);
Result<void> handle_newneigh(Request& r);
Result<void> handle_delneigh(Request& r);
Result<void> handle_getneigh(Request& r);
Result<void> handle_newrule(Request& r);
Result<void> handle_delrule(Request& r);
Result<void> handle_getrule(Request& r);
Result<void> handle_newnexthop(Request& r);
Result<void> handle_delnexthop(Request& r);
Result<void> handle_getnexthop(Request& r);
Result<void> handle_getnexthopbucket(Request& r);
Result<void> handle_getnetconf(Request& r);   // netconf_handlers.cc
Result<void> handle_getneightbl(Request& r);  // neightbl_handlers.cc
Result<void> handle_setneightbl(Request& r);
// RTM_NEWADDRLABEL and RTM_DELADDRLABEL; RTM_GETADDRLABEL (addrlabel_handlers.cc).
Result<void> handle_changeaddrlabel(Request& r);
Result<void> handle_getaddrlabel(Request& r);
Result<void> handle_newnsid(Request& r);
Result<void> handle_delnsid(Request& r);
// ifcore: IFCORE_NLMSG_GETSTATS (stats_msg.h) — the engine's statistics.
Result<void> handle_getstats(Request& r);
// ifcore: IFCORE_NLMSG_PROBE (probe_msg.h) — frames between two devices (probe_handler.cc).
Result<void> handle_probe(Request& r);
// ifcore: IFCORE_NLMSG_SYSCTL (sysctl_msg.h) — net.ipv{4,6}.conf.* (sysctl_handler.cc).
Result<void> handle_sysctl(Request& r);
// RTM_GETMULTICAST (maddr_handlers.cc), and ifcore's IFCORE_NLMSG_MADDR (maddr_msg.h).
Result<void> handle_getmulticast(Request& r);
Result<void> handle_maddr(Request& r);

}  // namespace ifcore::rtnl
