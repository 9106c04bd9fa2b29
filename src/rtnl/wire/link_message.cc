// rtnl/wire/link_message.cc — the RTM_NEWLINK/RTM_DELLINK that dumps and notifications
// carry: LinkMessage <-> bytes, in the attribute order of Linux's rtnl_fill_ifinfo.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "rtnl/wire/field.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

template <class T>
void put_opt_u32(MessageBuilder& b, std::uint16_t type, const std::optional<T>& v) {
  if (v) b.put_u32(type, static_cast<std::uint32_t>(*v));
}

void put_opt_u8(MessageBuilder& b, std::uint16_t type, const std::optional<std::uint8_t>& v) {
  if (v) b.put_u8(type, *v);
}

Result<void> put_kind_data(MessageBuilder& b, std::uint16_t type,
                           const std::optional<AttrList>& list,
                           const std::vector<std::uint8_t>& raw) {
  if (list) {
    auto n = b.begin_nest(type);
    IFCORE_TRY(encode_attrs(b, *list));
    b.end_nest(n);
  } else if (!raw.empty()) {
    b.put_bytes(type, raw);
  }
  return ok();
}

// Linux: inet6_fill_ifla6_attrs.
void put_inet6_attrs(MessageBuilder& b, const LinkMessage& m) {
  put_opt_u32(b, IFLA_INET6_FLAGS, m.inet6_flags);
  if (m.inet6_cacheinfo)
    b.put_attr(IFLA_INET6_CACHEINFO, &*m.inet6_cacheinfo, sizeof(ifla_cacheinfo));
  if (m.inet6_conf) b.put_attr(IFLA_INET6_CONF, m.inet6_conf->data(), m.inet6_conf->size() * 4);
  if (m.inet6_stats) b.put_attr(IFLA_INET6_STATS, m.inet6_stats->data(), m.inet6_stats->size() * 8);
  if (m.inet6_icmp6stats)
    b.put_attr(IFLA_INET6_ICMP6STATS, m.inet6_icmp6stats->data(), m.inet6_icmp6stats->size() * 8);
  if (m.inet6_token) b.put_attr(IFLA_INET6_TOKEN, m.inet6_token->data(), 16);
  put_opt_u8(b, IFLA_INET6_ADDR_GEN_MODE, m.inet6_addr_gen_mode);
}

}  // namespace

void begin_ifinfo(MessageBuilder& b, const Header& h, std::uint8_t family, const LinkMessage& m,
                  std::uint32_t change) {
  b.begin(h);
  ifinfomsg ifi{};
  ifi.ifi_family = family;
  ifi.ifi_type = m.hw_type;
  ifi.ifi_index = m.ifindex;
  ifi.ifi_flags = m.flags;
  ifi.ifi_change = change;
  b.put_struct(ifi);
}

