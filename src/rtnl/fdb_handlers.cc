// rtnl/fdb_handlers.cc — forwarding entries: RTM_NEWNEIGH / RTM_DELNEIGH / RTM_GETNEIGH of
// family AF_BRIDGE (Linux registers rtnl_fdb_add, rtnl_fdb_del, rtnl_fdb_get and
// rtnl_fdb_dump for PF_BRIDGE) on top of ifcore/fdb.h, the groups a device listens to as
// the protocols joined them (what ndo_dflt_fdb_dump lists from dev->mc), and their
// RTNLGRP_NEIGH notifications.
//
// Lock order: each handler takes the control lock once.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ifcore/fdb.h"
#include "ifcore/inet.h"
#include "ifcore/namespace.h"
#include "rtnl/fdb.h"
#include "rtnl/handlers.h"
#include "rtnl/hub.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl {

namespace {

HwAddr mac(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d, std::uint8_t e,
           std::uint8_t f) {
  return HwAddr::ethernet({a, b, c, d, e, f});
}

// The bridge's snooping groups (Linux: br_multicast_open joins 224.0.0.106 and ff02::6a
// while multicast snooping is on).
bool bridge_snoops(const Device& dev) {
  if (dev.kind().name() != "bridge") return false;
  for (const Attr& a : dev.kind().fill_info(dev))
    if (a.type == IFLA_BR_MCAST_SNOOPING) return a.num != 0;
  return false;
}

// Linux's dev->mc of a device as the protocols fill it: ff02::1 from the moment IPv6 has
// the device; once up, the bridge's snooping groups, 224.0.0.1 (ip_mc_up) and the
// solicited-node group of each IPv6 address (link-local first).
std::vector<HwAddr> groups_of(Control& ctl, Namespace& ns, const Device& dev) {
  std::vector<HwAddr> out;
  auto push = [&](const HwAddr& a) {
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  };
  auto c6 = inet::inet6_conf(ctl, ns, dev.ifindex());
  bool v6 = c6 && !c6->disable_ipv6;
  if (v6) push(mac(0x33, 0x33, 0, 0, 0, 1));
  if (!dev.is_up()) return out;
  if (bridge_snoops(dev)) {
    push(mac(0x01, 0x00, 0x5e, 0, 0, 0x6a));
    push(mac(0x33, 0x33, 0, 0, 0, 0x6a));
  }
  if (inet::inet4_conf(ctl, ns, dev.ifindex())) push(mac(0x01, 0x00, 0x5e, 0, 0, 1));
  if (!v6) return out;
  auto addrs = inet::list_addresses(ctl, ns, AF_INET6, dev.ifindex());
  std::stable_partition(addrs.begin(), addrs.end(),
                        [](const inet::AddrInfo& a) { return a.local.is_v6_link_local(); });
  for (const auto& a : addrs) {
    auto b = a.local.bytes();
    push(mac(0x33, 0x33, 0xff, b[13], b[14], b[15]));
  }
  return out;
}

fdb::Request fdb_request(const wire::NeighMessage& m, std::uint16_t nlflags) {
  fdb::Request q;
  q.ifindex = m.ifindex;
  q.state = m.state;
  q.flags = m.flags;
  q.nlflags = nlflags;
  q.lladdr = m.lladdr;
  q.vlan = m.vlan;
  q.dst = m.dst;
  q.dst_bad = m.dst_bad;
  q.port = m.port;
  q.vni = m.vni;
  q.src_vni = m.src_vni;
  q.via = m.dump_ifindex;
  q.flags_ext = m.flags_ext;
  q.nh_id = m.nh_id;
  q.master = m.master;
  q.state_mask = m.state_mask;
  q.flags_mask = m.flags_mask;
  return q;
}

Result<wire::NeighMessage> decode(const Request& r) {
  auto m = wire::decode_neigh(r.m);
  if (!m) return fail(m.error());
  return m;
}

bool has(const wire::NeighMessage& m, int type) {
  return (m.present >> type) & 1;
}

// Linux: valid_fdb_dump_strict / valid_fdb_dump_legacy — the bridge and port filters.
Result<void> dump_filters(const Request& r, int* br, int* brport) {
  auto p = r.m.payload();
  if (r.s.strict_check()) {
    if (p.size() < sizeof(ndmsg)) return fail(EINVAL, "Invalid header for fdb dump request");
    auto m = decode(r);
    if (!m) return fail(m.error());
    ndmsg nd;
    std::memcpy(&nd, p.data(), sizeof(nd));
    if (nd.ndm_pad1 || nd.ndm_pad2 || nd.ndm_state || nd.ndm_flags || nd.ndm_type)
      return fail(EINVAL, "Invalid values in header for fdb dump request");
    *brport = nd.ndm_ifindex;
    for (int t = 0; t < 64; ++t) {
      if (!has(*m, t)) continue;
      if (t == NDA_IFINDEX)
        *brport = static_cast<int>(*m->dump_ifindex);
      else if (t == NDA_MASTER)
        *br = static_cast<int>(*m->master);
      else
        return fail(EINVAL, "Unsupported attribute in fdb dump request");
    }
    return ok();
  }
  // The legacy request: an ndmsg (with at most one u32 attribute, unused), or an
  // ifinfomsg whose index is the port and whose IFLA_MASTER is the bridge.
  if (p.size() == sizeof(ndmsg) || p.size() == sizeof(ndmsg) + NLA_HDRLEN + 4) return ok();
  if (p.size() < sizeof(ifinfomsg)) return ok();
  ifinfomsg ifi;
  std::memcpy(&ifi, p.data(), sizeof(ifi));
  constexpr std::size_t start = NLMSG_ALIGN(sizeof(ifinfomsg));
  auto attrs = wire::parse_raw_attrs(p.subspan(std::min(start, p.size())),
                                     static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return fail_log_only(EINVAL, "malformed attributes");
  for (const auto& a : *attrs)
    if (a.type == IFLA_MASTER) {
      auto v = a.u32();
      if (!v) return fail_log_only(EINVAL, "bad IFLA_MASTER");
      *br = static_cast<int>(*v);
    }
  *brport = ifi.ifi_index;
  return ok();
}

// Linux: valid_fdb_get_strict (every get is checked so).
Result<void> check_get(const Request& r, const wire::NeighMessage& m) {
  auto p = r.m.payload();
  if (p.size() < sizeof(ndmsg)) return fail(EINVAL, "Invalid header for fdb get request");
  ndmsg nd;
  std::memcpy(&nd, p.data(), sizeof(nd));
  if (nd.ndm_pad1 || nd.ndm_pad2 || nd.ndm_state || nd.ndm_type)
    return fail(EINVAL, "Invalid values in header for fdb get request");
  if (nd.ndm_flags & ~(NTF_MASTER | NTF_SELF))
    return fail(EINVAL, "Invalid flags in header for fdb get request");
  for (int t = 0; t < 64; ++t) {
    if (!has(m, t)) continue;
    switch (t) {
      case NDA_MASTER:
      case NDA_VNI:
        break;
      case NDA_LLADDR:
        if (m.lladdr->size() != 6) return fail(EINVAL, "Invalid address in fdb get request");
        break;
      case NDA_VLAN:
        if (!*m.vlan || *m.vlan >= 0x0fff) return fail(EINVAL, "invalid vlan id");
        break;
      default:
        return fail(EINVAL, "Unsupported attribute in fdb get request");
    }
  }
  return ok();
}

}  // namespace

wire::NeighMessage fdb_message(const fdb::Entry& e) {
  wire::NeighMessage m;
  m.family = AF_BRIDGE;
  m.ifindex = e.ifindex;
  m.state = e.state;
  m.flags = e.flags;
  m.type = e.type;
  m.lladdr = e.lladdr;
  m.dst = e.dst;
  m.master = e.master;
  m.flags_ext = e.flags_ext;
  m.port = e.port;
  m.vni = e.vni;
  m.dump_ifindex = e.via;
  m.src_vni = e.src_vni;
  if (e.has_cacheinfo) {
    nda_cacheinfo ci{};
    ci.ndm_used = e.used;
    ci.ndm_updated = e.updated;
    m.cacheinfo = ci;
  }
  if (e.vlan) m.vlan = e.vlan;
  return m;
}

void FdbPublisher::on_fdb(Namespace& ns, bool added, const fdb::Entry& e) {
  if (!hub_.wanted(ns.id(), RTNLGRP_NEIGH)) return;
  wire::Header h = hub_.notify_header(ns.id(), added ? RTM_NEWNEIGH : RTM_DELNEIGH);
  wire::MessageBuilder b;
  if (wire::encode_fdb(b, h, fdb_message(e))) hub_.publish(ns.id(), RTNLGRP_NEIGH, b.bytes());
}

bool is_fdb_request(const Request& r) {
  auto p = r.m.payload();
  return !p.empty() && p[0] == AF_BRIDGE;
}

Result<void> handle_fdb_add(Request& r) {
  auto m = decode(r);
  if (!m) return fail(m.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  return fdb::add(ctl, **ns, fdb_request(*m, r.flags()));
}

Result<void> handle_fdb_del(Request& r) {
  auto m = decode(r);
  if (!m) return fail(m.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  if (r.flags() & NLM_F_BULK) return fdb::flush(ctl, **ns, fdb_request(*m, r.flags()));
  return fdb::del(ctl, **ns, fdb_request(*m, r.flags()));
}

Result<void> handle_fdb_get(Request& r) {
  if (!r.dump()) {
    auto m = decode(r);
    if (!m) {
      if (r.m.payload().size() < sizeof(ndmsg))
        return fail(EINVAL, "Invalid header for fdb get request");
      return fail(m.error());
    }
    IFCORE_TRY(check_get(r, *m));
    Control ctl = r.s.hub().engine().control();
    auto ns = session_ns(ctl, r.s);
    if (!ns) return fail(ns.error());
    auto got = fdb::get(ctl, **ns, fdb_request(*m, 0));
    if (!got) return fail(got.error());
    return emit(r.out, [&](wire::MessageBuilder& b) {
      return wire::encode_fdb(b, {RTM_NEWNEIGH, 0, r.seq(), r.port()}, fdb_message(*got));
    });
  }
  int br = 0, brport = 0;
  IFCORE_TRY(dump_filters(r, &br, &brport));
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  Namespace& n = **ns;
  auto rows = fdb::dump(ctl, n, br, brport, [&](const Device& d) { return groups_of(ctl, n, d); });
  if (!rows) return fail(rows.error());
  for (const auto& e : *rows) {
    auto x = emit(r.out, [&](wire::MessageBuilder& b) {
      return wire::encode_fdb(b, {RTM_NEWNEIGH, NLM_F_MULTI, r.seq(), r.port()}, fdb_message(e));
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
