// The bridge kind's private state, shared by bridge.cc (ports, subscriber) and
// bridge_attrs.cc (IFLA_BR_* / IFLA_BRPORT_* attributes).
#pragma once

#include <linux/if_bridge.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ifcore/engine.h"
#include "ifcore/fdb.h"
#include "ifcore/frame.h"
#include "ifcore/mdb.h"
#include "ifcore/mutex.h"
#include "ifcore/timer.h"

namespace ifcore::kinds::bridge {

// Linux: the per-port settings of struct net_bridge_port, as far as ifcore models them.
struct PortSettings {
  std::uint8_t state = BR_STATE_DISABLED;
  std::uint16_t priority = 32;  // Linux: 0x8000 >> BR_PORT_BITS
  std::uint32_t cost = 100;     // Linux: port_cost() for a device of unknown speed
  // Plain port options (IFLA_BRPORT_MODE, LEARNING, ...) by attribute type.
  std::map<std::uint16_t, Attr> opts;
  int backup = 0;  // Linux: backup_port, another port of the bridge (its ifindex); 0: none
};

struct Port {
  Ref dev;
  std::uint16_t no = 0;  // port number, 1..
  PortSettings s;
  bool mc_router = false;  // Linux: in the bridge's ip4 and ip6 router lists
  TimerId fwd_timer = 0;   // Linux: forward_delay_timer (bridge_port.cc); 0: none yet
  std::optional<TimePoint> fwd_deadline;  // while fwd_timer is armed
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

// One forwarding entry (Linux: struct net_bridge_fdb_entry and its BR_FDB_* bits).
struct FdbEntry {
  HwAddr mac;
  std::uint16_t vid = 0;
  Device* dst = nullptr;  // the port; nullptr: the bridge itself
  bool local = false, is_static = false, sticky = false, added_by_user = false, ext_learn = false;
  TimePoint updated{}, used{};
  std::uint64_t seq = 0;  // dumps list the newest first (Linux: hlist_add_head)
};

// Linux: the forwarding database (br_fdb.c): learned source addresses -> port, aged out
// after `ageing` (IFLA_BR_AGEING_TIME), and the entries the user and the bridge itself
// add (local addresses of the bridge and its ports, static entries).
// Context: the frame path from any thread (learn, lookup); the rest under the control lock
// too. Its own leaf mutex guards the table.
class Fdb {
 public:
  using Key = std::pair<std::uint64_t, std::uint16_t>;  // address, vlan
  static Key key(const HwAddr& mac, std::uint16_t vid);

  // Linux: br_fdb_update. An entry made, or moved to another port, is queued to be
  // announced; true when the queue was empty (the caller then posts the announcing timer).
  bool learn(const HwAddr& mac, Device* port, TimePoint now);
  // The keys learn() queued since the last call, oldest first. Context: lock() held.
  std::vector<Key> take_learned_locked() IFCORE_REQUIRES(mu_) {
    return std::exchange(learned_, {});
  }
  // The port `mac` was last seen on, unless aged out; nullptr and *local for a local
  // entry. The pointer is only compared (it may name a port that has just left).
  Device* lookup(const HwAddr& mac, TimePoint now, bool* local);
  // Dynamic entries of `port` (nullptr: all) (Linux: br_fdb_delete_by_port without do_all),
  // appended to `gone`.
  void flush(const Device* port, std::vector<FdbEntry>& gone);
  // Linux: the deletions of br_fdb_cleanup — the dynamic entries aged out by `now`, appended
  // to `gone`; returns when the first of the others will be (none: now + the ageing time).
  TimePoint expire(TimePoint now, std::vector<FdbEntry>& gone);
  void set_ageing(Duration d) { ageing_ns_.store(d.count(), std::memory_order_relaxed); }
  Duration ageing() const { return Duration(ageing_ns_.load(std::memory_order_relaxed)); }
  std::size_t size();

