// cli/link_build.h — internal to `ifc link`'s request building (link_build.cc,
// link_vxlan.cc).
#pragma once

#include "cli/commands.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::cli {

// The next word as an IPv4 or IPv6 address; `what` names it in the error.
Result<IpAddr> ip_value(Args& a, const char* what);
// `type vxlan ...` (`set_op`: of `link set`, where the VNI may be left out).
Result<void> parse_vxlan(Ctx& c, wire::MessageBuilder& b, Args& a, bool set_op);

}  // namespace ifcore::cli
