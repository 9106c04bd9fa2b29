// rtnl/fill.cc — Device -> LinkMessage, attribute by attribute as Linux's rtnl_fill_ifinfo
// decides to put them (the wire encoder owns their order).
#include "rtnl/fill.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_link.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/rtnetlink.h>

#include <algorithm>

#include "ifcore/inet.h"
#include "ifcore/kind.h"
#include "ifcore/namespace.h"

namespace ifcore::rtnl {

namespace {

bool all_zero(const HwAddr& a) {
  auto b = a.bytes();
  return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

void fill_stats(const Device& dev, wire::LinkMessage& m) {
  const rtnl_link_stats64 s = link_stats64(dev);
  m.stats64 = s;
  // Linux: copy_rtnl_link_stats truncates each counter to 32 bits.
  rtnl_link_stats s32{};
  s32.rx_packets = static_cast<std::uint32_t>(s.rx_packets);
  s32.tx_packets = static_cast<std::uint32_t>(s.tx_packets);
  s32.rx_bytes = static_cast<std::uint32_t>(s.rx_bytes);
  s32.tx_bytes = static_cast<std::uint32_t>(s.tx_bytes);
  s32.rx_errors = static_cast<std::uint32_t>(s.rx_errors);
  s32.tx_errors = static_cast<std::uint32_t>(s.tx_errors);
  s32.rx_dropped = static_cast<std::uint32_t>(s.rx_dropped);
  s32.tx_dropped = static_cast<std::uint32_t>(s.tx_dropped);
  s32.multicast = static_cast<std::uint32_t>(s.multicast);
  m.stats = s32;
}

// Linux 6.18's sizes: IPV4_DEVCONF_MAX (33), DEVCONF_MAX (60), IPSTATS_MIB_MAX (38),
// ICMP6_MIB_MAX (7) — newer than the uapi headers ifcore builds with.
constexpr std::size_t kInetConfLen = 33, kInet6ConfLen = 60;
constexpr std::size_t kInet6StatsLen = 38, kIcmp6StatsLen = 7;

// Linux: inet_fill_link_af — the device's ipv4_devconf, as a fresh namespace's defaults
// (net/ipv4/devinet.c ipv4_devconf_dflt) with ifcore's settings.
std::vector<std::uint32_t> inet_conf(const inet::Inet4Conf& c, bool loopback) {
  std::vector<std::uint32_t> v(kInetConfLen, 0);
  auto at = [&](int id) -> std::uint32_t& { return v[static_cast<std::size_t>(id - 1)]; };
  auto raw = [](std::int32_t x) { return static_cast<std::uint32_t>(x); };
  at(IPV4_DEVCONF_FORWARDING) = raw(c.forwarding);
  at(IPV4_DEVCONF_MC_FORWARDING) = raw(c.mc_forwarding);
  at(IPV4_DEVCONF_PROXY_ARP) = raw(c.proxy_arp);
  at(IPV4_DEVCONF_RP_FILTER) = raw(c.rp_filter);
  at(IPV4_DEVCONF_IGNORE_ROUTES_WITH_LINKDOWN) = raw(c.ignore_routes_with_linkdown);
  at(IPV4_DEVCONF_BC_FORWARDING) = raw(c.bc_forwarding);
  at(IPV4_DEVCONF_ACCEPT_REDIRECTS) = 1;
  at(IPV4_DEVCONF_SECURE_REDIRECTS) = 1;
  at(IPV4_DEVCONF_SEND_REDIRECTS) = 1;
  at(IPV4_DEVCONF_SHARED_MEDIA) = 1;
  at(IPV4_DEVCONF_ACCEPT_SOURCE_ROUTE) = 1;
  at(IPV4_DEVCONF_PROMOTE_SECONDARIES) = c.promote_secondaries ? 1 : 0;
  at(IPV4_DEVCONF_IGMPV2_UNSOLICITED_REPORT_INTERVAL) = 10000;
  at(IPV4_DEVCONF_IGMPV3_UNSOLICITED_REPORT_INTERVAL) = 1000;
  at(IPV4_DEVCONF_ARP_EVICT_NOCARRIER) = 1;
  if (loopback) {  // Linux: inetdev_init marks lo NOXFRM and NOPOLICY
    at(IPV4_DEVCONF_NOXFRM) = 1;
    at(IPV4_DEVCONF_NOPOLICY) = 1;
  }
  return v;
}

// Linux: ipv6_store_devconf — the inet6_dev's settings, as a fresh namespace's defaults
// (net/ipv6/addrconf.c ipv6_devconf_dflt, observed with Linux 6.18) with ifcore's settings.
std::vector<std::int32_t> inet6_conf(const inet::Inet6Conf& c, std::uint32_t mtu, bool loopback) {
  static constexpr std::int32_t kDefaults[kInet6ConfLen] = {
      0,     64,   1500, 1, 1, 1,     1, -1,   4000, 1000,  0,  604800, 86400, 3,       600,
      16,    0,    1,    1, 1, 60000, 0, 0,    0,    0,     0,  0,      1,     0,       0,
      10000, 1000, 1,    0, 0, 1,     0, 0,    1,    0,     0,  0,      0,     3600000, 0,
      0,     1,    0,    0, 0, 0,     0, 1024, 0,    65535, -1, 1,      0,     0,       0};
  std::vector<std::int32_t> v(std::begin(kDefaults), std::end(kDefaults));
  v[DEVCONF_FORWARDING] = c.forwarding;
  v[DEVCONF_PROXY_NDP] = c.proxy_ndp;
  v[DEVCONF_IGNORE_ROUTES_WITH_LINKDOWN] = c.ignore_routes_with_linkdown;
  v[DEVCONF_MTU6] = static_cast<std::int32_t>(mtu);
  v[DEVCONF_DISABLE_IPV6] = c.disable_ipv6 ? 1 : 0;
  v[DEVCONF_KEEP_ADDR_ON_DOWN] = c.keep_addr_on_down ? 1 : 0;
  v[DEVCONF_ACCEPT_DAD] = c.accept_dad;
  v[DEVCONF_ADDR_GEN_MODE] = c.addr_gen_mode;
  if (loopback) {  // Linux: ipv6_add_dev — no temporary addresses, no DAD on lo
    v[DEVCONF_USE_TEMPADDR] = -1;
    v[DEVCONF_ACCEPT_DAD] = -1;
  }
  return v;
}

// Linux: rtnl_fill_link_af — IFLA_AF_SPEC {AF_INET, AF_INET6}.
void fill_af_spec(const Device& dev, std::uint32_t mtu, wire::LinkMessage& m) {
  inet::LinkAfInfo af = inet::link_af_info(dev);
  if (af.conf4) m.inet_conf = inet_conf(*af.conf4, af.loopback);
  if (!af.conf6) return;
  m.inet6_flags = af.inet6_flags;
  // ifcore keeps no inet6_dev timestamp (Linux: centiseconds since boot of its last
  // change) and does not randomise reachable_time (Linux: 0.5..1.5 * BASE_REACHABLE_TIME):
  // both times are the device's ndisc_cache parameters (`ip ntable`).
  ifla_cacheinfo ci{};
  ci.max_reasm_len = 65535;  // Linux: IPV6_MAXPLEN
  ci.tstamp = 0;
  ci.reachable_time = af.conf6->nd.base_reachable_ms;
  ci.retrans_time = af.conf6->nd.retrans_ms;
  m.inet6_cacheinfo = ci;
  m.inet6_conf = inet6_conf(*af.conf6, mtu, af.loopback);
  // ifcore counts no IPv6 or ICMPv6 packets; Linux puts the number of counters first.
  std::vector<std::uint64_t> st(kInet6StatsLen, 0);
  st[0] = kInet6StatsLen;
  m.inet6_stats = std::move(st);
  std::vector<std::uint64_t> icmp(kIcmp6StatsLen, 0);
  icmp[0] = kIcmp6StatsLen;
  m.inet6_icmp6stats = std::move(icmp);
  std::array<std::uint8_t, 16> token{};
  std::copy(af.conf6->token.begin(), af.conf6->token.end(), token.begin() + 8);
  m.inet6_token = token;
  m.inet6_addr_gen_mode = af.conf6->addr_gen_mode;
}

}  // namespace

bool is_bridge(const Device& dev) {
  return dev.kind().name() == "bridge";
}

rtnl_link_stats64 link_stats64(const Device& dev) {
  static const LinkCounters kNone;  // a device that never counted a frame
  const LinkCounters* counted = dev.counters_if_any();
  const LinkCounters& c = counted ? *counted : kNone;
  rtnl_link_stats64 s{};
  s.rx_packets = c.rx_packets.load(std::memory_order_relaxed);
  s.tx_packets = c.tx_packets.load(std::memory_order_relaxed);
  s.rx_bytes = c.rx_bytes.load(std::memory_order_relaxed);
  s.tx_bytes = c.tx_bytes.load(std::memory_order_relaxed);
  s.rx_errors = c.rx_errors.load(std::memory_order_relaxed);
  s.tx_errors = c.tx_errors.load(std::memory_order_relaxed);
  s.rx_dropped = c.rx_dropped.load(std::memory_order_relaxed);
  s.tx_dropped = c.tx_dropped.load(std::memory_order_relaxed);
  s.multicast = c.multicast.load(std::memory_order_relaxed);
  return s;
}

wire::LinkMessage link_message(const Device& dev, std::uint32_t change, std::uint32_t ext_mask,
                               Namespace* viewer) {
  DeviceSnapshot s = dev.snapshot_locked();
  wire::LinkMessage m;
  m.family = AF_UNSPEC;
  m.hw_type = s.hw_type;
  m.ifindex = s.ifindex;
  m.flags = dev.reported_flags();
  m.change = change;
  m.name = s.name;
  m.txqlen = s.txqlen;  // always: some clients need it
  m.operstate = dev.reported_operstate();
  m.link_mode = s.link_mode;
  // Linux 6.18: IFLA_NETNS_IMMUTABLE — lo, bridges and vrfs are netns_immutable.
  std::string_view kn = dev.kind().name();
  m.netns_immutable = (kn == "loopback" || kn == "bridge" || kn == "vrf") ? 1 : 0;
  m.mtu = s.mtu;
  m.min_mtu = s.min_mtu;
  m.max_mtu = s.max_mtu;
  m.group = s.group;
  // Linux counts promiscuity/allmulti users; a user-set flag counts once.
  std::uint32_t promisc = (s.flags & IFF_PROMISC) ? 1 : 0;
  std::uint32_t allmulti = (s.flags & IFF_ALLMULTI) ? 1 : 0;
  const Device* master = dev.master();
  if (master && master->kind().name() == "bridge") {
    // Linux: br_add_if — dev_set_allmulti(dev, 1), and br_manage_promisc makes every port
    // promiscuous while vlan filtering is off.
    ++promisc;
    ++allmulti;
  }
  // Linux: an up macvlan adds its address to the lower's unicast list (macvlan_open ->
  // dev_uc_add); without IFF_UNICAST_FLT the lower turns uc_promisc on: one count.
  const auto& uppers = dev.uppers_locked();
  if (std::any_of(uppers.begin(), uppers.end(),
                  [](const Device* u) { return u->kind().name() == "macvlan" && u->is_up(); }))
    ++promisc;
  m.promiscuity = promisc;
  m.allmulti = allmulti;
  m.num_tx_queues = s.num_tx_queues;
  m.gso_max_segs = s.offload.gso_max_segs;
  m.gso_max_size = s.offload.gso_max_size;
  m.gro_max_size = s.offload.gro_max_size;
  m.gso_ipv4_max_size = s.offload.gso_ipv4_max_size;
  m.gro_ipv4_max_size = s.offload.gro_ipv4_max_size;
  m.tso_max_size = dev.kind().tso_max_size(dev);
  m.tso_max_segs = 65535;  // Linux: TSO_MAX_SEGS
  m.max_pacing_offload_horizon = 0;
  m.num_rx_queues = s.num_rx_queues;
  if (master) m.master = static_cast<std::uint32_t>(master->ifindex());
  m.carrier = s.carrier ? 1 : 0;
  // Linux: rtnl_fill_ifalias puts IFLA_IFALIAS only when an alias is set.
  if (!s.alias.empty()) m.ifalias = s.alias;
  m.carrier_changes = s.carrier_up_count + s.carrier_down_count;
  m.carrier_up_count = s.carrier_up_count;
  m.carrier_down_count = s.carrier_down_count;
  // Linux: IFLA_HEADROOM / IFLA_TAILROOM (needed_headroom/tailroom: ifcore's kinds leave
  // no tailroom).
  m.headroom = static_cast<std::uint16_t>(dev.kind().needed_headroom(dev));
  m.tailroom = 0;
  m.proto_down = s.proto_down ? 1 : 0;
  if (s.proto_down_reason) m.proto_down_reason = s.proto_down_reason;
  if (s.address.size() > 0) {
    m.address = s.address;
    m.broadcast = s.broadcast;
  }
  // Linux: rtnl_fill_ifinfo leaves the counters out with RTEXT_FILTER_SKIP_STATS.
  if (!(ext_mask & RTEXT_FILTER_SKIP_STATS)) fill_stats(dev, m);
  m.xdp = true;  // Linux: rtnl_xdp_fill — no program attached

  const Kind& kind = dev.kind();
  // Linux's loopback has no rtnl_link_ops, so `lo` carries no IFLA_LINKINFO.
  if (kind.name() != "loopback") {
    m.kind = std::string(kind.name());
    AttrList data = kind.fill_info(dev);
    if (!data.empty()) m.info_data = std::move(data);
  }
  // Linux: rtnl_link_slave_info_fill — the master's kind reports the port's settings.
  if (master) {
    AttrList sdata = master->kind().fill_slave_info(*master, dev);
    if (!sdata.empty()) {
      m.slave_kind = std::string(master->kind().name());
      m.slave_data = std::move(sdata);
    }
  }
  // Linux: IFLA_LINK when dev_get_iflink differs from the device's own index (0 from a
  // kind's ndo_get_iflink with nothing linked, as an untied veth end, is reported too);
  // rtnl_fill_link_netnsid when the link device lives in another namespace.
  // A link device in another namespace is reported even when its index equals the
  // device's own (ifindexes are per namespace; Linux 6.18 shows `a1@if2` for a veth end 2
  // whose peer is 2 in another namespace).
  // The link namespace is the kind's (a vxlan's is where its socket lives, whatever device
  // it has); with one elsewhere, IFLA_LINK is always there, the device's own index for a
  // kind that has no link device (Linux: nla_put_iflink forced, dev_get_iflink).
  int link = kind.link_ifindex(dev);
  Namespace* lns = kind.link_ns(dev);
  bool elsewhere = lns && lns != &dev.ns();
  if (elsewhere && link == 0 && !kind.reports_iflink()) link = s.ifindex;
  if ((link != 0 || kind.reports_iflink()) && (link != s.ifindex || elsewhere))
    m.link = static_cast<std::uint32_t>(link);
  if (elsewhere) m.link_netnsid = (viewer ? *viewer : dev.ns()).peer_id_alloc_locked(*lns);
  if (!all_zero(s.perm_address)) m.perm_address = s.perm_address;
  // Linux: a device never opened has noop_qdisc; a virtual device gets noqueue at its first
  // dev_activate and keeps it as dev->qdisc after a close (dev_deactivate only swaps the
  // queues' qdiscs).
  // A device going away has noop again (Linux: unregister_netdevice_many_notify runs
  // dev_shutdown before it builds the RTM_DELLINK).
  m.qdisc = s.activated && dev.state() == RegState::Registered ? "noqueue" : "noop";
  fill_af_spec(dev, s.mtu, m);
  m.ifmap = rtnl_link_ifmap{};          // Linux: rtnl_fill_link_ifmap, all zero for virtual devices
  m.alt_names = dev.altnames_locked();  // Linux: rtnl_fill_prop_list
  return m;
}

Result<void> encode_device(wire::MessageBuilder& b, const wire::Header& h, const Device& dev,
                           std::uint32_t change, std::uint32_t ext_mask, Namespace* viewer) {
  return wire::encode_link_message(b, h, link_message(dev, change, ext_mask, viewer));
}

bool has_inet6(const Device& dev) {
  return inet::link_af_info(dev).conf6.has_value();
}

Result<void> encode_inet6_device(wire::MessageBuilder& b, const wire::Header& h,
                                 const Device& dev) {
  return wire::encode_inet6_ifinfo(b, h, link_message(dev, 0, RTEXT_FILTER_SKIP_STATS));
}

}  // namespace ifcore::rtnl
