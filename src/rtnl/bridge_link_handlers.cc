// rtnl/bridge_link_handlers.cc — RTM_GETLINK dumps and RTM_SETLINK of family AF_BRIDGE,
// what `bridge link` speaks (Linux: rtnl_bridge_getlink and rtnl_bridge_setlink, with the
// bridge's br_getlink / br_setlink): a bridge port as its bridge reports it, IFLA_PROTINFO
// holding the port's settings (the attributes of its IFLA_INFO_SLAVE_DATA), and those
// settings changed through the same path as `ip link set PORT type bridge_slave ...`.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstring>

#include "ifcore/namespace.h"
#include "rtnl/fill.h"
#include "rtnl/handlers.h"
#include "rtnl/wire/attrs.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl {

namespace {

// Linux: valid_bridge_getlink_req — the header and IFLA_EXT_MASK alone for a strict
// request; the filter mask it carries.
Result<std::uint32_t> bridge_dump_mask(Request& r) {
  auto p = r.m.payload();
  const bool strict = r.s.strict_check();
  if (p.size() < sizeof(ifinfomsg)) {
    if (strict) return fail(EINVAL, "Invalid header for bridge link dump");
    return fail_log_only(EINVAL, "bridge link dump: ifinfomsg payload too short");
  }
  ifinfomsg ifi;
  std::memcpy(&ifi, p.data(), sizeof(ifi));
  if (strict && (ifi.__ifi_pad || ifi.ifi_type || ifi.ifi_flags || ifi.ifi_change || ifi.ifi_index))
    return fail(EINVAL, "Invalid values in header for bridge link dump request");
  auto attrs =
      wire::parse_raw_attrs(p.subspan(NLMSG_ALIGN(sizeof(ifinfomsg))),
                            static_cast<int>(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg))));
  if (!attrs) return fail(attrs.error());
  std::uint32_t mask = 0;
  for (const wire::RawAttr& a : *attrs) {
    if (a.type == IFLA_EXT_MASK) {
      auto v = a.u32();
      if (!v) return fail(v.error());
      mask = *v;
    } else if (strict) {
      return fail(EINVAL, "Unsupported attribute in bridge link dump request");
    }
  }
  return mask;
}

// Linux: br_fill_ifinfo — for a port of `br` (its settings in IFLA_PROTINFO), or for the
// bridge itself (`br` == `dev`: when asked for its vlans, which ifcore's bridges do not
// filter by: no IFLA_AF_SPEC).
Result<void> encode_bridge_link(wire::MessageBuilder& b, const wire::Header& h, const Device& dev,
                                const Device& br) {
  const wire::LinkMessage m = link_message(dev, 0, 0);
  wire::begin_ifinfo(b, h, AF_BRIDGE, m);
  b.put_string(IFLA_IFNAME, m.name);
  b.put_u32(IFLA_MASTER, static_cast<std::uint32_t>(br.ifindex()));
  if (m.mtu) b.put_u32(IFLA_MTU, *m.mtu);
  if (m.operstate) b.put_u8(IFLA_OPERSTATE, *m.operstate);
  if (m.address) b.put_bytes(IFLA_ADDRESS, m.address->bytes());
  if (m.link && static_cast<std::int32_t>(*m.link) != m.ifindex) b.put_u32(IFLA_LINK, *m.link);
  if (&dev != &br) {
    std::size_t nest = b.begin_nest(IFLA_PROTINFO | NLA_F_NESTED);
    IFCORE_TRY(wire::encode_attrs(b, br.kind().fill_slave_info(br, dev)));
    b.end_nest(nest);
  }
  auto done = b.end();
  if (!done) return fail(done.error());
  return ok();
}

// The IFLA_BRIDGE_FLAGS of IFLA_AF_SPEC (0: none), as rtnl_bridge_setlink reads them.
Result<std::uint16_t> bridge_flags(const wire::RawAttr* af_spec) {
  if (!af_spec) return std::uint16_t{0};
  auto inner = wire::parse_nested(*af_spec);
  if (!inner) return fail(inner.error());
  std::optional<std::uint16_t> flags;
  for (const wire::RawAttr& a : *inner) {
    if ((a.type == IFLA_BRIDGE_FLAGS || a.type == IFLA_BRIDGE_MODE) && a.data.size() < 2)
      return fail_log_only(EINVAL, "IFLA_AF_SPEC: attribute {} is too short", a.type);
    if (a.type == IFLA_BRIDGE_FLAGS && !flags) {
      std::uint16_t v;
      std::memcpy(&v, a.data.data(), sizeof(v));
      flags = v;
    }
  }
  return flags.value_or(0);
}

}  // namespace

