// cli/monitor.cc — `ifc monitor [link|address|route|neigh|netconf|rule|nexthop|fdb]`: join
// the rtnetlink groups and print each notification as `ip monitor` does ("Deleted " before
// removals); and `ifc stats`, the engine's per-phase statistics (ifcore's own message; not a
// kernel feature).
#include <linux/rtnetlink.h>

#include <utility>

#include "cli/commands.h"
#include "cli/link_print.h"
#include "rtnl/wire/route.h"

#include "rtnl/wire/stats_msg.h"

namespace ifcore::cli {

void print_addr_event(Ctx& c, const wire::Message& m);
void print_neigh_event(Ctx& c, const wire::Message& m);     // neigh_cmd.cc
void print_netconf_event(Ctx& c, const wire::Message& m);   // netconf_cmd.cc
void print_rule_event(Ctx& c, const wire::Message& m);      // rule_print.cc
void print_fdb_event(Ctx& c, const wire::Message& m);       // fdb_cmd.cc
void print_nexthop_event(Ctx& c, const wire::Message& m);   // nexthop_print.cc
void print_nexthop_bucket(Ctx& c, const wire::Message& m);  // nexthop_print.cc

Result<void> do_monitor(Ctx& c, Args& a) {
  bool link = false, addr = false, route = false, neigh = false, netconf = false, rule = false,
       nexthop = false;
  bool fdb = false;     // `bridge monitor fdb`: forwarding entries only, as bridge(8) prints them
  bool banner = false;  // iproute2's prefix_banner: "[LINK]" before each notification
  while (!a.done()) {
    std::string w = a.take();
    if (matches(w, "label"))
      banner = true;
    else if (matches(w, "link"))
      link = true;
    else if (matches(w, "address"))
      addr = true;
    else if (matches(w, "route"))
      route = true;
    else if (matches(w, "neigh"))
      neigh = true;
    else if (matches(w, "netconf"))
      netconf = true;
    else if (matches(w, "rule"))
      rule = true;
    else if (w == "fdb")
      fdb = true;
    else if (matches(w, "nexthop"))
      nexthop = true;
    else if (w == "all")
      banner = true;  // iproute2: every group unless others are named, each labelled
    else
      return die(255, "Argument \"{}\" is unknown, try \"ip monitor help\".", w);
  }
  if (!link && !addr && !route && !neigh && !netconf && !rule && !nexthop && !fdb)
    link = addr = route = neigh = netconf = rule = nexthop = true;
  // iproute2's monitor opens no JSON document: under -j it prints text all the same.
  Out text(false, false, c.oneline);
  struct Restore {
    Ctx& c;
    Out* saved;
    ~Restore() { c.out = saved; }
  } restore{c, std::exchange(c.out, &text)};
  Transport& t = c.client->transport();
  (void)c.client->ifname(0);  // learn the names before the first notification
  auto join = [&](unsigned g) -> Result<void> {
    if (auto r = t.join_group(g); !r) return die(1, "{}", r.error().message);
    return ok();
  };
  if (link) IFCORE_TRY(join(RTNLGRP_LINK));
  if (addr) {
    IFCORE_TRY(join(RTNLGRP_IPV4_IFADDR));
    IFCORE_TRY(join(RTNLGRP_IPV6_IFADDR));
  }
  if (route) {
    IFCORE_TRY(join(RTNLGRP_IPV4_ROUTE));
    IFCORE_TRY(join(RTNLGRP_IPV6_ROUTE));
  }
  if (neigh || fdb) IFCORE_TRY(join(RTNLGRP_NEIGH));
  // iproute2: the netconf and rule groups of the family asked for (-4, -6), both by default.
  if (netconf && c.family != AF_INET6) IFCORE_TRY(join(RTNLGRP_IPV4_NETCONF));
  if (netconf && c.family != AF_INET) IFCORE_TRY(join(RTNLGRP_IPV6_NETCONF));
  if (rule && c.family != AF_INET6) IFCORE_TRY(join(RTNLGRP_IPV4_RULE));
  if (rule && c.family != AF_INET) IFCORE_TRY(join(RTNLGRP_IPV6_RULE));
  if (nexthop) IFCORE_TRY(join(RTNLGRP_NEXTHOP));
  for (;;) {
    auto d = c.client->next_event(-1);
    if (!d) {
      if (d.error().code == ENOBUFS) continue;  // ip keeps going after an overrun
      return die(1, "{}", d.error().message);
    }
    if (!*d) return ok();  // the embedded engine has nothing more to say
    auto msgs = wire::split_messages(**d);
    if (!msgs) continue;
    for (const auto& m : *msgs) {
      auto label = [&](const char* what) {
        if (banner) c.out->text(what);
      };
      switch (m.hdr.nlmsg_type) {
        case RTM_NEWLINK:
        case RTM_DELLINK:
          if (link) {
            if (auto l = read_link(m)) {
              c.client->note_link(l->m.ifindex, l->m.name, l->m.flags);
              label("[LINK]");
              print_link(c, *l, false, true);
            }
          }
          break;
        case RTM_NEWADDR:
        case RTM_DELADDR:
          if (addr) {
            label("[ADDR]");
            print_addr_event(c, m);
          }
          break;
        case RTM_NEWROUTE:
        case RTM_DELROUTE:
          // iproute2: a cached route (RTM_F_CLONED) is not shown.
          if (route)
            if (auto r = wire::decode_route(m); r && !(r->flags & RTM_F_CLONED)) {
              label("[ROUTE]");
              print_route(c, m, *r, RouteShown{});
            }
          break;
        case RTM_NEWNEIGH:
        case RTM_DELNEIGH:
          if (neigh) {
            label("[NEIGH]");
            print_neigh_event(c, m);
          }
          if (fdb && !neigh) print_fdb_event(c, m);
          break;
        case RTM_NEWRULE:
        case RTM_DELRULE:
          if (rule) {
            label("[RULE]");
            print_rule_event(c, m);
          }
          break;
        case RTM_NEWNEXTHOP:
        case RTM_DELNEXTHOP:
          if (nexthop) {
            label("[NEXTHOP]");
            print_nexthop_event(c, m);
          }
          break;
        // A resilient group's bucket moved by its timer (ip monitor prints it whatever the
        // object filter; it arrives with RTNLGRP_NEXTHOP).
        case RTM_NEWNEXTHOPBUCKET:
        case RTM_DELNEXTHOPBUCKET:
          label("[NEXTHOPBUCKET]");
          print_nexthop_bucket(c, m);
          break;
        case RTM_NEWNETCONF:
        case RTM_DELNETCONF:
          if (netconf) {
            label("[NETCONF]");
            print_netconf_event(c, m);
          }
          break;
        default:
          break;
      }
      c.out->flush();
    }
  }
}

// ifcore's statistics message (rtnl/wire/stats_msg.h): the engine's counters and per-phase
// times, from the daemon or the embedded engine. The kernel has no such thing.
Result<void> do_stats(Ctx& c, Args& a) {
  if (!a.done()) return die(255, "Command \"{}\" is unknown, try \"ifc help\".", a.peek());
  if (std::string_view(c.client->transport().target()) == "kernel")
    return die(1, "stats: not supported by this target");
  wire::MessageBuilder b;
  if (auto e = rtnl::encode_stats_request(b, c.client->next_seq()); !e)
    return die(2, "{}", e.error().message);
  std::vector<rtnl::StatsEntry> entries;
  Result<void> bad = ok();
  IFCORE_TRY(c.client->talk(b, [&](const wire::Message& m) {
    auto r = rtnl::decode_stats_reply(m);
    if (r)
      entries = std::move(*r);
    else
      bad = die(2, "malformed statistics reply: {}", r.error().message);
  }));
  IFCORE_TRY(bad);
  Out& o = *c.out;
  o.open_object();
  for (const auto& e : entries) o.kv(e.name, e.value, fmt::format("{} {}\n", e.name, e.value));
  o.close();
  return ok();
}

}  // namespace ifcore::cli
