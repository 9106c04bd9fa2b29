// rtnl/wire/stats_msg.cc — encode and decode ifcore's statistics message.
#include "rtnl/wire/stats_msg.h"

#include <sys/socket.h>

#include <linux/rtnetlink.h>

#include <cerrno>
#include <chrono>

#include "rtnl/wire/ifcore_msg.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl {

namespace {

constexpr std::string_view kNames[IFCORE_STATS_MAX + 1] = {
    "",
    "devices_registered",
    "devices_unregistered",
    "devices_released",
    "devices_leaked",
    "leak_reports",
    "batches",
    "notifier_passes",
    "notifier_calls",
    "grace_periods",
    "barriers",
    "ref_waits",
    "rebroadcasts",
    "notifier_time_ns",
    "grace_time_ns",
    "barrier_time_ns",
    "ref_wait_time_ns",
    "unlist_time_ns",
    "free_time_ns",
    "pending_finalization",
};

std::uint64_t ns(Duration d) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

}  // namespace

std::vector<StatsEntry> stats_entries(const Stats& s, std::uint64_t pending) {
  const std::uint64_t values[IFCORE_STATS_MAX + 1] = {
      0,
      s.devices_registered,
      s.devices_unregistered,
      s.devices_released,
      s.devices_leaked,
      s.leak_reports,
      s.batches,
      s.notifier_passes,
      s.notifier_calls,
      s.grace_periods,
      s.barriers,
      s.ref_waits,
      s.rebroadcasts,
      ns(s.notifier_time),
      ns(s.grace_time),
      ns(s.barrier_time),
      ns(s.ref_wait_time),
      ns(s.unlist_time),
      ns(s.free_time),
      pending,
  };
  std::vector<StatsEntry> out;
  for (std::uint16_t t = 1; t <= IFCORE_STATS_MAX; ++t) out.push_back({kNames[t], values[t]});
  return out;
}

Result<void> encode_stats_request(wire::MessageBuilder& b, std::uint32_t seq,
                                  std::uint16_t extra_flags) {
  b.begin({IFCORE_NLMSG_GETSTATS, static_cast<std::uint16_t>(NLM_F_REQUEST | extra_flags), seq, 0});
  b.put_struct(rtgenmsg{AF_UNSPEC});
  return end_message(b);
}

Result<void> encode_stats_reply(wire::MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                const Stats& s, std::uint64_t pending) {
  b.begin({IFCORE_NLMSG_GETSTATS, 0, seq, portid});
  b.put_struct(rtgenmsg{AF_UNSPEC});
  std::uint16_t type = 1;
  for (const StatsEntry& e : stats_entries(s, pending)) b.put_u64(type++, e.value);
  return end_message(b);
}

Result<std::vector<StatsEntry>> decode_stats_reply(const wire::Message& m) {
  auto attrs = ifcore_msg_attrs(m, IFCORE_NLMSG_GETSTATS, "statistics");
  if (!attrs) return fail(attrs.error());
  std::vector<StatsEntry> out;
  for (const wire::RawAttr& a : *attrs) {
    if (a.type == 0 || a.type > IFCORE_STATS_MAX) continue;
    auto v = a.u64();
    if (!v) return fail(v.error());
    out.push_back({kNames[a.type], *v});
  }
  return out;
}

}  // namespace ifcore::rtnl
