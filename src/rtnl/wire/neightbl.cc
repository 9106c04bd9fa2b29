// rtnl/wire/neightbl.cc — ndtmsg + NDTA_* / NDTPA_* <-> the neighbour tables' values.
#include "rtnl/wire/neightbl.h"

#include <linux/neighbour.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

constexpr std::size_t kHdr = NLMSG_ALIGN(sizeof(ndtmsg));  // 4
constexpr int kFirstAttr = static_cast<int>(NLMSG_HDRLEN + kHdr);

void begin_ndtmsg(MessageBuilder& b, const Header& h, int family) {
  b.begin(h);
  ndtmsg n{};
  n.ndtm_family = static_cast<std::uint8_t>(family);
  b.put_struct(n);
}

// Linux: neightbl_fill_parms.
void put_parms(MessageBuilder& b, const inet::NeighParms& p, int ifindex, std::uint32_t refcnt) {
  std::size_t nest = b.begin_nest(NDTA_PARMS);
  if (ifindex) b.put_u32(NDTPA_IFINDEX, static_cast<std::uint32_t>(ifindex));
  b.put_u32(NDTPA_REFCNT, refcnt);
  b.put_u32(NDTPA_QUEUE_LENBYTES, static_cast<std::uint32_t>(p.queue_len_bytes));
  b.put_u32(NDTPA_QUEUE_LEN, p.queue_len());
  b.put_u32(NDTPA_PROXY_QLEN, p.proxy_qlen);
  b.put_u32(NDTPA_APP_PROBES, p.app_probes);
  b.put_u32(NDTPA_UCAST_PROBES, p.ucast_probes);
  b.put_u32(NDTPA_MCAST_PROBES, p.mcast_probes);
  b.put_u32(NDTPA_MCAST_REPROBES, p.mcast_reprobes);
  // ifcore does not randomise the reachable time (Linux: 0.5..1.5 times the base).
  b.put_u64(NDTPA_REACHABLE_TIME, p.base_reachable_ms);
  b.put_u64(NDTPA_BASE_REACHABLE_TIME, p.base_reachable_ms);
  b.put_u64(NDTPA_GC_STALETIME, p.gc_stale_ms);
  b.put_u64(NDTPA_DELAY_PROBE_TIME, p.delay_probe_ms);
  b.put_u64(NDTPA_RETRANS_TIME, p.retrans_ms);
  b.put_u64(NDTPA_ANYCAST_DELAY, p.anycast_delay_ms);
  b.put_u64(NDTPA_PROXY_DELAY, p.proxy_delay_ms);
  b.put_u64(NDTPA_LOCKTIME, p.locktime_ms);
  b.put_u64(NDTPA_INTERVAL_PROBE_TIME_MS, p.interval_probe_ms);
  b.end_nest(nest);
}

// Linux's nla_get_u32 / nla_get_u64 after a deprecated parse: a shorter payload is refused
// by the policy, a longer one read from its start.
template <class T>
Result<T> lenient(const RawAttr& a) {
  if (a.data.size() < sizeof(T)) {
    if constexpr (sizeof(T) == 4) return fail(a.u32().error());
    if constexpr (sizeof(T) == 8) return fail(a.u64().error());
  }
  T v;
  std::memcpy(&v, a.data.data(), sizeof(T));
  return v;
}

// Linux: nl_ntbl_parm_policy and neightbl_set's NDTPA_* cases.
Result<void> take_parm(inet::NeighTableRequest& r, const RawAttr& a) {
  auto u32 = [&](std::optional<std::uint32_t>& f) -> Result<void> {
    auto v = lenient<std::uint32_t>(a);
    if (!v) return fail(v.error());
    f = *v;
    return ok();
  };
  auto u64 = [&](std::optional<std::uint64_t>& f) -> Result<void> {
    auto v = lenient<std::uint64_t>(a);
    if (!v) return fail(v.error());
    f = *v;
    return ok();
  };
  switch (a.type) {
    case NDTPA_IFINDEX: {
      std::optional<std::uint32_t> i;
      IFCORE_TRY(u32(i));
      r.ifindex = static_cast<int>(*i);
      return ok();
    }
    case NDTPA_QUEUE_LEN:
      return u32(r.queue_len);
    case NDTPA_QUEUE_LENBYTES:
      return u32(r.queue_len_bytes);
    case NDTPA_PROXY_QLEN:
      return u32(r.proxy_qlen);
    case NDTPA_APP_PROBES:
      return u32(r.app_probes);
    case NDTPA_UCAST_PROBES:
      return u32(r.ucast_probes);
    case NDTPA_MCAST_PROBES:
      return u32(r.mcast_probes);
    case NDTPA_MCAST_REPROBES:
      return u32(r.mcast_reprobes);
    case NDTPA_BASE_REACHABLE_TIME:
      return u64(r.base_reachable_ms);
    case NDTPA_GC_STALETIME:
      return u64(r.gc_stale_ms);
    case NDTPA_DELAY_PROBE_TIME:
      return u64(r.delay_probe_ms);
    case NDTPA_RETRANS_TIME:
      return u64(r.retrans_ms);
    case NDTPA_ANYCAST_DELAY:
      return u64(r.anycast_delay_ms);
    case NDTPA_PROXY_DELAY:
      return u64(r.proxy_delay_ms);
    case NDTPA_LOCKTIME:
      return u64(r.locktime_ms);
    // Linux: `.min = 1` without a validation type, so 0 is taken too.
    case NDTPA_INTERVAL_PROBE_TIME_MS:
      return u64(r.interval_probe_ms);
    default:
      return ok();  // REFCNT, REACHABLE_TIME, PAD and unknown types: ignored
  }
}

