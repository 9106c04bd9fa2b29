// rtnl/get_handlers.cc — RTM_GETLINK (one device, or a dump filtered by kind and master)
// and ifcore's statistics (IFCORE_NLMSG_GETSTATS).
//
// A dump's messages are packed into datagrams of about the session's datagram_size and
// handed to `send` in order, under the control lock. A session that takes dumps in parts
// (SessionOptions::dump_chunk_bytes) gets them part by part, each under the lock taken
// anew; otherwise the dump is one consistent snapshot.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_link.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "ifcore/namespace.h"
#include "rtnl/fill.h"
#include "rtnl/handlers.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/raw_attrs.h"
#include "rtnl/wire/stats_msg.h"

namespace ifcore::rtnl {

namespace {

// Linux: rtnl_valid_dump_ifinfo_req / rtnl_valid_getlink_req with NETLINK_GET_STRICT_CHK.
Result<void> strict_getlink_checks(const wire::Message& m, bool dump) {
  auto p = m.payload();
  if (p.size() < sizeof(ifinfomsg))
    return fail(EINVAL, dump ? "Invalid header for link dump" : "Invalid header for get link");
  ifinfomsg ifi;
  std::memcpy(&ifi, p.data(), sizeof(ifi));
  if (ifi.__ifi_pad || ifi.ifi_type || ifi.ifi_flags || ifi.ifi_change)
    return fail(EINVAL, dump ? "Invalid values in header for link dump request"
                             : "Invalid values in header for get link request");
  if (dump && ifi.ifi_index)
    return fail(EINVAL, "Filter by device index not supported for link dumps");
  auto attrs =
      wire::parse_raw_attrs(p.subspan(NLMSG_ALIGN(sizeof(ifinfomsg))),
                            static_cast<int>(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg))));
  if (!attrs) return fail(attrs.error());
  for (const wire::RawAttr& a : *attrs) {
    bool allowed = dump ? (a.type == IFLA_TARGET_NETNSID || a.type == IFLA_EXT_MASK ||
                           a.type == IFLA_MASTER || a.type == IFLA_LINKINFO)
                        : (a.type == IFLA_IFNAME || a.type == IFLA_ALT_IFNAME ||
                           a.type == IFLA_EXT_MASK || a.type == IFLA_TARGET_NETNSID);
    if (!allowed)
      return wire::fail_at(a.offset, EINVAL, "{}",
                           dump ? "Unsupported attribute in link dump request"
                                : "Unsupported attribute in get link request");
  }
  return ok();
}

// Linux: inet6_valid_dump_ifinfo.
Result<void> strict_inet6_dump_checks(const wire::Message& m) {
  auto p = m.payload();
  if (p.size() < sizeof(ifinfomsg))
    return fail(EINVAL, "ipv6: Invalid header for link dump request");
  if (p.size() > NLMSG_ALIGN(sizeof(ifinfomsg)))
    return fail(EINVAL, "ipv6: Invalid data after header");
  ifinfomsg ifi;
  std::memcpy(&ifi, p.data(), sizeof(ifi));
  if (ifi.__ifi_pad || ifi.ifi_type || ifi.ifi_flags || ifi.ifi_change || ifi.ifi_index)
    return fail(EINVAL, "ipv6: Invalid values in header for dump request");
  return ok();
}

Result<Namespace*> target_ns(Control& ctl, const SessionImpl& s,
                             const std::optional<std::int32_t>& netnsid, bool dump) {
  if (!netnsid) return session_ns(ctl, s);
  auto own = session_ns(ctl, s);
  if (!own) return own;
  Namespace* ns = (*own)->peer_by_id_locked(*netnsid);
  if (!ns) {
    // Linux: rtnl_valid_dump_ifinfo_req says so; rtnl_getlink answers EINVAL alone.
    if (dump) return fail(EINVAL, "Invalid target network namespace id");
    return fail_log_only(EINVAL, "Invalid target network namespace id");
  }
  return ns;
}

// A link dump: the devices in ifindex order, each part under a control lock of its own,
// resuming after the last ifindex sent (Linux: rtnl_dump_ifinfo with ctx->next_ifindex).
//
// Of family AF_INET6 (Linux: inet6_dump_ifinfo), the devices with IPv6 state, each as
// inet6_fill_ifinfo writes it, unfiltered.
class LinkDump final : public DumpRest {
 public:
  explicit LinkDump(wire::GetLinkRequest g, bool inet6 = false) : g_(std::move(g)), inet6_(inet6) {}
  Result<bool> next(Request& r) override;

 private:
  bool filtered_out(const Device& dev, const Kind* kind) const;

  wire::GetLinkRequest g_;
  bool inet6_;
  int last_ = 0;                      // the ifindex of the last device sent
  std::optional<std::uint64_t> seq_;  // the namespace's list_seq when the last part ended
};

