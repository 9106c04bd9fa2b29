// proto/lifetime.cc — address lifetimes (Linux: set_ifa_lifetime and check_lifetime in
// devinet.c; the lifetime parts of inet6_addr_add, inet6_addr_modify and
// addrconf_verify_rtnl in addrconf.c, semantics only).
//
// An address given finite lifetimes counts them down from its last update (tstamp). When
// the preferred lifetime ends the address is deprecated (RTM_NEWADDR); when the valid one
// ends it is removed, with its routes, as a user's delete would. One engine timer wakes
// at the earliest of those moments among the watched addresses.
//
// Context: control lock, everywhere.
#include <algorithm>
#include <chrono>

#include "proto/state.h"

namespace ifcore::proto {

namespace {

using inet::kForever;

// Whole seconds from `from` to `now` (Linux: (jiffies - tstamp) / HZ).
std::uint64_t age_seconds(TimePoint from, TimePoint now) {
  if (now <= from) return 0;
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(now - from).count());
}

TimePoint after(TimePoint t, std::uint32_t seconds) {
  return t + std::chrono::seconds(seconds);
}

// Whether the timer has nothing to do for `a` (Linux skips it in its checks).
bool untimed(int family, const AddrInfo& a) {
  if (!(a.flags & IFA_F_PERMANENT)) return false;
  // Linux: addrconf_verify_rtnl still deprecates a permanent IPv6 address whose
  // preferred lifetime is finite; check_lifetime skips every permanent IPv4 one.
  return family == AF_INET || a.preferred_lft == kForever || (a.flags & IFA_F_DEPRECATED) != 0;
}

// Where `ifa` is now: its device, its list and its index there (nullptr if it is gone).
struct Found {
  Namespace* ns = nullptr;
  Device* dev = nullptr;
  DevState* ds = nullptr;
  std::size_t idx = 0;
};
Found locate(Control& ctl, EngineProto& ep, const Ifa* ifa, const EngineProto::Timed& t) {
  Found f;
  f.ns = ctl.find_namespace_by_id(t.ns_id);
  if (!f.ns) return {};
  f.dev = ctl.find(*f.ns, t.ifindex);
  if (!f.dev) return {};
  f.ds = find_dev(ep, *f.dev);
  if (!f.ds) return {};
  const std::vector<std::unique_ptr<Ifa>>* list = nullptr;
  if (t.family == AF_INET && f.ds->in) list = &f.ds->in->addrs;
  if (t.family == AF_INET6 && f.ds->in6) list = &f.ds->in6->addrs;
  if (!list) return {};
  for (std::size_t i = 0; i < list->size(); ++i)
    if ((*list)[i].get() == ifa) {
      f.idx = i;
      return f;
    }
  return {};
}

// Linux: check_lifetime (IPv4) and addrconf_verify_rtnl (IPv6). Ages every watched
// address and arms the timer for the next moment one of them changes.
void check_lifetimes(Control& ctl) {
  EngineProto& ep = engine_proto(ctl.engine());
  RetireScope scope(ep);
  const TimePoint now = ctl.engine().time().now();
  std::optional<TimePoint> next;
  auto soonest = [&](TimePoint t) {
    if (!next || t < *next) next = t;
  };
  // A removal may take other watched addresses with it (an IPv4 primary's secondaries):
  // work from a copy, and find each address again before touching it.
  std::vector<std::pair<const Ifa*, EngineProto::Timed>> watched(ep.timed.begin(), ep.timed.end());
  for (const auto& [ifa, t] : watched) {
    Found f = locate(ctl, ep, ifa, t);
    if (!f.dev) {
      ep.timed.erase(ifa);
      continue;
    }
    AddrInfo& a = const_cast<Ifa*>(ifa)->info;
    if (untimed(t.family, a)) {
      ep.timed.erase(ifa);
      continue;
    }
    const std::uint64_t age = age_seconds(a.tstamp, now);
    if (a.valid_lft != kForever && age >= a.valid_lft) {
      ep.timed.erase(ifa);
      if (t.family == AF_INET)
        expire_address4(ctl, *f.ns, *f.dev, *f.ds->in, f.idx);
      else
        expire_address6(ctl, *f.ns, *f.dev, *f.ds->in6, f.idx);
      continue;
    }
    if (a.valid_lft != kForever) soonest(after(a.tstamp, a.valid_lft));
    if (a.preferred_lft == kForever) continue;
    if (age >= a.preferred_lft) {
      if (!(a.flags & IFA_F_DEPRECATED)) {
        a.flags |= IFA_F_DEPRECATED;
        notify_addr(ep, *f.ns, inet::ProtoEvent::New, a);
      }
      if (a.valid_lft == kForever) ep.timed.erase(ifa);  // nothing more will happen to it
    } else {
      soonest(after(a.tstamp, a.preferred_lft));
    }
  }
  if (next)
    arm_timer(ctl, ep.lifetime_timer, *next);
  else
    cancel_timer(ctl, ep.lifetime_timer);
}

}  // namespace