Result<void> handle_bridge_getlink(Request& r) {
  auto mask = bridge_dump_mask(r);
  if (!mask) {
    end_dump_error(r, mask.error());
    return fail(mask.error());
  }
  const bool bridges_too = *mask & (RTEXT_FILTER_BRVLAN | RTEXT_FILTER_BRVLAN_COMPRESSED |
                                    RTEXT_FILTER_MRP | RTEXT_FILTER_CFM_STATUS);
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  const wire::Header h{RTM_NEWLINK, NLM_F_MULTI, r.seq(), r.port()};
  for (Device* dev = (*ns)->next_by_index_rcu(0); dev;
       dev = (*ns)->next_by_index_rcu(dev->ifindex())) {
    const Device* master = dev->master();
    Result<void> e = ok();
    if (master && is_bridge(*master)) {
      e = emit(r.out,
               [&](wire::MessageBuilder& b) { return encode_bridge_link(b, h, *dev, *master); });
    } else if (bridges_too && is_bridge(*dev)) {
      e = emit(r.out,
               [&](wire::MessageBuilder& b) { return encode_bridge_link(b, h, *dev, *dev); });
    }
    if (!e) {
      end_dump(r, -e.error().code);
      return e;
    }
  }
  end_dump(r);
  return ok();
}

Result<void> handle_bridge_setlink(Request& r) {
  auto p = r.m.payload();
  if (p.size() < sizeof(ifinfomsg)) return fail_log_only(EINVAL, "ifinfomsg payload too short");
  ifinfomsg ifi;
  std::memcpy(&ifi, p.data(), sizeof(ifi));
  const int base = static_cast<int>(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg)));
  auto attrs = wire::parse_raw_attrs(p.subspan(NLMSG_ALIGN(sizeof(ifinfomsg))), base);
  if (!attrs) return fail(attrs.error());
  const wire::RawAttr* protinfo = nullptr;
  const wire::RawAttr* af_spec = nullptr;
  for (const wire::RawAttr& a : *attrs) {
    if (a.type == IFLA_PROTINFO && !protinfo) protinfo = &a;
    if (a.type == IFLA_AF_SPEC && !af_spec) af_spec = &a;
  }
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  Device* dev = ctl.find(**ns, ifi.ifi_index);
  if (!dev) return fail(ENODEV, "unknown ifindex");
  auto flags = bridge_flags(af_spec);
  if (!flags) return fail(flags.error());
  // BRIDGE_FLAGS_SELF asks the device itself (hardware bridging, a bridge's own vlans):
  // nothing ifcore's kinds take.
  if (*flags & ~std::uint16_t{BRIDGE_FLAGS_MASTER})
    return fail_log_only(EOPNOTSUPP, "device \"{}\" takes no bridge settings of its own",
                         dev->name());
  Device* br = dev->master();
  if (!br || !is_bridge(*br))
    return fail_log_only(EOPNOTSUPP, "device \"{}\" is not a bridge port", dev->name());
  // Linux: br_setlink — nothing to do without IFLA_PROTINFO (IFLA_AF_SPEC holds vlans,
  // which ifcore's bridges do not filter by); nested, the port's IFLA_BRPORT_* settings;
  // flat, a u8 port state (the old RSTP daemons' form).
  if (!protinfo) return ok();
  LinkRequest req;
  req.ifindex = dev->ifindex();
  req.has_slave_data = true;
  if (protinfo->nested_flag) {
    auto data = wire::decode_attrs(protinfo->data, br->kind().slave_policy(),
                                   protinfo->offset + NLA_HDRLEN, decode_context(ctl));
    if (!data) return fail(data.error());
    req.slave_data = std::move(*data);
  } else {
    if (protinfo->data.empty()) return fail_log_only(EINVAL, "IFLA_PROTINFO is empty");
    req.slave_data.push_back(Attr::u8(IFLA_BRPORT_STATE, protinfo->data[0]));
  }
  return ctl.change_link(*dev, req);
}

}  // namespace ifcore::rtnl
