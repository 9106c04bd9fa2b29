// cli/state_cmd.cc — `ifc state dump FILE`: what ifcored --state FILE keeps, read from the
// file itself (no daemon needed; SQLite lets a reader in beside a running daemon).
// docs/STATE.md documents the file's schema for the plain sqlite3 client too.
#include <cstdio>

#include "cli/client.h"
#include "cli/commands.h"
#ifdef IFC_HAVE_STATE
#include "state/store.h"
#endif

namespace ifcore::cli {

Result<void> do_state(Ctx&, Args& a) {
  if (a.done() || a.peek() == "help") {
    std::fprintf(stderr, "Usage: ifc state dump FILE\n");
    return die(255, "");
  }
  std::string cmd = a.take();
  if (cmd != "dump") return die(255, "Command \"{}\" is unknown, try \"ifc state help\".", cmd);
  if (a.done()) return incomplete();
  std::string file = a.take();
  if (!a.done()) return die(255, "Error: either \"{}\" is a garbage.", a.peek());
#ifdef IFC_HAVE_STATE
  if (auto r = state::dump(file, stdout); !r) return die(1, "Error: {}", r.error().message);
  return ok();
#else
  return die(1, "Error: this ifc was built without the state store");
#endif
}

}  // namespace ifcore::cli
