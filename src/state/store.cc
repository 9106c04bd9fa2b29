// state/store.cc — the state store (store.h): recording the server's notifications as rows,
// committing them (one transaction per pass of the daemon's loop), and replaying the rows
// as requests at start. Schema and rules: docs/STATE.md.
//
// Lock order: 1. the engine's control lock, 2. Store::mu_. sync_mu_ is taken alone.
#include "state/store.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "ifcore/namespace.h"
#include "rtnl/wire/sysctl_msg.h"

namespace ifcore::state {

namespace {

constexpr const char* kFormat = "ifcore-state 1";
// <linux/if.h> values that <net/if.h> leaves out, and addrconf's "forever".
constexpr std::uint32_t kIffLowerUp = 1u << 16, kIffDormant = 1u << 17;
constexpr std::uint32_t kForever = 0xffffffffu;
// ifcore's own IFLA_*: create in (or move to) a namespace by name (rtnl/wire/link.h).
constexpr std::uint16_t kIflaNetNsName = 0x3f00;

using Bytes = std::vector<std::uint8_t>;
using View = std::span<const std::uint8_t>;

// ---- netlink bytes: attributes read and written without the engine

struct RawAttr {
  std::uint16_t type;  // without NLA_F_NESTED / NLA_F_NET_BYTEORDER
  View data;
};

std::vector<RawAttr> attrs_of(View b) {
  std::vector<RawAttr> out;
  std::size_t off = 0;
  while (off + sizeof(nlattr) <= b.size()) {
    nlattr a;
    std::memcpy(&a, b.data() + off, sizeof(a));
    if (a.nla_len < sizeof(nlattr) || off + a.nla_len > b.size()) break;
    out.push_back({static_cast<std::uint16_t>(a.nla_type & NLA_TYPE_MASK),
                   b.subspan(off + sizeof(nlattr), a.nla_len - sizeof(nlattr))});
    off += NLA_ALIGN(a.nla_len);
  }
  return out;
}

const RawAttr* find(const std::vector<RawAttr>& as, std::uint16_t type) {
  for (const auto& a : as)
    if (a.type == type) return &a;
  return nullptr;
}

std::optional<std::uint32_t> u32_of(const std::vector<RawAttr>& as, std::uint16_t type) {
  const RawAttr* a = find(as, type);
  if (!a || a->data.size() < 4) return std::nullopt;
  std::uint32_t v;
  std::memcpy(&v, a->data.data(), 4);
  return v;
}

std::string str_of(const std::vector<RawAttr>& as, std::uint16_t type) {
  const RawAttr* a = find(as, type);
  if (!a) return {};
  std::string s(a->data.begin(), a->data.end());
  if (auto z = s.find('\0'); z != std::string::npos) s.resize(z);
  return s;
}

void put_raw(Bytes& b, const void* p, std::size_t n) {
  const auto* c = static_cast<const std::uint8_t*>(p);
  b.insert(b.end(), c, c + n);
  b.resize(NLA_ALIGN(b.size()), 0);
}

void put_attr(Bytes& b, std::uint16_t type, View data) {
  nlattr a{static_cast<std::uint16_t>(sizeof(nlattr) + data.size()), type};
  b.insert(b.end(), reinterpret_cast<std::uint8_t*>(&a), reinterpret_cast<std::uint8_t*>(&a) + 4);
  put_raw(b, data.data(), data.size());
}

void put_u32(Bytes& b, std::uint16_t type, std::uint32_t v) {
  put_attr(b, type, View(reinterpret_cast<const std::uint8_t*>(&v), 4));
}

void put_str(Bytes& b, std::uint16_t type, std::string_view s) {
  Bytes z(s.begin(), s.end());
  z.push_back(0);
  put_attr(b, type, z);
}

std::size_t begin_nest(Bytes& b, std::uint16_t type) {
  std::size_t at = b.size();
  nlattr a{0, type};
  b.insert(b.end(), reinterpret_cast<std::uint8_t*>(&a), reinterpret_cast<std::uint8_t*>(&a) + 4);
  return at;
}

void end_nest(Bytes& b, std::size_t at) {
  auto len = static_cast<std::uint16_t>(b.size() - at);
  std::memcpy(b.data() + at, &len, 2);
}

// A whole message: header + body.
Bytes message(std::uint16_t type, std::uint16_t flags, std::uint32_t seq, View body) {
  Bytes m(sizeof(nlmsghdr));
  m.insert(m.end(), body.begin(), body.end());
  nlmsghdr h{static_cast<std::uint32_t>(m.size()), type, flags, seq, 0};
  std::memcpy(m.data(), &h, sizeof(h));
  return m;
}

template <class T>
T header_of(View body) {
  T t{};
  std::memcpy(&t, body.data(), std::min(sizeof(T), body.size()));
  return t;
}

std::string addr_text(int family, View b) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if ((family == AF_INET && b.size() == 4) || (family == AF_INET6 && b.size() == 16))
    inet_ntop(family, b.data(), buf, sizeof(buf));
  return buf;
}

std::int64_t wall_now() {
  return static_cast<std::int64_t>(std::time(nullptr));
}

// ---- what a notification becomes

enum class Kind { None, Upsert, Erase, EraseDev };

struct Row {
  Kind what = Kind::None;
  const char* type = "";
  Bytes key;
  int dev = 0;
  Bytes body;  // filtered: what is kept (without the nlmsghdr)
  std::optional<std::int64_t> valid_until, preferred_until;
  std::string summary;
};

void key_add(Bytes& k, const void* p, std::size_t n) {
  auto len = static_cast<std::uint8_t>(n);
  k.push_back(len);
  const auto* c = static_cast<const std::uint8_t*>(p);
  k.insert(k.end(), c, c + n);
}

void key_attr(Bytes& k, const std::vector<RawAttr>& as, std::uint16_t type) {
  const RawAttr* a = find(as, type);
  if (a)
    key_add(k, a->data.data(), a->data.size());
  else
    k.push_back(0xff);
}

// The attributes of `body` after a family header of `hdr` bytes, without those in `drop`.
Bytes filtered(View body, std::size_t hdr, std::initializer_list<std::uint16_t> drop) {
  Bytes out(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(std::min(hdr, body.size())));
  out.resize(NLA_ALIGN(out.size()), 0);
  if (body.size() <= hdr) return out;
  View rest = body.subspan(NLA_ALIGN(hdr) <= body.size() ? NLA_ALIGN(hdr) : body.size());
  std::size_t off = 0;
  while (off + sizeof(nlattr) <= rest.size()) {
    nlattr a;
    std::memcpy(&a, rest.data() + off, sizeof(a));
    if (a.nla_len < sizeof(nlattr) || off + a.nla_len > rest.size()) break;
    std::uint16_t t = a.nla_type & NLA_TYPE_MASK;
    if (std::find(drop.begin(), drop.end(), t) == drop.end()) {
      out.insert(out.end(), rest.begin() + static_cast<std::ptrdiff_t>(off),
                 rest.begin() + static_cast<std::ptrdiff_t>(off + a.nla_len));
      out.resize(NLA_ALIGN(out.size()), 0);
    }
    off += NLA_ALIGN(a.nla_len);
  }
  return out;
}

// IFLA_LINKINFO without what changes by itself or is not kept: the bridge's timers and
// identifiers it derives, and the port's data (IFLA_INFO_SLAVE_*).
Bytes link_info_kept(View info) {
  auto as = attrs_of(info);
  Bytes out;
  std::string kind = str_of(as, IFLA_INFO_KIND);
  for (const auto& a : as) {
    if (a.type == IFLA_INFO_SLAVE_KIND || a.type == IFLA_INFO_SLAVE_DATA) continue;
    if (a.type == IFLA_INFO_DATA && kind == "bridge") {
      Bytes data;
      for (const auto& d : attrs_of(a.data)) {
        switch (d.type) {
          case IFLA_BR_ROOT_ID:
          case IFLA_BR_BRIDGE_ID:
          case IFLA_BR_ROOT_PORT:
          case IFLA_BR_ROOT_PATH_COST:
          case IFLA_BR_TOPOLOGY_CHANGE:
          case IFLA_BR_TOPOLOGY_CHANGE_DETECTED:
          case IFLA_BR_HELLO_TIMER:
          case IFLA_BR_TCN_TIMER:
          case IFLA_BR_TOPOLOGY_CHANGE_TIMER:
          case IFLA_BR_GC_TIMER:
          case IFLA_BR_PAD:
            continue;
          default:
            put_attr(data, d.type, d.data);
        }
      }
      put_attr(out, IFLA_INFO_DATA, data);
      continue;
    }
    put_attr(out, a.type, a.data);
  }
  return out;
}

Row link_row(const nlmsghdr& h, View body) {
  Row r;
  r.type = "link";
  auto ifi = header_of<ifinfomsg>(body);
  r.dev = ifi.ifi_index;
  key_add(r.key, &ifi.ifi_index, 4);
  if (h.nlmsg_type == RTM_DELLINK) {
    r.what = Kind::EraseDev;
    return r;
  }
  r.what = Kind::Upsert;
  ifinfomsg kept = ifi;
  kept.ifi_flags &= ~static_cast<unsigned>(IFF_RUNNING | kIffLowerUp | kIffDormant);
  kept.ifi_change = 0;
  Bytes out(sizeof(kept));
  std::memcpy(out.data(), &kept, sizeof(kept));
  auto as = attrs_of(body.size() > sizeof(ifinfomsg) ? body.subspan(NLMSG_ALIGN(sizeof(ifinfomsg)))
                                                     : View{});
  std::string kind;
  for (const auto& a : as) {
    switch (a.type) {
      case IFLA_STATS:
      case IFLA_STATS64:
      case IFLA_OPERSTATE:
      case IFLA_CARRIER:
      case IFLA_CARRIER_CHANGES:
      case IFLA_CARRIER_UP_COUNT:
      case IFLA_CARRIER_DOWN_COUNT:
      case IFLA_AF_SPEC:
      case IFLA_MAP:
      case IFLA_XDP:
      case IFLA_QDISC:
      case IFLA_PROMISCUITY:
      case IFLA_PAD:
        break;
      case IFLA_LINKINFO: {
        kind = str_of(attrs_of(a.data), IFLA_INFO_KIND);
        put_attr(out, IFLA_LINKINFO, link_info_kept(a.data));
        break;
      }
      default:
        put_attr(out, a.type, a.data);
    }
  }
  r.body = std::move(out);
  r.summary = fmt::format("{} ifindex {}{}{}", str_of(as, IFLA_IFNAME), ifi.ifi_index,
                          kind.empty() ? "" : " kind ", kind);
  return r;
}

Row addr_row(const nlmsghdr& h, View body) {
  Row r;
  r.type = "addr";
  auto ifa = header_of<ifaddrmsg>(body);
  auto as = attrs_of(body.subspan(std::min(body.size(), NLMSG_ALIGN(sizeof(ifaddrmsg)))));
  r.dev = static_cast<int>(ifa.ifa_index);
  key_add(r.key, &ifa.ifa_family, 1);
  key_add(r.key, &ifa.ifa_index, 4);
  key_add(r.key, &ifa.ifa_prefixlen, 1);
  key_attr(r.key, as, IFA_LOCAL);
  key_attr(r.key, as, IFA_ADDRESS);
  if (h.nlmsg_type == RTM_DELADDR) {
    r.what = Kind::Erase;
    return r;
  }
  r.what = Kind::Upsert;
  constexpr std::uint32_t transient =
      IFA_F_TENTATIVE | IFA_F_DADFAILED | IFA_F_DEPRECATED | IFA_F_OPTIMISTIC;
  ifaddrmsg kept = ifa;
  kept.ifa_flags &= static_cast<std::uint8_t>(~transient);
  Bytes out(sizeof(kept));
  std::memcpy(out.data(), &kept, sizeof(kept));
  out.resize(NLMSG_ALIGN(out.size()), 0);
  for (const auto& a : as) {
    if (a.type == IFA_CACHEINFO && a.data.size() >= sizeof(ifa_cacheinfo)) {
      ifa_cacheinfo ci;
      std::memcpy(&ci, a.data.data(), sizeof(ci));
      // Lifetimes become absolute deadlines (wall clock), so that a restart counts the
      // time the daemon was away.
      if (ci.ifa_valid != kForever) r.valid_until = wall_now() + ci.ifa_valid;
      if (ci.ifa_prefered != kForever) r.preferred_until = wall_now() + ci.ifa_prefered;
      continue;
    }
    if (a.type == IFA_FLAGS && a.data.size() >= 4) {
      std::uint32_t f;
      std::memcpy(&f, a.data.data(), 4);
      put_u32(out, IFA_FLAGS, f & ~transient);
      continue;
    }
    put_attr(out, a.type, a.data);
  }
  r.body = std::move(out);
  const RawAttr* local = find(as, IFA_LOCAL);
  if (!local) local = find(as, IFA_ADDRESS);
  r.summary = fmt::format("{}/{} dev {}", local ? addr_text(ifa.ifa_family, local->data) : "?",
                          ifa.ifa_prefixlen, ifa.ifa_index);
  return r;
}

Row route_row(const nlmsghdr& h, View body) {
  Row r;
  r.type = "route";
  auto rt = header_of<rtmsg>(body);
  auto as = attrs_of(body.subspan(std::min(body.size(), NLMSG_ALIGN(sizeof(rtmsg)))));
  std::uint32_t table = u32_of(as, RTA_TABLE).value_or(rt.rtm_table);
  key_add(r.key, &rt.rtm_family, 1);
  key_add(r.key, &table, 4);
  key_add(r.key, &rt.rtm_dst_len, 1);
  key_attr(r.key, as, RTA_DST);
  key_add(r.key, &rt.rtm_src_len, 1);
  key_attr(r.key, as, RTA_SRC);
  key_add(r.key, &rt.rtm_tos, 1);
  key_attr(r.key, as, RTA_PRIORITY);
  if (h.nlmsg_type == RTM_DELROUTE) {
    r.what = Kind::Erase;
    return r;
  }
  // What the engine makes by itself (local, connected, link-local and multicast routes)
  // it makes again; cache entries are not configuration.
  if (rt.rtm_protocol == RTPROT_KERNEL || (rt.rtm_flags & RTM_F_CLONED)) return r;
  r.what = Kind::Upsert;
  r.dev = static_cast<int>(u32_of(as, RTA_OIF).value_or(0));
  // A route through a nexthop object is reported with that nexthop's gateway and device,
  // which a request may not give beside the id.
  if (find(as, RTA_NH_ID))
    r.body = filtered(body, sizeof(rtmsg),
                      {RTA_CACHEINFO, RTA_EXPIRES, RTA_OIF, RTA_GATEWAY, RTA_MULTIPATH, RTA_VIA});
  else
    r.body = filtered(body, sizeof(rtmsg), {RTA_CACHEINFO, RTA_EXPIRES});
  const RawAttr* dst = find(as, RTA_DST);
  r.summary = fmt::format("{}/{} table {}", dst ? addr_text(rt.rtm_family, dst->data) : "default",
                          rt.rtm_dst_len, table);
  return r;
}

Row rule_row(const nlmsghdr& h, View body) {
  Row r;
  r.type = "rule";
  auto fr = header_of<fib_rule_hdr>(body);
  auto as = attrs_of(body.subspan(std::min(body.size(), NLMSG_ALIGN(sizeof(fib_rule_hdr)))));
  // A rule is known by all it says (Linux: rule_exists compares every attribute).
  r.key.assign(body.begin(), body.end());
  const RawAttr* proto = find(as, FRA_PROTOCOL);
  if (proto && !proto->data.empty() && proto->data[0] == RTPROT_KERNEL) {
    // The default rules are the engine's own: one deleted by hand is kept as deleted (and
    // deleted again at restore), and forgotten when it is made again. The l3mdev rule
    // comes and goes with the vrfs.
    if (find(as, FRA_L3MDEV)) return r;
    r.type = "rule-deleted";
    r.what = h.nlmsg_type == RTM_DELRULE ? Kind::Upsert : Kind::Erase;
    if (r.what == Kind::Upsert) {
      r.body.assign(body.begin(), body.end());
      r.summary = fmt::format("family {} priority {} table {}", fr.family,
                              u32_of(as, FRA_PRIORITY).value_or(0),
                              u32_of(as, FRA_TABLE).value_or(fr.table));
    }
    return r;
  }
  if (h.nlmsg_type == RTM_DELRULE) {
    r.what = Kind::Erase;
    return r;
  }
  r.what = Kind::Upsert;
  r.body.assign(body.begin(), body.end());
  r.summary =
      fmt::format("family {} priority {} table {}", fr.family, u32_of(as, FRA_PRIORITY).value_or(0),
                  u32_of(as, FRA_TABLE).value_or(fr.table));
  return r;
}

Row neigh_row(const nlmsghdr& h, View body) {
  Row r;
  r.type = "neigh";
  auto nd = header_of<ndmsg>(body);
  auto as = attrs_of(body.subspan(std::min(body.size(), NLMSG_ALIGN(sizeof(ndmsg)))));
  // Bridge and VXLAN forwarding entries are not kept (docs/STATE.md).
  if (nd.ndm_family == AF_BRIDGE) return r;
  r.dev = nd.ndm_ifindex;
  key_add(r.key, &nd.ndm_family, 1);
  key_add(r.key, &nd.ndm_ifindex, 4);
  key_attr(r.key, as, NDA_DST);
  // Only permanent entries are configuration; an entry that stops being one is forgotten.
  if (h.nlmsg_type == RTM_DELNEIGH || !(nd.ndm_state & NUD_PERMANENT)) {
    r.what = Kind::Erase;
    return r;
  }
  r.what = Kind::Upsert;
  r.body = filtered(body, sizeof(ndmsg), {NDA_CACHEINFO, NDA_PROBES});
  const RawAttr* dst = find(as, NDA_DST);
  r.summary =
      fmt::format("{} dev {}", dst ? addr_text(nd.ndm_family, dst->data) : "?", nd.ndm_ifindex);
  return r;
}

Row nexthop_row(const nlmsghdr& h, View body) {
  Row r;
  r.type = "nexthop";
  auto as = attrs_of(body.subspan(std::min(body.size(), NLMSG_ALIGN(sizeof(nhmsg)))));
  std::uint32_t id = u32_of(as, NHA_ID).value_or(0);
  key_add(r.key, &id, 4);
  if (h.nlmsg_type == RTM_DELNEXTHOP) {
    r.what = Kind::Erase;
    return r;
  }
  r.what = Kind::Upsert;
  r.dev = static_cast<int>(u32_of(as, NHA_OIF).value_or(0));
  if (find(as, NHA_GROUP)) {
    // A group request takes its members, type and resilience only (what the group
    // reports besides, such as its statistics' state, it derives).
    r.body.assign(body.begin(), body.begin() + NLMSG_ALIGN(sizeof(nhmsg)));
    for (const auto& a : as)
      if (a.type == NHA_ID || a.type == NHA_GROUP || a.type == NHA_GROUP_TYPE ||
          a.type == NHA_FDB || a.type == NHA_RES_GROUP)
        put_attr(r.body, a.type, a.data);
  } else {
    r.body.assign(body.begin(), body.end());
  }
  // The header as a request must have it (Linux: rtm_to_nh_config): the scope and the
  // flags other than onlink are the engine's to derive.
  nhmsg nh = header_of<nhmsg>(body);
  nh.nh_scope = 0;
  nh.resvd = 0;
  nh.nh_flags &= RTNH_F_ONLINK;
  std::memcpy(r.body.data(), &nh, sizeof(nh));
  r.summary = fmt::format("id {}{}", id, find(as, NHA_GROUP) ? " group" : "");
  return r;
}

// A sysctl written (rtnl's sysctl handler shows the tap the write that would make it again,
// the device's ifindex as nlmsg_pid). A device's setting is known by the device's ifindex,
// not its name, so that it follows a rename and goes with the device.
Row sysctl_row(const nlmsghdr& h, View body) {
  Row r;
  r.type = "sysctl";
  auto as = attrs_of(body.subspan(std::min<std::size_t>(body.size(), 4)));
  std::string name = str_of(as, rtnl::IFCORE_SYSCTL_NAME);
  std::string value = str_of(as, rtnl::IFCORE_SYSCTL_VALUE);
  if (name.empty()) return r;
  r.dev = static_cast<int>(h.nlmsg_pid);
  std::string k = name;
  if (r.dev) {
    // net.ipvN.conf.DEVICE.KEY -> IFINDEX|net.ipvN.conf.*.KEY
    auto conf = name.find(".conf.");
    auto last = name.rfind('.');
    if (conf == std::string::npos || last <= conf + 5) return r;
    k = fmt::format("{}|{}*{}", r.dev, name.substr(0, conf + 6), name.substr(last));
  }
  r.key.assign(k.begin(), k.end());
  r.what = Kind::Upsert;
  r.body.assign(body.begin(), body.end());
  r.summary = fmt::format("{} = {}", name, value);
  return r;
}

Row row_of(const nlmsghdr& h, View body) {
  switch (h.nlmsg_type) {
    case rtnl::IFCORE_NLMSG_SYSCTL:
      return sysctl_row(h, body);
    case RTM_NEWLINK:
    case RTM_DELLINK:
      if (body.size() < sizeof(ifinfomsg)) return {};
      return link_row(h, body);
    case RTM_NEWADDR:
    case RTM_DELADDR:
      if (body.size() < sizeof(ifaddrmsg)) return {};
      return addr_row(h, body);
    case RTM_NEWROUTE:
    case RTM_DELROUTE:
      if (body.size() < sizeof(rtmsg)) return {};
      return route_row(h, body);
    case RTM_NEWRULE:
    case RTM_DELRULE:
      if (body.size() < sizeof(fib_rule_hdr)) return {};
      return rule_row(h, body);
    case RTM_NEWNEIGH:
    case RTM_DELNEIGH:
      if (body.size() < sizeof(ndmsg)) return {};
      return neigh_row(h, body);
    case RTM_NEWNEXTHOP:
    case RTM_DELNEXTHOP:
      if (body.size() < sizeof(nhmsg)) return {};
      return nexthop_row(h, body);
    default:
      return {};
  }
}

bool kept_type(std::uint16_t t) {
  switch (t) {
    case RTM_NEWLINK:
    case RTM_DELLINK:
    case RTM_NEWADDR:
    case RTM_DELADDR:
    case RTM_NEWROUTE:
    case RTM_DELROUTE:
    case RTM_NEWRULE:
    case RTM_DELRULE:
    case RTM_NEWNEIGH:
    case RTM_DELNEIGH:
    case RTM_NEWNEXTHOP:
    case RTM_DELNEXTHOP:
    case rtnl::IFCORE_NLMSG_SYSCTL:
      return true;
    default:
      return false;
  }
}

// ---- SQLite

Error sql_error(sqlite3* db, std::string_view what) {
  int code = db ? sqlite3_errcode(db) : SQLITE_ERROR;
  int e = code == SQLITE_NOTADB || code == SQLITE_CORRUPT ? EBADMSG
          : code == SQLITE_FULL                           ? ENOSPC
          : code == SQLITE_CANTOPEN                       ? ENOENT
                                                          : EIO;
  return Error{e, fmt::format("{}: {}", what, db ? sqlite3_errmsg(db) : "out of memory")};
}

struct Stmt {
  sqlite3_stmt* s;
  explicit Stmt(sqlite3_stmt* st) : s(st) {}
  ~Stmt() { sqlite3_reset(s); }
  Stmt& text(int i, std::string_view v) {
    sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& blob(int i, View v) {
    sqlite3_bind_blob(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& i64(int i, std::int64_t v) {
    sqlite3_bind_int64(s, i, v);
    return *this;
  }
  Stmt& opt(int i, std::optional<std::int64_t> v) {
    if (v)
      sqlite3_bind_int64(s, i, *v);
    else
      sqlite3_bind_null(s, i);
    return *this;
  }
  int step() { return sqlite3_step(s); }
};

View column_blob(sqlite3_stmt* s, int i) {
  auto* p = static_cast<const std::uint8_t*>(sqlite3_column_blob(s, i));
  return View(p, static_cast<std::size_t>(sqlite3_column_bytes(s, i)));
}

std::string column_text(sqlite3_stmt* s, int i) {
  const auto* p = sqlite3_column_text(s, i);
  return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
}

Result<sqlite3*> open_db(const std::string& path, bool read_only) {
  sqlite3* db = nullptr;
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    Error e = sql_error(db, fmt::format("state file {}", path));
    sqlite3_close(db);
    return fail(e);
  }
  sqlite3_extended_result_codes(db, 0);
  return db;
}

// The integrity check and the format's mark. A file with no table is a new one.
Result<bool> check_db(sqlite3* db, const std::string& path) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &s, nullptr) != SQLITE_OK)
    return fail(sql_error(db, fmt::format("state file {}", path)));
  std::vector<std::string> problems;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    std::string line = column_text(s, 0);
    if (line != "ok") problems.push_back(line);
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE)
    return fail(sql_error(db, fmt::format("state file {} fails its integrity check", path)));
  if (!problems.empty())
    return fail(EBADMSG, "state file {} fails its integrity check: {}{}", path, problems[0],
                problems.size() > 1 ? fmt::format(" (and {} more)", problems.size() - 1) : "");
  int tables = 0;
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type='table'", -1, &s,
                         nullptr) != SQLITE_OK)
    return fail(sql_error(db, fmt::format("state file {}", path)));
  if (sqlite3_step(s) == SQLITE_ROW) tables = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  if (tables == 0) return false;
  std::string format;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='format'", -1, &s, nullptr) ==
      SQLITE_OK) {
    if (sqlite3_step(s) == SQLITE_ROW) format = column_text(s, 0);
    sqlite3_finalize(s);
  }
  if (format != kFormat)
    return fail(EBADMSG, "{} is not an ifcore state file (format \"{}\", want \"{}\")", path,
                format, kFormat);
  return true;
}

