// The probe behind `ifc probe FROM TO [count N]`: frames from one device to another, how
// many arrived and how long the first took (seed 003's "pings only flow after a second").
//
// Lock order: takes the control lock briefly to find the devices and attach/detach the
// queue; sends and reads without it.
#include <cerrno>
#include <cstring>
#include <thread>

#include "ifcore/engine.h"
#include "ifcore/frame.h"

namespace ifcore {

namespace {

constexpr std::uint16_t kProbeType = 0x88b5;  // IEEE 802 local experimental ethertype
constexpr std::uint8_t kMagic[4] = {'i', 'f', 'p', 'r'};

bool is_probe(const Frame& f) {
  return f.bytes.size() >= 18 && frame_ethertype(f) == kProbeType &&
         std::memcmp(f.bytes.data() + 14, kMagic, 4) == 0;
}

}  // namespace

Result<ProbeResult> probe(Engine& engine, std::string_view ns_name, std::string_view from,
                          std::string_view to, const ProbeOptions& opts) {
  Ref src, dst;
  std::shared_ptr<RxQueue> queue;
  {
    auto ctl = engine.control();
    Namespace* ns = ctl.find_namespace(ns_name);
    if (!ns) return fail(ENOENT, "namespace \"{}\" does not exist", ns_name);
    Device* a = ctl.find(*ns, from);
    if (!a) return fail(ENODEV, "device \"{}\" does not exist", from);
    Device* b = ctl.find(*ns, to);
    if (!b) return fail(ENODEV, "device \"{}\" does not exist", to);
    if (const RxHooks* h = b->rx_hooks_rcu(); h && h->queue)
      return fail(EBUSY, "device \"{}\" already has a receive queue", to);
    auto q = open_rx_queue(ctl, *b, 1024);
    if (!q) return fail(q.error());
    queue = *q;
    src = Ref(*a, "probe");
    dst = Ref(*b, "probe");
  }
  std::vector<std::uint8_t> bytes(std::max<std::size_t>(opts.size, 60), 0);
  auto put = [&](std::size_t off, const HwAddr& a) {
    auto b = a.bytes();
    std::memcpy(bytes.data() + off, b.data(), std::min<std::size_t>(b.size(), 6));
  };
  put(0, dst->address());
  put(6, src->address());
  bytes[12] = kProbeType >> 8;
  bytes[13] = kProbeType & 0xff;
  std::memcpy(bytes.data() + 14, kMagic, 4);

  ProbeResult r;
  const TimePoint t0 = Clock::now();
  while (r.received < opts.count) {
    if (opts.max_attempts && r.attempts >= opts.max_attempts) break;
    if (r.attempts && Clock::now() - t0 >= opts.timeout) break;
    ++r.attempts;
    if (transmit(*src, bytes)) ++r.sent;
    while (auto f = queue->pop()) {
      if (!is_probe(*f)) continue;
      if (!r.first_arrival) r.first_arrival = Clock::now() - t0;
      ++r.received;
    }
    if (r.received < opts.count && opts.interval > Duration::zero())
      std::this_thread::sleep_for(opts.interval);
  }
  {
    auto ctl = engine.control();
    if (dst->state() == RegState::Registered) close_rx_queue(ctl, *dst);
  }
  queue->clear();
  return r;
}

}  // namespace ifcore
