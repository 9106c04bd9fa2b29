// rtnl/wire/neigh.cc — ndmsg + NDA_* <-> NeighMessage.
#include "rtnl/wire/neigh.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

Result<NeighMessage> decode_neigh(const Message& m) {
  NeighMessage n;
  auto p = m.payload();
  if (p.size() < sizeof(ndmsg)) {
    if (m.is_dump() && !p.empty()) {  // struct rtgenmsg
      n.family = p[0];
      return n;
    }
    return fail(EINVAL, "ndmsg payload too short ({} bytes, need {})", p.size(), sizeof(ndmsg));
  }
  ndmsg nd;
  std::memcpy(&nd, p.data(), sizeof(nd));
  n.family = nd.ndm_family;
  n.ifindex = nd.ndm_ifindex;
  n.state = nd.ndm_state;
  n.flags = nd.ndm_flags;
  n.type = nd.ndm_type;
  constexpr std::size_t start = NLMSG_ALIGN(sizeof(ndmsg));
  auto attrs =
      parse_raw_attrs(p.subspan(std::min(start, p.size())), static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& x : *attrs) {
    if (x.type < 64) n.present |= std::uint64_t{1} << x.type;
    switch (x.type) {
      case NDA_DST: {
        if (n.family == AF_BRIDGE) {  // Linux: vxlan_nla_get_addr reads it by its size
          auto ip = IpAddr::from_bytes(x.data.size() == 16 ? AF_INET6 : AF_INET, x.data);
          if ((x.data.size() == 4 || x.data.size() == 16) && ip)
            n.dst = *ip;
          else
            n.dst_bad = true;
          break;
        }
        auto ip = IpAddr::from_bytes(n.family == AF_INET6 ? AF_INET6 : AF_INET, x.data);
        if (!ip || (n.family == AF_INET && x.data.size() != 4) ||
            (n.family == AF_INET6 && x.data.size() != 16))
          return fail_at(x.offset, EINVAL, "Invalid network address");
        n.dst = *ip;
        break;
      }
      case NDA_LLADDR:
        if (x.data.size() > HwAddr::kMaxLen)
          return fail_at(x.offset, EINVAL, "Invalid link address");
        n.lladdr = HwAddr(x.data);
        break;
      case NDA_PROBES: {
        auto v = x.u32();
        if (!v) return fail(v.error());
        n.probes = *v;
        break;
      }
      case NDA_CACHEINFO: {
        if (x.data.size() != sizeof(nda_cacheinfo))
          return fail_at(x.offset, EINVAL, "attribute type {}: invalid length {} (want {})", x.type,
                         x.data.size(), sizeof(nda_cacheinfo));
        nda_cacheinfo ci;
        std::memcpy(&ci, x.data.data(), sizeof(ci));
        n.cacheinfo = ci;
        break;
      }
      case NDA_PROTOCOL: {
        auto v = x.u8();
        if (!v) return fail(v.error());
        n.protocol = *v;
        break;
      }
      case NDA_FLAGS_EXT: {
        auto v = x.u32();
        if (!v) return fail(v.error());
        n.flags_ext = *v;
        break;
      }
      case NDA_IFINDEX: {
        auto v = x.u32();
        if (!v) return fail(v.error());
        n.dump_ifindex = *v;
        break;
      }
      case NDA_MASTER: {
        auto v = x.u32();
        if (!v) return fail(v.error());
        n.master = *v;
        break;
      }
      case NDA_VLAN: {
        auto v = x.u16();
        if (!v) return fail(v.error());
        n.vlan = *v;
        break;
      }
      case NDA_PORT:
        if (x.data.size() == 2) n.port = static_cast<std::uint16_t>(x.data[0] << 8 | x.data[1]);
        break;
      case NDA_VNI:
      case NDA_SRC_VNI:
      case NDA_NH_ID: {
        auto v = x.u32();
        if (!v) return fail(v.error());
        (x.type == NDA_VNI ? n.vni : x.type == NDA_SRC_VNI ? n.src_vni : n.nh_id) = *v;
        break;
      }
      case NDA_NDM_STATE_MASK: {
        auto v = x.u16();
        if (!v) return fail(v.error());
        n.state_mask = *v;
        break;
      }
      case NDA_NDM_FLAGS_MASK: {
        auto v = x.u8();
        if (!v) return fail(v.error());
        n.flags_mask = *v;
        break;
      }
      default:
        if (x.type > NDA_MAX) n.has_unknown = true;
        break;
    }
  }
  return n;
}

namespace {

// The message's start and its struct ndmsg, which neighbours and forwarding entries share.
void begin_ndmsg(MessageBuilder& b, const Header& h, const NeighMessage& n) {
  b.begin(h);
  ndmsg nd{};
  nd.ndm_family = n.family;
  nd.ndm_ifindex = n.ifindex;
  nd.ndm_state = n.state;
  nd.ndm_flags = n.flags;
  nd.ndm_type = n.type;
  b.put_struct(nd);
}

}  // namespace

Result<void> encode_neigh(MessageBuilder& b, const Header& h, const NeighMessage& n) {
  begin_ndmsg(b, h, n);
  if (n.dst) b.put_bytes(NDA_DST, n.dst->bytes());
  if (n.lladdr) b.put_bytes(NDA_LLADDR, n.lladdr->bytes());
  if (n.probes) b.put_u32(NDA_PROBES, *n.probes);
  if (n.cacheinfo) b.put_attr(NDA_CACHEINFO, &*n.cacheinfo, sizeof(nda_cacheinfo));
  if (n.protocol) b.put_u8(NDA_PROTOCOL, *n.protocol);
  if (n.flags_ext) b.put_u32(NDA_FLAGS_EXT, *n.flags_ext);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

Result<void> encode_fdb(MessageBuilder& b, const Header& h, const NeighMessage& n) {
  begin_ndmsg(b, h, n);
  if (n.lladdr) b.put_bytes(NDA_LLADDR, n.lladdr->bytes());
  if (n.dst) b.put_bytes(NDA_DST, n.dst->bytes());
  if (n.master) b.put_u32(NDA_MASTER, *n.master);
  if (n.flags_ext) b.put_u32(NDA_FLAGS_EXT, *n.flags_ext);
  if (n.port) {
    std::uint8_t be[2] = {static_cast<std::uint8_t>(*n.port >> 8),
                          static_cast<std::uint8_t>(*n.port)};
    b.put_attr(NDA_PORT, be, sizeof(be));
  }
  if (n.vni) b.put_u32(NDA_VNI, *n.vni);
  if (n.dump_ifindex) b.put_u32(NDA_IFINDEX, *n.dump_ifindex);
  if (n.src_vni) b.put_u32(NDA_SRC_VNI, *n.src_vni);
  if (n.cacheinfo) b.put_attr(NDA_CACHEINFO, &*n.cacheinfo, sizeof(nda_cacheinfo));
  if (n.vlan) b.put_attr(NDA_VLAN, &*n.vlan, sizeof(std::uint16_t));
  if (n.flags_mask) b.put_u8(NDA_NDM_FLAGS_MASK, *n.flags_mask);
  if (n.state_mask) b.put_attr(NDA_NDM_STATE_MASK, &*n.state_mask, sizeof(std::uint16_t));
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

}  // namespace ifcore::wire
