// ifcore/fdb.h — forwarding databases: the bridge's (learned, static and local entries of
// its ports and of itself), the vxlan device's own (remote endpoints by MAC address) and
// the addresses a device listens to (Linux: the ndo_fdb_add/del/dump/get operations behind
// rtnetlink's AF_BRIDGE neighbour messages: rtnl_fdb_add, rtnl_fdb_del, rtnl_fdb_dump,
// rtnl_fdb_get, br_fdb.c, vxlan_core.c, ndo_dflt_fdb_*).
//
// Entries are values in the shape of one rtnetlink message each; requests carry the
// message's fields. Every function here runs under the control lock.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ifcore/addr.h"
#include "ifcore/result.h"

namespace ifcore {

class Control;
class Device;
class Namespace;

namespace fdb {

// One forwarding entry as Linux reports it (struct ndmsg of family AF_BRIDGE + NDA_*).
struct Entry {
  int ifindex = 0;          // ndm_ifindex: the port, the bridge or the device itself
  std::uint16_t state = 0;  // NUD_PERMANENT (local), NUD_NOARP (static), NUD_REACHABLE...
  std::uint8_t flags = 0;   // NTF_SELF, NTF_EXT_LEARNED, NTF_STICKY, ...
  std::uint8_t type = 0;    // ndm_type (RTN_UNICAST for vxlan entries)
  HwAddr lladdr;            // NDA_LLADDR
  std::uint16_t vlan = 0;   // NDA_VLAN when not 0
  std::optional<std::uint32_t> master;     // NDA_MASTER (bridge entries)
  std::optional<std::uint32_t> flags_ext;  // NDA_FLAGS_EXT (bridge entries)
  std::optional<IpAddr> dst;               // NDA_DST (vxlan)
  std::optional<std::uint16_t> port;       // NDA_PORT, host order (vxlan)
  std::optional<std::uint32_t> vni;        // NDA_VNI (vxlan)
  std::optional<std::uint32_t> via;        // NDA_IFINDEX (vxlan)
  std::optional<std::uint32_t> src_vni;    // NDA_SRC_VNI (vxlan, collect_metadata)
  bool has_cacheinfo = false;              // NDA_CACHEINFO: used/updated in 1/100 s
  std::uint32_t used = 0, updated = 0;
};

// An RTM_NEWNEIGH / RTM_DELNEIGH / RTM_GETNEIGH request of family AF_BRIDGE.
struct Request {
  int ifindex = 0;  // ndm_ifindex
  std::uint16_t state = 0;
  std::uint8_t flags = 0;
  std::uint16_t nlflags = 0;  // NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE, NLM_F_APPEND
  std::optional<HwAddr> lladdr;
  std::optional<std::uint16_t> vlan;
  std::optional<IpAddr> dst;
  bool dst_bad = false;               // NDA_DST neither 4 nor 16 bytes long
  std::optional<std::uint16_t> port;  // host order
  std::optional<std::uint32_t> vni, src_vni, via, flags_ext, nh_id;
  std::optional<std::uint32_t> master;  // get: NDA_MASTER
  // A bulk delete's filters: only entries whose state (flags) under the mask equal the
  // request's ndm_state (ndm_flags) go (NDA_NDM_STATE_MASK, NDA_NDM_FLAGS_MASK).
  std::optional<std::uint16_t> state_mask;
  std::optional<std::uint8_t> flags_mask;
};

// Linux: rtnl_fdb_add: the bridge of a port (NTF_MASTER or no flag), then the device itself
// (NTF_SELF): the bridge, a vxlan device, or any Ethernet device's address lists.
// Errors: the kernel's errno and extack for each refusal; nothing changes on error.
Result<void> add(Control& ctl, Namespace& ns, const Request& req);
// Linux: rtnl_fdb_del (one entry).
Result<void> del(Control& ctl, Namespace& ns, const Request& req);
// Linux: rtnl_fdb_del with NLM_F_BULK (`bridge fdb flush`): every entry of a bridge (a
// port's, with `master` or NDA_IFINDEX; one vlan's with NDA_VLAN) or of a vxlan device
// whose state and flags match the request under its masks, each announced as it goes.
// Other devices have no bulk delete (EOPNOTSUPP, as Linux).
Result<void> flush(Control& ctl, Namespace& ns, const Request& req);
// Linux: rtnl_fdb_get.
Result<Entry> get(Control& ctl, Namespace& ns, const Request& req);

// The multicast addresses the protocols joined on a device, in the order they were joined
// (the rtnetlink face asks the protocols); a device's dump lists them as `self permanent`.
using GroupsOf = std::function<std::vector<HwAddr>(const Device& dev)>;
// Linux: rtnl_fdb_dump: every device by ifindex (or the one `brport`), its bridge's entries
// for it and its own; `br` keeps the bridge `br` and its ports. Errors: ENODEV for an
// unknown `br`.
Result<std::vector<Entry>> dump(Control& ctl, Namespace& ns, int br, int brport,
                                const GroupsOf& groups);

// Hears every entry made, changed or removed under the control lock (RTNLGRP_NEIGH).
// Entries the frame path learns (made, or moved to another port) are announced a moment
// later from the engine's timer thread, as the frame path cannot take the control lock.
class Listener {
 public:
  virtual ~Listener() = default;
  virtual void on_fdb(Namespace& ns, bool added, const Entry& e) = 0;
};
// Context: control lock. The listener must outlive its registration.
void add_listener(Control& ctl, Listener& l);
void remove_listener(Control& ctl, Listener& l);

// For the kinds: announces an entry to the listeners. Context: control lock.
void notify(Control& ctl, Namespace& ns, bool added, const Entry& e);

}  // namespace fdb
}  // namespace ifcore
