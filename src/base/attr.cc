// Lookup helpers over decoded kind attributes.
#include "ifcore/attr.h"

#include "ifcore/link_request.h"

namespace ifcore {

const Attr* find_attr(const AttrList& list, std::uint16_t type) {
  for (const auto& a : list)
    if (a.type == type) return &a;
  return nullptr;
}

std::optional<std::uint64_t> attr_num(const AttrList& list, std::uint16_t type) {
  const Attr* a = find_attr(list, type);
  if (!a) return std::nullopt;
  return a->num;
}

}  // namespace ifcore
