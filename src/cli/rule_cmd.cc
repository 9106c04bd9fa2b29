// cli/rule_cmd.cc — `ifc rule add|delete|show|list|flush`: RTM_NEWRULE / RTM_DELRULE /
// RTM_GETRULE, with `ip rule`'s words, filters and output (text and JSON).
#include <net/if.h>
#include <netdb.h>

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>

#include <cstdio>
#include <cstring>

#include "cli/commands.h"
#include "cli/rule_print.h"
#include "rtnl/wire/rule.h"

namespace ifcore::cli {
namespace {

std::optional<std::uint32_t> realm_number(const std::string& s) {
  if (s == "cosmos") return 0u;
  auto n = parse_u32(s, "");
  if (!n || *n > 0xffff) return std::nullopt;
  return *n;
}
// `realms FROM/TO` or `realms TO` (raw: a number of both halves).
std::optional<std::uint32_t> realms(const std::string& s) {
  auto slash = s.find('/');
  if (slash == std::string::npos) {
    if (auto n = parse_u32(s, ""); n) return *n;
    return realm_number(s);
  }
  auto from = realm_number(s.substr(0, slash));
  auto to = realm_number(s.substr(slash + 1));
  if (!from || !to) return std::nullopt;
  return (*from << 16) | *to;
}

std::optional<std::uint8_t> ipproto_number(const std::string& s) {
  for (int p : {int{IPPROTO_TCP}, int{IPPROTO_UDP}, int{IPPROTO_SCTP}, int{IPPROTO_ICMP},
                int{IPPROTO_ICMPV6}})
    if (s == ipproto_name(std::uint8_t(p))) return std::uint8_t(p);
  if (const protoent* pe = getprotobyname(s.c_str())) return std::uint8_t(pe->p_proto);
  auto n = parse_u32(s, "");
  if (!n || *n > 255) return std::nullopt;
  return std::uint8_t(*n);
}

// `START-END` or `PORT` (a range of one).
std::optional<fib_rule_port_range> port_range(const std::string& s) {
  unsigned a = 0, b = 0;
  char extra = 0;
  int n = std::sscanf(s.c_str(), "%u-%u%c", &a, &b, &extra);
  if (n == 1) b = a;
  if (n < 1 || n > 2 || a > 0xffff || b > 0xffff) return std::nullopt;
  return fib_rule_port_range{std::uint16_t(a), std::uint16_t(b)};
}

std::optional<std::uint8_t> route_type_number(const std::string& s) {
  if (s == "brd") return RTN_BROADCAST;
  for (std::size_t i = 0; i < std::size(kRouteTypes); ++i)
    if (s == kRouteTypes[i]) return std::uint8_t(i);
  auto n = parse_u32(s, "");
  if (!n || *n > 255) return std::nullopt;
  return std::uint8_t(*n);
}

// What `ip rule show|flush` selects (iproute2's filter_nlmsg).
struct RuleFilter {
  std::optional<std::uint32_t> pref;
  bool invert = false;
  std::optional<std::uint8_t> tos;
  std::uint32_t fwmark = 0, fwmask = 0;
  std::optional<std::string> iif, oif;
  bool l3mdev = false;
  std::optional<fib_rule_uid_range> uid;
  std::uint64_t tun_id = 0;
  std::uint32_t table = 0;
  std::optional<Prefix> src, dst;
  std::uint8_t protocol = 0, protocol_mask = 0;
  std::uint8_t ipproto = 0;
  std::optional<fib_rule_port_range> sport, dport;
};

bool prefix_selects(const Prefix& p, const std::optional<IpAddr>& addr, std::uint8_t len,
                    int family) {
  int want = p.len < 0 ? host_len(family) : p.len;
  if (p.addr.family() != family || want > len) return false;
  if (want == 0) return true;
  return addr && addr->in_prefix(p.addr, want);
}

bool selected(const RuleFilter& f, const wire::RuleMessage& r) {
  if (f.pref && *f.pref != r.priority.value_or(0)) return false;
  if (f.invert && !(r.flags & FIB_RULE_INVERT)) return false;
  if (f.src && !f.src->any && !prefix_selects(*f.src, r.src, r.src_len, r.family)) return false;
  if (f.dst && !f.dst->any && !prefix_selects(*f.dst, r.dst, r.dst_len, r.family)) return false;
  if (f.tos && *f.tos != r.tos) return false;
  if (f.fwmark && f.fwmark != r.fwmark.value_or(0)) return false;
  if (f.fwmask && f.fwmask != r.fwmask.value_or(0)) return false;
  if (f.iif && (!r.iifname || *r.iifname != *f.iif)) return false;
  if (f.oif && (!r.oifname || *r.oifname != *f.oif)) return false;
  if (f.l3mdev && !r.l3mdev.value_or(0)) return false;
  if (f.uid &&
      (!r.uid_range || r.uid_range->start != f.uid->start || r.uid_range->end != f.uid->end))
    return false;
  if (f.ipproto && f.ipproto != r.ip_proto.value_or(0)) return false;
  if (f.sport && (!r.sport || r.sport->start != f.sport->start || r.sport->end != f.sport->end))
    return false;
  if (f.dport && (!r.dport || r.dport->start != f.dport->start || r.dport->end != f.dport->end))
    return false;
  if (f.tun_id && f.tun_id != r.tun_id.value_or(0)) return false;
  if (f.table && f.table != r.table_or_id()) return false;
  return true;
}

// The value words `ip rule add|del` and `ip rule show|flush` share, each read after its
// keyword with iproute2's error for a bad one.
Result<std::uint32_t> u32_value(Args& a, const char* what) {
  auto v = a.value();
  if (!v) return fail(v.error());
  return parse_u32(*v, what);
}
Result<std::uint8_t> tos_value(Args& a) {
  auto v = a.value();
  if (!v) return fail(v.error());
  auto t = ds_number(*v);
  if (!t) return invarg("TOS value is invalid\n", *v);
  return *t;
}
// `fwmark MARK[/MASK]`.
Result<std::pair<std::uint32_t, std::optional<std::uint32_t>>> fwmark_value(Args& a) {
  auto v = a.value();
  if (!v) return fail(v.error());
  std::string mark = *v;
  std::optional<std::string> mask;
  if (auto s = mark.find('/'); s != std::string::npos) {
    mask = mark.substr(s + 1);
    mark.resize(s);
  }
  auto n = parse_u32(mark, "fwmark value is invalid\n");
  if (!n) return fail(n.error());
  std::optional<std::uint32_t> k;
  if (mask) {
    auto got = parse_u32(*mask, "fwmask value is invalid\n");
    if (!got) return fail(got.error());
    k = *got;
  }
  return std::pair{*n, k};
}
Result<std::string> ifname_value(Args& a, const std::string& keyword) {
  auto v = a.value();
  if (!v) return fail(v.error());
  if (v->empty() || v->size() >= IFNAMSIZ || v->find_first_of("/ \t\n:") != std::string::npos)
    return invarg(
        keyword == "oif" ? "\"oif\" not a valid ifname" : "\"iif\"/\"dev\" not a valid ifname", *v);
  return *v;
}
Result<fib_rule_uid_range> uid_value(Args& a) {
  auto v = a.value();
  if (!v) return fail(v.error());
  unsigned s = 0, e = 0;
  if (std::sscanf(v->c_str(), "%u-%u", &s, &e) != 2) return invarg("invalid UID range\n", *v);
  return fib_rule_uid_range{s, e};
}
Result<std::uint64_t> tun_id_value(Args& a) {
  auto v = a.value();
  if (!v) return fail(v.error());
  char* end = nullptr;
  errno = 0;
  unsigned long long id = std::strtoull(v->c_str(), &end, 0);
  if (v->empty() || *end || errno) return invarg("\"tun_id\" value is invalid\n", *v);
  return id;
}
Result<std::uint8_t> ipproto_value(Args& a) {
  auto v = a.value();
  if (!v) return fail(v.error());
  auto p = ipproto_number(*v);
  if (!p) return invarg("Invalid \"ipproto\" value\n", *v);
  return *p;
}
Result<fib_rule_port_range> ports_value(Args& a, const std::string& keyword) {
  auto v = a.value();
  if (!v) return fail(v.error());
  auto r = port_range(*v);
  if (!r) return invarg(keyword == "sport" ? "invalid port range\n" : "invalid dport range\n", *v);
  return *r;
}

Result<void> rule_modify(Ctx& c, Args& a, std::uint16_t type) {
  const bool add = type == RTM_NEWRULE;
  if (a.done()) return die(1, "\"ip rule {}\" requires arguments.", add ? "add" : "del");
  wire::RuleMessage m;
  m.family = std::uint8_t(c.family == AF_INET6 ? AF_INET6 : c.family == AF_INET ? AF_INET : 0);
  m.action = add ? FR_ACT_TO_TBL : FR_ACT_UNSPEC;
  bool table_given = false, l3mdev = false;
  std::uint32_t table = 0;
  while (!a.done()) {
    std::string w = a.take();
    auto val = [&]() { return a.value(); };
    auto need = [&](Result<std::string> v) -> Result<std::string> { return v; };
    if (w == "not") {
      m.flags |= FIB_RULE_INVERT;
    } else if (w == "from" || w == "to") {
      auto v = need(val());
      if (!v) return fail(v.error());
      auto p = prefix_or_exit(*v, m.family);
      if (!p) return fail(p.error());
      std::uint8_t len = std::uint8_t(p->len < 0 ? (p->any ? 0 : int(p->addr.size() * 8)) : p->len);
      if (w == "from") {
        m.src_len = len;
        if (!p->any) m.src = p->addr;
      } else {
        m.dst_len = len;
        if (!p->any) m.dst = p->addr;
      }
    } else if (matches(w, "preference") || matches(w, "order") || matches(w, "priority")) {
      auto n = u32_value(a, "preference value is invalid\n");
      if (!n) return fail(n.error());
      m.priority = *n;
    } else if (w == "tos" || matches(w, "dsfield")) {
      auto t = tos_value(a);
      if (!t) return fail(t.error());
      m.tos = *t;
    } else if (w == "fwmark") {
      auto f = fwmark_value(a);
      if (!f) return fail(f.error());
      m.fwmark = f->first;
      if (f->second) m.fwmask = *f->second;
    } else if (matches(w, "realms")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto r = realms(*v);
      if (!r) return invarg("invalid realms\n", *v);
      m.flow = *r;
    } else if (matches(w, "protocol")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto p = rt_proto_number(*v);
      if (!p) return invarg("\"protocol\" value is invalid\n", *v);
      m.protocol = *p;
    } else if (matches(w, "tun_id")) {
      auto id = tun_id_value(a);
      if (!id) return fail(id.error());
      m.tun_id = *id;
    } else if (matches(w, "table") || w == "lookup") {
      auto v = val();
      if (!v) return fail(v.error());
      auto t = table_number(*v);
      if (!t) return invarg("invalid table ID\n", *v);
      table = *t;
      if (table < 256) {
        m.table = std::uint8_t(table);
      } else {
        m.table = RT_TABLE_UNSPEC;
        m.table_id = table;
      }
      table_given = true;
    } else if (matches(w, "suppress_prefixlength") || w == "sup_pl") {
      auto v = val();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "suppress_prefixlength value is invalid\n");
      if (!n || *n > 0x7fffffff) return invarg("suppress_prefixlength value is invalid\n", *v);
      m.suppress_prefixlen = std::int32_t(*n);
    } else if (matches(w, "suppress_ifgroup") || w == "sup_group") {
      auto v = val();
      if (!v) return fail(v.error());
      std::int32_t g = 0;
      if (*v != "default") {
        auto n = parse_u32(*v, "Invalid \"suppress_ifgroup\" value\n");
        if (!n) return fail(n.error());
        g = std::int32_t(*n);
      }
      m.suppress_ifgroup = g;
    } else if (w == "dev" || w == "iif" || w == "oif") {
      auto n = ifname_value(a, w);
      if (!n) return fail(n.error());
      (w == "oif" ? m.oifname : m.iifname) = *n;
    } else if (w == "l3mdev") {
      m.l3mdev = 1;
      table_given = true;
      l3mdev = true;
    } else if (w == "uidrange") {
      auto u = uid_value(a);
      if (!u) return fail(u.error());
      m.uid_range = *u;
    } else if (w == "ipproto") {
      auto p = ipproto_value(a);
      if (!p) return fail(p.error());
      m.ip_proto = *p;
    } else if (w == "sport" || w == "dport") {
      auto r = ports_value(a, w);
      if (!r) return fail(r.error());
      (w == "sport" ? m.sport : m.dport) = *r;
    } else {
      if (w == "type") {
        auto v = val();
        if (!v) return fail(v.error());
        w = *v;
      }
      if (matches(w, "help")) return die(255, "Usage: ip rule {{ add | del }} SELECTOR ACTION");
      if (matches(w, "goto")) {
        auto v = val();
        if (!v) return fail(v.error());
        auto n = parse_u32(*v, "invalid target\n");
        if (!n) return fail(n.error());
        m.goto_target = *n;
        m.action = FR_ACT_GOTO;
      } else if (matches(w, "nop")) {
        m.action = FR_ACT_NOP;
      } else {
        auto t = route_type_number(w);
        if (!t) return invarg("Failed to parse rule type", w);
        m.action = *t;
      }
      table_given = true;
    }
  }
  if (l3mdev && table) return die(1, "table can not be specified for l3mdev rules");
  if (!m.family) m.family = AF_INET;
  if (!table_given && add) m.table = RT_TABLE_MAIN;
  wire::MessageBuilder b;
  std::uint16_t flags = NLM_F_REQUEST | (add ? NLM_F_CREATE | NLM_F_EXCL : 0);
  auto e = wire::encode_rule(b, {type, flags, c.client->next_seq(), 0}, m);
  if (!e) return die(2, "{}", e.error().message);
  return c.client->talk(b);
}

Result<void> rule_show_or_flush(Ctx& c, Args& a, bool flush) {
  int family = c.family == AF_INET6 ? AF_INET6 : AF_INET;
  RuleFilter f;
  while (!a.done()) {
    std::string w = a.take();
    auto val = [&]() { return a.value(); };
    if (matches(w, "preference") || matches(w, "order") || matches(w, "priority")) {
      auto n = u32_value(a, "preference value is invalid\n");
      if (!n) return fail(n.error());
      f.pref = *n;
    } else if (w == "not") {
      f.invert = true;
    } else if (w == "tos" || w == "dsfield") {
      auto t = tos_value(a);
      if (!t) return fail(t.error());
      f.tos = *t;
    } else if (w == "fwmark") {
      auto m = fwmark_value(a);
      if (!m) return fail(m.error());
      f.fwmark = m->first;
      f.fwmask = m->second.value_or(0);
    } else if (w == "dev" || w == "iif" || w == "oif") {
      auto n = ifname_value(a, w);
      if (!n) return fail(n.error());
      (w == "oif" ? f.oif : f.iif) = *n;
    } else if (w == "l3mdev") {
      f.l3mdev = true;
    } else if (w == "uidrange") {
      auto u = uid_value(a);
      if (!u) return fail(u.error());
      f.uid = *u;
    } else if (matches(w, "tun_id")) {
      auto id = tun_id_value(a);
      if (!id) return fail(id.error());
      f.tun_id = *id;
    } else if (matches(w, "lookup") || matches(w, "table")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto t = table_number(*v);
      if (!t) return invarg("table id value is invalid\n", *v);
      f.table = *t;
    } else if (matches(w, "from") || matches(w, "src")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto p = parse_prefix(*v, family, "from value is invalid\n");
      if (!p) return fail(p.error());
      f.src = *p;
    } else if (matches(w, "protocol")) {
      auto v = val();
      if (!v) return fail(v.error());
      auto p = rt_proto_number(*v);
      if (p) {
        f.protocol = *p;
        f.protocol_mask = 0xff;
      } else if (*v != "all") {
        return invarg("invalid \"protocol\"\n", *v);
      }
    } else if (w == "ipproto") {
      auto p = ipproto_value(a);
      if (!p) return fail(p.error());
      f.ipproto = *p;
    } else if (w == "sport" || w == "dport") {
      auto r = ports_value(a, w);
      if (!r) return fail(r.error());
      (w == "sport" ? f.sport : f.dport) = *r;
    } else {
      if (matches(w, "dst") || matches(w, "to")) {
        auto v = val();
        if (!v) return fail(v.error());
        w = *v;
      }
      auto p = parse_prefix(w, family, "to value is invalid\n");
      if (!p) return fail(p.error());
      f.dst = *p;
    }
  }
  std::vector<std::pair<wire::RuleMessage, std::vector<std::uint8_t>>> rules;
  wire::MessageBuilder b;
  b.begin({RTM_GETRULE, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
  fib_rule_hdr frh{};
  frh.family = std::uint8_t(family);
  b.put_struct(frh);
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  IFCORE_TRY(c.client->dump(b, [&](const wire::Message& m) {
    if (m.hdr.nlmsg_type != RTM_NEWRULE) return;
    auto r = wire::decode_rule(m);
    if (!r || r->family != family || !selected(f, *r)) return;
    rules.emplace_back(*r, std::vector<std::uint8_t>(m.bytes.begin(), m.bytes.end()));
  }));
  if (flush) {
    for (auto& [r, bytes] : rules) {
      if ((f.protocol ^ r.protocol.value_or(0)) & f.protocol_mask) continue;
      if (!r.priority) continue;  // iproute2 deletes only the rules that have a priority
      wire::MessageBuilder d;
      auto e = wire::encode_rule(d, {RTM_DELRULE, NLM_F_REQUEST, c.client->next_seq(), 0}, r);
      if (!e) return die(2, "{}", e.error().message);
      IFCORE_TRY(c.client->talk(d));
    }
    return ok();
  }
  c.out->open_array();
  for (auto& [r, bytes] : rules) print_rule(c, r, false);
  c.out->close();
  return ok();
}

}  // namespace

Result<void> do_rule(Ctx& c, Args& a) {
  if (a.done()) return rule_show_or_flush(c, a, false);
  std::string cmd = a.take();
  if (matches(cmd, "list") || matches(cmd, "lst") || matches(cmd, "show"))
    return rule_show_or_flush(c, a, false);
  if (matches(cmd, "add")) return rule_modify(c, a, RTM_NEWRULE);
  if (matches(cmd, "delete")) return rule_modify(c, a, RTM_DELRULE);
  if (matches(cmd, "flush")) return rule_show_or_flush(c, a, true);
  return die(255, "Command \"{}\" is unknown, try \"ip rule help\".", cmd);
}

}  // namespace ifcore::cli
