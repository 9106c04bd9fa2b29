// tests/wire/fixture.h — helpers to write byte fixtures by hand (little-endian x86 host):
// raw integers, nlattr TLVs with padding, and nlmsghdr framing.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "rtnl/wire/netlink.h"

namespace ifcore::wire::test {

using Bytes = std::vector<std::uint8_t>;

inline void add(Bytes& b, std::initializer_list<std::uint8_t> v) {
  // One by one: g++ 12 at -O2 reports a false -Warray-bounds for vector::insert of a list
  // after a 4-byte vector (nexthop tests' grp), which -Werror makes fatal.
  for (std::uint8_t x : v) b.push_back(x);
}
inline void add(Bytes& b, const Bytes& v) {
  b.insert(b.end(), v.begin(), v.end());
}
inline Bytes le16(std::uint16_t v) {
  return {std::uint8_t(v), std::uint8_t(v >> 8)};
}
inline Bytes le32(std::uint32_t v) {
  return {std::uint8_t(v), std::uint8_t(v >> 8), std::uint8_t(v >> 16), std::uint8_t(v >> 24)};
}
inline Bytes le64(std::uint64_t v) {
  Bytes b = le32(std::uint32_t(v));
  add(b, le32(std::uint32_t(v >> 32)));
  return b;
}
inline Bytes cstr(const std::string& s) {
  Bytes b(s.begin(), s.end());
  b.push_back(0);
  return b;
}
inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) add(out, p);
  return out;
}
// One nlattr: len (4 + payload), type, payload, zero padding to 4.
inline Bytes attr(std::uint16_t type, const Bytes& payload) {
  Bytes b = le16(std::uint16_t(4 + payload.size()));
  add(b, le16(type));
  add(b, payload);
  while (b.size() % 4) b.push_back(0);
  return b;
}
// struct ifinfomsg: family, pad, type (u16), index (s32), flags, change.
inline Bytes ifinfo(std::uint8_t family, std::uint16_t type, std::int32_t index,
                    std::uint32_t flags, std::uint32_t change) {
  Bytes b{family, 0};
  add(b, le16(type));
  add(b, le32(std::uint32_t(index)));
  add(b, le32(flags));
  add(b, le32(change));
  return b;
}
// struct nlmsghdr + body.
inline Bytes nlmsg(std::uint16_t type, std::uint16_t flags, std::uint32_t seq, std::uint32_t pid,
                   const Bytes& body) {
  Bytes b = le32(std::uint32_t(16 + body.size()));
  add(b, le16(type));
  add(b, le16(flags));
  add(b, le32(seq));
  add(b, le32(pid));
  add(b, body);
  return b;
}
// The single message of a datagram (asserting it splits).
inline Message one(const Bytes& datagram) {
  auto r = split_messages(datagram);
  if (!r || r->size() != 1) return Message{};
  return (*r)[0];
}
inline Bytes to_bytes(std::span<const std::uint8_t> s) {
  return Bytes(s.begin(), s.end());
}

}  // namespace ifcore::wire::test
