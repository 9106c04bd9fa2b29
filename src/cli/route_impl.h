// cli/route_impl.h — internal to `ifc route` (route_print.cc, route_modify.cc,
// route_cmd.cc): the helpers they share.
#pragma once

#include <net/if.h>

#include <linux/in_route.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "cli/commands.h"
#include "cli/vrf.h"
#include "rtnl/wire/raw_attrs.h"
#include "rtnl/wire/route.h"

#include <optional>
#include <string>
#include <vector>

namespace ifcore::cli::route {

struct MetricName {
  std::uint16_t type;
  const char* name;
  const char* what;  // iproute2's invarg text
};

const MetricName* metric_of(const std::string& w);
Result<wire::RouteMetric> metric_value(const MetricName& m, const std::string& v);
void print_metrics(Out& o, const std::vector<wire::RouteMetric>& metrics);
std::string proto_name(std::uint8_t p);
std::optional<std::uint32_t> raw_u32(const wire::Message& m, std::uint16_t type);
Result<void> finish(wire::MessageBuilder& b);
void print_via(Out& o, const IpAddr& via);
// `ifc route add|change|replace|append|prepend|delete`. Errors: as `ip route`.
Result<void> route_modify(Ctx& c, Args& a, std::uint16_t type, std::uint16_t flags);

}  // namespace ifcore::cli::route
