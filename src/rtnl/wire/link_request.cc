// rtnl/wire/link_request.cc — RTM_NEWLINK/SETLINK/DELLINK/GETLINK requests <-> values.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>

#include "rtnl/wire/field.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

constexpr std::size_t kIfinfoLen = NLMSG_ALIGN(sizeof(ifinfomsg));

// Linux: IFALIASZ and ALTIFNAMSIZ from <linux/if.h>.
constexpr std::size_t kMaxAlias = IFALIASZ - 1;
constexpr std::size_t kMaxAltName = ALTIFNAMSIZ - 1;

// Read-only or meaningless-on-input IFLA_* types a client may send back: ignored, as Linux
// ignores them in rtnl_setlink / rtnl_newlink.
// Linux: ifla_policy's NLA_REJECT: attributes a request may not carry.
bool rejected_on_input(std::uint16_t t) {
  switch (t) {
    case IFLA_PERM_ADDRESS:
    case IFLA_TSO_MAX_SIZE:
    case IFLA_TSO_MAX_SEGS:
    case IFLA_ALLMULTI:
    case kIflaNetnsImmutable:
    case kIflaHeadroom:
    case kIflaTailroom:
      return true;
    default:
      return false;
  }
}

bool ignored_on_input(std::uint16_t t) {
  switch (t) {
    case IFLA_UNSPEC:
    case IFLA_PAD:
    case IFLA_EXT_MASK:
    case IFLA_STATS:
    case IFLA_STATS64:
    case IFLA_QDISC:
    case IFLA_MIN_MTU:
    case IFLA_MAX_MTU:
    case IFLA_PROMISCUITY:
    case IFLA_CARRIER_CHANGES:
    case IFLA_CARRIER_UP_COUNT:
    case IFLA_CARRIER_DOWN_COUNT:
    case IFLA_COST:
    case IFLA_PRIORITY:
    case IFLA_WIRELESS:
    case IFLA_PROTINFO:
    case IFLA_EVENT:
    case IFLA_XDP:
    case IFLA_PARENT_DEV_NAME:
    case IFLA_PARENT_DEV_BUS_NAME:
    case IFLA_PROP_LIST:  // Linux: only rtnl_linkprop reads it; NEWLINK/SETLINK ignore it
    // Linux: in ifla_policy, read by nobody on a request.
    case IFLA_WEIGHT:
    case IFLA_NUM_VF:
    case IFLA_PHYS_PORT_ID:
    case IFLA_PHYS_SWITCH_ID:
    case IFLA_PHYS_PORT_NAME:
    case IFLA_NEW_NETNSID:
    case kIflaDevlinkPort:
    case IFCORE_IFLA_BULK:
      return true;
    default:
      return false;
  }
}

// A string attribute into its field, built in place.
Result<void> set_string(std::optional<std::string>& field, const RawAttr& a,
                        std::size_t max_len = 0) {
  auto v = a.string_view(max_len);
  if (!v) return fail(v.error());
  field.emplace(*v);
  return ok();
}

Result<void> decode_af_spec(const RawAttr& a, LinkRequest& req) {
  auto fams = parse_nested(a);
  if (!fams) return fail(fams.error());
  for (const RawAttr& f : *fams) {
    if (f.type != AF_INET6) {
      if (f.type == AF_INET)
        return fail_at(f.offset, EOPNOTSUPP, "IFLA_AF_SPEC family AF_INET not supported");
      return fail_at(f.offset, EAFNOSUPPORT, "IFLA_AF_SPEC family {} not supported", f.type);
    }
    auto inner = parse_nested(f);
    if (!inner) return fail(inner.error());
    bool any = false;
    for (const RawAttr& x : *inner) {
      if (x.type == IFLA_INET6_ADDR_GEN_MODE) {
        IFCORE_TRY(set_field(req.inet6_addr_gen_mode, x.u8()));
        any = true;
      } else if (x.type == IFLA_INET6_TOKEN) {
        // Linux: inet6_af_policy, { .len = sizeof(struct in6_addr) }: at least 16 bytes.
        if (x.data.size() < 16) return fail_policy(x.offset, ErrorPolicy{});
        std::array<std::uint8_t, 16> t{};
        std::memcpy(t.data(), x.data.data(), 16);
        req.inet6_token = t;
        any = true;
      }
      // Linux (inet6_validate_link_af) ignores other types.
    }
    if (!any) return fail_at(f.offset, EINVAL, "AF_INET6 link attributes carry nothing to change");
  }
  return ok();
}

