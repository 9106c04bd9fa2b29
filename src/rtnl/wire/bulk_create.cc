// rtnl/wire/bulk_create.cc — ifcore's create batch: many link requests in one RTM_NEWLINK.
#include "rtnl/wire/bulk_create.h"

#include <cerrno>
#include <cstring>

#include "rtnl/wire/bulk_nest.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

// An IFCORE_BULK_ADDR's payload read as the RTM_NEWADDR it stands for. Offsets in errors
// are moved to the attribute's place in the request.
Result<AddrMessage> decode_bulk_addr(const RawAttr& x) {
  std::vector<std::uint8_t> msg(NLMSG_HDRLEN + x.data.size());
  nlmsghdr h{};
  h.nlmsg_len = static_cast<std::uint32_t>(msg.size());
  h.nlmsg_type = RTM_NEWADDR;
  std::memcpy(msg.data(), &h, sizeof h);
  if (!x.data.empty()) std::memcpy(msg.data() + NLMSG_HDRLEN, x.data.data(), x.data.size());
  auto a = decode_addr(Message{h, msg});
  if (!a) {
    Error e = std::move(a).error();
    if (e.attr_offset >= 0) e.attr_offset += x.offset + NLA_HDRLEN - NLMSG_HDRLEN;
    return fail(std::move(e));
  }
  return a;
}

Result<void> decode_items(const RawAttr& nest, const DecodeContext& ctx, BulkCreate& out) {
  auto items = walk_nested(nest);
  if (!items) return fail(items.error());
  for (const RawAttr x : *items) {
    if (x.type == IFCORE_BULK_LINK) {
      BulkLink& item = out.items.emplace_back();
      IFCORE_TRY(decode_link_body_into(x.data, x.offset + NLA_HDRLEN, ctx, item.link));
    } else if (x.type == IFCORE_BULK_ADDR) {
      if (out.items.empty()) return fail_at(x.offset, EINVAL, "bulk address before any link");
      auto a = decode_bulk_addr(x);
      if (!a) return fail(a.error());
      out.items.back().addrs.push_back(std::move(*a));
    } else {
      return fail_at(x.offset, EINVAL, "unknown attribute type {}", x.type);
    }
  }
  return ok();
}

// One item's attributes (its IFCORE_BULK_LINK and IFCORE_BULK_ADDRs), written alone so
// that their size is known before they go into a nest.
Result<std::span<const std::uint8_t>> encode_item(MessageBuilder& scratch,
                                                  const BulkLinkRequest& it) {
  scratch.begin({});
  std::size_t link = scratch.begin_nest(IFCORE_BULK_LINK);
  IFCORE_TRY(encode_link_body(scratch, it.link));
  scratch.end_nest(link);
  for (const AddrMessage& a : it.addrs) {
    std::size_t n = scratch.begin_nest(IFCORE_BULK_ADDR);
    encode_addr_body(scratch, a);
    scratch.end_nest(n);
  }
  auto msg = scratch.end();
  if (!msg) return fail(msg.error());
  return msg->subspan(NLMSG_HDRLEN);
}

}  // namespace

Result<std::optional<BulkCreate>> decode_bulk_create(const Message& m, const DecodeContext& ctx) {
  BulkCreate out;
  // A BulkLink is large (about 600 bytes): the links are counted first, so that the items
  // are made in place once, neither moved as the list grows nor given room for as many as
  // the bytes could hold (tens of megabytes for a batch of 10^4). Errors are left to the
  // decoding below, which reports them in request order.
  std::size_t links = 0;
  (void)bulk::for_each_nest(m, [&](const RawAttr& a) -> Result<void> {
    auto items = walk_nested(a);
    if (!items) return fail(items.error());
    for (const RawAttr x : *items) links += x.type == IFCORE_BULK_LINK;
    return ok();
  });
  out.items.reserve(links);
  auto found = bulk::for_each_nest(m, [&](const RawAttr& a) { return decode_items(a, ctx, out); });
  if (!found) return fail(found.error());
  if (!*found) return std::nullopt;
  if (out.items.empty()) return fail(EINVAL, "create batch names no device");
  return out;
}

Result<void> encode_bulk_create(MessageBuilder& b, const Header& h,
                                const std::vector<BulkLinkRequest>& items) {
  MessageBuilder scratch;
  std::span<const std::uint8_t> item;
  auto size = [&](std::size_t i) -> Result<std::size_t> {
    if (scratch.count()) scratch.drop_last();
    auto bytes = encode_item(scratch, items[i]);
    if (!bytes) return fail(bytes.error());
    item = *bytes;
    return item.size();
  };
  auto put = [&](std::size_t) { b.put_raw(item.data(), item.size()); };
  return bulk::encode_nests(b, h, items.size(), size, put);
}

Result<void> encode_bulk_create_bodies(MessageBuilder& b, const Header& h,
                                       std::span<const std::vector<std::uint8_t>> bodies) {
  auto size = [&](std::size_t i) -> Result<std::size_t> {
    return NLA_ALIGN(NLA_HDRLEN + bodies[i].size());
  };
  auto put = [&](std::size_t i) { b.put_bytes(IFCORE_BULK_LINK, bodies[i]); };
  return bulk::encode_nests(b, h, bodies.size(), size, put);
}

}  // namespace ifcore::wire
