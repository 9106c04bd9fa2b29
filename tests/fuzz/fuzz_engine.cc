// tests/fuzz/fuzz_engine.cc — whole request sequences through the rtnetlink handlers of an
// embedded engine. One input is a list of records; each sends a datagram on one of several
// sessions (three namespaces, one of them also read-only), or sets a socket option, joins
// or leaves a multicast group, or moves the engine's clock. So one input can create,
// change and delete devices, addresses, routes, neighbours, rules and nexthops, and move
// devices between namespaces.
//
//   record := op:u8 len:u16le payload[len]
//   op & 0x0f: session (modulo kSessions); op >> 4: kDatagram, kOption (payload u32 name,
//   u32 value), kJoin / kLeave (u32 group), kClock (u32 milliseconds)
//
// Invariants checked after each record, where cheap:
//  - every reply and notification datagram splits into well-formed messages;
//  - a lone request (one message, not a GET) whose only reply is an error left every
//    namespace's dumps byte for byte as they were (Linux: bad input changes nothing);
//  - at the end of an input, destroying every namespace unregisters every device;
// and at exit the engine tears down with every device released and no reference left (the
// sanitizers' leak check covers the rest).
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/fib_rules.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ifcore/ifcore.h"
#include "ifcore/rtnl.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::fuzz {
namespace {

using Bytes = std::vector<std::uint8_t>;

enum Op : std::uint8_t { kDatagram = 0, kOption = 1, kJoin = 2, kLeave = 3, kClock = 4 };

// Sessions: "default", "a", "b", and a read-only one on "default" (changes get EPERM).
constexpr const char* kNamespaces[] = {"default", "a", "b"};
constexpr std::size_t kSessions = 4;
// Keeps an input's work bounded: a dump of thousands of devices per record is slow, not
// interesting.
constexpr std::size_t kMaxRecords = 64;

[[noreturn]] void violated(const char* what, const Bytes& request) {
  std::fprintf(stderr, "fuzz_engine: invariant violated: %s (request of %zu bytes:", what,
               request.size());
  for (std::size_t i = 0; i < request.size() && i < 256; ++i)
    std::fprintf(stderr, " %02x", request[i]);
  std::fprintf(stderr, ")\n");
  std::abort();
}

void check_datagram(const rtnl::Datagram& d, const Bytes& request) {
  if (d.empty()) violated("empty reply datagram", request);
  auto msgs = wire::split_messages(d);
  if (!msgs) violated("malformed reply datagram", request);
}

// One dump request of `type` with a zeroed family header of `len` bytes.
Bytes dump_request(std::uint16_t type, std::size_t len) {
  Bytes b(NLMSG_ALIGN(NLMSG_HDRLEN + len));
  nlmsghdr h{};
  h.nlmsg_len = static_cast<std::uint32_t>(NLMSG_HDRLEN + len);
  h.nlmsg_type = type;
  h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  h.nlmsg_seq = 1;
  std::memcpy(b.data(), &h, sizeof h);
  return b;
}

const std::vector<Bytes>& dump_requests() {
  static const std::vector<Bytes> all = {
      dump_request(RTM_GETLINK, sizeof(ifinfomsg)),
      dump_request(RTM_GETADDR, sizeof(ifaddrmsg)),
      dump_request(RTM_GETROUTE, sizeof(rtmsg)),
      dump_request(RTM_GETNEIGH, sizeof(ndmsg)),
      dump_request(RTM_GETRULE, sizeof(fib_rule_hdr)),
      dump_request(RTM_GETNEXTHOP, sizeof(nhmsg)),
      dump_request(RTM_GETNETCONF, sizeof(netconfmsg)),
      dump_request(RTM_GETNSID, sizeof(rtgenmsg)),
  };
  return all;
}

bool changes_state(const wire::Message& m) {
  std::uint16_t t = m.hdr.nlmsg_type;
  if (t < RTM_BASE) return false;                  // NLMSG_NOOP, NLMSG_ERROR, NLMSG_DONE...
  if (t <= RTM_MAX && (t & 3) == 2) return false;  // RTM_GET*
  return true;
}

std::uint32_t u32_at(std::span<const std::uint8_t> p, std::size_t off) {
  std::uint32_t v = 0;
  if (p.size() >= off + 4) std::memcpy(&v, p.data() + off, 4);
  return v;
}

// The engine outlives the inputs: making one costs two RCU barriers (~20 ms) at its end,
// which would cap the fuzzer at a few dozen inputs a second. Each input gets fresh
// namespaces (the previous ones destroyed, with every device in them); the engine itself is
// torn down at exit, where the leak checks of teardown run.
class Shared {
 public:
  Shared() {
    EngineConfig cfg;
    cfg.time = clock;
    cfg.leak_report_after = std::chrono::seconds(2);
    cfg.log = [](LogLevel level, std::string_view text) {
      if (level == LogLevel::Error) {
        std::fprintf(stderr, "fuzz_engine: engine error: %.*s\n", static_cast<int>(text.size()),
                     text.data());
        std::abort();
      }
    };
    engine = make_engine(std::move(cfg));
  }
  ~Shared() {
    {
      auto ctl = engine->control();
      std::vector<Namespace*> all = ctl.namespaces();
      for (auto it = all.rbegin(); it != all.rend(); ++it) (void)ctl.destroy_namespace(**it);
    }
    if (!engine->drain(std::chrono::seconds(5)))
      violated("references still held after every namespace was destroyed", {});
    Stats s = engine->stats();
    if (s.devices_released != s.devices_registered)
      violated("devices not released at teardown", {});
    engine.reset();
  }
  std::shared_ptr<FakeTime> clock = std::make_shared<FakeTime>();
  std::unique_ptr<Engine> engine;
};

Shared& shared() {
  static Shared s;
  return s;
}

class Run {
 public:
  Run() : engine_(*shared().engine), clock_(shared().clock) {
    {
      auto ctl = engine_.control();
      for (const char* ns : kNamespaces)
        if (!ctl.find_namespace(ns)) (void)ctl.create_namespace(ns);
    }
    server_ = std::make_unique<rtnl::Server>(engine_);
    for (std::size_t i = 0; i < kSessions; ++i) {
      rtnl::SessionOptions o;
      o.ns = kNamespaces[i % 3];
      o.may_write = i < 3;
      o.port_id = static_cast<std::uint32_t>(100 + i);
      o.max_queued = 64;
      sessions_.push_back(open(o));
    }
    for (const char* ns : kNamespaces) {
      rtnl::SessionOptions o;
      o.ns = ns;
      o.may_write = false;
      observers_.push_back(open(o));
    }
  }

