// rtnl/wire/link.h — RTM_NEWLINK / RTM_SETLINK / RTM_DELLINK / RTM_GETLINK messages:
// requests decoded into `ifcore::LinkRequest`, and the RTM_NEWLINK a dump or a
// notification carries (`LinkMessage`), encoded in the order Linux's rtnl_fill_ifinfo
// uses and decoded back (tolerantly: the CLI also reads the real kernel's messages).
#pragma once

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ifcore/addr.h"
#include "ifcore/attr.h"
#include "ifcore/link_request.h"
#include "ifcore/result.h"
#include "rtnl/wire/attrs.h"
#include "rtnl/wire/netlink.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

// ifcore's own IFLA_* attributes live far above the uapi's IFLA_MAX (61 in Linux 6.1, ~70
// in 6.18) and below NLA_TYPE_MASK, where Linux will not reach. See docs/WIRE.md.
inline constexpr std::uint16_t IFCORE_IFLA_BASE = 0x3f00;
inline constexpr std::uint16_t IFCORE_IFLA_NET_NS_NAME = IFCORE_IFLA_BASE + 0;  // string
inline constexpr std::uint16_t IFCORE_IFLA_BULK = IFCORE_IFLA_BASE + 1;         // nest
inline constexpr std::uint16_t IFCORE_IFLA_BULK_INDEX = IFCORE_IFLA_BASE + 2;   // u32
inline constexpr std::uint16_t IFCORE_IFLA_BULK_ERRNO = IFCORE_IFLA_BASE + 3;   // u32
inline constexpr std::uint16_t IFCORE_IFLA_BULK_MSG = IFCORE_IFLA_BASE + 4;     // string
// u32: the errno the preload shim met resolving IFLA_NET_NS_PID or IFLA_NET_NS_FD (no such
// process, not a namespace), which ifcored answers as Linux would have (the request fails).
inline constexpr std::uint16_t IFCORE_IFLA_NET_NS_ERRNO = IFCORE_IFLA_BASE + 5;

// IFLA_* types newer than the uapi headers ifcore builds with (Linux 6.1); values from
// Linux 6.18's include/uapi/linux/if_link.h.
inline constexpr std::uint16_t kIflaDevlinkPort = 62;              // nest
inline constexpr std::uint16_t kIflaGsoIpv4MaxSize = 63;           // IFLA_GSO_IPV4_MAX_SIZE
inline constexpr std::uint16_t kIflaGroIpv4MaxSize = 64;           // IFLA_GRO_IPV4_MAX_SIZE
inline constexpr std::uint16_t kIflaDpllPin = 65;                  // nest
inline constexpr std::uint16_t kIflaMaxPacingOffloadHorizon = 66;  // u32
inline constexpr std::uint16_t kIflaNetnsImmutable = 67;           // u8
inline constexpr std::uint16_t kIflaHeadroom = 68;                 // u16
inline constexpr std::uint16_t kIflaTailroom = 69;                 // u16

// A decoded RTM_NEWLINK / RTM_SETLINK / RTM_DELLINK request.
struct DecodedLink {
  LinkRequest req;
  // IFLA_INFO_DATA as received when it was not decoded into req.info_data (empty when it
  // was; info_data_decoded says which). It stays undecoded when the message names no kind
  // (a change of an existing device: the handler knows the kind and calls
  // decode_attrs(info_data_raw, policy, info_data_offset)) or the kind has no policy (the
  // handler answers "unknown kind").
  std::vector<std::uint8_t> info_data_raw;
  int info_data_offset = -1;  // of the payload, from the start of the nlmsghdr
  bool info_data_decoded = false;
  std::vector<std::uint8_t> slave_data_raw;  // IFLA_INFO_SLAVE_DATA, likewise
  int slave_data_offset = -1;
  bool slave_data_decoded = false;
  // Settings only a hardware driver takes: IFLA_VFINFO_LIST holding an IFLA_VF_INFO (SR-IOV
  // virtual functions), IFLA_VF_PORTS, IFLA_PORT_SELF, IFLA_MAP. No ifcore kind has them
  // (Linux: rtnl_create_link ignores them; do_setlink finds no ndo_set_vf_*,
  // ndo_set_vf_port or ndo_set_config: EOPNOTSUPP).
  bool driver_ops = false;
};

