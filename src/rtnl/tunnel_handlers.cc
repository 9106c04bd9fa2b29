// rtnl/tunnel_handlers.cc — the vxlan devices' VNI filters: RTM_NEWTUNNEL / RTM_DELTUNNEL
// (Linux: vxlan_vnifilter_process) and the RTM_GETTUNNEL dump (vxlan_vnifilter_dump,
// vxlan_vnifilter_dump_dev: consecutive VNIs of one remote as one range, unless counters are
// asked for), registered for PF_BRIDGE, on top of ifcore/vnifilter.h, and their
// RTNLGRP_TUNNEL notifications (vxlan_vnifilter_notify).
//
// Lock order: each handler takes the control lock once.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/hub.h"
#include "rtnl/mdb.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl {

namespace {

tunnel_msg header_of(const Request& r) {
  tunnel_msg tm{};
  auto p = r.m.payload();
  std::memcpy(&tm, p.data(), std::min(p.size(), sizeof(tm)));
  return tm;
}

// Linux: vxlan_fill_vni_filter_entry — VXLAN_VNIFILTER_ENTRY_START, _END for a range,
// _GROUP or _GROUP6, and the counters (all zero in ifcore) when asked for. x86's efficient
// unaligned access spares nla_put_u64_64bit its padding attribute.
void put_entry(wire::MessageBuilder& b, std::uint32_t start, std::uint32_t end,
               const IpAddr& remote, bool stats) {
  auto nest = b.begin_nest(VXLAN_VNIFILTER_ENTRY | NLA_F_NESTED);  // Linux: nla_nest_start
  b.put_u32(VXLAN_VNIFILTER_ENTRY_START, start);
  if (end != start) b.put_u32(VXLAN_VNIFILTER_ENTRY_END, end);
  if (!remote.empty()) {
    auto bytes = remote.bytes();
    b.put_attr(remote.is_v6() ? VXLAN_VNIFILTER_ENTRY_GROUP6 : VXLAN_VNIFILTER_ENTRY_GROUP,
               bytes.data(), bytes.size());
  }
  if (stats) {
    auto s = b.begin_nest(VXLAN_VNIFILTER_ENTRY_STATS | NLA_F_NESTED);
    for (std::uint16_t t = VNIFILTER_ENTRY_STATS_RX_BYTES; t <= VNIFILTER_ENTRY_STATS_TX_ERRORS;
         ++t)
      b.put_u64(t, 0);  // Linux: nla_put_u64_64bit; the u64s are aligned here already
    b.end_nest(s);
  }
  b.end_nest(nest);
}

Result<void> encode_vnis(wire::MessageBuilder& b, const wire::Header& h, int ifindex,
                         const std::vector<vnifilter::Vni>& vnis, bool stats) {
  b.begin(h);
  tunnel_msg tm{};
  tm.family = PF_BRIDGE;
  tm.ifindex = static_cast<std::uint32_t>(ifindex);
  b.put_struct(tm);
  for (std::size_t i = 0; i < vnis.size();) {
    std::size_t j = i;
    while (!stats && j + 1 < vnis.size() && vnis[j + 1].vni == vnis[j].vni + 1 &&
           vnis[j + 1].remote == vnis[i].remote)
      ++j;
    put_entry(b, vnis[i].vni, vnis[j].vni, vnis[i].remote, stats);
    i = j + 1;
  }
  auto r = b.end();
  if (!r) return fail(r.error());
  return ok();
}

// One VXLAN_VNIFILTER_ENTRY of a request (Linux: vni_filter_entry_policy).
Result<vnifilter::Range> decode_range(const wire::RawAttr& a) {
  auto attrs = wire::parse_nested(a);
  if (!attrs) return fail(attrs.error());
  vnifilter::Range r;
  bool has_start = false;
  for (const auto& x : *attrs) {
    switch (x.type) {
      case VXLAN_VNIFILTER_ENTRY_START:
      case VXLAN_VNIFILTER_ENTRY_END: {
        auto v = x.u32();
        if (!v) return fail(v.error());
        if (x.type == VXLAN_VNIFILTER_ENTRY_START) {
          r.start = *v;
          has_start = true;
        } else {
          r.end = *v;
        }
        break;
      }
      case VXLAN_VNIFILTER_ENTRY_GROUP:
      case VXLAN_VNIFILTER_ENTRY_GROUP6: {
        const bool v6 = x.type == VXLAN_VNIFILTER_ENTRY_GROUP6;
        if (x.data.size() > (v6 ? 16u : 4u))
          return wire::fail_policy(x.offset, ErrorPolicy{NL_ATTR_TYPE_BINARY, v6 ? 16u : 4u});
        std::array<std::uint8_t, 16> buf{};
        std::copy(x.data.begin(), x.data.end(), buf.begin());
        // Linux: _GROUP wins over _GROUP6.
        if (!v6)
          r.group = IpAddr::v4((std::uint32_t(buf[0]) << 24) | (std::uint32_t(buf[1]) << 16) |
                               (std::uint32_t(buf[2]) << 8) | buf[3]);
        else if (r.group.empty() || r.group.is_v6())
          r.group = IpAddr::v6(buf);
        break;
      }
      default:
        break;
    }
  }
  // Linux: the end defaults to the start; an end alone counts from 0.
  if (has_start && !std::any_of(attrs->begin(), attrs->end(), [](const wire::RawAttr& x) {
        return x.type == VXLAN_VNIFILTER_ENTRY_END;
      }))
    r.end = r.start;
  return r;
}

}  // namespace

