// base/version.cc — the library's version (ifcore/version.h).
#include "ifcore/version.h"

namespace ifcore {

std::string_view version() noexcept {
  return IFCORE_VERSION_STRING;
}

}  // namespace ifcore
