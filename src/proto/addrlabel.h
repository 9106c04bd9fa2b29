// proto/addrlabel.h — internal: a namespace's IPv6 address label table as NetState keeps it
// (addrlabel.cc; the API is ifcore/addrlabel.h).
#pragma once

#include <cstdint>
#include <vector>

#include "ifcore/addrlabel.h"

namespace ifcore::proto {

// An entry, with the kind of address its prefix was given as (Linux:
// ip6addrlbl_entry.addrtype; a lookup compares it with the address's).
struct AddrLabelEntry {
  enum class Type : std::uint8_t { Any, Loopback, Compat, Mapped };
  inet::AddrLabel info;
  Type type = Type::Any;
};

struct AddrLabels {
  std::vector<AddrLabelEntry> entries;  // in the order lookups walk them
  std::uint32_t seq = 0;                // Linux's table seq: one more for each add
};

// The default table of a new namespace (Linux: ip6addrlbl_net_init).
void addrlabels_init(AddrLabels& t);

}  // namespace ifcore::proto
