// rtnl/wire/bulk.cc — ifcore's bulk RTM_DELLINK request and its per-item replies.
#include "rtnl/wire/bulk.h"

#include <net/if.h>

#include <cerrno>
#include <cstring>

#include "rtnl/wire/bulk_nest.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

using bulk::kIfinfoLen;

Result<std::optional<BulkDelete>> decode_bulk_delete(const Message& m) {
  BulkDelete out;
  auto found = bulk::for_each_nest(m, [&](const RawAttr& a) -> Result<void> {
    auto items = parse_nested(a);
    if (!items) return fail(items.error());
    for (const RawAttr& x : *items) {
      BulkItem it;
      if (x.type == IFCORE_BULK_IFINDEX) {
        auto v = x.u32();
        if (!v) return fail(v.error());
        it.ifindex = *v;
      } else if (x.type == IFCORE_BULK_IFNAME) {
        auto v = x.string(IFNAMSIZ - 1);
        if (!v) return fail(v.error());
        it.name = std::move(*v);
      } else {
        return fail_at(x.offset, EINVAL, "unknown attribute type {}", x.type);
      }
      out.items.push_back(std::move(it));
    }
    return ok();
  });
  if (!found) return fail(found.error());
  if (!*found) return std::nullopt;
  if (out.items.empty()) return fail(EINVAL, "bulk delete names no device");
  return out;
}

Result<void> encode_bulk_delete(MessageBuilder& b, const Header& h, const BulkDelete& req) {
  auto size = [&](std::size_t i) -> Result<std::size_t> {
    const BulkItem& it = req.items[i];
    if (!it.ifindex && !it.name) return fail(EINVAL, "bulk item names neither ifindex nor name");
    return it.ifindex ? NLA_ALIGN(NLA_HDRLEN + 4) : NLA_ALIGN(NLA_HDRLEN + it.name->size() + 1);
  };
  auto put = [&](std::size_t i) {
    const BulkItem& it = req.items[i];
    if (it.ifindex)
      b.put_u32(IFCORE_BULK_IFINDEX, *it.ifindex);
    else
      b.put_string(IFCORE_BULK_IFNAME, *it.name);
  };
  return bulk::encode_nests(b, h, req.items.size(), size, put);
}

Result<void> encode_bulk_result(MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                const BulkResult& r, std::uint16_t type) {
  b.begin({type, NLM_F_MULTI, seq, portid});
  ifinfomsg ifi{};
  ifi.ifi_index = r.ifindex;
  b.put_struct(ifi);
  if (r.name) b.put_string(IFLA_IFNAME, *r.name);
  b.put_u32(IFCORE_IFLA_BULK_INDEX, r.index);
  b.put_u32(IFCORE_IFLA_BULK_ERRNO, static_cast<std::uint32_t>(r.error));
  if (!r.message.empty()) b.put_string(IFCORE_IFLA_BULK_MSG, r.message);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

Result<BulkResult> decode_bulk_result(const Message& m) {
  auto p = m.payload();
  auto ifi = read_struct<ifinfomsg>(p, "ifinfomsg");
  if (!ifi) return fail(ifi.error());
  BulkResult r;
  r.ifindex = ifi->ifi_index;
  auto attrs = parse_raw_attrs(p.subspan(kIfinfoLen), static_cast<int>(NLMSG_HDRLEN + kIfinfoLen));
  if (!attrs) return fail(attrs.error());
  bool has_errno = false;
  for (const RawAttr& x : *attrs) {
    switch (x.type) {
      case IFLA_IFNAME:
        r.name = x.as_string();
        break;
      case IFCORE_IFLA_BULK_INDEX: {
        auto v = x.u32();
        if (!v) return fail(v.error());
        r.index = *v;
        break;
      }
      case IFCORE_IFLA_BULK_ERRNO: {
        auto v = x.u32();
        if (!v) return fail(v.error());
        r.error = static_cast<int>(*v);
        has_errno = true;
        break;
      }
      case IFCORE_IFLA_BULK_MSG:
        r.message = x.as_string();
        break;
      default:
        break;
    }
  }
  if (!has_errno) return fail(EINVAL, "not a bulk result");
  return r;
}

}  // namespace ifcore::wire