bool LinkDump::filtered_out(const Device& dev, const Kind* kind) const {
  // Linux: rtnl_dump_ifinfo — an unknown kind filters nothing; a master of -1 (as u32)
  // keeps the devices without a master.
  if (kind && &dev.kind() != kind) return true;
  if (!g_.filter_master) return false;
  auto master = static_cast<std::int32_t>(*g_.filter_master);
  if (master == 0) return false;
  const Device* m = dev.master();
  return master == -1 ? m != nullptr : (!m || m->ifindex() != master);
}

Result<bool> LinkDump::next(Request& r) {
  Control ctl = r.s.hub().engine().control();
  auto ns = target_ns(ctl, r.s, g_.target_netnsid, true);
  if (!ns) return fail(ns.error());
  auto own = session_ns(ctl, r.s);
  if (!own) return fail(own.error());
  const Kind* kind = g_.filter_kind ? ctl.find_kind(*g_.filter_kind) : nullptr;
  std::uint16_t flags = NLM_F_MULTI;
  // NLM_F_DUMP_FILTERED marks filtered parts.
  if (kind || (g_.filter_master && *g_.filter_master)) flags |= NLM_F_DUMP_FILTERED;
  // Linux: nl_dump_check_consistent — devices listed or unlisted since the last part.
  std::uint64_t seq = (*ns)->list_seq();
  if (seq_ && *seq_ != seq) flags |= NLM_F_DUMP_INTR;
  seq_ = seq;
  for (Device* dev = (*ns)->next_by_index_rcu(last_); dev;
       dev = (*ns)->next_by_index_rcu(dev->ifindex())) {
    if (r.part_full()) return true;
    last_ = dev->ifindex();
    if (inet6_ ? !has_inet6(*dev) : filtered_out(*dev, kind)) continue;
    auto e = emit(r.out, [&](wire::MessageBuilder& b) {
      wire::Header h{RTM_NEWLINK, flags, r.seq(), r.port()};
      return inet6_ ? encode_inet6_device(b, h, *dev)
                    : encode_device(b, h, *dev, 0, g_.ext_mask, *own);
    });
    if (!e) {
      end_dump(r, -e.error().code);
      return fail(e.error());
    }
  }
  end_dump(r);
  return false;
}

}  // namespace

Result<void> handle_getlink(Request& r) {
  bool dump = r.dump();
  // Linux: PF_BRIDGE registers a dump of RTM_GETLINK (rtnl_bridge_getlink), no doit.
  if (dump && !r.m.payload().empty() && r.m.payload()[0] == AF_BRIDGE)
    return handle_bridge_getlink(r);
  // Linux: AF_INET6 registers a dump of RTM_GETLINK too (inet6_dump_ifinfo).
  if (dump && !r.m.payload().empty() && r.m.payload()[0] == AF_INET6) {
    if (r.s.strict_check()) IFCORE_TRY(strict_inet6_dump_checks(r.m));
    return start_dump(r, std::make_unique<LinkDump>(wire::GetLinkRequest{}, true));
  }
  if (r.s.strict_check()) IFCORE_TRY(strict_getlink_checks(r.m, dump));
  wire::GetLinkRequest g;
  if (dump && r.m.payload().size() < sizeof(ifinfomsg)) {
    g.dump = true;  // struct rtgenmsg from an old client
  } else {
    auto d = wire::decode_getlink(r.m);
    if (!d) return fail(d.error());
    g = std::move(*d);
  }
  if (dump) return start_dump(r, std::make_unique<LinkDump>(std::move(g)));
  Control ctl = r.s.hub().engine().control();
  auto ns = target_ns(ctl, r.s, g.target_netnsid, false);
  if (!ns) return fail(ns.error());
  auto own = session_ns(ctl, r.s);
  if (!own) return fail(own.error());
  // Linux: rtnl_getlink — by index, else by name, else EINVAL; ENODEV if absent.
  Device* dev = nullptr;
  if (g.ifindex > 0) {
    dev = ctl.find(**ns, g.ifindex);
  } else if (g.name) {
    dev = ctl.find(**ns, *g.name);  // any of a device's names (Linux: rtnl_dev_get)
  } else if (g.alt_name) {
    dev = ctl.find(**ns, *g.alt_name);
  } else {
    return fail(EINVAL);
  }
  if (!dev) return fail(ENODEV);
  return emit(r.out, [&](wire::MessageBuilder& b) {
    return encode_device(b, {RTM_NEWLINK, 0, r.seq(), r.port()}, *dev, 0, g.ext_mask, *own);
  });
}

Result<void> handle_getstats(Request& r) {
  Engine& e = r.s.hub().engine();
  Stats st = e.stats();
  std::uint64_t pending = e.pending_finalization();
  return emit(r.out, [&](wire::MessageBuilder& b) {
    return encode_stats_reply(b, r.seq(), r.port(), st, pending);
  });
}

}  // namespace ifcore::rtnl
