// ifcore/addrlabel.h — the IPv6 address label table of a namespace (`ip addrlabel`;
// RFC 6724's policy table, which source address selection consults).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ifcore/addr.h"
#include "ifcore/engine.h"
#include "ifcore/result.h"

namespace ifcore::inet {

// One entry of a namespace's IPv6 address label table (RFC 6724's policy table, with
// Linux's defaults: net/ipv6/addrlabel.c), as RTM_NEWADDRLABEL reports it
// (struct ifaddrlblmsg + IFAL_ADDRESS, IFAL_LABEL; `ip addrlabel`).
struct AddrLabel {
  IpAddr prefix;                // IPv6; the bits past prefix_len are zero in the table
  std::uint8_t prefix_len = 0;  // 0..128
  int ifindex = 0;              // 0: every device (a device's entry may outlive it, as in Linux)
  std::uint32_t label = 0;
  friend bool operator==(const AddrLabel&, const AddrLabel&) = default;
};

// A namespace's table in the order a lookup walks it (longest prefix first; of one length,
// the entries of a device before the others), and its generation (Linux's table seq, which
// the messages carry: 10 once the ten default entries are in, one more for each add).
struct AddrLabelTable {
  std::vector<AddrLabel> entries;
  std::uint32_t seq = 0;
};

// The ten entries a new namespace's table starts with, in the order Linux adds them
// (ip6addrlbl_init_table: RFC 6724's labels but for ULA and 6to4).
const std::vector<AddrLabel>& default_addrlabels();

// Adds `l` (its prefix cut to prefix_len) or, with `replace`, replaces the entry of the same
// prefix, length and device in its place (Linux: ip6addrlbl_add). Context: control lock.
// Errors (no extack, as Linux): EINVAL (a length over 128, the label 0xffffffff, an ifindex
// that is no device of `ns`, an IPv4-mapped prefix longer than 96), EEXIST.
Result<void> add_addrlabel(Control& ctl, Namespace& ns, const AddrLabel& l, bool replace);
// Deletes the entry of l's prefix (cut to its length), length and device; the label is not
// compared (Linux: ip6addrlbl_del). Context: control lock. Errors: EINVAL (a length over
// 128, the label 0xffffffff), ESRCH.
Result<void> delete_addrlabel(Control& ctl, Namespace& ns, const AddrLabel& l);
// The table. Context: control lock.
AddrLabelTable addrlabels(Control& ctl, Namespace& ns);
// The first entry that matches `addr` on device `ifindex` (0: none), as RTM_GETADDRLABEL
// answers (Linux: ip6addrlbl_get; its lookup compares the address's whole type, so only an
// IPv4-mapped entry of the typed ones matches: `::1` finds `::/96`), with the table's seq.
// Context: control lock. Errors: EINVAL (an ifindex that is no device), ESRCH.
Result<std::pair<AddrLabel, std::uint32_t>> find_addrlabel(Control& ctl, Namespace& ns,
                                                           const IpAddr& addr, int ifindex);

}  // namespace ifcore::inet
