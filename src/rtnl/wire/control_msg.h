// rtnl/wire/control_msg.h — ifcore's control message: what a NETLINK_ROUTE socket would set with
// bind(2) and setsockopt(SOL_NETLINK, ...), carried over ifcored's AF_UNIX socket as one
// netlink-framed message; and the datagram that stands for recvmsg's ENOBUFS.
// Shared by the daemon (src/daemon) and its clients (the CLI, the shim). Format in
// docs/WIRE.md ("Talking to ifcored").
//
// Pure: bytes in, values out, and back; no engine, no socket.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::rtnl {

// The message type: above every RTM_* (RTM_MAX is below 0x100) and NLMSG_MIN_TYPE.
inline constexpr std::uint16_t IFCORE_NLMSG_CONTROL = 0x3ff0;

// Attributes of IFCORE_NLMSG_CONTROL (request and reply).
inline constexpr std::uint16_t IFCORE_CTRL_NAMESPACE = 1;        // string: bind to namespace
inline constexpr std::uint16_t IFCORE_CTRL_PORT_ID = 2;          // u32: the socket's port id
inline constexpr std::uint16_t IFCORE_CTRL_GROUPS = 3;           // u32: bind-time nl_groups mask
inline constexpr std::uint16_t IFCORE_CTRL_ADD_MEMBERSHIP = 4;   // u32: RTNLGRP_* (repeatable)
inline constexpr std::uint16_t IFCORE_CTRL_DROP_MEMBERSHIP = 5;  // u32: RTNLGRP_* (repeatable)
inline constexpr std::uint16_t IFCORE_CTRL_OPTION = 6;           // 8 bytes: u32 optname, u32 value
inline constexpr std::uint16_t IFCORE_CTRL_MAY_WRITE = 7;        // u8 (reply only)
inline constexpr std::uint16_t IFCORE_CTRL_RING = 8;             // u32: mapped rings (ring.h)
inline constexpr std::uint16_t IFCORE_CTRL_NETNS_INODE = 9;      // u64: a kernel netns's inode
inline constexpr std::uint16_t IFCORE_CTRL_CREATE = 10;          // flag: make the namespace
inline constexpr std::uint16_t IFCORE_CTRL_QUIET = 11;           // flag: no state reply

// A control request: every field is optional; they are applied in this order: namespace,
// port id, groups, memberships added, memberships dropped, options, and last the switch to
// mapped rings of `ring` bytes each (0: the default size).
// A client that stands for a netlink socket of some kernel network namespace (the preload
// shim) names that namespace's inode in `netns_inode`: when it is the namespace ifcored
// runs in, the connection goes to "default" whatever `ns` says. `create` makes the
// namespace `ns` if it does not exist (owned by the peer: it may change it). `quiet`: no
// state reply on success (errors still come back, echoing this request).
struct ControlRequest {
  std::optional<std::string> ns;
  std::optional<std::uint64_t> netns_inode;
  bool create = false;
  bool quiet = false;
  std::optional<std::uint32_t> port_id;
  std::optional<std::uint32_t> groups;
  std::vector<std::uint32_t> add_membership;
  std::vector<std::uint32_t> drop_membership;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> options;  // NETLINK_CAP_ACK, ... -> value
  std::optional<std::uint32_t> ring;
  friend bool operator==(const ControlRequest&, const ControlRequest&) = default;
};

// The daemon's reply: the connection's state after the request.
struct ControlState {
  std::uint32_t port_id = 0;
  std::string ns;
  std::uint32_t groups = 0;  // memberships of groups 1..32 as a mask (bit g-1)
  bool may_write = false;
  std::uint32_t ring = 0;         // bytes per mapped ring; 0: datagrams go through the socket
  std::uint64_t netns_inode = 0;  // the kernel network namespace ifcored runs in (0: unknown)
  friend bool operator==(const ControlState&, const ControlState&) = default;
};

// Writes a control request (NLM_F_REQUEST | extra_flags, seq) as one message.
// Errors: EMSGSIZE from the builder.
Result<void> encode_control_request(wire::MessageBuilder& b, std::uint32_t seq,
                                    const ControlRequest& req, std::uint16_t extra_flags = 0);
// Errors: EINVAL "not an ifcore control message", EINVAL for malformed TLVs, sizes, an
// unknown attribute type, ERANGE for an empty namespace name.
Result<ControlRequest> decode_control_request(const wire::Message& m);

// Writes the reply (type IFCORE_NLMSG_CONTROL, echoing seq, to portid).
Result<void> encode_control_state(wire::MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                  const ControlState& st);
// Errors: as decode_control_request.
Result<ControlState> decode_control_state(const wire::Message& m);

// The datagram ifcored sends in place of recvmsg's ENOBUFS (the client did not read its
// notifications fast enough and lost some): one NLMSG_ERROR with error -ENOBUFS, seq 0,
// pid 0, echoing a bare header of type IFCORE_NLMSG_CONTROL with seq 0.
std::vector<std::uint8_t> overflow_datagram();
// True when `datagram` is exactly that.
bool is_overflow_datagram(std::span<const std::uint8_t> datagram);

// The message ifcored puts at the start of a notification's datagram for a session that set
// NETLINK_LISTEN_ALL_NSID, when the session's namespace gives the notification's an id (a
// notification from another namespace, which reaches the session only then): type
// IFCORE_NLMSG_NSID, flags, seq and pid 0, an s32 payload, the id (Linux: the
// SOL_NETLINK / NETLINK_LISTEN_ALL_NSID control message of recvmsg). The shim turns it
// into that control message; the notification's bytes follow unchanged.
inline constexpr std::uint16_t IFCORE_NLMSG_NSID = 0x3ff4;
inline constexpr std::size_t kNsidPrefixSize = NLMSG_HDRLEN + 4;
std::array<std::uint8_t, kNsidPrefixSize> nsid_prefix(std::int32_t nsid);
// The id when `datagram` starts with that message (only its first bytes are needed).
std::optional<std::int32_t> nsid_of_prefix(std::span<const std::uint8_t> datagram);

}  // namespace ifcore::rtnl
