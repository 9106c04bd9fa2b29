// cli/link_build.cc — the words of `link add` / `link set` turned into IFLA_* attributes,
// and `type KIND ...` into IFLA_LINKINFO for veth, vlan, macvlan, bridge, vxlan, ipip, gre.
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/if_tunnel.h>
#include <linux/veth.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "cli/commands.h"
#include "cli/link_build.h"
#include "cli/vrf.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/nsid.h"

namespace ifcore::cli {

Result<IpAddr> ip_value(Args& a, const char* what) {
  auto v = a.value();
  if (!v) return fail(v.error());
  if (*v == "any") return IpAddr::v4(0);
  auto ip = IpAddr::parse(*v);
  if (!ip) return invarg(fmt::format("invalid {} address\n", what), *v);
  return *ip;
}

Result<void> put_netns(Ctx& c, wire::MessageBuilder& b, const std::string& name) {
  if (std::string_view(c.client->transport().target()) != "kernel") {
    // ip looks the name up before it asks (netns_get_fd, else a pid): an unknown name is
    // its argument error, not the kernel's.
    wire::MessageBuilder q;
    wire::NsidMessage all;
    all.name = "";  // ifcore: every namespace by name
    if (!wire::encode_nsid(q, {RTM_GETNSID, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0},
                           all))
      return die(2, "message too long");
    bool known = false;
    IFCORE_TRY(c.client->dump(q, [&](const wire::Message& m) {
      auto n = wire::decode_nsid(m);
      known = known || (n && n->name && *n->name == name);
    }));
    if (!known && !parse_u32(name, "", 10)) return invarg("Invalid \"netns\" value\n", name);
    b.put_string(wire::IFCORE_IFLA_NET_NS_NAME, name);
    return ok();
  }
  std::string path = "/var/run/netns/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    b.put_u32(IFLA_NET_NS_FD, std::uint32_t(fd));  // closed when the process exits
    return ok();
  }
  auto pid = parse_u32(name, "Invalid \"netns\" value", 10);
  if (!pid) return invarg("Invalid \"netns\" value\n", name);
  b.put_u32(IFLA_NET_NS_PID, *pid);
  return ok();
}