Result<void> check_lifetime_request(int family, const inet::AddrRequest& req) {
  if (req.valid_lft == 0 || req.preferred_lft > req.valid_lft)
    return fail(EINVAL, family == AF_INET ? "ipv4: address lifetime invalid"
                                          : "ipv6: address lifetime invalid");
  return ok();
}

void set_lifetime(AddrInfo& a, std::uint32_t valid, std::uint32_t preferred, TimePoint now) {
  a.flags &= ~(IFA_F_PERMANENT | IFA_F_DEPRECATED);
  if (valid == kForever) a.flags |= IFA_F_PERMANENT;
  if (preferred == 0) a.flags |= IFA_F_DEPRECATED;
  a.valid_lft = valid;
  a.preferred_lft = preferred;
  a.tstamp = now;
  if (a.cstamp == TimePoint{}) a.cstamp = now;
}

AddrInfo reported(const AddrInfo& a, TimePoint now) {
  AddrInfo r = a;
  // Linux: a permanent address reports infinite lifetimes (IPv6: unless its preferred
  // lifetime is finite); the valid lifetime counts down only beside a finite preferred one.
  if ((a.flags & IFA_F_PERMANENT) && (a.family == AF_INET || a.preferred_lft == kForever)) {
    r.valid_lft = r.preferred_lft = kForever;
    return r;
  }
  if (a.preferred_lft == kForever) return r;
  const std::uint64_t age = age_seconds(a.tstamp, now);
  auto left = [&](std::uint32_t lft) {
    return lft == kForever ? kForever : static_cast<std::uint32_t>(lft > age ? lft - age : 0);
  };
  r.preferred_lft = left(a.preferred_lft);
  r.valid_lft = left(a.valid_lft);
  return r;
}

void watch_lifetime(Control& ctl, Namespace& ns, const Device& dev, const Ifa& ifa) {
  EngineProto& ep = engine_proto(ctl.engine());
  if (untimed(ifa.info.family, ifa.info)) return;
  ep.timed[&ifa] = EngineProto::Timed{ns.id(), dev.ifindex(), ifa.info.family};
  // Linux queues the check at once; nothing can be due before the address's own next
  // moment, so the timer is moved only if that comes earlier than its deadline.
  const AddrInfo& a = ifa.info;
  TimePoint due = a.preferred_lft != kForever && !(a.flags & IFA_F_DEPRECATED)
                      ? after(a.tstamp, a.preferred_lft)
                      : after(a.tstamp, a.valid_lft);
  auto armed = timer_deadline(ctl, ep.lifetime_timer);
  if (!armed || due < *armed) arm_timer(ctl, ep.lifetime_timer, due);
}

void lifetime_init(Control& ctl, EngineProto& ep) {
  ep.clock = &ctl.engine().time();
  ep.lifetime_timer = add_timer(ctl, [](Control& c) { check_lifetimes(c); });
}

}  // namespace ifcore::proto
