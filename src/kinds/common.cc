// Helpers shared by the kinds (see common.h).
#include "kinds/common.h"

#include <cerrno>
#include <cstring>

namespace ifcore::kinds {

bool is_kind(const Device& dev, std::string_view name) {
  return dev.kind().name() == name;
}

Result<void> check_ether_address(const LinkRequest& req) {
  if (!req.address) return ok();
  if (req.address->size() != 6) return fail(EINVAL, "Invalid link address");
  if (!req.address->is_valid_ether()) return fail(EADDRNOTAVAIL, "Invalid link address");
  return ok();
}

Result<Device*> find_lower(Control& ctl, Namespace& ns, const LinkRequest& req) {
  if (!req.link) return fail(EINVAL, "link not specified");
  Device* lower = ctl.find(ns, static_cast<int>(*req.link));
  if (!lower) return fail(ENODEV, "link does not exist");
  return lower;
}

Result<std::vector<RawNested>> split_nested(std::span<const std::uint8_t> bytes,
                                            std::string_view what) {
  std::vector<RawNested> out;
  std::size_t off = 0;
  while (bytes.size() - off >= 4) {
    std::uint16_t len, type;
    std::memcpy(&len, bytes.data() + off, 2);
    std::memcpy(&type, bytes.data() + off + 2, 2);
    if (len < 4 || len > bytes.size() - off)
      return fail(EINVAL, "{}: attribute of length {} is truncated", what, len);
    out.push_back({static_cast<std::uint16_t>(type & 0x3fff), bytes.subspan(off + 4, len - 4)});
    off += (len + 3u) & ~3u;
    if (off > bytes.size()) off = bytes.size();
  }
  if (off != bytes.size()) return fail(EINVAL, "{}: trailing {} bytes", what, bytes.size() - off);
  return out;
}

std::uint32_t load_u32(std::span<const std::uint8_t> b, std::size_t off) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + off, 4);
  return v;
}

void store_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  std::uint8_t b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

HwAddr ipv4_hwaddr(std::uint32_t host_order) {
  std::uint8_t b[4] = {
      static_cast<std::uint8_t>(host_order >> 24), static_cast<std::uint8_t>(host_order >> 16),
      static_cast<std::uint8_t>(host_order >> 8), static_cast<std::uint8_t>(host_order)};
  return HwAddr(std::span<const std::uint8_t>(b, 4));
}

void transfer_carrier(Control& ctl, const Device& lower, Device& upper) {
  if (upper.state() != RegState::Registered) return;
  ctl.set_carrier(upper, lower.carrier() && lower.is_up());
}

}  // namespace ifcore::kinds
