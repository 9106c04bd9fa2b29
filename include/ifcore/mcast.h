// ifcore/mcast.h — the multicast lists of the devices (Linux: /proc/net/dev_mcast,
// /proc/net/igmp, /proc/net/igmp6 and RTM_GETMULTICAST read them; SIOCADDMULTI and
// SIOCDELMULTI change the link-layer one): the groups IPv4 and IPv6 join on a device, and
// the link-layer addresses the device listens to for them and for its users.
//
// Everything here runs under the engine's control lock: every function takes the
// `Control` that proves it. Values are plain copies.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ifcore/addr.h"
#include "ifcore/clock.h"
#include "ifcore/engine.h"
#include "ifcore/result.h"

namespace ifcore::inet {

// Linux: MAF_* of an IPv6 group (include/net/if_inet6.h), as /proc/net/igmp6 shows them.
inline constexpr std::uint32_t kMafLoaded = 0x04, kMafNoReport = 0x08;

// One entry of a device's lists.
struct McEntry {
  int family = 0;  // AF_PACKET (the link-layer list), AF_INET or AF_INET6 (a group)
  int ifindex = 0;
  std::string name;                // the device's
  std::vector<std::uint8_t> addr;  // the link-layer address, or the group's bytes
  std::uint32_t users = 0;         // Linux: refcount (link layer), users (groups)
  // AF_PACKET: 1 when SIOCADDMULTI added it (global_use); AF_INET6: MAF_* flags;
  // AF_INET: how many groups the device has joined (in_device's mc_count).
  std::uint32_t flags = 0;
  TimePoint cstamp{};  // a group's: when it was joined
};

// The entries of the namespace's devices, in ifindex order; per device, the link-layer
// list in the order of its first use, the groups newest first (as Linux lists them).
// `family`: AF_PACKET, AF_INET or AF_INET6 for that list only, AF_UNSPEC for all three.
// Errors: EPERM when the control does not cover `ns`.
Result<std::vector<McEntry>> multicast_lists(Control& ctl, Namespace& ns, int family);

// SIOCADDMULTI (`add`) or SIOCDELMULTI on the device named `name`: `hw` holds the address
// (sa_data: its first addr_len bytes count), `hw_family` the sockaddr's family.
// Linux: dev_ifsioc, dev_mc_add_global, dev_mc_del_global.
// Errors: ENODEV (no such device), EINVAL (a device without a receive filter, such as the
// loopback and tunnels, or a family other than AF_UNSPEC), ENOENT (deleting an address
// SIOCADDMULTI did not add).
Result<void> change_multicast(Control& ctl, Namespace& ns, const std::string& name,
                              std::span<const std::uint8_t> hw, int hw_family, bool add);

}  // namespace ifcore::inet
