// Hardware and IP address values: parsing, formatting, prefixes.
#include "ifcore/addr.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

namespace ifcore {

HwAddr::HwAddr(std::span<const std::uint8_t> b) {
  len_ = static_cast<std::uint8_t>(std::min(b.size(), kMaxLen));
  std::copy_n(b.begin(), len_, bytes_.begin());
}

namespace {

std::uint64_t random_seed() {
  std::random_device rd;  // a large object: kept out of random_ether's frame
  return (std::uint64_t{rd()} << 32) ^ rd();
}

}  // namespace

HwAddr HwAddr::random_ether() {
  // splitmix64 over a per-thread random seed: 48 well-mixed bits per call at a fraction of
  // mt19937_64's cost (which refills 2.5 KiB of state every 312 calls). A device's address
  // must be unlikely to collide with another's; it need not be unpredictable.
  thread_local std::uint64_t state = random_seed();
  std::uint64_t r = (state += 0x9e3779b97f4a7c15ull);
  r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9ull;
  r = (r ^ (r >> 27)) * 0x94d049bb133111ebull;
  r ^= r >> 31;
  // The first byte: unicast (bit 0 clear), locally administered (bit 1 set). Each byte is
  // written once: a byte rewritten and then read back with its neighbours stalls the load
  // until every earlier store has reached the cache (those filling a new device included).
  r = (r & ~std::uint64_t{0x01}) | 0x02;
  HwAddr a;
  for (std::size_t i = 0; i < 6; ++i) a.bytes_[i] = static_cast<std::uint8_t>(r >> (8 * i));
  a.len_ = 6;
  return a;
}

Result<HwAddr> HwAddr::parse(std::string_view text) {
  std::array<std::uint8_t, kMaxLen> out{};
  std::size_t n = 0;
  std::size_t i = 0;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  while (i < text.size()) {
    if (n == kMaxLen) return fail(EINVAL, "\"{}\" is not a valid link-layer address", text);
    int hi = hex(text[i]);
    if (hi < 0) return fail(EINVAL, "\"{}\" is not a valid link-layer address", text);
    int v = hi;
    ++i;
    if (i < text.size() && text[i] != ':') {
      int lo = hex(text[i]);
      if (lo < 0) return fail(EINVAL, "\"{}\" is not a valid link-layer address", text);
      v = hi * 16 + lo;
      ++i;
    }
    out[n++] = static_cast<std::uint8_t>(v);
    if (i < text.size()) {
      if (text[i] != ':' || i + 1 == text.size())
        return fail(EINVAL, "\"{}\" is not a valid link-layer address", text);
      ++i;
    }
  }
  if (n == 0) return fail(EINVAL, "\"{}\" is not a valid link-layer address", text);
  return HwAddr(std::span<const std::uint8_t>(out.data(), n));
}

bool HwAddr::is_zero() const {
  return std::all_of(bytes_.begin(), bytes_.begin() + len_, [](auto b) { return b == 0; });
}

std::string HwAddr::to_string() const {
  std::string s;
  for (std::size_t i = 0; i < len_; ++i) {
    if (i) s += ':';
    s += fmt::format("{:02x}", bytes_[i]);
  }
  return s;
}

IpAddr IpAddr::v4(std::uint32_t host_order) {
  IpAddr a;
  a.family_ = AF_INET;
  std::uint32_t n = htonl(host_order);
  std::memcpy(a.bytes_.data(), &n, 4);
  return a;
}

IpAddr IpAddr::v4_bytes(std::span<const std::uint8_t, 4> b) {
  IpAddr a;
  a.family_ = AF_INET;
  std::copy(b.begin(), b.end(), a.bytes_.begin());
  return a;
}

IpAddr IpAddr::v6(std::span<const std::uint8_t, 16> b) {
  IpAddr a;
  a.family_ = AF_INET6;
  std::copy(b.begin(), b.end(), a.bytes_.begin());
  return a;
}

Result<IpAddr> IpAddr::from_bytes(int family, std::span<const std::uint8_t> b) {
  if (family == AF_INET && b.size() == 4) return v4_bytes(b.first<4>());
  if (family == AF_INET6 && b.size() == 16) return v6(b.first<16>());
  return fail(EINVAL, "address of {} bytes does not match family {}", b.size(), family);
}

Result<IpAddr> IpAddr::parse(std::string_view text) {
  std::string s(text);
  std::array<std::uint8_t, 16> buf{};
  if (inet_pton(AF_INET, s.c_str(), buf.data()) == 1)
    return v4_bytes(std::span<const std::uint8_t, 4>(buf.data(), 4));
  if (inet_pton(AF_INET6, s.c_str(), buf.data()) == 1)
    return v6(std::span<const std::uint8_t, 16>(buf.data(), 16));
  return fail(EINVAL, "\"{}\" is not a valid address", text);
}

bool IpAddr::is_v4() const {
  return family_ == AF_INET;
}
bool IpAddr::is_v6() const {
  return family_ == AF_INET6;
}
std::size_t IpAddr::size() const {
  return is_v4() ? 4 : is_v6() ? 16 : 0;
}

std::uint32_t IpAddr::v4_host() const {
  std::uint32_t n;
  std::memcpy(&n, bytes_.data(), 4);
  return ntohl(n);
}

IpAddr IpAddr::masked(int prefix_len) const {
  // Byte by byte: route lookups mask at every prefix length.
  IpAddr a = *this;
  const int n = static_cast<int>(size());
  const int len = std::clamp(prefix_len, 0, n * 8);
  const int whole = len / 8;  // bytes kept as they are
  if (whole < n) {
    a.bytes_[whole] &= static_cast<std::uint8_t>(0xff00u >> (len % 8));
    std::fill(a.bytes_.begin() + whole + 1, a.bytes_.begin() + n, std::uint8_t{0});
  }
  return a;
}

bool IpAddr::in_prefix(const IpAddr& net, int prefix_len) const {
  return family_ == net.family_ && masked(prefix_len) == net.masked(prefix_len);
}

bool IpAddr::is_unspecified() const {
  return std::all_of(bytes_.begin(), bytes_.begin() + size(), [](auto b) { return b == 0; });
}

bool IpAddr::is_v6_link_local() const {
  return is_v6() && bytes_[0] == 0xfe && (bytes_[1] & 0xc0) == 0x80;
}

bool IpAddr::is_multicast() const {
  if (is_v4()) return (bytes_[0] & 0xf0) == 0xe0;
  return is_v6() && bytes_[0] == 0xff;
}

std::string IpAddr::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (family_ == 0) return "";
  inet_ntop(family_, bytes_.data(), buf, sizeof buf);
  return buf;
}

}  // namespace ifcore
