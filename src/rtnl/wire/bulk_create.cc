// rtnl/wire/bulk_create.cc — ifcore's create batch: many link requests in one RTM_NEWLINK.
#include "rtnl/wire/bulk_create.h"

#include <cerrno>
#include <cstring>
#include <memory>

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

Result<std::optional<BulkCreateReader>> BulkCreateReader::open(const Message& m,
                                                               const DecodeContext& ctx) {
  std::vector<RawAttr> nests;
  std::size_t links = 0;
  auto found = bulk::for_each_nest(m, [&](const RawAttr& a) -> Result<void> {
    nests.push_back(a);
    // Counted only: a nest that does not parse is reported when the reader reaches it.
    if (auto items = walk_nested(a))
      for (const RawAttr x : *items) links += x.type == IFCORE_BULK_LINK;
    return ok();
  });
  if (!found) return fail(found.error());
  if (!*found) return std::nullopt;
  BulkCreateReader reader(ctx, std::move(nests), links);
  if (links == 0) {
    IFCORE_TRY(reader.check_rest());
    return fail(EINVAL, "create batch names no device");
  }
  return reader;
}

Result<std::optional<RawAttr>> BulkCreateReader::peek() {
  while (!at_ || *at_ == walked_->end()) {
    if (nest_ == nests_.size()) return std::optional<RawAttr>();
    auto items = walk_nested(nests_[nest_]);
    if (!items) return fail(items.error());
    ++nest_;
    walked_ = *items;
    at_ = walked_->begin();
  }
  return std::optional<RawAttr>(**at_);
}

Result<bool> BulkCreateReader::next(BulkLink& out) {
  auto first = peek();
  if (!first) return fail(first.error());
  if (!*first) return false;
  const RawAttr x = **first;
  if (x.type == IFCORE_BULK_ADDR && !linked_)
    return fail_at(x.offset, EINVAL, "bulk address before any link");
  if (x.type != IFCORE_BULK_LINK)
    return fail_at(x.offset, EINVAL, "unknown attribute type {}", x.type);
  advance();
  linked_ = true;
  // Made afresh in place: assigning a new DecodedLink moved each of its many members.
  std::destroy_at(&out.link);
  std::construct_at(&out.link);
  out.addrs.clear();
  IFCORE_TRY(decode_link_body_into(x.data, x.offset + NLA_HDRLEN, *ctx_, out.link));
  // Its addresses: what follows up to the next link, in this nest or the next ones.
  for (;;) {
    auto a = peek();
    if (!a) return fail(a.error());
    if (!*a || (*a)->type == IFCORE_BULK_LINK) return true;
    if ((*a)->type != IFCORE_BULK_ADDR)
      return fail_at((*a)->offset, EINVAL, "unknown attribute type {}", (*a)->type);
    auto addr = decode_bulk_addr(**a);
    if (!addr) return fail(addr.error());
    out.addrs.push_back(std::move(*addr));
    advance();
  }
}

Result<void> BulkCreateReader::check_rest() {
  BulkLink scratch;
  for (;;) {
    auto more = next(scratch);
    if (!more) return fail(more.error());
    if (!*more) return ok();
  }
}

Result<std::optional<BulkCreate>> decode_bulk_create(const Message& m, const DecodeContext& ctx) {
  auto reader = BulkCreateReader::open(m, ctx);
  if (!reader) return fail(reader.error());
  if (!*reader) return std::nullopt;
  BulkCreate out;
  out.items.resize((*reader)->size());  // every link that can be read was counted
  for (std::size_t i = 0; i < out.items.size(); ++i) {
    auto more = (*reader)->next(out.items[i]);
    if (!more) return fail(more.error());
    if (!*more) out.items.resize(i);
  }
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
