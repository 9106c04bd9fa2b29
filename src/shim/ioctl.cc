// shim/ioctl.cc — the interface ioctls of ordinary sockets (SIOCGIF*/SIOCSIF*, what
// net-tools' ifconfig and older programs use), answered by ifcored as the kernel's
// dev_ioctl and devinet_ioctl answer them, and SIOCADDMULTI/SIOCDELMULTI (`ip maddr add`,
// `del`). Any other request, and any descriptor that is not a socket, goes to the C
// library's ioctl untouched.
#include <net/if.h>  // before any <linux/if*.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "shim/real.h"
#include "shim/rtclient.h"
#include "shim/tunnel.h"

namespace {

namespace rt = ifcore::shim::rt;
using ifcore::IpAddr;
using ifcore::Result;
using ifcore::wire::AddrMessage;

bool is_interface_request(unsigned long req) {
  switch (req) {
    case SIOCGIFNAME:
    case SIOCGIFINDEX:
    case SIOCGIFFLAGS:
    case SIOCSIFFLAGS:
    case SIOCGIFMTU:
    case SIOCSIFMTU:
    case SIOCGIFHWADDR:
    case SIOCSIFHWADDR:
    case SIOCGIFTXQLEN:
    case SIOCSIFTXQLEN:
    case SIOCGIFMAP:
    case SIOCGIFMETRIC:
    case SIOCSIFNAME:
    case SIOCGIFADDR:
    case SIOCSIFADDR:
    case SIOCGIFNETMASK:
    case SIOCSIFNETMASK:
    case SIOCGIFBRDADDR:
    case SIOCSIFBRDADDR:
    case SIOCGIFDSTADDR:
    case SIOCGIFCONF:
      return true;
    default:
      return false;
  }
}

// Writes a device name into an ifr_name field, NUL-terminated, cut to IFNAMSIZ - 1.
void copy_name(char (&dst)[IFNAMSIZ], const std::string& name) {
  std::size_t n = std::min(name.size(), std::size_t{IFNAMSIZ - 1});
  std::memcpy(dst, name.data(), n);
  dst[n] = 0;
}

int fail_errno(int e) {
  errno = e;
  return -1;
}

int result(const Result<void>& r) {
  return r ? 0 : fail_errno(r.error().code);
}

// The device part of an ifr_name ("v0" of the alias label "v0:1"); Linux: dev_ioctl.
std::string device_of(const ifreq& ifr) {
  std::string name(ifr.ifr_name, strnlen(ifr.ifr_name, IFNAMSIZ - 1));
  if (auto colon = name.find(':'); colon != std::string::npos) name.resize(colon);
  return name;
}

std::string label_of(const ifreq& ifr) {
  return std::string(ifr.ifr_name, strnlen(ifr.ifr_name, IFNAMSIZ - 1));
}

std::uint32_t v4_of(const sockaddr& sa) {
  std::uint32_t v;
  std::memcpy(&v, &reinterpret_cast<const sockaddr_in&>(sa).sin_addr, 4);
  return ntohl(v);
}

void put_v4(sockaddr& sa, std::uint32_t host) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(host);
  std::memcpy(&sa, &in, sizeof(in));
}

