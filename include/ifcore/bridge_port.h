// ifcore/bridge_port.h — a bridge's ports announced as `bridge link` shows them (Linux:
// br_ifinfo_notify in net/bridge, an RTM_NEWLINK or RTM_DELLINK of family AF_BRIDGE on
// RTNLGRP_LINK): at each of a port's state changes and events, and when it leaves.
// Every function here runs under the control lock.
#pragma once

namespace ifcore {

class Control;
class Device;

namespace bridge_port {

// Hears every announcement of a bridge port, in the order Linux sends them.
class Listener {
 public:
  virtual ~Listener() = default;
  // `port` of bridge `br` as it is now; `deleted`: it is leaving (RTM_DELLINK, Linux: del_nbp),
  // and is still `br`'s port while this runs.
  virtual void on_port(Control& ctl, const Device& br, const Device& port, bool deleted) = 0;
};
// Context: control lock. The listener must outlive its registration.
void add_listener(Control& ctl, Listener& l);
void remove_listener(Control& ctl, Listener& l);

// Announces `port` of bridge `br` (RTM_NEWLINK) to the listeners. Linux: br_setlink's
// br_ifinfo_notify after a change of the port's settings through `bridge link set`.
// Context: control lock.
void announce(Control& ctl, const Device& br, const Device& port);

}  // namespace bridge_port
}  // namespace ifcore
