// proto/fib_prefsrc.cc — the routes whose preferred source address goes (see
// fib_prefsrc.h, and fib_remove_prefsrc6 in addrconf_routes.h).
//
// Lock order: control lock only.
#include "proto/fib_prefsrc.h"

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include <algorithm>

#include "proto/addrconf_routes.h"
#include "proto/fib_impl.h"

namespace ifcore::proto {

using namespace fib;

namespace {

// Linux: inet_addr_type_dev_table(dev, local) == RTN_LOCAL — `local` has a local route,
// through any device, in the table of `dev`'s L3 domain (its master's, else local).
bool still_local4(NetState& st, const Device& dev, const IpAddr& local) {
  const std::uint32_t l3 = l3mdev_fib_table(dev);
  auto& tables = st.tables(AF_INET);
  auto t = tables.find(l3 ? l3 : RT_TABLE_LOCAL);
  if (t == tables.end()) return false;
  auto k = t->second.find(RouteKey{local, 32});
  if (k == t->second.end()) return false;
  return std::any_of(k->second.begin(), k->second.end(),
                     [](const Route& r) { return r.info.type == RTN_LOCAL; });
}

// Linux: ipv6_chk_addr(net, addr, dev, 0) — `addr` is an address of the namespace that is
// not tentative; a link-local (or host) one counts only on `dev`.
bool usable6(Control& ctl, Namespace& ns, const IpAddr& addr, const Device* dev) {
  if (!addr.is_v6_link_local() && addr != IpAddr::v6(kLoopback6))
    return net_state(ns).local_addrs.count(addr) > 0;
  if (!dev) return false;
  DevState* ds = find_dev(engine_proto(ctl.engine()), *dev);
  if (!ds || !ds->in6) return false;
  return std::any_of(ds->in6->addrs.begin(), ds->in6->addrs.end(), [&](const auto& a) {
    return a->info.local == addr && !(a->info.flags & IFA_F_TENTATIVE);
  });
}

}  // namespace

void fib_flush_prefsrc4(Control& ctl, Namespace& ns, const Device& dev, const IpAddr& local) {
  NetState& st = net_state(ns);
  if (local.is_unspecified() || still_local4(st, dev, local)) return;
  // Linux: fib_sync_down_addr marks the fib_infos of the device's table (fib_tb_id) alone.
  const std::uint32_t l3 = l3mdev_fib_table(dev);
  auto& tables = st.tables(AF_INET);
  auto t = tables.find(l3 ? l3 : RT_TABLE_MAIN);
  if (t == tables.end()) return;
  // fib_table_flush walks the trie from its highest key down; a key's prefixes longest
  // first, each prefix's routes in their order.
  std::vector<Route*> gone;
  Table& tbl = t->second;
  for (auto k = tbl.end(); k != tbl.begin();) {
    const IpAddr key = std::prev(k)->first.dst;
    auto first = k;
    while (first != tbl.begin() && std::prev(first)->first.dst == key) --first;
    for (auto j = k; j != first;)
      for (Route& r : (--j)->second)
        if (r.info.prefsrc == local) gone.push_back(&r);
    k = first;
  }
  EngineProto& ep = engine_proto(ctl.engine());
  for (Route* r : gone) erase(ep, ns, r, true);
}

void fib_remove_prefsrc6(Control& ctl, Namespace& ns, const IpAddr& addr) {
  for (auto& [id, tbl] : net_state(ns).tables(AF_INET6))
    for (auto& [key, routes] : tbl)
      for (Route& r : routes)
        if (!r.nh && r.info.prefsrc == addr && !usable6(ctl, ns, addr, r.dev))
          r.info.prefsrc = IpAddr{};
}

}  // namespace ifcore::proto
