// rtnl/bridge_port.h — internal: the listener that sends a bridge's ports, as `bridge link`
// lists them, on RTNLGRP_LINK when the bridge announces them (Linux: br_ifinfo_notify).
#pragma once

#include "ifcore/bridge_port.h"

namespace ifcore::rtnl {

class Hub;

// Context: control lock (the bridges call it). Encodes the port as the AF_BRIDGE dump does
// (bridge_link_handlers.cc), with seq and port id 0, never echoed to a requester and kept
// from the tap (its RTM_DELLINK deletes no device).
class BridgePortPublisher final : public bridge_port::Listener {
 public:
  explicit BridgePortPublisher(Hub& hub) : hub_(hub) {}
  void on_port(Control& ctl, const Device& br, const Device& port, bool deleted) override;

 private:
  Hub& hub_;
};

}  // namespace ifcore::rtnl
