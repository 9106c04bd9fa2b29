// rtnl/wire/address.h — RTM_NEWADDR / RTM_DELADDR / RTM_GETADDR: struct ifaddrmsg and its
// IFA_* attributes as one value, decoded from requests and notifications and encoded in
// the order of Linux's inet_fill_ifaddr (IPv4) and inet6_fill_ifaddr (IPv6).
#pragma once

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ifcore/addr.h"
#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

struct AddrMessage {
  // ifaddrmsg
  std::uint8_t family = 0;  // AF_INET or AF_INET6 (AF_UNSPEC in a GETADDR dump)
  std::uint8_t prefixlen = 0;
  std::uint8_t flags = 0;  // ifa_flags: the low 8 bits of IFA_F_*
  std::uint8_t scope = 0;  // RT_SCOPE_*
  std::uint32_t ifindex = 0;

  std::optional<IpAddr> address;             // IFA_ADDRESS (the peer on point-to-point links)
  std::optional<IpAddr> local;               // IFA_LOCAL
  std::optional<std::string> label;          // IFA_LABEL (IPv4)
  std::optional<IpAddr> broadcast;           // IFA_BROADCAST (IPv4)
  std::optional<IpAddr> anycast;             // IFA_ANYCAST
  std::optional<IpAddr> multicast;           // IFA_MULTICAST (RTM_NEWMULTICAST)
  std::optional<ifa_cacheinfo> cacheinfo;    // IFA_CACHEINFO
  std::optional<std::uint32_t> flags32;      // IFA_FLAGS: all IFA_F_* bits
  std::optional<std::uint32_t> rt_priority;  // IFA_RT_PRIORITY
  std::optional<std::uint8_t> proto;         // IFA_PROTO (IFAPROT_*)

  // The full flags: IFA_FLAGS when present, else ifa_flags.
  std::uint32_t all_flags() const { return flags32 ? *flags32 : flags; }
};

// Decodes an address message (a request, a dump reply or a notification). Unknown types
// are skipped (Linux parses address requests leniently). A GETADDR dump may carry only a
// struct rtgenmsg (old clients): it reads as an AddrMessage with that family.
// Errors: EINVAL "Invalid header length", EINVAL for malformed TLVs, an address
// whose size does not match the family, or a fixed-size attribute of the wrong size.
Result<AddrMessage> decode_addr(const Message& m);

// Writes `a` as one message of type h.type. IPv4 order: IFA_ADDRESS, IFA_LOCAL,
// IFA_BROADCAST, IFA_LABEL, IFA_PROTO, IFA_FLAGS, IFA_RT_PRIORITY, IFA_CACHEINFO; IPv6:
// IFA_LOCAL, IFA_ADDRESS, IFA_ANYCAST, IFA_RT_PRIORITY, IFA_CACHEINFO, IFA_FLAGS, IFA_PROTO;
// IFA_MULTICAST (both) after IFA_ANYCAST, before IFA_CACHEINFO.
// Errors: EMSGSIZE from the builder.
Result<void> encode_addr(MessageBuilder& b, const Header& h, const AddrMessage& a);
// Appends `a` as ifaddrmsg + IFA_* attributes (in encode_addr's order) to the open message.
void encode_addr_body(MessageBuilder& b, const AddrMessage& a);

}  // namespace ifcore::wire
