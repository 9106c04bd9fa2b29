// bench/scenarios/wire_paths.cc — the scenarios as rtnetlink requests, shared by the daemon
// path (ifcored) and the kernel path (AF_NETLINK in a fresh namespace): one request per
// message as `ip` sends them, pipelined where the seed's script used batches, and a
// monitor socket for carrier notifications.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <map>

#include "bench/scenarios/wire.h"
#include "rtnl/wire/bulk_create.h"
#include "rtnl/wire/link.h"

namespace ifcore::bench {
namespace {

constexpr std::uint32_t kBatchGroup = 7;  // devices deleted together share this group
constexpr int kFirstIfindex = 100;        // requested ifindexes start here (lo is 1)
// Batches: 256 requests in flight, one request per datagram as `ip -batch` sends them.
// (Packing 32 to a datagram, which netlink allows, changed neither server's figures here.)
constexpr std::size_t kWindow = 256, kPerDatagram = 1;

#define WIRE_TRY(expr)                \
  do {                                \
    auto r_ = (expr);                 \
    if (!r_) return fail(r_.error()); \
  } while (0)

struct Ctx {
  const RunParams& p;
  WireEnv& env;
  NlClient& c;
  int next = kFirstIfindex;

  bool sub() const { return env.substitute_kinds; }
  int alloc(int k) {
    int i = next;
    next += k;
    return i;
  }
  // A "dummy": a dummy, or on the kernel a veth pair (NAME and NAMEp). Returns the message
  // and sets *ifindex to the device the scenario uses.
  Bytes dummy(const std::string& name, LinkOpts o, int* ifindex) {
    if (sub()) {
      o.ifindex = alloc(2);
      o.peer_ifindex = o.ifindex + 1;
      *ifindex = o.ifindex;
      return newlink_msg(c.next_seq(), veth_request(name, name + "p", o));
    }
    o.ifindex = alloc(1);
    *ifindex = o.ifindex;
    return newlink_msg(c.next_seq(), dummy_request(name, o));
  }
  // A "vlan" on `lower`: a vlan, or on the kernel a macvlan.
  Bytes vlan(const std::string& name, int lower, int id, LinkOpts o) {
    o.ifindex = alloc(1);
    if (sub()) return newlink_msg(c.next_seq(), macvlan_request(name, lower, o));
    return newlink_msg(c.next_seq(), vlan_request(name, lower, id, o));
  }
  void tick(int i, int n) const {
    if (p.progress && n > 0 && (i & 31) == 0) p.progress(double(i) / n);
  }
};

// Called just before a clock starts: one request that changes nothing (RTM_NEWLINK for lo,
// no attributes), answered untimed, so that the server is awake when the clock starts.
// ifcored sleeps in epoll_wait(2) once it has been idle for its busy-poll window, and the
// first request after that pays the wakeup of its thread (about 50 µs here: 100 pipelined
// creates took 432 µs without this request and 383 µs with it, medians of 20 alternating
// runs). A wakeup takes 50-100 µs here: the client must poll longer than that for this
// answer (see run_wire), or it falls asleep itself, wakes after the daemon's window has
// ended, and the clock starts with a sleeping daemon again. The kernel answers in the
// caller's context and never sleeps between requests; both servers get the same request.
Result<void> wake_server(Ctx& x) {
  LinkRequest lo;
  lo.ifindex = 1;
  return x.c.call(setlink_msg(x.c.next_seq(), lo));
}

Result<double> timed_call(NlClient& c, const Bytes& m) {
  auto t0 = BenchClock::now();
  WIRE_TRY(c.call(m));
  return seconds_between(t0, BenchClock::now());
}

// The lower device: a dummy (a veth pair on the kernel, both ends up so it has carrier).
Result<int> make_lower(Ctx& x, const std::string& name) {
  int idx = 0;
  WIRE_TRY(x.c.call(x.dummy(name, {.up = true}, &idx)));
  if (x.sub()) WIRE_TRY(x.c.call(setlink_msg(x.c.next_seq(), up_request(idx + 1))));
  return idx;
}

Result<RunOutput> seed0(Ctx& x) {
  RunOutput out;
  if (x.env.set_ipv6_keep_addr_on_down)
    WIRE_TRY(x.env.set_ipv6_keep_addr_on_down(true));
  else
    out.notes.push_back("keep_addr_on_down not set: " + x.env.no_sysctl_why);
  auto lower = make_lower(x, "lower0");
  if (!lower) return fail(lower.error());
  for (int i = 0; i < x.p.n; ++i) {
    LinkOpts o{.up = true};
    o.ifindex = x.alloc(1);
    WIRE_TRY(x.c.call(newlink_msg(x.c.next_seq(), macvlan_request("mv0", *lower, o))));
    WIRE_TRY(x.c.call(newaddr6_msg(x.c.next_seq(), o.ifindex, "2002::1", 64)));
    auto t = timed_call(x.c, dellink_msg(x.c.next_seq(), "mv0"));
    if (!t) return fail(t.error());
    out.samples["delete"].push_back(*t);
    x.tick(i, x.p.n);
  }
  WIRE_TRY(x.c.call(dellink_msg(x.c.next_seq(), "lower0")));  // leaves what it found
  out.devices["delete"] = 1;
  out.traffic["delete"] = {.one_at_a_time = 1};  // per sample
  if (x.sub()) out.notes.push_back("lower device: a veth pair (no dummy in this kernel)");
  return out;
}

Result<RunOutput> seed1(Ctx& x) {
  RunOutput out;
  WIRE_TRY(wake_server(x));
  auto t0 = BenchClock::now();
  if (x.env.set_ipv6_forwarding)
    WIRE_TRY(x.env.set_ipv6_forwarding(true));
  else
    out.notes.push_back("forwarding not set: " + x.env.no_sysctl_why);
  for (int i = 0; i < x.p.n; ++i) {
    // ip link add ethI type dummy; ip link set ethI up; ip -6 addr add 2021:I::1/120 dev ethI
    int idx = 0;
    std::string name = "eth" + std::to_string(i);
    WIRE_TRY(x.c.call(x.dummy(name, {}, &idx)));
    WIRE_TRY(x.c.call(setlink_msg(x.c.next_seq(), up_request(idx))));
    WIRE_TRY(x.c.call(newaddr6_msg(x.c.next_seq(), idx, seed1_address(i), 120)));
    x.tick(i, 2 * x.p.n);
  }
  auto t1 = BenchClock::now();
  for (int i = 0; i < x.p.n; ++i) {
    WIRE_TRY(x.c.call(dellink_msg(x.c.next_seq(), "eth" + std::to_string(i))));
    x.tick(x.p.n + i, 2 * x.p.n);
  }
  auto t2 = BenchClock::now();
  out.samples["total"].push_back(seconds_between(t0, t2));
  out.samples["delete"].push_back(seconds_between(t1, t2));
  out.devices["total"] = out.devices["delete"] = x.p.n;
  // The sysctl write goes on a connection of its own: not counted.
  out.traffic["total"] = {.one_at_a_time = 4 * x.p.n};
  out.traffic["delete"] = {.one_at_a_time = x.p.n};
  if (x.sub()) out.notes.push_back("veth pairs stand in for dummies (one pair per device)");
  return out;
}

// ifcored on its socket: the same dummies in ONE create batch (docs/WIRE.md, "Create
// batch"), timed from the send to the ACK after the per-item results, then deleted again by
// group (which fails with ENODEV if the batch made nothing); create_batch_samples() times. The
// kernel has no such message; a ring's datagrams are too small for 10^4 requests in one.
// More than kBatchItems dummies (the scale sweep's 10^5 and 10^6) go as batches of that
// many, one after another, timed together: one datagram of 10^6 requests (80 MB) would
// exceed what a socket's send buffer may hold.
constexpr int kBatchItems = 10000;

Result<void> create_batch(Ctx& x, int makes, RunOutput& out) {
  std::vector<Bytes> batches;
  std::size_t largest = 0;
  for (int from = 0; from < makes; from += kBatchItems) {
    const int to = std::min(makes, from + kBatchItems);
    std::vector<wire::BulkLinkRequest> items(static_cast<std::size_t>(to - from));
    for (int i = from; i < to; ++i)
      items[i - from].link = dummy_request("dummy" + std::to_string(i), {.group = kBatchGroup});
    wire::MessageBuilder b(std::size_t{8} << 20);
    wire::Header h{RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK,
                   x.c.next_seq(), 0};
    WIRE_TRY(wire::encode_bulk_create(b, h, items));
    batches.emplace_back(b.bytes().begin(), b.bytes().end());
    largest = std::max(largest, batches.back().size());
  }
  // One datagram per batch: the socket's send buffer must hold the largest.
  int sndbuf = static_cast<int>(2 * largest);
  (void)::setsockopt(x.c.fd(), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  const int samples = create_batch_samples(makes);
  for (int k = 0; k < samples; ++k) {
    WIRE_TRY(wake_server(x));
    auto t0 = BenchClock::now();
    for (const Bytes& batch : batches) WIRE_TRY(x.c.call(batch));
    auto t1 = BenchClock::now();
    WIRE_TRY(x.c.call(delgroup_msg(x.c.next_seq(), kBatchGroup)));
    out.samples["create-batch"].push_back(seconds_between(t0, t1));
  }
  out.devices["create-batch"] = makes;
  out.traffic["create-batch"] = {.one_at_a_time = static_cast<int>(batches.size())};
  return ok();
}

// N devices in the batch group, created pipelined (ip -batch), deleted with one request.
Result<RunOutput> batch_of_dummies(Ctx& x) {
  RunOutput out;
  int devices = x.p.n;
  int makes = x.sub() ? std::max(1, devices / 2) : devices;
  std::vector<Bytes> msgs;
  msgs.reserve(makes);
  for (int i = 0; i < makes; ++i) {
    int idx = 0;
    LinkOpts o;
    o.group = kBatchGroup;
    msgs.push_back(x.dummy("dummy" + std::to_string(i), o, &idx));
  }
  WIRE_TRY(wake_server(x));
  auto t0 = BenchClock::now();
  constexpr std::size_t kChunk = 4096;
  for (std::size_t at = 0; at < msgs.size(); at += kChunk) {
    std::vector<Bytes> part(msgs.begin() + at, msgs.begin() + std::min(msgs.size(), at + kChunk));
    WIRE_TRY(x.c.call_many(part, kWindow, kPerDatagram));
    x.tick(int(at), 2 * makes);
  }
  auto t1 = BenchClock::now();
  WIRE_TRY(x.c.call(delgroup_msg(x.c.next_seq(), kBatchGroup)));
  auto t2 = BenchClock::now();
  out.samples["create"].push_back(seconds_between(t0, t1));
  out.samples["delete"].push_back(seconds_between(t1, t2));
  out.devices["create"] = out.devices["delete"] = x.sub() ? 2 * makes : makes;
  out.traffic["create"] = {.pipelined = makes};
  out.traffic["delete"] = {.one_at_a_time = 1};
  if (!x.c.is_kernel() && !x.c.uses_rings() && !x.sub()) WIRE_TRY(create_batch(x, makes, out));
  if (x.sub()) out.notes.push_back("veth pairs stand in for dummies (n/2 pairs, n devices)");
  return out;
}

Result<RunOutput> seed2_vlan(Ctx& x) {
  RunOutput out;
  WIRE_TRY(wake_server(x));
  auto t0 = BenchClock::now();
  auto lower = make_lower(x, "dummy0");
  if (!lower) return fail(lower.error());
  std::vector<Bytes> msgs;
  for (int i = 1; i <= x.p.n; ++i)
    msgs.push_back(x.vlan("dummy0." + std::to_string(i), *lower, i, {.up = true}));
  WIRE_TRY(x.c.call_many(msgs, kWindow, kPerDatagram));
  auto t1 = BenchClock::now();
  auto t = timed_call(x.c, dellink_msg(x.c.next_seq(), "dummy0"));
  if (!t) return fail(t.error());
  out.samples["create"].push_back(seconds_between(t0, t1));
  out.samples["delete"].push_back(*t);
  out.devices["create"] = out.devices["delete"] = x.p.n + 1;
  out.traffic["create"] = {.one_at_a_time = x.sub() ? 2 : 1, .pipelined = x.p.n};
  out.traffic["delete"] = {.one_at_a_time = 1};
  if (x.sub()) out.notes.push_back("macvlans on a veth stand in for vlans on a dummy");
  return out;
}

// Both devices report carrier (IFF_LOWER_UP, operstate UP) in notifications.
Result<void> wait_carrier(NlClient& mon, int a, int b, int timeout_ms) {
  std::map<int, bool> up{{a, false}, {b, false}};
  auto deadline = BenchClock::now() + std::chrono::milliseconds(timeout_ms);
  while (!(up[a] && up[b])) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - BenchClock::now());
    if (left.count() < 0)
      return fail(ETIMEDOUT, "no carrier notification within {} ms", timeout_ms);
    auto d = mon.recv(int(left.count()) + 1);
    if (!d) return fail(d.error());
    if (!*d) continue;
    auto msgs = wire::split_messages(**d);
    if (!msgs) return fail(msgs.error());
    for (const auto& m : *msgs) {
      if (m.hdr.nlmsg_type != RTM_NEWLINK) continue;
      auto l = wire::decode_link_message(m);
      if (!l || !up.count(l->ifindex)) continue;
      bool oper = l->operstate ? *l->operstate == IF_OPER_UP : (l->flags & IFF_RUNNING) != 0;
      up[l->ifindex] = (l->flags & IFF_LOWER_UP) && oper;
    }
  }
  return ok();
}

Result<RunOutput> seed3(Ctx& x) {
  RunOutput out;
  auto mon = x.env.connect({RTNLGRP_LINK});
  if (!mon) return fail(mon.error().code, "monitor: {}", mon.error().message);
  for (int i = 0; i < x.p.n; ++i) {
    LinkOpts o;
    o.ifindex = x.alloc(2);
    o.peer_ifindex = o.ifindex + 1;
    int a = o.ifindex, b = o.peer_ifindex;
    WIRE_TRY(x.c.call(newlink_msg(x.c.next_seq(), veth_request("veth0", "veth1", o))));
    std::unique_ptr<FrameProbe> probe;
    if (x.env.frame_probe) {
      auto pr = x.env.frame_probe(a, b);
      if (!pr) return fail(pr.error());
      probe = std::move(*pr);
    }
    WIRE_TRY(x.c.call(setlink_msg(x.c.next_seq(), up_request(a))));
    (*mon)->drain();
    auto t0 = BenchClock::now();
    WIRE_TRY(x.c.call(setlink_msg(x.c.next_seq(), up_request(b))));
    WIRE_TRY(wait_carrier(**mon, a, b, 5000));
    auto t1 = BenchClock::now();
    out.samples["carrier"].push_back(seconds_between(t0, t1));
    if (probe) {
      WIRE_TRY(probe->send());
      WIRE_TRY(probe->wait_received(2000));
      out.samples["frame"].push_back(seconds_between(t0, BenchClock::now()));
    }
    probe.reset();
    WIRE_TRY(x.c.call(dellink_msg(x.c.next_seq(), "veth0")));
    x.tick(i, x.p.n);
  }
  out.devices["carrier"] = out.devices["frame"] = 2;
  if (!x.env.frame_probe) out.notes.push_back("frame crossing: " + x.env.no_frame_why);
  return out;
}

Result<RunOutput> seed4(Ctx& x) {
  // The requests are encoded before the clock starts, as in the batch scenarios: what is
  // timed is the servers' answers, one request at a time.
  std::vector<Bytes> adds, dels;
  for (int i = 0; i < x.p.n; ++i) {
    LinkOpts o;
    o.ifindex = x.alloc(2);
    o.peer_ifindex = o.ifindex + 1;
    std::string n = "veth" + std::to_string(i);
    adds.push_back(newlink_msg(x.c.next_seq(), veth_request(n + "a", n + "b", o)));
  }
  for (int i = 0; i < x.p.n; ++i)
    dels.push_back(dellink_msg(x.c.next_seq(), "veth" + std::to_string(i) + "a"));
  RunOutput out;
  WIRE_TRY(wake_server(x));
  auto t0 = BenchClock::now();
  for (int i = 0; i < x.p.n; ++i) {
    WIRE_TRY(x.c.call(adds[std::size_t(i)]));
    x.tick(i, 2 * x.p.n);
  }
  auto t1 = BenchClock::now();
  for (int i = 0; i < x.p.n; ++i) {
    WIRE_TRY(x.c.call(dels[std::size_t(i)]));
    x.tick(x.p.n + i, 2 * x.p.n);
  }
  auto t2 = BenchClock::now();
  out.samples["create"].push_back(seconds_between(t0, t1));
  out.samples["delete"].push_back(seconds_between(t1, t2));
  out.devices["create"] = out.devices["delete"] = 2 * x.p.n;
  out.traffic["create"] = out.traffic["delete"] = {.one_at_a_time = x.p.n};
  return out;
}

}  // namespace

