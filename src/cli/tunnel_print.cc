// cli/tunnel_print.cc — see tunnel_print.h.
#include "cli/tunnel_print.h"

#include <netinet/in.h>

#include <linux/if_link.h>

#include <fmt/format.h>

namespace ifcore::cli {

std::string v4_text(std::uint32_t host) {
  return fmt::format("{}.{}.{}.{}", host >> 24, (host >> 16) & 255, (host >> 8) & 255, host & 255);
}

// ip tunnel -s: a few of the device's counters (iproute2 6.1's tnl_print_stats).
void print_stats(Ctx& c, const LinkView& l) {
  if (!l.m.stats64) return;  // ifcore's devices all report IFLA_STATS64
  const rtnl_link_stats64& s = *l.m.stats64;
  c.out->text(fmt::format(
      "\nRX: Packets    Bytes        Errors CsumErrs OutOfSeq Mcasts\n"
      "    {:<10} {:<12} {:<6} {:<8} {:<8} {:<8}\n"
      "TX: Packets    Bytes        Errors DeadLoop NoRoute  NoBufs\n"
      "    {:<10} {:<12} {:<6} {:<8} {:<8} {:<6}",
      s.rx_packets, s.rx_bytes, s.rx_errors, s.rx_frame_errors, s.rx_fifo_errors, s.multicast,
      s.tx_packets, s.tx_bytes, s.tx_errors, s.collisions, s.tx_carrier_errors, s.tx_dropped));
}

// One tunnel as ip tunnel prints it (iproute2 6.1's print_tunnel and tnl_print_gre_flags),
// without the final newline.
void print_parm(Ctx& c, const Parm& p) {
  Out& o = *c.out;
  o.kv("ifname", p.name, p.name + ": ");
  const char* proto = p.proto == IPPROTO_IPIP   ? "ip"
                      : p.proto == IPPROTO_GRE  ? "gre"
                      : p.proto == IPPROTO_IPV6 ? "ipv6"
                                                : "any";
  std::string mode = std::string(proto) + "/ip";
  o.kv("mode", mode, mode + " ");
  std::string r = p.remote || o.json() ? v4_text(p.remote) : "any";
  std::string l = p.local || o.json() ? v4_text(p.local) : "any";
  o.kv("remote", r, "remote " + r + " ");
  o.kv("local", l, "local " + l);
  if (p.link) {
    std::string n = c.client->ifname(int(p.link));
    o.kv("dev", n, " dev " + n);
  }
  if (p.ttl)
    o.kv("ttl", p.ttl, fmt::format(" ttl {}", p.ttl));
  else
    o.text(" ttl inherit");
  if (p.tos == 1) {
    o.text(" tos inherit");
  } else if (p.tos) {
    std::string t = (p.tos & 1) && !o.json() ? "inherit/" + ds_name(p.tos & ~1) : ds_name(p.tos);
    o.kv("tos", t, " tos " + t);
  }
  if (!p.pmtudisc) o.kv("nopmtudisc", nullptr, " nopmtudisc");
  if ((p.iflags & kKey) && (p.oflags & kKey) && p.ikey == p.okey) {
    o.kv("key", p.ikey, fmt::format(" key {}", p.ikey));
  } else {
    if (p.iflags & kKey) o.kv("ikey", p.ikey, fmt::format(" ikey {}", p.ikey));
    if (p.oflags & kKey) o.kv("okey", p.okey, fmt::format(" okey {}", p.okey));
  }
  if (p.proto != IPPROTO_GRE) return;
  o.open_array("flags");
  auto flag = [&](bool on, const char* json, const char* text) {
    if (!on) return;
    if (o.json())
      o.push(json);
    else
      o.text(text);
  };
  flag(p.iflags & kSeq, "rx_drop_ooseq", "\n  Drop packets out of sequence.");
  flag(p.iflags & kCsum, "rx_csum", "\n  Checksum in received packet is required.");
  flag(p.oflags & kSeq, "tx_seq", "\n  Sequence packets on output.");
  flag(p.oflags & kCsum, "tx_csum", "\n  Checksum output packets.");
  o.close();
}

}  // namespace ifcore::cli
