// cli/rule_print.cc — see rule_print.h.
#include "cli/rule_print.h"

#include <netdb.h>

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>

namespace ifcore::cli {

std::string ipproto_name(std::uint8_t p) {
  switch (p) {
    case IPPROTO_TCP:
      return "tcp";
    case IPPROTO_UDP:
      return "udp";
    case IPPROTO_SCTP:
      return "sctp";
    case IPPROTO_ICMP:
      return "icmp";
    case IPPROTO_ICMPV6:
      return "ipv6-icmp";
    default:
      break;
  }
  if (const protoent* pe = getprotobynumber(p)) return pe->p_name;
  return std::to_string(p);
}

std::string table_name(std::uint32_t t) {
  switch (t) {
    case RT_TABLE_UNSPEC:
      return "unspec";
    case RT_TABLE_DEFAULT:
      return "default";
    case RT_TABLE_MAIN:
      return "main";
    case RT_TABLE_LOCAL:
      return "local";
    default:
      return std::to_string(t);
  }
}

std::string realm_name(std::uint32_t r) {
  return r == 0 ? "cosmos" : std::to_string(r);
}

int host_len(int family) {
  return family == AF_INET6 ? 128 : 32;
}

void print_rule(Ctx& c, const wire::RuleMessage& r, bool deleted) {
  Out& o = *c.out;
  const int hl = host_len(r.family);
  o.open_object();
  if (deleted) o.kv("deleted", true, "Deleted ");
  std::uint32_t prio = r.priority.value_or(0);
  o.kv("priority", prio, fmt::format("{}:\t", prio));
  if (r.flags & FIB_RULE_INVERT) o.kv("not", nullptr, "not ");
  if (r.src) {
    o.text("from ");
    o.kv("src", r.src->to_string(), r.src->to_string());
    if (r.src_len != hl) o.kv("srclen", r.src_len, fmt::format("/{}", r.src_len));
  } else if (r.src_len) {
    o.kv("src", "0", "from 0");
    o.kv("srclen", r.src_len, fmt::format("/{}", r.src_len));
  } else {
    o.kv("src", "all", "from all");
  }
  if (r.dst) {
    o.text(" to ");
    o.kv("dst", r.dst->to_string(), r.dst->to_string());
    if (r.dst_len != hl) o.kv("dstlen", r.dst_len, fmt::format("/{}", r.dst_len));
  } else if (r.dst_len) {
    o.kv("dst", "0", " to 0");
    o.kv("dstlen", r.dst_len, fmt::format("/{}", r.dst_len));
  }
  if (r.tos) o.kv("tos", ds_name(r.tos), " tos " + ds_name(r.tos));
  if (r.fwmark || r.fwmask) {
    std::uint32_t mark = r.fwmark.value_or(0);
    auto hex = [](std::uint32_t v) { return v ? fmt::format("{:#x}", v) : std::string("0"); };
    o.kv("fwmark", hex(mark), " fwmark " + hex(mark));
    if (r.fwmask && *r.fwmask != 0xFFFFFFFFu) o.kv("fwmask", hex(*r.fwmask), "/" + hex(*r.fwmask));
  }
  if (r.iifname) {
    o.kv("iif", *r.iifname, " iif " + *r.iifname);
    if (r.flags & FIB_RULE_IIF_DETACHED) o.kv("iif_detached", nullptr, " [detached]");
  }
  if (r.oifname) {
    o.kv("oif", *r.oifname, " oif " + *r.oifname);
    if (r.flags & FIB_RULE_OIF_DETACHED) o.kv("oif_detached", nullptr, " [detached]");
  }
  if (r.l3mdev.value_or(0)) o.kv("l3mdev", nullptr, " lookup [l3mdev-table]");
  if (r.uid_range) {
    o.kv("uid_start", r.uid_range->start, fmt::format(" uidrange {}", r.uid_range->start));
    o.kv("uid_end", r.uid_range->end, fmt::format("-{}", r.uid_range->end));
  }
  if (r.ip_proto) {
    std::string p = ipproto_name(*r.ip_proto);
    o.kv("ipproto", p, " ipproto " + p);
  }
  for (auto [range, key] : {std::pair{&r.sport, "sport"}, std::pair{&r.dport, "dport"}}) {
    if (!*range) continue;
    const fib_rule_port_range& pr = **range;
    if (pr.start == pr.end) {
      o.kv(key, pr.start, fmt::format(" {} {}", key, pr.start));
    } else {
      o.kv(std::string(key) + "_start", pr.start, fmt::format(" {} {}", key, pr.start));
      o.kv(std::string(key) + "_end", pr.end, fmt::format("-{}", pr.end));
    }
  }
  if (r.tun_id) o.kv("tun_id", *r.tun_id, fmt::format(" tun_id {}", *r.tun_id));
  if (std::uint32_t table = r.table_or_id()) {
    o.kv("table", table_name(table), " lookup " + table_name(table));
    if (r.suppress_prefixlen && *r.suppress_prefixlen != -1)
      o.kv("suppress_prefixlen", *r.suppress_prefixlen,
           fmt::format(" suppress_prefixlength {}", *r.suppress_prefixlen));
    if (r.suppress_ifgroup && *r.suppress_ifgroup != -1) {
      std::string g = *r.suppress_ifgroup == 0 ? "default" : std::to_string(*r.suppress_ifgroup);
      o.kv("suppress_ifgroup", g, " suppress_ifgroup " + g);
    }
  }
  if (r.flow) {
    std::uint32_t from = *r.flow >> 16, to = *r.flow & 0xFFFF;
    if (from)
      o.kv("flow_from", realm_name(from), " realms " + realm_name(from) + "/");
    else
      o.text(" realms ");
    o.kv("flow_to", realm_name(to), realm_name(to));
  }
  if (r.action == RTN_NAT) {
    o.kv("masquerade", nullptr, " masquerade");
  } else if (r.action == FR_ACT_GOTO) {
    if (r.goto_target)
      o.kv("goto", *r.goto_target, fmt::format(" goto {}", *r.goto_target));
    else
      o.kv("goto", "none", " goto none");
    if (r.flags & FIB_RULE_UNRESOLVED) o.kv("unresolved", nullptr, " [unresolved]");
  } else if (r.action == FR_ACT_NOP) {
    o.kv("nop", nullptr, " nop");
  } else if (r.action != FR_ACT_TO_TBL) {
    std::string t =
        r.action < std::size(kRouteTypes) ? kRouteTypes[r.action] : std::to_string(r.action);
    o.kv("action", t, " " + t);
  }
  if (r.protocol && ((*r.protocol && *r.protocol != RTPROT_KERNEL) || c.details)) {
    std::string p = rt_proto_name(*r.protocol);
    o.kv("protocol", p, " proto " + p);
  }
  o.text("\n");
  o.close();
  o.end_record();
}

// For monitor: one rule notification (declared in monitor.cc).
void print_rule_event(Ctx& c, const wire::Message& m) {
  auto r = wire::decode_rule(m);
  if (r) print_rule(c, *r, m.hdr.nlmsg_type == RTM_DELRULE);
}

}  // namespace ifcore::cli
