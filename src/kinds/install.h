// Registers every built-in kind (loopback, dummy, veth, vlan, macvlan, bridge, ipip, gre).
#pragma once

#include "ifcore/engine.h"

namespace ifcore::kinds {

void install_all(Engine& engine);

}  // namespace ifcore::kinds
