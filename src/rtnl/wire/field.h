// rtnl/wire/field.h — a decoded attribute's value into its field of a message struct.
#pragma once

#include <cerrno>
#include <optional>
#include <type_traits>
#include <utility>

#include "ifcore/result.h"

namespace ifcore::wire {

// Sets `field` to the value `v` read (or passes on its error). An integer value that the
// field's type cannot hold is refused (ERANGE), never cut to fit.
template <class T, class V>
Result<void> set_field(std::optional<T>& field, Result<V> v) {
  if (!v) return fail(v.error());
  if constexpr (std::is_integral_v<T> && std::is_integral_v<V>) {
    if (!std::in_range<T>(*v)) return fail(ERANGE, "attribute value {} out of range", *v);
  }
  field = static_cast<T>(*v);
  return ok();
}

}  // namespace ifcore::wire
