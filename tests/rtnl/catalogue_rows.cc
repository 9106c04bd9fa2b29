// tests/rtnl/catalogue_rows.cc — the bad-input catalogue's rows by subject (catalogue.h):
// framing, message types, unknown attributes, names and indexes, ranges, loops, devices
// gone, veth peers, namespaces.
#include "rtnl/catalogue.h"

namespace ifcore::rtnl::test::catalogue {

// clang-format off
std::vector<Row> framing_rows() {
  std::vector<Row> rows;
  // Linux: __nlmsg_parse refuses a message shorter than its family header.
  struct Short { const char* name; std::uint16_t type; const char* extack = "Invalid header length"; };
  for (Short s : {Short{"newlink", RTM_NEWLINK}, Short{"setlink", RTM_SETLINK},
                  Short{"dellink", RTM_DELLINK}, Short{"newaddr", RTM_NEWADDR},
                  Short{"deladdr", RTM_DELADDR}, Short{"newroute", RTM_NEWROUTE, ""},
                  Short{"delroute", RTM_DELROUTE, ""}, Short{"newrule", RTM_NEWRULE, "Invalid msg length"},
                  Short{"newnexthop", RTM_NEWNEXTHOP}}) {
    std::uint8_t fam[4] = {AF_INET, 0, 0, 0};
    rows.push_back({std::string("header_shorter_than_family_header_") + s.name,
                    fixed(Nl(s.type, kAck, fam, 4).done()), EINVAL, s.extack});
  }
  struct Dump { const char* name; std::uint16_t type; std::uint8_t family; const char* extack; };
  for (Dump d : {Dump{"getlink", RTM_GETLINK, AF_UNSPEC, "Invalid header for link dump"}, Dump{"getneigh", RTM_GETNEIGH, AF_INET, "Invalid header for neighbor dump request"},
                 Dump{"getrule", RTM_GETRULE, AF_INET, "Invalid header for fib rule dump request"},
                 Dump{"getnexthop", RTM_GETNEXTHOP, AF_UNSPEC, "Invalid header length"}}) {
    std::uint8_t fam[4] = {d.family, 0, 0, 0};
    rows.push_back({std::string("strict_dump_header_too_short_") + d.name,
                    fixed(Nl(d.type, NLM_F_DUMP, fam, 4).done()), EINVAL, d.extack, true});
  }
  // Attribute lies in a parse that validates trailing bytes (nexthops use nlmsg_parse).
  // A lenient parse (nlmsg_parse_deprecated) stops at the lie; the request goes on and
  // fails for what it lacks.
  // Several messages in one datagram: each is answered in order; a header that lies about
  // its length ends the datagram silently (netlink_rcv_skb).
  rows.push_back({"two_messages_both_refused",
                  [](const Ctx&) {
                    return cat({Nl::of(RTM_DELLINK, kAck, ifi(9999)).done(),
                                Nl::of(RTM_DELLINK, kAck, ifi(1)).done()});
                  },
                  ENOTSUP, "", false, {}, 2});
  rows.push_back({"refused_message_then_short_header",
                  [](const Ctx&) {
                    Bytes b = Nl::of(RTM_DELLINK, kAck, ifi(9999)).done();
                    Bytes tail(8, 0);
                    return cat({b, tail});
                  },
                  ENODEV, ""});
  rows.push_back({"refused_message_then_length_past_datagram",
                  [](const Ctx&) {
                    return cat({Nl::of(RTM_DELLINK, kAck, ifi(9999)).done(),
                                Nl::of(RTM_DELLINK, kAck, ifi(1)).done(200)});
                  },
                  ENODEV, ""});
  rows.push_back({"refused_message_then_length_below_header",
                  [](const Ctx&) {
                    return cat({Nl::of(RTM_DELLINK, kAck, ifi(9999)).done(),
                                Nl::of(RTM_DELLINK, kAck, ifi(1)).done(12)});
                  },
                  ENODEV, ""});
  rows.push_back({"three_messages_get_bad_get",
                  [](const Ctx&) {
                    return cat({Nl::of(RTM_GETLINK, 0, ifi(9998)).done(),
                                Nl::of(RTM_SETLINK, kAck, ifi(9999)).done(),
                                Nl::of(RTM_GETLINK, 0, ifi(9997)).done()});
                  },
                  ENODEV, "", false, {}, 3});
  return rows;
}

std::vector<Row> type_rows() {
  std::vector<Row> rows;
  // A u32 attribute given two bytes, a u8 given none (validate_nla's minimum lengths).
  struct A { const char* name; std::uint16_t type; std::size_t len; };
  for (A a : {A{"mtu", IFLA_MTU, 2}, A{"txqlen", IFLA_TXQLEN, 2}, A{"group", IFLA_GROUP, 2},
              A{"master", IFLA_MASTER, 2}, A{"link", IFLA_LINK, 2},
              A{"num_tx_queues", IFLA_NUM_TX_QUEUES, 2}, A{"num_rx_queues", IFLA_NUM_RX_QUEUES, 2},
              A{"gso_max_size", IFLA_GSO_MAX_SIZE, 2}, A{"gso_max_segs", IFLA_GSO_MAX_SEGS, 2},
              A{"net_ns_pid", IFLA_NET_NS_PID, 2},
              A{"target_netnsid", IFLA_TARGET_NETNSID, 2}, A{"net_ns_fd", IFLA_NET_NS_FD, 2},
              A{"operstate", IFLA_OPERSTATE, 0}, A{"linkmode", IFLA_LINKMODE, 0},
              A{"carrier", IFLA_CARRIER, 0}, A{"proto_down", IFLA_PROTO_DOWN, 0}}) {
    rows.push_back({std::string("setlink_short_") + a.name,
                    fixed(Nl::of(RTM_NEWLINK, kAck, ifi()).str(IFLA_IFNAME, "v0")
                              .attr(a.type, "\0\0\0\0", a.len).done()),
                    ERANGE, "Attribute failed policy validation"});
  }
  rows.push_back({"create_veth_short_mtu",
                  fixed(Nl::of(RTM_NEWLINK, kNew, ifi()).str(IFLA_IFNAME, "n0")
                            .attr(IFLA_MTU, "\0\0", 2).begin(IFLA_LINKINFO)
                            .str(IFLA_INFO_KIND, "veth").end().done()),
                  ERANGE, "Attribute failed policy validation"});
  rows.push_back({"setlink_name_sixteen_bytes",
                  fixed(Nl::of(RTM_NEWLINK, kAck, ifi()).str(IFLA_IFNAME, "abcdefghijklmnop").done()),
                  ERANGE, "Attribute failed policy validation"});
  rows.push_back({"setlink_alias_256_bytes",
                  fixed(Nl::of(RTM_NEWLINK, kAck, ifi()).str(IFLA_IFNAME, "v0")
                            .str(IFLA_IFALIAS, std::string(256, 'a')).done()),
                  ERANGE, "Attribute failed policy validation"});
  rows.push_back({"setlink_address_three_bytes",
                  fixed(Nl::of(RTM_NEWLINK, kAck, ifi()).str(IFLA_IFNAME, "v0")
                            .bytes(IFLA_ADDRESS, Bytes{2, 0, 1}).done()),
                  EINVAL, ""});
  rows.push_back({"setlink_broadcast_three_bytes",
                  fixed(Nl::of(RTM_NEWLINK, kAck, ifi()).str(IFLA_IFNAME, "v0")
                            .bytes(IFLA_BROADCAST, Bytes{2, 0, 1}).done()),
                  EINVAL, ""});
  rows.push_back({"setlink_multicast_address",
                  fixed(Nl::of(RTM_NEWLINK, kAck, ifi()).str(IFLA_IFNAME, "v0")
                            .bytes(IFLA_ADDRESS, Bytes{1, 0, 0, 0, 0, 1}).done()),
                  EADDRNOTAVAIL, ""});
  rows.push_back({"newroute_priority_two_bytes",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.2.0.0")
                            .attr(RTA_PRIORITY, "\1\0", 2).in4(RTA_GATEWAY, "10.0.0.2").done()),
                  ERANGE, "Attribute failed policy validation"});
  rows.push_back({"newneigh_dst_wrong_size",
                  [](const Ctx& c) {
                    return Nl::of(RTM_NEWNEIGH, kNew, ndm(AF_INET, c.idx("v0")))
                        .attr(NDA_DST, "\12\0\0", 3).done();
                  },
                  EINVAL, "Invalid network address"});
  rows.push_back({"newneigh_lladdr_too_short",
                  [](const Ctx& c) {
                    return Nl::of(RTM_NEWNEIGH, kNew, ndm(AF_INET, c.idx("v0")))
                        .in4(NDA_DST, "10.0.0.9").attr(NDA_LLADDR, "\2\0", 2).done();
                  },
                  EINVAL, "Invalid link address"});
  rows.push_back({"newrule_src_wrong_size",
                  fixed(Nl::of(RTM_NEWRULE, kNew, [] { auto h = frh(AF_INET); h.src_len = 16; h.table = 100; return h; }())
                            .attr(FRA_SRC, "\12\11", 2).done()),
                  EINVAL, "Invalid source address"});
  rows.push_back({"newrule_priority_two_bytes",
                  fixed(Nl::of(RTM_NEWRULE, kNew, [] { auto h = frh(AF_INET); h.table = 100; return h; }())
                            .attr(FRA_PRIORITY, "\1\0", 2).done()),
                  ERANGE, "Error parsing msg"});
  rows.push_back({"newnexthop_id_two_bytes",
                  fixed(Nl::of(RTM_NEWNEXTHOP, kNew, nhm(AF_INET)).attr(NHA_ID, "\5\0", 2).done()),
                  EINVAL, "invalid attribute length"});
  rows.push_back({"newnexthop_gateway_wrong_size",
                  [](const Ctx& c) {
                    return Nl::of(RTM_NEWNEXTHOP, kNew, nhm(AF_INET)).u32(NHA_ID, 5)
                        .u32(NHA_OIF, static_cast<std::uint32_t>(c.idx("v0")))
                        .attr(NHA_GATEWAY, "\12\0\0", 3).done();
                  },
                  EINVAL, "Invalid gateway"});
  return rows;
}

