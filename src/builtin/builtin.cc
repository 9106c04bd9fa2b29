// libifcore's front door: an engine with every built-in kind and protocol plugged in.
#include "ifcore/ifcore.h"

#include "kinds/install.h"
#include "proto/install.h"

namespace ifcore {

void install_builtins(Engine& engine) {
  kinds::install_all(engine);
  proto::install_all(engine);
}

std::unique_ptr<Engine> make_engine(EngineConfig cfg) {
  auto e = std::make_unique<Engine>(std::move(cfg));
  install_builtins(*e);
  return e;
}

}  // namespace ifcore
