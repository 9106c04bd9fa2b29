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
#include "rtnl/bridge_port.h"
#include "rtnl/fill.h"
#include "rtnl/handlers.h"
#include "rtnl/hub.h"
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

// Linux: br_fill_ifinfo — for a port of `br` (its settings in IFLA_PROTINFO, which an
// RTM_DELLINK leaves out), or for the bridge itself (`br` == `dev`: when asked for its
// vlans, which ifcore's bridges do not filter by: no IFLA_AF_SPEC). The dump and the
// announcements (BridgePortPublisher) both send this.
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
  if (&dev != &br && h.type == RTM_NEWLINK) {
    std::size_t nest = b.begin_nest(IFLA_PROTINFO | NLA_F_NESTED);
    IFCORE_TRY(wire::encode_attrs(b, br.kind().fill_slave_info(br, dev)));
    b.end_nest(nest);
  }
  auto done = b.end();
  if (!done) return fail(done.error());
  return ok();
}

// The IFLA_BRIDGE_FLAGS of IFLA_AF_SPEC (none: 0), as rtnl_bridge_setlink reads them (the
// first, and a short IFLA_BRIDGE_MODE refused; rtnl_bridge_dellink looks at the flags
// alone).
Result<std::uint16_t> bridge_flags(const wire::RawAttr* af_spec, bool check_mode) {
  if (!af_spec) return std::uint16_t{0};
  auto inner = wire::parse_nested(*af_spec);
  if (!inner) return fail(inner.error());
  std::optional<std::uint16_t> flags;
  for (const wire::RawAttr& a : *inner) {
    bool checked = a.type == IFLA_BRIDGE_FLAGS ? !flags : check_mode && a.type == IFLA_BRIDGE_MODE;
    if (checked && a.data.size() < 2)
      return fail_log_only(EINVAL, "IFLA_AF_SPEC: attribute {} is too short", a.type);
    if (a.type == IFLA_BRIDGE_FLAGS && !flags) {
      std::uint16_t v;
      std::memcpy(&v, a.data.data(), sizeof(v));
      flags = v;
    }
  }
  return flags.value_or(0);
}

constexpr std::uint16_t kVidMask = 0xfff;  // Linux: VLAN_VID_MASK

// The checks of br_afspec and br_process_vlan_info (RTM_SETLINK with the extack's
// messages, RTM_DELLINK without any), on a bridge that filters by no vlan: ifcore's
// bridges keep no vlan entries, as Linux without CONFIG_BRIDGE_VLAN_FILTERING (this kernel
// too), so an entry to add is EOPNOTSUPP and one to delete is gone already. `vlan_tunnel`:
// the port's IFLA_BRPORT_VLAN_TUNNEL (false for the bridge itself).
class BridgeAfSpec {
 public:
  BridgeAfSpec(bool set, bool is_port, bool vlan_tunnel)
      : set_(set), is_port_(is_port), vlan_tunnel_(vlan_tunnel) {}

  Result<void> check(const wire::RawAttr& af_spec) {
    auto inner = wire::parse_nested(af_spec);
    if (!inner) return fail(inner.error());
    for (const wire::RawAttr& a : *inner) {
      switch (a.type) {
        case IFLA_BRIDGE_VLAN_TUNNEL_INFO:
          IFCORE_TRY(tunnel_info(a));
          break;
        case IFLA_BRIDGE_VLAN_INFO:
          IFCORE_TRY(vlan_info(a));
          break;
        case kIflaBridgeMst:
          // Linux: the MST checks before br_mst_process, which needs vlan filtering.
          if (!is_port_) return invalid_always("MST states can only be set on bridge ports");
          if (!set_) return fail_log_only(EINVAL, "MST states can only be set by RTM_SETLINK");
          [[fallthrough]];
        case IFLA_BRIDGE_MRP:
        case IFLA_BRIDGE_CFM:
          return fail_log_only(EOPNOTSUPP, "bridge: attribute {} is not supported", a.type);
        default:
          break;
      }
    }
    return ok();
  }

 private:
  static constexpr std::uint16_t kIflaBridgeMst = 6;  // Linux 5.18: IFLA_BRIDGE_MST

