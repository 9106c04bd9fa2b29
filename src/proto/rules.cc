// proto/rules.cc — policy-routing rules (Linux: net/core/fib_rules.c with
// fib4_rules.c/fib6_rules.c, semantics only): per namespace and family an ordered list,
// the default rules, adding (validation, default priority, position), deleting by the
// selectors given, the devices a rule names (attached by name, detached when they go), and
// the match a lookup makes (fib.cc's get_route walks the list).
//
// Context: control lock, everywhere. A rule holds no reference on a device: it names it
// and keeps its ifindex while it exists, as Linux does.
#include <linux/fib_rules.h>
#include <linux/ip.h>
#include <linux/rtnetlink.h>

#include <algorithm>

#include "proto/state.h"

namespace ifcore::proto {

namespace {

using inet::RuleInfo;
using inet::RuleRequest;

constexpr std::uint32_t kAnyUid = 0xffffffffu;

// Linux: fib_default_rules_init (IPv4) / fib6_rules_net_init (IPv6).
Rule default_rule(int family, std::uint32_t pref, std::uint32_t table) {
  Rule r;
  r.info.family = family;
  r.info.priority = pref;
  r.info.action = FR_ACT_TO_TBL;
  r.info.table = table;
  r.info.protocol = RTPROT_KERNEL;
  return r;
}

bool prefix_match(const IpAddr& rule, std::uint8_t len, const IpAddr& addr) {
  if (!len) return true;
  if (addr.empty() || addr.family() != rule.family()) return false;
  return prefix_of(addr, len) == rule;
}

// Linux: fib_nl2rule's and the family's configure checks, in their order.
Result<void> validate(NetState& st, RuleInfo& r, const RuleRequest& req) {
  const int max = r.family == AF_INET ? 32 : 128;
  if (r.src_len > max || (r.src_len && (r.src.empty() || r.src.family() != r.family)))
    return fail(EINVAL, "Invalid source address");
  if (r.dst_len > max || (r.dst_len && (r.dst.empty() || r.dst.family() != r.family)))
    return fail(EINVAL, "Invalid dst address");
  if (r.l3mdev && r.l3mdev != 1) return fail(EINVAL, "Invalid l3mdev attribute");
  if (r.uid && r.uid->start > r.uid->end) return fail(EINVAL, "Invalid uid range");
  if (r.sport && (r.sport->start == 0 || r.sport->start > r.sport->end))
    return fail(EINVAL, "Invalid sport range");
  if (r.dport && (r.dport->start == 0 || r.dport->start > r.dport->end))
    return fail(EINVAL, "Invalid dport range");
  if (r.action == FR_ACT_GOTO) {
    if (!req.has_goto) return fail(EINVAL, "Missing goto target for action goto");
    if (r.goto_target <= r.priority) return fail(EINVAL, "Backward goto not supported");
  }
  if (r.l3mdev && r.table) return fail(EINVAL, "l3mdev and table are mutually exclusive");
  if (r.tos & 3) return fail(EINVAL, "Invalid dsfield (tos): ECN bits must be 0");
  // Linux: fib4_rule_configure — IPv4 takes the old TOS bits alone (IPTOS_TOS_MASK).
  if (r.family == AF_INET && (r.tos & ~IPTOS_TOS_MASK)) return fail(EINVAL, "Invalid tos");
  if (r.action == FR_ACT_TO_TBL && !r.l3mdev && r.family == AF_INET6 && !r.table)
    return fail(EINVAL, "Invalid table");
  return ok();
}

// Linux: rule_exists — every selector, the action and the priority equal.
bool same_rule(const RuleInfo& a, const RuleInfo& b) {
  return a.action == b.action && a.table == b.table && a.priority == b.priority &&
         a.iifname == b.iifname && a.oifname == b.oifname && a.fwmark == b.fwmark &&
         a.fwmask == b.fwmask && a.tun_id == b.tun_id && a.l3mdev == b.l3mdev && a.uid == b.uid &&
         a.sport == b.sport && a.dport == b.dport && a.ip_proto == b.ip_proto &&
         a.src_len == b.src_len && a.dst_len == b.dst_len && a.src == b.src && a.dst == b.dst &&
         a.tos == b.tos && a.flow == b.flow && a.goto_target == b.goto_target &&
         a.suppress_prefixlen == b.suppress_prefixlen && a.suppress_ifgroup == b.suppress_ifgroup &&
         (a.flags & FIB_RULE_INVERT) == (b.flags & FIB_RULE_INVERT);
}

// Linux: rule_find — only what the request gives must match.
bool selected(const RuleInfo& r, const RuleRequest& req) {
  const RuleInfo& q = req.rule;
  if (q.action && r.action != q.action) return false;
  if (q.table && r.table != q.table) return false;
  if (req.has_priority && r.priority != q.priority) return false;
  if (!q.iifname.empty() && r.iifname != q.iifname) return false;
  if (!q.oifname.empty() && r.oifname != q.oifname) return false;
  if (q.fwmark && r.fwmark != q.fwmark) return false;
  if (q.suppress_ifgroup != -1 && r.suppress_ifgroup != q.suppress_ifgroup) return false;
  if (q.suppress_prefixlen != -1 && r.suppress_prefixlen != q.suppress_prefixlen) return false;
  if (q.fwmask && r.fwmask != q.fwmask) return false;
  if (q.tun_id && r.tun_id != q.tun_id) return false;
  if (q.l3mdev && r.l3mdev != q.l3mdev) return false;
  if (q.uid && r.uid != q.uid) return false;
  if (q.ip_proto && r.ip_proto != q.ip_proto) return false;
  if (q.protocol && r.protocol != q.protocol) return false;
  if (q.sport && r.sport != q.sport) return false;
  if (q.dport && r.dport != q.dport) return false;
  // The family's compare (fib4_rule_compare / fib6_rule_compare).
  if (q.src_len && (r.src_len != q.src_len || r.src != q.src)) return false;
  if (q.dst_len && (r.dst_len != q.dst_len || r.dst != q.dst)) return false;
  if (q.tos && r.tos != q.tos) return false;
  if (req.has_flow && r.flow != q.flow) return false;
  return true;
}

void notify_rule(EngineProto& ep, Namespace& ns, inet::ProtoEvent ev, const Rule& r,
                 const std::vector<Rule>& list) {
  if (ep.listeners.empty()) return;
  RuleInfo shown = rule_report(r, list);
  for (auto* l : ep.listeners) l->on_rule(ns, ev, shown);
}

// Linux: attach_rules / detach_rules.
void attach(std::vector<Rule>& rules, const Device& dev) {
  for (Rule& r : rules) {
    if (r.iifindex == -1 && r.info.iifname == dev.name()) r.iifindex = dev.ifindex();
    if (r.oifindex == -1 && r.info.oifname == dev.name()) r.oifindex = dev.ifindex();
  }
}
void detach(std::vector<Rule>& rules, const Device& dev) {
  for (Rule& r : rules) {
    if (r.iifindex == dev.ifindex()) r.iifindex = -1;
    if (r.oifindex == dev.ifindex()) r.oifindex = -1;
  }
}

class RulesSubscriber final : public Subscriber {
 public:
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    NetState& st = net_state(ev.dev.ns());
    for (auto* rules : {&st.rules4, &st.rules6}) {
      switch (ev.event) {
        case NetdevEvent::Register:
          attach(*rules, ev.dev);
          break;
        case NetdevEvent::Unregister:
          detach(*rules, ev.dev);
          break;
        case NetdevEvent::ChangeName:
          detach(*rules, ev.dev);
          attach(*rules, ev.dev);
          break;
        default:
          break;
      }
    }
    return ok();
  }
};

}  // namespace

