// shim/procfs.cc — the /proc files net-tools' ifconfig reads to list devices,
// /proc/net/dev (devices and their counters) and /proc/net/if_inet6 (IPv6 addresses), and
// those `ip maddr` reads, /proc/net/dev_mcast, igmp and igmp6 (multicast lists), written
// from ifcored's answers in the kernel's format (Linux: dev_seq_show, if6_seq_show,
// dev_mc_seq_show, igmp_mc_seq_show, igmp6_mc_seq_show) when a program opens them with fopen. Every
// other path goes to the C library untouched.
#include <net/if.h>  // before any <linux/if*.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/if_addr.h>
#include <linux/if_link.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "shim/real.h"
#include "shim/rtclient.h"

namespace {

namespace rt = ifcore::shim::rt;

std::optional<std::string> net_dev() {
  auto links = rt::links();
  if (!links) return std::nullopt;
  std::string out =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
      "drop "
      "fifo colls carrier compressed\n";
  for (auto& l : *links) {
    rtnl_link_stats64 s{};
    if (l.stats64) s = *l.stats64;
    out += fmt::format(
        "{:>6}:{:>8} {:>7} {:>4} {:>4} {:>4} {:>5} {:>10} {:>9} {:>8} {:>7} {:>4} {:>4} {:>4} "
        "{:>5} {:>7} {:>10}\n",
        l.name, s.rx_bytes, s.rx_packets, s.rx_errors, s.rx_dropped + s.rx_missed_errors,
        s.rx_fifo_errors,
        s.rx_length_errors + s.rx_over_errors + s.rx_crc_errors + s.rx_frame_errors,
        s.rx_compressed, s.multicast, s.tx_bytes, s.tx_packets, s.tx_errors, s.tx_dropped,
        s.tx_fifo_errors, s.collisions,
        s.tx_carrier_errors + s.tx_aborted_errors + s.tx_window_errors + s.tx_heartbeat_errors,
        s.tx_compressed);
  }
  return out;
}

// The scope column of if_inet6: Linux's ipv6_addr_scope values (IPV6_ADDR_LOOPBACK,
// _LINKLOCAL, _SITELOCAL), which no uapi header defines; global is 0.
constexpr unsigned kScopeHost = 0x10, kScopeLink = 0x20, kScopeSite = 0x40;

unsigned scope_of(const ifcore::IpAddr& a) {
  auto b = a.bytes();
  if (a.is_v6_link_local()) return kScopeLink;
  bool loopback = true;
  for (int i = 0; i < 15; ++i) loopback = loopback && b[i] == 0;
  if (loopback && b[15] == 1) return kScopeHost;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return kScopeSite;
  return 0;
}

std::optional<std::string> if_inet6() {
  auto links = rt::links();
  auto addrs = rt::addresses(AF_INET6);
  if (!links || !addrs) return std::nullopt;
  std::string out;
  for (auto& a : *addrs) {
    const std::optional<ifcore::IpAddr>& own = a.local ? a.local : a.address;
    if (!own) continue;
    std::string name;
    for (auto& l : *links)
      if (static_cast<std::uint32_t>(l.ifindex) == a.ifindex) name = l.name;
    for (std::uint8_t byte : own->bytes()) out += fmt::format("{:02x}", byte);
    out += fmt::format(" {:02x} {:02x} {:02x} {:02x} {:>8}\n", a.ifindex, a.prefixlen,
                       scope_of(*own), a.all_flags() & 0xff, name);
  }
  return out;
}

// The multicast lists (Linux: dev_mc_seq_show, igmp_mc_seq_show, igmp6_mc_seq_show); no
// IGMP or MLD timer runs in ifcore, so every timer column reads 0.
std::string hex(const std::vector<std::uint8_t>& b) {
  std::string out;
  for (std::uint8_t x : b) out += fmt::format("{:02x}", x);
  return out;
}

std::optional<std::string> dev_mcast() {
  auto list = rt::multicast_lists(AF_PACKET);
  if (!list) return std::nullopt;
  std::string out;
  for (auto& e : *list)
    out += fmt::format("{:<4} {:<15} {:<5} {:<5} {}\n", e.ifindex, e.ifname, e.users, e.flags,
                       hex(e.address));
  return out;
}

std::optional<std::string> igmp() {
  auto list = rt::multicast_lists(AF_INET);
  if (!list) return std::nullopt;
  std::string out = "Idx\tDevice    : Count Querier\tGroup    Users Timer\tReporter\n";
  std::uint32_t dev = 0;
  for (auto& e : *list) {
    if (e.address.size() != 4) continue;
    if (e.ifindex != dev) {
      dev = e.ifindex;
      out += fmt::format("{}\t{:<10}: {:>5} {:>7}\n", e.ifindex, e.ifname, e.flags, "V3");
    }
    // The group as the kernel prints a __be32 with %08X on a little-endian machine.
    std::uint32_t raw;
    std::memcpy(&raw, e.address.data(), 4);
    out += fmt::format("\t\t\t\t{:08X} {:>5} 0:00000000\t\t0\n", raw, e.users);
  }
  return out;
}

std::optional<std::string> igmp6() {
  auto list = rt::multicast_lists(AF_INET6);
  if (!list) return std::nullopt;
  std::string out;
  for (auto& e : *list)
    out += fmt::format("{:<4} {:<15} {} {:>5} {:08X} 0\n", e.ifindex, e.ifname, hex(e.address),
                       e.users, e.flags);
  return out;
}

// A read-only stream over `text` (a memory file, closed with the stream).
FILE* stream_of(const std::string& text) {
  int fd = memfd_create("ifcore-procfs", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return nullptr;
  }
  FILE* f = fdopen(fd, "r");
  if (!f) close(fd);
  return f;
}

// The generated file for `path`, or nothing when it is not one of ours (or is opened to write).
std::optional<FILE*> generated(const char* path, const char* mode) {
  if (!path || !mode || mode[0] != 'r' || std::strchr(mode, '+')) return std::nullopt;
  std::string_view p(path);
  std::optional<std::string> text;
  if (p == "/proc/net/dev" || p == "/proc/self/net/dev")
    text = net_dev();
  else if (p == "/proc/net/if_inet6" || p == "/proc/self/net/if_inet6")
    text = if_inet6();
  else if (p == "/proc/net/dev_mcast" || p == "/proc/self/net/dev_mcast")
    text = dev_mcast();
  else if (p == "/proc/net/igmp" || p == "/proc/self/net/igmp")
    text = igmp();
  else if (p == "/proc/net/igmp6" || p == "/proc/self/net/igmp6")
    text = igmp6();
  else
    return std::nullopt;
  if (!text) return std::nullopt;  // ifcored unreachable: the kernel's file, as before
  return stream_of(*text);
}

}  // namespace

#pragma GCC visibility push(default)
extern "C" {

FILE* fopen(const char* path, const char* mode) {
  if (auto f = generated(path, mode)) return *f;
  return ifcore::shim::real::fn().fopen(path, mode);
}

FILE* fopen64(const char* path, const char* mode) {
  if (auto f = generated(path, mode)) return *f;
  return ifcore::shim::real::fn().fopen64(path, mode);
}

}  // extern "C"
#pragma GCC visibility pop
