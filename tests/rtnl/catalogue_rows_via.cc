// tests/rtnl/catalogue_rows_via.cc — the catalogue's rows about RTA_VIA: a route's gateway
// given as a struct rtvia (Linux: fib_gw_from_via, rtm_to_fib_config, fib_get_nhs,
// rtm_to_fib6_config).
#include "rtnl/catalogue.h"

namespace ifcore::rtnl::test::catalogue {

namespace {

// struct rtvia: the family, then `n` bytes of address.
Bytes via(std::uint16_t family, std::size_t n, std::uint8_t fill = 1) {
  Bytes b(sizeof(rtvia) + n, fill);
  std::memcpy(b.data(), &family, sizeof(family));
  return b;
}

// One hop of RTA_MULTIPATH through v0 with `attrs` (already encoded attributes).
Bytes hop(const Ctx& c, const Bytes& attrs) {
  rtnexthop nh{};
  nh.rtnh_len = static_cast<std::uint16_t>(sizeof(nh) + attrs.size());
  nh.rtnh_ifindex = c.idx("v0");
  Bytes b(sizeof(nh));
  std::memcpy(b.data(), &nh, sizeof(nh));
  b.insert(b.end(), attrs.begin(), attrs.end());
  return b;
}

Bytes attr(std::uint16_t type, const Bytes& data) {
  nlattr a{static_cast<std::uint16_t>(NLA_HDRLEN + data.size()), type};
  Bytes b(NLA_HDRLEN);
  std::memcpy(b.data(), &a, sizeof(a));
  b.insert(b.end(), data.begin(), data.end());
  b.resize(NLA_ALIGN(b.size()));
  return b;
}

}  // namespace

// clang-format off
std::vector<Row> via_rows() {
  std::vector<Row> rows;
  auto to = [](const Bytes& v) {
    return fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.2.0.0")
                     .bytes(RTA_VIA, v).done());
  };
  rows.push_back({"newroute_via_one_byte", to(Bytes{AF_INET}), EINVAL,
                  "Invalid attribute length for RTA_VIA"});
  rows.push_back({"newroute_via_inet_sixteen_bytes", to(via(AF_INET, 16)), EINVAL,
                  "Invalid IPv4 address in RTA_VIA"});
  rows.push_back({"newroute_via_inet6_four_bytes", to(via(AF_INET6, 4)), EINVAL,
                  "Invalid IPv6 address in RTA_VIA"});
  rows.push_back({"newroute_via_inet6_eighteen_bytes", to(via(AF_INET6, 18)), EINVAL,
                  "Invalid IPv6 address in RTA_VIA"});
  rows.push_back({"newroute_via_unknown_family", to(via(99, 4)), EINVAL,
                  "Unsupported address family in RTA_VIA"});
  rows.push_back({"newroute_gateway_and_via",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.2.0.0")
                            .in4(RTA_GATEWAY, "10.0.0.2").bytes(RTA_VIA, via(AF_INET, 4, 10)).done()),
                  EINVAL, "Nexthop configuration can not contain both GATEWAY and VIA"});
  rows.push_back({"newroute_v6_via",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET6, 48)).in6(RTA_DST, "2001:db8:5::")
                            .bytes(RTA_VIA, via(AF_INET6, 16)).done()),
                  EINVAL, "IPv6 does not support RTA_VIA attribute"});
  rows.push_back({"newroute_v6_via_one_byte",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET6, 48)).in6(RTA_DST, "2001:db8:5::")
                            .bytes(RTA_VIA, Bytes{AF_INET6}).done()),
                  EINVAL, "IPv6 does not support RTA_VIA attribute"});
  rows.push_back({"newroute_hop_gateway_and_via",
                  [](const Ctx& c) {
                    Bytes gw{10, 0, 0, 2};
                    Bytes hops = hop(c, attr(RTA_GATEWAY, gw));
                    Bytes both = hop(c, Bytes(attr(RTA_GATEWAY, gw)));
                    Bytes v = attr(RTA_VIA, via(AF_INET, 4, 10));
                    both.insert(both.end(), v.begin(), v.end());
                    reinterpret_cast<rtnexthop*>(both.data())->rtnh_len =
                        static_cast<std::uint16_t>(both.size());
                    both.insert(both.end(), hops.begin(), hops.end());
                    return Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.2.0.0")
                        .bytes(RTA_MULTIPATH, both).done();
                  },
                  EINVAL, "Nexthop configuration can not contain both GATEWAY and VIA"});
  rows.push_back({"newroute_hop_via_one_byte",
                  [](const Ctx& c) {
                    Bytes hops = hop(c, attr(RTA_VIA, Bytes{AF_INET}));
                    Bytes second = hop(c, attr(RTA_GATEWAY, Bytes{10, 0, 0, 4}));
                    hops.insert(hops.end(), second.begin(), second.end());
                    return Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.2.0.0")
                        .bytes(RTA_MULTIPATH, hops).done();
                  },
                  EINVAL, "Invalid attribute length for RTA_VIA"});
  rows.push_back({"newroute_via_inet6_link_local_without_device",
                  fixed(Nl::of(RTM_NEWROUTE, kNew, rtm(AF_INET, 16)).in4(RTA_DST, "10.3.0.0")
                            .bytes(RTA_VIA, [] { Bytes b = via(AF_INET6, 16, 0);
                                                 b[2] = 0xfe; b[3] = 0x80; b.back() = 1;
                                                 return b; }()).done()),
                  EINVAL, "Egress device not specified"});
  return rows;
}
// clang-format on

}  // namespace ifcore::rtnl::test::catalogue
