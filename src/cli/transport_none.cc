// cli/transport_none.cc — stands in for the embedded and daemon backends when ifc is built
// without ifcore's rtnl library (compiled only then; see CMakeLists.txt).
#include <unistd.h>

#include "cli/transport.h"

namespace ifcore::cli {

Result<std::unique_ptr<Transport>> make_embedded_transport(const std::string&) {
  return fail(EOPNOTSUPP, "ifc was built without the embedded engine (ifcore_rtnl)");
}

Result<std::unique_ptr<Transport>> make_daemon_transport(const std::string&, const std::string&) {
  return fail(EOPNOTSUPP, "ifc was built without ifcored's control message (ifcore_rtnl)");
}

std::string default_socket_path() {
  return ::geteuid() == 0 ? "/run/ifcore/ifcore.sock" : "/tmp/ifcore.sock";
}

}  // namespace ifcore::cli