// ---- replay

struct NsRow {
  std::string name;
  int id;
  std::int64_t seq;
};

struct ObjRow {
  std::string ns, type;
  Bytes key;
  int dev = 0;
  std::int64_t seq = 0;
  std::optional<std::int64_t> valid_until, preferred_until;
  std::string summary;
  Bytes msg;  // the body
};

struct LinkInfo {
  const ObjRow* row = nullptr;
  ifinfomsg ifi{};
  std::vector<RawAttr> as;
  std::string name, kind;
  View info_data;
  std::optional<std::uint32_t> link, master;
  std::optional<std::int32_t> link_netnsid;
  bool done = false;
};

// Reads the kept rows: namespaces in the order they were made, objects in the order they
// changed. Errors: the file cannot be read; what was read before stays in the vectors.
Result<void> load_rows(sqlite3* db, std::vector<NsRow>& nss, std::vector<ObjRow>& rows) {
  sqlite3_stmt* s = nullptr;
  int rc =
      sqlite3_prepare_v2(db, "SELECT name, id, seq FROM namespaces ORDER BY seq", -1, &s, nullptr);
  while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    nss.push_back({column_text(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int64(s, 2)});
    rc = SQLITE_OK;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return fail(sql_error(db, "state file: read"));
  rc = sqlite3_prepare_v2(db,
                          "SELECT ns, type, key, dev, seq, valid_until, preferred_until, summary, "
                          "msg FROM objects ORDER BY seq",
                          -1, &s, nullptr);
  while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    ObjRow r;
    r.ns = column_text(s, 0);
    r.type = column_text(s, 1);
    View k = column_blob(s, 2);
    r.key.assign(k.begin(), k.end());
    r.dev = sqlite3_column_int(s, 3);
    r.seq = sqlite3_column_int64(s, 4);
    if (sqlite3_column_type(s, 5) != SQLITE_NULL) r.valid_until = sqlite3_column_int64(s, 5);
    if (sqlite3_column_type(s, 6) != SQLITE_NULL) r.preferred_until = sqlite3_column_int64(s, 6);
    r.summary = column_text(s, 7);
    View m = column_blob(s, 8);
    r.msg.assign(m.begin(), m.end());
    rows.push_back(std::move(r));
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return fail(sql_error(db, "state file: read"));
  return ok();
}

// One request's answer: ok, or the error it got (with the extended ack's message).
Result<void> answer_of(const std::vector<rtnl::Datagram>& replies) {
  for (const auto& d : replies) {
    std::size_t off = 0;
    while (off + sizeof(nlmsghdr) <= d.size()) {
      nlmsghdr h;
      std::memcpy(&h, d.data() + off, sizeof(h));
      if (h.nlmsg_len < sizeof(h) || off + h.nlmsg_len > d.size()) break;
      if (h.nlmsg_type == NLMSG_ERROR && h.nlmsg_len >= sizeof(h) + sizeof(nlmsgerr)) {
        nlmsgerr e;
        std::memcpy(&e, d.data() + off + sizeof(h), sizeof(e));
        if (e.error != 0) {
          std::string msg;
          if (h.nlmsg_flags & NLM_F_ACK_TLVS) {
            std::size_t tl = off + sizeof(h) + sizeof(nlmsgerr);
            if (!(h.nlmsg_flags & NLM_F_CAPPED)) tl += e.msg.nlmsg_len - sizeof(nlmsghdr);
            if (tl <= off + h.nlmsg_len)
              msg =
                  str_of(attrs_of(View(d.data() + tl, off + h.nlmsg_len - tl)), NLMSGERR_ATTR_MSG);
          }
          return fail(-e.error, "{}{}{}", std::strerror(-e.error), msg.empty() ? "" : ": ", msg);
        }
      }
      off += NLMSG_ALIGN(h.nlmsg_len);
    }
  }
  return ok();
}

class Replayer {
 public:
  Replayer(Engine& e, rtnl::Server& s, bool recover) : engine_(e), server_(s), recover_(recover) {}

  Result<rtnl::Session*> session(const std::string& ns) {
    auto it = sessions_.find(ns);
    if (it != sessions_.end()) return it->second.get();
    rtnl::SessionOptions o;
    o.ns = ns;
    o.port_id = 0x7fff0000u + static_cast<std::uint32_t>(sessions_.size());
    auto s = server_.open_session(o);
    if (!s) return fail(s.error());
    (*s)->set_option(NETLINK_EXT_ACK, 1);
    (*s)->set_option(NETLINK_CAP_ACK, 1);
    return sessions_.emplace(ns, std::move(*s)).first->second.get();
  }

  Result<void> send(const std::string& ns, std::uint16_t type, std::uint16_t flags, View body) {
    auto s = session(ns);
    if (!s) return fail(s.error());
    Bytes m =
        message(type, static_cast<std::uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags), ++seq_, body);
    std::vector<rtnl::Datagram> replies;
    (*s)->handle(m, [&](rtnl::Datagram&& d) { replies.push_back(std::move(d)); });
    return answer_of(replies);
  }

  // A record that could not be applied: an error, or (recovering) a report.
  Result<void> failed(const ObjRow& r, const Error& e) {
    std::string text = fmt::format("namespace {}: {} {}: {}", r.ns, r.type, r.summary, e.message);
    if (!recover_) return fail(e.code, "cannot restore {}", text);
    engine_.log(LogLevel::Error, "ifcored: state: not restored: " + text);
    lost.push_back({&r, e.message});
    return ok();
  }

  struct Lost {
    const ObjRow* row;
    std::string error;
  };
  std::vector<Lost> lost;
  std::map<std::string, std::size_t> restored;

 private:
  Engine& engine_;
  rtnl::Server& server_;
  bool recover_;
  std::uint32_t seq_ = 0;
  std::map<std::string, std::unique_ptr<rtnl::Session>> sessions_;
};