// Decodes a link request message (type RTM_NEWLINK, RTM_SETLINK or RTM_DELLINK).
// IFLA_* types ifcore models are decoded; read-only ones a client may echo (IFLA_STATS,
// IFLA_QDISC, IFLA_PAD, IFLA_EXT_MASK, ...) are ignored; other uapi types fail with
// EOPNOTSUPP "attribute type N not supported"; types above IFLA_MAX that are not ifcore's
// fail with EINVAL "unknown attribute type N". IFLA_AF_SPEC accepts AF_INET6 /
// IFLA_INET6_ADDR_GEN_MODE only (another family: EAFNOSUPPORT, like rtnl_af_lookup).
// Errors: EINVAL "ifinfomsg payload too short ...", the errors of decode_attrs for the
// attributes and the kind data (with attr_offset from the start of the nlmsghdr).
Result<DecodedLink> decode_link_request(const Message& m, const DecodeContext& ctx);

// Decodes an ifinfomsg followed by IFLA_* attributes (a request body, or the payload of
// VETH_INFO_PEER). `base_offset` is the offset of body[0] from the start of the nlmsghdr.
// Errors: as decode_link_request; ERANGE when body is shorter than ifinfomsg (Linux:
// VETH_INFO_PEER's policy minimum length).
Result<DecodedLink> decode_link_body(std::span<const std::uint8_t> body, int base_offset,
                                     const DecodeContext& ctx);
// Same, into `out` (a default-constructed DecodedLink): what a nested request (a veth's
// peer) is decoded with, in the place it is kept. On an error `out` is partly filled.
Result<void> decode_link_body_into(std::span<const std::uint8_t> body, int base_offset,
                                   const DecodeContext& ctx, DecodedLink& out);

// Appends a LinkRequest as ifinfomsg + IFLA_* attributes to the open message (the body
// of a request, or VETH_INFO_PEER's payload).
// Errors: from encode_attrs for info_data / slave_data.
Result<void> encode_link_body(MessageBuilder& b, const LinkRequest& req, int depth = 0);

// Writes a whole request message: RTM_NEWLINK, RTM_SETLINK or RTM_DELLINK per h.type.
// Errors: as encode_link_body, EMSGSIZE from the builder.
Result<void> encode_link_request(MessageBuilder& b, const Header& h, const LinkRequest& req);

// RTM_GETLINK: one device (by ifindex or name), or a dump with filters.
struct GetLinkRequest {
  int ifindex = 0;                             // ifi_index
  std::optional<std::string> name;             // IFLA_IFNAME
  std::optional<std::string> alt_name;         // IFLA_ALT_IFNAME
  std::uint32_t ext_mask = 0;                  // IFLA_EXT_MASK (RTEXT_FILTER_*)
  std::optional<std::string> filter_kind;      // IFLA_LINKINFO / IFLA_INFO_KIND (dumps)
  std::optional<std::uint32_t> filter_master;  // IFLA_MASTER (dumps)
  std::optional<std::int32_t> target_netnsid;  // IFLA_TARGET_NETNSID
  bool dump = false;                           // NLM_F_DUMP
};

// Decodes RTM_GETLINK. A dump may carry only a struct rtgenmsg (old clients): Linux
// (rtnl_dump_ifinfo) accepts it, and so do we. Unknown attributes are ignored (Linux
// parses GETLINK non-strictly for old clients).
// Errors: EINVAL "ifinfomsg payload too short ..." for a non-dump, attribute errors.
Result<GetLinkRequest> decode_getlink(const Message& m);
// Errors: EMSGSIZE from the builder.
Result<void> encode_getlink(MessageBuilder& b, const Header& h, const GetLinkRequest& req);

