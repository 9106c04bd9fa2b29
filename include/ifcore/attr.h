// ifcore/attr.h — kind-specific attributes as checked values.
//
// A kind (rtnl_link_ops in Linux) declares a policy: which attribute types it accepts
// inside IFLA_INFO_DATA (and IFLA_INFO_SLAVE_DATA for ports), and of what shape. The wire
// layer decodes the bytes with that policy into an `AttrList`; the kind validates and
// consumes the values; `fill_info` produces an `AttrList` that the wire layer encodes.
// Core never sees bytes. Attribute type numbers are the uapi's (IFLA_VLAN_ID, ...).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "ifcore/addr.h"

namespace ifcore {

struct LinkRequest;

// The shape of one attribute's payload.
enum class AttrShape : std::uint8_t {
  Flag,  // no payload
  U8,
  U16,
  U32,
  U64,
  Be16,  // network byte order on the wire, host order in the value
  Be32,
  String,   // NUL-terminated on the wire
  Binary,   // raw bytes (addresses)
  Nested,   // nested attributes, decoded with the policy's `nested` table
  LinkMsg,  // ifinfomsg + IFLA_* attributes (VETH_INFO_PEER): decoded as a LinkRequest
};

struct Attr;
using AttrList = std::vector<Attr>;

struct Attr {
  std::uint16_t type = 0;
  AttrShape shape = AttrShape::Flag;
  std::uint64_t num = 0;                    // U8..U64, Be16, Be32 (host order)
  std::string str;                          // String
  std::vector<std::uint8_t> bin;            // Binary
  AttrList nested;                          // Nested
  std::shared_ptr<const LinkRequest> link;  // LinkMsg

  static Attr flag(std::uint16_t t) { return Attr{t, AttrShape::Flag}; }
  static Attr u8(std::uint16_t t, std::uint8_t v) { return Attr{t, AttrShape::U8, v}; }
  static Attr u16(std::uint16_t t, std::uint16_t v) { return Attr{t, AttrShape::U16, v}; }
  static Attr u32(std::uint16_t t, std::uint32_t v) { return Attr{t, AttrShape::U32, v}; }
  static Attr u64(std::uint16_t t, std::uint64_t v) { return Attr{t, AttrShape::U64, v}; }
  static Attr be16(std::uint16_t t, std::uint16_t v) { return Attr{t, AttrShape::Be16, v}; }
  static Attr be32(std::uint16_t t, std::uint32_t v) { return Attr{t, AttrShape::Be32, v}; }
  static Attr string(std::uint16_t t, std::string v) {
    Attr a{t, AttrShape::String};
    a.str = std::move(v);
    return a;
  }
  static Attr binary(std::uint16_t t, std::span<const std::uint8_t> v) {
    Attr a{t, AttrShape::Binary};
    a.bin.assign(v.begin(), v.end());
    return a;
  }
  static Attr nest(std::uint16_t t, AttrList v) {
    Attr a{t, AttrShape::Nested};
    a.nested = std::move(v);
    return a;
  }
};

// One entry of a policy: attribute `type` has `shape`; for Binary, `min_len`..`max_len`
// bytes; for String, at most `max_len` bytes before the NUL (0 = any); for Nested, the
// inner policy (nullptr = any inner attributes, kept as Binary).
struct AttrPolicyEntry {
  std::uint16_t type;
  AttrShape shape;
  std::uint16_t min_len = 0;
  std::uint16_t max_len = 0;
  std::span<const AttrPolicyEntry> nested = {};
};

// A policy is a table; attribute types not in it are rejected with EINVAL, like Linux's
// strict validation for new attributes ("unknown attribute type N").
using AttrPolicy = std::span<const AttrPolicyEntry>;

// Lookup helpers for kinds.
const Attr* find_attr(const AttrList& list, std::uint16_t type);
std::optional<std::uint64_t> attr_num(const AttrList& list, std::uint16_t type);

}  // namespace ifcore
