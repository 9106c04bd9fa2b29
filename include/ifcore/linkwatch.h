// ifcore/linkwatch.h — the link watch: how carrier changes become operstate, an active
// transmit path and NetdevEvent::Change (so RTM_NEWLINK) notifications.
//
// Linux's model (net/core/link_watch.c), which ifcore keeps: netif_carrier_on/off flip the
// carrier bit at once (IFF_LOWER_UP, NO-CARRIER and IFLA_CARRIER_CHANGES follow it
// immediately); the link watch later computes the operstate (RFC 2863), activates or
// deactivates the transmit path (frames sent before are dropped) and notifies Change.
// When "later" is depends on the policy (config.h, LinkWatchPolicy):
//  - Kernel: Linux before 4.1 (seed 003). An event is urgent only if the device is running
//    and stacked on a lower device (vlan, macvlan); urgent events are handled at once, the
//    others wait so that at most one full run happens per second (`kernel_window`).
//  - Adaptive (default): virtual kinds (Kind::is_virtual) are urgent and delivered within
//    the request that caused them, after its own announcement (an open's or close's at its
//    Up or Down, a delivery's after it, as Linux's watch runs them after the change that
//    fired them); each device has a token bucket (`burst` events, refilled at
//    `per_second`) and events beyond it are merged into one pending event that reports
//    the state of the moment it is delivered, so the last state always arrives.
// Non-urgent events run from a worker thread that waits on the engine's TimeSource, or
// from run_link_watch(), which tests with a FakeTime call after advancing it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "ifcore/clock.h"

namespace ifcore {

class Control;
class Device;

struct LinkWatchTuning {
  Duration kernel_window = std::chrono::seconds(1);  // Linux: HZ between full runs
  std::uint32_t burst = 8;                           // adaptive: events at once per device
  double per_second = 8.0;                           // adaptive: refill rate per device
};

struct LinkWatchStats {
  std::uint64_t fired = 0;      // carrier changes seen (Linux: linkwatch_fire_event calls)
  std::uint64_t coalesced = 0;  // fired while the device already had an event pending
  std::uint64_t delivered = 0;  // events handled (operstate computed)
  std::uint64_t notified = 0;   // of those, Change notifications sent (device up)
  std::uint64_t deferred = 0;   // events that had to wait (window or budget)
  std::uint64_t runs = 0;       // runs of the queue (worker or run_link_watch)
};

// Handles every pending event that is due now (per the policy and the TimeSource).
// Context: the control lock (through `ctl`); never sleeps.
void run_link_watch(Control& ctl);
// Events waiting now. Context: control lock.
std::size_t link_watch_pending(Control& ctl);
// True if `dev` has an event waiting. Context: control lock.
bool link_watch_pending(Control& ctl, const Device& dev);
LinkWatchStats link_watch_stats(Control& ctl);
LinkWatchTuning link_watch_tuning(Control& ctl);
// Context: control lock. Takes effect for the next event.
void set_link_watch_tuning(Control& ctl, const LinkWatchTuning& t);

// Linux: default_operstate + rfc2863_policy: what the link watch will set for `dev`
// (DOWN or LOWERLAYERDOWN without carrier, DORMANT/TESTING by link_mode, else UP).
// Context: control lock or RCU.
std::uint8_t derived_operstate(const Device& dev);

}  // namespace ifcore
