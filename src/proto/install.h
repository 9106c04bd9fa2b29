// Plugs every protocol (inet, inet6, fib, dst) into an engine.
#pragma once

#include "ifcore/engine.h"

namespace ifcore::proto {

void install_all(Engine& engine);

}  // namespace ifcore::proto
