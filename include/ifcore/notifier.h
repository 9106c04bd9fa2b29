// ifcore/notifier.h — the ordered notifier chain (Linux: netdev_chain).
//
// Subscribers run in order of priority (higher first), ties in order of subscription.
// Every event is delivered under the engine's control lock, with a `Control` the
// subscriber may use to make further changes (as Linux notifiers run under RTNL).
//
// Vetoes: a subscriber returning an error from a vetoable event (PreUp, PreChangeMtu,
// PreChangeAddr, PreChangeUpper, PreChangeName, Register) stops the chain; the change does
// not happen and the caller gets the subscriber's errno and message. For Register, the
// subscribers that already saw it are sent Unregister. Errors from other events are
// logged and ignored, as Linux ignores them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "ifcore/addr.h"
#include "ifcore/result.h"

namespace ifcore {

class Control;
class Device;

// Linux: NETDEV_* in include/linux/netdevice.h (the subset ifcore models).
enum class NetdevEvent : std::uint8_t {
  Register,
  PreUp,
  Up,
  GoingDown,
  Down,
  Change,  // flags other than UP, carrier/operstate (from the link watch)
  PreChangeMtu,
  ChangeMtu,
  PreChangeAddr,
  ChangeAddr,
  PreChangeName,
  ChangeName,
  PreChangeUpper,
  ChangeUpper,
  ChangeInfoData,  // kind attributes changed
  Unregister,
  // A device a create made besides the one it names is set up (Linux: the kind calls
  // rtnl_configure_link, as veth_newlink does for the peer before the pair is tied):
  // rtnetlink announces it now rather than after the create (Control::notify).
  Configured,
  // The flags a change of them changed, in flags_changed (Linux: __dev_notify_flags's
  // rtmsg_ifinfo, sent whether or not the device is up; a change of IFF_UP comes with Up or
  // Down instead). Only rtnetlink announces it; Change follows for an up device.
  NotifyFlags,
  ChangeTxQueueLen,  // the queue length changed (Linux: NETDEV_CHANGE_TX_QUEUE_LEN)
  FeatChange,        // the device's features changed (Linux: NETDEV_FEAT_CHANGE)
  // An unregistered device's last event: its kind's uninit has run and its uppers and
  // lowers are gone (Linux: unregister_netdevice_many_notify sends the RTM_DELLINK it
  // built at NETDEV_UNREGISTER here, after ndo_uninit). Follows an Unregister whose
  // EventInfo::uninit_follows is set, device by device.
  Uninit,
};
const char* to_string(NetdevEvent e);
bool is_vetoable(NetdevEvent e);

// Events delivered once per batch with every device of the batch.
enum class BatchEvent : std::uint8_t {
  UnregisterBatch,  // after the per-device Unregister pass (Linux: NETDEV_UNREGISTER_BATCH)
};

struct EventInfo {
  NetdevEvent event;
  Device& dev;
  // ChangeMtu / PreChangeMtu
  std::uint32_t old_mtu = 0, new_mtu = 0;
  // ChangeName / PreChangeName
  std::string_view old_name, new_name;
  // ChangeAddr / PreChangeAddr (null for a ChangeAddr of the broadcast address)
  const HwAddr* new_addr = nullptr;
  // ChangeUpper / PreChangeUpper: `upper` is being linked (linking) or unlinked above dev
  Device* upper = nullptr;
  bool linking = false;
  bool upper_is_master = false;
  // Change, NotifyFlags: which IFF_* flags changed. Up, Down: the ifi_change to announce
  // (0: IFF_UP | IFF_RUNNING, as dev_open and dev_close_many announce it).
  std::uint32_t flags_changed = 0;
  // Register/Unregister delivered as a replay to one subscriber
  bool replay = false;
  // Part of an unregister batch's pass (GoingDown, Down, Unregister) that ends with
  // BatchEvent::UnregisterBatch: a subscriber may defer per-device cleanup to that event
  // (Linux: the work NETDEV_UNREGISTER_BATCH does once, e.g. flushing route caches).
  bool batched = false;
  // Unregister: the device is being unregistered (not moved to another namespace), and
  // Uninit follows once its kind has let it go.
  bool uninit_follows = false;
};

class Subscriber {
 public:
  virtual ~Subscriber() = default;
  // Context: control lock held (through `ctl`). May call `ctl` to change other state.
  virtual Result<void> on_event(Control& ctl, const EventInfo& ev) = 0;
  // Context: control lock held. Default: nothing.
  virtual void on_batch(Control& ctl, BatchEvent ev, std::span<Device* const> devices) {}
};

// A set of NetdevEvents, one bit each: what a subscription is called for.
using EventMask = std::uint32_t;
constexpr EventMask event_bit(NetdevEvent e) {
  return EventMask{1} << static_cast<unsigned>(e);
}
template <class... E>
constexpr EventMask events_of(E... e) {
  return (event_bit(e) | ...);
}
constexpr EventMask kAllEvents = ~EventMask{0};
// True if a subscription with `mask` is called for `e`.
constexpr bool takes(EventMask mask, NetdevEvent e) {
  return (mask & event_bit(e)) != 0;
}
static_assert(static_cast<unsigned>(NetdevEvent::Uninit) < 32, "EventMask holds every event");

// Options for subscribing and unsubscribing.
struct SubscribeOptions {
  std::string name;    // for logs and the chain listing
  int priority = 0;    // higher first
  bool replay = true;  // replay Register (and Up for up devices) for existing devices
  // The events on_event is called for (replays included); the chain passes over the
  // subscriber for the others, which costs nothing (a pass over a device calls every
  // subscriber's on_event, and most of them care for three or four of the seventeen
  // events). on_batch is always called.
  EventMask events = kAllEvents;
  // The subscriber touches only the device it is told of and that device's namespace, so
  // that controls of two namespaces (Engine::control(Namespace&)) may call it at once.
  // When false, a namespace's control calls it under the engine's plug-in lock
  // (PluginGuard, engine.h).
  bool concurrent = false;
};

using SubscriptionId = std::uint64_t;

}  // namespace ifcore
