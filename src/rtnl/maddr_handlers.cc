// rtnl/maddr_handlers.cc — the devices' multicast lists on top of ifcore/mcast.h:
// RTM_GETMULTICAST dumps (Linux: inet_dump_ifmcaddr, inet6_dump_ifmcaddr), and ifcore's
// IFCORE_NLMSG_MADDR (maddr_msg.h), which the preload shim uses for /proc/net/dev_mcast,
// /proc/net/igmp, /proc/net/igmp6 and the SIOCADDMULTI/SIOCDELMULTI ioctls.
//
// Lock order: each handler takes the control lock once.
#include <net/if.h>  // before any <linux/if*.h>
#include <sys/socket.h>

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include <chrono>
#include <cstring>

#include "ifcore/mcast.h"
#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/wire/address.h"
#include "rtnl/wire/maddr_msg.h"

namespace ifcore::rtnl {

namespace {

// A point on the engine's clock in hundredths of a second (Linux: clock_t at USER_HZ 100).
std::uint32_t hundredths(TimePoint t) {
  return static_cast<std::uint32_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() / 10);
}

// Linux: inet_fill_ifmcaddr / inet6_fill_ifmcaddr — a permanent /32 or /128, of universe
// scope unless a site-local IPv6 group, the group and its creation times.
wire::AddrMessage group_message(const inet::McEntry& e) {
  wire::AddrMessage m;
  m.family = static_cast<std::uint8_t>(e.family);
  m.flags = IFA_F_PERMANENT;
  m.ifindex = static_cast<std::uint32_t>(e.ifindex);
  if (e.family == AF_INET6) {
    m.prefixlen = 128;
    m.multicast = IpAddr::v6(std::span<const std::uint8_t, 16>(e.addr.data(), 16));
    if ((e.addr[1] & 0x0f) == 5) m.scope = RT_SCOPE_SITE;
  } else {
    m.prefixlen = 32;
    m.multicast = IpAddr::v4_bytes(std::span<const std::uint8_t, 4>(e.addr.data(), 4));
  }
  ifa_cacheinfo ci{};
  ci.ifa_prefered = ci.ifa_valid = 0xffffffffu;  // INFINITY_LIFE_TIME
  ci.cstamp = ci.tstamp = hundredths(e.cstamp);
  m.cacheinfo = ci;
  return m;
}

Result<void> change(Request& r, const MaddrRequest& req) {
  // Linux: dev_ioctl — SIOCADDMULTI and SIOCDELMULTI need CAP_NET_ADMIN.
  if (!r.s.options().may_write) return fail(EPERM);
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  return inet::change_multicast(ctl, **ns, req.ifname, req.address, req.hw_family,
                                req.op == IFCORE_MADDR_ADD);
}

}  // namespace

Result<void> handle_getmulticast(Request& r) {
  const int family = r.m.payload()[0];
  // Linux: only PF_INET and PF_INET6 register RTM_GETMULTICAST, as a dump only.
  if ((family != AF_INET && family != AF_INET6) || !r.dump()) {
    r.no_dumpit = true;
    return fail(EOPNOTSUPP);
  }
  std::uint32_t only = 0;
  if (r.s.strict_check() && r.m.payload().size() >= sizeof(ifaddrmsg)) {
    ifaddrmsg ifa;
    std::memcpy(&ifa, r.m.payload().data(), sizeof(ifa));
    only = ifa.ifa_index;
  }
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  auto list = inet::multicast_lists(ctl, **ns, family);
  if (!list) return fail(list.error());
  std::vector<inet::McEntry> shown;
  for (auto& e : *list)
    if (!only || static_cast<std::uint32_t>(e.ifindex) == only) shown.push_back(std::move(e));
  // Linux: the dump's messages are of type RTM_GETMULTICAST (inet6_dump_addr's
  // MULTICAST_ADDR event); only notifications are RTM_NEWMULTICAST.
  IFCORE_TRY(
      dump_items(r, RTM_GETMULTICAST, shown,
                 [&](wire::MessageBuilder& b, const wire::Header& h, const inet::McEntry& e) {
                   return wire::encode_addr(b, h, group_message(e));
                 }));
  end_dump(r);
  return ok();
}

Result<void> handle_maddr(Request& r) {
  auto req = decode_maddr_request(r.m);
  if (!req) return fail(req.error());
  if (req->op) return change(r, *req);
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  auto list = inet::multicast_lists(ctl, **ns, req->family);
  if (!list) return fail(list.error());
  IFCORE_TRY(
      dump_items(r, IFCORE_NLMSG_MADDR, *list,
                 [&](wire::MessageBuilder& b, const wire::Header& h, const inet::McEntry& e) {
                   MaddrEntry m;
                   m.family = static_cast<std::uint8_t>(e.family);
                   m.ifindex = static_cast<std::uint32_t>(e.ifindex);
                   m.ifname = e.name;
                   m.address = e.addr;
                   m.users = e.users;
                   m.flags = e.flags;
                   return encode_maddr_entry(b, h.seq, h.pid, m, h.flags);
                 }));
  end_dump(r);
  return ok();
}

}  // namespace ifcore::rtnl
