// proto/l3mdev.cc — L3 master devices as the protocols see them (Linux: net/l3mdev/l3mdev.c
// and the FIB side of drivers/net/vrf.c, semantics only): the table a device's routes go
// in, the flow's L3 domain a lookup's l3mdev rule follows, and what the protocols do when
// an L3 master registers (its tables, and with the namespace's first one the l3mdev rules).
// Core and the protocols know an L3 master only through `Kind::l3mdev_table`.
//
// Context: control lock, everywhere.
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>

#include "proto/state.h"

namespace ifcore::proto {

namespace {

constexpr std::uint32_t kL3mdevRulePref = 1000;  // Linux: vrf.c FIB_RULE_PREF

// Linux: vrf_fib_rule(dev, family, true) — `1000: from all lookup [l3mdev-table]`, made as
// a request with NLM_F_EXCL whose EEXIST is taken as success.
void add_l3mdev_rule(Control& ctl, Namespace& ns, int family) {
  inet::RuleRequest req;
  req.rule.family = family;
  req.rule.action = FR_ACT_TO_TBL;
  req.rule.l3mdev = 1;
  req.rule.priority = kL3mdevRulePref;
  req.rule.protocol = RTPROT_KERNEL;
  req.has_priority = true;
  req.excl = true;
  auto r = inet::add_rule(ctl, ns, req);
  if (!r && r.error().code != EEXIST)
    ctl.engine().log(LogLevel::Warning,
                     fmt::format("failed to add the l3mdev rule: {}", r.error().message));
}

// Linux: vrf_dev_init (fib_new_table, fib6_new_table: the table exists from the vrf's
// registration) and vrf_newlink (vrf_add_fib_rules once per namespace, with its first vrf;
// the rules stay when the last vrf goes, and a rule the user deleted does not come back).
class L3mdevSubscriber final : public Subscriber {
 public:
  Result<void> on_event(Control& ctl, const EventInfo& ev) override {
    std::uint32_t table = ev.dev.kind().l3mdev_table(ev.dev);
    if (ev.event != NetdevEvent::Register || !table) return ok();
    PluginGuard guard(ctl);  // the rules' announcements reach the engine's listeners
    Namespace& ns = ev.dev.ns();
    NetState& st = net_state(ns);
    (void)st.tables4[table];
    (void)st.tables6[table];
    if (st.l3mdev_rules_added) return ok();
    st.l3mdev_rules_added = true;
    add_l3mdev_rule(ctl, ns, AF_INET);
    add_l3mdev_rule(ctl, ns, AF_INET6);
    return ok();
  }
};

}  // namespace

std::uint32_t l3mdev_fib_table(const Device& dev) {
  if (std::uint32_t t = dev.kind().l3mdev_table(dev)) return t;
  const Device* m = dev.master();
  return m ? m->kind().l3mdev_table(*m) : 0;
}

int l3mdev_master_ifindex(const Device& dev) {
  if (dev.kind().l3mdev_table(dev)) return dev.ifindex();
  const Device* m = dev.master();
  return m && m->kind().l3mdev_table(*m) ? m->ifindex() : 0;
}

bool is_l3mdev_master(const Device& dev) {
  return dev.kind().l3mdev_table(dev) != 0;
}

void l3mdev_subscribe(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  auto sub = std::make_unique<L3mdevSubscriber>();
  ctl.subscribe(*sub, SubscribeOptions{"l3mdev", 0, false, events_of(NetdevEvent::Register),
                                       true});  // the plug-in lock taken when needed
  ep.subscribers.push_back(std::move(sub));
}

}  // namespace ifcore::proto
