// rtnl/link_stats_handlers.cc — RTM_GETSTATS (Linux: rtnl_stats_get, rtnl_stats_dump;
// `ip stats`, `ip link xstats`): one RTM_NEWSTATS per device with what the filter mask asks
// for — the 64-bit counters (IFLA_STATS_LINK_64), a bridge's extended statistics and its
// ports' (IFLA_STATS_LINK_XSTATS, _SLAVE: multicast and STP counters, zero: ifcore snoops
// no IGMP or MLD and runs no STP), the offload statistics' hardware info (none in use) and
// the per-family statistics (IFLA_STATS_AF_SPEC: MPLS alone fills it, empty here).
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstring>

#include "ifcore/namespace.h"
#include "rtnl/fill.h"
#include "rtnl/handlers.h"

namespace ifcore::rtnl {

namespace {

// Linux: rtnl_valid_stats_req, then the filter mask's own check.
Result<if_stats_msg> stats_request(Request& r, bool dump) {
  auto p = r.m.payload();
  if (p.size() < sizeof(if_stats_msg)) return fail(EINVAL, "Invalid header for stats dump");
  if_stats_msg q;
  std::memcpy(&q, p.data(), sizeof(q));
  if (r.s.strict_check()) {
    if (q.pad1 || q.pad2 || (dump && q.ifindex))
      return fail(EINVAL, "Invalid values in header for stats dump request");
    if (q.filter_mask >= IFLA_STATS_FILTER_BIT(IFLA_STATS_MAX + 1))
      return fail(EINVAL, "Invalid stats requested through filter mask");
  }
  return q;
}

// LINK_XSTATS_TYPE_BRIDGE (Linux: br_fill_linkxstats): the multicast counters, and for a
// port its STP counters; no vlans (ifcore's bridges do not filter by vlan).
void put_bridge_xstats(wire::MessageBuilder& b, std::uint16_t type, bool port) {
  std::size_t outer = b.begin_nest(type);
  std::size_t inner = b.begin_nest(LINK_XSTATS_TYPE_BRIDGE);
  br_mcast_stats mcast{};
  b.put_attr(BRIDGE_XSTATS_MCAST, &mcast, sizeof(mcast));
  if (port) {
    bridge_stp_xstats stp{};
    b.put_attr(BRIDGE_XSTATS_STP, &stp, sizeof(stp));
  }
  b.end_nest(inner);
  b.end_nest(outer);
}

// Linux: rtnl_fill_statsinfo, attributes in filter-mask order.
Result<void> encode_stats(wire::MessageBuilder& b, const wire::Header& h, const Device& dev,
                          std::uint32_t mask) {
  b.begin(h);
  if_stats_msg m{};
  m.family = AF_UNSPEC;
  m.ifindex = static_cast<std::uint32_t>(dev.ifindex());
  m.filter_mask = mask;
  b.put_struct(m);
  if (mask & IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64)) {
    const rtnl_link_stats64 s = link_stats64(dev);
    b.put_attr(IFLA_STATS_LINK_64, &s, sizeof(s));
  }
  if ((mask & IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_XSTATS)) && is_bridge(dev))
    put_bridge_xstats(b, IFLA_STATS_LINK_XSTATS, false);
  const Device* master = dev.master();
  if ((mask & IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_XSTATS_SLAVE)) && master && is_bridge(*master))
    put_bridge_xstats(b, IFLA_STATS_LINK_XSTATS_SLAVE, true);
  if (mask & IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_OFFLOAD_XSTATS)) {
    // Linux: rtnl_offload_xstats_fill — no CPU_HIT counters (no driver offloads), and the
    // L3 statistics' hardware info: neither asked for nor in use.
    std::size_t offload = b.begin_nest(IFLA_STATS_LINK_OFFLOAD_XSTATS);
    std::size_t info = b.begin_nest(IFLA_OFFLOAD_XSTATS_HW_S_INFO | NLA_F_NESTED);
    std::size_t l3 = b.begin_nest(IFLA_OFFLOAD_XSTATS_L3_STATS | NLA_F_NESTED);
    b.put_u8(IFLA_OFFLOAD_XSTATS_HW_S_INFO_REQUEST, 0);
    b.put_u8(IFLA_OFFLOAD_XSTATS_HW_S_INFO_USED, 0);
    b.end_nest(l3);
    b.end_nest(info);
    b.end_nest(offload);
  }
  if (mask & IFLA_STATS_FILTER_BIT(IFLA_STATS_AF_SPEC))
    b.end_nest(b.begin_nest(IFLA_STATS_AF_SPEC));
  auto done = b.end();
  if (!done) return fail(done.error());
  return ok();
}

// The dump in parts, in ifindex order (as LinkDump), each part under a control lock of its
// own, resuming after the last ifindex sent.
class StatsDump final : public DumpRest {
 public:
  explicit StatsDump(std::uint32_t mask) : mask_(mask) {}
  Result<bool> next(Request& r) override {
    Control ctl = r.s.hub().engine().control();
    auto ns = session_ns(ctl, r.s);
    if (!ns) return fail(ns.error());
    const wire::Header h{RTM_NEWSTATS, NLM_F_MULTI, r.seq(), r.port()};
    for (Device* dev = (*ns)->next_by_index_rcu(last_); dev;
         dev = (*ns)->next_by_index_rcu(dev->ifindex())) {
      if (r.part_full()) return true;
      last_ = dev->ifindex();
      auto e =
          emit(r.out, [&](wire::MessageBuilder& b) { return encode_stats(b, h, *dev, mask_); });
      if (!e) {
        end_dump(r, -e.error().code);
        return fail(e.error());
      }
    }
    end_dump(r);
    return false;
  }

 private:
  std::uint32_t mask_;
  int last_ = 0;
};

}  // namespace

Result<void> handle_getlinkstats(Request& r) {
  const bool dump = r.dump();
  auto q = stats_request(r, dump);
  if (dump) {
    if (q && !q->filter_mask) q = fail(EINVAL, "Filter mask must be set for stats dump");
    if (!q) {
      end_dump_error(r, q.error());
      return fail(q.error());
    }
    return start_dump(r, std::make_unique<StatsDump>(q->filter_mask));
  }
  if (!q) return fail(q.error());
  // Linux: rtnl_stats_get — the device by index (none given: EINVAL alone), then the mask.
  if (static_cast<std::int32_t>(q->ifindex) <= 0) return fail_log_only(EINVAL, "no ifindex");
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  Device* dev = ctl.find(**ns, static_cast<int>(q->ifindex));
  if (!dev) return fail_log_only(ENODEV, "no device with ifindex {}", q->ifindex);
  if (!q->filter_mask) return fail(EINVAL, "Filter mask must be set for stats get");
  return emit(r.out, [&](wire::MessageBuilder& b) {
    return encode_stats(b, {RTM_NEWSTATS, 0, r.seq(), r.port()}, *dev, q->filter_mask);
  });
}

}  // namespace ifcore::rtnl