Result<bool> put_link_word(Ctx& c, wire::MessageBuilder& b, const std::string& w, Args& a,
                           LinkFlags& lf, bool for_set) {
  auto hw = [&](std::uint16_t type) -> Result<void> {
    auto v = a.value();
    if (!v) return fail(v.error());
    auto h = HwAddr::parse(*v);
    if (!h) return die(1, "\"{}\" is invalid lladdr.", *v);
    b.put_bytes(type, h->bytes());
    return ok();
  };
  auto u32 = [&](std::uint16_t type, const char* what) -> Result<void> {
    auto v = a.value();
    if (!v) return fail(v.error());
    auto n = parse_u32(*v, what);
    if (!n) return fail(n.error());
    b.put_u32(type, *n);
    return ok();
  };
  // iproute2's on/off flags; "arp" and "trailers" set the inverse flag.
  static constexpr struct {
    const char* word;
    std::uint32_t flag;
    bool inverse;
  } kOnOff[] = {{"multicast", IFF_MULTICAST, false},
                {"allmulticast", IFF_ALLMULTI, false},
                {"promisc", IFF_PROMISC, false},
                {"trailers", IFF_NOTRAILERS, true},
                {"arp", IFF_NOARP, true},
                {"dynamic", IFF_DYNAMIC, false}};
  auto on_off = std::find_if(std::begin(kOnOff), std::end(kOnOff),
                             [&](const auto& f) { return w == f.word; });
  if (w == "up" || w == "down") {
    lf.change |= IFF_UP;
    if (w == "up")
      lf.flags |= IFF_UP;
    else
      lf.flags &= ~IFF_UP;
  } else if (on_off != std::end(kOnOff)) {
    auto v = a.value();
    if (!v) return fail(v.error());
    if (*v != "on" && *v != "off")
      return die(1, "Error: argument of \"{}\" must be \"on\" or \"off\", not \"{}\"", w, *v);
    lf.change |= on_off->flag;
    if ((*v == "on") != on_off->inverse)
      lf.flags |= on_off->flag;
    else
      lf.flags &= ~on_off->flag;
  } else if (w == "mtu") {
    IFCORE_TRY(u32(IFLA_MTU, "Invalid \"mtu\" value\n"));
  } else if (w == "name") {
    auto v = a.value();
    if (!v) return fail(v.error());
    if (v->size() >= IFNAMSIZ) return invarg("\"name\" not a valid ifname", *v);
    b.put_string(IFLA_IFNAME, *v);
  } else if (matches(w, "address") && w.size() >= 4) {
    IFCORE_TRY(hw(IFLA_ADDRESS));
  } else if (matches(w, "broadcast") || w == "brd") {
    IFCORE_TRY(hw(IFLA_BROADCAST));
  } else if (matches(w, "txqueuelen") || w == "qlen" || w == "txqlen") {
    IFCORE_TRY(u32(IFLA_TXQLEN, "Invalid \"txqueuelen\" value\n"));
  } else if (w == "group") {
    IFCORE_TRY(u32(IFLA_GROUP, "Invalid \"group\" value\n"));
  } else if (w == "numtxqueues") {
    IFCORE_TRY(u32(IFLA_NUM_TX_QUEUES, "Invalid \"numtxqueues\" value\n"));
  } else if (w == "numrxqueues") {
    IFCORE_TRY(u32(IFLA_NUM_RX_QUEUES, "Invalid \"numrxqueues\" value\n"));
  } else if (w == "gso_max_size") {
    IFCORE_TRY(u32(IFLA_GSO_MAX_SIZE, "Invalid \"gso_max_size\" value\n"));
  } else if (w == "gso_max_segs") {
    auto v = a.value();
    if (!v) return fail(v.error());
    auto n = parse_u32(*v, "Invalid \"gso_max_segs\" value\n");
    if (!n) return fail(n.error());
    if (*n > 65535) return invarg("Invalid \"gso_max_segs\" value\n", *v);  // GSO_MAX_SEGS
    b.put_u32(IFLA_GSO_MAX_SEGS, *n);
  } else if (w == "gro_max_size") {
    IFCORE_TRY(u32(IFLA_GRO_MAX_SIZE, "Invalid \"gro_max_size\" value\n"));
  } else if (w == "gso_ipv4_max_size") {
    IFCORE_TRY(u32(wire::kIflaGsoIpv4MaxSize, "Invalid \"gso_ipv4_max_size\" value\n"));
  } else if (w == "gro_ipv4_max_size") {
    IFCORE_TRY(u32(wire::kIflaGroIpv4MaxSize, "Invalid \"gro_ipv4_max_size\" value\n"));
  } else if (w == "master") {
    auto v = a.value();
    if (!v) return fail(v.error());
    auto idx = c.client->ifindex(*v);
    if (!idx) return fail(idx.error());
    if (!*idx) return invarg("Device does not exist\n", *v);
    b.put_u32(IFLA_MASTER, std::uint32_t(*idx));
  } else if (w == "vrf") {
    // iproute2: `vrf NAME` is `master NAME` for a device that is a vrf.
    auto v = a.value();
    if (!v) return fail(v.error());
    auto idx = c.client->ifindex(*v);
    if (!idx) return fail(idx.error());
    if (!*idx) return invarg("Not a valid VRF name\n", *v);
    auto is = name_is_vrf(c, *v);
    if (!is) return fail(is.error());
    if (!*is) return invarg("Not a valid VRF name\n", *v);
    b.put_u32(IFLA_MASTER, std::uint32_t(*idx));
  } else if (w == "nomaster") {
    b.put_u32(IFLA_MASTER, 0);
  } else if (w == "netns") {
    auto v = a.value();
    if (!v) return fail(v.error());
    IFCORE_TRY(put_netns(c, b, *v));
  } else if (w == "alias") {
    auto v = a.value();
    if (!v) return fail(v.error());
    b.put_string(IFLA_IFALIAS, *v);
  } else if (w == "index" && !for_set) {
    auto v = a.value();
    if (!v) return fail(v.error());
    auto n = parse_u32(*v, "Invalid \"index\" value\n");
    if (!n) return fail(n.error());
    b.patch(NLMSG_HDRLEN + offsetof(ifinfomsg, ifi_index), &*n, 4);
  } else if (w == "addrgenmode") {
    // iproute2: get_addr_gen_mode; IFLA_AF_SPEC / AF_INET6 / IFLA_INET6_ADDR_GEN_MODE.
    auto v = a.value();
    if (!v) return fail(v.error());
    static constexpr const char* kModes[] = {"eui64", "none", "stable_secret", "random"};
    auto m = std::find(std::begin(kModes), std::end(kModes), *v);
    if (m == std::end(kModes)) return invarg("Invalid address generation mode\n", *v);
    auto afs = b.begin_nest(IFLA_AF_SPEC);
    auto afs6 = b.begin_nest(AF_INET6);
    b.put_u8(IFLA_INET6_ADDR_GEN_MODE, static_cast<std::uint8_t>(m - std::begin(kModes)));
    b.end_nest(afs6);
    b.end_nest(afs);
  } else if (w == "carrier") {
    auto v = a.value();
    if (!v) return fail(v.error());
    if (*v != "on" && *v != "off")
      return invarg("\"carrier\" value must be \"on\" or \"off\"\n", *v);
    b.put_u8(IFLA_CARRIER, *v == "on");
  } else {
    return false;
  }
  return true;
}

