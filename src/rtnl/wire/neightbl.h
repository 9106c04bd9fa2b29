// rtnl/wire/neightbl.h — RTM_NEWNEIGHTBL / RTM_GETNEIGHTBL / RTM_SETNEIGHTBL: struct ndtmsg
// and its NDTA_* / NDTPA_* attributes (Linux: neightbl_fill_info, neightbl_fill_param_info,
// neightbl_set's parse, neightbl_valid_dump_info), in Linux's order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ifcore/neigh_table.h"
#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

// A table's message: NDTA_NAME, GC_INTERVAL, THRESH1-3, CONFIG, STATS (all zero: ifcore
// counts no allocations, lookups or probes) and the default NDTA_PARMS.
// Errors: EMSGSIZE from the builder.
Result<void> encode_neightbl(MessageBuilder& b, const Header& h, const inet::NeighTableInfo& t);

// A device's message: NDTA_NAME and NDTA_PARMS with NDTPA_IFINDEX.
// Errors: EMSGSIZE from the builder.
Result<void> encode_neightbl_parms(MessageBuilder& b, const Header& h, int family,
                                   std::string_view name, const inet::NeighParmsInfo& p);

// A decoded RTM_SETNEIGHTBL: the request, and the extack warning of a successful one.
struct NeighTblSet {
  inet::NeighTableRequest req;
  std::string warning;  // "bytes leftover after parsing attributes", or empty
};

// Reads RTM_SETNEIGHTBL as Linux's neightbl_set does, up to its lookups: the header, each
// attribute's policy, NDTA_NAME, the table of that name (and of ndtm_family, if not 0), then
// NDTA_PARMS's attributes. Errors: EINVAL "Invalid header length"; ERANGE "Attribute failed
// policy validation" (at the attribute, with its policy); EINVAL without NDTA_NAME; ENOENT
// for no such table.
Result<NeighTblSet> decode_neightbl_set(const Message& m);

// The family a RTM_GETNEIGHTBL dump asks for (rtgenmsg), after Linux's strict checks
// (neightbl_valid_dump_info) when `strict`. Errors: EINVAL "Invalid header for neighbor
// table dump request", "Invalid values in header ...", "Invalid data after header ...".
Result<int> check_neightbl_dump(const Message& m, bool strict);

}  // namespace ifcore::wire
