// cli/nexthop_print.h — nexthops as ip prints them, shared by `ifc nexthop` (nexthop_cmd.cc),
// `ifc monitor` and `ifc -d route` (nexthop_print.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cli/client.h"
#include "rtnl/wire/nexthop.h"

namespace ifcore::cli {

// One nexthop without its line end (iproute2's __print_nexthop_entry): "Deleted ", id,
// group, type, resilient timers, via, dev, scope, blackhole, proto, flags, fdb. `key`: the
// JSON object's name inside another (nh_info), empty for an element of a listing.
void print_nexthop_entry(Ctx& c, const wire::NexthopMessage& n, bool deleted,
                         std::string_view key = {});
// The entry, its line end, and a flush of the output.
void print_nexthop_line(Ctx& c, const wire::NexthopMessage& n, bool deleted);
// One RTNL nexthop bucket message (RTM_NEWNEXTHOPBUCKET) and its line end.
void print_nexthop_bucket(Ctx& c, const wire::Message& m);
// RTM_GETNEXTHOP for one id (iproute2's __ipnh_get_id). Nothing when the target refuses:
// `err` and `ext` then say why. Errors: the transport's (status 2).
Result<std::optional<wire::NexthopMessage>> get_nexthop(Ctx& c, std::uint32_t id, int& err,
                                                        std::string& ext);

}  // namespace ifcore::cli