std::vector<Row> unknown_rows() {
  std::vector<Row> rows;
  rows.push_back({"create_unknown_kind", fixed(create_kind("n0", "nosuchkind")), ENOTSUP,
                  "Unknown device type"});
  rows.push_back({"create_unknown_kind_strict", fixed(create_kind("n0", "nosuchkind")),
                  ENOTSUP, "Unknown device type", true});
  rows.push_back({"create_without_kind", fixed(Nl::of(RTM_NEWLINK, kNew, ifi()).str(IFLA_IFNAME, "n0").done()),
                  ENOTSUP, "Unknown device type"});
  rows.push_back({"strict_getlink_unsupported_attribute",
                  [](const Ctx& c) { return Nl::of(RTM_GETLINK, 0, ifi(c.idx("v0"))).u32(IFLA_MTU, 1).done(); },
                  EINVAL, "Unsupported attribute in get link request", true});
  rows.push_back({"strict_getlink_header_flags",
                  [](const Ctx& c) { return Nl::of(RTM_GETLINK, 0, ifi(c.idx("v0"), 1, 0)).done(); },
                  EINVAL, "Invalid values in header for get link request", true});
  rows.push_back({"strict_getlink_dump_index",
                  fixed(Nl::of(RTM_GETLINK, NLM_F_DUMP, ifi(3)).done()), EINVAL, "Filter by device index not supported for link dumps", true});
  rows.push_back({"strict_getlink_dump_flags",
                  fixed(Nl::of(RTM_GETLINK, NLM_F_DUMP, ifi(0, 1, 0)).done()), EINVAL, "Invalid values in header for link dump request", true});
  rows.push_back({"strict_getlink_dump_unsupported_attribute",
                  fixed(Nl::of(RTM_GETLINK, NLM_F_DUMP, ifi()).u32(IFLA_MTU, 1).done()), EINVAL, "Unsupported attribute in link dump request", true});
  rows.push_back({"strict_getneigh_dump_state",
                  fixed(Nl::of(RTM_GETNEIGH, NLM_F_DUMP, ndm(AF_INET, 0, NUD_REACHABLE)).done()),
                  EINVAL, "Invalid values in header for neighbor dump request", true});
  rows.push_back({"strict_getneigh_dump_unsupported_attribute",
                  fixed(Nl::of(RTM_GETNEIGH, NLM_F_DUMP, ndm(AF_INET, 0, 0)).in4(NDA_DST, "10.0.0.2").done()),
                  EINVAL, "Unsupported attribute in neighbor dump request", true});
  rows.push_back({"strict_getrule_dump_header",
                  fixed(Nl::of(RTM_GETRULE, NLM_F_DUMP, [] { auto h = frh(AF_INET, 0); h.table = 5; return h; }()).done()),
                  EINVAL, "Invalid values in header for fib rule dump request", true});
  rows.push_back({"strict_getnexthop_dump_header",
                  fixed(Nl::of(RTM_GETNEXTHOP, NLM_F_DUMP, [] { auto h = nhm(AF_INET); h.nh_protocol = 4; return h; }()).done()),
                  EINVAL, "Invalid values in header for nexthop dump request", true});
  rows.push_back({"newnexthop_unknown_attribute",
                  fixed(Nl::of(RTM_NEWNEXTHOP, kNew, nhm(AF_INET)).u32(NHA_ID, 5).u32(NHA_MAX + 3, 1).done()),
                  EINVAL, "Device attribute required for non-blackhole and non-fdb nexthops"});
  rows.push_back({"message_type_above_rtm_max",
                  fixed(Nl(RTM_MAX + 1, kAck, "\0\0\0\0", 4).done()), ENOTSUP, ""});
  rows.push_back({"getlinkprop", fixed(Nl::of(RTM_GETLINKPROP, kAck, ifi(1)).done()), ENOTSUP, ""});
  rows.push_back({"newneigh_unknown_family",
                  [](const Ctx& c) { return Nl::of(RTM_NEWNEIGH, kNew, ndm(99, c.idx("v0"))).in4(NDA_DST, "10.0.0.9").done(); },
                  EAFNOSUPPORT, ""});
  rows.push_back({"newrule_unknown_family",
                  fixed(Nl::of(RTM_NEWRULE, kNew, frh(99)).done()), EAFNOSUPPORT, "Rule family not supported"});
  rows.push_back({"newnexthop_unknown_family",
                  [](const Ctx& c) { return Nl::of(RTM_NEWNEXTHOP, kNew, nhm(99)).u32(NHA_ID, 5).u32(NHA_OIF, static_cast<std::uint32_t>(c.idx("v0"))).done(); },
                  EINVAL, "Invalid address family"});
  return rows;
}

