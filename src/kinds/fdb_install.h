// Installs the forwarding databases' shared state (listeners, address lists) in an engine.
#pragma once

#include "ifcore/engine.h"

namespace ifcore::kinds {

// Context: at engine start, before any request; takes the control lock.
void fdb_install(Engine& engine);
// The bridges' multicast databases' shared state (listeners) (bridge_mdb.cc).
void mdb_install(Engine& engine);
// The vxlan devices' VNI filters' shared state (listeners) (vxlan_vni.cc).
void vnifilter_install(Engine& engine);
// The bridge ports' announcements' listeners (bridge_port.cc).
void bridge_port_install(Engine& engine);

}  // namespace ifcore::kinds
