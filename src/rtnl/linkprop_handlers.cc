// rtnl/linkprop_handlers.cc — RTM_NEWLINKPROP and RTM_DELLINKPROP: a device's alternative
// names (Linux: rtnl_linkprop, rtnl_alt_ifname).
//
// Lock order: each handler takes the control lock once (then Hub::mu_ through the
// notification it causes).
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstdint>

#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/wire/link.h"

namespace ifcore::rtnl {

namespace {

// Linux: rtnl_prop_list_size — what IFLA_PROP_LIST takes in a link message: a nest header
// and a whole ALTIFNAMSIZ entry per altname, whatever the names' lengths.
constexpr std::size_t kAltEntrySize = NLA_ALIGN(NLA_HDRLEN + ALTIFNAMSIZ);

std::size_t prop_list_size(const Device& dev) {
  std::size_t n = dev.altnames_locked().size();
  return n == 0 ? 0 : NLA_HDRLEN + n * kAltEntrySize;
}

Result<void> linkprop(Request& r, bool add) {
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  auto d = wire::decode_linkprop(r.m);
  if (!d) return fail(d.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  // Linux: rtnl_linkprop — by index, else by IFLA_IFNAME or IFLA_ALT_IFNAME (either finds
  // a device by any of its names), else EINVAL.
  Device* dev = nullptr;
  if (d->ifindex > 0) {
    dev = ctl.find(**ns, d->ifindex);
  } else if (d->name) {
    dev = ctl.find(**ns, *d->name);
  } else if (d->alt_name) {
    dev = ctl.find(**ns, *d->alt_name);
  } else {
    return fail(EINVAL);
  }
  if (!dev) return fail(ENODEV);
  // Entries apply one after the other: an error stops the list and keeps what the entries
  // before it did, with no notification (Linux returns before netdev_state_change).
  bool changed = false;
  for (const wire::RawAttr& a : d->props) {
    if (a.type != IFLA_ALT_IFNAME) continue;  // Linux: other types are skipped
    auto name = wire::linkprop_alt_name(a);
    if (!name) return fail(name.error());
    if (add) {
      // Linux: rtnl_alt_ifname — the list, with one more entry, must fit a u16 length.
      if (prop_list_size(*dev) + kAltEntrySize >= 0xffff)
        return fail(EINVAL, "effective property list too long");
      IFCORE_TRY(ctl.add_altname(*dev, *name));
    } else {
      IFCORE_TRY(ctl.del_altname(*dev, *name));
    }
    changed = true;
  }
  // Linux: netdev_state_change — NETDEV_CHANGE and an RTM_NEWLINK, for a device that is up.
  if (changed && (dev->flags() & IFF_UP)) ctl.notify_change(*dev);
  return ok();
}

}  // namespace

Result<void> handle_newlinkprop(Request& r) {
  return linkprop(r, true);
}

Result<void> handle_dellinkprop(Request& r) {
  return linkprop(r, false);
}

}  // namespace ifcore::rtnl