std::vector<Row> name_index_rows() {
  std::vector<Row> rows;
  for (const char* bad : {".", "..", "a/b", "a b", "a:b", "x\ty"}) {
    rows.push_back({std::string("create_veth_named_") +
                        (std::string(bad) == "." ? "dot" : std::string(bad) == ".." ? "dotdot"
                         : std::string(bad) == "a/b" ? "slash" : std::string(bad) == "a b" ? "space"
                         : std::string(bad) == "a:b" ? "colon" : "tab"),
                    fixed(veth_with_peer(bad, peer_of(peer_named("p9")))), EINVAL, ""});
  }
  rows.push_back({"rename_to_dot",
                  [](const Ctx& c) { return Nl::of(RTM_NEWLINK, kAck, ifi(c.idx("v1"))).str(IFLA_IFNAME, ".").done(); },
                  EINVAL, ""});
  rows.push_back({"create_named_like_existing", fixed(create_kind("v0", "bridge")), EEXIST, ""});
  rows.push_back({"create_named_lo", fixed(create_kind("lo", "bridge")), EEXIST, ""});
  rows.push_back({"create_named_two_formats", fixed(create_kind("a%d%d", "bridge")), EINVAL, ""});
  rows.push_back({"rename_to_existing",
                  [](const Ctx& c) { return Nl::of(RTM_NEWLINK, kAck, ifi(c.idx("v1"))).str(IFLA_IFNAME, "v0").done(); },
                  EEXIST, ""});
  rows.push_back({"rename_to_lo",
                  [](const Ctx& c) { return Nl::of(RTM_NEWLINK, kAck, ifi(c.idx("v1"))).str(IFLA_IFNAME, "lo").done(); },
                  EEXIST, ""});
  rows.push_back({"rename_to_invalid",
                  [](const Ctx& c) { return Nl::of(RTM_NEWLINK, kAck, ifi(c.idx("v1"))).str(IFLA_IFNAME, "a/b").done(); },
                  EINVAL, ""});
  rows.push_back({"create_existing_index",
                  fixed(Nl::of(RTM_NEWLINK, kNew, ifi(1)).str(IFLA_IFNAME, "n0").begin(IFLA_LINKINFO)
                            .str(IFLA_INFO_KIND, "bridge").end().done()),
                  EEXIST, ""});
  rows.push_back({"create_negative_index",
                  fixed(Nl::of(RTM_NEWLINK, kNew, ifi(-5)).str(IFLA_IFNAME, "n0").begin(IFLA_LINKINFO)
                            .str(IFLA_INFO_KIND, "bridge").end().done()),
                  EINVAL, "ifindex can't be negative"});
  rows.push_back({"setlink_missing_index", fixed(Nl::of(RTM_NEWLINK, kAck, ifi(9999)).done()), ENODEV, ""});
  rows.push_back({"setlink_rtm_setlink_missing_index", fixed(Nl::of(RTM_SETLINK, kAck, ifi(9999)).done()), ENODEV, ""});
  rows.push_back({"setlink_missing_name", fixed(Nl::of(RTM_SETLINK, kAck, ifi()).str(IFLA_IFNAME, "nosuch").done()), ENODEV, ""});
  rows.push_back({"setlink_neither_index_nor_name", fixed(Nl::of(RTM_SETLINK, kAck, ifi()).done()), EINVAL, ""});
  rows.push_back({"dellink_missing_index", fixed(Nl::of(RTM_DELLINK, kAck, ifi(9999)).done()), ENODEV, ""});
  rows.push_back({"dellink_missing_name", fixed(Nl::of(RTM_DELLINK, kAck, ifi()).str(IFLA_IFNAME, "nosuch").done()), ENODEV, ""});
  rows.push_back({"dellink_neither_index_nor_name", fixed(Nl::of(RTM_DELLINK, kAck, ifi()).done()), EINVAL, ""});
  rows.push_back({"dellink_index_and_other_name",
                  [](const Ctx& c) { return Nl::of(RTM_DELLINK, kAck, ifi(9999)).str(IFLA_IFNAME, "v0").done(); },
                  ENODEV, ""});
  rows.push_back({"dellink_empty_group", fixed(Nl::of(RTM_DELLINK, kAck, ifi()).u32(IFLA_GROUP, 77).done()), ENODEV, ""});
  rows.push_back({"getlink_missing_index", fixed(Nl::of(RTM_GETLINK, 0, ifi(9999)).done()), ENODEV, ""});
  rows.push_back({"getlink_missing_name", fixed(Nl::of(RTM_GETLINK, 0, ifi()).str(IFLA_IFNAME, "nosuch").done()), ENODEV, ""});
  rows.push_back({"getlink_neither_index_nor_name", fixed(Nl::of(RTM_GETLINK, 0, ifi()).done()), EINVAL, ""});
  rows.push_back({"altname_taken_by_other_device",
                  [](const Ctx& c) { return Nl::of(RTM_NEWLINKPROP, kAck, ifi(c.idx("v1"))).begin(IFLA_PROP_LIST | NLA_F_NESTED).str(IFLA_ALT_IFNAME, "v0").end().done(); },
                  EEXIST, ""});
  rows.push_back({"altname_is_own_name",
                  [](const Ctx& c) { return Nl::of(RTM_NEWLINKPROP, kAck, ifi(c.idx("v1"))).begin(IFLA_PROP_LIST | NLA_F_NESTED).str(IFLA_ALT_IFNAME, "v1").end().done(); },
                  EEXIST, ""});
  rows.push_back({"altname_delete_missing",
                  [](const Ctx& c) { return Nl::of(RTM_DELLINKPROP, kAck, ifi(c.idx("v1"))).begin(IFLA_PROP_LIST | NLA_F_NESTED).str(IFLA_ALT_IFNAME, "nosuch").end().done(); },
                  ENOENT, ""});
  rows.push_back({"altname_128_bytes",
                  [](const Ctx& c) { return Nl::of(RTM_NEWLINKPROP, kAck, ifi(c.idx("v1"))).begin(IFLA_PROP_LIST | NLA_F_NESTED).str(IFLA_ALT_IFNAME, std::string(128, 'a')).end().done(); },
                  ERANGE, "Attribute failed policy validation"});
  // Only IPv4 and IPv6 handle these, and PF_UNSPEC, which other families fall back to,
  // does not: EOPNOTSUPP before the message is parsed (rtnetlink_rcv_msg).
  rows.push_back({"newaddr_unknown_family",
                  [](const Ctx& c) { return Nl::of(RTM_NEWADDR, kNew, ifa(99, 24, c.idx("v0"))).in4(IFA_LOCAL, "10.0.7.1").done(); },
                  ENOTSUP, ""});
  rows.push_back({"deladdr_unspec_family",
                  [](const Ctx& c) { return Nl::of(RTM_DELADDR, kAck, ifa(AF_UNSPEC, 0, c.idx("v0"))).done(); },
                  ENOTSUP, ""});
  rows.push_back({"newroute_unknown_family",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(99, 16)).in4(RTA_DST, "10.2.0.0").done()), ENOTSUP, ""});
  rows.push_back({"getroute_unspec_family",
                  fixed(Nl::of(RTM_GETROUTE, kAck, rtm(AF_UNSPEC, 32)).in4(RTA_DST, "10.2.0.1").done()), ENOTSUP, ""});
  rows.push_back({"newaddr_missing_device",
                  fixed(Nl::of(RTM_NEWADDR, kNew, ifa(AF_INET, 24, 9999)).in4(IFA_LOCAL, "10.0.7.1").done()), ENODEV, "ipv4: Device not found"});
  rows.push_back({"newaddr_v6_missing_device",
                  fixed(Nl::of(RTM_NEWADDR, kNew, ifa(AF_INET6, 64, 9999)).in6(IFA_LOCAL, "2001:db8:7::1").done()), ENODEV, "ipv6: Unable to find the interface"});
  rows.push_back({"newaddr_existing",
                  [](const Ctx& c) { return Nl::of(RTM_NEWADDR, kNew, ifa(AF_INET, 24, c.idx("v0"))).in4(IFA_LOCAL, "10.0.0.1").done(); },
                  EEXIST, "ipv4: Address already assigned"});
  rows.push_back({"newaddr_v6_existing",
                  [](const Ctx& c) { return Nl::of(RTM_NEWADDR, kNew, ifa(AF_INET6, 64, c.idx("v0"))).in6(IFA_LOCAL, "2001:db8::1").done(); },
                  EEXIST, "ipv6: address already assigned"});
  rows.push_back({"deladdr_missing",
                  [](const Ctx& c) { return Nl::of(RTM_DELADDR, kAck, ifa(AF_INET, 24, c.idx("v0"))).in4(IFA_LOCAL, "10.0.9.1").done(); },
                  EADDRNOTAVAIL, "ipv4: Address not found"});
  rows.push_back({"deladdr_v6_missing",
                  [](const Ctx& c) { return Nl::of(RTM_DELADDR, kAck, ifa(AF_INET6, 64, c.idx("v0"))).in6(IFA_LOCAL, "2001:db8:9::1").done(); },
                  EADDRNOTAVAIL, "ipv6: address not found"});
  rows.push_back({"newaddr_v4_no_address",
                  [](const Ctx& c) { return Nl::of(RTM_NEWADDR, kNew, ifa(AF_INET, 24, c.idx("v0"))).done(); }, EINVAL, "ipv4: Local address is not supplied"});
  rows.push_back({"newaddr_v6_no_address",
                  [](const Ctx& c) { return Nl::of(RTM_NEWADDR, kNew, ifa(AF_INET6, 64, c.idx("v0"))).done(); }, EINVAL, ""});
  rows.push_back({"newroute_existing",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.1.0.0").in4(RTA_GATEWAY, "10.0.0.2").done()),
                  EEXIST, ""});
  rows.push_back({"newroute_v6_existing",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET6, 48)).in6(RTA_DST, "2001:db8:1::").in6(RTA_GATEWAY, "2001:db8::2").done()),
                  EEXIST, ""});
  rows.push_back({"delroute_missing",
                  fixed(Nl::of(RTM_DELROUTE, kAck, rtm(AF_INET, 16)).in4(RTA_DST, "10.3.0.0").done()), ESRCH, ""});
  rows.push_back({"delroute_v6_missing",
                  fixed(Nl::of(RTM_DELROUTE, kAck, rtm(AF_INET6, 48)).in6(RTA_DST, "2001:db8:3::").done()), ESRCH, ""});
  rows.push_back({"newroute_missing_oif",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.2.0.0").u32(RTA_OIF, 9999).done()),
                  ENODEV, ""});
  rows.push_back({"newroute_v6_missing_oif",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET6, 48)).in6(RTA_DST, "2001:db8:2::").u32(RTA_OIF, 9999).done()),
                  ENODEV, ""});
  rows.push_back({"newroute_unreachable_gateway",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.2.0.0").in4(RTA_GATEWAY, "192.0.2.1").done()),
                  ENETUNREACH, "Nexthop has invalid gateway"});
  rows.push_back({"newroute_missing_nexthop_id",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.2.0.0").u32(RTA_NH_ID, 77).done()),
                  EINVAL, "Nexthop id does not exist"});
  rows.push_back({"newneigh_no_destination",
                  [](const Ctx& c) { return Nl::of(RTM_NEWNEIGH, kNew, ndm(AF_INET, c.idx("v0"))).done(); },
                  EINVAL, "Network address not specified"});
  rows.push_back({"newneigh_no_device",
                  fixed(Nl::of(RTM_NEWNEIGH, kNew, ndm(AF_INET, 0)).in4(NDA_DST, "10.0.0.9").done()),
                  EINVAL, "Device not specified"});
  rows.push_back({"newneigh_missing_device",
                  fixed(Nl::of(RTM_NEWNEIGH, kNew, ndm(AF_INET, 9999)).in4(NDA_DST, "10.0.0.9").done()), ENODEV, ""});
  rows.push_back({"newneigh_existing",
                  [](const Ctx& c) { return Nl::of(RTM_NEWNEIGH, kNew, ndm(AF_INET, c.idx("v0"))).in4(NDA_DST, "10.0.0.2").done(); },
                  EEXIST, ""});
  rows.push_back({"delneigh_missing",
                  [](const Ctx& c) { return Nl::of(RTM_DELNEIGH, kAck, ndm(AF_INET, c.idx("v0"))).in4(NDA_DST, "10.0.0.99").done(); },
                  ENOENT, ""});
  rows.push_back({"newrule_existing",
                  fixed(Nl::of(RTM_NEWRULE, kNew, [] { auto h = frh(AF_INET); h.src_len = 16; h.table = 100; return h; }())
                            .in4(FRA_SRC, "10.9.0.0").u32(FRA_PRIORITY, 100).done()),
                  EEXIST, ""});
  rows.push_back({"delrule_missing",
                  fixed(Nl::of(RTM_DELRULE, kAck, [] { auto h = frh(AF_INET); h.table = 123; return h; }()).u32(FRA_PRIORITY, 555).done()),
                  ENOENT, ""});
  rows.push_back({"newnexthop_existing_id",
                  [](const Ctx& c) { return Nl::of(RTM_NEWNEXTHOP, kNew, nhm(AF_INET)).u32(NHA_ID, 1).u32(NHA_OIF, static_cast<std::uint32_t>(c.idx("v0"))).done(); },
                  EEXIST, ""});
  rows.push_back({"delnexthop_missing",
                  fixed(Nl::of(RTM_DELNEXTHOP, kAck, nhm(AF_UNSPEC)).u32(NHA_ID, 77).done()), ENOENT, ""});
  rows.push_back({"newnexthop_missing_device",
                  fixed(Nl::of(RTM_NEWNEXTHOP, kNew, nhm(AF_INET)).u32(NHA_ID, 5).u32(NHA_OIF, 9999).done()), EINVAL, "Invalid device index"});
  rows.push_back({"newnexthop_group_of_missing_id",
                  fixed(Nl::of(RTM_NEWNEXTHOP, kNew, nhm(AF_UNSPEC)).u32(NHA_ID, 5)
                            .attr(NHA_GROUP, "\115\0\0\0\0\0\0\0", 8).done()),
                  EINVAL, "Invalid nexthop id"});
  rows.push_back({"newnexthop_group_twice_same_id",
                  fixed(Nl::of(RTM_NEWNEXTHOP, kNew, nhm(AF_UNSPEC)).u32(NHA_ID, 5)
                            .attr(NHA_GROUP, "\1\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0", 16).done()),
                  EINVAL, "Nexthop id can not be used twice in a group"});
  return rows;
}