  // EINVAL with br_process_vlan_info's message (the module's "bridge: " prefix), which
  // br_dellink's request does not carry.
  tl::unexpected<Error> invalid(std::string_view why) const {
    if (set_) return fail(EINVAL, "bridge: {}", why);
    return fail_log_only(EINVAL, "bridge: {}", why);
  }
  // The same with br_afspec's own message (no prefix).
  tl::unexpected<Error> invalid_always(std::string_view why) const {
    if (set_) return fail(EINVAL, "{}", why);
    return fail_log_only(EINVAL, "{}", why);
  }
  // Linux: br_vlan_valid_range.
  Result<void> valid_range(const bridge_vlan_info& cur) const {
    if (cur.flags & BRIDGE_VLAN_INFO_PVID) return invalid("Pvid isn't allowed in a range");
    if (last_) {
      if (cur.flags & BRIDGE_VLAN_INFO_RANGE_BEGIN)
        return invalid("Found a new vlan range start while processing one");
      if (!(cur.flags & BRIDGE_VLAN_INFO_RANGE_END))
        return invalid("Vlan range end flag is missing");
      if (cur.vid <= last_->vid)
        return invalid("End vlan id is less than or equal to start vlan id");
    }
    if (!(cur.flags & (BRIDGE_VLAN_INFO_RANGE_BEGIN | BRIDGE_VLAN_INFO_RANGE_END)))
      return invalid("Both vlan range flags are missing");
    return ok();
  }
  Result<void> vlan_info(const wire::RawAttr& a) {
    if (a.data.size() != sizeof(bridge_vlan_info))
      return fail_log_only(EINVAL, "bridge: IFLA_BRIDGE_VLAN_INFO of {} bytes", a.data.size());
    bridge_vlan_info cur;
    std::memcpy(&cur, a.data.data(), sizeof(cur));
    if (!cur.vid || cur.vid >= kVidMask) return invalid("Vlan id is invalid");
    if (cur.flags & BRIDGE_VLAN_INFO_RANGE_BEGIN) {
      IFCORE_TRY(valid_range(cur));
      last_ = cur;
      return ok();
    }
    if (last_) {
      IFCORE_TRY(valid_range(cur));
      last_.reset();
    }
    return apply();
  }
  // Linux: br_parse_vlan_tunnel_info and br_process_vlan_tunnel_info's checks, then
  // nothing to change (no vlan is filtered).
  Result<void> tunnel_info(const wire::RawAttr& a) {
    if (!is_port_ || !vlan_tunnel_)
      return fail_log_only(EINVAL, "bridge: the device does not map vlans to tunnels");
    auto inner = wire::parse_nested(a);
    if (!inner) return fail(inner.error());
    std::optional<std::uint32_t> id;
    std::optional<std::uint16_t> vid;
    std::uint16_t flags = 0;
    // Linux: nla_parse_nested_deprecated without an extack: a short value is ERANGE alone.
    auto read = [](const wire::RawAttr& x, auto& out) -> Result<void> {
      if (x.data.size() < sizeof(out))
        return fail_log_only(ERANGE, "bridge: vlan tunnel attribute {} is short", x.type);
      std::memcpy(&out, x.data.data(), sizeof(out));
      return ok();
    };
    for (const wire::RawAttr& x : *inner) {
      if (x.type == IFLA_BRIDGE_VLAN_TUNNEL_ID) IFCORE_TRY(read(x, id.emplace()));
      if (x.type == IFLA_BRIDGE_VLAN_TUNNEL_VID) IFCORE_TRY(read(x, vid.emplace()));
      if (x.type == IFLA_BRIDGE_VLAN_TUNNEL_FLAGS) IFCORE_TRY(read(x, flags));
    }
    if (!id || !vid) return fail_log_only(EINVAL, "bridge: a vlan tunnel needs an id and a vid");
    if (*vid >= kVidMask) return fail_log_only(ERANGE, "bridge: vlan tunnel vid {}", *vid);
    if (flags & BRIDGE_VLAN_INFO_RANGE_BEGIN) {
      if (tunnel_last_) return fail_log_only(EINVAL, "bridge: a second vlan tunnel range start");
      tunnel_last_ = std::pair{*vid, *id};
      return ok();
    }
    if (tunnel_last_) {
      auto [first_vid, first_id] = *tunnel_last_;
      tunnel_last_.reset();
      if (!(flags & BRIDGE_VLAN_INFO_RANGE_END) || *vid <= first_vid ||
          std::uint32_t(*vid - first_vid) != *id - first_id)
        return fail_log_only(EINVAL, "bridge: an invalid vlan tunnel range");
    }
    return ok();
  }
  Result<void> apply() const {
    if (set_) return fail_log_only(EOPNOTSUPP, "bridge: vlans are not filtered");
    return ok();
  }