Bytes ifinfo(int index, std::uint32_t flags = 0, std::uint32_t change = 0) {
  ifinfomsg ifi{};
  ifi.ifi_index = index;
  ifi.ifi_flags = flags;
  ifi.ifi_change = change;
  Bytes b(sizeof(ifi));
  std::memcpy(b.data(), &ifi, sizeof(ifi));
  return b;
}

void copy_attr(Bytes& b, const std::vector<RawAttr>& as, std::uint16_t type) {
  if (const RawAttr* a = find(as, type)) put_attr(b, type, a->data);
}

// What a create request says of a device besides its kind: name, index and the generic
// attributes Control::apply_create_attrs takes.
void identity(Bytes& b, const LinkInfo& l) {
  copy_attr(b, l.as, IFLA_IFNAME);
  copy_attr(b, l.as, IFLA_ADDRESS);
  copy_attr(b, l.as, IFLA_MTU);
  copy_attr(b, l.as, IFLA_TXQLEN);
  copy_attr(b, l.as, IFLA_GROUP);
}

}  // namespace

struct Store::Salvage {
  std::vector<NsRow> nss;
  std::vector<ObjRow> rows;
};

Result<Sync> parse_sync(std::string_view s) {
  if (s == "full") return Sync::Full;
  if (s == "batch") return Sync::Batch;
  if (s == "off") return Sync::Off;
  return fail(EINVAL, "--sync: \"{}\" is not one of full, batch, off", s);
}

