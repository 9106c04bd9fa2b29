// The vxlan kind's private state, shared by vxlan.cc (configuration) and vxlan_fdb.cc
// (its forwarding database).
#pragma once

#include <cstdint>
#include <vector>

#include "ifcore/engine.h"
#include "ifcore/fdb.h"
#include "ifcore/timer.h"
#include "kinds/common.h"

namespace ifcore::kinds::vx {

constexpr std::uint16_t kDefaultPort = 8472;   // Linux: IANA_VXLAN_UDP_PORT is 4789; the
                                               // kernel's default is the old 8472
constexpr std::uint32_t kDefaultAgeing = 300;  // Linux: FDB_AGE_DEFAULT

// Linux's VXLAN_F_* bits, as ifcore keeps them.
enum Flag : std::uint32_t {
  kLearn = 1u << 0,
  kProxy = 1u << 1,
  kRsc = 1u << 2,
  kL2miss = 1u << 3,
  kL3miss = 1u << 4,
  kMetadata = 1u << 5,
  kZeroCsumTx = 1u << 6,  // udpcsum off
  kZeroCsum6Tx = 1u << 7,
  kZeroCsum6Rx = 1u << 8,
  kRemcsumTx = 1u << 9,
  kRemcsumRx = 1u << 10,
  kGbp = 1u << 11,
  kGpe = 1u << 12,
  kRemcsumNoPartial = 1u << 13,
  kTtlInherit = 1u << 14,
  kLocalBypass = 1u << 15,
  kVniFilter = 1u << 16,
};
// Linux: VXLAN_F_RCV_FLAGS — what two devices on one port must agree on to share it.
constexpr std::uint32_t kRcvFlags =
    kGbp | kGpe | kZeroCsum6Rx | kRemcsumRx | kRemcsumNoPartial | kMetadata | kVniFilter;

struct Conf {
  std::uint32_t vni = 0;
  IpAddr remote, local;  // empty: none
  int lower = 0;         // IFLA_VXLAN_LINK
  std::uint8_t ttl = 0, tos = 0, df = 0;
  std::uint32_t label = 0;  // host order
  std::uint32_t flags = kLearn | kLocalBypass;
  std::uint32_t ageing = kDefaultAgeing, limit = 0;
  std::uint16_t port = kDefaultPort, port_low = 0, port_high = 0;
  bool ipv6() const {
    return (!remote.empty() && remote.is_v6()) || (!local.empty() && local.is_v6());
  }
  // The bytes the device adds before a frame (Linux: vxlan_headroom): the outer IP, UDP
  // and VXLAN headers, and the inner Ethernet header but with GPE.
  std::uint32_t headroom() const { return headroom(ipv6()); }
  std::uint32_t headroom(bool v6) const {
    return (v6 ? 40 : 20) + 8 + 8 + ((flags & kGpe) ? 0 : 14);
  }
};

// One remote of a forwarding entry (Linux: struct vxlan_rdst).
struct Remote {
  IpAddr ip;
  std::uint16_t port = 0;  // host order
  std::uint32_t vni = 0;
  std::uint32_t ifindex = 0;
  bool operator==(const Remote&) const = default;
};

// A forwarding entry (Linux: struct vxlan_fdb), keyed by address and source VNI.
struct FdbEntry {
  HwAddr mac;
  std::uint32_t src_vni = 0;
  std::uint16_t state = 0;
  std::uint16_t flags = 0;  // NTF_* and NTF_VXLAN_ADDED_BY_USER
  std::vector<Remote> remotes;
  TimePoint updated{}, used{};
  std::uint64_t seq = 0;  // dumps list the newest first
};

// One VNI of a vnifilter device (Linux: struct vxlan_vni_node); an empty remote: none.
struct VniNode {
  std::uint32_t vni = 0;
  IpAddr remote;
};

struct VxlanPriv final : DevicePriv {
  Conf conf;
  Ref lower;
  // The link namespace (Linux: vxlan->net): where the device's socket, VNI and lower device
  // are, the requester's unless IFLA_LINK_NETNSID named another; it stays when the device
  // moves. The device dies with it (Vxlan::pre_exit). Control lock.
  Namespace* net = nullptr;
  std::vector<FdbEntry> fdb;  // control lock
  std::uint64_t fdb_seq = 0;
  std::vector<VniNode> vnis;  // control lock; by VNI (Linux: vg->vni_list)
  TimerId age_timer = 0;      // control lock; registered at the first open (Linux: age_timer)
  // Linux: needed_headroom, set from the conf and the lower at creation and at each change
  // (vxlan_config_apply). Control lock.
  std::uint32_t needed_headroom = 0;
  // Queued for deletion with its lower: the stop that closes it flushes every entry (the
  // deferred dellink flush). Control lock.
  bool flush_all_at_stop = false;
  bool has_vni(std::uint32_t vni) const {
    for (const auto& n : vnis)
      if (n.vni == vni) return true;
    return false;
  }
};

inline VxlanPriv* vxlan_of(const Device& dev) {
  return priv_of<VxlanPriv>(dev);
}

// The vxlan devices whose link namespace is `net`, wherever they live (Linux: the
// vxlan_net's vxlan_list), in order of creation. Context: control lock, and the plug-in
// lock (PluginGuard) under a namespace's control.
const std::vector<Device*>& net_devices(Namespace& net);

// The forwarding database (vxlan_fdb.cc). Context: control lock.
// Linux: the default entry (all-zero address) a configured remote makes
// (vxlan_dev_configure), and vxlan_flush as the device stops (all: as it goes).
void fdb_add_default(Control& ctl, Device& dev, VxlanPriv& v);
void fdb_flush(Control& ctl, Device& dev, VxlanPriv& v, bool all);
// Linux: the age timer vxlan_open starts, vxlan_stop stops and vxlan_cleanup runs: every
// FDB_AGE_INTERVAL (10 s), sooner for the entry that times out first, the dynamic entries
// not updated for the device's ageing time are deleted, each announced (state STALE).
void fdb_start_ageing(Control& ctl, Device& dev, VxlanPriv& v);
void fdb_stop_ageing(Control& ctl, VxlanPriv& v);
// Linux: vxlan_fdb_add, vxlan_fdb_delete, vxlan_fdb_get, vxlan_fdb_dump.
Result<void> fdb_add(Control& ctl, Device& dev, VxlanPriv& v, const HwAddr& addr,
                     const fdb::Request& q);
Result<void> fdb_del(Control& ctl, Device& dev, VxlanPriv& v, const HwAddr& addr,
                     const fdb::Request& q);
// Linux: vxlan_fdb_delete_bulk, by state and flags under their masks (the per-remote
// filters vni, dst, port and ifindex are refused with EOPNOTSUPP).
Result<void> fdb_flush(Control& ctl, Device& dev, VxlanPriv& v, const fdb::Request& q);
Result<fdb::Entry> fdb_get(Device& dev, VxlanPriv& v, const HwAddr& addr, const fdb::Request& q);
// Linux: vxlan_update_default_fdb_entry — the all-zero entry of `vni` towards `add` made
// (appended), towards `del` removed (either empty: nothing).
Result<void> fdb_vni_default(Control& ctl, Device& dev, VxlanPriv& v, std::uint32_t vni,
                             const IpAddr& del, const IpAddr& add);
// Linux: vxlan_vnigroup_uninit — the VNIs go, each announced (vxlan_vni.cc).
void vni_uninit(Control& ctl, Device& dev, VxlanPriv& v);
void fdb_dump(Device& dev, VxlanPriv& v, std::vector<fdb::Entry>& out);

}  // namespace ifcore::kinds::vx
