// shim/ifaddrs.cc — if_nametoindex, if_indextoname, if_nameindex/if_freenameindex and
// getifaddrs/freeifaddrs answered from ifcored. glibc implements them with sockets of its
// own, opened without going through the dynamic linker, so a preload library cannot
// redirect them call by call; it answers them whole, as glibc would from the kernel.
#include <ifaddrs.h>
#include <net/if.h>  // before any <linux/if*.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <sys/socket.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "shim/rtclient.h"

namespace {

namespace rt = ifcore::shim::rt;

int fail_errno(int e) {
  errno = e;
  return -1;
}

// getifaddrs' list lives in one block: its nodes, then their names, addresses and
// statistics, so that freeifaddrs is one free (as glibc's own).
class Block {
 public:
  template <class T>
  std::size_t reserve(std::size_t n = 1) {
    std::size_t at = (size_ + alignof(std::max_align_t) - 1) & ~(alignof(std::max_align_t) - 1);
    size_ = at + sizeof(T) * n;
    return at;
  }
  std::size_t reserve_bytes(std::size_t n) {
    std::size_t at = size_;
    size_ += n;
    return at;
  }
  std::size_t size() const { return size_; }

 private:
  std::size_t size_ = 0;
};

struct Entry {
  std::string name;
  unsigned flags = 0;
  int family = 0;
  sockaddr_storage addr{}, mask{}, other{};  // other: broadcast or destination
  bool has_addr = false, has_mask = false, has_other = false;
  rtnl_link_stats stats{};
  bool has_stats = false;
};

sockaddr_storage inet_of(const ifcore::IpAddr& a, int ifindex) {
  sockaddr_storage s{};
  auto bytes = a.bytes();
  if (a.is_v4()) {
    auto* in = reinterpret_cast<sockaddr_in*>(&s);
    in->sin_family = AF_INET;
    std::memcpy(&in->sin_addr, bytes.data(), 4);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&s);
    in6->sin6_family = AF_INET6;
    std::memcpy(&in6->sin6_addr, bytes.data(), 16);
    // glibc: link-local and multicast link-scope addresses carry the device's index.
    if (a.is_v6_link_local()) in6->sin6_scope_id = static_cast<std::uint32_t>(ifindex);
  }
  return s;
}

sockaddr_storage mask_of(int family, int prefixlen) {
  sockaddr_storage s{};
  std::uint8_t* p;
  int len;
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&s);
    in->sin_family = AF_INET;
    p = reinterpret_cast<std::uint8_t*>(&in->sin_addr);
    len = 4;
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&s);
    in6->sin6_family = AF_INET6;
    p = reinterpret_cast<std::uint8_t*>(&in6->sin6_addr);
    len = 16;
  }
  for (int i = 0; i < len && prefixlen > 0; ++i, prefixlen -= 8)
    p[i] = prefixlen >= 8 ? 0xff : static_cast<std::uint8_t>(0xff << (8 - prefixlen));
  return s;
}

sockaddr_storage packet_of(int ifindex, std::uint16_t hatype, const ifcore::HwAddr& hw) {
  sockaddr_storage s{};
  auto* ll = reinterpret_cast<sockaddr_ll*>(&s);
  ll->sll_family = AF_PACKET;
  ll->sll_ifindex = ifindex;
  ll->sll_hatype = hatype;
  auto b = hw.bytes();
  ll->sll_halen = static_cast<unsigned char>(std::min<std::size_t>(b.size(), sizeof(ll->sll_addr)));
  std::memcpy(ll->sll_addr, b.data(), ll->sll_halen);
  return s;
}

std::size_t sockaddr_size(int family) {
  return family == AF_INET    ? sizeof(sockaddr_in)
         : family == AF_INET6 ? sizeof(sockaddr_in6)
                              : sizeof(sockaddr_ll);
}

}  // namespace

