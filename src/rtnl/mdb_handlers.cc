// rtnl/mdb_handlers.cc — the bridges' multicast databases: RTM_NEWMDB / RTM_DELMDB /
// RTM_GETMDB (Linux: rtnl_mdb_add, rtnl_mdb_del, rtnl_mdb_get, rtnl_mdb_dump, registered
// for PF_BRIDGE) on top of ifcore/mdb.h, and their RTNLGRP_MDB notifications.
//
// Lock order: each handler takes the control lock once.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/hub.h"
#include "rtnl/mdb.h"
#include "rtnl/wire/mdb.h"

namespace ifcore::rtnl {

namespace {

bool is_kind(const Device& dev, std::string_view kind) {
  return dev.kind().name() == kind;
}

// Linux: rtnl_mdb_add / rtnl_mdb_del up to the device's operation (which ifcore/mdb.h's
// add and del check on).
Result<mdb::Request> set_request(const Request& r) {
  auto m = wire::decode_mdb_request(r.m, false);
  if (!m) return fail(m.error());
  if (!m->bridge) return fail(EINVAL, "Invalid ifindex");
  // ifcore: no source lists or filter modes (Linux keeps them for IGMPv3 / MLDv2).
  if (m->has_group_mode || m->has_src_list)
    return fail_log_only(EOPNOTSUPP, "mdb source lists and filter modes are not supported");
  mdb::Request q;
  q.bridge = m->bridge;
  q.has_entry = m->has_entry;
  q.ifindex = static_cast<int>(m->entry.ifindex);
  q.state = m->entry.state;
  q.group = wire::mdb_group(*m);
  q.rtprot = m->rtprot;
  q.nlflags = r.flags();
  return q;
}

// Linux: rtnl_mdb_valid_dump_req (strict checking only).
Result<void> check_dump(const Request& r) {
  if (!r.s.strict_check()) return ok();
  auto p = r.m.payload();
  if (p.size() < sizeof(br_port_msg)) return fail(EINVAL, "Invalid header for mdb dump request");
  br_port_msg bpm;
  std::memcpy(&bpm, p.data(), sizeof(bpm));
  if (bpm.ifindex)
    return fail(EINVAL, "Filtering by device index is not supported for mdb dump request");
  if (p.size() > NLMSG_ALIGN(sizeof(br_port_msg)))
    return fail(EINVAL, "Invalid data after header in mdb dump request");
  return ok();
}

Result<void> get_one(Request& r) {
  auto m = wire::decode_mdb_request(r.m, true);
  if (!m) return fail(m.error());
  if (!m->bridge) return fail(EINVAL, "Invalid ifindex");
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  Device* dev = ctl.find(**ns, m->bridge);
  if (!dev) return fail(ENODEV, "Device doesn't exist");
  if (!m->has_entry) return fail(EINVAL, "Missing MDBA_GET_ENTRY attribute");
  auto got = mdb::get(ctl, **ns, m->bridge, wire::mdb_group(*m));
  if (!got) return fail(got.error());
  return emit(r.out, [&](wire::MessageBuilder& b) {
    return wire::encode_mdb(b, {RTM_NEWMDB, 0, r.seq(), r.port()}, AF_BRIDGE, m->bridge, {*got});
  });
}

}  // namespace

void MdbPublisher::on_mdb(Namespace& ns, int bridge, bool added, const mdb::Entry& e) {
  // Linux: br_mdb_notify (nlmsg_populate_mdb_fill: family AF_BRIDGE, one entry).
  if (!hub_.wanted(ns.id(), RTNLGRP_MDB)) return;
  wire::Header h = hub_.notify_header(ns.id(), added ? RTM_NEWMDB : RTM_DELMDB);
  wire::MessageBuilder b;
  if (wire::encode_mdb(b, h, AF_BRIDGE, bridge, {{e}}))
    hub_.publish(ns.id(), RTNLGRP_MDB, b.bytes());
}

void MdbPublisher::on_mdb_router(Namespace& ns, int bridge, bool added, int port) {
  // Linux: br_rtr_notify.
  if (!hub_.wanted(ns.id(), RTNLGRP_MDB)) return;
  wire::Header h = hub_.notify_header(ns.id(), added ? RTM_NEWMDB : RTM_DELMDB);
  wire::MessageBuilder b;
  if (wire::encode_mdb_router(b, h, bridge, port)) hub_.publish(ns.id(), RTNLGRP_MDB, b.bytes());
}

Result<void> handle_newmdb(Request& r) {
  auto q = set_request(r);
  if (!q) return fail(q.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  return mdb::add(ctl, **ns, *q);
}

Result<void> handle_delmdb(Request& r) {
  // ifcore: no bulk deletion (Linux 6.7+: br_mdb_del_bulk) yet.
  if (r.flags() & NLM_F_BULK)
    return fail_log_only(EOPNOTSUPP, "bulk deletion of mdb entries is not supported");
  auto q = set_request(r);
  if (!q) return fail(q.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  return mdb::del(ctl, **ns, *q);
}

Result<void> handle_getmdb(Request& r) {
  if (!r.dump()) return get_one(r);
  IFCORE_TRY(check_dump(r));
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  auto tables = mdb::dump(ctl, **ns);
  if (!tables) return fail(tables.error());
  // Linux: every device with ndo_mdb_dump, by ifindex: a bridge's table (br_mdb_dump:
  // RTM_GETMDB, family 0) and a vxlan device's (vxlan_mdb_dump: RTM_NEWMDB, AF_BRIDGE; ifcore
  // keeps no vxlan MDB, so always empty).
  std::size_t next = 0;
  for (Device* dev : (*ns)->devices_locked()) {
    std::uint16_t type = RTM_GETMDB;
    std::uint8_t family = 0;
    static const std::vector<std::vector<mdb::Entry>> kNone;
    static const std::vector<mdb::Router> kNoRouters;
    const std::vector<std::vector<mdb::Entry>>* groups = &kNone;
    const std::vector<mdb::Router>* routers = &kNoRouters;
    if (next < tables->size() && (*tables)[next].bridge == dev->ifindex()) {
      routers = &(*tables)[next].routers;
      groups = &(*tables)[next++].groups;
    } else if (is_kind(*dev, "vxlan")) {
      type = RTM_NEWMDB;
      family = AF_BRIDGE;
    } else {
      continue;
    }
    auto x = emit(r.out, [&](wire::MessageBuilder& b) {
      return wire::encode_mdb(b, {type, NLM_F_MULTI, r.seq(), r.port()}, family, dev->ifindex(),
                              *groups, *routers);
    });
    if (!x) {
      end_dump(r, -x.error().code);
      return x;
    }
  }
  end_dump(r);
  return ok();
}

}  // namespace ifcore::rtnl
