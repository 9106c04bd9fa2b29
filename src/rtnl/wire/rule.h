// rtnl/wire/rule.h — RTM_NEWRULE / RTM_DELRULE / RTM_GETRULE: struct fib_rule_hdr and its
// FRA_* attributes as one value, decoded from requests and notifications and encoded in
// the order of Linux's fib_nl_fill_rule (FRA_TABLE, FRA_SUPPRESS_PREFIXLEN, FRA_PROTOCOL,
// FRA_IIFNAME, FRA_OIFNAME, FRA_PRIORITY, FRA_FWMARK, FRA_FWMASK, FRA_GOTO, FRA_TUN_ID,
// FRA_SUPPRESS_IFGROUP, FRA_L3MDEV, FRA_UID_RANGE, FRA_SPORT_RANGE, FRA_DPORT_RANGE,
// FRA_IP_PROTO, then the family's FRA_DST, FRA_SRC, FRA_FLOW).
#pragma once

#include <linux/fib_rules.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ifcore/addr.h"
#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

struct RuleMessage {
  // fib_rule_hdr
  std::uint8_t family = 0;
  std::uint8_t dst_len = 0, src_len = 0;
  std::uint8_t tos = 0;
  std::uint8_t table = 0;  // RT_TABLE_COMPAT when the id needs FRA_TABLE
  std::uint8_t action = 0;
  std::uint32_t flags = 0;

  std::optional<IpAddr> dst, src;                   // FRA_DST / FRA_SRC
  std::optional<std::string> iifname, oifname;      // FRA_IIFNAME / FRA_OIFNAME
  std::optional<std::uint32_t> goto_target;         // FRA_GOTO
  std::optional<std::uint32_t> priority;            // FRA_PRIORITY
  std::optional<std::uint32_t> fwmark, fwmask;      // FRA_FWMARK / FRA_FWMASK
  std::optional<std::uint32_t> flow;                // FRA_FLOW
  std::optional<std::uint64_t> tun_id;              // FRA_TUN_ID (host order)
  std::optional<std::int32_t> suppress_ifgroup;     // FRA_SUPPRESS_IFGROUP
  std::optional<std::int32_t> suppress_prefixlen;   // FRA_SUPPRESS_PREFIXLEN
  std::optional<std::uint32_t> table_id;            // FRA_TABLE
  std::optional<std::uint8_t> l3mdev;               // FRA_L3MDEV
  std::optional<fib_rule_uid_range> uid_range;      // FRA_UID_RANGE
  std::optional<std::uint8_t> protocol;             // FRA_PROTOCOL
  std::optional<std::uint8_t> ip_proto;             // FRA_IP_PROTO
  std::optional<fib_rule_port_range> sport, dport;  // FRA_SPORT_RANGE / FRA_DPORT_RANGE

  // The table: FRA_TABLE when present, else the header's.
  std::uint32_t table_or_id() const { return table_id ? *table_id : table; }
};

// Decodes a rule message. A dump may carry only a struct rtgenmsg.
// Errors (as Linux's fib_nl_newrule/fib_nl_delrule report a policy failure: the policy's
// errno with "Error parsing msg"): EINVAL for a short header or malformed TLVs, ERANGE for
// a fixed-size attribute of the wrong size or a device name of IFNAMSIZ or more.
Result<RuleMessage> decode_rule(const Message& m);

// Writes `r` as one message of type h.type, in Linux's attribute order.
Result<void> encode_rule(MessageBuilder& b, const Header& h, const RuleMessage& r);

}  // namespace ifcore::wire
