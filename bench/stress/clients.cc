// bench/stress/clients.cc — the daemon side of ifcore-stress: clients that pipeline
// requests over the socket or over mapped rings and check what they believe against
// dumps, and the hostile ones: a subscriber that never reads, and clients that leave in
// the middle of a dump, of a batch and of a ring.
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "bench/scenarios/nl_client.h"
#include "bench/stress/stress.h"
#include "rtnl/wire/address.h"
#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::stress {

namespace {

using bench::Bytes;
using bench::NlClient;

Bytes getlink_dump(std::uint32_t seq) {
  wire::MessageBuilder b;
  wire::GetLinkRequest g;
  g.dump = true;
  (void)wire::encode_getlink(b, {RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, seq, 0}, g);
  return b.take();
}

Bytes getaddr_dump(std::uint32_t seq, std::uint8_t family) {
  wire::MessageBuilder b;
  b.begin({RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, seq, 0});
  ifaddrmsg m{};
  m.ifa_family = family;
  b.put_struct(m);
  (void)b.end();
  return b.take();
}

// Sends a dump request and collects every message of its answer (copied out), up to
// NLMSG_DONE. Errors: the dump's NLMSG_ERROR; ETIMEDOUT after 10 s of silence; the
// client's.
Result<std::vector<Bytes>> dump(NlClient& c, const Bytes& request) {
  nlmsghdr h;
  std::memcpy(&h, request.data(), sizeof h);
  if (auto s = c.send(request); !s) return fail(s.error());
  std::vector<Bytes> out;
  for (;;) {
    auto d = c.recv(10000);
    if (!d) return fail(d.error());
    if (!*d) return fail(ETIMEDOUT, "no answer to the dump for 10 s");
    auto msgs = wire::split_messages(**d);
    if (!msgs) return fail(msgs.error());
    for (const auto& m : *msgs) {
      if (m.hdr.nlmsg_seq != h.nlmsg_seq) continue;
      if (m.hdr.nlmsg_type == NLMSG_DONE) return out;
      if (m.hdr.nlmsg_type == NLMSG_ERROR) {
        auto e = wire::decode_error(m);
        return fail(e ? e->error : EPROTO, "dump refused: {}", e ? e->message : "");
      }
      out.emplace_back(m.bytes.begin(), m.bytes.end());
    }
  }
}

// Each message of a dump decoded with `decode`. Errors: the decoder's.
template <class Decode>
auto decode_all(const std::vector<Bytes>& msgs, Decode decode) -> Result<
    std::vector<typename decltype(decode(std::declval<const wire::Message&>()))::value_type>> {
  std::vector<typename decltype(decode(std::declval<const wire::Message&>()))::value_type> out;
  for (const auto& bytes : msgs) {
    auto m = wire::only_message(bytes);
    if (!m) return fail(EPROTO, "a dump message that does not split");
    auto v = decode(*m);
    if (!v) return fail(v.error());
    out.push_back(std::move(*v));
  }
  return out;
}

Result<std::vector<wire::LinkMessage>> links_of(const std::vector<Bytes>& msgs) {
  return decode_all(msgs, [](const wire::Message& m) { return wire::decode_link_message(m); });
}

Result<std::vector<wire::AddrMessage>> addrs_of(const std::vector<Bytes>& msgs) {
  return decode_all(msgs, [](const wire::Message& m) { return wire::decode_addr(m); });
}

class Client {
 public:
  Client(Shared& sh, int index, bool rings, ClientStats& st)
      : sh_(sh),
        index_(index),
        rings_(rings),
        st_(st),
        rng_(sh.opts.seed * 4099u + 101u + static_cast<std::uint64_t>(index)) {}

  void run() {
    auto c = NlClient::open_daemon(sh_.opts.socket_path, {}, client_namespace(index_));
    if (!c) return sh_.fail(fmt::format("client {}: {}", index_, c.error().message));
    c_ = std::move(*c);
    if (rings_) {
      if (auto r = c_->use_rings(); !r)
        return sh_.fail(fmt::format("client {}: rings: {}", index_, r.error().message));
    }
    while (!sh_.done())
      if (!round()) return;
    check();
  }