Result<std::unique_ptr<Store>> Store::open(const Options& opts) {
  std::unique_ptr<Store> st(new Store(opts));
  auto db = open_db(opts.path, false);
  if (!db) return fail(db.error());
  st->db_ = *db;
  // (A file in WAL mode stays in it: its log is read by the check too.)
  auto existing = check_db(st->db_, opts.path);
  if (existing)
    if (auto w = st->exec("PRAGMA journal_mode=WAL"); !w) existing = fail(w.error());
  if (!existing && opts.recover) {
    // --state-recover: what can still be read is kept for the restore; the damaged file
    // is set aside (FILE.corrupt) and a new one takes its place.
    auto salvage = std::make_unique<Salvage>();
    auto read = load_rows(st->db_, salvage->nss, salvage->rows);
    std::fprintf(stderr,
                 "ifcored: %s\nifcored: --state-recover: %zu namespaces and %zu records read "
                 "from it%s%s; the file is kept as %s.corrupt\n",
                 existing.error().message.c_str(), salvage->nss.size(), salvage->rows.size(),
                 read ? "" : ", then: ", read ? "" : read.error().message.c_str(),
                 opts.path.c_str());
    sqlite3_close(st->db_);
    st->db_ = nullptr;
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::string from = opts.path + suffix, to = opts.path + ".corrupt" + suffix;
      if (std::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT)
        return fail(errno, "cannot set {} aside: {}", from, std::strerror(errno));
    }
    auto fresh = open_db(opts.path, false);
    if (!fresh) return fail(fresh.error());
    st->db_ = *fresh;
    IFCORE_TRY(st->exec("PRAGMA journal_mode=WAL"));
    existing = check_db(st->db_, opts.path);
    st->salvaged_ = std::move(salvage);
  }
  if (!existing) return fail(existing.error());
  const char* sync = opts.sync == Sync::Full    ? "PRAGMA synchronous=FULL"
                     : opts.sync == Sync::Batch ? "PRAGMA synchronous=NORMAL"
                                                : "PRAGMA synchronous=OFF";
  IFCORE_TRY(st->exec(sync));
  if (!*existing) {
    IFCORE_TRY(
        st->exec("BEGIN;"
                 "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                 "CREATE TABLE namespaces(name TEXT PRIMARY KEY, id INTEGER NOT NULL, "
                 "  seq INTEGER NOT NULL);"
                 "CREATE TABLE objects(ns TEXT NOT NULL, type TEXT NOT NULL, key BLOB NOT NULL, "
                 "  dev INTEGER NOT NULL, seq INTEGER NOT NULL, valid_until INTEGER, "
                 "  preferred_until INTEGER, summary TEXT NOT NULL, msg BLOB NOT NULL, "
                 "  PRIMARY KEY(ns, type, key));"
                 "CREATE INDEX objects_dev ON objects(ns, dev);"
                 "CREATE TABLE lost(ns TEXT NOT NULL, type TEXT NOT NULL, summary TEXT NOT NULL, "
                 "  msg BLOB NOT NULL, error TEXT NOT NULL, at INTEGER NOT NULL);"
                 "COMMIT;"));
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(st->db_, "INSERT INTO meta(key, value) VALUES('format', ?)", -1, &s,
                       nullptr);
    sqlite3_bind_text(s, 1, kFormat, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return fail(sql_error(st->db_, "state file"));
  }
  IFCORE_TRY(st->prepare());
  if (opts.sync == Sync::Batch) st->syncer_ = std::thread([p = st.get()] { p->syncer(); });
  return st;
}

Store::Store(Options opts) : opts_(std::move(opts)) {}

Store::~Store() {
  if (syncer_.joinable()) {
    {
      MutexLock lk(sync_mu_);
      sync_stop_ = true;
    }
    sync_cv_.notify_all();
    syncer_.join();
  }
  if (wal_fd_ >= 0) close(wal_fd_);
  for (auto* s : {upsert_, erase_, erase_dev_, erase_ns_objs_, upsert_ns_, erase_ns_})
    if (s) sqlite3_finalize(s);
  if (db_) sqlite3_close(db_);
}

Result<void> Store::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    Error e = sql_error(db_, fmt::format("state file {}", opts_.path));
    sqlite3_free(err);
    return fail(e);
  }
  return ok();
}