// Linux: nla_validate_int_range's refusal of a value outside an NLA_POLICY_MIN: ERANGE
// "integer out of range" at the attribute, with the range as the policy.
tl::unexpected<Error> out_of_range(const RawAttr& a, ErrorPolicy range) {
  Error e{ERANGE, "integer out of range", a.offset};
  e.policy = range;
  return tl::unexpected<Error>(std::move(e));
}

// Linux: ifla_policy's NLA_POLICY_MIN(NLA_U32, MAX_TCP_HEADER + 1) for the gso sizes.
Result<void> decode_gso_size(const RawAttr& a, std::optional<std::uint32_t>& out) {
  constexpr std::uint32_t kMinGsoSize = 193;  // Linux (x86-64): MAX_TCP_HEADER + 1
  auto v = a.u32();
  if (!v) return fail(v.error());
  if (*v < kMinGsoSize)
    return out_of_range(a, {.type = NL_ATTR_TYPE_U32,
                            .has_range = true,
                            .min_value = kMinGsoSize,
                            .max_value = std::numeric_limits<std::uint32_t>::max()});
  out = *v;
  return ok();
}

// Linux: do_set_proto_down's lenient parse (two NLA_U32s, other types ignored, no message
// for a short one); without a value, "Invalid protodown reason value".
Result<void> decode_proto_down_reason(const RawAttr& a, LinkRequest& req) {
  std::optional<std::uint32_t> mask, value;
  auto walked = walk_linux(a.data, a.offset + NLA_HDRLEN, [&](const RawAttr& x) -> Result<void> {
    if (x.type != IFLA_PROTO_DOWN_REASON_MASK && x.type != IFLA_PROTO_DOWN_REASON_VALUE)
      return ok();
    if (x.data.size() < 4)
      return fail_log_only(ERANGE, "protodown reason attribute {} is short", x.type);
    std::uint32_t v;
    std::memcpy(&v, x.data.data(), 4);
    (x.type == IFLA_PROTO_DOWN_REASON_MASK ? mask : value) = v;
    return ok();
  });
  if (!walked) return fail(walked.error());
  if (!value) return fail(EINVAL, "Invalid protodown reason value");
  req.proto_down_reason = LinkRequest::ProtoDownReason{mask.value_or(0), *value};
  return ok();
}

Result<void> decode_link_info(const RawAttr& a, DecodedLink& out, const DecodeContext& ctx) {
  auto raw = walk_nested(a);
  if (!raw) return fail(raw.error());
  LinkRequest& req = out.req;
  std::optional<RawAttr> data, slave;
  for (const RawAttr x : *raw) {
    switch (x.type) {
      case IFLA_INFO_KIND:
        IFCORE_TRY(set_string(req.kind, x));
        break;
      case IFLA_INFO_SLAVE_KIND:
        IFCORE_TRY(set_string(req.slave_kind, x));
        break;
      case IFLA_INFO_DATA:
        data = x;
        break;
      case IFLA_INFO_SLAVE_DATA:
        slave = x;
        break;
      case IFLA_INFO_XSTATS:
        break;  // read-only
      default:
        return fail_at(x.offset, EINVAL, "unknown attribute type {}", x.type);
    }
  }
  // The raw bytes are kept only when they stay undecoded (see DecodedLink).
  auto decode_data = [&](const std::optional<RawAttr>& d, const std::optional<std::string>& kind,
                         bool is_slave, AttrList& list, std::vector<std::uint8_t>& raw_out,
                         int& off, bool& decoded) -> Result<void> {
    if (!d) return ok();
    off = d->offset + NLA_HDRLEN;
    std::optional<AttrPolicy> policy;
    if (kind && ctx.kind_policy) policy = ctx.kind_policy(*kind, is_slave);
    if (!policy) {
      raw_out.assign(d->data.begin(), d->data.end());
      return ok();
    }
    DecodeContext inner = ctx;  // made only here: it copies the policy's function
    ++inner.depth;
    auto v = decode_attrs(d->data, *policy, off, inner);
    if (!v) return fail(v.error());
    list = std::move(*v);
    decoded = true;
    return ok();
  };
  req.has_info_data = data.has_value();
  req.has_slave_data = slave.has_value();
  IFCORE_TRY(decode_data(data, req.kind, false, req.info_data, out.info_data_raw,
                         out.info_data_offset, out.info_data_decoded));
  IFCORE_TRY(decode_data(slave, req.slave_kind, true, req.slave_data, out.slave_data_raw,
                         out.slave_data_offset, out.slave_data_decoded));
  return ok();
}