 private:
  // One pipelined batch: creates (each with an IPv6 address), sets and deletes. Every
  // request of it must succeed: the client alone changes its namespace.
  bool round() {
    std::vector<Bytes> msgs;
    std::vector<std::pair<std::string, int>> made;
    const std::size_t creates = std::min<std::size_t>(
        1 + rng_() % 16, kMaxLive > live_.size() ? kMaxLive - live_.size() : 0);
    for (std::size_t i = 0; i < creates; ++i) {
      const std::uint32_t k = next_++;
      LinkRequest req;
      req.kind = "dummy";
      req.name = fmt::format("c{}d{}", index_, k);
      req.ifindex = 100 + static_cast<int>(k % 30000);
      msgs.push_back(bench::newlink_msg(c_->next_seq(), req));
      const std::string addr = fmt::format("2001:db8:{:x}:{:x}::1", index_, k & 0xffff);
      msgs.push_back(bench::newaddr6_msg(c_->next_seq(), req.ifindex, addr, 64));
      made.emplace_back(*req.name, req.ifindex);
      addrs_[req.ifindex] = *IpAddr::parse(addr);
    }
    for (std::size_t i = 0; i < live_.size() && i < 4; ++i) {
      LinkRequest req;
      req.name = live_[rng_() % live_.size()].first;
      req.mtu = 1280 + static_cast<std::uint32_t>(rng_() % 7000);
      msgs.push_back(bench::setlink_msg(c_->next_seq(), req));
    }
    std::shuffle(live_.begin(), live_.end(), rng_);
    const std::size_t deletes =
        live_.empty() ? 0 : rng_() % std::min<std::size_t>(live_.size(), 12);
    for (std::size_t i = 0; i < deletes; ++i) {
      msgs.push_back(bench::dellink_msg(c_->next_seq(), live_[i].first));
      addrs_.erase(live_[i].second);
    }
    auto r = c_->call_many(msgs, 16, 1 + rng_() % 4);
    if (!r) {
      sh_.fail(fmt::format("client {}: a request of round {} failed: {}", index_, st_.rounds,
                           r.error().message));
      return false;
    }
    live_.erase(live_.begin(), live_.begin() + static_cast<std::ptrdiff_t>(deletes));
    live_.insert(live_.end(), made.begin(), made.end());
    st_.requests += msgs.size();
    sh_.count(msgs.size());
    if (++st_.rounds % 8 == 0) check();
    return true;
  }

  // A dump of links and of global IPv6 addresses shows exactly what this client believes.
  void check() {
    std::set<std::pair<std::string, int>> believed(live_.begin(), live_.end());
    std::set<std::pair<std::string, int>> links;
    auto ld = dump(*c_, getlink_dump(c_->next_seq()));
    if (!ld) return sh_.fail(fmt::format("client {}: link dump: {}", index_, ld.error().message));
    auto ls = links_of(*ld);
    if (!ls) return sh_.fail(fmt::format("client {}: link dump: {}", index_, ls.error().message));
    for (const auto& l : *ls)
      if (!(l.flags & IFF_LOOPBACK)) links.emplace(l.name, l.ifindex);
    if (links != believed)
      sh_.fail(fmt::format("client {}: the dump shows {} devices, the client believes {}", index_,
                           links.size(), believed.size()));
    std::map<int, IpAddr> addrs;
    auto ad = dump(*c_, getaddr_dump(c_->next_seq(), AF_INET6));
    if (!ad)
      return sh_.fail(fmt::format("client {}: address dump: {}", index_, ad.error().message));
    auto as = addrs_of(*ad);
    if (!as)
      return sh_.fail(fmt::format("client {}: address dump: {}", index_, as.error().message));
    for (const auto& a : *as)
      if (a.scope == RT_SCOPE_UNIVERSE && a.address)
        addrs[static_cast<int>(a.ifindex)] = *a.address;
    if (addrs != addrs_)
      sh_.fail(fmt::format("client {}: the dump shows {} addresses, the client believes {}", index_,
                           addrs.size(), addrs_.size()));
    ++st_.dumps_checked;
  }

  static constexpr std::size_t kMaxLive = 64;
  Shared& sh_;
  const int index_;
  const bool rings_;
  ClientStats& st_;
  std::mt19937_64 rng_;
  std::unique_ptr<NlClient> c_;
  std::vector<std::pair<std::string, int>> live_;  // name, ifindex
  std::map<int, IpAddr> addrs_;                    // ifindex -> its global address
  std::uint32_t next_ = 0;
};

// The groups of everything a writer's namespace announces.
std::vector<unsigned> every_group() {
  return {RTNLGRP_LINK,        RTNLGRP_NEIGH,      RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV4_ROUTE,
          RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV6_ROUTE, RTNLGRP_NEXTHOP,     RTNLGRP_IPV4_RULE};
}

constexpr std::uint32_t kHostileGroup = 9;

class Hostile {
 public:
  Hostile(Shared& sh, HostileStats& st) : sh_(sh), st_(st), rng_(sh.opts.seed * 31u + 7u) {}

