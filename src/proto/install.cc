// Plugs every protocol into an engine. (The protocols arrive with their own issue.)
#include "proto/install.h"

namespace ifcore::proto {

void install_all(Engine& engine) {}

}  // namespace ifcore::proto
