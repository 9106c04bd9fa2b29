// rtnl/rule_handlers.cc — policy rules: RTM_NEWRULE / RTM_DELRULE / RTM_GETRULE (dump) on
// top of ifcore/inet.h, and RTNLGRP_IPV4_RULE / RTNLGRP_IPV6_RULE notifications (Linux:
// fib_nl_newrule, fib_nl_delrule, fib_nl_dumprule, fib_nl_fill_rule).
//
// Lock order: each handler takes the control lock once.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>

#include <cerrno>

#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/proto.h"
#include "rtnl/wire/rule.h"

namespace ifcore::rtnl {

namespace {

unsigned rule_group(int family) {
  return family == AF_INET6 ? RTNLGRP_IPV6_RULE : RTNLGRP_IPV4_RULE;
}

// Linux: fib_nl_fill_rule — FRA_TABLE, FRA_SUPPRESS_PREFIXLEN and FRA_PROTOCOL always.
wire::RuleMessage rule_message(const inet::RuleInfo& r) {
  wire::RuleMessage m;
  m.family = static_cast<std::uint8_t>(r.family);
  m.table = static_cast<std::uint8_t>(r.table < 256 ? r.table : unsigned{RT_TABLE_COMPAT});
  m.table_id = r.table;
  m.suppress_prefixlen = r.suppress_prefixlen;
  m.action = r.action;
  m.flags = r.flags;
  m.protocol = r.protocol;
  if (!r.iifname.empty()) m.iifname = r.iifname;
  if (!r.oifname.empty()) m.oifname = r.oifname;
  if (r.priority) m.priority = r.priority;
  if (r.fwmark) m.fwmark = r.fwmark;
  if (r.fwmark || r.fwmask) m.fwmask = r.fwmask;
  if (r.goto_target) m.goto_target = r.goto_target;
  if (r.tun_id) m.tun_id = r.tun_id;
  if (r.suppress_ifgroup != -1) m.suppress_ifgroup = r.suppress_ifgroup;
  if (r.l3mdev) m.l3mdev = r.l3mdev;
  if (r.uid) m.uid_range = fib_rule_uid_range{r.uid->start, r.uid->end};
  if (r.sport) m.sport = fib_rule_port_range{r.sport->start, r.sport->end};
  if (r.dport) m.dport = fib_rule_port_range{r.dport->start, r.dport->end};
  if (r.ip_proto) m.ip_proto = r.ip_proto;
  // The family's fill (fib4_rule_fill / fib6_rule_fill).
  m.dst_len = r.dst_len;
  m.src_len = r.src_len;
  m.tos = r.tos;
  if (r.dst_len) m.dst = r.dst;
  if (r.src_len) m.src = r.src;
  if (r.family == AF_INET && r.flow) m.flow = r.flow;
  return m;
}

inet::RuleRequest rule_request(const wire::RuleMessage& m, std::uint16_t flags) {
  inet::RuleRequest q;
  inet::RuleInfo& r = q.rule;
  r.family = m.family;
  r.action = m.action;
  r.table = m.table_or_id();
  r.flags = m.flags;
  r.src_len = m.src_len;
  r.dst_len = m.dst_len;
  r.tos = m.tos;
  // A prefix length with no address, or an address of the wrong size, is refused by the
  // family (add_rule's checks): keep what was sent.
  if (m.src) r.src = *m.src;
  if (m.dst) r.dst = *m.dst;
  if (m.iifname) r.iifname = *m.iifname;
  if (m.oifname) r.oifname = *m.oifname;
  q.has_priority = m.priority.has_value();
  r.priority = m.priority.value_or(0);
  q.has_fwmark = m.fwmark.has_value();
  r.fwmark = m.fwmark.value_or(0);
  q.has_fwmask = m.fwmask.has_value();
  r.fwmask = m.fwmask.value_or(0);
  q.has_goto = m.goto_target.has_value();
  r.goto_target = m.goto_target.value_or(0);
  q.has_flow = m.flow.has_value();
  r.flow = m.flow.value_or(0);
  r.tun_id = m.tun_id.value_or(0);
  r.suppress_ifgroup = m.suppress_ifgroup.value_or(-1);
  r.suppress_prefixlen = m.suppress_prefixlen.value_or(-1);
  r.l3mdev = m.l3mdev.value_or(0);
  if (m.uid_range) r.uid = inet::Range<std::uint32_t>{m.uid_range->start, m.uid_range->end};
  if (m.sport) r.sport = inet::Range<std::uint16_t>{m.sport->start, m.sport->end};
  if (m.dport) r.dport = inet::Range<std::uint16_t>{m.dport->start, m.dport->end};
  r.ip_proto = m.ip_proto.value_or(0);
  r.protocol = m.protocol.value_or(0);
  q.excl = flags & NLM_F_EXCL;
  return q;
}

// A prefix length the header gives without its address is refused as a bad address
// (Linux: fib4_rule_configure / fib6_rule_configure find no FRA_SRC).
Result<void> check_addresses(const wire::RuleMessage& m) {
  if (m.family != AF_INET && m.family != AF_INET6) return ok();
  if (m.src_len && !m.src) return fail(EINVAL, "Invalid source address");
  if (m.dst_len && !m.dst) return fail(EINVAL, "Invalid dst address");
  return ok();
}

}  // namespace

void ProtoPublisher::on_rule(Namespace& ns, inet::ProtoEvent ev, const inet::RuleInfo& r) {
  unsigned group = rule_group(r.family);
  if (!hub_.wanted(ns.id(), group)) return;
  std::uint16_t type =
      ev == inet::ProtoEvent::New ? std::uint16_t{RTM_NEWRULE} : std::uint16_t{RTM_DELRULE};
  wire::Header h = hub_.notify_header(ns.id(), type);
  wire::MessageBuilder b;
  if (wire::encode_rule(b, h, rule_message(r))) hub_.publish(ns.id(), group, b.bytes());
}

namespace {

// RTM_NEWRULE and RTM_DELRULE: the request decoded and checked as Linux's fib_nl2rule
// does before either, then `op` under the control lock in the session's namespace.
template <class Op>
Result<void> modify_rule(Request& r, Op op) {
  auto m = wire::decode_rule(r.m);
  if (!m) return fail(m.error());
  if (m->family != AF_INET && m->family != AF_INET6)
    return fail(EAFNOSUPPORT, "Rule family not supported");
  IFCORE_TRY(check_addresses(*m));
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  return op(ctl, **ns, rule_request(*m, r.flags()));
}

}  // namespace

Result<void> handle_newrule(Request& r) {
  return modify_rule(r, [](Control& ctl, Namespace& ns, const inet::RuleRequest& q) {
    auto made = inet::add_rule(ctl, ns, q);
    return made ? ok() : Result<void>(fail(made.error()));
  });
}

Result<void> handle_delrule(Request& r) {
  return modify_rule(r, [](Control& ctl, Namespace& ns, const inet::RuleRequest& q) {
    return inet::delete_rule(ctl, ns, q);
  });
}

Result<void> handle_getrule(Request& r) {
  if (!r.dump()) return fail(EOPNOTSUPP);  // Linux: RTM_GETRULE has no doit
  auto m = wire::decode_rule(r.m);
  if (!m) return fail(m.error());
  // Linux: fib_valid_dumprule_req for strict requests.
  if (r.s.strict_check()) {
    if (r.m.payload().size() < sizeof(fib_rule_hdr))
      return fail(EINVAL, "Invalid header for fib rule dump request");
    if (m->dst_len || m->src_len || m->tos || m->table || m->action || m->flags)
      return fail(EINVAL, "Invalid values in header for fib rule dump request");
    if (r.m.payload().size() > NLMSG_ALIGN(sizeof(fib_rule_hdr)))
      return fail(EINVAL, "Invalid attributes in fib rule dump request");
  }
  if (m->family != AF_UNSPEC && m->family != AF_INET && m->family != AF_INET6)
    return fail(EAFNOSUPPORT);
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  IFCORE_TRY(
      dump_items(r, RTM_NEWRULE, inet::list_rules(ctl, **ns, m->family),
                 [](wire::MessageBuilder& b, const wire::Header& h, const inet::RuleInfo& rule) {
                   return wire::encode_rule(b, h, rule_message(rule));
                 }));
  end_dump(r);
  return ok();
}

}  // namespace ifcore::rtnl
