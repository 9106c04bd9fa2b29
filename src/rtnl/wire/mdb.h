// rtnl/wire/mdb.h — RTM_NEWMDB / RTM_DELMDB / RTM_GETMDB: struct br_port_msg, the
// MDBA_SET_ENTRY / MDBA_GET_ENTRY requests (struct br_mdb_entry and its MDBE_ATTR_*), and
// the MDBA_MDB tables of dumps, gets and notifications in the layout of Linux's
// __mdb_fill_info (the br_mdb_entry without an attribute header, MDBA_MDB_EATTR_TIMER,
// MDBA_MDB_EATTR_SOURCE, MDBA_MDB_EATTR_RTPROT).
#pragma once

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_bridge.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "ifcore/mdb.h"
#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

// Linux 6.2+ uapi (if_bridge.h), newer than Debian's 6.1 headers.
inline constexpr std::uint16_t kMdbeAttrSrcList = 2;    // MDBE_ATTR_SRC_LIST
inline constexpr std::uint16_t kMdbeAttrGroupMode = 3;  // MDBE_ATTR_GROUP_MODE
inline constexpr std::uint16_t kMdbeAttrRtprot = 4;     // MDBE_ATTR_RTPROT
inline constexpr std::uint16_t kMdbaGetEntry = 1;       // MDBA_GET_ENTRY (6.8)
inline constexpr std::uint16_t kMdbaGetEntryAttrs = 2;  // MDBA_GET_ENTRY_ATTRS (6.8)

// A request's struct br_mdb_entry as sent (fields unchecked) and its attributes.
struct MdbRequest {
  std::int32_t bridge = 0;  // br_port_msg.ifindex
  bool has_entry = false;   // MDBA_SET_ENTRY (MDBA_GET_ENTRY) of the right size
  br_mdb_entry entry{};
  std::optional<std::vector<std::uint8_t>> source;  // MDBE_ATTR_SOURCE
  std::optional<std::uint8_t> rtprot;               // MDBE_ATTR_RTPROT
  bool has_group_mode = false, has_src_list = false;
};

// Decodes an RTM_NEWMDB / RTM_DELMDB (get: false) or RTM_GETMDB request (get: true), with
// the checks of Linux's policies (mdba_policy, mdba_get_policy, br_mdbe_attrs_pol) and of
// rtnl_validate_mdb_entry(_get).
// Errors: EINVAL for a short br_port_msg or malformed attributes; EINVAL with Linux's
// extack text for an entry it refuses ("Zero entry ifindex is not allowed", ...).
Result<MdbRequest> decode_mdb_request(const Message& m, bool get);

// The group a request names (struct br_ip): address, source and vlan.
mdb::Group mdb_group(const MdbRequest& r);

// One bridge's table (a dump's part: family 0) or a notification / get reply (family
// AF_BRIDGE): br_port_msg, then MDBA_MDB with one MDBA_MDB_ENTRY per group, whose
// MDBA_MDB_ENTRY_INFO nests each hold one entry; then, if there are any, MDBA_ROUTER with
// one MDBA_ROUTER_PORT per router port (Linux: br_rports_fill_info: the ifindex without an
// attribute header, MDBA_ROUTER_PATTR_TIMER, _TYPE, _INET_TIMER, _INET6_TIMER).
// Errors: EMSGSIZE from the builder.
Result<void> encode_mdb(MessageBuilder& b, const Header& h, std::uint8_t family, int bridge,
                        const std::vector<std::vector<mdb::Entry>>& groups,
                        const std::vector<mdb::Router>& routers = {});
// A router port's announcement (Linux: nlmsg_populate_rtr_fill): br_port_msg of family
// AF_BRIDGE, MDBA_ROUTER > MDBA_ROUTER_PORT holding the port's ifindex alone.
Result<void> encode_mdb_router(MessageBuilder& b, const Header& h, int bridge, int port);

}  // namespace ifcore::wire
