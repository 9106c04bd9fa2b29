// rtnl/wire/ifcore_msg.h — what ifcore's own messages (control, statistics, probe, sysctl,
// multicast lists) share: reading the attributes after their 4-byte rtgenmsg, and closing
// a message being built.
//
// Pure: bytes in, values out; no engine, no socket.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl {

// The attributes of `m` after its rtgenmsg, if `m` is of `type`. `what` names the message
// in errors. Errors: EINVAL "not an ifcore WHAT message", "WHAT message is truncated"; as
// wire::parse_raw_attrs.
Result<std::vector<wire::RawAttr>> ifcore_msg_attrs(const wire::Message& m, std::uint16_t type,
                                                    std::string_view what);

// Closes the message `b` is building. Errors: as wire::MessageBuilder::end.
Result<void> end_message(wire::MessageBuilder& b);

}  // namespace ifcore::rtnl