namespace {

Result<void> parse_veth(Ctx& c, wire::MessageBuilder& b, Args& a) {
  if (a.done()) return ok();
  std::string w = a.take();
  if (w != "peer")
    return die(255, "Error: either \"peer\" is duplicate, or \"{}\" is a garbage.", w);
  auto data = b.begin_nest(IFLA_INFO_DATA);
  auto peer = b.begin_nest(VETH_INFO_PEER);
  ifinfomsg ifi{};
  b.put_struct(ifi);
  LinkFlags lf;
  while (!a.done()) {
    std::string pw = a.take();
    auto r = put_link_word(c, b, pw, a, lf, false);
    if (!r) return fail(r.error());
    if (*r) continue;
    if (pw.size() >= IFNAMSIZ) return invarg("\"name\" not a valid ifname", pw);
    b.put_string(IFLA_IFNAME, pw);  // a bare word names the peer
  }
  if (lf.change) {
    ifi.ifi_flags = lf.flags;
    ifi.ifi_change = lf.change;
    b.patch(peer + NLA_HDRLEN, &ifi, sizeof ifi);
  }
  b.end_nest(peer);
  b.end_nest(data);
  return ok();
}

Result<void> parse_vlan(Ctx&, wire::MessageBuilder& b, Args& a) {
  auto data = b.begin_nest(IFLA_INFO_DATA);
  bool have_id = false;
  ifla_vlan_flags fl{};
  while (!a.done()) {
    std::string w = a.take();
    auto v = a.value();
    if (!v) return fail(v.error());
    if (w == "id") {
      auto n = parse_u32(*v, "Invalid \"id\" value\n");
      if (!n || *n > 4095) return invarg("id is invalid\n", *v);
      b.put_u16(IFLA_VLAN_ID, std::uint16_t(*n));
      have_id = true;
    } else if (w == "protocol") {
      if (*v == "802.1Q" || *v == "802.1q")
        b.put_be16(IFLA_VLAN_PROTOCOL, 0x8100);
      else if (*v == "802.1ad")
        b.put_be16(IFLA_VLAN_PROTOCOL, 0x88a8);
      else
        return invarg("protocol is invalid\n", *v);
    } else if (w == "reorder_hdr" || w == "gvrp" || w == "mvrp" || w == "loose_binding" ||
               w == "bridge_binding") {
      std::uint32_t bit = w == "reorder_hdr"     ? 1
                          : w == "gvrp"          ? 2
                          : w == "loose_binding" ? 4
                          : w == "mvrp"          ? 8
                                                 : 16;
      if (*v != "on" && *v != "off")
        return invarg(fmt::format("\"{}\" must be \"on\" or \"off\"\n", w), *v);
      fl.mask |= bit;
      if (*v == "on") fl.flags |= bit;
    } else {
      return die(255, "vlan: unknown command \"{}\"?", w);
    }
  }
  if (fl.mask) b.put_attr(IFLA_VLAN_FLAGS, &fl, sizeof fl);
  b.end_nest(data);
  if (!have_id) return die(255, "8021q: VLAN id must be specified");  // Linux: vlan_validate
  return ok();
}

Result<void> parse_macvlan(Ctx&, wire::MessageBuilder& b, Args& a) {
  auto data = b.begin_nest(IFLA_INFO_DATA);
  while (!a.done()) {
    std::string w = a.take();
    if (w == "mode") {
      auto v = a.value();
      if (!v) return fail(v.error());
      std::uint32_t m = *v == "private"    ? MACVLAN_MODE_PRIVATE
                        : *v == "vepa"     ? MACVLAN_MODE_VEPA
                        : *v == "bridge"   ? MACVLAN_MODE_BRIDGE
                        : *v == "passthru" ? MACVLAN_MODE_PASSTHRU
                        : *v == "source"   ? MACVLAN_MODE_SOURCE
                                           : 0;
      if (!m)
        return die(255,
                   "Error: argument of \"mode\" must be \"private\", \"vepa\", \"bridge\", "
                   "\"passthru\" or \"source\"");
      b.put_u32(IFLA_MACVLAN_MODE, m);
    } else if (w == "nopromisc") {
      b.put_u16(IFLA_MACVLAN_FLAGS, MACVLAN_FLAG_NOPROMISC);
    } else {
      return die(255, "macvlan: unknown command \"{}\"?", w);
    }
  }
  b.end_nest(data);
  return ok();
}

Result<void> parse_bridge(Ctx&, wire::MessageBuilder& b, Args& a) {
  auto data = b.begin_nest(IFLA_INFO_DATA);
  while (!a.done()) {
    std::string w = a.take();
    auto v = a.value();
    if (!v) return fail(v.error());
    auto n = parse_u32(*v, fmt::format("invalid {}", w).c_str());
    if (!n) return invarg(fmt::format("invalid {}", w), *v);
    if (w == "forward_delay")
      b.put_u32(IFLA_BR_FORWARD_DELAY, *n);
    else if (w == "hello_time")
      b.put_u32(IFLA_BR_HELLO_TIME, *n);
    else if (w == "max_age")
      b.put_u32(IFLA_BR_MAX_AGE, *n);
    else if (w == "ageing_time")
      b.put_u32(IFLA_BR_AGEING_TIME, *n);
    else if (w == "stp_state")
      b.put_u32(IFLA_BR_STP_STATE, *n);
    else if (w == "priority")
      b.put_u16(IFLA_BR_PRIORITY, std::uint16_t(*n));
    else if (w == "vlan_filtering")
      b.put_u8(IFLA_BR_VLAN_FILTERING, std::uint8_t(*n));
    else if (w == "mcast_snooping")
      b.put_u8(IFLA_BR_MCAST_SNOOPING, std::uint8_t(*n));
    else if (w == "group_fwd_mask")
      b.put_u16(IFLA_BR_GROUP_FWD_MASK, std::uint16_t(*n));
    else if (w == "vlan_default_pvid")
      b.put_u16(IFLA_BR_VLAN_DEFAULT_PVID, std::uint16_t(*n));
    else if (w == "mcast_router")
      b.put_u8(IFLA_BR_MCAST_ROUTER, std::uint8_t(*n));
    else if (w == "mcast_querier")
      b.put_u8(IFLA_BR_MCAST_QUERIER, std::uint8_t(*n));
    else
      return die(255, "bridge: unknown command \"{}\"?", w);
  }
  b.end_nest(data);
  return ok();
}

// The attribute type for gre or ipip (their enums differ).
std::uint16_t pick(bool gre, int g, int i) {
  return std::uint16_t(gre ? g : i);
}

Result<void> parse_tunnel(Ctx& c, wire::MessageBuilder& b, const std::string& kind, Args& a) {
  bool gre = kind == "gre" || kind == "gretap";
  auto data = b.begin_nest(IFLA_INFO_DATA);
  while (!a.done()) {
    std::string w = a.take();
    if (w == "remote" || w == "local") {
      auto ip = ip_value(a, w.c_str());
      if (!ip) return fail(ip.error());
      bool remote = w != "local";
      std::uint16_t t = remote ? pick(gre, IFLA_GRE_REMOTE, IFLA_IPTUN_REMOTE)
                               : pick(gre, IFLA_GRE_LOCAL, IFLA_IPTUN_LOCAL);
      b.put_bytes(t, ip->bytes());
    } else if (w == "ttl" || w == "hoplimit") {
      auto v = a.value();
      if (!v) return fail(v.error());
      std::uint32_t ttl = 0;
      if (*v != "inherit" && *v != "auto") {
        auto n = parse_u32(*v, "invalid TTL\n");
        if (!n || *n > 255) return invarg("invalid TTL\n", *v);
        ttl = *n;
      }
      b.put_u8(pick(gre, IFLA_GRE_TTL, IFLA_IPTUN_TTL), std::uint8_t(ttl));
    } else if (w == "key" && gre) {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "invalid value\n");
      if (!n) {
        auto ip = IpAddr::parse(*v);
        if (!ip || !ip->is_v4()) return invarg("invalid value\n", *v);
        n = ip->v4_host();
      }
      b.put_be32(IFLA_GRE_IKEY, *n);
      b.put_be32(IFLA_GRE_OKEY, *n);
      b.put_be16(IFLA_GRE_IFLAGS, ntohs(GRE_KEY));  // GRE_* are big endian
      b.put_be16(IFLA_GRE_OFLAGS, ntohs(GRE_KEY));
    } else if (w == "dev") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto idx = dev_index(c, *v);
      if (!idx) return fail(idx.error());
      b.put_u32(pick(gre, IFLA_GRE_LINK, IFLA_IPTUN_LINK), std::uint32_t(*idx));
    } else {
      return die(255, "{}: unknown command \"{}\"?", kind, w);
    }
  }
  b.end_nest(data);
  return ok();
}

