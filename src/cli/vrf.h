// cli/vrf.h — what the other commands ask about vrf devices (vrf_cmd.cc), as iproute2's
// ipvrf.c and iplink_vrf.c answer it.
#pragma once

#include <cstdint>
#include <string>

#include "cli/args.h"
#include "cli/client.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::cli {

// The table of vrf `name` (iproute2's ipvrf_get_table): 0 when it is no vrf; "default",
// when no device has that name, is table main. Errors: the transport's.
Result<std::uint32_t> vrf_table(Ctx& c, const std::string& name);
// Whether device `name` is a vrf (iproute2's name_is_vrf). Errors: the transport's.
Result<bool> name_is_vrf(Ctx& c, const std::string& name);
// `type vrf ...` words into IFLA_INFO_DATA (iproute2's vrf_parse_opt).
Result<void> parse_vrf(wire::MessageBuilder& b, Args& a);
// `ip vrf help`'s usage (exit 255).
tl::unexpected<Error> vrf_usage();
// `ifc vrf [show [NAME]]`.
Result<void> do_vrf(Ctx& c, Args& a);

}  // namespace ifcore::cli