void rules_init(NetState& st) {
  st.rules4 = {default_rule(AF_INET, 0, RT_TABLE_LOCAL),
               default_rule(AF_INET, 0x7FFE, RT_TABLE_MAIN),
               default_rule(AF_INET, 0x7FFF, RT_TABLE_DEFAULT)};
  st.rules6 = {default_rule(AF_INET6, 0, RT_TABLE_LOCAL),
               default_rule(AF_INET6, 0x7FFE, RT_TABLE_MAIN)};
}

RuleInfo rule_report(const Rule& r, const std::vector<Rule>& list) {
  RuleInfo out = r.info;
  if (r.iifindex == -1) out.flags |= FIB_RULE_IIF_DETACHED;
  if (r.oifindex == -1) out.flags |= FIB_RULE_OIF_DETACHED;
  if (r.info.action == FR_ACT_GOTO && !goto_target(list, r)) out.flags |= FIB_RULE_UNRESOLVED;
  return out;
}

const Rule* goto_target(const std::vector<Rule>& list, const Rule& r) {
  for (const Rule& x : list)
    if (x.info.priority == r.info.goto_target) return &x;
  return nullptr;
}

bool rule_matches(const Rule& r, const inet::Flow& fl, std::uint32_t l3mdev_table) {
  const RuleInfo& i = r.info;
  auto match = [&] {
    // Linux: fib_rule_match — a locally made packet comes in through the loopback device.
    int iif = fl.iif ? fl.iif : 1;  // LOOPBACK_IFINDEX
    if (r.iifindex && r.iifindex != iif) return false;
    if (r.oifindex && r.oifindex != fl.oif) return false;
    if ((i.fwmark ^ fl.mark) & i.fwmask) return false;
    if (i.tun_id) return false;                   // ifcore's lookups carry no tunnel key
    if (i.l3mdev && !l3mdev_table) return false;  // Linux: l3mdev_fib_rule_match
    if (i.uid && (fl.uid < i.uid->start || fl.uid > i.uid->end)) return false;
    // The family's match (fib4_rule_match / fib6_rule_match).
    if (!prefix_match(i.src, i.src_len, fl.src)) return false;
    if (!prefix_match(i.dst, i.dst_len, fl.dst)) return false;
    if (i.tos && i.tos != (fl.tos & 0xfc)) return false;
    if (i.ip_proto && i.ip_proto != fl.ip_proto) return false;
    if (i.sport && (fl.sport < i.sport->start || fl.sport > i.sport->end)) return false;
    if (i.dport && (fl.dport < i.dport->start || fl.dport > i.dport->end)) return false;
    return true;
  };
  bool m = match();
  return (i.flags & FIB_RULE_INVERT) ? !m : m;
}

