// proto/multipath.h — multipath hop selection (multipath.cc) and the neighbour check it
// makes of each hop (neigh.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "proto/state.h"

namespace ifcore::proto {

// Draws the engine's random multipath hash key. Context: at install.
void mp_init(EngineProto& ep);
// The flow's 31-bit multipath hash under its namespace's settings.
std::uint32_t mp_hash(EngineProto& ep, NetState& st, const inet::Flow& flow);
// The hop of `r` (an index into r.info.nexthops; for a group, its members in order) a flow
// hashed to `hash` takes, or -1 when `r` has one hop or none is live. A resilient group's
// bucket is marked used at `now`. `good`, one per hop (empty: all): whether the hop's
// gateway may be used (neigh_usable); a hash-threshold group's member that may not is
// passed over (Linux: nexthop_is_good_nh), a plain route's hop too when `use_neigh`.
int mp_select(Route& r, std::uint32_t hash, TimePoint now, const std::vector<char>& good = {},
              bool use_neigh = false);

// Whether a route may send to `gateway` through `dev`: no gateway, no entry for it, or an
// entry in a valid state (Linux: fib_good_nh, ipv6_good_nh: NUD_VALID, an absent entry
// counting as reachable).
bool neigh_usable(EngineProto& ep, const Device& dev, const IpAddr& gateway);

}  // namespace ifcore::proto
