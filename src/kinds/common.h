// Helpers shared by the kinds: looking up a lower device, checking Ethernet addresses,
// reading nested attribute lists that repeat a type, and reaching a kind's private state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ifcore/engine.h"

namespace ifcore::kinds {

// Adds (`add`) or removes `l` in a plug-in's list of listeners, under the plug-in lock (the
// lists are the engine's). `list` null: the plug-in is not installed.
template <class L>
void update_listeners(Control& ctl, std::vector<L*>* list, L& l, bool add) {
  PluginGuard guard(ctl);
  if (!list) return;
  if (add)
    list->push_back(&l);
  else
    list->erase(std::remove(list->begin(), list->end(), &l), list->end());
}

// The kind-private state of `dev` if it is a `T`, else nullptr. `T` is final, so an exact
// type check does: the kinds' watchers ask this of every device on every event, and a
// dynamic_cast cost them 100-200 instructions a time. Context: control lock.
template <class T>
T* priv_of(const Device& dev) {
  static_assert(std::is_final_v<T>, "priv_of checks the exact type");
  DevicePriv* p = dev.priv();
  return p && typeid(*p) == typeid(T) ? static_cast<T*>(p) : nullptr;
}

// True if `dev` is registered and of the kind called `name`.
bool is_kind(const Device& dev, std::string_view name);

// Linux: the IFLA_ADDRESS checks of veth/vlan/macvlan validate: 6 bytes (EINVAL) and a
// valid unicast address (EADDRNOTAVAIL), "Invalid link address".
Result<void> check_ether_address(const LinkRequest& req);

// The lower device IFLA_LINK names, in `ns`. Errors (Linux: vlan_newlink's texts):
// EINVAL "link not specified", ENODEV "link does not exist".
Result<Device*> find_lower(Control& ctl, Namespace& ns, const LinkRequest& req);

// One raw attribute of a nested list kept as bytes (Nested with no inner policy).
struct RawNested {
  std::uint16_t type;
  std::span<const std::uint8_t> data;
};
// Splits the bytes of a nested attribute into its attributes. The wire decoder keeps only
// the last attribute of each type, so lists that repeat a type (IFLA_VLAN_QOS_MAPPING,
// IFLA_MACVLAN_MACADDR) are declared without an inner policy and read here.
// Errors: EINVAL on a truncated or malformed attribute (`what` names the list).
Result<std::vector<RawNested>> split_nested(std::span<const std::uint8_t> bytes,
                                            std::string_view what);

// Host-order u32 from/to 4 bytes in native order (struct fields such as ifla_vlan_flags).
std::uint32_t load_u32(std::span<const std::uint8_t> b, std::size_t off);
void store_u32(std::vector<std::uint8_t>& out, std::uint32_t v);

// An IPv4 address (host order) as a 4-byte hardware address, as Linux's ip tunnels use.
HwAddr ipv4_hwaddr(std::uint32_t host_order);

// Linux: netif_stacked_transfer_operstate: an upper device mirrors its lower's carrier.
void transfer_carrier(Control& ctl, const Device& lower, Device& upper);

}  // namespace ifcore::kinds