Result<RunOutput> run_wire(const ScenarioSpec& s, const RunParams& p, WireEnv& env) {
  // The client whose answers are timed polls for them up to 1 ms (ifcored's answers
  // take up to a few hundred µs: a batch delete, a deletion with its grace period) rather
  // than ifcored's usual 50 µs: a client that fell asleep while the daemon worked added its
  // own wakeup, 100-150 µs here, to every answer that took longer than its window (the
  // 100-device sweep's group delete takes 40-80 µs). The kernel's answer is queued before
  // sendto(2) returns: its client never waits. Monitors and the other connections keep the
  // usual window.
  constexpr auto kAnswerPoll = std::chrono::milliseconds(1);
  auto c = env.connect({});
  if (!c) return fail(c.error());
  if ((*c)->busy_poll().count() > 0) (*c)->set_busy_poll(kAnswerPoll);
  Ctx x{p, env, **c};
  if (s.name == "seed0-macvlan-ipv6-delete") return seed0(x);
  if (s.name == "seed1-ipv6-100") return seed1(x);
  if (s.name == "seed2-dummy-10k" || s.name == "scale-sweep") return batch_of_dummies(x);
  if (s.name == "seed2-vlan-1000") return seed2_vlan(x);
  if (s.name == "seed3-veth-carrier") return seed3(x);
  if (s.name == "seed4-veth-100") return seed4(x);
  return fail(EOPNOTSUPP, "scenario {} has no wire implementation", s.name);
}

}  // namespace ifcore::bench
