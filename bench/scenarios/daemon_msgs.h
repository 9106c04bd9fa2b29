// bench/scenarios/daemon_msgs.h — the daemon path's ways to do what the kernel path does
// through /proc/sys and AF_PACKET: settings through ifcore's sysctl message
// (rtnl/wire/sysctl_msg.h) and frames through its probe message (rtnl/wire/probe_msg.h).
#pragma once

#include <memory>
#include <string>

#include "bench/scenarios/nl_client.h"
#include "bench/scenarios/wire.h"

namespace ifcore::bench {

// IFCORE_NLMSG_SYSCTL request writing `value` to `name` ("net.ipv6.conf.all.forwarding"),
// with NLM_F_ACK.
Bytes sysctl_write_msg(std::uint32_t seq, const std::string& name, const std::string& value);

// Writes one setting over `c`. Errors: the daemon's (ENOENT, EINVAL, EPERM) with its message.
Result<void> daemon_sysctl(NlClient& c, const std::string& name, const std::string& value);

// Reads one setting over `c` (the value as text). Errors: as daemon_sysctl.
Result<std::string> daemon_sysctl_read(NlClient& c, const std::string& name);

// A frame from tx to rx sent by ifcored itself (IFCORE_NLMSG_PROBE, one frame to arrive,
// attempts every 50 us for up to 2 s) on a connection of its own, opened here so that
// connecting is not measured. send() sends the request; wait_received() reads the reply.
// Errors: as env.connect.
Result<std::unique_ptr<FrameProbe>> daemon_frame_probe(const WireEnv& env, int tx_ifindex,
                                                       int rx_ifindex);

// The daemon path's environment for the ifcored listening at `socket_path`: connections
// (switched to mapped rings with `rings`), sysctls through the sysctl message, frames
// through the probe message.
WireEnv daemon_env(const std::string& socket_path, bool rings = false);

}  // namespace ifcore::bench
