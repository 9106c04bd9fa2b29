// rtnl/wire/attrs.h — kind attributes (IFLA_INFO_DATA, IFLA_INFO_SLAVE_DATA) decoded with a
// kind's policy into an `ifcore::AttrList`, and encoded back.
//
// The policy semantics follow Linux's strict validation (lib/nlattr.c, validate_nla with
// NL_VALIDATE_STRICT): fixed-size shapes must have their exact size, unknown types are
// rejected, nesting is limited; see docs/WIRE.md for the differences.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>

#include "ifcore/attr.h"
#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

// Linux: MAX_POLICY_RECURSION_DEPTH.
inline constexpr int kMaxNestDepth = 10;

// Returns a kind's policy for IFLA_INFO_DATA (slave = false) or IFLA_INFO_SLAVE_DATA
// (slave = true), or nullopt when the kind is unknown to the caller.
using KindPolicyLookup =
    std::function<std::optional<AttrPolicy>(std::string_view kind, bool slave)>;

// What decoders pass down to nested decoders.
struct DecodeContext {
  KindPolicyLookup kind_policy;  // may be empty: every kind is then unknown
  int depth = 0;                 // nesting level of the bytes being decoded
};

// Decodes attributes with `policy`. `base_offset` is the offset of bytes[0] from the start
// of the request's nlmsghdr (0 when decoding a bare buffer); every Error carries the
// offending attribute's offset in `attr_offset`.
// Shapes: U8/U16/U32/U64/Be16/Be32 need their exact size; Flag needs 0 bytes; String is
// accepted with or without its NUL, must not be empty and holds at most max_len bytes
// (0 = any); Binary holds min_len..max_len bytes (max 0 = any); Nested is decoded with the
// entry's `nested` policy, or kept as a Binary Attr when that policy is empty; LinkMsg is
// an ifinfomsg followed by IFLA_* attributes, decoded into a LinkRequest.
// A repeated type replaces the earlier value (Linux keeps the last one).
// Errors: EINVAL "unknown attribute type N", EINVAL "attribute type N: invalid length L
// (want M)", ERANGE for strings and binaries out of range and for a LinkMsg shorter than
// ifinfomsg (Linux: NLA_UNSPEC minimum length), EINVAL "attribute nesting deeper than 10",
// EINVAL for malformed TLVs (see parse_raw_attrs), and whatever a LinkMsg decode gives.
Result<AttrList> decode_attrs(std::span<const std::uint8_t> bytes, AttrPolicy policy,
                              int base_offset = 0, const DecodeContext& ctx = {});

// Appends `attrs` to the message being built, each in its shape (String with its NUL,
// Be16/Be32 in network order, Nested as a nest, LinkMsg as ifinfomsg + IFLA_*).
// Errors: EINVAL "attribute nesting deeper than 10" for absurd lists; size limits are
// reported by MessageBuilder::end().
Result<void> encode_attrs(MessageBuilder& b, const AttrList& attrs, int depth = 0);

}  // namespace ifcore::wire