Result<void> encode_inet6_ifinfo(MessageBuilder& b, const Header& h, const LinkMessage& m) {
  begin_ifinfo(b, h, AF_INET6, m);
  b.put_string(IFLA_IFNAME, m.name);
  if (m.address) b.put_bytes(IFLA_ADDRESS, m.address->bytes());
  put_opt_u32(b, IFLA_MTU, m.mtu);
  put_opt_u32(b, IFLA_LINK, m.link);
  // A device that is not up reports IF_OPER_DOWN whatever its own operstate.
  b.put_u8(IFLA_OPERSTATE,
           (m.flags & IFF_UP) ? m.operstate.value_or(IF_OPER_UNKNOWN) : std::uint8_t{IF_OPER_DOWN});
  auto info = b.begin_nest(IFLA_PROTINFO);
  put_inet6_attrs(b, m);
  b.end_nest(info);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

Result<void> encode_link_message(MessageBuilder& b, const Header& h, const LinkMessage& m) {
  begin_ifinfo(b, h, m.family, m, m.change);

  // Linux 6.18 rtnl_fill_ifinfo order, as observed on this machine (docs/WIRE.md).
  b.put_string(IFLA_IFNAME, m.name);
  b.put_u32(IFLA_TXQLEN, m.txqlen);
  put_opt_u8(b, IFLA_OPERSTATE, m.operstate);
  put_opt_u8(b, IFLA_LINKMODE, m.link_mode);
  put_opt_u8(b, kIflaNetnsImmutable, m.netns_immutable);
  put_opt_u32(b, IFLA_MTU, m.mtu);
  put_opt_u32(b, IFLA_MIN_MTU, m.min_mtu);
  put_opt_u32(b, IFLA_MAX_MTU, m.max_mtu);
  put_opt_u32(b, IFLA_GROUP, m.group);
  put_opt_u32(b, IFLA_PROMISCUITY, m.promiscuity);
  put_opt_u32(b, IFLA_ALLMULTI, m.allmulti);
  put_opt_u32(b, IFLA_NUM_TX_QUEUES, m.num_tx_queues);
  put_opt_u32(b, IFLA_GSO_MAX_SEGS, m.gso_max_segs);
  put_opt_u32(b, IFLA_GSO_MAX_SIZE, m.gso_max_size);
  put_opt_u32(b, IFLA_GRO_MAX_SIZE, m.gro_max_size);
  put_opt_u32(b, kIflaGsoIpv4MaxSize, m.gso_ipv4_max_size);
  put_opt_u32(b, kIflaGroIpv4MaxSize, m.gro_ipv4_max_size);
  put_opt_u32(b, IFLA_TSO_MAX_SIZE, m.tso_max_size);
  put_opt_u32(b, IFLA_TSO_MAX_SEGS, m.tso_max_segs);
  put_opt_u32(b, kIflaMaxPacingOffloadHorizon, m.max_pacing_offload_horizon);
  put_opt_u32(b, IFLA_NUM_RX_QUEUES, m.num_rx_queues);
  put_opt_u32(b, IFLA_MASTER, m.master);
  put_opt_u8(b, IFLA_CARRIER, m.carrier);
  if (m.ifalias) b.put_string(IFLA_IFALIAS, *m.ifalias);
  put_opt_u32(b, IFLA_CARRIER_CHANGES, m.carrier_changes);
  put_opt_u32(b, IFLA_CARRIER_UP_COUNT, m.carrier_up_count);
  put_opt_u32(b, IFLA_CARRIER_DOWN_COUNT, m.carrier_down_count);
  if (m.headroom) b.put_u16(kIflaHeadroom, *m.headroom);
  if (m.tailroom) b.put_u16(kIflaTailroom, *m.tailroom);
  put_opt_u8(b, IFLA_PROTO_DOWN, m.proto_down);
  if (m.proto_down_reason) {  // Linux: rtnl_fill_proto_down, only when some reason is set
    auto n = b.begin_nest(IFLA_PROTO_DOWN_REASON);
    b.put_u32(IFLA_PROTO_DOWN_REASON_VALUE, *m.proto_down_reason);
    b.end_nest(n);
  }
  put_opt_u32(b, IFLA_EVENT, m.event);  // Linux: only an event other than IFLA_EVENT_NONE
  if (m.address) b.put_bytes(IFLA_ADDRESS, m.address->bytes());
  if (m.broadcast) b.put_bytes(IFLA_BROADCAST, m.broadcast->bytes());
  if (m.stats64) b.put_attr(IFLA_STATS64, &*m.stats64, sizeof(rtnl_link_stats64));
  if (m.stats) b.put_attr(IFLA_STATS, &*m.stats, sizeof(rtnl_link_stats));
  if (m.xdp) {
    auto x = b.begin_nest(IFLA_XDP);
    b.put_u8(IFLA_XDP_ATTACHED, XDP_ATTACHED_NONE);
    b.end_nest(x);
  }
  bool has_info = m.kind || m.info_data || !m.info_data_raw.empty() || m.slave_kind ||
                  m.slave_data || !m.slave_data_raw.empty();
  if (has_info) {
    // Linux (rtnl_link_fill): the kind's own info first, then the port's.
    auto info = b.begin_nest(IFLA_LINKINFO);
    if (m.kind) b.put_string(IFLA_INFO_KIND, *m.kind);
    auto r = put_kind_data(b, IFLA_INFO_DATA, m.info_data, m.info_data_raw);
    if (r && m.slave_kind) b.put_string(IFLA_INFO_SLAVE_KIND, *m.slave_kind);
    if (r) r = put_kind_data(b, IFLA_INFO_SLAVE_DATA, m.slave_data, m.slave_data_raw);
    if (!r) {
      b.cancel();
      return r;
    }
    b.end_nest(info);
  }
  if (m.link_netnsid) b.put_s32(IFLA_LINK_NETNSID, *m.link_netnsid);
  put_opt_u32(b, IFLA_LINK, m.link);
  if (m.perm_address) b.put_bytes(IFLA_PERM_ADDRESS, m.perm_address->bytes());
  if (m.qdisc) b.put_string(IFLA_QDISC, *m.qdisc);
  bool has_inet6 = m.inet6_flags || m.inet6_cacheinfo || m.inet6_conf || m.inet6_stats ||
                   m.inet6_icmp6stats || m.inet6_token || m.inet6_addr_gen_mode;
  {
    // Linux: rtnl_fill_link_af opens the nest whatever the families have (empty in an
    // RTM_DELLINK: their state is gone by then).
    auto af = b.begin_nest(IFLA_AF_SPEC);
    if (m.inet_conf) {
      auto in = b.begin_nest(AF_INET);
      b.put_attr(IFLA_INET_CONF, m.inet_conf->data(), m.inet_conf->size() * sizeof(std::uint32_t));
      b.end_nest(in);
    }
    if (has_inet6) {
      auto in6 = b.begin_nest(AF_INET6);
      put_inet6_attrs(b, m);
      b.end_nest(in6);
    }
    b.end_nest(af);
  }
  if (m.ifmap) {
    // Linux: rtnl_fill_link_ifmap zeroes the struct before it sets the fields. Its last 4
    // bytes are padding, which neither `rtnl_link_ifmap{}` nor a copy is bound to clear:
    // sent as they were, they carried whatever the memory held (heap and stack addresses).
    rtnl_link_ifmap map;
    std::memset(&map, 0, sizeof map);
    map.mem_start = m.ifmap->mem_start;
    map.mem_end = m.ifmap->mem_end;
    map.base_addr = m.ifmap->base_addr;
    map.irq = m.ifmap->irq;
    map.dma = m.ifmap->dma;
    map.port = m.ifmap->port;
    b.put_attr(IFLA_MAP, &map, sizeof map);
  }
  if (!m.alt_names.empty()) {
    // Linux: rtnl_fill_prop_list opens the nest with nla_nest_start (NLA_F_NESTED) and
    // cancels it when the device has no altname.
    std::size_t props = b.begin_nest(NLA_F_NESTED | IFLA_PROP_LIST);
    for (const std::string& n : m.alt_names) b.put_string(IFLA_ALT_IFNAME, n);
    b.end_nest(props);
  }
  // Linux: rtnl_fill_devlink_port and rtnl_fill_dpll_pin open their nests always, empty for
  // a device with neither.
  b.end_nest(b.begin_nest(kIflaDevlinkPort));
  b.end_nest(b.begin_nest(kIflaDpllPin));
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

namespace {

// Copies a stats struct; a shorter or longer payload (another kernel's layout) is
// tolerated: missing counters read as 0, extra ones are dropped.
template <class T>
T copy_stats(const RawAttr& a) {
  T s{};
  if (!a.data.empty()) std::memcpy(&s, a.data.data(), std::min(sizeof(T), a.data.size()));
  return s;
}

// An array of T from a payload, a partial last element dropped; empty for an empty one.
template <class T>
std::vector<T> copy_array(const RawAttr& a) {
  std::vector<T> v(a.data.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), a.data.data(), v.size() * sizeof(T));
  return v;
}

void decode_kind_data(const RawAttr& a, const std::optional<std::string>& kind, bool slave,
                      const DecodeContext& ctx, std::optional<AttrList>& list,
                      std::vector<std::uint8_t>& raw) {
  raw.assign(a.data.begin(), a.data.end());
  if (!kind || !ctx.kind_policy) return;
  auto policy = ctx.kind_policy(*kind, slave);
  if (!policy) return;
  DecodeContext inner = ctx;
  ++inner.depth;
  auto v = decode_attrs(a.data, *policy, a.offset + NLA_HDRLEN, inner);
  if (v) list = std::move(*v);  // tolerant: a newer sender may know more types
}

Result<void> decode_linkinfo(const RawAttr& a, LinkMessage& m, const DecodeContext& ctx) {
  auto inner = parse_nested(a);
  if (!inner) return fail(inner.error());
  const RawAttr* data = nullptr;
  const RawAttr* slave = nullptr;
  for (const RawAttr& x : *inner) {
    if (x.type == IFLA_INFO_KIND) m.kind = x.as_string();
    if (x.type == IFLA_INFO_SLAVE_KIND) m.slave_kind = x.as_string();
    if (x.type == IFLA_INFO_DATA) data = &x;
    if (x.type == IFLA_INFO_SLAVE_DATA) slave = &x;
  }
  if (data) decode_kind_data(*data, m.kind, false, ctx, m.info_data, m.info_data_raw);
  if (slave) decode_kind_data(*slave, m.slave_kind, true, ctx, m.slave_data, m.slave_data_raw);
  return ok();
}

Result<void> decode_af_spec(const RawAttr& a, LinkMessage& m) {
  auto fams = parse_nested(a);
  if (!fams) return fail(fams.error());
  for (const RawAttr& f : *fams) {
    if (f.type != AF_INET && f.type != AF_INET6) continue;
    auto inner = parse_nested(f);
    if (!inner) return fail(inner.error());
    for (const RawAttr& x : *inner) {
      if (f.type == AF_INET && x.type == IFLA_INET_CONF) {
        m.inet_conf = copy_array<std::uint32_t>(x);
      } else if (f.type == AF_INET6 && x.type == IFLA_INET6_FLAGS) {
        IFCORE_TRY(set_field(m.inet6_flags, x.u32()));
      } else if (f.type == AF_INET6 && x.type == IFLA_INET6_CACHEINFO) {
        m.inet6_cacheinfo = copy_stats<ifla_cacheinfo>(x);
      } else if (f.type == AF_INET6 && x.type == IFLA_INET6_CONF) {
        m.inet6_conf = copy_array<std::int32_t>(x);
      } else if (f.type == AF_INET6 &&
                 (x.type == IFLA_INET6_STATS || x.type == IFLA_INET6_ICMP6STATS)) {
        (x.type == IFLA_INET6_STATS ? m.inet6_stats : m.inet6_icmp6stats) =
            copy_array<std::uint64_t>(x);
      } else if (f.type == AF_INET6 && x.type == IFLA_INET6_TOKEN && x.data.size() == 16) {
        std::array<std::uint8_t, 16> t{};
        std::memcpy(t.data(), x.data.data(), 16);
        m.inet6_token = t;
      } else if (f.type == AF_INET6 && x.type == IFLA_INET6_ADDR_GEN_MODE) {
        IFCORE_TRY(set_field(m.inet6_addr_gen_mode, x.u8()));
      }
    }
  }
  return ok();
}

Result<void> decode_attr(const RawAttr& a, LinkMessage& m, const DecodeContext& ctx) {
  switch (a.type) {
    case IFLA_IFNAME:
      m.name = a.as_string();
      return ok();
    case IFLA_TXQLEN: {
      auto v = a.u32();
      if (!v) return fail(v.error());
      m.txqlen = *v;
      return ok();
    }
    case IFLA_OPERSTATE:
      return set_field(m.operstate, a.u8());
    case IFLA_LINKMODE:
      return set_field(m.link_mode, a.u8());
    case IFLA_MTU:
      return set_field(m.mtu, a.u32());
    case IFLA_MIN_MTU:
      return set_field(m.min_mtu, a.u32());
    case IFLA_MAX_MTU:
      return set_field(m.max_mtu, a.u32());
    case IFLA_GROUP:
      return set_field(m.group, a.u32());
    case IFLA_PROMISCUITY:
      return set_field(m.promiscuity, a.u32());
    case IFLA_ALLMULTI:
      return set_field(m.allmulti, a.u32());
    case IFLA_NUM_TX_QUEUES:
      return set_field(m.num_tx_queues, a.u32());
    case IFLA_GSO_MAX_SEGS:
      return set_field(m.gso_max_segs, a.u32());
    case IFLA_GSO_MAX_SIZE:
      return set_field(m.gso_max_size, a.u32());
    case IFLA_GRO_MAX_SIZE:
      return set_field(m.gro_max_size, a.u32());
    case IFLA_NUM_RX_QUEUES:
      return set_field(m.num_rx_queues, a.u32());
    case IFLA_TSO_MAX_SIZE:
      return set_field(m.tso_max_size, a.u32());
    case IFLA_TSO_MAX_SEGS:
      return set_field(m.tso_max_segs, a.u32());
    case kIflaGsoIpv4MaxSize:
      return set_field(m.gso_ipv4_max_size, a.u32());
    case kIflaGroIpv4MaxSize:
      return set_field(m.gro_ipv4_max_size, a.u32());
    case kIflaMaxPacingOffloadHorizon:
      return set_field(m.max_pacing_offload_horizon, a.u32());
    case kIflaNetnsImmutable:
      return set_field(m.netns_immutable, a.u8());
    case kIflaHeadroom:
      return set_field(m.headroom, a.u16());
    case kIflaTailroom:
      return set_field(m.tailroom, a.u16());
    case IFLA_XDP:
      m.xdp = true;
      return ok();
    case IFLA_MAP:
      m.ifmap = copy_stats<rtnl_link_ifmap>(a);
      return ok();
    case IFLA_MASTER:
      return set_field(m.master, a.u32());
    case IFLA_CARRIER:
      return set_field(m.carrier, a.u8());
    case IFLA_IFALIAS:
      m.ifalias = a.as_string();
      return ok();
    case IFLA_CARRIER_CHANGES:
      return set_field(m.carrier_changes, a.u32());
    case IFLA_CARRIER_UP_COUNT:
      return set_field(m.carrier_up_count, a.u32());
    case IFLA_CARRIER_DOWN_COUNT:
      return set_field(m.carrier_down_count, a.u32());
    case IFLA_PROTO_DOWN:
      return set_field(m.proto_down, a.u8());
    case IFLA_PROTO_DOWN_REASON: {
      auto inner = parse_nested(a);
      if (!inner) return fail(inner.error());
      if (const RawAttr* v = find_raw(*inner, IFLA_PROTO_DOWN_REASON_VALUE))
        return set_field(m.proto_down_reason, v->u32());
      return ok();
    }
    case IFLA_EVENT:
      return set_field(m.event, a.u32());
    case IFLA_ADDRESS:
      m.address = HwAddr(a.data);
      return ok();
    case IFLA_BROADCAST:
      m.broadcast = HwAddr(a.data);
      return ok();
    case IFLA_PERM_ADDRESS:
      m.perm_address = HwAddr(a.data);
      return ok();
    case IFLA_STATS64:
      m.stats64 = copy_stats<rtnl_link_stats64>(a);
      return ok();
    case IFLA_STATS:
      m.stats = copy_stats<rtnl_link_stats>(a);
      return ok();
    case IFLA_LINKINFO:
      return decode_linkinfo(a, m, ctx);
    case IFLA_LINK_NETNSID:
      return set_field(m.link_netnsid, a.s32());
    case IFLA_LINK:
      return set_field(m.link, a.u32());
    case IFLA_QDISC:
      m.qdisc = a.as_string();
      return ok();
    case IFLA_AF_SPEC:
      return decode_af_spec(a, m);
    case IFLA_PROP_LIST: {
      auto props = parse_nested(a);
      if (!props) return fail(props.error());
      for (const RawAttr& p : *props)
        if (p.type == IFLA_ALT_IFNAME) m.alt_names.push_back(p.as_string());
      return ok();
    }
    default:
      return ok();  // a newer kernel's attribute: skipped
  }
}

}  // namespace

Result<LinkMessage> decode_link_message(const Message& msg, const DecodeContext& ctx) {
  auto p = msg.payload();
  auto ifi = read_struct<ifinfomsg>(p, "ifinfomsg");
  if (!ifi) return fail(ifi.error());
  LinkMessage m;
  m.family = ifi->ifi_family;
  m.hw_type = ifi->ifi_type;
  m.ifindex = ifi->ifi_index;
  m.flags = ifi->ifi_flags;
  m.change = ifi->ifi_change;
  std::size_t start = std::min<std::size_t>(NLMSG_ALIGN(sizeof(ifinfomsg)), p.size());
  auto attrs = parse_raw_attrs(p.subspan(start), static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& a : *attrs) IFCORE_TRY(decode_attr(a, m, ctx));
  return m;
}

}  // namespace ifcore::wire