Result<void> Store::prepare() {
  struct P {
    sqlite3_stmt** s;
    const char* sql;
  } ps[] = {
      {&upsert_,
       "INSERT INTO objects(ns, type, key, dev, seq, valid_until, preferred_until, summary, msg) "
       "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT(ns, type, key) DO UPDATE SET "
       "dev=excluded.dev, seq=excluded.seq, valid_until=excluded.valid_until, "
       "preferred_until=excluded.preferred_until, summary=excluded.summary, msg=excluded.msg "
       "WHERE objects.msg IS NOT excluded.msg OR objects.dev IS NOT excluded.dev OR "
       "objects.valid_until IS NOT excluded.valid_until OR "
       "objects.preferred_until IS NOT excluded.preferred_until"},
      {&erase_, "DELETE FROM objects WHERE ns=?1 AND type=?2 AND key=?3"},
      {&erase_dev_, "DELETE FROM objects WHERE ns=?1 AND dev=?2"},
      {&erase_ns_objs_, "DELETE FROM objects WHERE ns=?1"},
      {&upsert_ns_,
       "INSERT INTO namespaces(name, id, seq) VALUES(?1, ?2, ?3) ON CONFLICT(name) DO UPDATE "
       "SET id=excluded.id WHERE namespaces.id IS NOT excluded.id"},
      {&erase_ns_, "DELETE FROM namespaces WHERE name=?1"},
  };
  for (auto& p : ps)
    if (sqlite3_prepare_v3(db_, p.sql, -1, SQLITE_PREPARE_PERSISTENT, p.s, nullptr) != SQLITE_OK)
      return fail(sql_error(db_, "state file: prepare"));
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db_,
                     "SELECT max((SELECT max(seq) FROM objects), (SELECT max(seq) FROM "
                     "namespaces))",
                     -1, &s, nullptr);
  if (s && sqlite3_step(s) == SQLITE_ROW) seq_ = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return ok();
}

void Store::tap(int ns_id, std::span<const std::uint8_t> msg) {
  if (msg.size() < sizeof(nlmsghdr)) return;
  nlmsghdr h;
  std::memcpy(&h, msg.data(), sizeof(h));
  if (!kept_type(h.nlmsg_type)) return;
  MutexLock lk(mu_);
  auto it = names_.find(ns_id);
  if (it == names_.end()) return;  // not a namespace the store knows (cannot happen)
  log_.push_back({Entry::Msg, it->second, ns_id, Bytes(msg.begin(), msg.end())});
  pending_.store(true, std::memory_order_release);
}

Result<void> Store::init(Control&, Namespace& ns) {
  MutexLock lk(mu_);
  names_[ns.id()] = ns.name();
  log_.push_back({Entry::NsAdd, ns.name(), ns.id(), {}});
  pending_.store(true, std::memory_order_release);
  return ok();
}

void Store::exit(Control&, Namespace& ns) {
  MutexLock lk(mu_);
  // remove_pernet (stop) calls exit for every namespace: they are not gone.
  if (detaching_) return;
  log_.push_back({Entry::NsDel, ns.name(), ns.id(), {}});
  pending_.store(true, std::memory_order_release);
}

Result<void> Store::apply(const std::string& ns, std::span<const std::uint8_t> msg) {
  std::size_t off = 0;
  while (off + sizeof(nlmsghdr) <= msg.size()) {
    nlmsghdr h;
    std::memcpy(&h, msg.data() + off, sizeof(h));
    if (h.nlmsg_len < sizeof(h) || off + h.nlmsg_len > msg.size()) break;
    View body = msg.subspan(off + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN);
    off += NLMSG_ALIGN(h.nlmsg_len);
    Row r = row_of(h, body);
    int rc = SQLITE_DONE;
    switch (r.what) {
      case Kind::None:
        continue;
      case Kind::Upsert:
        rc = Stmt(upsert_)
                 .text(1, ns)
                 .text(2, r.type)
                 .blob(3, r.key)
                 .i64(4, r.dev)
                 .i64(5, ++seq_)
                 .opt(6, r.valid_until)
                 .opt(7, r.preferred_until)
                 .text(8, r.summary)
                 .blob(9, r.body)
                 .step();
        break;
      case Kind::Erase:
        rc = Stmt(erase_).text(1, ns).text(2, r.type).blob(3, r.key).step();
        break;
      case Kind::EraseDev:
        // The device and what hangs on it (addresses, routes through it, neighbours).
        rc = Stmt(erase_dev_).text(1, ns).i64(2, r.dev).step();
        break;
    }
    if (rc != SQLITE_DONE) return fail(sql_error(db_, "state file: write"));
  }
  return ok();
}

