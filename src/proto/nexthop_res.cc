// proto/nexthop_res.cc — the bucket tables of resilient nexthop groups (Linux:
// net/ipv4/nexthop.c's nh_res_* functions, semantics only): how many buckets each member
// wants, which bucket moves to which member and when, the engine-wide timer that moves
// the buckets still waiting, and RTM_GETNEXTHOPBUCKET's views of the tables.
//
// Context: control lock, everywhere. Time is the engine's clock (ep.clock), so tests move
// buckets by advancing a FakeTime and running the engine's timers.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/nexthop.h>

#include <algorithm>
#include <chrono>

#include "proto/state.h"

namespace ifcore::proto {

using inet::NexthopBucket;

namespace {

// Timers and idle times are in clock ticks on the wire (USER_HZ, 100 a second).
constexpr Duration kTick = std::chrono::milliseconds(10);
// Linux: NH_RES_UPKEEP_DW_MINIMUM_INTERVAL (HZ / 2), the shortest wait between two passes.
constexpr Duration kMinUpkeepInterval = std::chrono::milliseconds(500);

Duration ticks(std::uint32_t n) {
  return kTick * static_cast<Duration::rep>(n);
}

std::uint64_t to_ticks(Duration d) {
  return d <= Duration::zero() ? 0 : static_cast<std::uint64_t>(d / kTick);
}

// The position of member `id` in `g`'s group, or -1.
int member_index(const Nexthop& g, std::uint32_t id) {
  const auto& m = g.info.group;
  for (std::size_t i = 0; i < m.size(); ++i)
    if (m[i].id == id) return static_cast<int>(i);
  return -1;
}

// Counts the buckets each member holds; a bucket whose member is no longer in the group
// is freed (Linux: nh_res_table_migrate_buckets).
void recount(Nexthop& g, ResTable& t) {
  t.count.assign(g.info.group.size(), 0);
  for (ResBucket& b : t.buckets) {
    if (!b.occupied) continue;
    int k = member_index(g, b.nhid);
    if (k < 0)
      b.occupied = false;
    else
      ++t.count[static_cast<std::size_t>(k)];
  }
}

// Linux: nh_res_group_rebalance — member i wants the buckets between the rounded shares
// of the running weight sums before and after it; those short of that are listed, the
// last such member first.
void rebalance(Nexthop& g, ResTable& t, TimePoint now) {
  const auto& m = g.info.group;
  t.wants.assign(m.size(), 0);
  t.underweight.clear();
  std::uint64_t total = 0;
  for (const inet::NexthopMember& x : m) total += x.weight;
  const std::uint64_t n = t.buckets.size();
  std::uint64_t sum = 0, prev = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    sum += m[i].weight;
    const std::uint64_t upper = (n * sum + total / 2) / total;  // rounded to the closest
    t.wants[i] = static_cast<std::uint32_t>(upper - prev);
    prev = upper;
    if (t.count[i] < t.wants[i]) {
      if (t.underweight.empty()) t.unbalanced_since = now;
      t.underweight.insert(t.underweight.begin(), m[i].id);
    }
  }
}

NexthopBucket report(const Nexthop& g, std::size_t i, TimePoint now) {
  const ResBucket& b = g.res->buckets[i];
  NexthopBucket r;
  r.group = g.info.id;
  r.protocol = g.info.protocol;
  r.index = static_cast<std::uint16_t>(i);
  r.nhid = b.nhid;
  r.idle_time = to_ticks(now - b.used);
  return r;
}

// Linux: nh_res_table_upkeep — moves every bucket that must (free) or may (its member
// holds too many, and it is idle or the table has been unbalanced too long) to the first
// member short of buckets; `announce`: RTM_NEWNEXTHOPBUCKET for each move. A table left
// unbalanced is due again at the earliest moment a bucket may move (at least half a
// second on).
void upkeep(EngineProto& ep, Namespace& ns, Nexthop& g, TimePoint now, bool announce) {
  ResTable& t = *g.res;
  const inet::NexthopResilient& cfg = g.info.resilient;
  const Duration idle = ticks(cfg.idle_timer), unbalanced = ticks(cfg.unbalanced_timer);
  TimePoint deadline = now + (cfg.unbalanced_timer ? unbalanced : idle);
  auto sooner = [&](TimePoint p) { deadline = std::min(deadline, p); };
  for (std::size_t i = 0; i < t.buckets.size() && !t.underweight.empty(); ++i) {
    ResBucket& b = t.buckets[i];
    if (b.occupied) {
      auto k = static_cast<std::size_t>(member_index(g, b.nhid));
      if (t.count[k] <= t.wants[k]) continue;  // balanced or short: stays
      // A bucket not used since it last moved is idle at once.
      const TimePoint idle_point = b.used == b.migrated ? now : b.used + idle;
      if (now < idle_point) {
        bool forced = false;
        if (cfg.unbalanced_timer) {
          const TimePoint unb_point = t.unbalanced_since + unbalanced;
          if (now > unb_point)
            forced = true;
          else
            sooner(unb_point);
        }
        if (!forced) {
          sooner(idle_point);
          continue;
        }
      }
      --t.count[k];
    }
    const std::uint32_t to = t.underweight.front();
    const auto k = static_cast<std::size_t>(member_index(g, to));
    b.nhid = to;
    b.occupied = true;
    b.used = b.migrated = now;
    ++t.count[k];
    if (announce)
      for (auto* l : ep.listeners) l->on_nexthop_bucket(ns, report(g, i, now));
    if (t.count[k] == t.wants[k]) t.underweight.erase(t.underweight.begin());
  }
  const std::pair<int, std::uint32_t> key{ns.id(), g.info.id};
  if (t.underweight.empty()) {
    ep.nh_res_due.erase(key);
    return;
  }
  ep.nh_res_due[key] = std::max(deadline, now + kMinUpkeepInterval);
}

// The engine's bucket timer: every table due runs its upkeep, announced.
void run_due(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  RetireScope scope(ep);
  const TimePoint now = ctl.engine().time().now();
  std::vector<std::pair<int, std::uint32_t>> due;
  for (const auto& [key, at] : ep.nh_res_due)
    if (at <= now) due.push_back(key);
  for (const auto& key : due) {
    ep.nh_res_due.erase(key);
    Namespace* ns = ctl.find_namespace_by_id(key.first);
    if (!ns) continue;
    Nexthop* g = nexthop_find(net_state(*ns), key.second);
    if (g && g->res) upkeep(ep, *ns, *g, now, true);
  }
  res_arm(ctl);
}

// Linux: nexthop_find_group_resilient.
Result<Nexthop*> find_resilient(NetState& st, std::uint32_t id) {
  Nexthop* g = nexthop_find(st, id);
  if (!g) return fail(ENOENT);
  if (!g->info.is_group()) return fail(EINVAL, "Not a nexthop group");
  if (!g->res) return fail(EINVAL, "Nexthop group not of type resilient");
  return g;
}

}  // namespace