std::uint32_t host_of(const IpAddr& a) {
  auto b = a.bytes();
  return (std::uint32_t{b[0]} << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
}

std::uint32_t mask_of(int plen) {
  return plen <= 0 ? 0 : plen >= 32 ? 0xffffffffu : ~((1u << (32 - plen)) - 1);
}

// Linux: inet_abc_len, the classful prefix SIOCSIFADDR gives an address (-1: refused).
int classful_prefix(std::uint32_t a) {
  if (a == 0 || a == 0xffffffffu) return 0;
  if ((a & 0x80000000u) == 0) return 8;
  if ((a & 0xc0000000u) == 0x80000000u) return 16;
  if ((a & 0xe0000000u) == 0xc0000000u) return 24;
  if ((a & 0xf0000000u) == 0xf0000000u) return 32;
  return -1;  // multicast
}

// The IPv4 address whose label is ifr_name (Linux: devinet_ioctl's lookup).
Result<std::optional<AddrMessage>> address_labelled(const ifreq& ifr, int* ifindex) {
  auto dev = rt::link_by_name(device_of(ifr));
  if (!dev) return ifcore::fail(dev.error());
  *ifindex = dev->ifindex;
  auto addrs = rt::addresses(AF_INET);
  if (!addrs) return ifcore::fail(addrs.error());
  std::string label = label_of(ifr);
  for (auto& a : *addrs)
    if (static_cast<int>(a.ifindex) == dev->ifindex && a.label.value_or("") == label)
      return std::optional<AddrMessage>(a);
  return std::optional<AddrMessage>();
}

AddrMessage v4_address(int ifindex, const std::string& label, std::uint32_t local, int plen,
                       std::optional<std::uint32_t> brd) {
  AddrMessage m;
  m.family = AF_INET;
  m.ifindex = static_cast<std::uint32_t>(ifindex);
  m.prefixlen = static_cast<std::uint8_t>(plen);
  m.local = m.address = IpAddr::v4(local);
  if (brd) m.broadcast = IpAddr::v4(*brd);
  m.label = label;
  return m;
}

// `next` with the peer address of `old` (Linux changes the mask or the broadcast address
// of the same ifaddr, whose ifa_address stays).
AddrMessage same_peer(const AddrMessage& old, AddrMessage next) {
  if (old.address) next.address = old.address;
  return next;
}

// Replaces `old` by `next` (Linux: inet_del_ifa, then inet_insert_ifa or inet_set_ifa).
int replace_address(const std::optional<AddrMessage>& old, const AddrMessage& next) {
  if (old) {
    if (auto r = rt::delete_address(*old); !r) return fail_errno(r.error().code);
  }
  return result(rt::add_address(next));
}

int address_ioctl(unsigned long req, ifreq& ifr) {
  int ifindex = 0;
  auto found = address_labelled(ifr, &ifindex);
  if (!found) return fail_errno(found.error().code);
  const std::optional<AddrMessage>& a = *found;
  std::uint32_t flags = 0;
  if (auto dev = rt::link_by_index(ifindex)) flags = dev->flags;
  if (req == SIOCSIFADDR) {
    if (ifr.ifr_addr.sa_family != AF_INET) return fail_errno(EINVAL);
    std::uint32_t local = v4_of(ifr.ifr_addr);
    if (a && a->local && host_of(*a->local) == local) return 0;
    int plen = (flags & IFF_POINTOPOINT) ? 32 : classful_prefix(local);
    if (plen < 0) return fail_errno(EINVAL);
    std::optional<std::uint32_t> brd;
    if ((flags & IFF_BROADCAST) && plen < 31) brd = local | ~mask_of(plen);
    return replace_address(a, v4_address(ifindex, label_of(ifr), local, plen, brd));
  }
  if (!a) return fail_errno(EADDRNOTAVAIL);
  std::uint32_t local = host_of(*a->local);
  std::optional<std::uint32_t> brd;
  if (a->broadcast) brd = host_of(*a->broadcast);
  switch (req) {
    case SIOCGIFADDR:
      put_v4(ifr.ifr_addr, local);
      return 0;
    case SIOCGIFNETMASK:
      put_v4(ifr.ifr_netmask, mask_of(a->prefixlen));
      return 0;
    case SIOCGIFBRDADDR:
      put_v4(ifr.ifr_broadaddr, brd.value_or(0));
      return 0;
    case SIOCGIFDSTADDR:
      put_v4(ifr.ifr_dstaddr, a->address ? host_of(*a->address) : local);
      return 0;
    case SIOCSIFNETMASK: {
      std::uint32_t mask = v4_of(ifr.ifr_netmask);
      int plen = __builtin_popcount(mask);
      if (mask_of(plen) != mask) return fail_errno(EINVAL);  // Linux: bad_mask
      if (plen == a->prefixlen) return 0;
      // Linux: a broadcast that matched the old mask follows the new one.
      if (brd && (flags & IFF_BROADCAST) && plen < 31 && *brd == (local | ~mask_of(a->prefixlen)))
        brd = local | ~mask;
      // Linux: devinet_ioctl answers 0 whatever inet_insert_ifa says: an address the new
      // mask makes a duplicate of another is gone, and the call succeeds.
      (void)replace_address(a, same_peer(*a, v4_address(ifindex, label_of(ifr), local, plen, brd)));
      return 0;
    }
    case SIOCSIFBRDADDR: {
      std::uint32_t next = v4_of(ifr.ifr_broadaddr);
      if (brd && *brd == next) return 0;
      return replace_address(
          a, same_peer(*a, v4_address(ifindex, label_of(ifr), local, a->prefixlen, next)));
    }
    default:
      return fail_errno(EINVAL);
  }
}

// Linux: dev_ifconf / inet_gifconf — an ifreq per IPv4 address (its label and address).
int get_conf(ifconf& ifc) {
  auto addrs = rt::addresses(AF_INET);
  if (!addrs) return fail_errno(addrs.error().code);
  std::size_t need = addrs->size() * sizeof(ifreq);
  if (!ifc.ifc_buf) {
    ifc.ifc_len = static_cast<int>(need);
    return 0;
  }
  std::size_t room = ifc.ifc_len > 0 ? static_cast<std::size_t>(ifc.ifc_len) / sizeof(ifreq) : 0;
  std::size_t n = std::min(room, addrs->size());
  for (std::size_t i = 0; i < n; ++i) {
    ifreq r{};
    std::string label = (*addrs)[i].label.value_or("");
    copy_name(r.ifr_name, label);
    put_v4(r.ifr_addr, host_of(*(*addrs)[i].local));
    std::memcpy(ifc.ifc_req + i, &r, sizeof(r));
  }
  ifc.ifc_len = static_cast<int>(n * sizeof(ifreq));
  return 0;
}

// The flags a program may change (Linux: dev_change_flags' mask).
constexpr unsigned kUserFlags = IFF_UP | IFF_DEBUG | IFF_NOTRAILERS | IFF_NOARP | IFF_DYNAMIC |
                                IFF_MULTICAST | IFF_PORTSEL | IFF_AUTOMEDIA | IFF_PROMISC |
                                IFF_ALLMULTI;

int interface_ioctl(unsigned long req, void* arg) {
  if (!arg) return fail_errno(EFAULT);
  if (req == SIOCGIFCONF) return get_conf(*static_cast<ifconf*>(arg));
  ifreq& ifr = *static_cast<ifreq*>(arg);
  switch (req) {
    case SIOCGIFADDR:
    case SIOCSIFADDR:
    case SIOCGIFNETMASK:
    case SIOCSIFNETMASK:
    case SIOCGIFBRDADDR:
    case SIOCSIFBRDADDR:
    case SIOCGIFDSTADDR:
      return address_ioctl(req, ifr);
    case SIOCGIFNAME: {
      auto d = rt::link_by_index(ifr.ifr_ifindex);
      if (!d) return fail_errno(d.error().code);
      copy_name(ifr.ifr_name, d->name);
      return 0;
    }
    default:
      break;
  }
  std::string name = device_of(ifr);
  ifcore::LinkRequest set;
  set.name = name;
  switch (req) {
    case SIOCSIFFLAGS:
      set.flags = static_cast<unsigned short>(ifr.ifr_flags) & kUserFlags;
      set.change = kUserFlags;
      return result(rt::set_link(set));
    case SIOCSIFMTU:
      if (ifr.ifr_mtu < 0) return fail_errno(EINVAL);
      set.mtu = static_cast<std::uint32_t>(ifr.ifr_mtu);
      return result(rt::set_link(set));
    case SIOCSIFTXQLEN:
      if (ifr.ifr_qlen < 0) return fail_errno(EINVAL);
      set.txqlen = static_cast<std::uint32_t>(ifr.ifr_qlen);
      return result(rt::set_link(set));
    case SIOCSIFHWADDR: {
      auto cur = rt::link_by_name(name);
      if (!cur) return fail_errno(cur.error().code);
      std::size_t len = cur->address ? cur->address->bytes().size() : 6;
      len = std::min(len, sizeof(ifr.ifr_hwaddr.sa_data));
      set.address = ifcore::HwAddr(std::span<const std::uint8_t>(
          reinterpret_cast<const std::uint8_t*>(ifr.ifr_hwaddr.sa_data), len));
      return result(rt::set_link(set));
    }
    case SIOCSIFNAME: {
      set.name.reset();
      auto cur = rt::link_by_name(name);
      if (!cur) return fail_errno(cur.error().code);
      set.ifindex = cur->ifindex;
      set.name = std::string(ifr.ifr_newname, strnlen(ifr.ifr_newname, IFNAMSIZ - 1));
      return result(rt::set_link(set));
    }
    default:
      break;
  }
  auto d = rt::link_by_name(name);
  if (!d) return fail_errno(d.error().code);
  switch (req) {
    case SIOCGIFINDEX:
      ifr.ifr_ifindex = d->ifindex;
      return 0;
    case SIOCGIFFLAGS:
      ifr.ifr_flags = static_cast<short>(d->flags & 0xffff);
      return 0;
    case SIOCGIFMTU:
      ifr.ifr_mtu = static_cast<int>(d->mtu.value_or(0));
      return 0;
    case SIOCGIFTXQLEN:
      ifr.ifr_qlen = static_cast<int>(d->txqlen);
      return 0;
    case SIOCGIFMETRIC:
      ifr.ifr_metric = 0;
      return 0;
    case SIOCGIFMAP:
      std::memset(&ifr.ifr_map, 0, sizeof(ifr.ifr_map));
      return 0;
    case SIOCGIFHWADDR: {
      std::memset(&ifr.ifr_hwaddr, 0, sizeof(ifr.ifr_hwaddr));
      ifr.ifr_hwaddr.sa_family = d->hw_type;
      if (d->address) {
        auto b = d->address->bytes();
        std::memcpy(ifr.ifr_hwaddr.sa_data, b.data(),
                    std::min(b.size(), sizeof(ifr.ifr_hwaddr.sa_data)));
      }
      return 0;
    }
    default:
      return fail_errno(EINVAL);
  }
}

// Linux: dev_ifsioc's SIOCADDMULTI / SIOCDELMULTI — the ifreq's name and hardware address.
int multicast_ioctl(unsigned long req, void* arg) {
  if (!arg) return fail_errno(EFAULT);
  const ifreq& ifr = *static_cast<const ifreq*>(arg);
  std::string name(ifr.ifr_name, strnlen(ifr.ifr_name, IFNAMSIZ - 1));
  auto data =
      std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(ifr.ifr_hwaddr.sa_data),
                                    sizeof(ifr.ifr_hwaddr.sa_data));
  return result(rt::change_multicast(name, data, ifr.ifr_hwaddr.sa_family, req == SIOCADDMULTI));
}

bool is_socket(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

#pragma GCC visibility push(default)
extern "C" int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (is_interface_request(req) && is_socket(fd)) return interface_ioctl(req, arg);
  if ((req == SIOCADDMULTI || req == SIOCDELMULTI) && is_socket(fd))
    return multicast_ioctl(req, arg);
  if (ifcore::shim::is_tunnel_request(req) && arg && is_socket(fd))
    return ifcore::shim::tunnel_ioctl(req, *static_cast<ifreq*>(arg));
  return ifcore::shim::real::fn().ioctl(fd, req, arg);
}
#pragma GCC visibility pop
