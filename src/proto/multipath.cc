// proto/multipath.cc — which hop of a multipath route or nexthop group a flow takes
// (Linux: fib_multipath_hash, fib_rebalance + fib_select_multipath, rt6_multipath_rebalance
// + fib6_select_path, nexthop_select_path; semantics only): the namespace's hash settings,
// the flow's hash under them, and the hops' upper bounds from their weights.
//
// Context: control lock, everywhere. See ifcore/inet.h ("multipath hash") for what agrees
// with Linux and what cannot (the hash function itself).
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/nexthop.h>

#include <random>

#include "proto/multipath.h"
#include "proto/state.h"

namespace ifcore::proto {

namespace {

// splitmix64's finalizer: every input bit moves about half the output bits.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// The fields `policy` hashes for a flow of `family` (Linux: fib_multipath_hash and
// rt6_multipath_hash, for a lookup without a packet: policy 2 finds no inner header).
std::uint32_t fields_of(int family, std::uint8_t policy, std::uint32_t custom) {
  using namespace inet;
  switch (policy) {
    case 1:
      return kMpHashSrcIp | kMpHashDstIp | kMpHashIpProto | kMpHashSrcPort | kMpHashDstPort;
    case 3:
      return custom & kMpHashOuterFields;
    default:
      return family == AF_INET6 ? kMpHashSrcIp | kMpHashDstIp | kMpHashFlowlabel | kMpHashIpProto
                                : kMpHashSrcIp | kMpHashDstIp;
  }
}

// The upper bound of each hop of `weights` (0: a dead hop, which gets none), as Linux's
// fib_rebalance: the running sum of the live weights' share of 2^31, rounded, minus one.
std::vector<std::int64_t> upper_bounds(const std::vector<std::uint32_t>& weights) {
  std::uint64_t total = 0;
  for (std::uint32_t w : weights) total += w;
  std::vector<std::int64_t> out(weights.size(), -1);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!weights[i]) continue;
    sum += weights[i];
    out[i] = static_cast<std::int64_t>(((sum << 31) + total / 2) / total) - 1;
  }
  return out;
}

// The first live hop (a bound) that `good` allows (empty: all) whose bound is not below
// `hash`; else the first live one it allows, or -1 (Linux: fib_select_multipath,
// nexthop_select_path_hthr).
int first_at_or_above(const std::vector<std::int64_t>& bounds, std::uint32_t hash,
                      const std::vector<char>& good = {}) {
  int first = -1;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (bounds[i] < 0 || (!good.empty() && (i >= good.size() || !good[i]))) continue;
    if (first < 0) first = static_cast<int>(i);
    if (static_cast<std::int64_t>(hash) <= bounds[i]) return static_cast<int>(i);
  }
  return first;
}

std::uint32_t weight_of(const inet::NextHop& h) {
  return h.weight ? h.weight : 256;  // 256 wraps to 0 in the 8-bit field
}

}  // namespace

void mp_init(EngineProto& ep) {
  std::random_device rd;
  ep.mp_key = (std::uint64_t{rd()} << 32) ^ rd();
}

std::uint32_t mp_hash(EngineProto& ep, NetState& st, const inet::Flow& flow) {
  const int family = flow.dst.family();
  const inet::MultipathHashConf& c = st.mp_hash;
  const std::uint32_t fields = family == AF_INET6 ? fields_of(family, c.policy6, c.fields6)
                                                  : fields_of(family, c.policy4, c.fields4);
  std::uint64_t h = c.seed ? mix(0x6d70736565640000ull ^ c.seed) : ep.mp_key;
  auto add = [&](std::uint64_t v) { h = mix(h ^ v) + 0x9e3779b97f4a7c15ull; };
  auto add_addr = [&](const IpAddr& a) {
    std::uint64_t word = 0;
    int n = 0;
    for (std::uint8_t byte : a.bytes()) {
      word = word << 8 | byte;
      if (++n % 8 == 0) add(word), word = 0;
    }
    add(word ^ static_cast<std::uint64_t>(n) << 56);
  };
  add(static_cast<std::uint64_t>(family) << 32 | fields);
  if (fields & inet::kMpHashSrcIp) add_addr(flow.src);
  if (fields & inet::kMpHashDstIp) add_addr(flow.dst);
  if (fields & inet::kMpHashIpProto) add(std::uint64_t{flow.ip_proto} | 1ull << 40);
  if (fields & inet::kMpHashFlowlabel) add(1ull << 41);  // a lookup carries no flow label
  if (fields & inet::kMpHashSrcPort) add(std::uint64_t{flow.sport} | 1ull << 42);
  if (fields & inet::kMpHashDstPort) add(std::uint64_t{flow.dport} | 1ull << 43);
  // Linux: the multipath code uses the flow hash shifted right by one (31 bits).
  return static_cast<std::uint32_t>(mix(h) >> 33);
}