void res_table_create(EngineProto& ep, Namespace& ns, Nexthop& g, TimePoint now) {
  g.res = std::make_unique<ResTable>();
  g.res->buckets.resize(g.info.resilient.buckets);
  recount(g, *g.res);
  rebalance(g, *g.res, now);
  upkeep(ep, ns, g, now, false);
}

void res_table_regroup(EngineProto& ep, Namespace& ns, Nexthop& g, TimePoint now) {
  ResTable& t = *g.res;
  const bool was_unbalanced = !t.underweight.empty();
  const TimePoint since = t.unbalanced_since;
  recount(g, t);
  rebalance(g, t, now);
  // Linux: replace_nexthop_grp_res — a table that stays unbalanced keeps its start.
  if (was_unbalanced && !t.underweight.empty()) t.unbalanced_since = since;
  upkeep(ep, ns, g, now, false);
}

std::uint32_t res_select(Nexthop& g, std::uint32_t hash, TimePoint now) {
  ResBucket& b = g.res->buckets[hash % g.res->buckets.size()];
  b.used = now;
  return b.nhid;
}

std::uint64_t res_unbalanced_ticks(const Nexthop& g, TimePoint now) {
  if (!g.res || g.res->underweight.empty()) return 0;
  return to_ticks(now - g.res->unbalanced_since);
}

void res_arm(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  if (!ep.nh_res_timer) return;
  if (ep.nh_res_due.empty()) {
    cancel_timer(ctl, ep.nh_res_timer);
    return;
  }
  TimePoint first = ep.nh_res_due.begin()->second;
  for (const auto& [key, at] : ep.nh_res_due) first = std::min(first, at);
  arm_timer(ctl, ep.nh_res_timer, first);
}

void res_init(Control& ctl, EngineProto& ep) {
  ep.nh_res_timer = add_timer(ctl, [](Control& c) { run_due(c); });
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

Result<std::vector<NexthopBucket>> list_nexthop_buckets(Control& ctl, Namespace& ns,
                                                        const NexthopBucketFilter& f) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  NetState& st = net_state(ns);
  const TimePoint now = ctl.engine().time().now();
  std::vector<NexthopBucket> out;
  auto one = [&](const Nexthop& g) {
    for (std::size_t i = 0; i < g.res->buckets.size(); ++i) {
      const ResBucket& b = g.res->buckets[i];
      const Nexthop* m = nexthop_find(st, b.nhid);
      if (!m) continue;
      // Linux: nh_dump_filtered, on the bucket's nexthop.
      if (f.groups) continue;
      if (f.family && m->info.family != f.family) continue;
      Device* dev = m->ref.get();
      if (f.oif && (!dev || dev->ifindex() != f.oif)) continue;
      if (f.master) {
        Device* master = dev ? dev->master() : nullptr;
        if (!master || master->ifindex() != f.master) continue;
      }
      if (f.nhid && b.nhid != f.nhid) continue;
      out.push_back(report(g, i, now));
    }
  };
  if (f.id) {
    auto g = find_resilient(st, f.id);
    if (!g) return fail(g.error());
    one(**g);
    return out;
  }
  std::vector<const Nexthop*> groups;
  for (const auto& [id, nh] : st.nexthops)
    if (nh->res) groups.push_back(nh.get());
  std::sort(groups.begin(), groups.end(),
            [](const Nexthop* a, const Nexthop* b) { return a->info.id < b->info.id; });
  for (const Nexthop* g : groups) one(*g);
  return out;
}

Result<NexthopBucket> get_nexthop_bucket(Control& ctl, Namespace& ns, std::uint32_t id,
                                         std::uint16_t index) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  auto g = find_resilient(net_state(ns), id);
  if (!g) return fail(g.error());
  if (index >= (*g)->res->buckets.size()) return fail(ENOENT, "Bucket index out of bounds");
  return report(**g, index, ctl.engine().time().now());
}

void nexthop_res_upkeep(Control& ctl) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  run_due(ctl);
}

}  // namespace ifcore::inet