std::vector<Row> range_rows() {
  std::vector<Row> rows;
  rows.push_back({"mtu_below_minimum", fixed(set_u32("v0", IFLA_MTU, 67)), EINVAL, "mtu less than device minimum"});
  rows.push_back({"mtu_above_maximum", fixed(set_u32("v0", IFLA_MTU, 70000)), EINVAL, "mtu greater than device maximum"});
  rows.push_back({"mtu_zero", fixed(set_u32("v0", IFLA_MTU, 0)), EINVAL, "mtu less than device minimum"});
  rows.push_back({"bridge_mtu_above_maximum", fixed(set_u32("br0", IFLA_MTU, 70000)), EINVAL, "mtu greater than device maximum"});
  rows.push_back({"macvlan_mtu_above_lower", fixed(set_u32("mv0", IFLA_MTU, 1600)), EINVAL, ""});
  rows.push_back({"create_veth_mtu_below_minimum",
                  fixed(Nl::of(RTM_NEWLINK, kNew, ifi()).str(IFLA_IFNAME, "n0").u32(IFLA_MTU, 10)
                            .begin(IFLA_LINKINFO).str(IFLA_INFO_KIND, "veth").end().done()),
                  EINVAL, ""});
  rows.push_back({"create_bridge_mtu_above_maximum",
                  fixed(Nl::of(RTM_NEWLINK, kNew, ifi()).str(IFLA_IFNAME, "n0").u32(IFLA_MTU, 70000)
                            .begin(IFLA_LINKINFO).str(IFLA_INFO_KIND, "bridge").end().done()),
                  EINVAL, "mtu greater than device maximum"});
  rows.push_back({"create_macvlan_bad_mode",
                  [](const Ctx& c) {
                    return Nl::of(RTM_NEWLINK, kNew, ifi()).str(IFLA_IFNAME, "n0").u32(IFLA_LINK, static_cast<std::uint32_t>(c.idx("v1")))
                        .begin(IFLA_LINKINFO).str(IFLA_INFO_KIND, "macvlan").begin(IFLA_INFO_DATA)
                        .u32(IFLA_MACVLAN_MODE, 99).end().end().done();
                  },
                  EINVAL, ""});
  rows.push_back({"create_macvlan_without_link", fixed(create_kind("n0", "macvlan")), EINVAL, ""});
  rows.push_back({"create_macvlan_missing_link",
                  fixed(Nl::of(RTM_NEWLINK, kNew, ifi()).str(IFLA_IFNAME, "n0").u32(IFLA_LINK, 9999)
                            .begin(IFLA_LINKINFO).str(IFLA_INFO_KIND, "macvlan").end().done()),
                  ENODEV, ""});
  rows.push_back({"create_macvlan_over_loopback",
                  fixed(Nl::of(RTM_NEWLINK, kNew, ifi()).str(IFLA_IFNAME, "n0").u32(IFLA_LINK, 1)
                            .begin(IFLA_LINKINFO).str(IFLA_INFO_KIND, "macvlan").end().done()),
                  EINVAL, ""});
  rows.push_back({"newaddr_v4_prefix_33",
                  [](const Ctx& c) { return Nl::of(RTM_NEWADDR, kNew, ifa(AF_INET, 33, c.idx("v0"))).in4(IFA_LOCAL, "10.0.8.1").done(); },
                  EINVAL, "ipv4: Invalid prefix length"});
  rows.push_back({"newaddr_v6_prefix_129",
                  [](const Ctx& c) { return Nl::of(RTM_NEWADDR, kNew, ifa(AF_INET6, 129, c.idx("v0"))).in6(IFA_LOCAL, "2001:db8:8::1").done(); },
                  EINVAL, "ipv6: Invalid prefix length"});
  auto lifetime = [](std::uint8_t family, const char* addr, std::uint32_t pref, std::uint32_t valid) {
    return [=](const Ctx& c) {
      ifa_cacheinfo ci{};
      ci.ifa_prefered = pref;
      ci.ifa_valid = valid;
      Nl m = Nl::of(RTM_NEWADDR, kNew, ifa(family, family == AF_INET ? 24 : 64, c.idx("v0")));
      if (family == AF_INET) m.in4(IFA_LOCAL, addr); else m.in6(IFA_LOCAL, addr);
      return m.attr(IFA_CACHEINFO, &ci, sizeof ci).done();
    };
  };
  rows.push_back({"newaddr_v4_valid_lifetime_zero", lifetime(AF_INET, "10.0.8.1", 0, 0), EINVAL, "ipv4: address lifetime invalid"});
  rows.push_back({"newaddr_v4_preferred_above_valid", lifetime(AF_INET, "10.0.8.1", 100, 50), EINVAL, "ipv4: address lifetime invalid"});
  rows.push_back({"newaddr_v6_valid_lifetime_zero", lifetime(AF_INET6, "2001:db8:8::1", 0, 0), EINVAL, "ipv6: address lifetime invalid"});
  rows.push_back({"newaddr_v6_preferred_above_valid", lifetime(AF_INET6, "2001:db8:8::1", 100, 50), EINVAL, "ipv6: address lifetime invalid"});
  rows.push_back({"newroute_v4_dst_len_33",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 33)).in4(RTA_DST, "10.2.0.0").in4(RTA_GATEWAY, "10.0.0.2").done()),
                  EINVAL, "Invalid prefix length"});
  rows.push_back({"newroute_v6_dst_len_129",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET6, 129)).in6(RTA_DST, "2001:db8:2::").in6(RTA_GATEWAY, "2001:db8::2").done()),
                  EINVAL, ""});
  rows.push_back({"newroute_host_bits_set",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.2.0.1").in4(RTA_GATEWAY, "10.0.0.2").done()),
                  EINVAL, "Invalid prefix for given prefix length"});
  rows.push_back({"newroute_scope_host_with_gateway",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, [] { auto m = rtm(AF_INET, 16); m.rtm_scope = RT_SCOPE_HOST; return m; }())
                            .in4(RTA_DST, "10.2.0.0").in4(RTA_GATEWAY, "10.0.0.2").done()),
                  EINVAL, "Route with host scope can not have a gateway"});
  rows.push_back({"newrule_src_len_33",
                  fixed(Nl::of(RTM_NEWRULE, kNew, [] { auto h = frh(AF_INET); h.src_len = 33; h.table = 100; return h; }())
                            .in4(FRA_SRC, "10.9.0.0").done()),
                  EINVAL, "Invalid source address"});
  rows.push_back({"newrule_goto_without_target",
                  fixed(Nl::of(RTM_NEWRULE, kNew, frh(AF_INET, FR_ACT_GOTO)).done()), EINVAL, "Missing goto target for action goto"});
  rows.push_back({"newrule_goto_itself",
                  fixed(Nl::of(RTM_NEWRULE, kNew, frh(AF_INET, FR_ACT_GOTO)).u32(FRA_PRIORITY, 300).u32(FRA_GOTO, 300).done()),
                  EINVAL, "Backward goto not supported"});
  rows.push_back({"newnexthop_no_device_no_gateway",
                  fixed(Nl::of(RTM_NEWNEXTHOP, kNew, nhm(AF_INET)).u32(NHA_ID, 5).done()), EINVAL, "Device attribute required for non-blackhole and non-fdb nexthops"});
  rows.push_back({"newnexthop_gateway_unreachable",
                  [](const Ctx& c) { return Nl::of(RTM_NEWNEXTHOP, kNew, nhm(AF_INET)).u32(NHA_ID, 5).u32(NHA_OIF, static_cast<std::uint32_t>(c.idx("v0"))).in4(NHA_GATEWAY, "192.0.2.1").done(); },
                  ENETUNREACH, "Nexthop has invalid gateway"});
  rows.push_back({"newnexthop_group_type_unknown",
                  fixed(Nl::of(RTM_NEWNEXTHOP, kNew, nhm(AF_UNSPEC)).u32(NHA_ID, 5)
                            .attr(NHA_GROUP, "\1\0\0\0\0\0\0\0", 8).u16(NHA_GROUP_TYPE, 9).done()),
                  EINVAL, "Invalid group type"});
  rows.push_back({"getnetconf_v4_missing_device",
                  fixed(Nl::of(RTM_GETNETCONF, 0, [] { netconfmsg m{}; m.ncm_family = AF_INET; return m; }())
                            .u32(NETCONFA_IFINDEX, 9999).done()),
                  ENODEV, ""});
  rows.push_back({"getnetconf_v4_no_index",
                  fixed(Nl::of(RTM_GETNETCONF, 0, [] { netconfmsg m{}; m.ncm_family = AF_INET; return m; }()).done()),
                  EINVAL, ""});
  return rows;
}