  bool set_, is_port_, vlan_tunnel_;
  std::optional<bridge_vlan_info> last_;
  std::optional<std::pair<std::uint16_t, std::uint32_t>> tunnel_last_;
};

// A port's IFLA_BRPORT_VLAN_TUNNEL.
bool maps_vlans_to_tunnels(const Device& br, const Device& port) {
  return attr_num(br.kind().fill_slave_info(br, port), IFLA_BRPORT_VLAN_TUNNEL).value_or(0) != 0;
}

// The request's ifinfomsg, its IFLA_PROTINFO and IFLA_AF_SPEC (the first of each, as
// nlmsg_find_attr finds them), and its device.
struct BridgeRequest {
  ifinfomsg ifi{};
  std::vector<wire::RawAttr> attrs;
  const wire::RawAttr* protinfo = nullptr;
  const wire::RawAttr* af_spec = nullptr;
};

Result<BridgeRequest> read_bridge_request(Request& r) {
  auto p = r.m.payload();
  if (p.size() < sizeof(ifinfomsg)) return fail_log_only(EINVAL, "ifinfomsg payload too short");
  BridgeRequest q;
  std::memcpy(&q.ifi, p.data(), sizeof(q.ifi));
  const int base = static_cast<int>(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg)));
  auto attrs = wire::parse_raw_attrs(p.subspan(NLMSG_ALIGN(sizeof(ifinfomsg))), base);
  if (!attrs) return fail(attrs.error());
  q.attrs = std::move(*attrs);
  for (const wire::RawAttr& a : q.attrs) {
    if (a.type == IFLA_PROTINFO && !q.protinfo) q.protinfo = &a;
    if (a.type == IFLA_AF_SPEC && !q.af_spec) q.af_spec = &a;
  }
  return q;
}

// Linux: br_setlink for a port (its IFLA_PROTINFO settings, then IFLA_AF_SPEC) or for the
// bridge itself (IFLA_AF_SPEC alone). The vlans are checked first: ifcore changes nothing
// when a part fails, where Linux keeps the port settings it applied before.
Result<void> bridge_setlink(Hub& hub, Control& ctl, const BridgeRequest& q, Device& dev,
                            Device& br) {
  if (!q.protinfo && !q.af_spec) return ok();
  const bool is_port = &dev != &br;
  if (!is_port && !q.af_spec) return fail_log_only(EINVAL, "bridge: nothing to set on a bridge");
  if (q.af_spec)
    IFCORE_TRY(
        BridgeAfSpec(true, is_port, is_port && maps_vlans_to_tunnels(br, dev)).check(*q.af_spec));
  // Nested, the port's IFLA_BRPORT_* settings; flat, a u8 port state (the old RSTP
  // daemons' form).
  if (!is_port || !q.protinfo) return ok();
  LinkRequest req;
  req.ifindex = dev.ifindex();
  req.has_slave_data = true;
  if (q.protinfo->nested_flag) {
    auto data = wire::decode_attrs(q.protinfo->data, br.kind().slave_policy(),
                                   q.protinfo->offset + NLA_HDRLEN, decode_context(ctl));
    if (!data) return fail(data.error());
    req.slave_data = std::move(*data);
  } else {
    if (q.protinfo->data.empty()) return fail_log_only(EINVAL, "IFLA_PROTINFO is empty");
    req.slave_data.push_back(Attr::u8(IFLA_BRPORT_STATE, q.protinfo->data[0]));
  }
  // Linux: br_setlink announces the port it changed (once, and with no RTM_NEWLINK of
  // family AF_UNSPEC nor netdev_state_change: the tap alone is given that, for what is
  // kept).
  bool state_changed = false;  // not acted on
  IFCORE_TRY(ctl.change_link(dev, req, &state_changed));
  bridge_port::announce(ctl, br, dev);
  hub.record_link(ctl, dev);
  return ok();
}

