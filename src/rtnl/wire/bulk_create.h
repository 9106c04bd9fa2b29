// rtnl/wire/bulk_create.h — ifcore's create batch: one RTM_NEWLINK carrying many link
// requests (each with its addresses), answered with one multipart RTM_NEWLINK per request
// (its errno, its device) and NLMSG_DONE; the bulk delete's counterpart (bulk.h). Format in
// docs/WIRE.md ("Create batch").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ifcore/result.h"
#include "rtnl/wire/address.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/netlink.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

// Inside IFCORE_IFLA_BULK of an RTM_NEWLINK, in request order: one IFCORE_BULK_LINK per
// device, each followed by the IFCORE_BULK_ADDRs of that device.
inline constexpr std::uint16_t IFCORE_BULK_LINK = 3;  // ifinfomsg + IFLA_* (a link request)
inline constexpr std::uint16_t IFCORE_BULK_ADDR = 4;  // ifaddrmsg + IFA_* (ifa_index ignored)

// One device to create, with its addresses.
struct BulkLink {
  DecodedLink link;
  std::vector<AddrMessage> addrs;
};

struct BulkCreate {
  std::vector<BulkLink> items;
};

// Reads a create batch one item at a time into storage the caller reuses, so that the
// requests of a big batch (about 600 bytes each once decoded) are never all in memory.
// Valid while the message's bytes and `ctx` are.
class BulkCreateReader {
 public:
  // nullopt when the RTM_NEWLINK carries no IFCORE_IFLA_BULK (an ordinary request).
  // Errors: EINVAL "Invalid header length", the framing errors of the message's
  // attributes; for a batch without a link, the first error of its items, else EINVAL
  // "create batch names no device".
  static Result<std::optional<BulkCreateReader>> open(const Message& m, const DecodeContext& ctx);

  // The links of the batch, counted when it was opened.
  std::size_t size() const { return links_; }
  // Decodes the next item (its link and the addresses after it) into `out`, replacing what
  // it held; false after the last. Errors: those of decode_bulk_create, in request order.
  Result<bool> next(BulkLink& out);
  // Decodes the items not read yet, keeping nothing. Errors: the first of them.
  Result<void> check_rest();

 private:
  BulkCreateReader(const DecodeContext& ctx, std::vector<RawAttr> nests, std::size_t links)
      : ctx_(&ctx), nests_(std::move(nests)), links_(links) {}
  // The next attribute of the list, across its nests (nullopt at the end), and the step
  // past it. Errors: a nest whose attributes do not parse.
  Result<std::optional<RawAttr>> peek();
  void advance() { ++*at_; }

  const DecodeContext* ctx_;
  std::vector<RawAttr> nests_;  // the IFCORE_IFLA_BULK attributes
  std::size_t links_ = 0;
  std::size_t nest_ = 0;  // the next nest to walk
  std::optional<RawAttrs> walked_;
  std::optional<RawAttrs::iterator> at_;
  bool linked_ = false;  // a link was read
};

// The whole batch at once (tests, small batches).
// Returns nullopt when the RTM_NEWLINK carries no IFCORE_IFLA_BULK (an ordinary request).
// Several IFCORE_IFLA_BULK attributes are concatenated (a nest holds at most 64 KiB). Each
// link is decoded as decode_link_body decodes a request body (kind data with ctx).
// Errors: EINVAL "Invalid header length", the errors of decode_link_body and decode_addr
// (offsets from the start of the message), EINVAL "unknown attribute type N" inside the
// list, EINVAL "bulk address before any link", EINVAL "create batch names no device".
Result<std::optional<BulkCreate>> decode_bulk_create(const Message& m, const DecodeContext& ctx);

// What encode_bulk_create writes for one device.
struct BulkLinkRequest {
  LinkRequest link;
  std::vector<AddrMessage> addrs;
};

// Writes the request (h.type should be RTM_NEWLINK, with NLM_F_CREATE), splitting the list
// over as many IFCORE_IFLA_BULK nests as needed. The builder's datagram limit does not
// bound one message: give it room for big batches.
// Errors: those of encode_link_body and encode_addr, EMSGSIZE from the builder.
Result<void> encode_bulk_create(MessageBuilder& b, const Header& h,
                                const std::vector<BulkLinkRequest>& items);

// The same from link bodies already encoded (ifinfomsg + IFLA_*, a plain RTM_NEWLINK's
// payload), without addresses: what `ifc -batch` collects from its `link add` lines.
// Errors: EMSGSIZE from the builder.
Result<void> encode_bulk_create_bodies(MessageBuilder& b, const Header& h,
                                       std::span<const std::vector<std::uint8_t>> bodies);

}  // namespace ifcore::wire
