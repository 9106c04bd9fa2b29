// Registers every built-in kind with an engine.
#include "kinds/install.h"

#include "kinds/bridge.h"
#include "kinds/dummy.h"
#include "kinds/fdb_install.h"
#include "kinds/loopback.h"
#include "kinds/macvlan.h"
#include "kinds/tunnel.h"
#include "kinds/veth.h"
#include "kinds/vlan.h"
#include "kinds/vrf.h"
#include "kinds/vxlan.h"

namespace ifcore::kinds {

void install_all(Engine& engine) {
  fdb_install(engine);
  mdb_install(engine);
  vnifilter_install(engine);
  bridge_port_install(engine);
  Loopback::install(engine);
  Dummy::install(engine);
  Veth::install(engine);
  Vlan::install(engine);
  Macvlan::install(engine);
  Bridge::install(engine);
  Tunnel::install(engine);
  Vxlan::install(engine);
  Vrf::install(engine);
}

}  // namespace ifcore::kinds
