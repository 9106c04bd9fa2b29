// proto/idle.h — what an idle device (registered, down, no address) has instead of its
// protocol state: the settings snapshot its slot names (docs/MEMORY.md), and the calls that
// answer for it. Not a public header.
//
// Lock order: everything here runs under the control lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>

#include "ifcore/device.h"
#include "ifcore/engine.h"
#include "ifcore/inet.h"

namespace ifcore::proto {

struct EngineProto;
struct NetState;

inline constexpr std::uint32_t kIpv6MinMtu = 1280;  // Linux: IPV6_MIN_MTU

// The settings an idle device has (docs/MEMORY.md): a device is registered without its
// protocol state (InDev, Inet6Dev, DevState), which is made when first needed
// (dev_state); until then its slot names the snapshot of its namespace's "default"
// settings taken at its registration, shared by every device registered while they did
// not change. IPv4's propagated settings (devinet_copy_dflt_conf) are read from the
// namespace's current default instead (see idle_conf4).
struct ConfSnap {
  inet::Inet4Conf c4;     // default4 at registration, mc_forwarding 0 (Linux: inetdev_init)
  inet::Inet6Conf c6;     // default6 at registration (Linux: ipv6_add_dev)
  std::size_t users = 0;  // idle devices, and the namespace while it is its current one
  std::list<ConfSnap>::iterator self{};  // in EngineProto::snaps
};

// A device registered idle: its slot names the namespace's current snapshot. Does nothing
// (returns false) if the device already has state. Context: control lock, at Register.
bool register_idle(const Control& ctl, EngineProto& ep, Device& d);
// An idle device's Register or Unregister served without the plug-in lock, under a
// namespace's control (inet's part for AF_INET, inet6's for AF_INET6), when it touches
// nothing of the engine's; false (nothing done) otherwise, and under the engine's control.
bool serve_idle_locally(const Control& ctl, EngineProto& ep, Device& d, NetdevEvent e, int family);
// The snapshot of an idle device (nullptr: it has state, or none at all).
const ConfSnap* idle_snap(EngineProto& ep, const Device& d);
// An idle device's IPv4 settings: its snapshot's, with the settings a write of the
// default propagates (inet.cc) taken from the namespace's current default.
inet::Inet4Conf idle_conf4(const ConfSnap& s, const NetState& st);
// The device's settings, made or idle (nullopt: the device has none of that family).
std::optional<inet::Inet4Conf> dev_conf4(EngineProto& ep, const Device& d);
std::optional<inet::Inet6Conf> dev_conf6(EngineProto& ep, const Device& d);
// The settings a device's new protocol state starts with: its namespace's default, with
// the neighbour tables' default parameters (Linux: neigh_parms_alloc copies tbl->parms).
inet::Inet4Conf fresh_conf4(const EngineProto& ep, Namespace& ns);
inet::Inet6Conf fresh_conf6(const EngineProto& ep, Namespace& ns);
// A default was written: devices registered from now on take a new snapshot.
void conf_snap_reset(EngineProto& ep, NetState& st);

}  // namespace ifcore::proto