void rules_subscribe(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  auto sub = std::make_unique<RulesSubscriber>();
  // Concurrent: it reads and writes its namespace's rules alone.
  ctl.subscribe(*sub, SubscribeOptions{"fib_rules", 0, false,
                                       events_of(NetdevEvent::Register, NetdevEvent::Unregister,
                                                 NetdevEvent::ChangeName),
                                       true});
  ep.subscribers.push_back(std::move(sub));
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

Result<RuleInfo> add_rule(Control& ctl, Namespace& ns, const RuleRequest& req) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  RuleInfo r = req.rule;
  if (r.family != AF_INET && r.family != AF_INET6)
    return fail(EAFNOSUPPORT, "Rule family not supported");
  NetState& st = net_state(ns);
  std::vector<Rule>& list = r.family == AF_INET ? st.rules4 : st.rules6;
  // Linux: fib_nl2rule's defaults — the mark's mask, the priority below the second rule's.
  if (req.has_fwmark && r.fwmark && !req.has_fwmask) r.fwmask = 0xFFFFFFFF;
  if (!req.has_priority) {
    r.priority = 0;
    if (list.size() > 1 && list[1].info.priority) r.priority = list[1].info.priority - 1;
  }
  if (!req.has_goto) r.goto_target = 0;
  if (r.uid && r.uid->start == 0 && r.uid->end == kAnyUid) r.uid.reset();
  if (r.family == AF_INET6) r.flow = 0;
  r.src = r.src_len ? r.src : IpAddr{};
  r.dst = r.dst_len ? r.dst : IpAddr{};
  IFCORE_TRY(validate(st, r, req));
  if (r.src_len) r.src = prefix_of(r.src, r.src_len);
  if (r.dst_len) r.dst = prefix_of(r.dst, r.dst_len);
  if (req.excl)
    for (const Rule& x : list)
      if (same_rule(x.info, r)) return fail(EEXIST);
  // Linux: fib4_rule_configure gives `lookup 0` the first table that does not exist yet
  // and makes it (fib_empty_table), but leaves a table it names as it is; fib6_rule_configure
  // makes the table named. (A dump of a table that does not exist is ENOENT.)
  auto& tables = st.tables(r.family);
  if (r.action == FR_ACT_TO_TBL && !r.l3mdev) {
    if (!r.table) {
      std::uint32_t id = 1;
      while (tables.count(id)) ++id;
      r.table = id;
      (void)tables[r.table];
    } else if (r.family == AF_INET6) {
      (void)tables[r.table];
    }
  }
  Rule rule;
  rule.info = r;
  if (!r.iifname.empty()) {
    Device* d = ctl.find(ns, r.iifname);
    rule.iifindex = d ? d->ifindex() : -1;
  }
  if (!r.oifname.empty()) {
    Device* d = ctl.find(ns, r.oifname);
    rule.oifindex = d ? d->ifindex() : -1;
  }
  auto pos = std::find_if(list.begin(), list.end(),
                          [&](const Rule& x) { return x.info.priority > r.priority; });
  pos = list.insert(pos, std::move(rule));
  if (r.family == AF_INET) st.custom_rules4 = true;
  notify_rule(engine_proto(ctl.engine()), ns, ProtoEvent::New, *pos, list);
  return rule_report(*pos, list);
}