// Linux: nl_neightbl_policy, checked attribute by attribute before anything is read.
Result<void> take_top(inet::NeighTableRequest& r, std::optional<RawAttr>& name,
                      std::optional<RawAttr>& parms, const RawAttr& a) {
  auto u32 = [&](std::optional<std::uint32_t>& f) -> Result<void> {
    auto v = lenient<std::uint32_t>(a);
    if (!v) return fail(v.error());
    f = *v;
    return ok();
  };
  switch (a.type) {
    case NDTA_NAME:
      if (a.data.empty()) return fail(a.string_view().error());
      name = a;
      return ok();
    case NDTA_THRESH1:
      return u32(r.thresh1);
    case NDTA_THRESH2:
      return u32(r.thresh2);
    case NDTA_THRESH3:
      return u32(r.thresh3);
    case NDTA_GC_INTERVAL: {
      auto v = lenient<std::uint64_t>(a);
      if (!v) return fail(v.error());
      r.gc_interval_ms = *v;
      return ok();
    }
    case NDTA_PARMS:
      if (!a.data.empty() && a.data.size() < NLA_HDRLEN)
        return fail_policy(a.offset, {.type = NL_ATTR_TYPE_NESTED});
      parms = a;
      return ok();
    default:
      return ok();  // NDTA_CONFIG, NDTA_STATS (no policy) and unknown types
  }
}

// Linux: nla_strcmp — the payload, less one trailing NUL, equals `s`.
bool name_is(const RawAttr& a, std::string_view s) {
  std::size_t n = a.data.size();
  if (n > 0 && a.data[n - 1] == 0) --n;
  return n == s.size() && std::memcmp(a.data.data(), s.data(), n) == 0;
}

}  // namespace

Result<void> encode_neightbl(MessageBuilder& b, const Header& h, const inet::NeighTableInfo& t) {
  begin_ndtmsg(b, h, t.family);
  b.put_string(NDTA_NAME, t.name);
  b.put_u64(NDTA_GC_INTERVAL, t.conf.gc_interval_ms);
  b.put_u32(NDTA_THRESH1, t.conf.thresh1);
  b.put_u32(NDTA_THRESH2, t.conf.thresh2);
  b.put_u32(NDTA_THRESH3, t.conf.thresh3);
  // A fresh table's hash (Linux: neigh_hash_alloc(3)); ifcore keeps no flush or rehash time.
  ndt_config c{};
  c.ndtc_key_len = t.key_len;
  c.ndtc_entry_size = t.entry_size;
  c.ndtc_entries = t.entries;
  c.ndtc_hash_mask = 7;
  b.put_attr(NDTA_CONFIG, &c, sizeof(c));
  ndt_stats s{};
  b.put_attr(NDTA_STATS, &s, sizeof(s));
  put_parms(b, t.conf.parms, 0, 1);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

Result<void> encode_neightbl_parms(MessageBuilder& b, const Header& h, int family,
                                   std::string_view name, const inet::NeighParmsInfo& p) {
  begin_ndtmsg(b, h, family);
  b.put_string(NDTA_NAME, name);
  put_parms(b, p.parms, p.ifindex, p.refcnt);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

Result<NeighTblSet> decode_neightbl_set(const Message& m) {
  auto p = m.payload();
  if (p.size() < sizeof(ndtmsg)) return fail(EINVAL, "Invalid header length");
  ndtmsg h;
  std::memcpy(&h, p.data(), sizeof(h));
  NeighTblSet out;
  std::optional<RawAttr> name, parms;
  // Linux: nl_neightbl_policy, checked attribute by attribute before anything is read.
  auto left = walk_linux(p.subspan(std::min(kHdr, p.size())), kFirstAttr,
                         [&](const RawAttr& a) { return take_top(out.req, name, parms, a); });
  if (!left) return fail(left.error());
  if (*left) out.warning = "bytes leftover after parsing attributes";
  if (!name) return fail_log_only(EINVAL, "ntable: no NDTA_NAME");
  // Linux: the tables in order (arp_cache, ndisc_cache), of ndtm_family if it names one.
  if ((!h.ndtm_family || h.ndtm_family == AF_INET) && name_is(*name, "arp_cache"))
    out.req.family = AF_INET;
  else if ((!h.ndtm_family || h.ndtm_family == AF_INET6) && name_is(*name, "ndisc_cache"))
    out.req.family = AF_INET6;
  else
    return fail_log_only(ENOENT, "ntable: no such table");
  if (parms) {
    out.req.has_parms = true;
    auto nl = walk_linux(parms->data, parms->offset + NLA_HDRLEN,
                         [&](const RawAttr& a) { return take_parm(out.req, a); });
    if (!nl) return fail(nl.error());
    if (*nl) out.warning = "bytes leftover after parsing attributes";
  }
  return out;
}

Result<int> check_neightbl_dump(const Message& m, bool strict) {
  auto p = m.payload();
  if (strict) {
    if (p.size() < sizeof(ndtmsg))
      return fail(EINVAL, "Invalid header for neighbor table dump request");
    ndtmsg h;
    std::memcpy(&h, p.data(), sizeof(h));
    if (h.ndtm_pad1 || h.ndtm_pad2)
      return fail(EINVAL, "Invalid values in header for neighbor table dump request");
    if (p.size() > kHdr)
      return fail(EINVAL, "Invalid data after header in neighbor table dump request");
  }
  return p.empty() ? 0 : int{p[0]};
}

}  // namespace ifcore::wire