std::vector<Row> loop_rows() {
  std::vector<Row> rows;
  auto master = [](const char* dev, const char* of) {
    return [=](const Ctx& c) {
      return Nl::of(RTM_NEWLINK, kAck, ifi(c.idx(dev))).u32(IFLA_MASTER, static_cast<std::uint32_t>(c.idx(of))).done();
    };
  };
  rows.push_back({"bridge_into_itself", master("br0", "br0"), ELOOP, "Can not enslave a bridge to a bridge"});
  rows.push_back({"device_as_own_master", master("v0", "v0"), ENOTSUP, ""});
  rows.push_back({"port_as_its_bridges_master", master("br0", "v2"), ENOTSUP, ""});
  rows.push_back({"lower_into_its_macvlan", master("v0", "mv0"), ENOTSUP, ""});
  rows.push_back({"loopback_into_bridge", master("lo", "br0"), EINVAL, ""});
  rows.push_back({"master_missing_index",
                  [](const Ctx& c) { return Nl::of(RTM_NEWLINK, kAck, ifi(c.idx("v1"))).u32(IFLA_MASTER, 9999).done(); },
                  EINVAL, ""});
  // A macvlan made over the bridge is the bridge's upper device; making it a port of that
  // bridge would close a loop (netdev_upper_dev_link: the upper already has it below).
  rows.push_back({"macvlan_of_bridge_as_its_port",
                  [](const Ctx& c) { return Nl::of(RTM_NEWLINK, kAck, ifi()).str(IFLA_IFNAME, "mvb").u32(IFLA_MASTER, static_cast<std::uint32_t>(c.idx("br0"))).done(); },
                  EBUSY, "", false,
                  [](const Ctx& c) {
                    return std::vector<Bytes>{Nl::of(RTM_NEWLINK, kNew, ifi()).str(IFLA_IFNAME, "mvb").u32(IFLA_LINK, static_cast<std::uint32_t>(c.idx("br0")))
                        .begin(IFLA_LINKINFO).str(IFLA_INFO_KIND, "macvlan").end().done()};
                  }});
  rows.push_back({"macvlan_over_itself_as_link",
                  [](const Ctx& c) {
                    return Nl::of(RTM_NEWLINK, kNew, ifi(50)).str(IFLA_IFNAME, "n0").u32(IFLA_LINK, 50)
                        .begin(IFLA_LINKINFO).str(IFLA_INFO_KIND, "macvlan").end().done();
                  },
                  ENODEV, ""});
  rows.push_back({"delete_loopback_by_index", fixed(Nl::of(RTM_DELLINK, kAck, ifi(1)).done()), ENOTSUP, ""});
  rows.push_back({"delete_loopback_by_name", fixed(Nl::of(RTM_DELLINK, kAck, ifi()).str(IFLA_IFNAME, "lo").done()), ENOTSUP, ""});
  rows.push_back({"delete_group_holding_loopback", fixed(Nl::of(RTM_DELLINK, kAck, ifi()).u32(IFLA_GROUP, 0).done()), EPERM, ""});
  rows.push_back({"rename_loopback_to_existing", fixed(Nl::of(RTM_NEWLINK, kAck, ifi(1)).str(IFLA_IFNAME, "v0").done()), EEXIST, ""});
  return rows;
}

