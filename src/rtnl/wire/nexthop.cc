// rtnl/wire/nexthop.cc — nexthop messages (see nexthop.h).
#include "rtnl/wire/nexthop.h"

#include <sys/socket.h>

#include <cstring>

#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

// Linux: rtm_nh_policy_* are parsed strictly (nlmsg_parse): a fixed-size attribute of any
// other size is EINVAL "invalid attribute length" (validate_nla, NL_VALIDATE_STRICT_ATTRS).
template <class T>
Result<void> set(std::optional<T>& field, const RawAttr& x) {
  if (x.data.size() != sizeof(T)) return fail_at(x.offset, EINVAL, "invalid attribute length");
  T v;
  std::memcpy(&v, x.data.data(), sizeof(T));
  field = v;
  return ok();
}

Result<void> flag(bool& field, const RawAttr& x) {
  if (!x.data.empty()) return fail_at(x.offset, EINVAL, "invalid attribute length");
  field = true;
  return ok();
}

Result<NexthopResGroup> decode_res_group(const RawAttr& nest) {
  NexthopResGroup g;
  auto attrs = parse_raw_attrs(nest.data, nest.offset + NLA_HDRLEN);
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& x : *attrs) {
    switch (x.type) {
      case NHA_RES_GROUP_BUCKETS:
        IFCORE_TRY(set(g.buckets, x));
        break;
      case NHA_RES_GROUP_IDLE_TIMER:
        IFCORE_TRY(set(g.idle_timer, x));
        break;
      case NHA_RES_GROUP_UNBALANCED_TIMER:
        IFCORE_TRY(set(g.unbalanced_timer, x));
        break;
      case NHA_RES_GROUP_UNBALANCED_TIME:
        IFCORE_TRY(set(g.unbalanced_time, x));
        break;
      default:
        break;
    }
  }
  return g;
}

// The struct nhmsg both requests begin with, into `n`'s header fields.
template <class M>
Result<void> read_nhmsg(std::span<const std::uint8_t> payload, M& n) {
  if (payload.size() < sizeof(nhmsg)) return fail(EINVAL, "Invalid header length");
  nhmsg h;
  std::memcpy(&h, payload.data(), sizeof(h));
  n.family = h.nh_family;
  n.scope = h.nh_scope;
  n.protocol = h.nh_protocol;
  n.resvd = h.resvd;
  n.flags = h.nh_flags;
  return ok();
}

}  // namespace

Result<NexthopMessage> decode_nexthop(const Message& m) {
  NexthopMessage n;
  auto payload = m.payload();
  IFCORE_TRY(read_nhmsg(payload, n));
  constexpr std::size_t start = NLMSG_ALIGN(sizeof(nhmsg));
  if (payload.size() <= start) return n;
  auto attrs = parse_raw_attrs(payload.subspan(start), static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& x : *attrs) {
    if (x.type > NHA_GROUP_TYPE && x.type != NHA_FDB && x.type != NHA_RES_GROUP)
      n.other_attrs = true;
    switch (x.type) {
      case NHA_ID:
        IFCORE_TRY(set(n.id, x));
        break;
      case NHA_GROUP: {
        if (x.data.empty() || x.data.size() % sizeof(nexthop_grp)) {
          n.group_bad_length = true;
          n.group.emplace();
          break;
        }
        std::vector<nexthop_grp> g(x.data.size() / sizeof(nexthop_grp));
        std::memcpy(g.data(), x.data.data(), x.data.size());
        n.group = std::move(g);
        break;
      }
      case NHA_GROUP_TYPE:
        IFCORE_TRY(set(n.group_type, x));
        break;
      case NHA_BLACKHOLE:
        IFCORE_TRY(flag(n.blackhole, x));
        break;
      case NHA_OIF:
        IFCORE_TRY(set(n.oif, x));
        break;
      case NHA_GATEWAY:
        n.gateway_len = x.data.size();
        if (x.data.size() == 4 || x.data.size() == 16)
          if (auto a = IpAddr::from_bytes(x.data.size() == 4 ? AF_INET : AF_INET6, x.data))
            n.gateway = *a;
        break;
      case NHA_ENCAP:
        // Linux: NLA_NESTED, strictly: the flag must be set.
        if (!x.nested_flag) return fail_at(x.offset, EINVAL, "NLA_F_NESTED is missing");
        n.encap = true;
        break;
      case NHA_ENCAP_TYPE:
        n.encap_type = true;
        break;
      case NHA_GROUPS:
        IFCORE_TRY(flag(n.groups, x));
        break;
      case NHA_MASTER:
        IFCORE_TRY(set(n.master, x));
        break;
      case NHA_FDB:
        IFCORE_TRY(flag(n.fdb, x));
        break;
      case NHA_RES_GROUP: {
        auto g = decode_res_group(x);
        if (!g) return fail(g.error());
        n.res_group = *g;
        break;
      }
      case kNhaOpFlags:
        IFCORE_TRY(set(n.op_flags, x));
        break;
      default:
        break;
    }
  }
  return n;
}

