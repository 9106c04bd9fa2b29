// cli/monitor.cc — `ifc monitor [link|address|route]`: join the rtnetlink groups and print
// each notification as `ip monitor` does ("Deleted " before removals); and `ifc stats`,
// the engine's per-phase statistics.
#include <linux/rtnetlink.h>

#include "cli/commands.h"
#include "cli/link_print.h"
#include "rtnl/wire/route.h"

namespace ifcore::cli {

void print_route(Ctx& c, const wire::Message& msg, const wire::RouteMessage& r);
void print_addr_event(Ctx& c, const wire::Message& m);

Result<void> do_monitor(Ctx& c, Args& a) {
  bool link = false, addr = false, route = false;
  while (!a.done()) {
    std::string w = a.take();
    if (matches(w, "link"))
      link = true;
    else if (matches(w, "address"))
      addr = true;
    else if (matches(w, "route"))
      route = true;
    else if (w == "all")
      link = addr = route = true;
    else
      return die(255, "Argument \"{}\" is unknown, try \"ip monitor help\".", w);
  }
  if (!link && !addr && !route) link = addr = route = true;
  Transport& t = c.client->transport();
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
  for (;;) {
    auto d = t.recv(-1);
    if (!d) {
      if (d.error().code == ENOBUFS) continue;  // ip keeps going after an overrun
      return die(1, "{}", d.error().message);
    }
    if (!*d) return ok();  // the embedded engine has nothing more to say
    auto msgs = wire::split_messages(**d);
    if (!msgs) continue;
    for (const auto& m : *msgs) {
      switch (m.hdr.nlmsg_type) {
        case RTM_NEWLINK:
        case RTM_DELLINK:
          if (link) {
            c.client->invalidate();
            if (auto l = read_link(m)) print_link(c, *l, false, true);
          }
          break;
        case RTM_NEWADDR:
        case RTM_DELADDR:
          if (addr) print_addr_event(c, m);
          break;
        case RTM_NEWROUTE:
        case RTM_DELROUTE:
          if (route)
            if (auto r = wire::decode_route(m)) print_route(c, m, *r);
          break;
        default:
          break;
      }
      c.out->flush();
    }
  }
}

Result<void> do_stats(Ctx& c, Args&) {
  // Neither the kernel nor ifcore's wire (docs/WIRE.md) carries the engine's statistics
  // yet; when rtnl exposes them this asks for them like any other request.
  return die(1, "stats: not supported by this target");
}

}  // namespace ifcore::cli