Result<void> delete_rule(Control& ctl, Namespace& ns, const RuleRequest& req) {
  IFCORE_TRY(ctl.check_covers(ns));
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  int family = req.rule.family;
  if (family != AF_INET && family != AF_INET6)
    return fail(EAFNOSUPPORT, "Rule family not supported");
  NetState& st = net_state(ns);
  std::vector<Rule>& list = family == AF_INET ? st.rules4 : st.rules6;
  // Linux: fib_nl2rule gives a delete the mark's mask as it gives an add (a mark without a
  // mask compares all its bits), and rule_find compares a mask that is not 0.
  RuleRequest q = req;
  if (q.has_fwmark && q.rule.fwmark && !q.has_fwmask) q.rule.fwmask = 0xFFFFFFFF;
  auto it =
      std::find_if(list.begin(), list.end(), [&](const Rule& x) { return selected(x.info, q); });
  if (it == list.end()) return fail_log_only(ENOENT, "no such rule");
  Rule gone = std::move(*it);
  list.erase(it);
  if (family == AF_INET) st.custom_rules4 = true;
  notify_rule(engine_proto(ctl.engine()), ns, ProtoEvent::Del, gone, list);
  return ok();
}

std::vector<RuleInfo> list_rules(Control& ctl, Namespace& ns, int family) {
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  NetState& st = net_state(ns);
  std::vector<RuleInfo> out;
  for (int f : {AF_INET, AF_INET6}) {
    if (family && family != f) continue;
    const std::vector<Rule>& list = f == AF_INET ? st.rules4 : st.rules6;
    for (const Rule& r : list) out.push_back(rule_report(r, list));
  }
  return out;
}

}  // namespace ifcore::inet
