// cli/transport_none.cc — stands in for the embedded backend when ifc is built without it
// (IFCORE_IFC_EMBEDDED off, or no ifcore_rtnl; compiled only then, see CMakeLists.txt).
#include "cli/transport.h"

namespace ifcore::cli {

Result<std::unique_ptr<Transport>> make_embedded_transport(const std::string&) {
  return fail(EOPNOTSUPP, "ifc was built without the embedded engine (IFCORE_IFC_EMBEDDED)");
}

}  // namespace ifcore::cli
