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
