// shim/rtclient.h — the few rtnetlink conversations the shim holds with ifcored itself, for
// what programs ask the C library or an ioctl rather than a netlink socket: list and find
// devices, their IPv4/IPv6 addresses, and change them. Each call is one transact()
// (sockets.h) in the calling thread's namespace.
//
// Context: any thread; blocks for one round trip to ifcored. Errors: the daemon's errno
// (ENODEV, EPERM, EEXIST...), or the connection's.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ifcore/link_request.h"
#include "ifcore/result.h"
#include "rtnl/wire/address.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/maddr_msg.h"

namespace ifcore::shim::rt {

Result<std::vector<wire::LinkMessage>> links();
Result<wire::LinkMessage> link_by_name(const std::string& name);
Result<wire::LinkMessage> link_by_index(int ifindex);
// Every address of `family` (AF_UNSPEC: both), in ifcored's dump order.
Result<std::vector<wire::AddrMessage>> addresses(int family);
// RTM_SETLINK with what `req` sets (ifindex or name identify the device).
Result<void> set_link(const LinkRequest& req);
// RTM_NEWADDR (create, exclusive) or RTM_DELADDR.
Result<void> add_address(const wire::AddrMessage& a);
Result<void> delete_address(const wire::AddrMessage& a);
// The multicast lists (IFCORE_NLMSG_MADDR dump) of `family` (AF_UNSPEC: all three).
Result<std::vector<rtnl::MaddrEntry>> multicast_lists(int family);
// SIOCADDMULTI (`add`) or SIOCDELMULTI: `sa_data` and `sa_family` of the ifreq's address.
Result<void> change_multicast(const std::string& ifname, std::span<const std::uint8_t> sa_data,
                              std::uint16_t sa_family, bool add);

}  // namespace ifcore::shim::rt
