// cli/link_print.cc — devices in `ip link show` text and `ip -j` JSON: header, link layer,
// details and statistics. Field order and spacing follow iproute2 6.1's output (observed
// against the kernel on this machine; see tests/golden/).
#include "cli/link_print.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <net/if_arp.h>

#include <linux/if.h>

#include <fmt/format.h>

namespace ifcore::cli {

Result<LinkView> read_link(const wire::Message& msg) {
  LinkView v;
  auto m = wire::decode_link_message(msg);
  if (!m) return fail(m.error());
  v.m = std::move(*m);
  v.nlmsg_type = msg.hdr.nlmsg_type;
  auto attrs = wire::parse_raw_attrs(
      msg.payload().subspan(std::min(msg.payload().size(), sizeof(ifinfomsg))),
      int(NLMSG_HDRLEN + sizeof(ifinfomsg)));
  if (!attrs) return v;
  for (const auto& a : *attrs) {
    if (a.type == IFLA_TSO_MAX_SIZE) {
      if (auto x = a.u32()) v.tso_max_size = *x;
    } else if (a.type == IFLA_TSO_MAX_SEGS) {
      if (auto x = a.u32()) v.tso_max_segs = *x;
    } else if (a.type == IFLA_LINKINFO) {
      auto in = wire::parse_nested(a);
      if (!in) continue;
      for (const auto& i : *in) {
        if (i.type == IFLA_INFO_DATA) {
          v.info_data.assign(i.data.begin(), i.data.end());
          v.has_info_data = true;
        } else if (i.type == IFLA_INFO_SLAVE_DATA) {
          v.slave_data.assign(i.data.begin(), i.data.end());
          v.has_slave_data = true;
        }
      }
    }
  }
  return v;
}

std::vector<std::string> link_flag_names(std::uint32_t flags, bool mdown) {
  std::vector<std::string> r;
  if ((flags & IFF_UP) && !(flags & IFF_RUNNING)) r.push_back("NO-CARRIER");
  flags &= ~IFF_RUNNING;
  static const std::pair<std::uint32_t, const char*> kNames[] = {{IFF_LOOPBACK, "LOOPBACK"},
                                                                 {IFF_BROADCAST, "BROADCAST"},
                                                                 {IFF_POINTOPOINT, "POINTOPOINT"},
                                                                 {IFF_MULTICAST, "MULTICAST"},
                                                                 {IFF_NOARP, "NOARP"},
                                                                 {IFF_ALLMULTI, "ALLMULTI"},
                                                                 {IFF_PROMISC, "PROMISC"},
                                                                 {IFF_MASTER, "MASTER"},
                                                                 {IFF_SLAVE, "SLAVE"},
                                                                 {IFF_DEBUG, "DEBUG"},
                                                                 {IFF_DYNAMIC, "DYNAMIC"},
                                                                 {IFF_AUTOMEDIA, "AUTOMEDIA"},
                                                                 {IFF_PORTSEL, "PORTSEL"},
                                                                 {IFF_NOTRAILERS, "NOTRAILERS"},
                                                                 {IFF_UP, "UP"},
                                                                 {IFF_LOWER_UP, "LOWER_UP"},
                                                                 {IFF_DORMANT, "DORMANT"},
                                                                 {IFF_ECHO, "ECHO"}};
  for (auto [bit, name] : kNames)
    if (flags & bit) {
      r.push_back(name);
      flags &= ~bit;
    }
  if (flags) r.push_back(fmt::format("{:x}", flags));
  if (mdown) r.push_back("M-DOWN");
  return r;
}

const char* operstate_name(std::uint8_t s) {
  static const char* kNames[] = {"UNKNOWN", "NOTPRESENT", "DOWN", "LOWERLAYERDOWN",
                                 "TESTING", "DORMANT",    "UP"};
  return s < 7 ? kNames[s] : "UNKNOWN";
}

namespace {

const char* link_type_name(std::uint16_t t) {
  switch (t) {
    case ARPHRD_ETHER:
      return "ether";
    case ARPHRD_LOOPBACK:
      return "loopback";
    case ARPHRD_NONE:
      return "none";
    case ARPHRD_TUNNEL:
      return "ipip";
    case ARPHRD_TUNNEL6:
      return "tunnel6";
    case ARPHRD_IPGRE:
      return "gre";
    case ARPHRD_SIT:
      return "sit";
    case ARPHRD_VOID:
      return "void";
    case ARPHRD_IEEE80211:
      return "ieee802.11";
    case ARPHRD_INFINIBAND:
      return "infiniband";
    default:
      return nullptr;
  }
}

std::string group_name(std::uint32_t g) {
  return g == 0 ? "default" : std::to_string(g);
}

// The `@peer` piece; sets `mdown` when the peer is down.
std::string peer_part(Ctx& c, const LinkView& l, bool& mdown) {
  const auto& m = l.m;
  mdown = false;
  // A peer in another namespace may have the device's own ifindex there (iproute2 prints
  // "@ifN" whenever IFLA_LINK_NETNSID comes with IFLA_LINK).
  if (!m.link || (*m.link == std::uint32_t(m.ifindex) && !m.link_netnsid)) return {};
  if (*m.link == 0) {
    c.out->jkv("link", nullptr);
    return "@NONE";
  }
  if (m.link_netnsid) {
    c.out->jkv("link_index", *m.link);
    return fmt::format("@if{}", *m.link);
  }
  std::string n = c.client->ifname(int(*m.link));
  mdown = !(c.client->ifflags(int(*m.link)) & IFF_UP);
  c.out->jkv("link", n);
  return "@" + n;
}

void print_details(Ctx& c, const LinkView& l, bool do_link) {
  const auto& m = l.m;
  if (m.promiscuity)
    c.out->kv("promiscuity", *m.promiscuity, fmt::format(" promiscuity {} ", *m.promiscuity));
  if (m.allmulti) c.out->kv("allmulti", *m.allmulti, fmt::format(" allmulti {} ", *m.allmulti));
  if (m.min_mtu) c.out->kv("min_mtu", *m.min_mtu, fmt::format("minmtu {} ", *m.min_mtu));
  if (m.max_mtu) c.out->kv("max_mtu", *m.max_mtu, fmt::format("maxmtu {} ", *m.max_mtu));
  if (m.kind) {
    c.out->open_object("linkinfo");
    c.out->kv("info_kind", *m.kind, fmt::format("\n    {} ", *m.kind));
    if (l.has_info_data) {
      auto a = wire::parse_raw_attrs(l.info_data, 0);
      if (a) {
        c.out->open_object("info_data");
        print_kind_data(c, *m.kind, *a);
        c.out->close();
      }
    }
    if (m.slave_kind) {
      c.out->kv("info_slave_kind", *m.slave_kind, fmt::format("\n    {}_slave ", *m.slave_kind));
      if (l.has_slave_data) {
        auto a = wire::parse_raw_attrs(l.slave_data, 0);
        if (a) {
          c.out->open_object("info_slave_data");
          print_slave_data(c, *m.slave_kind, *a);
          c.out->close();
        }
      }
    }
    c.out->close();
  } else if (m.slave_kind) {
    c.out->open_object("linkinfo");
    c.out->kv("info_slave_kind", *m.slave_kind, fmt::format("\n    {}_slave ", *m.slave_kind));
    c.out->close();
  }
  if (do_link && m.inet6_addr_gen_mode) {  // ip prints it for `ip link` only
    static const char* kModes[] = {"eui64", "none", "stable_secret", "random"};
    std::uint8_t g = *m.inet6_addr_gen_mode;
    std::string s = g < 4 ? kModes[g] : fmt::format("addrgenmode {:#x}", g);
    c.out->kv("inet6_addr_gen_mode", s, fmt::format("addrgenmode {} ", s));
  }
  auto u = [&](const char* key, const char* word, const std::optional<std::uint32_t>& v) {
    if (v) c.out->kv(key, *v, fmt::format("{} {} ", word, *v));
  };
  u("num_tx_queues", "numtxqueues", m.num_tx_queues);
  u("num_rx_queues", "numrxqueues", m.num_rx_queues);
  u("gso_max_size", "gso_max_size", m.gso_max_size);
  u("gso_max_segs", "gso_max_segs", m.gso_max_segs);
  u("tso_max_size", "tso_max_size", l.tso_max_size);
  u("tso_max_segs", "tso_max_segs", l.tso_max_segs);
  u("gro_max_size", "gro_max_size", m.gro_max_size);
}

std::size_t digits(std::uint64_t v) {
  return fmt::formatted_size("{}", v);
}

void print_stats(Ctx& c, const LinkView& l) {
  rtnl_link_stats64 s{};
  if (l.m.stats64) {
    s = *l.m.stats64;
  } else if (l.m.stats) {
    const auto& o = *l.m.stats;
    s.rx_packets = o.rx_packets, s.tx_packets = o.tx_packets, s.rx_bytes = o.rx_bytes;
    s.tx_bytes = o.tx_bytes, s.rx_errors = o.rx_errors, s.tx_errors = o.tx_errors;
    s.rx_dropped = o.rx_dropped, s.tx_dropped = o.tx_dropped, s.multicast = o.multicast;
    s.collisions = o.collisions, s.rx_missed_errors = o.rx_missed_errors;
    s.tx_carrier_errors = o.tx_carrier_errors;
  } else {
    return;
  }
  std::uint64_t carrier_changes = l.m.carrier_changes.value_or(0);
  bool more = c.stats > 1;
  if (c.out->json()) {
    c.out->open_object("stats64");
    c.out->open_object("rx");
    c.out->jkv("bytes", s.rx_bytes);
    c.out->jkv("packets", s.rx_packets);
    c.out->jkv("errors", s.rx_errors);
    c.out->jkv("dropped", s.rx_dropped);
    c.out->jkv("over_errors", s.rx_over_errors);
    c.out->jkv("multicast", s.multicast);
    if (s.rx_compressed) c.out->jkv("compressed", s.rx_compressed);
    if (more) {
      c.out->jkv("length_errors", s.rx_length_errors);
      c.out->jkv("crc_errors", s.rx_crc_errors);
      c.out->jkv("frame_errors", s.rx_frame_errors);
      c.out->jkv("fifo_errors", s.rx_fifo_errors);
      c.out->jkv("missed_errors", s.rx_missed_errors);
      if (s.rx_nohandler) c.out->jkv("nohandler", s.rx_nohandler);
    }
    c.out->close();
    c.out->open_object("tx");
    c.out->jkv("bytes", s.tx_bytes);
    c.out->jkv("packets", s.tx_packets);
    c.out->jkv("errors", s.tx_errors);
    c.out->jkv("dropped", s.tx_dropped);
    c.out->jkv("carrier_errors", s.tx_carrier_errors);
    c.out->jkv("collisions", s.collisions);
    if (s.tx_compressed) c.out->jkv("compressed", s.tx_compressed);
    if (more) {
      c.out->jkv("aborted_errors", s.tx_aborted_errors);
      c.out->jkv("fifo_errors", s.tx_fifo_errors);
      c.out->jkv("window_errors", s.tx_window_errors);
      c.out->jkv("heartbeat_errors", s.tx_heartbeat_errors);
      if (l.m.carrier_changes) c.out->jkv("carrier_changes", carrier_changes);
    }
    c.out->close();
    c.out->close();
    return;
  }
  // Column widths: the widest header word or number in each column.
  std::size_t w[7] = {10, 7, 6, 7, 7, 7, 10};
  auto grow = [&](int i, std::uint64_t v) { w[i] = std::max(w[i], digits(v)); };
  grow(0, s.rx_bytes), grow(0, s.tx_bytes);
  grow(1, s.rx_packets), grow(1, s.tx_packets);
  grow(2, s.rx_errors), grow(2, s.tx_errors);
  grow(3, s.rx_dropped), grow(3, s.tx_dropped);
  grow(4, s.rx_missed_errors), grow(4, s.tx_carrier_errors);
  grow(5, s.multicast), grow(5, s.collisions);
  if (more) {
    grow(1, s.rx_length_errors), grow(1, s.tx_aborted_errors);
    grow(2, s.rx_crc_errors), grow(2, s.tx_fifo_errors);
    grow(3, s.rx_frame_errors), grow(3, s.tx_window_errors);
    grow(4, s.rx_fifo_errors), grow(4, s.tx_heartbeat_errors);
    grow(5, s.rx_over_errors), grow(5, carrier_changes);
  }
  std::string t;
  auto header = [&](const char* dir, const char* const* words, bool compressed_col) {
    t += fmt::format("\n    {}{}", dir, rpad(words[0], w[0] - 3));
    for (int i = 1; i < 6; ++i) t += " " + rpad(words[i], w[i]);
    if (compressed_col) t += " " + rpad("", w[6]);
  };
  auto row = [&](std::initializer_list<std::uint64_t> v) {
    t += "\n    ";
    int i = 0;
    for (auto x : v) t += rpad(std::to_string(x), w[i++]) + " ";
  };
  static const char* kRx[] = {"bytes", "packets", "errors", "dropped", "missed", "mcast"};
  static const char* kTx[] = {"bytes", "packets", "errors", "dropped", "carrier", "collsns"};
  header("RX:", kRx, true);
  row({s.rx_bytes, s.rx_packets, s.rx_errors, s.rx_dropped, s.rx_missed_errors, s.multicast});
  if (s.rx_compressed) t += rpad(std::to_string(s.rx_compressed), w[6]) + " ";
  auto err_row = [&](const char* label, const char* const* words,
                     std::initializer_list<std::uint64_t> v) {
    std::string lab = label;
    if (lab.size() < w[0]) lab.append(w[0] - lab.size(), ' ');
    t += "\n    " + lab;
    for (int i = 0; i < 5; ++i) t += " " + rpad(words[i], w[i + 1]);
    t += "\n    " + std::string(w[0], ' ') + " ";
    int i = 1;
    for (auto x : v) t += rpad(std::to_string(x), w[i++]) + " ";
  };
  if (more) {
    static const char* kRxErr[] = {"length", "crc", "frame", "fifo", "overrun"};
    err_row("RX errors:", kRxErr,
            {s.rx_length_errors, s.rx_crc_errors, s.rx_frame_errors, s.rx_fifo_errors,
             s.rx_over_errors});
  }
  header("TX:", kTx, true);
  row({s.tx_bytes, s.tx_packets, s.tx_errors, s.tx_dropped, s.tx_carrier_errors, s.collisions});
  if (s.tx_compressed) t += rpad(std::to_string(s.tx_compressed), w[6]) + " ";
  if (more) {
    static const char* kTxErr[] = {"aborted", "fifo", "window", "heartbt", "transns"};
    err_row("TX errors:", kTxErr,
            {s.tx_aborted_errors, s.tx_fifo_errors, s.tx_window_errors, s.tx_heartbeat_errors,
             carrier_changes});
  }
  c.out->text(t);
}

// iproute2: print_linkinfo ends with IFLA_PROP_LIST's altnames, one line each (JSON: an
// "altnames" array), in `ip link`, `ip addr` and `ip monitor` alike.
void print_altnames(Out& o, const wire::LinkMessage& m) {
  if (m.alt_names.empty()) return;
  Json names = Json::array();
  std::string txt;
  for (const std::string& n : m.alt_names) {
    names.push_back(n);
    txt += "\n    altname " + n;
  }
  o.kv("altnames", names, txt);
}

// iproute2: print_proto_down, on the link line (the reasons by number: ifc reads no
// protodown_reasons.d).
void print_proto_down(Out& o, const wire::LinkMessage& m) {
  if (m.proto_down && *m.proto_down) o.kv("proto_down", true, " protodown on ");
  if (!m.proto_down_reason || !*m.proto_down_reason) return;
  Json bits = Json::array();
  std::string txt;
  for (int i = 0; i < 32; ++i) {
    if (!(*m.proto_down_reason & (1u << i))) continue;
    txt += fmt::format("{}{}", txt.empty() ? "" : ",", i);
    bits.push_back(std::to_string(i));
  }
  o.kv("proto_down_reason", bits, "protodown_reason <" + txt + ">");
}

}  // namespace

std::string link_name_with_peer(Ctx& c, const LinkView& l) {
  bool mdown = false;
  return l.m.name + peer_part(c, l, mdown);
}

void print_link(Ctx& c, const LinkView& l, bool do_link, bool monitor) {
  const auto& m = l.m;
  Out& o = *c.out;
  if (l.nlmsg_type == RTM_DELLINK) o.kv("deleted", true, "Deleted ");
  o.kv("ifindex", m.ifindex, fmt::format("{}: ", m.ifindex));
  bool mdown = false;
  std::string peer = peer_part(c, l, mdown);
  o.kv("ifname", m.name, fmt::format("{}{}: ", m.name, peer));
  auto flags = link_flag_names(m.flags, mdown);
  Json jf = Json::array();
  std::string tf;
  for (const auto& f : flags) {
    jf.push_back(f);
    tf += (tf.empty() ? "" : ",") + f;
  }
  o.kv("flags", jf, "<" + tf + "> ");
  if (m.mtu) o.kv("mtu", *m.mtu, fmt::format("mtu {} ", *m.mtu));
  if (m.qdisc) o.kv("qdisc", *m.qdisc, fmt::format("qdisc {} ", *m.qdisc));
  if (m.master) {
    std::string mn = c.client->ifname(int(*m.master));
    o.kv("master", mn, fmt::format("master {} ", mn));
  }
  if (m.operstate) {
    const char* s = operstate_name(*m.operstate);
    o.kv("operstate", s, fmt::format("state {} ", s));
  }
  if (do_link && m.link_mode) {
    const char* s = *m.link_mode == 0 ? "DEFAULT" : *m.link_mode == 1 ? "DORMANT" : "TESTING";
    o.kv("linkmode", s, fmt::format("mode {} ", s));
  }
  if (m.group) o.kv("group", group_name(*m.group), fmt::format("group {} ", group_name(*m.group)));
  if (!monitor) o.kv("txqlen", m.txqlen, fmt::format("qlen {}", m.txqlen));
  if (!do_link && c.family && c.family != AF_PACKET &&
      !c.details) {  // `ip -4 addr`: no link layer line, but the altnames
    print_altnames(o, m);
    o.text("\n");
    return;
  }
  o.text("\n    ");
  const char* lt = link_type_name(m.hw_type);
  std::string lts = lt ? lt : fmt::format("[{}]", m.hw_type);
  o.kv("link_type", lts, fmt::format("link/{} ", lts));
  if (m.address) {
    std::string a = ll_addr_text(*m.address, m.hw_type);
    o.kv("address", a, a);
  }
  if (m.broadcast) {
    std::string b = ll_addr_text(*m.broadcast, m.hw_type);
    if (m.flags & IFF_POINTOPOINT) {
      o.jkv("link_pointtopoint", true);
      o.kv("broadcast", b, " peer " + b);
    } else {
      o.kv("broadcast", b, " brd " + b);
    }
  }
  if (m.link_netnsid)
    o.kv("link_netnsid", *m.link_netnsid, fmt::format(" link-netnsid {}", *m.link_netnsid));
  if (m.perm_address && m.address && !(*m.perm_address == *m.address))
    o.kv("permaddr", ll_addr_text(*m.perm_address, m.hw_type),
         " permaddr " + ll_addr_text(*m.perm_address, m.hw_type));
  print_proto_down(o, m);
  if (c.details) print_details(c, l, do_link);
  // iproute2: after the details, and only for `ip link` or -d (not `ip addr`, `ip monitor`).
  if (m.ifalias && (do_link || c.details))
    o.kv("ifalias", *m.ifalias, fmt::format("\n    alias {}", *m.ifalias));
  if (c.stats) print_stats(c, l);
  print_altnames(o, m);
  o.text("\n");
}

// ARPHRD_IP6GRE of <linux/if_arp.h>, which glibc's <net/if_arp.h> lacks (and the two clash).
constexpr std::uint16_t kArphrdIp6Gre = 823;

std::string ll_addr_text(const HwAddr& a, std::uint16_t hw_type) {
  // iproute2: ll_addr_n2a — the 4-byte addresses of IPv4 tunnels, the 16-byte ones of IPv6
  // tunnels, are IP addresses.
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.size() == 4 &&
      (hw_type == ARPHRD_TUNNEL || hw_type == ARPHRD_SIT || hw_type == ARPHRD_IPGRE))
    return inet_ntop(AF_INET, a.data(), buf, sizeof buf);
  if (a.size() == 16 && (hw_type == ARPHRD_TUNNEL6 || hw_type == kArphrdIp6Gre))
    return inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
  return a.to_string();
}

void print_link_brief(Ctx& c, const LinkView& l) {
  const auto& m = l.m;
  Out& o = *c.out;
  if (l.nlmsg_type == RTM_DELLINK) o.kv("deleted", true, "Deleted ");
  bool mdown = false;
  std::string peer = peer_part(c, l, mdown);
  std::string name = m.name + peer;
  if (name.size() < 16) name.append(16 - name.size(), ' ');
  o.kv("ifname", m.name, name + " ");
  const char* s = m.operstate ? operstate_name(*m.operstate) : "UNKNOWN";
  std::string st = s;
  if (st.size() < 14) st.append(14 - st.size(), ' ');
  o.kv("operstate", s, st + " ");
  (void)mdown;
}

}  // namespace ifcore::cli
