// rtnl/probe_handler.cc — IFCORE_NLMSG_PROBE (probe_msg.h): frames from one device to
// another through the engine's frame path (frame.h probe()), answered with how many
// arrived and when the first did. Sends frames, so it needs a peer that may write.
//
// Lock order: the devices are resolved under the control lock, which is released before
// probe() runs (it takes the lock briefly itself and sleeps between attempts).
#include <cerrno>
#include <chrono>
#include <string>

#include "ifcore/engine.h"
#include "ifcore/frame.h"
#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/wire/probe_msg.h"

namespace ifcore::rtnl {

namespace {

Result<void> check_limits(const ProbeRequest& req) {
  if (req.count == 0 || req.count > kProbeMaxCount)
    return fail(EINVAL, "probe count must be between 1 and {}", kProbeMaxCount);
  if (req.interval_us > kProbeMaxIntervalUs)
    return fail(EINVAL, "probe interval must be at most {} us", kProbeMaxIntervalUs);
  if (req.timeout_ms > kProbeMaxTimeoutMs)
    return fail(EINVAL, "probe timeout must be at most {} ms", kProbeMaxTimeoutMs);
  return ok();
}

// The name of the device `e` names in `ns`. Context: control lock.
Result<std::string> resolve(Control& ctl, Namespace& ns, const ProbeEnd& e) {
  Device* d = e.ifindex > 0 ? ctl.find(ns, static_cast<int>(e.ifindex)) : ctl.find(ns, e.name);
  if (!d) {
    if (e.ifindex > 0) return fail(ENODEV, "Cannot find device with ifindex {}", e.ifindex);
    return fail(ENODEV, "Cannot find device \"{}\"", e.name);
  }
  return d->name();
}

}  // namespace

Result<void> handle_probe(Request& r) {
  if (!r.s.options().may_write) return fail(EPERM);  // it sends frames
  auto req = decode_probe_request(r.m);
  if (!req) return fail(req.error());
  IFCORE_TRY(check_limits(*req));
  Engine& engine = r.s.hub().engine();
  std::string ns_name, from, to;
  {
    Control ctl = engine.control();
    auto ns = session_ns(ctl, r.s);
    if (!ns) return fail(ns.error());
    auto a = resolve(ctl, **ns, req->from);
    if (!a) return fail(a.error());
    auto b = resolve(ctl, **ns, req->to);
    if (!b) return fail(b.error());
    ns_name = (*ns)->name();
    from = std::move(*a);
    to = std::move(*b);
  }
  // Without the control lock: the probe sleeps between attempts.
  ProbeOptions o;
  o.count = req->count;
  o.interval = std::chrono::microseconds(req->interval_us);
  o.timeout = std::chrono::milliseconds(req->timeout_ms);
  auto res = probe(engine, ns_name, from, to, o);
  if (!res) return fail(res.error());
  ProbeReply rep;
  rep.attempts = res->attempts;
  rep.sent = res->sent;
  rep.received = res->received;
  if (res->first_arrival)
    rep.first_arrival_us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(*res->first_arrival).count());
  return emit(r.out, [&](wire::MessageBuilder& b) {
    return encode_probe_reply(b, r.seq(), r.port(), rep);
  });
}

}  // namespace ifcore::rtnl
