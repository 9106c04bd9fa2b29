// rtnl/wire/mdb.cc — br_port_msg + MDBA_* <-> values.
#include "rtnl/wire/mdb.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

constexpr std::uint16_t kVlanVidMask = 0x0fff;  // Linux: VLAN_VID_MASK (a kernel header)

std::uint16_t proto_of(const br_mdb_entry& e) {
  return ntohs(e.addr.proto);
}

// Linux: rtnl_validate_mdb_entry_common — the group address of each protocol.
Result<void> check_group(const br_mdb_entry& e, int offset) {
  switch (proto_of(e)) {
    case ETH_P_IP: {
      std::uint32_t a = ntohl(e.addr.u.ip4);
      if ((a >> 28) != 0xe && a != 0)
        return fail_at(offset, EINVAL, "IPv4 entry group address is not multicast or 0.0.0.0");
      if ((a & 0xffffff00) == 0xe0000000)
        return fail_at(offset, EINVAL, "IPv4 entry group address is local multicast");
      return ok();
    }
    case ETH_P_IPV6: {
      static const std::uint8_t all_nodes[16] = {0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
      if (std::memcmp(&e.addr.u.ip6, all_nodes, 16) == 0)
        return fail_at(offset, EINVAL, "IPv6 entry group address is link-local all nodes");
      return ok();
    }
    case 0:
      if (!(e.addr.u.mac_addr[0] & 1))
        return fail_at(offset, EINVAL, "L2 entry group is not multicast");
      return ok();
    default:
      return fail_at(offset, EINVAL, "Unknown entry protocol");
  }
}

// Linux: rtnl_validate_mdb_entry (get: rtnl_validate_mdb_entry_get).
Result<void> check_entry(const RawAttr& a, bool get, br_mdb_entry* out) {
  if (a.data.size() != sizeof(br_mdb_entry)) {
    if (a.data.size() > sizeof(br_mdb_entry))  // Linux: NLA_BINARY's maximum length
      return fail_policy(a.offset, ErrorPolicy{NL_ATTR_TYPE_BINARY, sizeof(br_mdb_entry)});
    return fail_at(a.offset, EINVAL, "Invalid attribute length");
  }
  br_mdb_entry e;
  std::memcpy(&e, a.data.data(), sizeof(e));
  if (get) {
    if (e.ifindex) return fail_at(a.offset, EINVAL, "Entry ifindex cannot be specified");
    if (e.state) return fail_at(a.offset, EINVAL, "Entry state cannot be specified");
    if (e.flags) return fail_at(a.offset, EINVAL, "Entry flags cannot be specified");
    if (e.vid >= kVlanVidMask) return fail_at(a.offset, EINVAL, "Invalid entry VLAN id");
    IFCORE_TRY(check_group(e, a.offset));
  } else {
    if (e.ifindex == 0) return fail_at(a.offset, EINVAL, "Zero entry ifindex is not allowed");
    IFCORE_TRY(check_group(e, a.offset));
    if (e.state != MDB_PERMANENT && e.state != MDB_TEMPORARY)
      return fail_at(a.offset, EINVAL, "Unknown entry state");
    if (e.vid >= kVlanVidMask) return fail_at(a.offset, EINVAL, "Invalid entry VLAN id");
  }
  *out = e;
  return ok();
}

// Linux: br_mdbe_attrs_pol and is_valid_mdb_source.
Result<void> decode_entry_attrs(const RawAttr& nest, MdbRequest& r) {
  auto attrs = parse_nested(nest);
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& x : *attrs) {
    switch (x.type) {
      case MDBE_ATTR_SOURCE: {
        if (x.data.size() < 4 || x.data.size() > 16)
          return fail_policy(x.offset, ErrorPolicy{NL_ATTR_TYPE_BINARY, 16});
        r.source.emplace(x.data.begin(), x.data.end());
        break;
      }
      case kMdbeAttrRtprot: {
        auto v = x.u8();
        if (!v) return fail(v.error());
        if (*v < RTPROT_STATIC)
          return fail_policy(x.offset, ErrorPolicy{.type = NL_ATTR_TYPE_U8,
                                                   .has_range = true,
                                                   .min_value = RTPROT_STATIC,
                                                   .max_value = 255});
        r.rtprot = *v;
        break;
      }
      case kMdbeAttrGroupMode:
        r.has_group_mode = true;
        break;
      case kMdbeAttrSrcList:
        r.has_src_list = true;
        break;
      default:
        break;
    }
  }
  return ok();
}

// Linux: is_valid_mdb_source.
Result<void> check_source(const MdbRequest& r) {
  const auto& s = *r.source;
  switch (proto_of(r.entry)) {
    case ETH_P_IP:
      if (s.size() != 4) return fail(EINVAL, "bridge: IPv4 invalid source address length");
      if ((s[0] >> 4) == 0xe)
        return fail(EINVAL, "bridge: IPv4 multicast source address is not allowed");
      return ok();
    case ETH_P_IPV6:
      if (s.size() != 16) return fail(EINVAL, "bridge: IPv6 invalid source address length");
      if (s[0] == 0xff) return fail(EINVAL, "bridge: IPv6 multicast source address is not allowed");
      return ok();
    default:
      return fail(EINVAL, "bridge: Invalid protocol used with source address");
  }
}

}  // namespace