// iproute2's bridge_slave options (iplink_bridge_slave.c): a port's attributes, as
// IFLA_INFO_SLAVE_DATA of the slave kind "bridge".
Result<void> parse_bridge_slave(Ctx& c, wire::MessageBuilder& b, Args& a) {
  static const std::pair<const char*, std::uint16_t> kOnOff[] = {
      {"hairpin", IFLA_BRPORT_MODE},
      {"guard", IFLA_BRPORT_GUARD},
      {"root_block", IFLA_BRPORT_PROTECT},
      {"fastleave", IFLA_BRPORT_FAST_LEAVE},
      {"learning", IFLA_BRPORT_LEARNING},
      {"flood", IFLA_BRPORT_UNICAST_FLOOD},
      {"mcast_flood", IFLA_BRPORT_MCAST_FLOOD},
      {"bcast_flood", IFLA_BRPORT_BCAST_FLOOD},
      {"mcast_to_unicast", IFLA_BRPORT_MCAST_TO_UCAST},
      {"proxy_arp", IFLA_BRPORT_PROXYARP},
      {"proxy_arp_wifi", IFLA_BRPORT_PROXYARP_WIFI},
      {"neigh_suppress", IFLA_BRPORT_NEIGH_SUPPRESS},
      {"vlan_tunnel", IFLA_BRPORT_VLAN_TUNNEL},
      {"isolated", IFLA_BRPORT_ISOLATED},
      {"locked", IFLA_BRPORT_LOCKED}};
  auto data = b.begin_nest(IFLA_INFO_SLAVE_DATA);
  while (!a.done()) {
    std::string w = a.take();
    if (matches(w, "fdb_flush")) {
      b.put_flag(IFLA_BRPORT_FLUSH);
      continue;
    }
    if (w == "nobackup_port") {
      b.put_u32(IFLA_BRPORT_BACKUP_PORT, 0);
      continue;
    }
    const std::pair<const char*, std::uint16_t>* onoff = nullptr;
    for (const auto& x : kOnOff)
      if (matches(w, x.first)) {
        onoff = &x;
        break;
      }
    auto v = a.value();
    if (!v) return fail(v.error());
    if (onoff) {
      if (*v != "on" && *v != "off")
        return die(255, "Error: argument of \"{}\" must be \"on\" or \"off\", not \"{}\"",
                   onoff->first, *v);
      b.put_u8(onoff->second, *v == "on");
      continue;
    }
    auto n = parse_u32(*v, "");
    if (matches(w, "state")) {
      if (!n || *n > 255) return invarg("state is invalid", *v);
      b.put_u8(IFLA_BRPORT_STATE, std::uint8_t(*n));
    } else if (matches(w, "priority")) {
      if (!n || *n > 0xffff) return invarg("priority is invalid", *v);
      b.put_u16(IFLA_BRPORT_PRIORITY, std::uint16_t(*n));
    } else if (matches(w, "cost")) {
      if (!n) return invarg("cost is invalid", *v);
      b.put_u32(IFLA_BRPORT_COST, *n);
    } else if (matches(w, "mcast_router")) {
      if (!n || *n > 255) return invarg("invalid mcast_router", *v);
      b.put_u8(IFLA_BRPORT_MULTICAST_ROUTER, std::uint8_t(*n));
    } else if (matches(w, "backup_port")) {
      auto idx = dev_index(c, *v);
      if (!idx) return fail(idx.error());
      b.put_u32(IFLA_BRPORT_BACKUP_PORT, std::uint32_t(*idx));
    } else if (matches(w, "group_fwd_mask")) {
      if (!n || *n > 0xffff) return invarg("invalid group_fwd_mask", *v);
      b.put_u16(IFLA_BRPORT_GROUP_FWD_MASK, std::uint16_t(*n));
    } else {
      return die(255, "bridge_slave: unknown option \"{}\"?", w);
    }
  }
  b.end_nest(data);
  return ok();
}

}  // namespace