Result<void> Store::commit() {
  std::vector<Entry> log;
  {
    MutexLock lk(mu_);
    log.swap(log_);
    pending_.store(false, std::memory_order_release);
  }
  if (log.empty()) return ok();
  const int changes_before = sqlite3_total_changes(db_);
  IFCORE_TRY(exec("BEGIN"));
  auto body = [&]() -> Result<void> {
    for (const auto& e : log) {
      int rc = SQLITE_DONE;
      switch (e.op) {
        case Entry::Msg:
          IFCORE_TRY(apply(e.ns, e.msg));
          break;
        case Entry::NsAdd:
          rc = Stmt(upsert_ns_).text(1, e.ns).i64(2, e.ns_id).i64(3, ++seq_).step();
          break;
        case Entry::NsDel:
          rc = Stmt(erase_ns_objs_).text(1, e.ns).step();
          if (rc == SQLITE_DONE) rc = Stmt(erase_ns_).text(1, e.ns).step();
          break;
      }
      if (rc != SQLITE_DONE) return fail(sql_error(db_, "state file: write"));
    }
    return ok();
  };
  if (auto r = body(); !r) {
    (void)exec("ROLLBACK");
    return r;
  }
  const bool wrote = sqlite3_total_changes(db_) != changes_before;
  IFCORE_TRY(exec("COMMIT"));
  ++commits_;
  if (wrote && opts_.sync == Sync::Batch) {
    MutexLock lk(sync_mu_);
    sync_wanted_ = true;
    sync_cv_.notify_one();
  }
  return ok();
}

void Store::syncer() {
  // Batch: the commits are in the write-ahead log's pages (a killed daemon loses none of
  // them); this makes them durable against a crash of the machine, at most one interval
  // late.
  MutexLock lk(sync_mu_);
  for (;;) {
    while (!sync_stop_ && !sync_wanted_) lk.wait(sync_cv_);
    if (sync_stop_) return;
    lk.unlock();
    std::this_thread::sleep_for(opts_.batch_interval);
    lk.lock();
    sync_wanted_ = false;
    if (wal_fd_ < 0) wal_fd_ = ::open((opts_.path + "-wal").c_str(), O_RDONLY | O_CLOEXEC);
    int fd = wal_fd_;
    lk.unlock();
    if (fd >= 0) fdatasync(fd);
    lk.lock();
  }
}

Result<void> Store::start(Engine& engine, rtnl::Server& server) {
  engine_ = &engine;
  server_ = &server;
  // Recording starts before the replay, so that the rows are rewritten as the engine
  // announces what it made of them (new namespace ids, the kernel-made parts).
  server.set_tap([this](int ns_id, std::span<const std::uint8_t> msg) { tap(ns_id, msg); });
  {
    Control ctl = engine.control();
    IFCORE_TRY(ctl.add_pernet(*this));
  }
  attached_ = true;
  auto r = replay(engine, server);
  if (!r) {
    // Nothing of the failed start reaches the file.
    MutexLock lk(mu_);
    log_.clear();
    pending_.store(false);
    return r;
  }
  return commit();
}

Result<void> Store::stop() {
  if (!attached_) return ok();
  server_->set_tap({});
  {
    Control ctl = engine_->control();
    {
      MutexLock lk(mu_);
      detaching_ = true;
    }
    ctl.remove_pernet(*this);
  }
  attached_ = false;
  auto r = commit();
  if (r && opts_.sync != Sync::Off) (void)exec("PRAGMA wal_checkpoint(TRUNCATE)");
  return r;
}

