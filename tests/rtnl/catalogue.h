// tests/rtnl/catalogue.h — the bad-input catalogue's tools (catalogue_test.cc): a request
// builder, the engine state the rows run against (Ctx), the rows, and the functions that
// list them by subject (catalogue_rows.cc).
#pragma once

#include <net/if.h>  // before any <linux/if*.h>

#include <arpa/inet.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/if_bridge.h>
#include <linux/neighbour.h>
#include <linux/net_namespace.h>
#include <linux/netconf.h>
#include <linux/nexthop.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>

#include <ostream>
#include <string>
#include <vector>
#include "rtnl/fixture.h"

namespace ifcore::rtnl::test::catalogue {

using namespace ifcore::wire::test;

// ---- a small builder: nlmsghdr + family header + attributes, lengths filled in

class Nl {
 public:
  Nl(std::uint16_t type, std::uint16_t flags, const void* fam, std::size_t fam_len) {
    b_.resize(NLMSG_HDRLEN);
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = static_cast<std::uint16_t>(NLM_F_REQUEST | flags);
    h.nlmsg_seq = 7;
    std::memcpy(b_.data(), &h, sizeof h);
    raw(fam, fam_len);
    pad();
  }
  template <class T>
  static Nl of(std::uint16_t type, std::uint16_t flags, const T& fam) {
    return Nl(type, flags, &fam, sizeof fam);
  }
  Nl& raw(const void* p, std::size_t n) {
    auto c = static_cast<const std::uint8_t*>(p);
    b_.insert(b_.end(), c, c + n);
    return *this;
  }
  Nl& pad() {
    b_.resize(NLMSG_ALIGN(b_.size()));
    return *this;
  }
  // An attribute whose nla_len is `len` whatever the payload (a lie when they differ).
  Nl& attr_len(std::uint16_t type, std::uint16_t len, const void* p, std::size_t n) {
    nlattr a{len, type};
    raw(&a, sizeof a);
    raw(p, n);
    return pad();
  }
  Nl& attr(std::uint16_t type, const void* p, std::size_t n) {
    return attr_len(type, static_cast<std::uint16_t>(NLA_HDRLEN + n), p, n);
  }
  Nl& u8(std::uint16_t type, std::uint8_t v) { return attr(type, &v, 1); }
  Nl& u16(std::uint16_t type, std::uint16_t v) { return attr(type, &v, 2); }
  Nl& u32(std::uint16_t type, std::uint32_t v) { return attr(type, &v, 4); }
  Nl& flag(std::uint16_t type) { return attr(type, nullptr, 0); }
  Nl& str(std::uint16_t type, const std::string& s) { return attr(type, s.c_str(), s.size() + 1); }
  Nl& bytes(std::uint16_t type, const Bytes& v) { return attr(type, v.data(), v.size()); }
  Nl& in4(std::uint16_t type, const char* text) {
    in_addr a{};
    inet_pton(AF_INET, text, &a);
    return attr(type, &a, 4);
  }
  Nl& in6(std::uint16_t type, const char* text) {
    in6_addr a{};
    inet_pton(AF_INET6, text, &a);
    return attr(type, &a, 16);
  }
  Nl& begin(std::uint16_t type) {
    nests_.push_back(b_.size());
    nlattr a{0, type};
    return raw(&a, sizeof a);
  }
  Nl& end() {
    std::size_t at = nests_.back();
    nests_.pop_back();
    auto len = static_cast<std::uint16_t>(b_.size() - at);
    std::memcpy(b_.data() + at, &len, 2);
    return *this;
  }
  // The message, nlmsg_len set to its size (or to `len`, a lie).
  Bytes done(std::optional<std::uint32_t> len = {}) const {
    Bytes out = b_;
    std::uint32_t l = len.value_or(static_cast<std::uint32_t>(out.size()));
    std::memcpy(out.data(), &l, 4);
    return out;
  }