int mp_select(Route& r, std::uint32_t hash, TimePoint now, const std::vector<char>& good,
              bool use_neigh) {
  const auto& hops = r.info.nexthops;
  if (hops.size() < 2 && !(r.nh && r.nh->res)) return -1;
  if (r.nh && r.nh->info.is_group()) {
    Nexthop& g = *r.nh;
    // Linux: nexthop_select_path_res — the bucket, whatever its member's state.
    if (g.res) {
      const std::uint32_t id = res_select(g, hash, now);
      for (std::size_t i = 0; i < g.info.group.size(); ++i)
        if (g.info.group[i].id == id) return static_cast<int>(i);
      return -1;
    }
    // Linux: nh_hthr_group_rebalance over every member (a member whose device fails
    // leaves the group) and nexthop_select_path_hthr, which passes over a member whose
    // neighbour is not valid (and takes the first member when none is good).
    std::vector<std::uint32_t> w;
    for (const inet::NexthopMember& m : g.info.group) w.push_back(m.weight);
    const int hop = first_at_or_above(upper_bounds(w), hash, good);
    return hop >= 0 ? hop : 0;
  }
  // Linux: fib_rebalance / rt6_multipath_rebalance — a hop whose device is down (dead)
  // has no share.
  std::vector<std::uint32_t> w(hops.size(), 0);
  for (std::size_t h = 0; h < hops.size(); ++h) {
    const Device* d = h == 0 ? r.dev : (h - 1 < r.extra.size() ? r.extra[h - 1].dev : nullptr);
    if (d && d->is_up()) w[h] = weight_of(hops[h]);
  }
  return first_at_or_above(upper_bounds(w), hash, use_neigh ? good : std::vector<char>{});
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

MultipathHashConf multipath_hash_conf(Control& ctl, Namespace& ns) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  return net_state(ns).mp_hash;
}

Result<void> set_multipath_hash_conf(Control& ctl, Namespace& ns, const MultipathHashConf& c) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  // Linux: proc_fib_multipath_hash_policy (0..3), proc_fib_multipath_hash_fields
  // (1..FIB_MULTIPATH_HASH_FIELD_ALL_MASK).
  if (c.policy4 > 3 || c.policy6 > 3) return fail(EINVAL, "multipath hash policy must be 0..3");
  auto fields_ok = [](std::uint32_t f) { return f >= 1 && f <= kMpHashAllFields; };
  if (!fields_ok(c.fields4) || !fields_ok(c.fields6))
    return fail(EINVAL, "multipath hash fields must be 1..{}", kMpHashAllFields);
  net_state(ns).mp_hash = c;
  return ok();
}

bool nexthop_compat_mode(Control& ctl, Namespace& ns) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  return net_state(ns).nh_compat;
}

Result<void> set_nexthop_compat_mode(Control& ctl, Namespace& ns, bool on) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  net_state(ns).nh_compat = on;
  return ok();
}

std::uint32_t multipath_hash(Control& ctl, Namespace& ns, const Flow& flow) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  return mp_hash(engine_proto(ctl.engine()), net_state(ns), flow);
}

}  // namespace ifcore::inet
