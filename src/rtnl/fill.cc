// rtnl/fill.cc — Device -> LinkMessage, attribute by attribute as Linux's rtnl_fill_ifinfo
// decides to put them (the wire encoder owns their order).
#include "rtnl/fill.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <algorithm>

#include "ifcore/kind.h"
#include "ifcore/namespace.h"

namespace ifcore::rtnl {

namespace {

bool all_zero(const HwAddr& a) {
  auto b = a.bytes();
  return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

void fill_stats(const Device& dev, wire::LinkMessage& m) {
  const LinkCounters& c = dev.counters();
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

}  // namespace

wire::LinkMessage link_message(const Device& dev, std::uint32_t change, std::uint32_t ext_mask) {
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
  m.mtu = s.mtu;
  m.min_mtu = s.min_mtu;
  m.max_mtu = s.max_mtu;
  m.group = s.group;
  // Linux counts promiscuity/allmulti users; a user-set flag counts once.
  m.promiscuity = (s.flags & IFF_PROMISC) ? 1 : 0;
  m.allmulti = (s.flags & IFF_ALLMULTI) ? 1 : 0;
  m.num_tx_queues = s.num_tx_queues;
  m.gso_max_segs = s.gso_max_segs;
  m.gso_max_size = s.gso_max_size;
  m.gro_max_size = 65536;  // Linux: GRO_LEGACY_MAX_SIZE
  m.num_rx_queues = s.num_rx_queues;
  const Device* master = dev.master();
  if (master) m.master = static_cast<std::uint32_t>(master->ifindex());
  m.carrier = s.carrier ? 1 : 0;
  // Linux: rtnl_fill_ifalias puts IFLA_IFALIAS only when an alias is set.
  if (!s.alias.empty()) m.ifalias = s.alias;
  m.carrier_changes = s.carrier_up_count + s.carrier_down_count;
  m.carrier_up_count = s.carrier_up_count;
  m.carrier_down_count = s.carrier_down_count;
  m.proto_down = 0;
  if (s.address.size() > 0) {
    m.address = s.address;
    m.broadcast = s.broadcast;
  }
  // Linux: rtnl_fill_ifinfo leaves the counters out with RTEXT_FILTER_SKIP_STATS.
  if (!(ext_mask & RTEXT_FILTER_SKIP_STATS)) fill_stats(dev, m);

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
  // Linux: IFLA_LINK when dev_get_iflink differs from the device's own index;
  // rtnl_fill_link_netnsid when the link device lives in another namespace.
  int link = kind.link_ifindex(dev);
  if (link != 0 && link != s.ifindex) m.link = static_cast<std::uint32_t>(link);
  if (const Device* ld = dev.link(); ld && &ld->ns() != &dev.ns()) m.link_netnsid = ld->ns().id();
  if (!all_zero(s.perm_address)) m.perm_address = s.perm_address;
  // Linux: a down device still has noop_qdisc; virtual devices get noqueue when up.
  m.qdisc = (s.flags & IFF_UP) ? "noqueue" : "noop";
  return m;
}

Result<void> encode_device(wire::MessageBuilder& b, const wire::Header& h, const Device& dev,
                           std::uint32_t change, std::uint32_t ext_mask) {
  return wire::encode_link_message(b, h, link_message(dev, change, ext_mask));
}

}  // namespace ifcore::rtnl
