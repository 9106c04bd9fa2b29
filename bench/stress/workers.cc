// bench/stress/workers.cc — the embedded side of ifcore-stress: writers that churn devices
// with their addresses, routes and neighbours through the Control API, and RCU readers
// that look devices up without a lock and hold references on them.
#include <linux/neighbour.h>
#include <net/if.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "bench/stress/stress.h"
#include "ifcore/device.h"
#include "ifcore/inet.h"
#include "ifcore/namespace.h"
#include "ifcore/rcu.h"

namespace ifcore::stress {

void Shared::fail(std::string what) {
  MutexLock lk(mu_);
  if (failures_.size() < 64) failures_.push_back(std::move(what));
}

std::vector<std::string> Shared::failures() const {
  MutexLock lk(mu_);
  return failures_;
}

std::string writer_namespace(int i) {
  return fmt::format("stress-w{}", i);
}

std::string client_namespace(int i) {
  return fmt::format("stress-c{}", i);
}

namespace {

// A writer keeps at most this many devices, and makes new ones while it has fewer than
// kLow, so that every kind of operation keeps finding something to work on.
constexpr std::size_t kHigh = 48;
constexpr std::size_t kLow = 8;

class Writer {
 public:
  Writer(Engine& engine, Shared& sh, int index, WriterStats& st)
      : engine_(engine),
        sh_(sh),
        index_(index),
        st_(st),
        rng_(sh.opts.seed * 1000003u + static_cast<std::uint64_t>(index)) {}

  void run() {
    while (!sh_.done()) step();
    check();
  }

 private:
  void step() {
    auto ctl = engine_.control();
    Namespace* ns = ctl.find_namespace(writer_namespace(index_));
    if (!ns) return sh_.fail(fmt::format("writer {}: its namespace is gone", index_));
    const unsigned op = static_cast<unsigned>(rng_() % 10);
    if (live_.size() < kLow || (op < 4 && live_.size() < kHigh)) return create(ctl, *ns);
    if (op < 6) return delete_one(ctl, *ns);
    if (op < 7) return delete_some(ctl, *ns);
    change(ctl, *ns);
  }

  // A dummy, up, with 10.W.x.y/32, a route to 172.16+W.x.y/32 through it and a permanent
  // neighbour: each of them holds the device in its own way.
  void create(Control& ctl, Namespace& ns) {
    const std::uint32_t k = next_++ & 0xffff;
    const std::string name = fmt::format("w{}d{}", index_, k);
    LinkRequest req;
    req.kind = "dummy";
    req.name = name;
    auto made = ctl.create_link(ns, req);
    if (!made) return sh_.fail(fmt::format("create {}: {}", name, made.error().message));
    Device& d = **made;
    live_.push_back(name);
    ++st_.creates;
    sh_.count();
    if (auto r = ctl.open(d); !r) sh_.fail(fmt::format("up {}: {}", name, r.error().message));
    const std::string tail = fmt::format("{}.{}", k >> 8, k & 0xff);
    inet::AddrRequest a;
    a.family = AF_INET;
    a.local = a.address = *IpAddr::parse(fmt::format("10.{}.{}", index_ + 1, tail));
    a.prefixlen = 32;
    a.ifindex = d.ifindex();
    if (auto r = inet::add_address(ctl, ns, a); !r)
      sh_.fail(fmt::format("address on {}: {}", name, r.error().message));
    inet::RouteRequest rt;
    rt.family = AF_INET;
    rt.dst = *IpAddr::parse(fmt::format("172.{}.{}", 16 + index_, tail));
    rt.dst_len = 32;
    rt.oif = d.ifindex();
    if (auto r = inet::add_route(ctl, ns, rt); !r)
      sh_.fail(fmt::format("route through {}: {}", name, r.error().message));
    inet::NeighRequest n;
    n.family = AF_INET;
    n.ifindex = d.ifindex();
    n.dst = *IpAddr::parse(fmt::format("192.168.{}", tail));
    n.lladdr =
        *HwAddr::parse(fmt::format("02:00:00:{:02x}:{:02x}:{:02x}", index_, k >> 8, k & 0xff));
    n.state = NUD_PERMANENT;
    if (auto r = inet::add_neigh(ctl, ns, n); !r)
      sh_.fail(fmt::format("neighbour on {}: {}", name, r.error().message));
    sh_.count(4);
  }

  std::size_t pick() { return static_cast<std::size_t>(rng_() % live_.size()); }