 private:
  Bytes b_;
  std::vector<std::size_t> nests_;
};

inline constexpr std::uint16_t kAck = NLM_F_ACK;
inline constexpr std::uint16_t kNew = NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;

inline ifinfomsg ifi(int index = 0, unsigned flags = 0, unsigned change = 0) {
  ifinfomsg m{};
  m.ifi_index = index;
  m.ifi_flags = flags;
  m.ifi_change = change;
  return m;
}
inline ifaddrmsg ifa(std::uint8_t family, std::uint8_t plen, int index) {
  ifaddrmsg m{};
  m.ifa_family = family;
  m.ifa_prefixlen = plen;
  m.ifa_index = static_cast<std::uint32_t>(index);
  return m;
}
inline rtmsg rtm(std::uint8_t family, std::uint8_t dst_len, std::uint8_t type = RTN_UNICAST) {
  rtmsg m{};
  m.rtm_family = family;
  m.rtm_dst_len = dst_len;
  m.rtm_table = RT_TABLE_MAIN;
  m.rtm_protocol = RTPROT_BOOT;
  m.rtm_scope = RT_SCOPE_UNIVERSE;
  m.rtm_type = type;
  return m;
}
inline ndmsg ndm(std::uint8_t family, int index, std::uint16_t state = NUD_PERMANENT) {
  ndmsg m{};
  m.ndm_family = family;
  m.ndm_ifindex = index;
  m.ndm_state = state;
  return m;
}
inline fib_rule_hdr frh(std::uint8_t family, std::uint8_t action = FR_ACT_TO_TBL) {
  fib_rule_hdr m{};
  m.family = family;
  m.action = action;
  return m;
}
inline nhmsg nhm(std::uint8_t family) {
  nhmsg m{};
  m.nh_family = family;
  return m;
}

// Names resolved once the state is made (ifindex of each device, the second namespace's id).
struct Ctx {
  std::map<std::string, int> index;
  int nsid_b = 0;
  int idx(const std::string& name) const { return index.at(name); }
};

// A veth create whose peer part is `peer` (its ifinfomsg and attributes, as `Nl` wrote them
// after the header; see `peer_of`).
inline Bytes peer_of(const Nl& peer) {
  Bytes b = peer.done();
  return Bytes(b.begin() + NLMSG_HDRLEN, b.end());
}
inline Bytes veth_with_peer(const std::string& name, const Bytes& peer) {
  return Nl::of(RTM_NEWLINK, kNew, ifi())
      .str(IFLA_IFNAME, name)
      .begin(IFLA_LINKINFO)
      .str(IFLA_INFO_KIND, "veth")
      .begin(IFLA_INFO_DATA)
      .bytes(VETH_INFO_PEER, peer)
      .end()
      .end()
      .done();
}
inline Nl peer_named(const std::string& name, int index = 0) {
  return std::move(Nl::of(RTM_NEWLINK, 0, ifi(index)).str(IFLA_IFNAME, name));
}
inline Bytes create_kind(const std::string& name, const std::string& kind) {
  return Nl::of(RTM_NEWLINK, kNew, ifi())
      .str(IFLA_IFNAME, name)
      .begin(IFLA_LINKINFO)
      .str(IFLA_INFO_KIND, kind)
      .end()
      .done();
}
inline Bytes set_u32(const std::string& dev, std::uint16_t type, std::uint32_t v) {
  return Nl::of(RTM_NEWLINK, kAck, ifi()).str(IFLA_IFNAME, dev).u32(type, v).done();
}
inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

struct Row {
  std::string name;
  std::function<Bytes(const Ctx&)> request;
  int err;              // the errno of the last error the request gets (never 0)
  std::string extack;   // its NLMSGERR_ATTR_MSG; empty: none
  bool strict = false;  // NETLINK_GET_STRICT_CHK set on the socket
  // Requests sent before the state is recorded (their answers are not checked).
  std::function<std::vector<Bytes>(const Ctx&)> setup = {};
  int errors = 1;  // how many NLMSG_ERROR/NLMSG_DONE answers carry an error
};

inline std::ostream& operator<<(std::ostream& os, const Row& r) {
  return os << r.name;
}

using B = std::function<Bytes(const Ctx&)>;
inline B fixed(Bytes b) {
  return [b = std::move(b)](const Ctx&) { return b; };
}

std::vector<Row> framing_rows();
std::vector<Row> type_rows();
std::vector<Row> unknown_rows();
std::vector<Row> name_index_rows();
std::vector<Row> range_rows();
std::vector<Row> loop_rows();
std::vector<Row> gone_rows();
std::vector<Row> veth_peer_rows();
std::vector<Row> netns_rows();
std::vector<Row> via_rows();

}  // namespace ifcore::rtnl::test::catalogue
