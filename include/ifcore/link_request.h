// ifcore/link_request.h — a request to create or change a device, as checked values.
//
// This is what an RTM_NEWLINK / RTM_SETLINK message says once decoded (the wire layer
// builds it), and what an embedder builds by hand. Every field is optional: absent means
// "not given" (keep the current value on change, the kind's default on create).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "ifcore/addr.h"
#include "ifcore/attr.h"

namespace ifcore {

struct LinkRequest {
  // ifinfomsg
  std::uint8_t family = 0;    // ifi_family (AF_UNSPEC for links)
  std::uint16_t hw_type = 0;  // ifi_type (ignored on input, as Linux does)
  int ifindex = 0;            // ifi_index: the device to change, or the index wanted on create
  std::uint32_t flags = 0;    // ifi_flags
  std::uint32_t change = 0;   // ifi_change: which bits of flags to apply (0 = all? see wire)
  // The flags a device with `current` ones is given (Linux: rtnl_dev_combine_flags:
  // ifi_change 0 applies all of ifi_flags).
  std::uint32_t combined_flags(std::uint32_t current) const {
    return combine_link_flags(current, flags, change);
  }
  static std::uint32_t combine_link_flags(std::uint32_t current, std::uint32_t flags,
                                          std::uint32_t change) {
    return change ? (flags & change) | (current & ~change) : flags;
  }

  // IFLA_*
  std::optional<std::string> name;                 // IFLA_IFNAME
  std::optional<std::string> alt_name;             // IFLA_ALT_IFNAME (lookup only)
  std::optional<std::uint32_t> mtu;                // IFLA_MTU
  std::optional<HwAddr> address;                   // IFLA_ADDRESS
  std::optional<HwAddr> broadcast;                 // IFLA_BROADCAST
  std::optional<std::uint32_t> txqlen;             // IFLA_TXQLEN
  std::optional<std::uint32_t> group;              // IFLA_GROUP
  std::optional<std::uint32_t> master;             // IFLA_MASTER (0 = release from master)
  std::optional<std::uint32_t> link;               // IFLA_LINK: the lower device's ifindex
  std::optional<std::int32_t> link_netnsid;        // IFLA_LINK_NETNSID
  std::optional<std::int32_t> net_ns_id;           // IFLA_TARGET_NETNSID / our namespace id
  std::optional<std::uint32_t> net_ns_fd;          // IFLA_NET_NS_FD (not meaningful to ifcore)
  std::optional<std::uint32_t> net_ns_pid;         // IFLA_NET_NS_PID (not meaningful to ifcore)
  std::optional<std::string> net_ns_name;          // ifcore: move to / create in namespace by name
  std::optional<std::uint8_t> operstate;           // IFLA_OPERSTATE
  std::optional<std::uint8_t> link_mode;           // IFLA_LINKMODE
  std::optional<std::string> ifalias;              // IFLA_IFALIAS ("" clears)
  std::optional<std::uint32_t> num_tx_queues;      // IFLA_NUM_TX_QUEUES
  std::optional<std::uint32_t> num_rx_queues;      // IFLA_NUM_RX_QUEUES
  std::optional<std::uint32_t> gso_max_size;       // IFLA_GSO_MAX_SIZE
  std::optional<std::uint32_t> gso_max_segs;       // IFLA_GSO_MAX_SEGS
  std::optional<std::uint32_t> gro_max_size;       // IFLA_GRO_MAX_SIZE
  std::optional<std::uint32_t> gso_ipv4_max_size;  // IFLA_GSO_IPV4_MAX_SIZE
  std::optional<std::uint32_t> gro_ipv4_max_size;  // IFLA_GRO_IPV4_MAX_SIZE
  std::optional<std::int32_t> new_ifindex;         // IFLA_NEW_IFINDEX
  std::optional<std::uint8_t> carrier;             // IFLA_CARRIER
  std::optional<std::uint8_t> proto_down;          // IFLA_PROTO_DOWN
  // IFLA_PROTO_DOWN_REASON: the bits of `mask` set to those of `value`; mask 0: all of them.
  struct ProtoDownReason {
    std::uint32_t mask = 0, value = 0;
    std::uint32_t apply(std::uint32_t cur) const {
      return mask ? (cur & ~mask) | (value & mask) : value;
    }
  };
  std::optional<ProtoDownReason> proto_down_reason;

  // IFLA_AF_SPEC / AF_INET6
  std::optional<std::uint8_t> inet6_addr_gen_mode;          // IFLA_INET6_ADDR_GEN_MODE
  std::optional<std::array<std::uint8_t, 16>> inet6_token;  // IFLA_INET6_TOKEN

  // IFLA_LINKINFO
  std::optional<std::string> kind;  // IFLA_INFO_KIND
  bool has_info_data = false;
  AttrList info_data;                     // IFLA_INFO_DATA, decoded with the kind's policy
  std::optional<std::string> slave_kind;  // IFLA_INFO_SLAVE_KIND
  bool has_slave_data = false;
  AttrList slave_data;  // IFLA_INFO_SLAVE_DATA

  // ifcore: a create's link namespace by name (Linux: rtnl_newlink_params' link_net, else
  // src_net), where a kind that has one looks for what the device links to: a veth's peer
  // goes there unless the peer names its own, a vxlan's socket and VNI live there. Absent:
  // the namespace the device is made in. The rtnetlink face sets it from IFLA_LINK_NETNSID
  // (an id of the target namespace's), else to the requester's namespace; never read from
  // the wire.
  std::optional<std::string> link_ns_name;
};

}  // namespace ifcore
