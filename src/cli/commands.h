// cli/commands.h — the objects `ifc` knows (`ip OBJECT COMMAND ...`). Each returns the
// failure to print and the exit status, as `ip` would.
#pragma once

#include "cli/args.h"
#include "cli/client.h"
#include "rtnl/wire/route.h"

namespace ifcore::cli {

Result<void> do_link(Ctx& c, Args& a);
Result<void> do_addr(Ctx& c, Args& a);
Result<void> do_route(Ctx& c, Args& a);
Result<void> do_neigh(Ctx& c, Args& a);    // neigh_cmd.cc
Result<void> do_fdb(Ctx& c, Args& a);      // fdb_cmd.cc: bridge(8)'s `bridge fdb`
Result<void> do_netconf(Ctx& c, Args& a);  // netconf_cmd.cc
Result<void> do_rule(Ctx& c, Args& a);     // rule_cmd.cc
Result<void> do_nexthop(Ctx& c, Args& a);  // nexthop_cmd.cc
Result<void> do_netns(Ctx& c, Args& a);
Result<void> do_monitor(Ctx& c, Args& a);
Result<void> do_stats(Ctx& c, Args& a);
Result<void> do_probe(Ctx& c, Args& a);      // probe_cmd.cc
Result<void> do_sysctl(Ctx& c, Args& a);     // sysctl_cmd.cc
Result<void> do_state(Ctx& c, Args& a);      // state_cmd.cc
Result<void> do_tunnel(Ctx& c, Args& a);     // tunnel_cmd.cc
Result<void> do_addrlabel(Ctx& c, Args& a);  // addrlabel_cmd.cc

// What a route listing's filter pins down, and so leaves out of each line (iproute2's
// print_route: filter.*mask == -1, a full-length `via`/`src`, one table, one device).
struct RouteShown {
  bool one_table = false, one_dev = false, proto = false, scope = false, tos = false,
       metric = false, gateway = false, prefsrc = false;
};
// One route as `ip route` prints it (route_cmd.cc; monitor uses it too).
void print_route(Ctx& c, const wire::Message& msg, const wire::RouteMessage& r,
                 const RouteShown& shown);

// An address protocol (IFAPROT_*) by iproute2's rt_addrprotos names, or a number 0..255
// (link_cmd.cc).
std::optional<std::uint8_t> addr_proto_number(const std::string& s);
// `ip -d route`'s line for a route's nexthop object: "\n\tnh_info " and the nexthop as `ip
// nexthop` prints it, looked up once (nexthop_cmd.cc, as iproute2's print_cache_nexthop_id).
void print_nh_info(Ctx& c, std::uint32_t id);
// What route and nexthop listings print alike (route_cmd.cc): a scope's name (iproute2's
// rtnl_rtscope_n2a) and the RTNH_F_* / RTM_F_* flag words (print_rt_flags; in JSON an
// array "flags", always there).
std::string rt_scope_name(std::uint8_t s);
// The route types by number (RTN_*), as iproute2 names them (routes and rules).
inline constexpr const char* kRouteTypes[] = {"none",     "unicast",   "local",     "broadcast",
                                              "anycast",  "multicast", "blackhole", "unreachable",
                                              "prohibit", "throw",     "nat",       "xresolve"};
// A routing table's name as iproute2's rt_tables has it, or its number (rule_print.cc).
std::string table_name(std::uint32_t t);
void print_rt_flags(Out& o, std::uint32_t flags);

// Appends `type KIND [options]` for link add (link_build.cc): IFLA_LINKINFO with the
// kind's IFLA_INFO_DATA. Consumes the rest of the words.
// `set_op`: a change of an existing device (ip link set/change, no NLM_F_CREATE).
Result<void> put_linkinfo(Ctx& c, wire::MessageBuilder& b, const std::string& kind, Args& a,
                          bool set_op = false);
// Parses the common link words of `link add` / `link set` / veth's `peer` that carry an
// attribute (mtu, address, broadcast, txqueuelen, name, group, master, nomaster, netns,
// alias, up, down, ...). Returns false when `word` is not one of them.
struct LinkFlags {
  std::uint32_t flags = 0, change = 0;
};
Result<bool> put_link_word(Ctx& c, wire::MessageBuilder& b, const std::string& word, Args& a,
                           LinkFlags& lf, bool for_set);

// The namespace a `netns` word names, for the current target: IFLA_NET_NS_FD (kernel,
// /var/run/netns/NAME), IFLA_NET_NS_PID (a number), or ifcore's IFCORE_IFLA_NET_NS_NAME.
Result<void> put_netns(Ctx& c, wire::MessageBuilder& b, const std::string& name);

}  // namespace ifcore::cli