  void delete_one(Control& ctl, Namespace& ns) {
    const std::size_t i = pick();
    Device* d = ctl.find(ns, live_[i]);
    if (!d) return sh_.fail(fmt::format("{} vanished", live_[i]));
    if (auto r = ctl.delete_link(*d); !r)
      return sh_.fail(fmt::format("delete {}: {}", live_[i], r.error().message));
    live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(i));
    ++st_.deletes;
    sh_.count();
  }

  // Up to four devices in one unregister batch.
  void delete_some(Control& ctl, Namespace& ns) {
    std::shuffle(live_.begin(), live_.end(), rng_);
    const std::size_t n = std::min<std::size_t>(live_.size(), 1 + rng_() % 4);
    std::vector<Device*> devs;
    for (std::size_t i = 0; i < n; ++i) {
      Device* d = ctl.find(ns, live_[i]);
      if (!d) return sh_.fail(fmt::format("{} vanished", live_[i]));
      devs.push_back(d);
    }
    if (auto r = ctl.delete_links(devs); !r)
      return sh_.fail(fmt::format("batch delete of {}: {}", n, r.error().message));
    live_.erase(live_.begin(), live_.begin() + static_cast<std::ptrdiff_t>(n));
    ++st_.batch_deletes;
    sh_.count(n);
  }

  // Down and up (which takes the route and flushes what is not permanent), or an MTU.
  void change(Control& ctl, Namespace& ns) {
    const std::string& name = live_[pick()];
    Device* d = ctl.find(ns, name);
    if (!d) return sh_.fail(fmt::format("{} vanished", name));
    if (rng_() % 2) {
      auto down = ctl.close(*d);
      auto up = ctl.open(*d);
      if (!down || !up) sh_.fail(fmt::format("down and up {}", name));
    } else if (auto r = ctl.set_mtu(*d, 1280 + static_cast<std::uint32_t>(rng_() % 7000)); !r) {
      sh_.fail(fmt::format("mtu of {}: {}", name, r.error().message));
    }
    ++st_.changes;
    sh_.count();
  }

  // The namespace holds the loopback and exactly the devices this writer believes it made.
  void check() {
    auto ctl = engine_.control();
    Namespace* ns = ctl.find_namespace(writer_namespace(index_));
    if (!ns) return sh_.fail(fmt::format("writer {}: its namespace is gone", index_));
    std::set<std::string> there;
    for (Device* d : ns->devices_locked())
      if (d != ns->loopback()) there.insert(std::string(d->name()));
    const std::set<std::string> believed(live_.begin(), live_.end());
    if (there != believed)
      sh_.fail(fmt::format("writer {}: {} devices in its namespace, {} believed", index_,
                           there.size(), believed.size()));
    ++st_.checks;
  }

  Engine& engine_;
  Shared& sh_;
  const int index_;
  WriterStats& st_;
  std::mt19937_64 rng_;
  std::vector<std::string> live_;
  std::uint32_t next_ = 0;
};

}  // namespace

void run_writer(Engine& engine, Shared& sh, int index, WriterStats& st) {
  Writer(engine, sh, index, st).run();
}

void run_reader(Shared& sh, std::vector<Namespace*> namespaces, int index, ReaderStats& st) {
  std::mt19937_64 rng(sh.opts.seed * 7919u + 17u + static_cast<std::uint64_t>(index));
  int highest = 2;  // the largest ifindex seen, so that lookups mostly land on devices
  while (!sh.done()) {
    Namespace* ns = namespaces[rng() % namespaces.size()];
    const int at = static_cast<int>(rng() % static_cast<std::uint64_t>(highest + 8));
    Ref ref;
    {
      rcu::ReadGuard guard;
      Device* d = (rng() % 2) ? ns->find_by_index_rcu(at) : ns->next_by_index_rcu(at);
      ++st.lookups;
      if (!d) continue;
      highest = std::max(highest, d->ifindex());
      ref = Ref(*d, "stress-reader");
      if (d->refcount() < 1) sh.fail(fmt::format("{} held with a count below one", d->name()));
    }
    ++st.refs;
    // Mostly a few microseconds; one hold in fifty lasts 1-3 ms, so that a delete of the
    // device meets a reference still held and its finalizer waits for this one.
    if (rng() % 50 == 0) {
      ++st.long_holds;
      std::this_thread::sleep_for(std::chrono::milliseconds(1 + rng() % 3));
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20));
    }
    ref.reset();
  }
}

}  // namespace ifcore::stress
