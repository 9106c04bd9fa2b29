// rtnl/wire/bulk_nest.h — internal to the wire library (bulk.cc, bulk_create.cc): the frame
// both bulk requests share, an RTM_NEWLINK or RTM_DELLINK whose ifinfomsg is followed by
// IFCORE_IFLA_BULK nests of items (docs/WIRE.md).
#pragma once

#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstddef>

#include "rtnl/wire/netlink.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire::bulk {

inline constexpr std::size_t kIfinfoLen = NLMSG_ALIGN(sizeof(ifinfomsg));
// Room left in one nest for items: 65535 minus the nest header, with margin.
inline constexpr std::size_t kNestBudget = 65000;

// Calls `on(nest)` for each IFCORE_IFLA_BULK attribute of `m`, in order. Returns whether
// there was one (a request without any is no bulk request), or the first error: a header
// too short, attributes that do not parse, or what `on` returned.
template <class OnNest>
Result<bool> for_each_nest(const Message& m, OnNest&& on) {
  auto p = m.payload();
  if (p.size() < sizeof(ifinfomsg))
    return fail(EINVAL, "Invalid header length");  // Linux: __nlmsg_parse
  auto attrs = parse_raw_attrs(p.subspan(kIfinfoLen), static_cast<int>(NLMSG_HDRLEN + kIfinfoLen));
  if (!attrs) return fail(attrs.error());
  bool found = false;
  for (const RawAttr& a : *attrs) {
    if (a.type != IFCORE_IFLA_BULK) continue;
    found = true;
    if (auto r = on(a); !r) return fail(r.error());
  }
  return found;
}

// Writes the request with `n` items, `put(i)` writing item i (`size(i)` bytes, or an error
// that cancels the message) into the open nest, splitting the list over IFCORE_IFLA_BULK
// nests of at most kNestBudget bytes.
template <class Size, class Put>
Result<void> encode_nests(MessageBuilder& b, const Header& h, std::size_t n, Size&& size,
                          Put&& put) {
  b.begin(h);
  b.put_struct(ifinfomsg{});
  std::size_t nest = 0, used = 0;
  bool open = false;
  for (std::size_t i = 0; i < n; ++i) {
    auto len = size(i);
    if (!len) {
      b.cancel();
      return fail(len.error());
    }
    if (open && used + *len > kNestBudget) {
      b.end_nest(nest);
      open = false;
    }
    if (!open) {
      nest = b.begin_nest(IFCORE_IFLA_BULK);
      open = true;
      used = 0;
    }
    put(i);
    used += *len;
  }
  if (open) b.end_nest(nest);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

}  // namespace ifcore::wire::bulk
