// rtnl/wire/attrs.cc — policy-driven decoding of kind attributes, and their encoding.
#include "rtnl/wire/attrs.h"

#include <cerrno>
#include <memory>

#include "ifcore/link_request.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

const AttrPolicyEntry* find_entry(AttrPolicy policy, std::uint16_t type) {
  for (const auto& e : policy)
    if (e.type == type) return &e;
  return nullptr;
}

Result<Attr> decode_one(const RawAttr& a, const AttrPolicyEntry& e, const DecodeContext& ctx) {
  Attr out;
  out.type = a.type;
  out.shape = e.shape;
  switch (e.shape) {
    case AttrShape::Flag:
      // Linux: validate_nla refuses an NLA_FLAG with a payload (ERANGE, policy failed).
      if (!a.data.empty()) return fail_policy(a.offset, {.type = NL_ATTR_TYPE_FLAG});
      return out;
    case AttrShape::U8: {
      auto v = a.u8();
      if (!v) return fail(v.error());
      out.num = *v;
      return out;
    }
    case AttrShape::U16: {
      auto v = a.u16();
      if (!v) return fail(v.error());
      out.num = *v;
      return out;
    }
    case AttrShape::U32: {
      auto v = a.u32();
      if (!v) return fail(v.error());
      out.num = *v;
      return out;
    }
    case AttrShape::U64: {
      auto v = a.u64();
      if (!v) return fail(v.error());
      out.num = *v;
      return out;
    }
    case AttrShape::Be16: {
      auto v = a.be16();
      if (!v) return fail(v.error());
      out.num = *v;
      return out;
    }
    case AttrShape::Be32: {
      auto v = a.be32();
      if (!v) return fail(v.error());
      out.num = *v;
      return out;
    }
    case AttrShape::String: {
      auto v = a.string(e.max_len);
      if (!v) return fail(v.error());
      out.str = std::move(*v);
      return out;
    }
    case AttrShape::Binary: {
      auto v = a.binary(e.min_len, e.max_len);
      if (!v) return fail(v.error());
      out.bin.assign(v->begin(), v->end());
      return out;
    }
    case AttrShape::Nested: {
      if (e.nested.empty()) {
        out.shape = AttrShape::Binary;
        out.bin.assign(a.data.begin(), a.data.end());
        return out;
      }
      DecodeContext inner = ctx;
      ++inner.depth;
      auto v = decode_attrs(a.data, e.nested, a.offset + NLA_HDRLEN, inner);
      if (!v) return fail(v.error());
      out.nested = std::move(*v);
      return out;
    }
    case AttrShape::LinkMsg: {
      if (a.data.size() < sizeof(ifinfomsg))
        return fail_at(a.offset, ERANGE, "attribute type {}: length {} shorter than ifinfomsg",
                       a.type, a.data.size());
      DecodeContext inner = ctx;
      ++inner.depth;
      // Decoded where it is kept: the request is shared as a part of its DecodedLink.
      auto holder = std::make_shared<DecodedLink>();
      IFCORE_TRY(decode_link_body_into(a.data, a.offset + NLA_HDRLEN, inner, *holder));
      out.link = std::shared_ptr<const LinkRequest>(holder, &holder->req);
      return out;
    }
  }
  return fail_at(a.offset, EINVAL, "attribute type {}: bad policy shape", a.type);
}

}  // namespace

Result<AttrList> decode_attrs(std::span<const std::uint8_t> bytes, AttrPolicy policy,
                              int base_offset, const DecodeContext& ctx) {
  if (ctx.depth >= kMaxNestDepth)
    return fail_at(base_offset, EINVAL, "attribute nesting deeper than {}", kMaxNestDepth);
  auto raw = walk_attrs(bytes, base_offset);
  if (!raw) return fail(raw.error());
  AttrList out;
  out.reserve(raw->size());
  for (const RawAttr a : *raw) {
    const AttrPolicyEntry* e = find_entry(policy, a.type);
    if (!e) return fail_at(a.offset, EINVAL, "unknown attribute type {}", a.type);
    auto v = decode_one(a, *e, ctx);
    if (!v) return fail(v.error());
    bool replaced = false;
    for (auto& prev : out) {
      if (prev.type == v->type) {
        prev = std::move(*v);
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(std::move(*v));
  }
  return out;
}

Result<void> encode_attrs(MessageBuilder& b, const AttrList& attrs, int depth) {
  if (depth >= kMaxNestDepth)
    return fail(EINVAL, "attribute nesting deeper than {}", kMaxNestDepth);
  for (const Attr& a : attrs) {
    switch (a.shape) {
      case AttrShape::Flag:
        b.put_flag(a.type);
        break;
      case AttrShape::U8:
        b.put_u8(a.type, static_cast<std::uint8_t>(a.num));
        break;
      case AttrShape::U16:
        b.put_u16(a.type, static_cast<std::uint16_t>(a.num));
        break;
      case AttrShape::U32:
        b.put_u32(a.type, static_cast<std::uint32_t>(a.num));
        break;
      case AttrShape::U64:
        b.put_u64(a.type, a.num);
        break;
      case AttrShape::Be16:
        b.put_be16(a.type, static_cast<std::uint16_t>(a.num));
        break;
      case AttrShape::Be32:
        b.put_be32(a.type, static_cast<std::uint32_t>(a.num));
        break;
      case AttrShape::String:
        b.put_string(a.type, a.str);
        break;
      case AttrShape::Binary:
        b.put_bytes(a.type, a.bin);
        break;
      case AttrShape::Nested: {
        auto nest = b.begin_nest(a.type);
        IFCORE_TRY(encode_attrs(b, a.nested, depth + 1));
        b.end_nest(nest);
        break;
      }
      case AttrShape::LinkMsg: {
        auto nest = b.begin_nest(a.type);
        if (a.link) {
          IFCORE_TRY(encode_link_body(b, *a.link, depth + 1));
        } else {
          b.put_struct(ifinfomsg{});
        }
        b.end_nest(nest);
        break;
      }
    }
  }
  return ok();
}

}  // namespace ifcore::wire
