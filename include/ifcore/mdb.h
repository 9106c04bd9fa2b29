// ifcore/mdb.h — the bridge's multicast database: the groups its ports (and the bridge
// itself, a "host join") receive, as the user adds them (Linux: the ndo_mdb_add/del/dump/get
// operations behind rtnetlink's RTM_{NEW,DEL,GET}MDB: rtnl_mdb_add, rtnl_mdb_del,
// rtnl_mdb_dump, rtnl_mdb_get, and the bridge's br_mdb.c, br_multicast.c).
//
// ifcore's bridges snoop no traffic: the database holds what the user adds, kept as Linux
// keeps it (one entry per group, of vlan and source; in it the host join and one port group
// per port), permanent or temporary (the membership interval, then gone).
// Every function here runs under the control lock.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "ifcore/result.h"

namespace ifcore {

class Control;
class Namespace;

namespace mdb {

// A group as Linux keys it (struct br_ip): the protocol (ETH_P_IP, ETH_P_IPV6, host order;
// 0 for a layer-2 group), the group address (4, 16 or 6 bytes used), the source (zeros: any,
// a (*, G) group) and the vlan.
struct Group {
  std::uint16_t proto = 0;
  std::array<std::uint8_t, 16> dst{};
  std::array<std::uint8_t, 16> src{};
  std::uint16_t vid = 0;
  bool operator==(const Group&) const = default;
  bool has_source() const {
    for (std::uint8_t b : src)
      if (b) return true;
    return false;
  }
};

// One entry as Linux reports it (MDBA_MDB_ENTRY_INFO: struct br_mdb_entry and its
// attributes).
struct Entry {
  int ifindex = 0;         // the port, or the bridge itself for the host join
  std::uint8_t state = 0;  // MDB_PERMANENT or MDB_TEMPORARY
  std::uint8_t flags = 0;  // MDB_FLAGS_*
  Group group;
  std::uint32_t timer = 0;             // MDBA_MDB_EATTR_TIMER: 1/100 s left, 0 if none
  std::optional<std::uint8_t> rtprot;  // MDBA_MDB_EATTR_RTPROT: port groups only
};

// A router port (MDBA_ROUTER_PORT): one the user made a permanent router (mcast_router 2),
// in both families while it is enabled; ifcore hears no queries, so no timers run.
struct Router {
  int ifindex = 0;
  std::uint8_t type = 0;  // the port's mcast_router (MDBA_ROUTER_PATTR_TYPE)
};

// One bridge's database as its dump lists it: its groups, the newest first, each with its
// host join first, then its port groups; and its router ports (Linux: br_rports_fill_info,
// the newest port first, none while the bridge's own mcast_router is 0).
struct Table {
  int bridge = 0;
  std::vector<std::vector<Entry>> groups;
  std::vector<Router> routers;
};

// An RTM_NEWMDB / RTM_DELMDB request: br_port_msg's ifindex, MDBA_SET_ENTRY (checked by
// the caller as rtnl_validate_mdb_entry checks it) and its MDBA_SET_ENTRY_ATTRS.
struct Request {
  int bridge = 0;          // br_port_msg.ifindex
  bool has_entry = false;  // MDBA_SET_ENTRY was there
  int ifindex = 0;         // br_mdb_entry.ifindex: a port, or the bridge (a host join)
  std::uint8_t state = 0;
  Group group;
  std::optional<std::uint8_t> rtprot;  // MDBE_ATTR_RTPROT
  std::uint16_t nlflags = 0;           // NLM_F_REPLACE
};

// Linux: br_mdb_add. Errors: the kernel's errno and extack for each refusal (EOPNOTSUPP
// "Device does not support MDB operations" for a device that is not a bridge); nothing
// changes on error.
Result<void> add(Control& ctl, Namespace& ns, const Request& req);
// Linux: br_mdb_del (one port group or the host join). Errors: as add; EINVAL without a
// message for an entry that does not exist.
Result<void> del(Control& ctl, Namespace& ns, const Request& req);
// Linux: br_mdb_get: the entries of one group of bridge `bridge`. Errors: EOPNOTSUPP for a
// device that is not a bridge, ENOENT "MDB entry not found".
Result<std::vector<Entry>> get(Control& ctl, Namespace& ns, int bridge, const Group& g);
// Linux: rtnl_mdb_dump: every bridge of the namespace, by ifindex.
Result<std::vector<Table>> dump(Control& ctl, Namespace& ns);

// Hears every entry added or removed (RTNLGRP_MDB; `bridge` is the bridge's ifindex).
class Listener {
 public:
  virtual ~Listener() = default;
  virtual void on_mdb(Namespace& ns, int bridge, bool added, const Entry& e) = 0;
  // A port became a router port or stopped being one (Linux: br_rtr_notify).
  virtual void on_mdb_router(Namespace& ns, int bridge, bool added, int port) = 0;
};
// Context: control lock. The listener must outlive its registration.
void add_listener(Control& ctl, Listener& l);
void remove_listener(Control& ctl, Listener& l);

}  // namespace mdb
}  // namespace ifcore
