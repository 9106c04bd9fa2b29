// rtnl/proto.h — internal: addresses and routes as rtnetlink messages (Linux:
// inet_fill_ifaddr, inet6_fill_ifaddr, fib_dump_info, rt6_fill_node), and the listener
// that turns the protocols' events into RTNLGRP_IPV{4,6}_{IFADDR,ROUTE} and RTNLGRP_NEIGH
// notifications.
#pragma once

#include "ifcore/inet.h"
#include "rtnl/wire/address.h"
#include "rtnl/wire/neigh.h"
#include "rtnl/wire/netconf.h"
#include "rtnl/wire/route.h"

namespace ifcore::rtnl {

class Hub;

wire::AddrMessage addr_message(const inet::AddrInfo& a);
// An address request from its message; `flags` are the request's (NLM_F_REPLACE).
inet::AddrRequest addr_request(const wire::AddrMessage& a, std::uint16_t flags);
// Errors: EAFNOSUPPORT for a family other than AF_INET and AF_INET6.
Result<void> check_family(int family);
// `now`: the engine's clock, against which an expiring route counts down.
wire::RouteMessage route_message(const inet::RouteInfo& r, TimePoint now);
// An RTM_NEWROUTE (or, with `del`, RTM_DELROUTE) message as a route request
// (route_request.cc). Errors: Linux's for RTA_VIA, an unknown metric or algorithm.
Result<inet::RouteRequest> route_request(const wire::RouteMessage& m, std::uint16_t flags,
                                         bool del);
wire::NeighMessage neigh_message(const inet::NeighInfo& n);
wire::NetconfMessage netconf_message(const inet::NetconfInfo& n);

// Context of every method: control lock (the protocols call it).
class ProtoPublisher final : public inet::ProtoListener {
 public:
  explicit ProtoPublisher(Hub& hub) : hub_(hub) {}
  void on_addr(Namespace& ns, inet::ProtoEvent ev, const inet::AddrInfo& a) override;
  void on_route_flagged(Namespace& ns, inet::ProtoEvent ev, const inet::RouteInfo& r,
                        std::uint16_t nlflags) override;
  bool wants_routes(Namespace& ns, int family) const override;
  void on_neigh(Namespace& ns, inet::ProtoEvent ev, const inet::NeighInfo& n) override;
  void on_rule(Namespace& ns, inet::ProtoEvent ev, const inet::RuleInfo& r) override;
  void on_netconf(Namespace& ns, inet::ProtoEvent ev, const inet::NetconfInfo& n) override;
  void on_nexthop(Namespace& ns, inet::ProtoEvent ev, const inet::NexthopInfo& n) override;
  void on_nexthop_bucket(Namespace& ns, const inet::NexthopBucket& b) override;

 private:
  Hub& hub_;
};

}  // namespace ifcore::rtnl
