// proto/fib_prefsrc.h — what becomes of the IPv4 routes whose preferred source
// (RTA_PREFSRC) is an address that goes: deleted (Linux: fib_del_ifaddr's
// fib_sync_down_addr and fib_flush). IPv6 keeps them without a source (Linux:
// rt6_remove_prefsrc; fib_remove_prefsrc6 in addrconf_routes.h).
#pragma once

#include "proto/state.h"

namespace ifcore::proto {

// The IPv4 address `local` of `dev` is gone. Unless it is still a local address of the
// device's table (another address, on `dev` or another device of its L3 domain, has it),
// every route of the device's table (its L3 master's, else main) with `local` as its
// preferred source goes, each announced with RTM_DELROUTE, highest prefix first, as
// fib_table_flush walks the trie. Context: control lock.
void fib_flush_prefsrc4(Control& ctl, Namespace& ns, const Device& dev, const IpAddr& local);

// (IPv6: fib_remove_prefsrc6, in addrconf_routes.h, as addrconf calls it.)

}  // namespace ifcore::proto
