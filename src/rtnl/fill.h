// rtnl/fill.h — internal: a device as the RTM_NEWLINK / RTM_DELLINK Linux would send about
// it (Linux: rtnl_fill_ifinfo), for replies, dumps and notifications.
#pragma once

#include <cstdint>

#include "ifcore/device.h"
#include "rtnl/wire/link.h"

namespace ifcore::rtnl {

// The message about `dev`; `change` is ifi_change (~0 for register/unregister, the changed
// IFF_* bits for flag changes, 0 for replies and dumps); `ext_mask` is the request's
// IFLA_EXT_MASK (RTEXT_FILTER_SKIP_STATS leaves the counters out). `viewer` is the namespace
// the message is for (the requester's; the device's own when nullptr, as for notifications):
// a link device elsewhere is named by the id `viewer` gives its namespace, given now if it
// has none (Linux: rtnl_fill_link_netnsid with peernet2id_alloc).
// Context: control lock, one that covers `viewer`.
wire::LinkMessage link_message(const Device& dev, std::uint32_t change, std::uint32_t ext_mask,
                               Namespace* viewer = nullptr);
// The device's counters as IFLA_STATS64 and RTM_GETSTATS's IFLA_STATS_LINK_64 report them.
rtnl_link_stats64 link_stats64(const Device& dev);
// True for a device of the bridge kind: its ports are reported with their settings
// (IFLA_PROTINFO) and extended statistics.
bool is_bridge(const Device& dev);

// Encodes it as one message. Errors: EMSGSIZE, kind data errors from the wire encoder.
// Context: control lock.
Result<void> encode_device(wire::MessageBuilder& b, const wire::Header& h, const Device& dev,
                           std::uint32_t change, std::uint32_t ext_mask,
                           Namespace* viewer = nullptr);
// Whether the device has IPv6 state (Linux: an inet6_dev), and its message as an AF_INET6
// link dump or RTNLGRP_IPV6_IFINFO sends it (wire::encode_inet6_ifinfo).
bool has_inet6(const Device& dev);
Result<void> encode_inet6_device(wire::MessageBuilder& b, const wire::Header& h, const Device& dev);

}  // namespace ifcore::rtnl