Result<void> decode_one(const RawAttr& a, DecodedLink& out, const DecodeContext& ctx) {
  LinkRequest& r = out.req;
  switch (a.type) {
    case IFLA_IFNAME:
      return set_string(r.name, a, IFNAMSIZ - 1);
    case IFLA_ALT_IFNAME:
      return set_string(r.alt_name, a, kMaxAltName);
    case IFLA_MTU:
      return set_field(r.mtu, a.u32());
    case IFLA_ADDRESS:
    case IFLA_BROADCAST: {
      auto v = a.binary(0, HwAddr::kMaxLen);
      if (!v) return fail(v.error());
      (a.type == IFLA_ADDRESS ? r.address : r.broadcast) = HwAddr(*v);
      return ok();
    }
    case IFLA_TXQLEN:
      return set_field(r.txqlen, a.u32());
    case IFLA_GROUP:
      return set_field(r.group, a.u32());
    case IFLA_MASTER:
      return set_field(r.master, a.u32());
    case IFLA_LINK:
      return set_field(r.link, a.u32());
    case IFLA_LINK_NETNSID:
      return set_field(r.link_netnsid, a.s32());
    case IFLA_TARGET_NETNSID:
      return set_field(r.net_ns_id, a.s32());
    case IFLA_NET_NS_FD:
      return set_field(r.net_ns_fd, a.u32());
    case IFLA_NET_NS_PID:
      return set_field(r.net_ns_pid, a.u32());
    case IFCORE_IFLA_NET_NS_NAME:
      return set_string(r.net_ns_name, a, NAME_MAX);
    case IFCORE_IFLA_NET_NS_ERRNO: {
      // Linux: rtnl_link_get_net's error, without a message.
      auto e = a.u32();
      if (!e) return fail(e.error());
      return fail_log_only(static_cast<int>(*e), "the namespace reference does not resolve");
    }
    case IFLA_OPERSTATE:
      return set_field(r.operstate, a.u8());
    case IFLA_LINKMODE:
      return set_field(r.link_mode, a.u8());
    case IFLA_IFALIAS: {
      // `ip link set DEV alias ""` sends an empty payload to clear the alias.
      std::string s = a.as_string();
      // Linux: ifla_policy's NLA_STRING of IFALIASZ - 1 bytes (validate_nla).
      if (s.size() > kMaxAlias)
        return fail_policy(a.offset, {.type = NL_ATTR_TYPE_STRING,
                                      .max_length = static_cast<std::uint32_t>(kMaxAlias)});
      r.ifalias = std::move(s);
      return ok();
    }
    case IFLA_NUM_TX_QUEUES:
      return set_field(r.num_tx_queues, a.u32());
    case IFLA_NUM_RX_QUEUES:
      return set_field(r.num_rx_queues, a.u32());
    case IFLA_GSO_MAX_SIZE:
      return decode_gso_size(a, r.gso_max_size);
    case IFLA_GSO_MAX_SEGS:
      return set_field(r.gso_max_segs, a.u32());
    case IFLA_GRO_MAX_SIZE:
      return set_field(r.gro_max_size, a.u32());
    case kIflaGsoIpv4MaxSize:
      return decode_gso_size(a, r.gso_ipv4_max_size);
    case kIflaGroIpv4MaxSize:
      return set_field(r.gro_ipv4_max_size, a.u32());
    case IFLA_NEW_IFINDEX: {
      // Linux: NLA_POLICY_MIN(NLA_S32, 1).
      auto v = a.s32();
      if (v && *v < 1)
        return out_of_range(
            a, {.type = NL_ATTR_TYPE_S32,
                .has_range = true,
                .is_signed = true,
                .min_value = 1,
                .max_value = static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())});
      return set_field(r.new_ifindex, v);
    }
    case IFLA_CARRIER:
      return set_field(r.carrier, a.u8());
    case IFLA_PROTO_DOWN:
      return set_field(r.proto_down, a.u8());
    case IFLA_PROTO_DOWN_REASON:
      return decode_proto_down_reason(a, r);
    case IFLA_VFINFO_LIST: {
      // Linux: NLA_NESTED; do_setlink walks it, an entry of another type is EINVAL.
      auto inner = parse_nested(a);
      if (!inner) return fail(inner.error());
      for (const RawAttr& x : *inner) {
        if (x.type != IFLA_VF_INFO)
          return fail_at(x.offset, EINVAL, "IFLA_VFINFO_LIST entry {}", x.type);
        out.driver_ops = true;
      }
      return ok();
    }
    case IFLA_AF_SPEC:
      return decode_af_spec(a, r);
    case IFLA_LINKINFO:
      return decode_link_info(a, out, ctx);
    case IFLA_MAP:
      // Linux: a struct rtnl_link_ifmap at least (policy .len), then ndo_set_config.
      if (a.data.size() < sizeof(rtnl_link_ifmap))
        return fail_at(a.offset, ERANGE, "{}", kPolicyFailed);
      out.driver_ops = true;
      return ok();
    case IFLA_VF_PORTS:
    case IFLA_PORT_SELF:
      out.driver_ops = true;
      return ok();
    default:
      if (ignored_on_input(a.type)) return ok();
      // Linux: ifla_policy's NLA_REJECT entries.
      if (rejected_on_input(a.type)) return fail_at(a.offset, EINVAL, "{}", kPolicyFailed);
      // Types from IFLA_MIN_MTU on are validated strictly: one with no policy is refused.
      if (a.type == kIflaDpllPin || a.type == kIflaMaxPacingOffloadHorizon)
        return fail_at(a.offset, EINVAL, "Unsupported attribute");
      // Linux 6.18's IFLA_MAX is 69; a type above it is not looked at.
      if (a.type > kIflaTailroom && a.type < IFCORE_IFLA_BASE) return ok();
      if (a.type <= kIflaTailroom)
        return fail_at(a.offset, EOPNOTSUPP, "attribute type {} not supported", a.type);
      return fail_at(a.offset, EINVAL, "unknown attribute type {}", a.type);
  }
}

}  // namespace