void VniPublisher::on_vni(Namespace& ns, int ifindex, bool added, const vnifilter::Vni& v) {
  if (!hub_.wanted(ns.id(), RTNLGRP_TUNNEL)) return;
  wire::Header h = hub_.notify_header(ns.id(), added ? RTM_NEWTUNNEL : RTM_DELTUNNEL);
  wire::MessageBuilder b;
  if (!encode_vnis(b, h, ifindex, {v}, false)) return;
  // Linux: vxlan_vnifilter_notify's tunnel_msg is of family AF_BRIDGE too.
  hub_.publish(ns.id(), RTNLGRP_TUNNEL, b.bytes());
}

Result<void> handle_changetunnel(Request& r) {
  const tunnel_msg tm = header_of(r);
  auto p = r.m.payload();
  constexpr std::size_t start = NLMSG_ALIGN(sizeof(tunnel_msg));
  auto attrs = wire::parse_raw_attrs(p.subspan(std::min(start, p.size())),
                                     static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return fail(attrs.error());
  std::vector<vnifilter::Range> ranges;
  for (const auto& a : *attrs) {
    if (a.type != VXLAN_VNIFILTER_ENTRY) continue;
    auto range = decode_range(a);
    if (!range) return fail(range.error());
    ranges.push_back(*range);
  }
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  return vnifilter::change(ctl, **ns, static_cast<int>(tm.ifindex),
                           r.m.hdr.nlmsg_type == RTM_NEWTUNNEL, ranges);
}

Result<void> handle_gettunnel(Request& r) {
  // Linux: only vxlan registers RTM_GETTUNNEL (PF_BRIDGE), a dump only.
  if (!r.dump()) return fail(EOPNOTSUPP);
  const tunnel_msg tm = header_of(r);
  if (tm.flags & ~TUNNEL_MSG_VALID_USER_FLAGS)
    return fail(EINVAL, "Invalid tunnelmsg flags in ancillary header");
  const bool stats = tm.flags & TUNNEL_MSG_FLAG_STATS;
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  std::vector<std::pair<int, std::vector<vnifilter::Vni>>> rows;
  if (tm.ifindex) {
    auto one = vnifilter::list(ctl, **ns, static_cast<int>(tm.ifindex));
    if (!one) return fail(one.error());
    if (!one->empty()) rows.emplace_back(static_cast<int>(tm.ifindex), std::move(*one));
  } else {
    rows = vnifilter::list_all(ctl, **ns);
  }
  for (const auto& row : rows) {
    auto x = emit(r.out, [&](wire::MessageBuilder& b) {
      return encode_vnis(b, {RTM_NEWTUNNEL, NLM_F_MULTI, r.seq(), r.port()}, row.first, row.second,
                         stats);
    });
    if (!x) {
      end_dump(r, -x.error().code);
      return x;
    }
  }
  end_dump(r);
  return ok();
}

}  // namespace ifcore::rtnl