// A device being unregistered cannot be named by a request: the unregistration ends
// inside the request that started it (rtnl held), so the nearest is a device just
// deleted, named by its old index and name in the next request.
std::vector<Row> gone_rows() {
  std::vector<Row> rows;
  auto del_v3 = [](const Ctx&) {
    return std::vector<Bytes>{Nl::of(RTM_DELLINK, kAck, ifi()).str(IFLA_IFNAME, "v3").done()};
  };
  rows.push_back({"setlink_peer_of_deleted_veth_by_index",
                  [](const Ctx& c) { return Nl::of(RTM_NEWLINK, kAck, ifi(c.idx("v2"), IFF_UP, IFF_UP)).done(); },
                  ENODEV, "", false, del_v3});
  rows.push_back({"setlink_deleted_by_name",
                  fixed(Nl::of(RTM_SETLINK, kAck, ifi()).str(IFLA_IFNAME, "v3").u32(IFLA_MTU, 1400).done()),
                  ENODEV, "", false, del_v3});
  rows.push_back({"dellink_deleted_again", fixed(Nl::of(RTM_DELLINK, kAck, ifi()).str(IFLA_IFNAME, "v2").done()),
                  ENODEV, "", false, del_v3});
  rows.push_back({"newaddr_on_deleted",
                  [](const Ctx& c) { return Nl::of(RTM_NEWADDR, kNew, ifa(AF_INET, 24, c.idx("v2"))).in4(IFA_LOCAL, "10.0.7.1").done(); },
                  ENODEV, "ipv4: Device not found", false, del_v3});
  rows.push_back({"newroute_via_deleted",
                  [](const Ctx& c) { return Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.2.0.0").u32(RTA_OIF, static_cast<std::uint32_t>(c.idx("v2"))).done(); },
                  ENODEV, "", false, del_v3});
  rows.push_back({"newneigh_on_deleted",
                  [](const Ctx& c) { return Nl::of(RTM_NEWNEIGH, kNew, ndm(AF_INET, c.idx("v2"))).in4(NDA_DST, "10.0.0.9").done(); },
                  ENODEV, "", false, del_v3});
  rows.push_back({"master_of_deleted",
                  [](const Ctx& c) { return Nl::of(RTM_NEWLINK, kAck, ifi(c.idx("v1"))).u32(IFLA_MASTER, static_cast<std::uint32_t>(c.idx("v2"))).done(); },
                  EINVAL, "", false, del_v3});
  rows.push_back({"macvlan_over_deleted",
                  [](const Ctx& c) {
                    return Nl::of(RTM_NEWLINK, kNew, ifi()).str(IFLA_IFNAME, "n0").u32(IFLA_LINK, static_cast<std::uint32_t>(c.idx("v2")))
                        .begin(IFLA_LINKINFO).str(IFLA_INFO_KIND, "macvlan").end().done();
                  },
                  ENODEV, "", false, del_v3});
  return rows;
}

std::vector<Row> veth_peer_rows() {
  std::vector<Row> rows;
  rows.push_back({"veth_peer_name_taken", fixed(veth_with_peer("n0", peer_of(peer_named("v0")))), EEXIST, ""});
  rows.push_back({"veth_peer_named_lo", fixed(veth_with_peer("n0", peer_of(peer_named("lo")))), EEXIST, ""});
  rows.push_back({"veth_peer_same_name_as_device", fixed(veth_with_peer("n0", peer_of(peer_named("n0")))), EEXIST, ""});
  rows.push_back({"veth_peer_name_invalid", fixed(veth_with_peer("n0", peer_of(peer_named("a/b")))), EINVAL, ""});
  rows.push_back({"veth_peer_name_too_long", fixed(veth_with_peer("n0", peer_of(peer_named("abcdefghijklmnop")))), ERANGE, "Attribute failed policy validation"});
  rows.push_back({"veth_peer_mtu_too_small",
                  fixed(veth_with_peer("n0", peer_of(peer_named("p0").u32(IFLA_MTU, 10)))), EINVAL, ""});
  rows.push_back({"veth_peer_mtu_too_big",
                  fixed(veth_with_peer("n0", peer_of(peer_named("p0").u32(IFLA_MTU, 70000)))), EINVAL, ""});
  rows.push_back({"veth_peer_address_short",
                  fixed(veth_with_peer("n0", peer_of(peer_named("p0").bytes(IFLA_ADDRESS, Bytes{2, 0, 1})))), EINVAL, ""});
  rows.push_back({"veth_peer_address_multicast",
                  fixed(veth_with_peer("n0", peer_of(peer_named("p0").bytes(IFLA_ADDRESS, Bytes{1, 0, 0, 0, 0, 1})))),
                  EADDRNOTAVAIL, ""});
  rows.push_back({"veth_peer_short_mtu_attribute",
                  fixed(veth_with_peer("n0", peer_of(peer_named("p0").attr(IFLA_MTU, "\0\0", 2)))), ERANGE, "Attribute failed policy validation"});
  return rows;
}

std::vector<Row> netns_rows() {
  std::vector<Row> rows;
  rows.push_back({"newlink_missing_netnsid",
                  fixed(Nl::of(RTM_NEWLINK, kNew, ifi()).str(IFLA_IFNAME, "n0").u32(IFLA_TARGET_NETNSID, 99)
                            .begin(IFLA_LINKINFO).str(IFLA_INFO_KIND, "bridge").end().done()),
                  EINVAL, ""});
  rows.push_back({"setlink_missing_netnsid",
                  fixed(Nl::of(RTM_NEWLINK, kAck, ifi()).str(IFLA_IFNAME, "v0").u32(IFLA_TARGET_NETNSID, 99).done()),
                  EINVAL, ""});
  rows.push_back({"dellink_missing_netnsid",
                  fixed(Nl::of(RTM_DELLINK, kAck, ifi()).str(IFLA_IFNAME, "v0").u32(IFLA_TARGET_NETNSID, 99).done()),
                  EINVAL, ""});
  rows.push_back({"getlink_missing_netnsid",
                  fixed(Nl::of(RTM_GETLINK, 0, ifi()).str(IFLA_IFNAME, "v0").u32(IFLA_TARGET_NETNSID, 99).done()),
                  EINVAL, ""});
  rows.push_back({"getlink_dump_missing_netnsid",
                  fixed(Nl::of(RTM_GETLINK, NLM_F_DUMP, ifi()).u32(IFLA_TARGET_NETNSID, 99).done()),
                  EINVAL, "Invalid target network namespace id"});
  rows.push_back({"getnsid_missing",
                  fixed(Nl::of(RTM_GETNSID, 0, rtgenmsg{AF_UNSPEC}).u32(NETNSA_NSID, 99).done()),
                  ENOENT, "Peer netns reference is invalid"});
  rows.push_back({"setlink_in_other_namespace_missing_device",
                  [](const Ctx& c) {
                    return Nl::of(RTM_NEWLINK, kAck, ifi()).str(IFLA_IFNAME, "nosuch").u32(IFLA_TARGET_NETNSID, static_cast<std::uint32_t>(c.nsid_b)).done();
                  },
                  ENODEV, ""});
  rows.push_back({"create_in_other_namespace_existing_name",
                  [](const Ctx& c) {
                    return Nl::of(RTM_NEWLINK, kNew, ifi()).str(IFLA_IFNAME, "x0").u32(IFLA_TARGET_NETNSID, static_cast<std::uint32_t>(c.nsid_b))
                        .begin(IFLA_LINKINFO).str(IFLA_INFO_KIND, "bridge").end().done();
                  },
                  EEXIST, ""});
  return rows;
}
// clang-format on

}  // namespace ifcore::rtnl::test::catalogue
