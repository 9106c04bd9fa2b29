// cli/rule_print.h — `ip rule`'s output (rule_print.cc), shared by `ifc rule` and
// `ifc monitor`.
#pragma once

#include <cstdint>
#include <string>

#include "cli/commands.h"
#include "rtnl/wire/rule.h"

namespace ifcore::cli {

std::string realm_name(std::uint32_t r);
// An IP protocol's name from the protocols database, or its number.
std::string ipproto_name(std::uint8_t p);
// A host prefix's length in `family`.
int host_len(int family);
// One rule as `ip rule show` prints it (`Deleted ` first when `deleted`).
void print_rule(Ctx& c, const wire::RuleMessage& r, bool deleted);

}  // namespace ifcore::cli