  // Every namespace goes, and with it every device, address, route... the input made:
  // the next input starts from an engine as new.
  ~Run() {
    sessions_.clear();
    observers_.clear();
    server_.reset();
    auto ctl = engine_.control();
    std::vector<Namespace*> all = ctl.namespaces();
    for (auto it = all.rbegin(); it != all.rend(); ++it)
      if (auto r = ctl.destroy_namespace(**it); !r)
        violated("a namespace could not be destroyed", {});
    Stats s = engine_.stats();
    if (s.devices_registered != s.devices_unregistered)
      violated("devices left registered after every namespace was destroyed", {});
  }

  void record(std::uint8_t op, std::span<const std::uint8_t> payload) {
    rtnl::Session& s = *sessions_[(op & 0x0f) % kSessions];
    switch (op >> 4) {
      case kDatagram:
        datagram(s, payload);
        break;
      case kOption:
        s.set_option(static_cast<int>(u32_at(payload, 0) % 16),
                     static_cast<int>(u32_at(payload, 4)));
        break;
      case kJoin:
        s.add_membership(u32_at(payload, 0));
        break;
      case kLeave:
        s.drop_membership(u32_at(payload, 0));
        break;
      case kClock:
        clock_->advance(std::chrono::milliseconds(u32_at(payload, 0) % 100000));
        break;
      default:
        break;
    }
    drain();
  }

 private:
  std::unique_ptr<rtnl::Session> open(const rtnl::SessionOptions& o) {
    auto s = server_->open_session(o);
    if (!s) violated("a session could not be opened", {});
    return std::move(*s);
  }

  Bytes snapshot() {
    Bytes all;
    for (auto& o : observers_)
      for (const Bytes& req : dump_requests())
        o->handle(req, [&](rtnl::Datagram&& d) { all.insert(all.end(), d.begin(), d.end()); });
    return all;
  }

  void datagram(rtnl::Session& s, std::span<const std::uint8_t> payload) {
    Bytes request(payload.begin(), payload.end());
    auto lone = wire::only_message(request);
    const bool watch = lone && changes_state(*lone);
    Bytes before;
    if (watch) before = snapshot();
    std::vector<rtnl::Datagram> replies;
    s.handle(request, [&](rtnl::Datagram&& d) {
      check_datagram(d, request);
      replies.push_back(std::move(d));
    });
    if (!watch || replies.size() != 1) return;
    auto msgs = wire::split_messages(replies[0]);
    if (!msgs || msgs->size() != 1 || (*msgs)[0].hdr.nlmsg_type != NLMSG_ERROR) return;
    auto e = wire::decode_error((*msgs)[0]);
    if (!e || e->error == 0) return;
    Bytes after = snapshot();
    if (after != before) {
      std::size_t at = 0;
      while (at < before.size() && at < after.size() && before[at] == after[at]) ++at;
      std::fprintf(stderr, "fuzz_engine: the dumps differ from byte %zu of %zu/%zu:\n", at,
                   before.size(), after.size());
      for (const Bytes* b : {&before, &after}) {
        for (std::size_t i = at >= 64 ? at - 64 : 0; i < b->size() && i < at + 64; ++i)
          std::fprintf(stderr, "%s%02x", i == at ? "|" : " ", (*b)[i]);
        std::fprintf(stderr, "\n");
      }
      violated("a request that failed changed the engine's state", request);
    }
  }

  void drain() {
    for (auto& s : sessions_) {
      rtnl::Datagram d;
      while (s->pop_notification(d)) check_datagram(d, {});
      (void)s->take_overflow();
    }
  }

  Engine& engine_;
  std::shared_ptr<FakeTime> clock_;
  std::unique_ptr<rtnl::Server> server_;
  std::vector<std::unique_ptr<rtnl::Session>> sessions_;
  std::vector<std::unique_ptr<rtnl::Session>> observers_;
};

}  // namespace
}  // namespace ifcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ifcore::fuzz::Run run;
  std::size_t off = 0, records = 0;
  while (off + 3 <= size && records++ < ifcore::fuzz::kMaxRecords) {
    std::uint8_t op = data[off];
    std::size_t len = data[off + 1] | std::size_t{data[off + 2]} << 8;
    off += 3;
    len = std::min(len, size - off);
    run.record(op, {data + off, len});
    off += len;
  }
  return 0;
}