Result<void> decode_link_body_into(std::span<const std::uint8_t> body, int base_offset,
                                   const DecodeContext& ctx, DecodedLink& out) {
  if (ctx.depth >= kMaxNestDepth)
    return fail_at(base_offset, EINVAL, "attribute nesting deeper than {}", kMaxNestDepth);
  auto ifi = read_struct<ifinfomsg>(body, "ifinfomsg");
  if (!ifi) return fail(ifi.error());
  LinkRequest& r = out.req;
  r.family = ifi->ifi_family;
  r.hw_type = ifi->ifi_type;
  r.ifindex = ifi->ifi_index;
  r.flags = ifi->ifi_flags;
  r.change = ifi->ifi_change;
  std::size_t start = std::min(kIfinfoLen, body.size());
  auto attrs = walk_attrs(body.subspan(start), base_offset + static_cast<int>(start));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr a : *attrs) IFCORE_TRY(decode_one(a, out, ctx));
  return ok();
}

Result<DecodedLink> decode_link_body(std::span<const std::uint8_t> body, int base_offset,
                                     const DecodeContext& ctx) {
  // Built in place in the result, which is the only object returned (so that it is not
  // moved out): a DecodedLink is large, and moving it costs.
  Result<DecodedLink> res{tl::in_place};
  if (auto r = decode_link_body_into(body, base_offset, ctx, *res); !r)
    res = fail(std::move(r).error());
  return res;
}

Result<DecodedLink> decode_link_request(const Message& m, const DecodeContext& ctx) {
  // Linux: __nlmsg_parse refuses a message shorter than its family header in these words.
  if (m.payload().size() < sizeof(ifinfomsg)) return fail(EINVAL, "Invalid header length");
  return decode_link_body(m.payload(), NLMSG_HDRLEN, ctx);
}