// RTM_NEWLINKPROP / RTM_DELLINKPROP (Linux: rtnl_linkprop): the device by ifi_index, else
// IFLA_IFNAME, else IFLA_ALT_IFNAME, and IFLA_PROP_LIST's entries in their order. Entries
// are views into the request (valid while its bytes are): Linux checks each IFLA_ALT_IFNAME
// against its policy only when it comes to it, after applying the ones before.
struct LinkPropRequest {
  int ifindex = 0;
  std::optional<std::string> name;      // IFLA_IFNAME
  std::optional<std::string> alt_name;  // IFLA_ALT_IFNAME (outside the list: a lookup)
  bool has_prop_list = false;           // IFLA_PROP_LIST present
  std::vector<RawAttr> props;           // its entries, unchecked
};

// Decodes RTM_NEWLINKPROP / RTM_DELLINKPROP. Attributes other than those above are ignored.
// Errors: EINVAL "ifinfomsg payload too short ...", ERANGE "Attribute failed policy
// validation" (IFLA_IFNAME over 15 bytes, IFLA_ALT_IFNAME over 127, IFLA_PROP_LIST shorter
// than an attribute header), EOPNOTSUPP "specified netns attribute not supported"
// (IFLA_NET_NS_PID / IFLA_NET_NS_FD: Linux's rtnl_ensure_unique_netns), framing errors.
Result<LinkPropRequest> decode_linkprop(const Message& m);

// Checks one entry of IFLA_PROP_LIST as Linux's rtnl_alt_ifname does (ifla_policy's
// IFLA_ALT_IFNAME: 1..127 bytes before an optional NUL) and returns the name.
// Errors: ERANGE "Attribute failed policy validation", pointing at the entry.
Result<std::string> linkprop_alt_name(const RawAttr& entry);

// Writes RTM_NEWLINKPROP / RTM_DELLINKPROP (per h.type) naming the device by `ifindex`,
// with one IFLA_ALT_IFNAME per name in IFLA_PROP_LIST (NLA_F_NESTED, as ip sends it).
// Errors: EMSGSIZE from the builder.
Result<void> encode_linkprop(MessageBuilder& b, const Header& h, int ifindex,
                             const std::vector<std::string>& alt_names);

// RTM_NEWLINK / RTM_DELLINK as Linux sends them in dumps and notifications.
struct LinkMessage {
  // ifinfomsg
  std::uint8_t family = AF_UNSPEC;
  std::uint16_t hw_type = 0;  // ARPHRD_*
  std::int32_t ifindex = 0;
  std::uint32_t flags = 0;  // IFF_*
  std::uint32_t change = 0;

