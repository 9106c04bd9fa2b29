// ifcore/ifcore.h — the library's front door.
//
//   auto engine = ifcore::make_engine();          // every kind and protocol plugged in
//   auto ctl = engine->control();                 // the control lock
//   ifcore::LinkRequest req;
//   req.name = "d0"; req.kind = "dummy";
//   auto dev = ctl.create_link(*ctl.find_namespace("default"), req);
#pragma once

#include <memory>

#include "ifcore/engine.h"
#include "ifcore/rcu.h"
#include "ifcore/version.h"

namespace ifcore {

// Registers the built-in kinds and protocols with `engine`.
void install_builtins(Engine& engine);
// A new engine with the built-ins installed.
std::unique_ptr<Engine> make_engine(EngineConfig cfg = {});

}  // namespace ifcore