Result<void> encode_link_body(MessageBuilder& b, const LinkRequest& r, int depth) {
  ifinfomsg ifi{};
  ifi.ifi_family = r.family;
  ifi.ifi_type = r.hw_type;
  ifi.ifi_index = r.ifindex;
  ifi.ifi_flags = r.flags;
  ifi.ifi_change = r.change;
  b.put_struct(ifi);
  if (r.name) b.put_string(IFLA_IFNAME, *r.name);
  if (r.alt_name) b.put_string(IFLA_ALT_IFNAME, *r.alt_name);
  if (r.txqlen) b.put_u32(IFLA_TXQLEN, *r.txqlen);
  if (r.operstate) b.put_u8(IFLA_OPERSTATE, *r.operstate);
  if (r.link_mode) b.put_u8(IFLA_LINKMODE, *r.link_mode);
  if (r.mtu) b.put_u32(IFLA_MTU, *r.mtu);
  if (r.group) b.put_u32(IFLA_GROUP, *r.group);
  if (r.num_tx_queues) b.put_u32(IFLA_NUM_TX_QUEUES, *r.num_tx_queues);
  if (r.gso_max_segs) b.put_u32(IFLA_GSO_MAX_SEGS, *r.gso_max_segs);
  if (r.gso_max_size) b.put_u32(IFLA_GSO_MAX_SIZE, *r.gso_max_size);
  if (r.gro_max_size) b.put_u32(IFLA_GRO_MAX_SIZE, *r.gro_max_size);
  if (r.gso_ipv4_max_size) b.put_u32(kIflaGsoIpv4MaxSize, *r.gso_ipv4_max_size);
  if (r.gro_ipv4_max_size) b.put_u32(kIflaGroIpv4MaxSize, *r.gro_ipv4_max_size);
  if (r.num_rx_queues) b.put_u32(IFLA_NUM_RX_QUEUES, *r.num_rx_queues);
  if (r.master) b.put_u32(IFLA_MASTER, *r.master);
  if (r.carrier) b.put_u8(IFLA_CARRIER, *r.carrier);
  if (r.ifalias) b.put_string(IFLA_IFALIAS, *r.ifalias);
  if (r.proto_down) b.put_u8(IFLA_PROTO_DOWN, *r.proto_down);

  if (r.proto_down_reason) {
    auto n = b.begin_nest(IFLA_PROTO_DOWN_REASON);
    b.put_u32(IFLA_PROTO_DOWN_REASON_MASK, r.proto_down_reason->mask);
    b.put_u32(IFLA_PROTO_DOWN_REASON_VALUE, r.proto_down_reason->value);
    b.end_nest(n);
  }
  if (r.address) b.put_bytes(IFLA_ADDRESS, r.address->bytes());
  if (r.broadcast) b.put_bytes(IFLA_BROADCAST, r.broadcast->bytes());
  if (r.link) b.put_u32(IFLA_LINK, *r.link);
  if (r.link_netnsid) b.put_s32(IFLA_LINK_NETNSID, *r.link_netnsid);
  if (r.net_ns_id) b.put_s32(IFLA_TARGET_NETNSID, *r.net_ns_id);
  if (r.net_ns_fd) b.put_u32(IFLA_NET_NS_FD, *r.net_ns_fd);
  if (r.net_ns_pid) b.put_u32(IFLA_NET_NS_PID, *r.net_ns_pid);
  if (r.net_ns_name) b.put_string(IFCORE_IFLA_NET_NS_NAME, *r.net_ns_name);
  if (r.new_ifindex) b.put_s32(IFLA_NEW_IFINDEX, *r.new_ifindex);
  if (r.kind || r.slave_kind || r.has_info_data || r.has_slave_data) {
    auto info = b.begin_nest(IFLA_LINKINFO);
    if (r.kind) b.put_string(IFLA_INFO_KIND, *r.kind);
    if (r.has_info_data) {
      auto d = b.begin_nest(IFLA_INFO_DATA);
      IFCORE_TRY(encode_attrs(b, r.info_data, depth + 1));
      b.end_nest(d);
    }
    if (r.slave_kind) b.put_string(IFLA_INFO_SLAVE_KIND, *r.slave_kind);
    if (r.has_slave_data) {
      auto d = b.begin_nest(IFLA_INFO_SLAVE_DATA);
      IFCORE_TRY(encode_attrs(b, r.slave_data, depth + 1));
      b.end_nest(d);
    }
    b.end_nest(info);
  }
  if (r.inet6_addr_gen_mode || r.inet6_token) {
    auto af = b.begin_nest(IFLA_AF_SPEC);
    auto in6 = b.begin_nest(AF_INET6);
    if (r.inet6_token) b.put_attr(IFLA_INET6_TOKEN, r.inet6_token->data(), 16);
    if (r.inet6_addr_gen_mode) b.put_u8(IFLA_INET6_ADDR_GEN_MODE, *r.inet6_addr_gen_mode);
    b.end_nest(in6);
    b.end_nest(af);
  }
  return ok();
}