// Linux: br_dellink — vlans to delete (nothing else), for a port or the bridge itself.
Result<void> bridge_dellink(const BridgeRequest& q, Device& dev, Device& br) {
  if (!q.af_spec) return ok();
  const bool is_port = &dev != &br;
  return BridgeAfSpec(false, is_port, is_port && maps_vlans_to_tunnels(br, dev)).check(*q.af_spec);
}

// rtnl_bridge_setlink and rtnl_bridge_dellink: the device's master when IFLA_BRIDGE_FLAGS
// is absent or has BRIDGE_FLAGS_MASTER, then the device itself for BRIDGE_FLAGS_SELF (a
// bridge; no other kind of ifcore's has ndo_bridge_setlink); flags with neither are
// EOPNOTSUPP.
template <class Op>
Result<void> bridge_master_then_self(Request& r, bool set, Op&& op) {
  auto q = read_bridge_request(r);
  if (!q) return fail(q.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  Device* dev = ctl.find(**ns, q->ifi.ifi_index);
  if (!dev) return fail(ENODEV, "unknown ifindex");
  auto flags = bridge_flags(q->af_spec, set);
  if (!flags) return fail(flags.error());
  bool done = false;
  if (!*flags || (*flags & BRIDGE_FLAGS_MASTER)) {
    Device* br = dev->master();
    if (!br || !is_bridge(*br))
      return fail_log_only(EOPNOTSUPP, "device \"{}\" is not a bridge port", dev->name());
    IFCORE_TRY(op(ctl, *q, *dev, *br));
    done = true;
  }
  if (*flags & BRIDGE_FLAGS_SELF) {
    if (!is_bridge(*dev))
      return fail_log_only(EOPNOTSUPP, "device \"{}\" takes no bridge settings of its own",
                           dev->name());
    IFCORE_TRY(op(ctl, *q, *dev, *dev));
    done = true;
  }
  if (!done) return fail_log_only(EOPNOTSUPP, "IFLA_BRIDGE_FLAGS {:#x} ask nobody", *flags);
  return ok();
}

}  // namespace

void BridgePortPublisher::on_port(Control&, const Device& br, const Device& port, bool deleted) {
  // Linux: br_info_notify — rtnl_notify on RTNLGRP_LINK with no request header: seq and port
  // id 0, sent to every member (the requester too).
  const int ns_id = port.ns().id();
  if (!hub_.wanted(ns_id, RTNLGRP_LINK, /*echoable=*/false)) return;
  const wire::Header h{static_cast<std::uint16_t>(deleted ? RTM_DELLINK : RTM_NEWLINK), 0, 0, 0};
  wire::MessageBuilder b;
  if (auto e = encode_bridge_link(b, h, port, br); !e) {
    hub_.engine().log(LogLevel::Warning,
                      fmt::format("rtnl: cannot encode the bridge port \"{}\": {}", port.name(),
                                  e.error().message));
    return;
  }
  hub_.publish(ns_id, RTNLGRP_LINK, b.bytes(), /*echoable=*/false, /*tapped=*/false);
}

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
  Hub& hub = r.s.hub();
  return bridge_master_then_self(
      r, true, [&hub](Control& ctl, const BridgeRequest& q, Device& dev, Device& br) {
        return bridge_setlink(hub, ctl, q, dev, br);
      });
}

Result<void> handle_bridge_dellink(Request& r) {
  return bridge_master_then_self(r, false,
                                 [](Control&, const BridgeRequest& q, Device& dev, Device& br) {
                                   return bridge_dellink(q, dev, br);
                                 });
}

}  // namespace ifcore::rtnl