  std::string name;                       // IFLA_IFNAME (always)
  std::uint32_t txqlen = 0;               // IFLA_TXQLEN (always: some clients need it)
  std::optional<std::uint8_t> operstate;  // IFLA_OPERSTATE (IF_OPER_*)
  std::optional<std::uint8_t> link_mode;  // IFLA_LINKMODE
  std::optional<std::uint32_t> mtu, min_mtu, max_mtu, group, promiscuity, allmulti;
  std::optional<std::uint8_t> netns_immutable;  // IFLA_NETNS_IMMUTABLE (Linux 6.18)
  std::optional<std::uint32_t> num_tx_queues, gso_max_segs, gso_max_size, gro_max_size;
  std::optional<std::uint32_t> gso_ipv4_max_size, gro_ipv4_max_size;  // IFLA_G[SR]O_IPV4_*
  std::optional<std::uint32_t> tso_max_size, tso_max_segs;            // IFLA_TSO_MAX_*
  std::optional<std::uint32_t> max_pacing_offload_horizon;
  std::optional<std::uint32_t> num_rx_queues;
  std::optional<std::uint32_t> master;  // IFLA_MASTER
  std::optional<std::uint8_t> carrier;  // IFLA_CARRIER
  std::optional<std::string> ifalias;   // IFLA_IFALIAS
  std::optional<std::uint32_t> carrier_changes, carrier_up_count, carrier_down_count;
  std::optional<std::uint16_t> headroom, tailroom;  // IFLA_HEADROOM, IFLA_TAILROOM
  std::optional<std::uint8_t> proto_down;           // IFLA_PROTO_DOWN
  std::optional<std::uint32_t> proto_down_reason;   // IFLA_PROTO_DOWN_REASON (its VALUE)
  std::optional<std::uint32_t> event;               // IFLA_EVENT (IFLA_EVENT_*)
  std::optional<HwAddr> address, broadcast;         // IFLA_ADDRESS, IFLA_BROADCAST
  std::optional<rtnl_link_stats64> stats64;         // IFLA_STATS64
  std::optional<rtnl_link_stats> stats;             // IFLA_STATS (32-bit)
  std::optional<rtnl_link_ifmap> ifmap;             // IFLA_MAP (after IFLA_AF_SPEC in 6.18)
  bool xdp = false;  // IFLA_XDP { IFLA_XDP_ATTACHED = XDP_ATTACHED_NONE }
  // IFLA_LINKINFO
  std::optional<std::string> kind;          // IFLA_INFO_KIND
  std::optional<AttrList> info_data;        // IFLA_INFO_DATA (decoded with the kind's policy)
  std::vector<std::uint8_t> info_data_raw;  // on decode: its bytes when no policy fit
  std::optional<std::string> slave_kind;    // IFLA_INFO_SLAVE_KIND
  std::optional<AttrList> slave_data;       // IFLA_INFO_SLAVE_DATA
  std::vector<std::uint8_t> slave_data_raw;
  std::optional<std::int32_t> link_netnsid;  // IFLA_LINK_NETNSID
  std::optional<std::uint32_t> link;         // IFLA_LINK
  std::optional<HwAddr> perm_address;        // IFLA_PERM_ADDRESS
  std::optional<std::string> qdisc;          // IFLA_QDISC
  // IFLA_AF_SPEC
  std::optional<std::vector<std::uint32_t>> inet_conf;         // AF_INET / IFLA_INET_CONF
  std::optional<std::uint32_t> inet6_flags;                    // AF_INET6 / IFLA_INET6_FLAGS
  std::optional<ifla_cacheinfo> inet6_cacheinfo;               // AF_INET6 / IFLA_INET6_CACHEINFO
  std::optional<std::vector<std::int32_t>> inet6_conf;         // AF_INET6 / IFLA_INET6_CONF
  std::optional<std::vector<std::uint64_t>> inet6_stats;       // IFLA_INET6_STATS
  std::optional<std::vector<std::uint64_t>> inet6_icmp6stats;  // IFLA_INET6_ICMP6STATS
  std::optional<std::array<std::uint8_t, 16>> inet6_token;     // IFLA_INET6_TOKEN
  std::optional<std::uint8_t> inet6_addr_gen_mode;  // AF_INET6 / IFLA_INET6_ADDR_GEN_MODE
  // IFLA_PROP_LIST { IFLA_ALT_IFNAME... } (after IFLA_MAP; absent when empty)
  std::vector<std::string> alt_names;
};

// Writes `msg` as one message (h.type is RTM_NEWLINK or RTM_DELLINK), attributes in the
// order Linux 6.18's rtnl_fill_ifinfo emits them (see docs/WIRE.md).
// Errors: from encode_attrs, EMSGSIZE from the builder.
Result<void> encode_link_message(MessageBuilder& b, const Header& h, const LinkMessage& msg);
// Begins a message about a device: `h`, then its ifinfomsg of `family` (type, index and
// flags from `m`, ifi_change `change`).
void begin_ifinfo(MessageBuilder& b, const Header& h, std::uint8_t family, const LinkMessage& m,
                  std::uint32_t change = 0);
// The message of an AF_INET6 link dump or of RTNLGRP_IPV6_IFINFO (Linux: inet6_fill_ifinfo):
// family AF_INET6; the name, address, mtu, link and operstate (IF_OPER_DOWN when not up);
// the inet6 attributes in IFLA_PROTINFO.
Result<void> encode_inet6_ifinfo(MessageBuilder& b, const Header& h, const LinkMessage& msg);

// Decodes an RTM_NEWLINK / RTM_DELLINK from ifcored or the kernel. Attributes it does not
// know are skipped; kind data is decoded with ctx.kind_policy when that succeeds, else kept
// raw. Known attributes of the wrong size are errors.
// Errors: EINVAL "ifinfomsg payload too short ...", EINVAL for malformed TLVs and sizes.
Result<LinkMessage> decode_link_message(const Message& m, const DecodeContext& ctx = {});

}  // namespace ifcore::wire
