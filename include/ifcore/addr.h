// ifcore/addr.h — hardware and IP addresses as small checked values.
#pragma once

#include <array>
#include <bit>
#include <compare>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ifcore/result.h"

namespace ifcore {

// A link-layer address of up to MAX_ADDR_LEN (32) bytes; Ethernet uses 6.
class HwAddr {
 public:
  static constexpr std::size_t kMaxLen = 32;
  HwAddr() = default;
  explicit HwAddr(std::span<const std::uint8_t> bytes);
  static HwAddr ethernet(std::array<std::uint8_t, 6> b) { return HwAddr(std::span(b)); }
  // A random locally-administered unicast Ethernet address (as eth_random_addr does).
  static HwAddr random_ether();
  // Parses "aa:bb:cc:dd:ee:ff" (any length up to 32 bytes). EINVAL on bad text.
  static Result<HwAddr> parse(std::string_view text);

  std::size_t size() const { return len_; }
  bool empty() const { return len_ == 0; }
  const std::uint8_t* data() const { return bytes_.data(); }
  std::span<const std::uint8_t> bytes() const { return {bytes_.data(), len_}; }
  std::uint8_t operator[](std::size_t i) const { return bytes_[i]; }
  bool is_zero() const;
  bool is_multicast() const { return len_ > 0 && (bytes_[0] & 1); }
  bool is_valid_ether() const { return len_ == 6 && !is_zero() && !is_multicast(); }
  std::string to_string() const;  // "aa:bb:cc:dd:ee:ff"

  friend bool operator==(const HwAddr& a, const HwAddr& b) {
    return a.len_ == b.len_ && a.bytes_ == b.bytes_;
  }
  friend auto operator<=>(const HwAddr& a, const HwAddr& b) {
    if (auto c = a.len_ <=> b.len_; c != 0) return c;
    return a.bytes_ <=> b.bytes_;
  }

 private:
  std::array<std::uint8_t, kMaxLen> bytes_{};
  std::uint8_t len_ = 0;
};

// An IPv4 or IPv6 address. family is AF_INET or AF_INET6 (AF_UNSPEC when empty).
class IpAddr {
 public:
  IpAddr() = default;
  static IpAddr v4(std::uint32_t host_order);
  static IpAddr v4_bytes(std::span<const std::uint8_t, 4> b);
  static IpAddr v6(std::span<const std::uint8_t, 16> b);
  // Builds from raw bytes: 4 bytes -> IPv4, 16 bytes -> IPv6, else EINVAL.
  static Result<IpAddr> from_bytes(int family, std::span<const std::uint8_t> b);
  // "10.0.0.1" or "2001:db8::1". EINVAL on bad text.
  static Result<IpAddr> parse(std::string_view text);

  int family() const { return family_; }
  bool is_v4() const;
  bool is_v6() const;
  bool empty() const { return family_ == 0; }
  std::size_t size() const;  // 4, 16 or 0
  const std::uint8_t* data() const { return bytes_.data(); }
  std::span<const std::uint8_t> bytes() const { return {bytes_.data(), size()}; }
  std::uint32_t v4_host() const;  // IPv4 only
  // The address with all bits past `prefix_len` cleared.
  IpAddr masked(int prefix_len) const;
  bool in_prefix(const IpAddr& net, int prefix_len) const;
  bool is_unspecified() const;
  bool is_v6_link_local() const;
  bool is_multicast() const;
  std::string to_string() const;

  friend bool operator==(const IpAddr& a, const IpAddr& b) = default;
  // By family, then byte by byte (the order of memcmp), compared eight bytes at a time:
  // route tables are ordered by address, and the defaulted comparison called memcmp for
  // every step of every lookup.
  friend std::strong_ordering operator<=>(const IpAddr& a, const IpAddr& b) {
    if (a.family_ != b.family_) return a.family_ <=> b.family_;
    for (std::size_t at = 0; at < 16; at += 8) {
      std::uint64_t x = a.word_be(at), y = b.word_be(at);
      if (x != y) return x <=> y;
    }
    return std::strong_ordering::equal;
  }

 private:
  // Bytes [at, at+8) as a number whose order is theirs.
  std::uint64_t word_be(std::size_t at) const {
    std::uint64_t w;
    std::memcpy(&w, bytes_.data() + at, sizeof w);
    if constexpr (std::endian::native == std::endian::little) w = __builtin_bswap64(w);
    return w;
  }

  int family_ = 0;
  std::array<std::uint8_t, 16> bytes_{};
};

}  // namespace ifcore
