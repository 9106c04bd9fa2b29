// bench/scenarios/paths.h — the ways a scenario is run (embedded library calls, ifcored
// over its socket or on mapped rings, the kernel in a fresh network namespace) and the link
// requests the scenarios make, built once and used by every path.
#pragma once

#include <net/if.h>  // before any <linux/if*.h>

#include <chrono>
#include <string>

#include "bench/scenarios/bench.h"
#include "ifcore/link_request.h"

namespace ifcore::bench {

// ---- the paths (ring is the daemon's, on mapped rings). Each runs one repetition of `s` at p.n
// and returns its samples. Errors: a request that failed (errno and the server's message);
// EOPNOTSUPP when the path cannot run the scenario at all (the message says why).
Result<RunOutput> run_embedded(const ScenarioSpec& s, const RunParams& p);
// The daemon path; with `rings`, every connection switches to mapped rings first.
Result<RunOutput> run_daemon(const ScenarioSpec& s, const RunParams& p, bool rings);
Result<RunOutput> run_kernel(const ScenarioSpec& s, const RunParams& p);
// The embedded path's warm-up, untimed, in place of its first run's own: max(n, 10 000) dummies
// made one by one, deleted, made in a batch and deleted. Returns the seconds a device its
// first creation took.
Result<double> warm_embedded(int n, const Policies& policies);

// Why a path cannot run here at all (empty: it can). Checked once per bench run.
std::string daemon_unavailable();
std::string kernel_unavailable();

// ---- time
using BenchClock = std::chrono::steady_clock;
inline double seconds_between(BenchClock::time_point a, BenchClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// ---- link requests (the same values the wire paths encode)
struct LinkOpts {
  bool up = false;
  int ifindex = 0;       // 0: the server picks
  int peer_ifindex = 0;  // veth
  std::optional<std::uint32_t> group;
};
LinkRequest dummy_request(const std::string& name, const LinkOpts& o = {});
LinkRequest veth_request(const std::string& name, const std::string& peer, const LinkOpts& o = {});
LinkRequest macvlan_request(const std::string& name, int lower, const LinkOpts& o = {});
LinkRequest vlan_request(const std::string& name, int lower, int id, const LinkOpts& o = {});
// IFF_UP on an existing device (ip link set NAME up).
LinkRequest up_request(int ifindex);

// seed1's address for device i: 2021:i::1 (i written in decimal, as the seed's script does).
std::string seed1_address(int i);

}  // namespace ifcore::bench
