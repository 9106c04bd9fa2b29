// bench/scenarios/wire.h — what the daemon and kernel paths share: the scenarios written
// once as rtnetlink requests, and the few things that differ between the two servers
// (kinds the kernel lacks, sysctls, sending a frame, opening more sockets).
#pragma once

#include <functional>
#include <memory>

#include "bench/scenarios/nl_client.h"
#include "bench/scenarios/paths.h"

namespace ifcore::bench {

// A frame sent on one device and awaited on another (AF_PACKET on the kernel).
class FrameProbe {
 public:
  virtual ~FrameProbe() = default;
  // Errors: the socket's errno.
  virtual Result<void> send() = 0;
  // Errors: ETIMEDOUT when nothing arrived within timeout_ms.
  virtual Result<void> wait_received(int timeout_ms) = 0;
};

struct WireEnv {
  // The kernel lacks dummy and vlan here: veth pairs stand in for dummies (n/2 pairs for n
  // devices), macvlan for vlan.
  bool substitute_kinds = false;
  // A new client to the same server (the bench's main socket or a monitor with groups).
  std::function<Result<std::unique_ptr<NlClient>>(std::vector<unsigned> groups)> connect;
  // net.ipv6.conf.{all,default}.forwarding; empty: the server offers no way to set it.
  std::function<Result<void>(bool on)> set_ipv6_forwarding;
  // net.ipv6.conf.all.keep_addr_on_down (seed 000: Linux 2.6.36 kept addresses on down);
  // empty: the server offers no way to set it.
  std::function<Result<void>(bool on)> set_ipv6_keep_addr_on_down;
  // A frame from tx to rx; empty: the server has no frame path.
  std::function<Result<std::unique_ptr<FrameProbe>>(int tx_ifindex, int rx_ifindex)> frame_probe;
  // Why forwarding or frames are missing (for the table's notes).
  std::string no_sysctl_why, no_frame_why;
};

// Runs one repetition of `s` over `env`. Errors: the first request that failed.
Result<RunOutput> run_wire(const ScenarioSpec& s, const RunParams& p, WireEnv& env);

}  // namespace ifcore::bench
