// Bridge frame path: Linux net/bridge semantics (br_input.c br_handle_frame, br_forward.c
// br_flood/br_forward, br_fdb.c learning and ageing, br_device.c br_dev_xmit), written for
// ifcore. No STP: a port forwards as soon as it is enabled (bridge.cc update_states).
//
// Lock order: Fdb::mu_ is a leaf; it is never held inside an rcu::ReadGuard, and no
// device is transmitted to while it is held.
#include <algorithm>
#include <cstring>

#include "base/rcu.h"
#include "kinds/bridge_priv.h"

namespace ifcore::kinds::bridge {

namespace {

// Sends `f` out of every forwarding port but `ingress`, or only to `only` if it is known.
void forward(Device& br, Priv& p, Device* ingress, Frame&& f) {
  TimePoint now = br.engine().time().now();
  HwAddr dst = frame_dst(f);
  bool local = false;
  Device* known = is_group_address(dst) ? nullptr : p.fdb.lookup(dst, now, &local);
  if (local) {  // Linux: br_handle_frame_finish delivers a local destination up
    receive(br, std::move(f));
    return;
  }
  std::vector<Ref> out;
  {
    rcu::ReadGuard g;
    if (const DataPlane* dp = p.dp.load(std::memory_order_acquire))
      for (const PortView& pv : dp->ports) {
        if (!pv.forwarding || pv.dev == ingress || (known && pv.dev != known)) continue;
        if (pv.dev->state() == RegState::Registered) out.emplace_back(*pv.dev, "bridge");
      }
  }
  // A known destination behind the ingress port (or gone) is not sent anywhere.
  for (std::size_t i = 0; i < out.size(); ++i)
    transmit(*out[i], i + 1 == out.size() ? std::move(f) : f.copy());
}

bool is_forwarding(const Priv& p, const Device& port) {
  rcu::ReadGuard g;
  if (const DataPlane* dp = p.dp.load(std::memory_order_acquire))
    for (const PortView& pv : dp->ports)
      if (pv.dev == &port) return pv.forwarding;
  return false;
}

// Linux: br_handle_frame, the rx_handler of every port.
class BridgeRx final : public RxHandler {
 public:
  bool handle(Device& port, Frame& f, const std::vector<Device*>& devs) const override {
    if (devs.empty()) return false;  // the bridge is going away
    Device& br = *devs.front();
    Priv* p = priv(br);
    if (!p) return false;
    if (!is_forwarding(*p, port)) return true;  // a disabled port drops what it receives
    TimePoint now = br.engine().time().now();
    HwAddr src = frame_src(f);
    if (src.is_valid_ether() && p->fdb.learn(src, &port, now))
      post_timer(br.engine(), p->announce_timer);
    HwAddr dst = frame_dst(f);
    if (is_group_address(dst)) {  // flooded, and the bridge device gets it too
      forward(br, *p, &port, f.copy());
      receive(br, std::move(f));
    } else if (dst == br.address()) {
      receive(br, std::move(f));
    } else {
      forward(br, *p, &port, std::move(f));
    }
    return true;
  }
};

const BridgeRx kRx;

}  // namespace

Fdb::Key Fdb::key(const HwAddr& mac, std::uint16_t vid) {
  std::uint64_t k = 0;
  auto b = mac.bytes();
  std::memcpy(&k, b.data(), std::min<std::size_t>(b.size(), 8));
  return {k, vid};
}

// Linux: br_fdb_update — a new source makes a dynamic entry; a known one moves to the port
// it was seen on unless it is local or sticky (static entries move as on Linux).
bool Fdb::learn(const HwAddr& mac, Device* port, TimePoint now) {
  MutexLock lk(mu_);
  const Key k = key(mac, 0);
  auto [it, made] = map_.try_emplace(k);
  FdbEntry& e = it->second;
  if (made) {
    e.mac = mac;
    e.dst = port;
    e.updated = e.used = now;
    e.seq = ++seq_;
  } else {
    if (e.local) return false;
    e.updated = now;
    if (e.dst == port || e.sticky) return false;
    e.dst = port;
    e.ext_learn = false;
  }
  learned_.push_back(k);
  return learned_.size() == 1;
}

Device* Fdb::lookup(const HwAddr& mac, TimePoint now, bool* local) {
  Duration ageing(ageing_ns_.load(std::memory_order_relaxed));
  MutexLock lk(mu_);
  auto it = map_.find(key(mac, 0));
  if (it == map_.end()) return nullptr;
  FdbEntry& e = it->second;
  if (!e.is_static && !e.ext_learn && now - e.updated >= ageing) {  // Linux: has_expired
    map_.erase(it);
    return nullptr;
  }
  e.used = now;
  if (e.local || !e.dst) {
    *local = true;
    return nullptr;
  }
  return e.dst;
}

namespace {

// Linux walks the bridge's fdb_list, newest first: what goes is listed so.
void newest_first(std::vector<FdbEntry>& gone, std::size_t from) {
  std::sort(gone.begin() + static_cast<std::ptrdiff_t>(from), gone.end(),
            [](const FdbEntry& a, const FdbEntry& b) { return a.seq > b.seq; });
}

}  // namespace

void Fdb::flush(const Device* port, std::vector<FdbEntry>& gone) {
  const std::size_t from = gone.size();
  MutexLock lk(mu_);
  std::erase_if(map_, [&](const auto& kv) {
    const FdbEntry& e = kv.second;
    const bool drop = (!port || e.dst == port) && !e.is_static && !e.ext_learn;
    if (drop) gone.push_back(e);
    return drop;
  });
  newest_first(gone, from);
}

TimePoint Fdb::expire(TimePoint now, std::vector<FdbEntry>& gone) {
  const std::size_t from = gone.size();
  const Duration ageing(ageing_ns_.load(std::memory_order_relaxed));
  TimePoint next = now + ageing;
  MutexLock lk(mu_);
  std::erase_if(map_, [&](const auto& kv) {
    const FdbEntry& e = kv.second;
    if (e.is_static || e.ext_learn || e.local) return false;
    const TimePoint due = e.updated + ageing;
    if (due > now) {  // Linux: has_expired is now - updated >= ageing
      next = std::min(next, due);
      return false;
    }
    gone.push_back(e);
    return true;
  });
  newest_first(gone, from);
  return next;
}

void fdb_gc(Control& ctl, Device& br, Priv& p) {
  const TimePoint now = br.engine().time().now();
  std::vector<FdbEntry> gone;
  const TimePoint next = p.fdb.expire(now, gone);
  fdb_announce_removed(ctl, br, p, gone);
  arm_timer(ctl, p.gc_timer, std::max(next, now + std::chrono::milliseconds(10)));
}

void fdb_gc_start(Control& ctl, Device& br, Priv& p) {
  if (!p.gc_timer) {
    Device* b = &br;
    p.gc_timer = add_timer(ctl, [b](Control& c) {
      PluginGuard guard(c);  // the bridge's own state
      if (Priv* q = priv(*b)) fdb_gc(c, *b, *q);
    });
  }
  arm_timer(ctl, p.gc_timer, br.engine().time().now() + std::chrono::milliseconds(100));
}

void fdb_gc_stop(Control& ctl, Priv& p) {
  if (p.gc_timer) cancel_timer(ctl, p.gc_timer);
}

std::size_t Fdb::size() {
  MutexLock lk(mu_);
  return static_cast<std::size_t>(
      std::count_if(map_.begin(), map_.end(), [](const auto& kv) { return !kv.second.is_static; }));
}

void publish_ports(Control& ctl, Device& br, Priv& p) {
  auto next = std::make_unique<DataPlane>();
  std::vector<FdbEntry> gone;
  for (auto& port : p.ports) {
    bool fwd = port->s.state == BR_STATE_FORWARDING;
    next->ports.push_back(PortView{port->dev.get(), fwd});
    if (!fwd) p.fdb.flush(port->dev.get(), gone);
  }
  fdb_announce_removed(ctl, br, p, gone);
  // Linux: ageing_time is in clock_t (1/100 s).
  p.fdb.set_ageing(std::chrono::milliseconds(10) * p.s.ageing_time);
  const DataPlane* old = p.dp.exchange(next.release(), std::memory_order_acq_rel);
  rcu::retire(const_cast<DataPlane*>(old));
}

void attach_port(Control& ctl, Device& br, Device& port) {
  set_rx_handler(ctl, port, &kRx, {&br});
}

void detach_port(Control& ctl, Device& port) {
  if (port.state() == RegState::Registered) set_rx_handler(ctl, port, nullptr, {});
}

void xmit(Device& br, Priv& p, Frame&& f) {
  forward(br, p, nullptr, std::move(f));
}

}  // namespace ifcore::kinds::bridge