Result<void> Store::replay(Engine& engine, rtnl::Server& server) {
  // Everything is read first: the replay's own announcements rewrite the rows.
  std::vector<NsRow> nss;
  std::vector<ObjRow> rows;
  if (salvaged_) {
    nss = std::move(salvaged_->nss);
    rows = std::move(salvaged_->rows);
    salvaged_.reset();
  } else {
    IFCORE_TRY(load_rows(db_, nss, rows));
  }
  if (nss.empty() && rows.empty()) return ok();

  Replayer rp(engine, server, opts_.recover);
  std::map<int, std::string> ns_by_old_id;
  std::set<std::string> known_ns;
  // 1. Namespaces, in the order they were made.
  for (const auto& n : nss) {
    ns_by_old_id[n.id] = n.name;
    Control ctl = engine.control();
    if (!ctl.find_namespace(n.name)) {
      auto made = ctl.create_namespace(n.name);
      if (!made) {
        if (!opts_.recover)
          return fail(made.error().code, "cannot restore namespace {}: {}", n.name,
                      made.error().message);
        engine.log(LogLevel::Error, fmt::format("ifcored: state: not restored: namespace {}: {}",
                                                n.name, made.error().message));
        continue;
      }
    }
    known_ns.insert(n.name);
  }
  auto ns_ok = [&](const ObjRow& r) -> Result<void> {
    if (known_ns.count(r.ns)) return ok();
    return rp.failed(r, Error{ENOENT, fmt::format("namespace {} is not kept", r.ns)});
  };

  // Sysctls in the order they were written: `default` ones before the devices (a device
  // made after such a write took its values from it), the others after them. A device's
  // setting is written under the device's name now (its ifindex is what is kept).
  auto replay_sysctls = [&](bool defaults) -> Result<void> {
    for (const auto& r : rows) {
      if (r.type != "sysctl") continue;
      auto as = attrs_of(View(r.msg).subspan(std::min<std::size_t>(r.msg.size(), 4)));
      std::string name = str_of(as, rtnl::IFCORE_SYSCTL_NAME);
      if ((name.find(".conf.default.") != std::string::npos) != defaults) continue;
      IFCORE_TRY(ns_ok(r));
      if (!known_ns.count(r.ns)) continue;
      Bytes body = r.msg;
      if (r.dev) {
        std::string dev;
        {
          Control ctl = engine.control();
          Namespace* n = ctl.find_namespace(r.ns);
          Device* d = n ? ctl.find(*n, r.dev) : nullptr;
          if (d) dev = d->name();
        }
        auto conf = name.find(".conf.");
        auto last = name.rfind('.');
        if (dev.empty() || conf == std::string::npos || last <= conf + 5) {
          IFCORE_TRY(rp.failed(r, Error{ENODEV, "its device is not kept"}));
          continue;
        }
        name = name.substr(0, conf + 6) + dev + name.substr(last);
        body.assign(r.msg.begin(), r.msg.begin() + std::min<std::ptrdiff_t>(4, r.msg.size()));
        put_str(body, rtnl::IFCORE_SYSCTL_NAME, name);
        put_str(body, rtnl::IFCORE_SYSCTL_VALUE, str_of(as, rtnl::IFCORE_SYSCTL_VALUE));
      }
      if (auto res = rp.send(r.ns, rtnl::IFCORE_NLMSG_SYSCTL, 0, body); !res)
        IFCORE_TRY(rp.failed(r, res.error()));
      else
        ++rp.restored["sysctl"];
    }
    return ok();
  };
  IFCORE_TRY(replay_sysctls(true));

  // 2. Devices: created lower before upper (IFLA_LINK), a veth with its peer.
  std::map<std::pair<std::string, int>, LinkInfo> links;
  for (const auto& r : rows) {
    if (r.type != "link") continue;
    LinkInfo l;
    l.row = &r;
    if (r.msg.size() < sizeof(ifinfomsg)) {
      IFCORE_TRY(rp.failed(r, Error{EBADMSG, "the record is too short"}));
      continue;
    }
    std::memcpy(&l.ifi, r.msg.data(), sizeof(l.ifi));
    l.as = attrs_of(View(r.msg).subspan(NLMSG_ALIGN(sizeof(ifinfomsg))));
    l.name = str_of(l.as, IFLA_IFNAME);
    if (const RawAttr* li = find(l.as, IFLA_LINKINFO)) {
      auto info = attrs_of(li->data);
      l.kind = str_of(info, IFLA_INFO_KIND);
      if (const RawAttr* d = find(info, IFLA_INFO_DATA)) l.info_data = d->data;
    }
    l.link = u32_of(l.as, IFLA_LINK);
    l.master = u32_of(l.as, IFLA_MASTER);
    if (auto n = u32_of(l.as, IFLA_LINK_NETNSID)) l.link_netnsid = static_cast<std::int32_t>(*n);
    links.emplace(std::make_pair(r.ns, l.ifi.ifi_index), std::move(l));
  }
  auto exists = [&](const std::string& ns, int ifindex) {
    Control ctl = engine.control();
    Namespace* n = ctl.find_namespace(ns);
    return n && ctl.find(*n, ifindex) != nullptr;
  };
  auto lower_ns = [&](const LinkInfo& l) {
    if (!l.link_netnsid || *l.link_netnsid < 0) return l.row->ns;
    auto it = ns_by_old_id.find(*l.link_netnsid);
    return it == ns_by_old_id.end() ? std::string() : it->second;
  };
  // Devices the engine made by itself (a namespace's loopback) are changed, not made.
  for (auto& [k, l] : links) {
    if (!known_ns.count(k.first)) {
      IFCORE_TRY(ns_ok(*l.row));
      l.done = true;
      continue;
    }
    if (exists(k.first, k.second)) l.done = true;
  }
  constexpr std::uint32_t kUserFlags =
      IFF_UP | IFF_DEBUG | IFF_NOARP | IFF_PROMISC | IFF_ALLMULTI | IFF_MULTICAST;
  // Indexes, so that the order costs O(N log N) for N devices: the ports each master has,
  // and which veth names which as its peer.
  std::map<std::pair<std::string, int>, int> ports_of;
  std::map<std::pair<std::string, int>, std::pair<std::string, int>> veth_named_by;
  for (const auto& [k, l] : links) {
    if (l.master && *l.master) ++ports_of[{k.first, static_cast<int>(*l.master)}];
    if (l.kind == "veth" && l.link && *l.link)
      veth_named_by[{lower_ns(l), static_cast<int>(*l.link)}] = k;
  }
  auto is_master = [&](const std::pair<std::string, int>& k) { return ports_of.count(k) > 0; };
  // Right after its create, a device is set as it was (up included, but for a master,
  // which comes up after its ports join it): a device made later on top of it then finds
  // it as it did (Linux: a vlan made on a lower device that is up stays down; one that is
  // there when the lower device comes up comes up with it).
  auto settle_new = [&](const std::pair<std::string, int>& k, const LinkInfo& l) -> Result<void> {
    std::uint32_t change = kUserFlags & ~static_cast<std::uint32_t>(IFF_PROMISC);
    if (is_master(k) || (l.master && *l.master)) change &= ~static_cast<std::uint32_t>(IFF_UP);
    Bytes b = ifinfo(l.ifi.ifi_index, l.ifi.ifi_flags & change, change);
    copy_attr(b, l.as, IFLA_IFALIAS);
    return rp.send(k.first, RTM_NEWLINK, 0, b);
  };
  std::set<std::pair<std::string, int>> created;
  for (bool progress = true; progress;) {
    progress = false;
    for (auto& [k, l] : links) {
      if (l.done) continue;
      const bool veth = l.kind == "veth";
      if (!veth && l.link && *l.link != 0) {
        std::string lns = lower_ns(l);
        if (!exists(lns, static_cast<int>(*l.link))) {
          // Waits for its lower device, if that is still to be made.
          auto lo = links.find({lns, static_cast<int>(*l.link)});
          if (lo != links.end() && !lo->second.done) continue;
        }
      }
      l.done = true;
      progress = true;
      if (l.kind.empty()) {
        IFCORE_TRY(rp.failed(*l.row, Error{EOPNOTSUPP, "the device has no kind to make it with"}));
        continue;
      }
      Bytes b = ifinfo(l.ifi.ifi_index);
      identity(b, l);
      if (!veth && l.link) put_u32(b, IFLA_LINK, *l.link);
      std::size_t li = begin_nest(b, IFLA_LINKINFO);
      put_str(b, IFLA_INFO_KIND, l.kind);
      LinkInfo* peer = nullptr;
      std::string peer_ns;
      if (veth) {
        // The end announced first was announced before the pair was tied (IFLA_LINK 0):
        // then the other end names it.
        auto p = links.end();
        if (l.link && *l.link)
          p = links.find({lower_ns(l), static_cast<int>(*l.link)});
        else if (auto n = veth_named_by.find(k); n != veth_named_by.end())
          p = links.find(n->second);
        if (p == links.end() || p->second.kind != "veth" || p->second.done) {
          IFCORE_TRY(rp.failed(*l.row, Error{ENOENT, "the veth's peer is not kept"}));
          continue;
        }
        peer = &p->second;
        std::size_t d = begin_nest(b, IFLA_INFO_DATA);
        std::size_t pn = begin_nest(b, VETH_INFO_PEER);
        Bytes pb = ifinfo(peer->ifi.ifi_index);
        identity(pb, *peer);
        if (p->first.first != k.first) put_str(pb, kIflaNetNsName, p->first.first);
        peer_ns = p->first.first;
        b.insert(b.end(), pb.begin(), pb.end());
        end_nest(b, pn);
        end_nest(b, d);
      } else if (!l.info_data.empty()) {
        // What the kind reports and does not take (identifiers, timers, counters) is left
        // out: its policy says what a request may set.
        AttrPolicy policy;
        {
          Control ctl = engine.control();
          if (const ifcore::Kind* kd = ctl.find_kind(l.kind)) policy = kd->policy();
        }
        Bytes data;
        for (const auto& a : attrs_of(l.info_data))
          if (std::any_of(policy.begin(), policy.end(), [&](const AttrPolicyEntry& e) {
                return e.type == a.type && e.shape != AttrShape::Flag;
              })) {
            // Reported, in the policy, and refused as read-only.
            if (l.kind == "macvlan" &&
                (a.type == IFLA_MACVLAN_MACADDR_COUNT || a.type == IFLA_MACVLAN_BC_QUEUE_LEN_USED))
              continue;
            if (l.kind == "bridge" && a.type == IFLA_BR_MULTI_BOOLOPT &&
                a.data.size() >= sizeof(br_boolopt_multi)) {
              // The bridge reports every option it has (Linux 6.18's mask) and takes those
              // of the headers it was built with.
              br_boolopt_multi bo;
              std::memcpy(&bo, a.data.data(), sizeof(bo));
              bo.optmask &= (1u << BR_BOOLOPT_MAX) - 1;
              bo.optval &= bo.optmask;
              put_attr(data, a.type, View(reinterpret_cast<const std::uint8_t*>(&bo), sizeof(bo)));
              continue;
            }
            put_attr(data, a.type, a.data);
          }
        put_attr(b, IFLA_INFO_DATA, data);
      }
      end_nest(b, li);
      auto r = rp.send(k.first, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, b);
      if (!r) {
        IFCORE_TRY(rp.failed(*l.row, r.error()));
        continue;
      }
      created.insert(k);
      ++rp.restored["link"];
      if (auto s = settle_new(k, l); !s) IFCORE_TRY(rp.failed(*l.row, s.error()));
      if (peer) {
        peer->done = true;
        created.insert({peer_ns, peer->ifi.ifi_index});
        ++rp.restored["link"];
        if (auto s = settle_new({peer_ns, peer->ifi.ifi_index}, *peer); !s)
          IFCORE_TRY(rp.failed(*peer->row, s.error()));
      }
    }
  }
  for (auto& [k, l] : links)
    if (!l.done) IFCORE_TRY(rp.failed(*l.row, Error{ENODEV, "its lower device is not kept"}));

  // 3. Device settings: ports before their master; flags (up) and master together.
  std::set<std::pair<std::string, int>> set_done;
  auto mark_done = [&](const std::pair<std::string, int>& k, const LinkInfo& l) {
    set_done.insert(k);
    if (l.master && *l.master)
      if (auto m = ports_of.find({k.first, static_cast<int>(*l.master)}); m != ports_of.end())
        --m->second;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (auto& [k, l] : links) {
      if (set_done.count(k)) continue;
      if (!exists(k.first, k.second)) {
        mark_done(k, l);
        continue;
      }
      // A master waits for its ports, so that it comes up with them (its carrier, and
      // what follows from it, as when it was configured).
      if (auto w = ports_of.find(k); w != ports_of.end() && w->second > 0) continue;
      mark_done(k, l);
      progress = true;
      // A port's promiscuity comes from its master: not asked again.
      std::uint32_t change = kUserFlags;
      // A port joins its master down, and comes up after it (as `ip link set P master M;
      // ip link set M up; ip link set P up` does): see the last pass below.
      if (l.master) change &= ~static_cast<std::uint32_t>(IFF_PROMISC | IFF_UP);
      Bytes b = ifinfo(l.ifi.ifi_index, l.ifi.ifi_flags & change, change);
      if (!created.count(k)) identity(b, l);
      if (l.master) put_u32(b, IFLA_MASTER, *l.master);
      copy_attr(b, l.as, IFLA_IFALIAS);
      auto r = rp.send(k.first, RTM_NEWLINK, 0, b);
      if (r) {
        if (const RawAttr* props = find(l.as, IFLA_PROP_LIST)) {
          Bytes pb = ifinfo(l.ifi.ifi_index);
          put_attr(pb, IFLA_PROP_LIST | NLA_F_NESTED, props->data);
          r = rp.send(k.first, RTM_NEWLINKPROP, 0, pb);
        }
      }
      if (!r) IFCORE_TRY(rp.failed(*l.row, r.error()));
    }
  }

  for (auto& [k, l] : links) {
    if (!l.master || !*l.master || !(l.ifi.ifi_flags & IFF_UP) || !exists(k.first, k.second))
      continue;
    Bytes b = ifinfo(l.ifi.ifi_index, IFF_UP, IFF_UP);
    if (auto r = rp.send(k.first, RTM_NEWLINK, 0, b); !r) IFCORE_TRY(rp.failed(*l.row, r.error()));
  }

  // 4. The rest, each after what it needs: addresses, nexthops (groups after their
  // members), routes, rules, neighbours.
  auto replay_type = [&](const char* type, std::uint16_t msg_type, std::uint16_t flags,
                         auto&& pick) -> Result<void> {
    for (const auto& r : rows) {
      if (r.type != type || !pick(r)) continue;
      IFCORE_TRY(ns_ok(r));
      if (!known_ns.count(r.ns)) continue;
      Bytes body = r.msg;
      if (r.valid_until || r.preferred_until) {
        const std::int64_t now = wall_now();
        ifa_cacheinfo ci{};
        ci.ifa_valid =
            r.valid_until
                ? static_cast<std::uint32_t>(std::max<std::int64_t>(0, *r.valid_until - now))
                : kForever;
        ci.ifa_prefered =
            r.preferred_until
                ? static_cast<std::uint32_t>(std::max<std::int64_t>(0, *r.preferred_until - now))
                : kForever;
        // An address whose lifetime ended while the daemon was away is gone, as it would
        // be had the daemon run.
        if (ci.ifa_valid == 0) continue;
        if (ci.ifa_prefered > ci.ifa_valid) ci.ifa_prefered = ci.ifa_valid;
        put_attr(body, IFA_CACHEINFO, View(reinterpret_cast<const std::uint8_t*>(&ci), sizeof(ci)));
      }
      auto res = rp.send(r.ns, msg_type, flags, body);
      if (!res)
        IFCORE_TRY(rp.failed(r, res.error()));
      else
        ++rp.restored[type];
    }
    return ok();
  };
  auto all = [](const ObjRow&) { return true; };
  auto is_group = [](const ObjRow& r) {
    return r.msg.size() >= sizeof(nhmsg) &&
           find(attrs_of(View(r.msg).subspan(NLMSG_ALIGN(sizeof(nhmsg)))), NHA_GROUP) != nullptr;
  };
  IFCORE_TRY(replay_sysctls(false));
  IFCORE_TRY(replay_type("addr", RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE, all));
  IFCORE_TRY(replay_type("nexthop", RTM_NEWNEXTHOP, NLM_F_CREATE | NLM_F_REPLACE,
                         [&](const ObjRow& r) { return !is_group(r); }));
  IFCORE_TRY(replay_type("nexthop", RTM_NEWNEXTHOP, NLM_F_CREATE | NLM_F_REPLACE, is_group));
  IFCORE_TRY(replay_type("route", RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, all));
  IFCORE_TRY(replay_type("rule", RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL, all));
  IFCORE_TRY(replay_type("rule-deleted", RTM_DELRULE, 0, all));
  IFCORE_TRY(replay_type("neigh", RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, all));

  std::string summary;
  for (const auto& [t, n] : rp.restored) summary += fmt::format(" {} {}", n, t);
  engine.log(LogLevel::Info,
             fmt::format("ifcored: state: restored {} namespaces,{}{}", known_ns.size(),
                         summary.empty() ? " nothing else" : summary,
                         rp.lost.empty() ? std::string()
                                         : fmt::format("; {} records not restored "
                                                       "(kept in table lost)",
                                                       rp.lost.size())));
  if (!rp.lost.empty()) {
    // Under --state-recover: what could not be applied leaves the live rows for the table
    // `lost`, with the error, so that it is neither replayed again nor forgotten.
    IFCORE_TRY(exec("BEGIN"));
    sqlite3_stmt* ins = nullptr;
    sqlite3_stmt* del = nullptr;
    sqlite3_prepare_v2(db_,
                       "INSERT INTO lost(ns, type, summary, msg, error, at) VALUES(?1, ?2, ?3, "
                       "?4, ?5, ?6)",
                       -1, &ins, nullptr);
    sqlite3_prepare_v2(db_, "DELETE FROM objects WHERE ns=?1 AND type=?2 AND key=?3", -1, &del,
                       nullptr);
    bool okay = ins && del;
    for (const auto& l : rp.lost) {
      if (!okay) break;
      okay = Stmt(ins)
                     .text(1, l.row->ns)
                     .text(2, l.row->type)
                     .text(3, l.row->summary)
                     .blob(4, l.row->msg)
                     .text(5, l.error)
                     .i64(6, wall_now())
                     .step() == SQLITE_DONE &&
             Stmt(del).text(1, l.row->ns).text(2, l.row->type).blob(3, l.row->key).step() ==
                 SQLITE_DONE;
    }
    sqlite3_finalize(ins);
    sqlite3_finalize(del);
    if (!okay) {
      Error e = sql_error(db_, "state file: write");
      (void)exec("ROLLBACK");
      return fail(e);
    }
    IFCORE_TRY(exec("COMMIT"));
  }
  return ok();
}