Result<void> encode_nexthop(MessageBuilder& b, const Header& h, const NexthopMessage& n) {
  b.begin(h);
  nhmsg hdr{};
  hdr.nh_family = n.family;
  hdr.nh_scope = n.scope;
  hdr.nh_protocol = n.protocol;
  hdr.resvd = n.resvd;
  hdr.nh_flags = n.flags;
  b.put_struct(hdr);
  if (n.id) b.put_u32(NHA_ID, *n.id);
  if (n.fdb) b.put_flag(NHA_FDB);
  if (n.group) {
    b.put_u16(NHA_GROUP_TYPE, n.group_type.value_or(NEXTHOP_GRP_TYPE_MPATH));
    b.put_attr(NHA_GROUP, n.group->data(), n.group->size() * sizeof(nexthop_grp));
    if (n.res_group) {
      std::size_t nest = b.begin_nest(NLA_F_NESTED | NHA_RES_GROUP);
      const NexthopResGroup& g = *n.res_group;
      if (g.buckets) b.put_u16(NHA_RES_GROUP_BUCKETS, *g.buckets);
      if (g.idle_timer) b.put_u32(NHA_RES_GROUP_IDLE_TIMER, *g.idle_timer);
      if (g.unbalanced_timer) b.put_u32(NHA_RES_GROUP_UNBALANCED_TIMER, *g.unbalanced_timer);
      if (g.unbalanced_time) b.put_u64(NHA_RES_GROUP_UNBALANCED_TIME, *g.unbalanced_time);
      b.end_nest(nest);
    }
    if (n.op_flags) b.put_u32(kNhaOpFlags, *n.op_flags);
  } else if (n.blackhole) {
    b.put_flag(NHA_BLACKHOLE);
  } else {
    if (n.oif) b.put_u32(NHA_OIF, *n.oif);
    if (n.gateway) {
      auto bytes = n.gateway->bytes();
      b.put_attr(NHA_GATEWAY, bytes.data(), bytes.size());
    }
  }
  if (n.groups) b.put_flag(NHA_GROUPS);
  if (n.master) b.put_u32(NHA_MASTER, *n.master);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

Result<NexthopBucketMessage> decode_nexthop_bucket(const Message& m) {
  NexthopBucketMessage n;
  auto payload = m.payload();
  IFCORE_TRY(read_nhmsg(payload, n));
  constexpr std::size_t start = NLMSG_ALIGN(sizeof(nhmsg));
  if (payload.size() <= start) return n;
  auto attrs = parse_raw_attrs(payload.subspan(start), static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& x : *attrs) {
    switch (x.type) {
      case NHA_ID:
        IFCORE_TRY(set(n.id, x));
        break;
      case NHA_OIF:
        IFCORE_TRY(set(n.oif, x));
        break;
      case NHA_MASTER:
        IFCORE_TRY(set(n.master, x));
        break;
      case NHA_GROUPS:
        IFCORE_TRY(flag(n.groups, x));
        break;
      case NHA_FDB:
        IFCORE_TRY(flag(n.fdb, x));
        break;
      case NHA_RES_BUCKET: {
        n.bucket = true;
        auto inner = parse_raw_attrs(x.data, x.offset + NLA_HDRLEN);
        if (!inner) return fail(inner.error());
        for (const RawAttr& y : *inner) {
          switch (y.type) {
            case NHA_RES_BUCKET_INDEX:
              IFCORE_TRY(set(n.index, y));
              break;
            case NHA_RES_BUCKET_NH_ID:
              IFCORE_TRY(set(n.nhid, y));
              break;
            case NHA_RES_BUCKET_IDLE_TIME:
              IFCORE_TRY(set(n.idle_time, y));
              break;
            default:
              break;
          }
        }
        break;
      }
      default:
        break;
    }
  }
  return n;
}

Result<void> encode_nexthop_bucket(MessageBuilder& b, const Header& h,
                                   const NexthopBucketMessage& n) {
  b.begin(h);
  nhmsg hdr{};
  hdr.nh_family = n.family;
  hdr.nh_scope = n.scope;
  hdr.nh_protocol = n.protocol;
  hdr.resvd = n.resvd;
  hdr.nh_flags = n.flags;
  b.put_struct(hdr);
  if (n.id) b.put_u32(NHA_ID, *n.id);
  if (n.bucket || n.index || n.nhid || n.idle_time) {
    std::size_t nest = b.begin_nest(NLA_F_NESTED | NHA_RES_BUCKET);
    if (n.index) b.put_u16(NHA_RES_BUCKET_INDEX, *n.index);
    if (n.nhid) b.put_u32(NHA_RES_BUCKET_NH_ID, *n.nhid);
    if (n.idle_time) b.put_u64(NHA_RES_BUCKET_IDLE_TIME, *n.idle_time);
    b.end_nest(nest);
  }
  if (n.oif) b.put_u32(NHA_OIF, *n.oif);
  if (n.master) b.put_u32(NHA_MASTER, *n.master);
  if (n.groups) b.put_flag(NHA_GROUPS);
  if (n.fdb) b.put_flag(NHA_FDB);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

}  // namespace ifcore::wire