  void run() {
    // Subscribes to everything in writer 0's namespace and reads nothing until the end:
    // ifcored must bound what it queues for it, and keep serving everyone else.
    std::unique_ptr<NlClient> subscriber;
    if (sh_.opts.writers > 0) {
      auto s = NlClient::open_daemon(sh_.opts.socket_path, every_group(), writer_namespace(0));
      if (!s) return sh_.fail(fmt::format("subscriber: {}", s.error().message));
      subscriber = std::move(*s);
    }
    while (!sh_.done()) {
      switch (rng_() % 4) {
        case 0:
          leave_mid_dump();
          break;
        case 1:
          leave_mid_batch(false);
          break;
        case 2:
          leave_mid_batch(true);
          break;
        default:
          clean_up();
          break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    clean_up();
    if (subscriber) drain(*subscriber);
  }

 private:
  // Asks for a dump of the busiest namespace's links (several datagrams), reads one
  // datagram of it and hangs up.
  void leave_mid_dump() {
    const std::string ns = sh_.opts.writers > 0 ? writer_namespace(0) : kHostileNamespace;
    auto c = NlClient::open_daemon(sh_.opts.socket_path, {}, ns);
    if (!c) return sh_.fail(fmt::format("mid-dump client: {}", c.error().message));
    if (auto s = (*c)->send(getlink_dump((*c)->next_seq())); !s)
      return sh_.fail(fmt::format("mid-dump client: {}", s.error().message));
    (void)(*c)->recv(1000);
    ++st_.mid_dump;
    sh_.count();
  }

  // Sends a run of creates in the hostile namespace (over the socket, or over the rings)
  // and hangs up before reading any answer. The devices of group kHostileGroup that the
  // daemon made before it saw the end stay; clean_up takes them.
  void leave_mid_batch(bool rings) {
    auto c = NlClient::open_daemon(sh_.opts.socket_path, {}, kHostileNamespace);
    if (!c) return sh_.fail(fmt::format("mid-batch client: {}", c.error().message));
    if (rings) {
      if (auto r = (*c)->use_rings(); !r)
        return sh_.fail(fmt::format("mid-ring client: {}", r.error().message));
    }
    const int n = 8 + static_cast<int>(rng_() % 56);
    for (int i = 0; i < n; ++i) {
      LinkRequest req;
      req.kind = "dummy";
      req.name = fmt::format("h{}", next_++ % 100000);
      req.group = kHostileGroup;
      // A name already taken by an earlier run fails with EEXIST: no one reads the answer.
      if (auto s = (*c)->send(bench::newlink_msg((*c)->next_seq(), req)); !s) break;
    }
    ++(rings ? st_.mid_ring : st_.mid_batch);
    sh_.count(static_cast<std::uint64_t>(n));
  }

  // Deletes the group the leaving clients made, then checks that the hostile namespace
  // holds its loopback only: nothing they left is half there.
  void clean_up() {
    auto c = NlClient::open_daemon(sh_.opts.socket_path, {}, kHostileNamespace);
    if (!c) return sh_.fail(fmt::format("clean-up client: {}", c.error().message));
    auto r = (*c)->call(bench::delgroup_msg((*c)->next_seq(), kHostileGroup));
    if (!r && r.error().code != ENODEV)
      return sh_.fail(fmt::format("clean-up: group delete: {}", r.error().message));
    auto d = dump(**c, getlink_dump((*c)->next_seq()));
    if (!d) return sh_.fail(fmt::format("clean-up: dump: {}", d.error().message));
    // A batch still being served may add devices after the delete: only those of the
    // group are allowed, and each must be whole (a name and a kind).
    auto ls = links_of(*d);
    if (!ls) return sh_.fail(fmt::format("clean-up: dump: {}", ls.error().message));
    for (const auto& l : *ls) {
      if (l.flags & IFF_LOOPBACK) continue;
      if (l.group.value_or(0) != kHostileGroup || l.kind.value_or("") != "dummy")
        sh_.fail(fmt::format("clean-up: {} is not one of the leaving clients' dummies", l.name));
    }
    ++st_.cleanups;
  }

  // Reads what the subscriber was sent: notifications up to its bound, then the overflow
  // datagram that stands for ENOBUFS.
  void drain(NlClient& s) {
    for (;;) {
      auto d = s.recv(200);
      if (!d || !*d) return;
      ++st_.subscriber_datagrams;
      if (rtnl::is_overflow_datagram(**d)) ++st_.subscriber_overflows;
    }
  }

  Shared& sh_;
  HostileStats& st_;
  std::mt19937_64 rng_;
  std::uint32_t next_ = 0;
};

}  // namespace

void run_client(Shared& sh, int index, bool rings, ClientStats& st) {
  Client(sh, index, rings, st).run();
}

void run_hostile(Shared& sh, HostileStats& st) {
  Hostile(sh, st).run();
}

}  // namespace ifcore::stress
