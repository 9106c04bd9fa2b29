// The bridge kind's private state, shared by bridge.cc (ports, subscriber) and
// bridge_attrs.cc (IFLA_BR_* / IFLA_BRPORT_* attributes).
#pragma once

#include <linux/if_bridge.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ifcore/engine.h"
#include "ifcore/frame.h"

namespace ifcore::kinds::bridge {

// Linux: the per-port settings of struct net_bridge_port, as far as ifcore models them.
struct PortSettings {
  std::uint8_t state = BR_STATE_DISABLED;
  std::uint16_t priority = 32;  // Linux: 0x8000 >> BR_PORT_BITS
  std::uint32_t cost = 100;     // Linux: port_cost() for a device of unknown speed
  // Plain port options (IFLA_BRPORT_MODE, LEARNING, ...) by attribute type.
  std::map<std::uint16_t, Attr> opts;
};

struct Port {
  Ref dev;
  std::uint16_t no = 0;  // port number, 1..
  PortSettings s;
};

// Linux: struct net_bridge settings; times in clock_t (1/100 s) as on the wire.
struct Settings {
  std::uint32_t forward_delay = 1500, hello_time = 200, max_age = 2000, ageing_time = 30000;
  std::uint32_t stp_state = 0;
  std::uint16_t priority = 0x8000;
  std::uint8_t vlan_filtering = 0;
  std::uint16_t vlan_protocol = 0x8100;  // ETH_P_8021Q, host order
  std::uint16_t group_fwd_mask = 0;
  HwAddr group_addr = HwAddr::ethernet({0x01, 0x80, 0xc2, 0, 0, 0});
  std::uint32_t boolopts = 0;
  // Other plain options (mcast_*, nf_call_*, vlan_default_pvid, ...) by attribute type.
  std::map<std::uint16_t, Attr> opts;
};

// The frame path's view of the ports: RCU-published, rebuilt under the control lock
// whenever a port joins, leaves or changes state.
struct PortView {
  Device* dev;
  bool forwarding;
};
struct DataPlane {
  std::vector<PortView> ports;
};

// Linux: the forwarding database (br_fdb.c): learned source addresses -> port, aged out
// after `ageing` (IFLA_BR_AGEING_TIME). Context: any thread (its own leaf mutex).
class Fdb {
 public:
  void learn(const HwAddr& mac, Device* port, TimePoint now);
  // The port `mac` was last seen on, unless aged out. The pointer is only compared (it
  // may name a port that has just left).
  Device* lookup(const HwAddr& mac, TimePoint now);
  void flush(const Device* port);  // every entry of `port` (nullptr: all)
  void set_ageing(Duration d) { ageing_ns_.store(d.count(), std::memory_order_relaxed); }
  std::size_t size();

 private:
  struct Entry {
    Device* port;
    TimePoint seen;
  };
  std::mutex mu_;  // leaf
  std::unordered_map<std::uint64_t, Entry> map_;
  std::atomic<Duration::rep> ageing_ns_{Duration(std::chrono::seconds(300)).count()};
};

struct Priv final : DevicePriv {
  ~Priv() override { delete dp.load(); }  // the device is freed after a grace period
  std::atomic<const DataPlane*> dp{nullptr};
  Fdb fdb;
  Settings s;
  bool mtu_set_by_user = false, addr_set_by_user = false;
  bool adjusting = false;  // the bridge itself is changing its mtu/address
  // A port has been added once: from then on the carrier follows the ports (off while none
  // forwards, also after the last one left); before, the bridge keeps the carrier it was
  // made with (on), as Linux 6.18 shows (`state UNKNOWN`, `LOWER_UP`).
  bool had_port = false;
  std::vector<std::unique_ptr<Port>> ports;

  Port* find(const Device& d) const {
    for (auto& p : ports)
      if (p->dev.get() == &d) return p.get();
    return nullptr;
  }
};

Priv* priv(const Device& dev);
Settings default_settings();
PortSettings default_port_settings(const Device& dev);

// Applies IFLA_INFO_DATA to `s` (Linux: br_validate + br_changelink); callers pass a copy
// and keep it only on success, so a failed request changes nothing.
Result<void> change(Settings& s, const AttrList& data);
// The same for IFLA_INFO_SLAVE_DATA of one port (Linux: br_setport).
Result<void> change_port(const Settings& br, const Device& port_dev, PortSettings& p,
                         const AttrList& data);

AttrPolicy policy();
AttrPolicy port_policy();
AttrList fill(const Device& dev, const Priv& p);
AttrList fill_port(const Device& br, const Priv& p, const Port& port);
// The frame path (bridge_fdb.cc). Context of the first three: control lock.
// Rebuilds the ports' view after a join, leave or state change; flushes the forwarding
// entries of ports that no longer forward (Linux: br_fdb_delete_by_port).
void publish_ports(Device& br, Priv& p);
// Makes the bridge the receive handler of `port`, or stops it being so.
void attach_port(Control& ctl, Device& br, Device& port);
void detach_port(Control& ctl, Device& port);
// Linux: br_dev_xmit: a frame sent on the bridge device goes out by the table.
// Context: any thread.
void xmit(Device& br, Priv& p, Frame&& f);

// struct ifla_bridge_id of a bridge: priority (big endian) and address.
std::vector<std::uint8_t> bridge_id(const Device& br, std::uint16_t priority);

}  // namespace ifcore::kinds::bridge