Result<void> put_linkinfo(Ctx& c, wire::MessageBuilder& b, const std::string& kind, Args& a,
                          bool set_op) {
  auto info = b.begin_nest(IFLA_LINKINFO);
  // iproute2: `type KIND_slave` changes the device as a port of its master's kind.
  static const std::string kSlave = "_slave";
  if (kind.size() > kSlave.size() &&
      kind.compare(kind.size() - kSlave.size(), kSlave.size(), kSlave) == 0) {
    std::string master = kind.substr(0, kind.size() - kSlave.size());
    b.put_string(IFLA_INFO_SLAVE_KIND, master);
    if (master == "bridge")
      IFCORE_TRY(parse_bridge_slave(c, b, a));
    else if (!a.done())
      return die(255, "Garbage instead of arguments \"{} ...\". Try \"ip link help\".", a.peek());
    b.end_nest(info);
    return ok();
  }
  b.put_string(IFLA_INFO_KIND, kind);
  if (kind == "veth")
    IFCORE_TRY(parse_veth(c, b, a));
  else if (kind == "vlan")
    IFCORE_TRY(parse_vlan(c, b, a));
  else if (kind == "macvlan" || kind == "macvtap")
    IFCORE_TRY(parse_macvlan(c, b, a));
  else if (kind == "bridge")
    IFCORE_TRY(parse_bridge(c, b, a));
  else if (kind == "vxlan")
    IFCORE_TRY(parse_vxlan(c, b, a, set_op));
  else if (kind == "vrf" && !a.done())
    IFCORE_TRY(parse_vrf(b, a));
  else if (kind == "ipip" || kind == "gre" || kind == "gretap" || kind == "sit")
    IFCORE_TRY(parse_tunnel(c, b, kind, a));
  else if (!a.done())
    return die(255, "Garbage instead of arguments \"{} ...\". Try \"ip link help\".", a.peek());
  b.end_nest(info);
  return ok();
}

}  // namespace ifcore::cli