#pragma GCC visibility push(default)
extern "C" {

unsigned int if_nametoindex(const char* name) {
  if (!name || std::strlen(name) >= IF_NAMESIZE) {
    errno = ENODEV;
    return 0;
  }
  auto l = rt::link_by_name(name);
  if (!l) {
    errno = l.error().code;
    return 0;
  }
  return static_cast<unsigned>(l->ifindex);
}

char* if_indextoname(unsigned int ifindex, char* name) {
  auto l = rt::link_by_index(static_cast<int>(ifindex));
  if (!l) {
    errno = l.error().code == ENODEV ? ENXIO : l.error().code;  // glibc: ENXIO
    return nullptr;
  }
  std::size_t n = std::min(l->name.size(), std::size_t{IF_NAMESIZE - 1});
  std::memcpy(name, l->name.data(), n);
  name[n] = 0;
  return name;
}

struct if_nameindex* if_nameindex(void) {
  auto ls = rt::links();
  if (!ls) {
    errno = ls.error().code;
    return nullptr;
  }
  // One block: the array (with its terminating entry), then the names.
  std::size_t names = 0;
  for (auto& l : *ls) names += l.name.size() + 1;
  std::size_t head = sizeof(struct if_nameindex) * (ls->size() + 1);
  auto* block = static_cast<char*>(std::malloc(head + names));
  if (!block) {
    errno = ENOBUFS;
    return nullptr;
  }
  auto* out = reinterpret_cast<struct if_nameindex*>(block);
  char* p = block + head;
  for (std::size_t i = 0; i < ls->size(); ++i) {
    out[i].if_index = static_cast<unsigned>((*ls)[i].ifindex);
    out[i].if_name = p;
    std::memcpy(p, (*ls)[i].name.c_str(), (*ls)[i].name.size() + 1);
    p += (*ls)[i].name.size() + 1;
  }
  out[ls->size()] = {0, nullptr};
  return out;
}

void if_freenameindex(struct if_nameindex* ptr) {
  std::free(ptr);
}

int getifaddrs(struct ifaddrs** ifap) {
  if (!ifap) return fail_errno(EINVAL);
  auto ls = rt::links();
  if (!ls) return fail_errno(ls.error().code);
  auto as = rt::addresses(AF_UNSPEC);
  if (!as) return fail_errno(as.error().code);
  // glibc: every device as an AF_PACKET entry (its hardware address, the broadcast one,
  // its counters in ifa_data), then every address, each with its device's name and flags.
  std::vector<Entry> entries;
  for (auto& l : *ls) {
    Entry e;
    e.name = l.name;
    e.flags = l.flags;
    e.family = AF_PACKET;
    if (l.address) {
      e.addr = packet_of(l.ifindex, l.hw_type, *l.address);
      e.has_addr = true;
    }
    if (l.broadcast) {  // glibc: IFLA_BROADCAST whatever the flags (lo's is zeros)
      e.other = packet_of(l.ifindex, l.hw_type, *l.broadcast);
      e.has_other = true;
    }
    if (l.stats) {
      e.stats = *l.stats;
      e.has_stats = true;
    }
    entries.push_back(std::move(e));
  }
  for (auto& a : *as) {
    const ifcore::wire::LinkMessage* dev = nullptr;
    for (auto& l : *ls)
      if (static_cast<std::uint32_t>(l.ifindex) == a.ifindex) dev = &l;
    // IPv6 messages carry IFA_ADDRESS alone unless there is a peer (then IFA_LOCAL too).
    const std::optional<ifcore::IpAddr>& own = a.local ? a.local : a.address;
    if (!dev || !own) continue;
    Entry e;
    e.name = a.label && a.family == AF_INET ? *a.label : dev->name;
    e.flags = dev->flags;
    e.family = a.family;
    e.addr = inet_of(*own, dev->ifindex);
    e.has_addr = true;
    e.mask = mask_of(a.family, a.prefixlen);
    e.has_mask = true;
    // glibc: with IFA_LOCAL present, IFA_ADDRESS is the other end (ifa_dstaddr, the same
    // slot as ifa_broadaddr), then IFA_BROADCAST, which comes after it, takes the slot.
    if (a.broadcast) {
      e.other = inet_of(*a.broadcast, dev->ifindex);
      e.has_other = true;
    } else if (a.address && a.family == AF_INET) {
      e.other = inet_of(*a.address, dev->ifindex);
      e.has_other = true;
    } else if (a.local && a.address && *a.address != *a.local) {
      e.other = inet_of(*a.address, dev->ifindex);
      e.has_other = true;
    }
    entries.push_back(std::move(e));
  }
  Block layout;
  std::size_t nodes = layout.reserve<ifaddrs>(entries.size());
  std::vector<std::size_t> name_at, addr_at, mask_at, other_at, stats_at;
  for (auto& e : entries) {
    name_at.push_back(layout.reserve_bytes(e.name.size() + 1));
    addr_at.push_back(e.has_addr ? layout.reserve<sockaddr_storage>() : 0);
    mask_at.push_back(e.has_mask ? layout.reserve<sockaddr_storage>() : 0);
    other_at.push_back(e.has_other ? layout.reserve<sockaddr_storage>() : 0);
    stats_at.push_back(e.has_stats ? layout.reserve<rtnl_link_stats>() : 0);
  }
  auto* base = static_cast<char*>(std::calloc(1, std::max<std::size_t>(layout.size(), 1)));
  if (!base) return fail_errno(ENOMEM);
  auto* list = reinterpret_cast<ifaddrs*>(base + nodes);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    Entry& e = entries[i];
    ifaddrs& n = list[i];
    n.ifa_next = i + 1 < entries.size() ? &list[i + 1] : nullptr;
    n.ifa_name = base + name_at[i];
    std::memcpy(n.ifa_name, e.name.c_str(), e.name.size() + 1);
    n.ifa_flags = e.flags;
    auto place = [&](std::size_t at, const sockaddr_storage& s) {
      std::memcpy(base + at, &s, sockaddr_size(s.ss_family));
      return reinterpret_cast<sockaddr*>(base + at);
    };
    if (e.has_addr) n.ifa_addr = place(addr_at[i], e.addr);
    if (e.has_mask) n.ifa_netmask = place(mask_at[i], e.mask);
    if (e.has_other) n.ifa_ifu.ifu_broadaddr = place(other_at[i], e.other);
    if (e.has_stats) {
      std::memcpy(base + stats_at[i], &e.stats, sizeof(e.stats));
      n.ifa_data = base + stats_at[i];
    }
  }
  *ifap = entries.empty() ? nullptr : list;
  if (entries.empty()) std::free(base);
  return 0;
}

void freeifaddrs(struct ifaddrs* ifa) {
  // The list is one block that starts with its first node (getifaddrs above).
  std::free(ifa);
}

}  // extern "C"
#pragma GCC visibility pop
