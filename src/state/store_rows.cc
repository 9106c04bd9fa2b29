// state/store_rows.cc — what a notification becomes in the state store: one row per
// object, keyed by (namespace, type, key), with what is transient left out (store_impl.h).
#include "state/store_impl.h"

namespace ifcore::state::detail {

// ---- what a notification becomes

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

namespace {

// A bridge port's settings (IFLA_INFO_SLAVE_DATA), without what the bridge derives (its
// STP state, identifiers, timers and counts).
bool port_setting(std::uint16_t t) {
  switch (t) {
    case IFLA_BRPORT_PRIORITY:
    case IFLA_BRPORT_COST:
    case IFLA_BRPORT_MODE:
    case IFLA_BRPORT_GUARD:
    case IFLA_BRPORT_PROTECT:
    case IFLA_BRPORT_FAST_LEAVE:
    case IFLA_BRPORT_LEARNING:
    case IFLA_BRPORT_UNICAST_FLOOD:
    case IFLA_BRPORT_PROXYARP:
    case IFLA_BRPORT_PROXYARP_WIFI:
    case IFLA_BRPORT_MULTICAST_ROUTER:
    case IFLA_BRPORT_MCAST_FLOOD:
    case IFLA_BRPORT_MCAST_TO_UCAST:
    case IFLA_BRPORT_VLAN_TUNNEL:
    case IFLA_BRPORT_BCAST_FLOOD:
    case IFLA_BRPORT_GROUP_FWD_MASK:
    case IFLA_BRPORT_NEIGH_SUPPRESS:
    case IFLA_BRPORT_ISOLATED:
    case IFLA_BRPORT_MCAST_EHT_HOSTS_LIMIT:
    case IFLA_BRPORT_LOCKED:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::set<std::pair<std::string, int>> bridges_addressed_by_ports(const std::vector<ObjRow>& rows) {
  struct Seen {
    Bytes own, lowest;
    bool bridge = false;
  };
  std::map<std::pair<std::string, int>, Seen> seen;
  for (const ObjRow& r : rows) {
    if (r.type != "link" || r.msg.size() < sizeof(ifinfomsg)) continue;
    auto ifi = header_of<ifinfomsg>(r.msg);
    auto as = attrs_of(View(r.msg).subspan(NLMSG_ALIGN(sizeof(ifinfomsg))));
    const RawAttr* a = find(as, IFLA_ADDRESS);
    if (!a) continue;
    Bytes addr(a->data.begin(), a->data.end());
    Seen& self = seen[{r.ns, ifi.ifi_index}];
    self.own = addr;
    if (const RawAttr* li = find(as, IFLA_LINKINFO))
      self.bridge = str_of(attrs_of(li->data), IFLA_INFO_KIND) == "bridge";
    if (auto m = u32_of(as, IFLA_MASTER); m && *m) {
      Seen& master = seen[{r.ns, static_cast<int>(*m)}];
      if (master.lowest.empty() || addr < master.lowest) master.lowest = addr;
    }
  }
  std::set<std::pair<std::string, int>> out;
  for (const auto& [k, s] : seen)
    if (s.bridge && !s.lowest.empty() && s.own == s.lowest) out.insert(k);
  return out;
}

Bytes port_settings(const std::vector<RawAttr>& link_attrs) {
  Bytes out;
  const RawAttr* info = find(link_attrs, IFLA_LINKINFO);
  if (!info) return out;
  auto as = attrs_of(info->data);
  const RawAttr* data = find(as, IFLA_INFO_SLAVE_DATA);
  if (str_of(as, IFLA_INFO_SLAVE_KIND) != "bridge" || !data) return out;
  std::size_t nest = begin_nest(out, IFLA_LINKINFO);
  put_str(out, IFLA_INFO_SLAVE_KIND, "bridge");
  put_attr(out, IFLA_INFO_SLAVE_DATA | NLA_F_NESTED, data->data);
  end_nest(out, nest);
  return out;
}

// IFLA_LINKINFO without what changes by itself or is not kept: the bridge's timers and
// identifiers it derives, a bridge port's derived state, any other port data.
Bytes link_info_kept(View info) {
  auto as = attrs_of(info);
  Bytes out;
  std::string kind = str_of(as, IFLA_INFO_KIND);
  const bool bridge_port = str_of(as, IFLA_INFO_SLAVE_KIND) == "bridge";
  for (const auto& a : as) {
    if ((a.type == IFLA_INFO_SLAVE_KIND || a.type == IFLA_INFO_SLAVE_DATA) && !bridge_port)
      continue;
    if (a.type == IFLA_INFO_SLAVE_DATA) {
      Bytes data;
      for (const auto& d : attrs_of(a.data))
        if (port_setting(d.type)) put_attr(data, d.type, d.data);
      put_attr(out, IFLA_INFO_SLAVE_DATA, data);
      continue;
    }
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

namespace {

// Of a device's IFLA_AF_SPEC, only its IPv6 address generation mode is configuration (the
// rest is statistics and settings that the sysctl rows keep): kept as an IFLA_AF_SPEC that
// holds AF_INET6's IFLA_INET6_ADDR_GEN_MODE alone.
void put_addr_gen_mode(Bytes& out, View af_spec) {
  auto families = attrs_of(af_spec);
  const RawAttr* in6 = find(families, AF_INET6);
  if (!in6) return;
  auto inner = attrs_of(in6->data);
  const RawAttr* mode = find(inner, IFLA_INET6_ADDR_GEN_MODE);
  if (!mode) return;
  std::size_t spec = begin_nest(out, IFLA_AF_SPEC);
  std::size_t fam = begin_nest(out, AF_INET6);
  put_attr(out, IFLA_INET6_ADDR_GEN_MODE, mode->data);
  end_nest(out, fam);
  end_nest(out, spec);
}

}  // namespace

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
      case IFLA_MAP:
      case IFLA_XDP:
      case IFLA_QDISC:
      case IFLA_PROMISCUITY:
      case IFLA_PAD:
        break;
      case IFLA_AF_SPEC:
        put_addr_gen_mode(out, a.data);
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

// A forwarding entry (family AF_BRIDGE): a bridge's (NDA_MASTER names the bridge) or a
// VXLAN's (NDA_DST names the remote); the entries of a device's own address lists are
// derived and not kept. Static and permanent entries are configuration, learned ones and a
// port's local ones are not. The row holds the request that makes the entry again (`bridge fdb
// add|append`): `master` on a port, `self` on the bridge itself, NDA_MASTER and the times left out.
Row fdb_row(const nlmsghdr& h, View body) {
  Row r;
  r.type = "fdb";
  auto nd = header_of<ndmsg>(body);
  auto as = attrs_of(body.subspan(std::min(body.size(), NLMSG_ALIGN(sizeof(ndmsg)))));
  auto master = u32_of(as, NDA_MASTER);
  if (!master && !find(as, NDA_DST)) return r;
  r.dev = nd.ndm_ifindex;
  // A bridge's entry is known by its bridge, MAC and VLAN, as the bridge knows it (a port's
  // own address is announced on the port when added and on the bridge when deleted); a
  // VXLAN's by its device and remote.
  key_add(r.key, master ? static_cast<const void*>(&*master) : &nd.ndm_ifindex, 4);
  key_attr(r.key, as, NDA_LLADDR);
  key_attr(r.key, as, NDA_VLAN);
  key_attr(r.key, as, NDA_DST);
  key_attr(r.key, as, NDA_PORT);
  key_attr(r.key, as, NDA_VNI);
  key_attr(r.key, as, NDA_IFINDEX);
  // A port's local (permanent) entries follow from its address, and may move to the bridge
  // unannounced when the port leaves (Linux: fdb_delete_local): not kept.
  const bool port_local =
      master && static_cast<int>(*master) != nd.ndm_ifindex && (nd.ndm_state & NUD_PERMANENT);
  if (h.nlmsg_type == RTM_DELNEIGH || !(nd.ndm_state & (NUD_PERMANENT | NUD_NOARP)) ||
      (nd.ndm_flags & NTF_EXT_LEARNED) || port_local) {
    r.what = Kind::Erase;
    return r;
  }
  r.what = Kind::Upsert;
  r.body = filtered(body, sizeof(ndmsg), {NDA_CACHEINFO, NDA_MASTER, NDA_PROBES});
  ndmsg req = nd;
  if (master)
    req.ndm_flags = static_cast<std::uint8_t>(
        (nd.ndm_flags & ~(NTF_SELF | NTF_MASTER)) |
        (static_cast<int>(*master) == nd.ndm_ifindex ? NTF_SELF : NTF_MASTER));
  std::memcpy(r.body.data(), &req, sizeof(req));
  const RawAttr* mac = find(as, NDA_LLADDR);
  std::string mac_text;
  if (mac)
    for (std::size_t i = 0; i < mac->data.size(); ++i)
      mac_text += fmt::format("{}{:02x}", i ? ":" : "", mac->data[i]);
  const RawAttr* dst = find(as, NDA_DST);
  r.summary =
      fmt::format("{} dev {}{}{}", mac_text.empty() ? "?" : mac_text, nd.ndm_ifindex,
                  master ? fmt::format(" master {}", *master) : std::string(),
                  dst ? " dst " + addr_text(dst->data.size() == 16 ? AF_INET6 : AF_INET, dst->data)
                      : std::string());
  return r;
}

Row neigh_row(const nlmsghdr& h, View body) {
  Row r;
  r.type = "neigh";
  auto nd = header_of<ndmsg>(body);
  auto as = attrs_of(body.subspan(std::min(body.size(), NLMSG_ALIGN(sizeof(ndmsg)))));
  if (nd.ndm_family == AF_BRIDGE) return fdb_row(h, body);
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

namespace {

// The body's entry is one of a new namespace's (its prefix, length and no device).
bool default_addrlabel(View body) {
  auto m = header_of<ifaddrlblmsg>(body);
  auto as = attrs_of(body.subspan(std::min(body.size(), NLMSG_ALIGN(sizeof(ifaddrlblmsg)))));
  const RawAttr* a = find(as, IFAL_ADDRESS);
  if (!a || a->data.size() < 16 || m.ifal_index) return false;
  auto prefix = IpAddr::from_bytes(AF_INET6, a->data.first(16));
  const auto& defaults = inet::default_addrlabels();
  return prefix && std::any_of(defaults.begin(), defaults.end(), [&](const inet::AddrLabel& d) {
           return d.prefix == *prefix && d.prefix_len == m.ifal_prefixlen;
         });
}

}  // namespace

// An IPv6 address label changed (rtnl's addrlabel handler shows the tap the request; Linux
// announces none): a row per prefix, length and device, the key of Linux's table. The
// default entries are the engine's own: one deleted is kept as the delete (its body flagged
// kDeletedDefault), made again at restore, as a default rule's is; any other deleted is
// forgotten, and so is a device's entry when the device goes.
Row addrlabel_row(const nlmsghdr& h, View body) {
  Row r;
  r.type = "addrlabel";
  auto m = header_of<ifaddrlblmsg>(body);
  auto as = attrs_of(body.subspan(std::min(body.size(), NLMSG_ALIGN(sizeof(ifaddrlblmsg)))));
  const RawAttr* a = find(as, IFAL_ADDRESS);
  if (!a || a->data.size() < 16) return r;
  key_add(r.key, a->data.data(), 16);
  key_add(r.key, &m.ifal_prefixlen, 1);
  key_add(r.key, &m.ifal_index, 4);
  // A device's entry goes from the file with the device: the engine keeps it (as Linux),
  // but a restore could not make it again (no device of that ifindex, EINVAL).
  r.dev = static_cast<int>(m.ifal_index);
  r.summary = fmt::format("{}/{} dev {} label {}", addr_text(AF_INET6, a->data.first(16)),
                          m.ifal_prefixlen, m.ifal_index, u32_of(as, IFAL_LABEL).value_or(0));
  r.body.assign(body.begin(), body.end());
  if (h.nlmsg_type == RTM_NEWADDRLABEL) {
    r.what = Kind::Upsert;
    return r;
  }
  if (!default_addrlabel(body)) {
    r.what = Kind::Erase;
    return r;
  }
  r.what = Kind::Upsert;
  r.body[offsetof(ifaddrlblmsg, ifal_flags)] = kDeletedDefault;
  r.summary += " (deleted)";
  return r;
}

bool addrlabel_deleted(const ObjRow& r) {
  return r.msg.size() >= sizeof(ifaddrlblmsg) &&
         r.msg[offsetof(ifaddrlblmsg, ifal_flags)] == kDeletedDefault;
}

bool addrlabel_of_default(const ObjRow& r) {
  return r.msg.size() >= sizeof(ifaddrlblmsg) && default_addrlabel(r.msg);
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
  r.body = filtered(body, 4, {rtnl::IFCORE_SYSCTL_WAS});  // the write that makes it again
  r.summary = fmt::format("{} = {}", name, value);
  return r;
}

Row nsid_row(const nlmsghdr& h, View body) {
  Row r;
  r.type = "nsid";
  auto as = attrs_of(body.subspan(std::min<std::size_t>(body.size(), NLMSG_ALIGN(1))));
  auto id = u32_of(as, NETNSA_NSID);
  std::string peer = str_of(as, wire::IFCORE_NETNSA_NAME);
  if (!id || peer.empty()) return r;
  key_add(r.key, &*id, 4);
  r.what = h.nlmsg_type == RTM_DELNSID ? Kind::Erase : Kind::Upsert;
  r.body.assign(body.begin(), body.end());
  r.summary = fmt::format("nsid {} {}", static_cast<std::int32_t>(*id), peer);
  return r;
}

Row row_of(const nlmsghdr& h, View body) {
  switch (h.nlmsg_type) {
    case RTM_NEWNSID:
    case RTM_DELNSID:
      return nsid_row(h, body);
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
    case RTM_NEWADDRLABEL:
    case RTM_DELADDRLABEL:
      if (body.size() < sizeof(ifaddrlblmsg)) return {};
      return addrlabel_row(h, body);
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
    case RTM_NEWADDRLABEL:
    case RTM_DELADDRLABEL:
    case RTM_NEWNSID:
    case RTM_DELNSID:
    case rtnl::IFCORE_NLMSG_SYSCTL:
      return true;
    default:
      return false;
  }
}

}  // namespace ifcore::state::detail