Result<void> encode_link_request(MessageBuilder& b, const Header& h, const LinkRequest& req) {
  b.begin(h);
  auto r = encode_link_body(b, req);
  if (!r) {
    b.cancel();
    return r;
  }
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

Result<GetLinkRequest> decode_getlink(const Message& m) {
  GetLinkRequest g;
  g.dump = m.is_dump();
  auto p = m.payload();
  if (p.size() < sizeof(ifinfomsg)) {
    if (g.dump) return g;  // struct rtgenmsg from an old client
    return fail(EINVAL, "ifinfomsg payload too short ({} bytes, need {})", p.size(),
                sizeof(ifinfomsg));
  }
  ifinfomsg ifi;
  std::memcpy(&ifi, p.data(), sizeof(ifi));
  g.ifindex = ifi.ifi_index;
  auto attrs = parse_raw_attrs(p.subspan(kIfinfoLen), static_cast<int>(NLMSG_HDRLEN + kIfinfoLen));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& a : *attrs) {
    switch (a.type) {
      case IFLA_IFNAME:
        IFCORE_TRY(set_string(g.name, a, IFNAMSIZ - 1));
        break;
      case IFLA_ALT_IFNAME:
        IFCORE_TRY(set_string(g.alt_name, a, kMaxAltName));
        break;
      case IFLA_EXT_MASK: {
        auto v = a.u32();
        if (!v) return fail(v.error());
        g.ext_mask = *v;
        break;
      }
      case IFLA_MASTER:
        IFCORE_TRY(set_field(g.filter_master, a.u32()));
        break;
      case IFLA_TARGET_NETNSID:
        IFCORE_TRY(set_field(g.target_netnsid, a.s32()));
        break;
      case IFLA_LINKINFO: {
        auto inner = parse_nested(a);
        if (!inner) return fail(inner.error());
        if (const RawAttr* k = find_raw(*inner, IFLA_INFO_KIND))
          IFCORE_TRY(set_field(g.filter_kind, k->string()));
        break;
      }
      default:
        break;  // Linux parses GETLINK leniently
    }
  }
  return g;
}

Result<void> encode_getlink(MessageBuilder& b, const Header& h, const GetLinkRequest& req) {
  Header hh = h;
  if (req.dump) hh.flags |= NLM_F_DUMP;
  b.begin(hh);
  ifinfomsg ifi{};
  ifi.ifi_index = req.ifindex;
  b.put_struct(ifi);
  if (req.name) b.put_string(IFLA_IFNAME, *req.name);
  if (req.alt_name) b.put_string(IFLA_ALT_IFNAME, *req.alt_name);
  if (req.ext_mask) b.put_u32(IFLA_EXT_MASK, req.ext_mask);
  if (req.filter_master) b.put_u32(IFLA_MASTER, *req.filter_master);
  if (req.target_netnsid) b.put_s32(IFLA_TARGET_NETNSID, *req.target_netnsid);
  if (req.filter_kind) {
    auto n = b.begin_nest(IFLA_LINKINFO);
    b.put_string(IFLA_INFO_KIND, *req.filter_kind);
    b.end_nest(n);
  }
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

}  // namespace ifcore::wire
