// cli/probe_cmd.cc — `ifc probe FROM TO [count N] [interval MS] [timeout MS]`: frames sent
// from one device to another through the engine's frame path, how many arrived and how long
// the first took (ifcore's probe message, rtnl/wire/probe_msg.h; the kernel has no such thing).
#include "cli/commands.h"

#include "rtnl/wire/probe_msg.h"

namespace ifcore::cli {

namespace {

std::string plural(std::uint64_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// The number after a keyword, in [lo, hi].
Result<std::uint32_t> number(Args& a, const char* what, std::uint32_t lo, std::uint32_t hi) {
  auto w = a.value();
  if (!w) return fail(w.error());
  auto v = parse_u32(*w, what);
  if (!v) return fail(v.error());
  if (*v < lo || *v > hi) return invarg(fmt::format("invalid {}", what), *w);
  return *v;
}

}  // namespace

Result<void> do_probe(Ctx& c, Args& a) {
  if (std::string_view(c.client->transport().target()) == "kernel")
    return die(2, "probe: not supported by this target");
  if (a.left() < 2) return incomplete();
  std::string from = a.take(), to = a.take();
  rtnl::ProbeRequest req;
  req.count = 10;
  req.interval_us = 1000;
  req.timeout_ms = 3000;
  while (!a.done()) {
    std::string w = a.take();
    Result<std::uint32_t> v = 0;
    if (matches(w, "count")) {
      v = number(a, "count", 1, rtnl::kProbeMaxCount);
      if (v) req.count = *v;
    } else if (matches(w, "interval")) {
      v = number(a, "interval", 0, rtnl::kProbeMaxIntervalUs / 1000);
      if (v) req.interval_us = *v * 1000;
    } else if (matches(w, "timeout")) {
      v = number(a, "timeout", 0, rtnl::kProbeMaxTimeoutMs);
      if (v) req.timeout_ms = *v;
    } else {
      return die(255, "Argument \"{}\" is unknown, try \"ifc help\".", w);
    }
    if (!v) return fail(v.error());
  }
  auto ifrom = dev_index(c, from);
  if (!ifrom) return fail(ifrom.error());
  auto ito = dev_index(c, to);
  if (!ito) return fail(ito.error());
  req.from.ifindex = static_cast<std::uint32_t>(*ifrom);
  req.to.ifindex = static_cast<std::uint32_t>(*ito);

  wire::MessageBuilder b;
  if (auto e = rtnl::encode_probe_request(b, c.client->next_seq(), req); !e)
    return die(2, "{}", e.error().message);
  std::optional<rtnl::ProbeReply> rep;
  Result<void> bad = ok();
  IFCORE_TRY(c.client->talk(b, [&](const wire::Message& m) {
    auto r = rtnl::decode_probe_reply(m);
    if (r)
      rep = *r;
    else
      bad = die(2, "malformed probe reply: {}", r.error().message);
  }));
  IFCORE_TRY(bad);
  if (!rep) return die(2, "probe: no reply");

  Out& o = *c.out;
  o.open_object();
  o.kv("from", from, fmt::format("probe {} -> ", from));
  o.kv("to", to, fmt::format("{}: ", to));
  o.jkv("attempts", rep->attempts);
  o.kv("sent", rep->sent, fmt::format("{} sent, ", rep->sent));
  o.kv("received", rep->received, fmt::format("{} received, ", rep->received));
  if (rep->first_arrival_us)
    o.kv("first_arrival_us", *rep->first_arrival_us,
         fmt::format("first arrival after {} us", *rep->first_arrival_us));
  else
    o.text("nothing arrived");
  o.text(fmt::format(" ({})\n", plural(rep->attempts, "attempt")));
  o.close();
  return ok();
}

}  // namespace ifcore::cli
