// rtnl/wire/rule.cc — fib rule messages (see rule.h).
#include "rtnl/wire/rule.h"

#include <net/if.h>
#include <sys/socket.h>

#include <cstring>

#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

// Linux: fib_nl_newrule replaces the policy's extack with its own text.
Error parse_error(Error e) {
  e.message = "Error parsing msg";
  e.log_only = false;
  return e;
}

template <class T, class V>
Result<void> set(std::optional<T>& field, Result<V> v) {
  if (!v) return fail(v.error());
  field = static_cast<T>(*v);
  return ok();
}

template <class T>
Result<T> exact(const RawAttr& x) {
  if (x.data.size() != sizeof(T)) return fail_policy(x.offset, {});
  T v;
  std::memcpy(&v, x.data.data(), sizeof(T));
  return v;
}

Result<IpAddr> address(const RawAttr& x) {
  if (x.data.size() == 4) return IpAddr::from_bytes(AF_INET, x.data);
  if (x.data.size() == 16) return IpAddr::from_bytes(AF_INET6, x.data);
  return fail(EINVAL, "bad address length {}", x.data.size());
}

Result<void> decode_attrs(const Message& m, RuleMessage& r) {
  constexpr std::size_t start = NLMSG_ALIGN(sizeof(fib_rule_hdr));
  auto attrs = parse_raw_attrs(m.payload().subspan(start), static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& x : *attrs) {
    switch (x.type) {
      case FRA_DST:
      case FRA_SRC: {
        // Linux: FRA_DST/FRA_SRC have no policy; the family checks their size.
        auto a = address(x);
        if (a) (x.type == FRA_DST ? r.dst : r.src) = *a;
        if (!a) (x.type == FRA_DST ? r.dst : r.src) = IpAddr{};  // wrong size: empty
        break;
      }
      case FRA_IIFNAME:
      case FRA_OIFNAME: {
        auto s = x.string(IFNAMSIZ - 1);
        if (!s) return fail(s.error());
        (x.type == FRA_IIFNAME ? r.iifname : r.oifname) = *s;
        break;
      }
      case FRA_GOTO:
        IFCORE_TRY(set(r.goto_target, x.u32()));
        break;
      case FRA_PRIORITY:
        IFCORE_TRY(set(r.priority, x.u32()));
        break;
      case FRA_FWMARK:
        IFCORE_TRY(set(r.fwmark, x.u32()));
        break;
      case FRA_FWMASK:
        IFCORE_TRY(set(r.fwmask, x.u32()));
        break;
      case FRA_FLOW:
        IFCORE_TRY(set(r.flow, x.u32()));
        break;
      case FRA_TUN_ID: {
        auto v = x.u64();
        if (!v) return fail(v.error());
        r.tun_id = __builtin_bswap64(*v);  // be64
        break;
      }
      case FRA_SUPPRESS_IFGROUP:
        IFCORE_TRY(set(r.suppress_ifgroup, x.s32()));
        break;
      case FRA_SUPPRESS_PREFIXLEN:
        IFCORE_TRY(set(r.suppress_prefixlen, x.s32()));
        break;
      case FRA_TABLE:
        IFCORE_TRY(set(r.table_id, x.u32()));
        break;
      case FRA_L3MDEV:
        IFCORE_TRY(set(r.l3mdev, x.u8()));
        break;
      case FRA_UID_RANGE:
        IFCORE_TRY(set(r.uid_range, exact<fib_rule_uid_range>(x)));
        break;
      case FRA_PROTOCOL:
        IFCORE_TRY(set(r.protocol, x.u8()));
        break;
      case FRA_IP_PROTO:
        IFCORE_TRY(set(r.ip_proto, x.u8()));
        break;
      case FRA_SPORT_RANGE:
        IFCORE_TRY(set(r.sport, exact<fib_rule_port_range>(x)));
        break;
      case FRA_DPORT_RANGE:
        IFCORE_TRY(set(r.dport, exact<fib_rule_port_range>(x)));
        break;
      default:
        break;
    }
  }
  return ok();
}

}  // namespace

Result<RuleMessage> decode_rule(const Message& m) {
  RuleMessage r;
  auto p = m.payload();
  if (p.size() < sizeof(fib_rule_hdr)) {
    if (m.is_dump() && !p.empty()) {  // struct rtgenmsg
      r.family = p[0];
      return r;
    }
    return fail(EINVAL, "Invalid msg length");  // Linux: fib_nl_newrule, fib_nl_delrule
  }
  fib_rule_hdr h;
  std::memcpy(&h, p.data(), sizeof(h));
  r.family = h.family;
  r.dst_len = h.dst_len;
  r.src_len = h.src_len;
  r.tos = h.tos;
  r.table = h.table;
  r.action = h.action;
  r.flags = h.flags;
  if (auto e = decode_attrs(m, r); !e) return tl::unexpected(parse_error(e.error()));
  return r;
}

Result<void> encode_rule(MessageBuilder& b, const Header& h, const RuleMessage& r) {
  b.begin(h);
  fib_rule_hdr frh{};
  frh.family = r.family;
  frh.dst_len = r.dst_len;
  frh.src_len = r.src_len;
  frh.tos = r.tos;
  frh.table = r.table;
  frh.action = r.action;
  frh.flags = r.flags;
  b.put_struct(frh);
  if (r.table_id) b.put_u32(FRA_TABLE, *r.table_id);
  if (r.suppress_prefixlen) b.put_s32(FRA_SUPPRESS_PREFIXLEN, *r.suppress_prefixlen);
  if (r.protocol) b.put_u8(FRA_PROTOCOL, *r.protocol);
  if (r.iifname) b.put_string(FRA_IIFNAME, *r.iifname);
  if (r.oifname) b.put_string(FRA_OIFNAME, *r.oifname);
  if (r.priority) b.put_u32(FRA_PRIORITY, *r.priority);
  if (r.fwmark) b.put_u32(FRA_FWMARK, *r.fwmark);
  if (r.fwmask) b.put_u32(FRA_FWMASK, *r.fwmask);
  if (r.goto_target) b.put_u32(FRA_GOTO, *r.goto_target);
  if (r.tun_id) b.put_u64(FRA_TUN_ID, __builtin_bswap64(*r.tun_id));
  if (r.suppress_ifgroup) b.put_s32(FRA_SUPPRESS_IFGROUP, *r.suppress_ifgroup);
  if (r.l3mdev) b.put_u8(FRA_L3MDEV, *r.l3mdev);
  if (r.uid_range) b.put_attr(FRA_UID_RANGE, &*r.uid_range, sizeof(fib_rule_uid_range));
  if (r.sport) b.put_attr(FRA_SPORT_RANGE, &*r.sport, sizeof(fib_rule_port_range));
  if (r.dport) b.put_attr(FRA_DPORT_RANGE, &*r.dport, sizeof(fib_rule_port_range));
  if (r.ip_proto) b.put_u8(FRA_IP_PROTO, *r.ip_proto);
  if (r.dst) b.put_attr(FRA_DST, r.dst->bytes().data(), r.dst->bytes().size());
  if (r.src) b.put_attr(FRA_SRC, r.src->bytes().data(), r.src->bytes().size());
  if (r.flow) b.put_u32(FRA_FLOW, *r.flow);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

}  // namespace ifcore::wire
