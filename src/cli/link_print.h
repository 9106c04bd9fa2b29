// cli/link_print.h — a device as `ip link show` / `ip addr show` print it: the header
// line, the link/ether line, `-d` details with the kind's data, `-s` statistics, `-br`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/client.h"
#include "rtnl/wire/address.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::cli {

// A decoded RTM_NEWLINK plus the raw pieces the wire decoder does not model.
struct LinkView {
  wire::LinkMessage m;
  std::uint16_t nlmsg_type = 0;
  std::optional<std::uint32_t> tso_max_size, tso_max_segs;
  std::vector<std::uint8_t> info_data, slave_data;  // raw IFLA_INFO_DATA / SLAVE_DATA
  bool has_info_data = false, has_slave_data = false;
  // A device the show filters pass over (iproute2's print_linkinfo tests: up, master, type,
  // group): printed as nothing, or `{}` in JSON.
  bool hidden = false;
};

// Errors: EINVAL for a malformed message.
Result<LinkView> read_link(const wire::Message& msg);

// Prints one device. `do_link`: `ip link` (mode shown) rather than `ip addr`.
// `end_line`: finish with the newline (ip addr prints addresses after it).
void print_link(Ctx& c, const LinkView& l, bool do_link, bool monitor = false);
void print_link_brief(Ctx& c, const LinkView& l);
// `-br` with the link layer (`ip -br link`, `ip -br -0 addr`): name, state, address, flags.
void print_link_brief_packet(Ctx& c, const LinkView& l);

// A link-layer address as ip prints it: IP addresses for IP tunnels, else aa:bb:...
std::string ll_addr_text(const HwAddr& a, std::uint16_t hw_type);
// Flag words, in iproute2's order ("NO-CARRIER" first when up without carrier).
std::vector<std::string> link_flag_names(std::uint32_t flags, bool mdown);
const char* operstate_name(std::uint8_t s);
// The `@peer` part and the JSON link keys; the name column of `-br`.
std::string link_name_with_peer(Ctx& c, const LinkView& l);

// `link show` / `addr show` / `addr flush` selection, as iproute2 parses it for all three
// (ipaddr_list_flush_or_save): the devices, then the addresses on them.
struct LinkFilter {
  int family = 0;  // ifi_family of the dump (`ip -6 addr` asks AF_INET6's view)
  std::string name, kind, slave_kind, master;
  bool up = false, nomaster = false;
  std::optional<std::uint32_t> group;
};
struct AddrFilter {
  int family = 0;  // the address family shown (`to` sets it when no -4/-6 did)
  std::uint8_t scope = 0, scope_mask = 0;
  std::uint32_t flags = 0, flag_mask = 0;  // IFA_F_* that must be set / clear
  std::optional<std::uint8_t> proto;       // IFA_PROTO, where the address has one
  std::optional<std::string> label;        // fnmatch(3) pattern on the label or device name
  std::optional<Prefix> to;
  // Is `a`, on device `dev`, selected? (iproute2's print_addrinfo tests.)
  bool selects(const wire::AddrMessage& a, const std::string& dev) const;
};
Result<std::vector<LinkView>> list_links(Ctx& c, const LinkFilter& f);
// Reads the words after `show`/`flush`; `af.family` starts as the command's family.
Result<void> parse_show_filter(Ctx& c, Args& a, LinkFilter& lf, AddrFilter& af);

// Kind data (`-d`): link_kinds.cc.
void print_kind_data(Ctx& c, const std::string& kind, const std::vector<wire::RawAttr>& a);
void print_slave_data(Ctx& c, const std::string& kind, const std::vector<wire::RawAttr>& a);

}  // namespace ifcore::cli
