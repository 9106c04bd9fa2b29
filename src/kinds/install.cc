// Registers every built-in kind with an engine.
#include "kinds/install.h"

#include "kinds/dummy.h"
#include "kinds/loopback.h"

namespace ifcore::kinds {

void install_all(Engine& engine) {
  Loopback::install(engine);
  Dummy::install(engine);
}

}  // namespace ifcore::kinds
