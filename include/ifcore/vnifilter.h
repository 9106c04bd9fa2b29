// ifcore/vnifilter.h — a vxlan device's VNI filter: the VNIs a device made with `external
// vnifilter` accepts, each with its remote (Linux: drivers/net/vxlan/vxlan_vnifilter.c
// behind rtnetlink's RTM_{NEW,DEL,GET}TUNNEL of family AF_BRIDGE). A VNI with a remote has
// the forwarding entry of the all-zero address towards it, as Linux makes it.
// Every function here runs under the control lock.
#pragma once

#include <cstdint>
#include <vector>

#include "ifcore/addr.h"
#include "ifcore/result.h"

namespace ifcore {

class Control;
class Namespace;

namespace vnifilter {

// One VNI (Linux: struct vxlan_vni_node): its remote, empty for none.
struct Vni {
  std::uint32_t vni = 0;
  IpAddr remote;
};

// One VXLAN_VNIFILTER_ENTRY of a request: VNIs start..end (Linux adds or deletes each in
// turn and stops at the first error), with its group (empty: none).
struct Range {
  std::uint32_t start = 0, end = 0;
  IpAddr group;
};

// Linux: vxlan_vnifilter_process for RTM_NEWTUNNEL (add) / RTM_DELTUNNEL, after its
// message checks. Errors: ENODEV (no message), EINVAL "vxlan: The device is not a vxlan
// device", EOPNOTSUPP for a vxlan device without vnifilter, "VNI in use" (EEXIST), ENOENT
// for a VNI to delete that is not there, the entry checks' EINVAL.
Result<void> change(Control& ctl, Namespace& ns, int ifindex, bool add,
                    const std::vector<Range>& ranges);

// The VNIs of a vxlan device, by VNI. Errors: ENODEV; EINVAL "The device is not a vxlan
// device"; EINVAL (no message) for a vxlan device without vnifilter.
Result<std::vector<Vni>> list(Control& ctl, Namespace& ns, int ifindex);
// Every vnifilter vxlan device's VNIs, by ifindex (devices without a VNI left out).
std::vector<std::pair<int, std::vector<Vni>>> list_all(Control& ctl, Namespace& ns);

// Hears every VNI announced (RTNLGRP_TUNNEL), as Linux announces them (vxlan_vnifilter_notify:
// a VNI added without a remote is not announced).
class Listener {
 public:
  virtual ~Listener() = default;
  virtual void on_vni(Namespace& ns, int ifindex, bool added, const Vni& v) = 0;
};
// Context: control lock. The listener must outlive its registration.
void add_listener(Control& ctl, Listener& l);
void remove_listener(Control& ctl, Listener& l);

}  // namespace vnifilter
}  // namespace ifcore