Result<void> dump(const std::string& path, std::FILE* out) {
  if (access(path.c_str(), R_OK) != 0)
    return fail(errno, "state file {}: {}", path, std::strerror(errno));
  auto db = open_db(path, true);
  if (!db) return fail(db.error());
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> guard(*db, sqlite3_close);
  auto existing = check_db(*db, path);
  if (!existing) return fail(existing.error());
  if (!*existing) return ok();
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(*db, "SELECT name, id FROM namespaces ORDER BY seq", -1, &s, nullptr);
  while (s && sqlite3_step(s) == SQLITE_ROW)
    std::fprintf(out, "namespace %s id %d\n", column_text(s, 0).c_str(), sqlite3_column_int(s, 1));
  sqlite3_finalize(s);
  sqlite3_prepare_v2(*db,
                     "SELECT ns, type, summary, valid_until, preferred_until FROM objects ORDER BY "
                     "ns, CASE type WHEN 'link' THEN 0 WHEN 'addr' THEN 1 WHEN 'nexthop' THEN 2 "
                     "WHEN 'route' THEN 3 WHEN 'rule' THEN 4 ELSE 5 END, dev, summary",
                     -1, &s, nullptr);
  while (s && sqlite3_step(s) == SQLITE_ROW) {
    std::string extra;
    if (sqlite3_column_type(s, 3) != SQLITE_NULL)
      extra += fmt::format(" valid_until {}", sqlite3_column_int64(s, 3));
    if (sqlite3_column_type(s, 4) != SQLITE_NULL)
      extra += fmt::format(" preferred_until {}", sqlite3_column_int64(s, 4));
    std::fprintf(out, "%s %s %s%s\n", column_text(s, 0).c_str(), column_text(s, 1).c_str(),
                 column_text(s, 2).c_str(), extra.c_str());
  }
  sqlite3_finalize(s);
  sqlite3_prepare_v2(*db, "SELECT ns, type, summary, error FROM lost ORDER BY rowid", -1, &s,
                     nullptr);
  while (s && sqlite3_step(s) == SQLITE_ROW)
    std::fprintf(out, "lost %s %s %s: %s\n", column_text(s, 0).c_str(), column_text(s, 1).c_str(),
                 column_text(s, 2).c_str(), column_text(s, 3).c_str());
  sqlite3_finalize(s);
  return ok();
}

}  // namespace ifcore::state
