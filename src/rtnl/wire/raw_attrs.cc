// rtnl/wire/raw_attrs.cc — checked walking of netlink attribute TLVs and typed readers.
#include "rtnl/wire/raw_attrs.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

namespace ifcore::wire {

namespace {

// The payload up to its first NUL.
std::string_view text_of(std::span<const std::uint8_t> data) {
  const char* p = reinterpret_cast<const char*>(data.data());
  return std::string_view(p, strnlen(p, data.size()));
}

}  // namespace

Result<RawAttrs> walk_attrs(std::span<const std::uint8_t> bytes, int base_offset) {
  RawAttrs out;
  out.bytes_ = bytes;
  out.base_ = base_offset;
  std::size_t off = 0;
  while (off < bytes.size()) {
    std::size_t left = bytes.size() - off;
    int at = base_offset + static_cast<int>(off);
    if (left < NLA_HDRLEN)
      return fail_at(at, EINVAL, "{} bytes leftover after parsing attributes", left);
    nlattr h;
    std::memcpy(&h, bytes.data() + off, sizeof(h));
    if (h.nla_len < NLA_HDRLEN)
      return fail_at(at, EINVAL, "attribute length {} smaller than header", h.nla_len);
    if (h.nla_len > left)
      return fail_at(at, EINVAL, "attribute type {} length {} past the end ({} bytes left)",
                     h.nla_type & NLA_TYPE_MASK, h.nla_len, left);
    ++out.count_;
    off = attr_end(bytes, off, h.nla_len);
  }
  return out;
}

Result<std::vector<RawAttr>> parse_raw_attrs(std::span<const std::uint8_t> bytes, int base_offset) {
  auto walk = walk_attrs(bytes, base_offset);
  if (!walk) return fail(walk.error());
  std::vector<RawAttr> out;
  out.reserve(walk->size());
  for (const RawAttr& a : *walk) out.push_back(a);
  return out;
}

const RawAttr* find_raw(const std::vector<RawAttr>& list, std::uint16_t type) {
  for (const auto& a : list)
    if (a.type == type) return &a;
  return nullptr;
}

tl::unexpected<Error> fail_policy(int offset, ErrorPolicy policy) {
  Error e{ERANGE, std::string(kPolicyFailed), offset};
  e.policy = policy;
  return tl::unexpected<Error>(std::move(e));
}

namespace {
// Linux (validate_nla, NLA_U8..NLA_U64): a payload shorter than the type is ERANGE
// "Attribute failed policy validation" with the type's range as the policy. ifcore also
// refuses a longer one, which Linux's liberal parsing accepts with a warning.
template <class T>
Result<T> read_exact(const RawAttr& a) {
  if (a.data.size() < sizeof(T)) {
    ErrorPolicy p;
    p.type = sizeof(T) == 1   ? NL_ATTR_TYPE_U8
             : sizeof(T) == 2 ? NL_ATTR_TYPE_U16
             : sizeof(T) == 4 ? NL_ATTR_TYPE_U32
                              : NL_ATTR_TYPE_U64;
    p.has_range = true;
    p.max_value = std::numeric_limits<T>::max();
    return fail_policy(a.offset, p);
  }
  if (a.data.size() != sizeof(T))
    return fail_at(a.offset, EINVAL, "attribute type {}: invalid length {} (want {})", a.type,
                   a.data.size(), sizeof(T));
  T v;
  std::memcpy(&v, a.data.data(), sizeof(T));
  return v;
}
}  // namespace

Result<std::uint8_t> RawAttr::u8() const {
  return read_exact<std::uint8_t>(*this);
}
Result<std::uint16_t> RawAttr::u16() const {
  return read_exact<std::uint16_t>(*this);
}
Result<std::uint32_t> RawAttr::u32() const {
  return read_exact<std::uint32_t>(*this);
}
Result<std::uint64_t> RawAttr::u64() const {
  return read_exact<std::uint64_t>(*this);
}
Result<std::uint16_t> RawAttr::be16() const {
  return read_exact<std::uint16_t>(*this).map([](std::uint16_t v) { return ntohs(v); });
}
Result<std::uint32_t> RawAttr::be32() const {
  return read_exact<std::uint32_t>(*this).map([](std::uint32_t v) { return ntohl(v); });
}

std::string RawAttr::as_string() const {
  return std::string(text_of(data));
}

Result<std::string_view> RawAttr::string_view(std::size_t max_len) const {
  // Linux (validate_nla, NLA_STRING): an empty payload is ERANGE; a trailing NUL does not
  // count against the maximum.
  // Both answer "Attribute failed policy validation" with the policy (NL_ATTR_TYPE_STRING
  // and its maximum length), as NL_SET_ERR_MSG_ATTR_POL makes them.
  ErrorPolicy p;
  p.type = NL_ATTR_TYPE_STRING;
  p.max_length = static_cast<std::uint32_t>(max_len);
  if (data.empty()) return fail_policy(offset, p);
  std::string_view s = text_of(data);
  if (max_len && s.size() > max_len) return fail_policy(offset, p);
  return s;
}

Result<std::string> RawAttr::string(std::size_t max_len) const {
  return string_view(max_len).map([](std::string_view s) { return std::string(s); });
}

Result<std::span<const std::uint8_t>> RawAttr::binary(std::size_t min_len,
                                                      std::size_t max_len) const {
  if (data.size() < min_len || (max_len && data.size() > max_len))
    return fail_at(offset, ERANGE, "attribute type {}: length {} out of range [{}, {}]", type,
                   data.size(), min_len, max_len);
  return data;
}

}  // namespace ifcore::wire
