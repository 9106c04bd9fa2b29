// cli/link_kinds.cc — `-d` kind data: what `ip -d link show` prints after the kind's name
// for vlan, macvlan, bridge (and bridge ports), vxlan, ipip, gre and vrf (and vrf ports).
// Veth has no data.
#include <arpa/inet.h>
#include <net/if.h>

#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/if_tunnel.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "cli/link_print.h"

namespace ifcore::cli {
namespace {

using Attrs = std::vector<wire::RawAttr>;

const wire::RawAttr* find(const Attrs& a, std::uint16_t t) {
  return wire::find_raw(a, t);
}

// Any fixed-size integer, by its payload size.
std::optional<std::uint64_t> num(const Attrs& a, std::uint16_t t) {
  const auto* x = find(a, t);
  if (!x) return std::nullopt;
  std::uint64_t v = 0;
  switch (x->data.size()) {
    case 1:
      return x->data[0];
    case 2: {
      std::uint16_t u;
      std::memcpy(&u, x->data.data(), 2);
      return u;
    }
    case 4: {
      std::uint32_t u;
      std::memcpy(&u, x->data.data(), 4);
      return u;
    }
    case 8:
      std::memcpy(&v, x->data.data(), 8);
      return v;
    default:
      return std::nullopt;
  }
}

std::string mac(std::span<const std::uint8_t> b) {
  std::string s;
  for (std::size_t i = 0; i < b.size(); ++i) s += fmt::format("{}{:02x}", i ? ":" : "", b[i]);
  return s;
}

// "8000.2:0:0:0:0:1": the address part without zero padding, as ip prints bridge ids.
std::string bridge_id(const wire::RawAttr& a) {
  if (a.data.size() < 8) return "?";
  std::string s = fmt::format("{:02x}{:02x}.", a.data[0], a.data[1]);
  for (int i = 0; i < 6; ++i) s += fmt::format("{}{:x}", i ? ":" : "", a.data[2 + i]);
  return s;
}

std::string ip_text(const wire::RawAttr& a) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (a.data.size() == 4) inet_ntop(AF_INET, a.data.data(), buf, sizeof buf);
  if (a.data.size() == 16) inet_ntop(AF_INET6, a.data.data(), buf, sizeof buf);
  return buf;
}

enum class F { U, Hex, HexStr, OnOff, Timer, BrId, Mac, Be16Proto, State };

struct Field {
  std::uint16_t type;
  const char* word;  // text
  const char* key;   // JSON
  F f;
};

void print_fields(Ctx& c, const Attrs& a, std::span<const Field> fields) {
  Out& o = *c.out;
  for (const auto& fd : fields) {
    const auto* r = find(a, fd.type);
    if (!r) continue;
    auto v = num(a, fd.type).value_or(0);
    switch (fd.f) {
      case F::U:
        o.kv(fd.key, v, fmt::format("{} {} ", fd.word, v));
        break;
      case F::Hex:
        o.kv(fd.key, fmt::format("{:#x}", v), fmt::format("{} {:#x} ", fd.word, v));
        break;
      case F::HexStr: {  // C's %#x: zero prints as "0"
        std::string h = v ? fmt::format("{:#x}", v) : "0";
        o.kv(fd.key, h, fmt::format("{} {} ", fd.word, h));
        break;
      }
      case F::OnOff:
        o.kv(fd.key, v != 0, fmt::format("{} {} ", fd.word, v ? "on" : "off"));
        break;
      case F::Timer:
        o.kv(fd.key, Out::raw_number(fmt::format("{:.2f}", double(v) / 100.0)),
             fmt::format("{} {:7.2f} ", fd.word, double(v) / 100.0));
        break;
      case F::BrId:
        o.kv(fd.key, bridge_id(*r), fmt::format("{} {} ", fd.word, bridge_id(*r)));
        break;
      case F::Mac:
        o.kv(fd.key, mac(r->data), fmt::format("{} {} ", fd.word, mac(r->data)));
        break;
      case F::Be16Proto: {
        std::uint16_t p = ntohs(std::uint16_t(v));
        std::string s = p == 0x8100 ? "802.1Q" : p == 0x88a8 ? "802.1ad" : fmt::format("{:#x}", p);
        o.kv(fd.key, s, fmt::format("{} {} ", fd.word, s));
        break;
      }
      case F::State: {
        static const char* kStates[] = {"disabled", "listening", "learning", "forwarding",
                                        "blocking"};
        std::string s = v < 5 ? kStates[v] : std::to_string(v);
        o.kv(fd.key, s, fmt::format("{} {} ", fd.word, s));
        break;
      }
    }
  }
}

void print_vlan(Ctx& c, const Attrs& a) {
  Out& o = *c.out;
  if (auto p = num(a, IFLA_VLAN_PROTOCOL)) {
    std::uint16_t h = ntohs(std::uint16_t(*p));
    std::string s = h == 0x8100 ? "802.1Q" : h == 0x88a8 ? "802.1ad" : fmt::format("{:#x}", h);
    o.kv("protocol", s, fmt::format("protocol {} ", s));
  }
  if (auto id = num(a, IFLA_VLAN_ID)) o.kv("id", *id, fmt::format("id {} ", *id));
  if (const auto* f = find(a, IFLA_VLAN_FLAGS); f && f->data.size() >= sizeof(ifla_vlan_flags)) {
    ifla_vlan_flags vf;
    std::memcpy(&vf, f->data.data(), sizeof vf);
    static const std::pair<std::uint32_t, const char*> kFlags[] = {
        {1, "REORDER_HDR"}, {2, "GVRP"}, {4, "LOOSE_BINDING"}, {8, "MVRP"}, {16, "BRIDGE_BINDING"}};
    Json j = Json::array();
    std::string t;
    for (auto [bit, name] : kFlags)
      if (vf.flags & bit) {
        j.push_back(name);
        t += (t.empty() ? "" : ",") + std::string(name);
      }
    o.kv("flags", j, "<" + t + "> ");
  }
}

void print_macvlan(Ctx& c, const Attrs& a) {
  Out& o = *c.out;
  if (auto m = num(a, IFLA_MACVLAN_MODE)) {
    const char* s = *m == MACVLAN_MODE_PRIVATE    ? "private"
                    : *m == MACVLAN_MODE_VEPA     ? "vepa"
                    : *m == MACVLAN_MODE_BRIDGE   ? "bridge"
                    : *m == MACVLAN_MODE_PASSTHRU ? "passthru"
                    : *m == MACVLAN_MODE_SOURCE   ? "source"
                                                  : "unknown";
    o.kv("mode", s, fmt::format("mode {} ", s));
  }
  if (auto f = num(a, IFLA_MACVLAN_FLAGS); f && (*f & MACVLAN_FLAG_NOPROMISC))
    o.kv("nopromisc", true, "nopromisc ");
  if (auto q = num(a, IFLA_MACVLAN_BC_QUEUE_LEN))
    o.kv("bcqueuelen", *q, fmt::format("bcqueuelen {} ", *q));
  if (auto q = num(a, IFLA_MACVLAN_BC_QUEUE_LEN_USED))
    o.kv("usedbcqueuelen", *q, fmt::format("usedbcqueuelen {} ", *q));
  // iproute2: the source mode's remote addresses, counted then listed.
  auto mode = num(a, IFLA_MACVLAN_MODE);
  if (!mode || *mode != MACVLAN_MODE_SOURCE) return;
  auto count = num(a, IFLA_MACVLAN_MACADDR_COUNT);
  if (!count) return;
  o.kv("macaddr_count", *count, fmt::format("remotes ({}) ", *count));
}

constexpr Field kBridge[] = {
    {IFLA_BR_FORWARD_DELAY, "forward_delay", "forward_delay", F::U},
    {IFLA_BR_HELLO_TIME, "hello_time", "hello_time", F::U},
    {IFLA_BR_MAX_AGE, "max_age", "max_age", F::U},
    {IFLA_BR_AGEING_TIME, "ageing_time", "ageing_time", F::U},
    {IFLA_BR_STP_STATE, "stp_state", "stp_state", F::U},
    {IFLA_BR_PRIORITY, "priority", "priority", F::U},
    {IFLA_BR_VLAN_FILTERING, "vlan_filtering", "vlan_filtering", F::U},
    {IFLA_BR_VLAN_PROTOCOL, "vlan_protocol", "vlan_protocol", F::Be16Proto},
    {IFLA_BR_BRIDGE_ID, "bridge_id", "bridge_id", F::BrId},
    {IFLA_BR_ROOT_ID, "designated_root", "root_id", F::BrId},
    {IFLA_BR_ROOT_PORT, "root_port", "root_port", F::U},
    {IFLA_BR_ROOT_PATH_COST, "root_path_cost", "root_path_cost", F::U},
    {IFLA_BR_TOPOLOGY_CHANGE, "topology_change", "topology_change", F::U},
    {IFLA_BR_TOPOLOGY_CHANGE_DETECTED, "topology_change_detected", "topology_change_detected",
     F::U},
    {IFLA_BR_HELLO_TIMER, "hello_timer", "hello_timer", F::Timer},
    {IFLA_BR_TCN_TIMER, "tcn_timer", "tcn_timer", F::Timer},
    {IFLA_BR_TOPOLOGY_CHANGE_TIMER, "topology_change_timer", "topology_change_timer", F::Timer},
    {IFLA_BR_GC_TIMER, "gc_timer", "gc_timer", F::Timer},
    {IFLA_BR_VLAN_DEFAULT_PVID, "vlan_default_pvid", "vlan_default_pvid", F::U},
    {IFLA_BR_VLAN_STATS_ENABLED, "vlan_stats_enabled", "vlan_stats_enabled", F::U},
    {IFLA_BR_VLAN_STATS_PER_PORT, "vlan_stats_per_port", "vlan_stats_per_port", F::U},
    {IFLA_BR_GROUP_FWD_MASK, "group_fwd_mask", "group_fwd_mask", F::HexStr},
    {IFLA_BR_GROUP_ADDR, "group_address", "group_addr", F::Mac},
    {IFLA_BR_MCAST_SNOOPING, "mcast_snooping", "mcast_snooping", F::U},
};
constexpr Field kBridgeMcast[] = {
    {IFLA_BR_MCAST_ROUTER, "mcast_router", "mcast_router", F::U},
    {IFLA_BR_MCAST_QUERY_USE_IFADDR, "mcast_query_use_ifaddr", "mcast_query_use_ifaddr", F::U},
    {IFLA_BR_MCAST_QUERIER, "mcast_querier", "mcast_querier", F::U},
    {IFLA_BR_MCAST_HASH_ELASTICITY, "mcast_hash_elasticity", "mcast_hash_elasticity", F::U},
    {IFLA_BR_MCAST_HASH_MAX, "mcast_hash_max", "mcast_hash_max", F::U},
    {IFLA_BR_MCAST_LAST_MEMBER_CNT, "mcast_last_member_count", "mcast_last_member_cnt", F::U},
    {IFLA_BR_MCAST_STARTUP_QUERY_CNT, "mcast_startup_query_count", "mcast_startup_query_cnt", F::U},
    {IFLA_BR_MCAST_LAST_MEMBER_INTVL, "mcast_last_member_interval", "mcast_last_member_intvl",
     F::U},
    {IFLA_BR_MCAST_MEMBERSHIP_INTVL, "mcast_membership_interval", "mcast_membership_intvl", F::U},
    {IFLA_BR_MCAST_QUERIER_INTVL, "mcast_querier_interval", "mcast_querier_intvl", F::U},
    {IFLA_BR_MCAST_QUERY_INTVL, "mcast_query_interval", "mcast_query_intvl", F::U},
    {IFLA_BR_MCAST_QUERY_RESPONSE_INTVL, "mcast_query_response_interval",
     "mcast_query_response_intvl", F::U},
    {IFLA_BR_MCAST_STARTUP_QUERY_INTVL, "mcast_startup_query_interval", "mcast_startup_query_intvl",
     F::U},
    {IFLA_BR_MCAST_STATS_ENABLED, "mcast_stats_enabled", "mcast_stats_enabled", F::U},
    {IFLA_BR_MCAST_IGMP_VERSION, "mcast_igmp_version", "mcast_igmp_version", F::U},
    {IFLA_BR_MCAST_MLD_VERSION, "mcast_mld_version", "mcast_mld_version", F::U},
    {IFLA_BR_NF_CALL_IPTABLES, "nf_call_iptables", "nf_call_iptables", F::U},
    {IFLA_BR_NF_CALL_IP6TABLES, "nf_call_ip6tables", "nf_call_ip6tables", F::U},
    {IFLA_BR_NF_CALL_ARPTABLES, "nf_call_arptables", "nf_call_arptables", F::U},
};

void print_bridge(Ctx& c, const Attrs& a) {
  print_fields(c, a, kBridge);
  if (const auto* b = find(a, IFLA_BR_MULTI_BOOLOPT);
      b && b->data.size() >= sizeof(br_boolopt_multi)) {
    br_boolopt_multi bm;
    std::memcpy(&bm, b->data.data(), sizeof bm);
    auto bit = [&](int n, const char* word) {
      if (bm.optmask & (1u << n)) {
        unsigned v = (bm.optval >> n) & 1;
        c.out->kv(word, v, fmt::format("{} {} ", word, v));
      }
    };
    bit(BR_BOOLOPT_NO_LL_LEARN, "no_linklocal_learn");
    bit(BR_BOOLOPT_MCAST_VLAN_SNOOPING, "mcast_vlan_snooping");
  }
  print_fields(c, a, kBridgeMcast);
}

constexpr Field kBridgePort[] = {
    {IFLA_BRPORT_STATE, "state", "state", F::State},
    {IFLA_BRPORT_PRIORITY, "priority", "priority", F::U},
    {IFLA_BRPORT_COST, "cost", "cost", F::U},
    {IFLA_BRPORT_MODE, "hairpin", "hairpin", F::OnOff},
    {IFLA_BRPORT_GUARD, "guard", "guard", F::OnOff},
    {IFLA_BRPORT_PROTECT, "root_block", "root_block", F::OnOff},
    {IFLA_BRPORT_FAST_LEAVE, "fastleave", "fastleave", F::OnOff},
    {IFLA_BRPORT_LEARNING, "learning", "learning", F::OnOff},
    {IFLA_BRPORT_UNICAST_FLOOD, "flood", "flood", F::OnOff},
    {IFLA_BRPORT_ID, "port_id", "id", F::Hex},
    {IFLA_BRPORT_NO, "port_no", "no", F::Hex},
    {IFLA_BRPORT_DESIGNATED_PORT, "designated_port", "designated_port", F::U},
    {IFLA_BRPORT_DESIGNATED_COST, "designated_cost", "designated_cost", F::U},
    {IFLA_BRPORT_BRIDGE_ID, "designated_bridge", "bridge_id", F::BrId},
    {IFLA_BRPORT_ROOT_ID, "designated_root", "root_id", F::BrId},
    {IFLA_BRPORT_HOLD_TIMER, "hold_timer", "hold_timer", F::Timer},
    {IFLA_BRPORT_MESSAGE_AGE_TIMER, "message_age_timer", "message_age_timer", F::Timer},
    {IFLA_BRPORT_FORWARD_DELAY_TIMER, "forward_delay_timer", "forward_delay_timer", F::Timer},
    {IFLA_BRPORT_TOPOLOGY_CHANGE_ACK, "topology_change_ack", "topology_change_ack", F::U},
    {IFLA_BRPORT_CONFIG_PENDING, "config_pending", "config_pending", F::U},
    {IFLA_BRPORT_PROXYARP, "proxy_arp", "proxy_arp", F::OnOff},
    {IFLA_BRPORT_PROXYARP_WIFI, "proxy_arp_wifi", "proxy_arp_wifi", F::OnOff},
    {IFLA_BRPORT_MULTICAST_ROUTER, "mcast_router", "multicast_router", F::U},
    {IFLA_BRPORT_FAST_LEAVE, "mcast_fast_leave", "mcast_fast_leave", F::OnOff},
    {IFLA_BRPORT_MCAST_FLOOD, "mcast_flood", "mcast_flood", F::OnOff},
    {IFLA_BRPORT_BCAST_FLOOD, "bcast_flood", "bcast_flood", F::OnOff},
    {IFLA_BRPORT_MCAST_TO_UCAST, "mcast_to_unicast", "mcast_to_unicast", F::OnOff},
    {IFLA_BRPORT_NEIGH_SUPPRESS, "neigh_suppress", "neigh_suppress", F::OnOff},
};
constexpr Field kBridgePortTail[] = {
    {IFLA_BRPORT_VLAN_TUNNEL, "vlan_tunnel", "vlan_tunnel", F::OnOff},
    {IFLA_BRPORT_ISOLATED, "isolated", "isolated", F::OnOff},
    {IFLA_BRPORT_LOCKED, "locked", "locked", F::OnOff},
};

void print_bridge_port(Ctx& c, const Attrs& a) {
  Out& o = *c.out;
  print_fields(c, a, kBridgePort);
  if (auto g = num(a, IFLA_BRPORT_GROUP_FWD_MASK)) {
    o.kv("group_fwd_mask", *g, fmt::format("group_fwd_mask {} ", *g));
    o.kv("group_fwd_mask_str", fmt::format("{:#x}", *g),
         fmt::format("group_fwd_mask_str {:#x} ", *g));
  }
  print_fields(c, a, kBridgePortTail);
  if (auto b = num(a, IFLA_BRPORT_BACKUP_PORT)) {
    const std::string name = c.client->ifname(static_cast<int>(*b));
    o.kv("backup_port", name, fmt::format("backup_port {} ", name));
  }
}

// As iproute2 6.1's vxlan printer: zero addresses and links left out, learning in JSON only
// (text says "nolearning"), the flags only when on, tos 1 as "inherit", ttl 0 as "auto".
void print_vxlan(Ctx& c, const Attrs& a) {
  Out& o = *c.out;
  auto on = [&](std::uint16_t t) { return num(a, t).value_or(0) != 0; };
  auto zero = [](const wire::RawAttr& r) {
    return std::all_of(r.data.begin(), r.data.end(), [](std::uint8_t x) { return x == 0; });
  };
  if (on(IFLA_VXLAN_COLLECT_METADATA)) o.kv("external", true, "external ");
  if (on(IFLA_VXLAN_VNIFILTER)) o.kv("vnifilter", true, "vnifilter");
  if (const auto* id = find(a, IFLA_VXLAN_ID); id && id->data.size() >= 4) {
    auto v = num(a, IFLA_VXLAN_ID).value_or(0);
    o.kv("id", v, fmt::format("id {} ", v));
  }
  if (const auto* g = find(a, IFLA_VXLAN_GROUP)) {
    if (g->data.size() == 4 && !zero(*g)) {
      bool mc = (g->data[0] & 0xf0) == 0xe0;
      const char* w = mc ? "group" : "remote";
      o.kv(w, ip_text(*g), fmt::format("{} {} ", w, ip_text(*g)));
    }
  } else if (const auto* g6 = find(a, IFLA_VXLAN_GROUP6)) {
    if (g6->data.size() == 16 && !zero(*g6)) {
      bool mc = g6->data[0] == 0xff;
      o.kv(mc ? "group6" : "remote6", ip_text(*g6),
           fmt::format("{} {} ", mc ? "group" : "remote", ip_text(*g6)));
    }
  }
  if (const auto* l = find(a, IFLA_VXLAN_LOCAL)) {
    if (l->data.size() == 4 && !zero(*l))
      o.kv("local", ip_text(*l), fmt::format("local {} ", ip_text(*l)));
  } else if (const auto* l6 = find(a, IFLA_VXLAN_LOCAL6)) {
    if (l6->data.size() == 16 && !zero(*l6))
      o.kv("local6", ip_text(*l6), fmt::format("local {} ", ip_text(*l6)));
  }
  if (auto dev = num(a, IFLA_VXLAN_LINK); dev && *dev) {
    std::string n = c.client->ifname(int(*dev));
    o.kv("link", n, fmt::format("dev {} ", n));
  }
  if (const auto* r = find(a, IFLA_VXLAN_PORT_RANGE); r && r->data.size() >= 4) {
    unsigned lo = (r->data[0] << 8) | r->data[1], hi = (r->data[2] << 8) | r->data[3];
    o.open_object("port_range");
    o.kv("low", lo, fmt::format("srcport {} ", lo));
    o.kv("high", hi, fmt::format("{} ", hi));
    o.close();
  }
  if (auto p = num(a, IFLA_VXLAN_PORT)) {
    unsigned port = ntohs(std::uint16_t(*p));
    o.kv("port", port, fmt::format("dstport {} ", port));
  }
  if (auto l = num(a, IFLA_VXLAN_LEARNING)) o.kv("learning", *l != 0, *l ? "" : "nolearning ");
  if (on(IFLA_VXLAN_PROXY)) o.kv("proxy", true, "proxy ");
  if (on(IFLA_VXLAN_RSC)) o.kv("rsc", true, "rsc ");
  if (on(IFLA_VXLAN_L2MISS)) o.kv("l2miss", true, "l2miss ");
  if (on(IFLA_VXLAN_L3MISS)) o.kv("l3miss", true, "l3miss ");
  if (auto tos = num(a, IFLA_VXLAN_TOS).value_or(0)) {
    std::string h = fmt::format("{:#x}", tos);
    o.kv("tos", h, tos == 1 ? "tos inherit " : fmt::format("tos {} ", h));
  }
  if (on(IFLA_VXLAN_TTL_INHERIT)) {
    o.text("ttl inherit ");
  } else if (auto ttl = num(a, IFLA_VXLAN_TTL)) {
    o.kv("ttl", *ttl, *ttl ? fmt::format("ttl {} ", *ttl) : std::string("ttl auto "));
  }
  if (auto df = num(a, IFLA_VXLAN_DF)) {
    if (*df == VXLAN_DF_UNSET)
      o.kv("df", "unset", "");
    else if (*df == VXLAN_DF_SET)
      o.kv("df", "set", "df set ");
    else if (*df == VXLAN_DF_INHERIT)
      o.kv("df", "inherit", "df inherit ");
  }
  if (auto l = num(a, IFLA_VXLAN_LABEL); l && *l) {
    std::string h = fmt::format("{:#x}", ntohl(std::uint32_t(*l)));
    o.kv("label", h, fmt::format("flowlabel {} ", h));
  }
  if (auto ag = num(a, IFLA_VXLAN_AGEING))
    o.kv("ageing", *ag, *ag ? fmt::format("ageing {} ", *ag) : std::string("ageing none "));
  if (auto lim = num(a, IFLA_VXLAN_LIMIT); lim && *lim)
    o.kv("limit", *lim, fmt::format("maxaddr {} ", *lim));
  if (auto cs = num(a, IFLA_VXLAN_UDP_CSUM))
    o.kv("udp_csum", *cs != 0, *cs ? "udpcsum " : "noudpcsum ");
  if (auto cs = num(a, IFLA_VXLAN_UDP_ZERO_CSUM6_TX))
    o.kv("udp_zero_csum6_tx", *cs != 0, *cs ? "udp6zerocsumtx " : "noudp6zerocsumtx ");
  if (auto cs = num(a, IFLA_VXLAN_UDP_ZERO_CSUM6_RX))
    o.kv("udp_zero_csum6_rx", *cs != 0, *cs ? "udp6zerocsumrx " : "noudp6zerocsumrx ");
  if (on(IFLA_VXLAN_REMCSUM_TX)) o.kv("remcsum_tx", true, "remcsumtx ");
  if (on(IFLA_VXLAN_REMCSUM_RX)) o.kv("remcsum_rx", true, "remcsumrx ");
  if (find(a, IFLA_VXLAN_GBP)) o.kv("gbp", true, "gbp ");
  if (find(a, IFLA_VXLAN_GPE)) o.kv("gpe", true, "gpe ");
}

// ipip, gre: remote, local, dev, ttl, key.
void print_tunnel(Ctx& c, const std::string& kind, const Attrs& a) {
  Out& o = *c.out;
  bool gre = kind == "gre" || kind == "gretap";
  auto t = [gre](int g, int i) { return std::uint16_t(gre ? g : i); };
  auto addr = [&](std::uint16_t t, const char* key) {
    const auto* r = find(a, t);
    std::string s = (!r || (r->data.size() == 4 && !std::memcmp(r->data.data(), "\0\0\0\0", 4)))
                        ? "any"
                        : ip_text(*r);
    o.kv(key, s, fmt::format("{} {} ", key, s));
  };
  addr(t(IFLA_GRE_REMOTE, IFLA_IPTUN_REMOTE), "remote");
  addr(t(IFLA_GRE_LOCAL, IFLA_IPTUN_LOCAL), "local");
  if (auto l = num(a, t(IFLA_GRE_LINK, IFLA_IPTUN_LINK)); l && *l) {
    std::string n = c.client->ifname(int(*l));
    o.kv("link", n, fmt::format("dev {} ", n));
  }
  auto ttl = num(a, t(IFLA_GRE_TTL, IFLA_IPTUN_TTL)).value_or(0);
  if (ttl)
    o.kv("ttl", ttl, fmt::format("ttl {} ", ttl));
  else
    o.kv("ttl", 0, "ttl inherit ");
  if (!gre) return;
  // iproute2 6.1's gre_print_opt: tos, pmtudisc, ignore-df, then each key and flag as the
  // flags (big endian, as GRE_* are) say.
  auto tos = num(a, IFLA_GRE_TOS).value_or(0);
  if (tos == 1)
    o.text("tos inherit ");
  else if (tos)
    o.kv("tos", fmt::format("{:#x}", tos), fmt::format("tos {:#x} ", tos));
  if (auto p = num(a, IFLA_GRE_PMTUDISC); p && !*p)
    o.kv("pmtudisc", false, "nopmtudisc ");
  else if (p)
    o.jkv("pmtudisc", true);
  if (num(a, IFLA_GRE_IGNORE_DF).value_or(0)) o.kv("ignore_df", true, "ignore-df ");
  auto iflags = num(a, IFLA_GRE_IFLAGS).value_or(0), oflags = num(a, IFLA_GRE_OFLAGS).value_or(0);
  auto key = [&](std::uint16_t t, const char* name) {
    const auto* r = find(a, t);
    if (!r || r->data.size() != 4) return;
    std::string s = ip_text(*r);
    o.kv(name, s, fmt::format("{} {} ", name, s));
  };
  if (iflags & GRE_KEY) key(IFLA_GRE_IKEY, "ikey");
  if (oflags & GRE_KEY) key(IFLA_GRE_OKEY, "okey");
  if (iflags & GRE_SEQ) o.kv("iseq", true, "iseq ");
  if (oflags & GRE_SEQ) o.kv("oseq", true, "oseq ");
  if (iflags & GRE_CSUM) o.kv("icsum", true, "icsum ");
  if (oflags & GRE_CSUM) o.kv("ocsum", true, "ocsum ");
  if (auto m = num(a, IFLA_GRE_FWMARK); m && *m)
    o.kv("fwmark", fmt::format("{:#x}", *m), fmt::format("fwmark {:#x} ", *m));
}

// As iproute2 6.1's vrf printers (iplink_vrf.c): the table, of the vrf or of a port's vrf.
void print_vrf(Ctx& c, const Attrs& a, std::uint16_t type) {
  if (auto t = num(a, type)) c.out->kv("table", *t, fmt::format("table {} ", *t));
}

}  // namespace

void print_kind_data(Ctx& c, const std::string& kind, const std::vector<wire::RawAttr>& a) {
  if (kind == "vlan")
    print_vlan(c, a);
  else if (kind == "macvlan" || kind == "macvtap")
    print_macvlan(c, a);
  else if (kind == "bridge")
    print_bridge(c, a);
  else if (kind == "vxlan")
    print_vxlan(c, a);
  else if (kind == "ipip" || kind == "gre" || kind == "gretap" || kind == "sit")
    print_tunnel(c, kind, a);
  else if (kind == "vrf")
    print_vrf(c, a, IFLA_VRF_TABLE);
}

void print_slave_data(Ctx& c, const std::string& kind, const std::vector<wire::RawAttr>& a) {
  if (kind == "bridge")
    print_bridge_port(c, a);
  else if (kind == "vrf")
    print_vrf(c, a, IFLA_VRF_PORT_TABLE);
}

}  // namespace ifcore::cli
