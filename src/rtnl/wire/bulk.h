// rtnl/wire/bulk.h — ifcore's bulk delete: one RTM_DELLINK naming many devices, answered
// with one multipart RTM_DELLINK per device (its errno) and NLMSG_DONE. Format in
// docs/WIRE.md ("Bulk delete").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ifcore/result.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::wire {

// Inside IFCORE_IFLA_BULK: one attribute per device, in request order.
inline constexpr std::uint16_t IFCORE_BULK_IFINDEX = 1;  // u32
inline constexpr std::uint16_t IFCORE_BULK_IFNAME = 2;   // string

// One device to delete: by ifindex or by name (exactly one is set).
struct BulkItem {
  std::optional<std::uint32_t> ifindex;
  std::optional<std::string> name;
  friend bool operator==(const BulkItem&, const BulkItem&) = default;
};

struct BulkDelete {
  std::vector<BulkItem> items;
};

// Returns nullopt when the RTM_DELLINK carries no IFCORE_IFLA_BULK (an ordinary delete).
// Several IFCORE_IFLA_BULK attributes are concatenated (a nest holds at most 64 KiB).
// Errors: EINVAL "ifinfomsg payload too short ...", EINVAL for malformed TLVs, EINVAL
// "unknown attribute type N" inside the list, ERANGE for a bad name, EINVAL "bulk delete
// names no device" for an empty list.
Result<std::optional<BulkDelete>> decode_bulk_delete(const Message& m);

// Writes the request (h.type should be RTM_DELLINK), splitting the list over as many
// IFCORE_IFLA_BULK nests as needed.
// Errors: EINVAL "bulk item names neither ifindex nor name", EMSGSIZE from the builder.
Result<void> encode_bulk_delete(MessageBuilder& b, const Header& h, const BulkDelete& req);

// The outcome for one item: its position in the request, the device (when resolved) and
// a positive errno (0 = deleted).
struct BulkResult {
  std::uint32_t index = 0;          // IFCORE_IFLA_BULK_INDEX
  std::int32_t ifindex = 0;         // ifi_index (0 when the name did not resolve)
  std::optional<std::string> name;  // IFLA_IFNAME
  int error = 0;                    // IFCORE_IFLA_BULK_ERRNO
  std::string message;              // IFCORE_IFLA_BULK_MSG (empty: absent)
  friend bool operator==(const BulkResult&, const BulkResult&) = default;
};

// Writes one reply message: `type` (RTM_DELLINK for a bulk delete, RTM_NEWLINK for a create
// batch, bulk_create.h) with NLM_F_MULTI, echoing `seq`, to `portid`.
// Errors: EMSGSIZE from the builder.
Result<void> encode_bulk_result(MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                const BulkResult& r, std::uint16_t type = RTM_DELLINK);

// Errors: EINVAL "not a bulk result" when IFCORE_IFLA_BULK_ERRNO is missing, and
// the errors of malformed messages.
Result<BulkResult> decode_bulk_result(const Message& m);

}  // namespace ifcore::wire