  // For the control lock's holder: the table under its mutex.
  Mutex& mutex() IFCORE_RETURN_CAPABILITY(mu_) { return mu_; }
  std::map<Key, FdbEntry>& table_locked() IFCORE_REQUIRES(mu_) { return map_; }
  std::uint64_t next_seq_locked() IFCORE_REQUIRES(mu_) { return ++seq_; }

 private:
  // LOCK ORDERING: a leaf, taken inside the control lock or alone (the frame path);
  // never held inside an rcu::ReadGuard.
  Mutex mu_;
  std::map<Key, FdbEntry> map_ IFCORE_GUARDED_BY(mu_);
  std::uint64_t seq_ IFCORE_GUARDED_BY(mu_) = 0;
  // Made or moved by learn(), not announced yet.
  std::vector<Key> learned_ IFCORE_GUARDED_BY(mu_);
  std::atomic<Duration::rep> ageing_ns_{Duration(std::chrono::seconds(300)).count()};
};

// Linux: struct net_bridge_port_group as the user adds one (br_mdb_add_group_star_g/_sg).
struct MdbPortGroup {
  Device* port = nullptr;
  bool permanent = false;
  std::uint8_t rtprot = 0;
  std::optional<TimePoint> expires;  // a temporary group's, until its timer ran
};

// Linux: struct net_bridge_mdb_entry — one group (of vlan and source), its host join and
// its port groups.
struct MdbGroup {
  mdb::Group key;
  bool host_joined = false;
  std::optional<TimePoint> host_expires;  // Linux: mp->timer, armed by a host join
  std::vector<MdbPortGroup> ports;
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
  HwAddr own_addr;  // the address the bridge's own local entry was made for
  // Announces what the frame path learned (fdb_announce_learned), posted by it; removed at
  // uninit, so it never runs for a bridge that is gone.
  TimerId announce_timer = 0;
  std::vector<std::unique_ptr<Port>> ports;
  // The multicast database, newest group first (Linux: br->mdb_list, hlist_add_head), and
  // the timer that ends its temporary entries (bridge_mdb.cc).
  std::vector<MdbGroup> mdb;
  TimerId mdb_timer = 0;
  // Linux: br->gc_work, run while the bridge is up (fdb_gc); removed at uninit.
  TimerId gc_timer = 0;

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
void publish_ports(Control& ctl, Device& br, Priv& p);
// Makes the bridge the receive handler of `port`, or stops it being so.
void attach_port(Control& ctl, Device& br, Device& port);
void detach_port(Control& ctl, Device& port);
// Linux: br_dev_xmit: a frame sent on the bridge device goes out by the table.
// Context: any thread.
void xmit(Device& br, Priv& p, Frame&& f);

// The forwarding database's control side (bridge_fdb_ops.cc). Context: control lock.
// Linux: fdb_add_local — a local entry for the address of `port` (nullptr: the bridge).
void fdb_add_local(Control& ctl, Device& br, Priv& p, Device* port, const HwAddr& addr);
// Linux: br_fdb_delete_by_port(do_all) as a port leaves (nullptr: every entry, the bridge goes).
void fdb_delete_by_port(Control& ctl, Device& br, Priv& p, Device* port);
// Linux: br_fdb_changeaddr — `port` has a new address.
void fdb_port_changed_addr(Control& ctl, Device& br, Priv& p, Device& port);
// Linux: br_fdb_change_mac_address — the bridge has a new address.
void fdb_bridge_changed_addr(Control& ctl, Device& br, Priv& p);
// Linux: the fdb_notify(RTM_NEWNEIGH) of br_fdb_update, deferred: announces the entries the
// frame path made or moved since the last call (it cannot take the control lock). An entry
// gone since is not announced.
void fdb_announce_learned(Control& ctl, Device& br, Priv& p);
// Announces the deletion of `gone`, entries a port that stopped forwarding lost (Linux:
// fdb_delete's RTM_DELNEIGH in br_fdb_delete_by_port).
void fdb_announce_removed(Control& ctl, Device& br, Priv& p, const std::vector<FdbEntry>& gone);
// Linux: br_fdb_cleanup — deletes the dynamic entries that aged out, each announced
// (RTM_DELNEIGH, state STALE), and runs again when the next is due (at most the ageing time,
// at least 10 ms later). fdb_gc_start: as the bridge opens (Linux: br_stp_enable_bridge,
// 100 ms on); fdb_gc_stop: as it stops.
void fdb_gc(Control& ctl, Device& br, Priv& p);
void fdb_gc_start(Control& ctl, Device& br, Priv& p);
void fdb_gc_stop(Control& ctl, Priv& p);
// Linux: br_fdb_add / br_fdb_delete for `port` (nullptr: the bridge itself), br_fdb_get and
// br_fdb_dump (`filter`: a port's entries; nullptr: the bridge's own).
Result<void> fdb_add(Control& ctl, Device& br, Priv& p, Device* port, const HwAddr& addr,
                     const fdb::Request& q);
// Linux: br_fdb_delete_bulk for `port` (nullptr: the bridge itself).
Result<void> fdb_flush(Control& ctl, Device& br, Priv& p, Device* port, const fdb::Request& q);
Result<void> fdb_del(Control& ctl, Device& br, Priv& p, Device* port, const HwAddr& addr,
                     const fdb::Request& q);
Result<fdb::Entry> fdb_get(Device& br, Priv& p, const HwAddr& addr, std::uint16_t vid);
void fdb_dump(Device& br, Priv& p, const Device* filter, std::vector<fdb::Entry>& out);

// The multicast database's control side (bridge_mdb.cc). Context: control lock.
// Registers the bridge's timer of temporary entries (at creation).
void mdb_init(Control& ctl, Device& br, Priv& p);
// Linux: br_multicast_disable_port — `port` stopped forwarding (or the bridge's snooping
// was turned off): its temporary groups go, announced.
void mdb_port_disabled(Control& ctl, Device& br, Priv& p, const Device& port);
// Linux: __br_multicast_enable_port_ctx — `port` forwards again (or snooping was turned
// on): a permanent router port is listed again.
void mdb_port_enabled(Control& ctl, Device& br, Priv& p, const Device& port);
// Linux: br_multicast_set_port_router — the port's mcast_router changed.
void mdb_router_changed(Control& ctl, Device& br, Priv& p, const Device& port);
// Linux: br_multicast_del_port — `port` leaves: all its groups go, announced.
void mdb_del_port(Control& ctl, Device& br, Priv& p, const Device& port);
// Linux: br_multicast_dev_del — the bridge goes: the rest goes unannounced, its timer too.
void mdb_uninit(Control& ctl, Priv& p);

// The ports' announcements (bridge_port.cc; Linux: br_ifinfo_notify). Context: control lock.
// Announces `port` (`deleted`: RTM_DELLINK, as it leaves) to the bridge_port listeners.
void announce_port(Control& ctl, Device& br, Port& port, bool deleted = false);
// Linux: br_stp_enable_port's two announcements, and the forward delay timer armed between.
void announce_enabled(Control& ctl, Device& br, Priv& p, Port& port);
// Linux: br_make_forwarding's mod_timer of the port's forward_delay_timer, whose expiry
// announces the port; stop: br_stp_disable_port's del_timer (after its announcement, which
// still shows the time left); drop: the port leaves.
void arm_forward_delay(Control& ctl, Device& br, Priv& p, Port& port);
void stop_forward_delay(Control& ctl, Port& port);
void drop_forward_delay(Control& ctl, Port& port);
// What is left of the port's forward delay, in 1/100 s (IFLA_BRPORT_FORWARD_DELAY_TIMER).
std::uint64_t forward_delay_left(const Device& br, const Port& port);

// struct ifla_bridge_id of a bridge: priority (big endian) and address.
std::vector<std::uint8_t> bridge_id(const Device& br, std::uint16_t priority);

}  // namespace ifcore::kinds::bridge