Result<MdbRequest> decode_mdb_request(const Message& m, bool get) {
  MdbRequest r;
  auto p = m.payload();
  if (p.size() < sizeof(br_port_msg))
    return fail(EINVAL, "br_port_msg payload too short ({} bytes, need {})", p.size(),
                sizeof(br_port_msg));
  br_port_msg bpm;
  std::memcpy(&bpm, p.data(), sizeof(bpm));
  r.bridge = static_cast<std::int32_t>(bpm.ifindex);
  constexpr std::size_t start = NLMSG_ALIGN(sizeof(br_port_msg));
  auto attrs =
      parse_raw_attrs(p.subspan(std::min(start, p.size())), static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return fail(attrs.error());
  const std::uint16_t entry_type = get ? kMdbaGetEntry : std::uint16_t{MDBA_SET_ENTRY};
  const std::uint16_t attrs_type = get ? kMdbaGetEntryAttrs : std::uint16_t{MDBA_SET_ENTRY_ATTRS};
  for (const RawAttr& x : *attrs) {
    if (x.type == entry_type) {
      IFCORE_TRY(check_entry(x, get, &r.entry));
      r.has_entry = true;
    }
  }
  // Linux: the entry attributes are read once the device is known (br_mdb_config_attrs_init,
  // br_mdb_get_parse); their source checked against the entry's protocol.
  if (const RawAttr* a = find_raw(*attrs, attrs_type)) {
    IFCORE_TRY(decode_entry_attrs(*a, r));
    if (r.source && r.has_entry) IFCORE_TRY(check_source(r));
  }
  return r;
}

mdb::Group mdb_group(const MdbRequest& r) {
  mdb::Group g;
  g.proto = proto_of(r.entry);
  g.vid = r.entry.vid;
  switch (g.proto) {
    case ETH_P_IP:
      std::memcpy(g.dst.data(), &r.entry.addr.u.ip4, 4);
      break;
    case ETH_P_IPV6:
      std::memcpy(g.dst.data(), &r.entry.addr.u.ip6, 16);
      break;
    default:
      std::memcpy(g.dst.data(), r.entry.addr.u.mac_addr, 6);
      break;
  }
  if (r.source && (g.proto == ETH_P_IP || g.proto == ETH_P_IPV6))
    std::copy(r.source->begin(), r.source->end(), g.src.begin());
  return g;
}

namespace {

// An MDB message's header and its struct br_port_msg (the bridge's ifindex).
void begin_port_msg(MessageBuilder& b, const Header& h, std::uint8_t family, int bridge) {
  b.begin(h);
  br_port_msg bpm{};
  bpm.family = family;
  bpm.ifindex = static_cast<std::uint32_t>(bridge);
  b.put_struct(bpm);
}

}  // namespace

Result<void> encode_mdb(MessageBuilder& b, const Header& h, std::uint8_t family, int bridge,
                        const std::vector<std::vector<mdb::Entry>>& groups,
                        const std::vector<mdb::Router>& routers) {
  begin_port_msg(b, h, family, bridge);
  auto table = b.begin_nest(MDBA_MDB);
  for (const auto& row : groups) {
    auto group = b.begin_nest(MDBA_MDB_ENTRY);
    for (const mdb::Entry& e : row) {
      auto info = b.begin_nest(MDBA_MDB_ENTRY_INFO);
      br_mdb_entry x{};
      x.ifindex = static_cast<std::uint32_t>(e.ifindex);
      x.state = e.state;
      x.flags = e.flags;
      x.vid = e.group.vid;
      x.addr.proto = htons(e.group.proto);
      const bool v4 = e.group.proto == ETH_P_IP, v6 = e.group.proto == ETH_P_IPV6;
      std::memcpy(&x.addr.u, e.group.dst.data(), v4 ? 4 : v6 ? 16 : 6);
      b.put_raw(&x, sizeof(x));  // Linux: nla_put_nohdr
      b.put_u32(MDBA_MDB_EATTR_TIMER, e.timer);
      if ((v4 || v6) && e.group.has_source())
        b.put_attr(MDBA_MDB_EATTR_SOURCE, e.group.src.data(), v4 ? 4 : 16);
      if (e.rtprot) b.put_u8(MDBA_MDB_EATTR_RTPROT, *e.rtprot);
      b.end_nest(info);
    }
    b.end_nest(group);
  }
  b.end_nest(table);
  if (!routers.empty()) {
    auto list = b.begin_nest(MDBA_ROUTER);
    for (const mdb::Router& x : routers) {
      auto port = b.begin_nest(MDBA_ROUTER_PORT);
      auto ifindex = static_cast<std::uint32_t>(x.ifindex);
      b.put_raw(&ifindex, sizeof(ifindex));  // Linux: nla_put_nohdr
      b.put_u32(MDBA_ROUTER_PATTR_TIMER, 0);
      b.put_u8(MDBA_ROUTER_PATTR_TYPE, x.type);
      b.put_u32(MDBA_ROUTER_PATTR_INET_TIMER, 0);
      b.put_u32(MDBA_ROUTER_PATTR_INET6_TIMER, 0);
      b.end_nest(port);
    }
    b.end_nest(list);
  }
  auto r = b.end();
  if (!r) return fail(r.error());
  return ok();
}

Result<void> encode_mdb_router(MessageBuilder& b, const Header& h, int bridge, int port) {
  begin_port_msg(b, h, AF_BRIDGE, bridge);
  auto list = b.begin_nest(MDBA_ROUTER);
  auto nest = b.begin_nest(MDBA_ROUTER_PORT);
  auto ifindex = static_cast<std::uint32_t>(port);
  b.put_raw(&ifindex, sizeof(ifindex));
  b.end_nest(nest);
  b.end_nest(list);
  auto r = b.end();
  if (!r) return fail(r.error());
  return ok();
}

}  // namespace ifcore::wire
