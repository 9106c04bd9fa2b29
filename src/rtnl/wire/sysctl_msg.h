// rtnl/wire/sysctl_msg.h — ifcore's sysctl message: read or write one per-device protocol setting
// (`net.ipv4.conf.SCOPE.KEY`, `net.ipv6.conf.SCOPE.KEY`) by its sysctl name and text value,
// as Linux does through /proc/sys, so `ifc sysctl` and the bench work against the daemon
// and the embedded engine alike. Format in docs/WIRE.md ("Sysctl").
//
// Pure: bytes in, values out, and back; no engine, no socket.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::rtnl {

// Request and reply type: after IFCORE_NLMSG_CONTROL (0x3ff0), IFCORE_NLMSG_GETSTATS
// (0x3ff1) and IFCORE_NLMSG_PROBE (0x3ff2), above RTM_MAX.
inline constexpr std::uint16_t IFCORE_NLMSG_SYSCTL = 0x3ff3;

enum : std::uint16_t {
  IFCORE_SYSCTL_UNSPEC,
  IFCORE_SYSCTL_NAME,   // string: dotted name, "net.ipv6.conf.all.forwarding"
  IFCORE_SYSCTL_VALUE,  // string: request: the value to write (absent: read); reply: the value
  IFCORE_SYSCTL_WAS,    // string: what the server shows a tap (ifcored --state): the value the
                        // write replaced; ignored in a request
  IFCORE_SYSCTL_MAX = IFCORE_SYSCTL_WAS,
};

// Longest name and value accepted (ERANGE beyond).
inline constexpr std::size_t kSysctlMaxName = 255;
inline constexpr std::size_t kSysctlMaxValue = 255;

struct SysctlRequest {
  std::string name;
  std::optional<std::string> value;  // set: a write
  std::optional<std::string> was;    // IFCORE_SYSCTL_WAS (encoded only; a request's is ignored)
};

struct SysctlReply {
  std::string name;
  std::string value;  // as /proc/sys shows it, without the newline
};

// Writes the request: NLM_F_REQUEST | extra_flags, a 4-byte rtgenmsg (AF_UNSPEC), then NAME
// and, for a write, VALUE.
Result<void> encode_sysctl_request(wire::MessageBuilder& b, std::uint32_t seq,
                                   const SysctlRequest& req, std::uint16_t extra_flags = 0);
// Reads a request. Errors: EINVAL if not a sysctl message, truncated, or without NAME;
// ERANGE for an empty or overlong name, or an overlong value. Unknown types are skipped.
Result<SysctlRequest> decode_sysctl_request(const wire::Message& m);

// Writes the reply (echoing seq, to portid).
Result<void> encode_sysctl_reply(wire::MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                 const SysctlReply& r);
// Reads a reply. Errors: EINVAL if not a sysctl message, truncated, or without NAME or
// VALUE; unknown types are skipped.
Result<SysctlReply> decode_sysctl_reply(const wire::Message& m);

// A name taken apart: net.<proto>.conf.<scope>.<key>.
struct SysctlName {
  int family = 0;     // AF_INET ("ipv4") or AF_INET6 ("ipv6")
  std::string scope;  // "all", "default" or a device name; empty: the namespace's own
  std::string key;    // "forwarding", ...
};

// Splits a dotted name, or one written with slashes (`net/ipv6/conf/all/forwarding`, as the
// path under /proc/sys); `net.ipv4.KEY` names a setting of the namespace (empty scope). In the
// dotted form a device's own dots are written as slashes
// (`net.ipv4.conf.eth0/100.forwarding`), as sysctl(8) prints them. The key is not checked
// against the known ones. Errors: ENOENT when the name is not of that shape (no such file).
Result<SysctlName> parse_sysctl_name(std::string_view name);
// The dotted name of `n` (a device's dots written as slashes).
std::string sysctl_name(const SysctlName& n);
// The path under /proc/sys of `n` ("net/ipv6/conf/all/forwarding").
std::string sysctl_path(const SysctlName& n);

// Reads an integer as /proc/sys does (proc_dointvec): blanks around it, an optional sign,
// decimal digits. Errors: EINVAL when it is not one, or does not fit an int.
Result<int> parse_sysctl_int(std::string_view text);

}  // namespace ifcore::rtnl
