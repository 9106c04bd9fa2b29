// proto/mcast.h — a device's multicast lists (Linux: dev->mc, net/core/dev_addr_lists.c;
// in_device's mc_list, net/ipv4/igmp.c; inet6_dev's mc_list, net/ipv6/mcast.c): the groups
// IPv4 and IPv6 join on it, and the link-layer addresses they, and SIOCADDMULTI, load into
// the device's filter. ifcore sends no IGMP or MLD report: a group's timers never run. Not
// a public header.
//
// Lock order: everything here runs under the control lock.
#pragma once

#include <cstdint>
#include <vector>

#include "ifcore/addr.h"
#include "ifcore/clock.h"

namespace ifcore {
class Control;
class Device;
}  // namespace ifcore

namespace ifcore::proto {

struct DevState;
struct InDev;
struct Inet6Dev;

// One link-layer address of the device's list (Linux: struct netdev_hw_addr).
struct HwMc {
  HwAddr addr;
  int refcount = 1;
  bool global = false;  // added by SIOCADDMULTI (global_use): shown as "static"
  int synced = 0;       // users that are an upper device's copies (dev_mc_sync)
  int sync_cnt = 0;     // copied into the lower device's list (one of refcount's users)
};

// One group joined (Linux: ip_mc_list, ifmcaddr6). Lists are kept newest first, as Linux
// links a new group at the head.
struct McGroup {
  IpAddr group;
  int users = 1;
  bool loaded = false;  // its link-layer address is in the device's list
  TimePoint cstamp{};
};

// Each call finds the device's state (none: nothing to do) and the time in the engine, and
// afterwards, as ndo_set_rx_mode does, copies the list of an up macvlan or vlan into its
// lower device's (Linux: macvlan_set_mac_lists, vlan_dev_set_rx_mode: dev_mc_sync).
// Context: control lock.
//
// Linux: ipv6_add_dev — ff01::1 and ff02::1, and ff02::2 when forwarding on a multicast
// device (at register, and when the mtu gives the device IPv6 again).
void mc6_init(const Control& ctl, Device& dev, Inet6Dev& in6);
// Linux: addrconf_join_solict / addrconf_leave_solict (none on loopback and NOARP devices),
// at an address's DAD start and removal.
void join_solicited(const Control& ctl, Device& dev, Inet6Dev& in6, const IpAddr& addr);
void leave_solicited(const Control& ctl, Device& dev, Inet6Dev& in6, const IpAddr& addr);
// Linux: ipv6_mc_up (each group's address loaded again; at NETDEV_UP with the link ready,
// and when an address is added to an up device), ipv6_mc_down (unloaded; at a down, only
// when the device had been ready, IF_READY), ipv6_mc_destroy_dev (every group left).
void mc6_up(const Control& ctl, Device& dev, Inet6Dev& in6);
void mc6_down(const Control& ctl, Device& dev, Inet6Dev& in6);
void mc6_destroy(const Control& ctl, Device& dev, Inet6Dev& in6);
// Linux: dev_forward_change — a multicast device joins (leaves) ff02::2, ff01::2 and
// ff05::2 when forwarding turns on (off).
void mc6_forwarding(const Control& ctl, Device& dev, Inet6Dev& in6, bool on);

// Linux: ip_mc_up (224.0.0.1 joined, every group loaded) and ip_mc_down (every group
// unloaded, 224.0.0.1 left; the copies in the lower device's list withdrawn first, as the
// close's ndo_stop does: macvlan_stop's dev_mc_unsync).
void mc4_up(const Control& ctl, Device& dev, InDev& in);
void mc4_down(const Control& ctl, Device& dev, InDev& in);
// After a change of the device's list by someone else (SIOCADDMULTI): the copy above.
void mc_sync(const Control& ctl, Device& dev);

// The anycast addresses of an up device (the subnet-router anycast addresses of its
// prefixes when forwarding; Linux: addrconf_join_anycast).
void refresh_anycast(Inet6Dev& in6, bool up, bool forwarding);

}  // namespace ifcore::proto
