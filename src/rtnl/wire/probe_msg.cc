// rtnl/wire/probe_msg.cc — encode and decode ifcore's probe message.
#include "rtnl/wire/probe_msg.h"

#include <net/if.h>
#include <sys/socket.h>

#include <linux/rtnetlink.h>

#include <cerrno>

#include "rtnl/wire/ifcore_msg.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl {

namespace {

void put_end(wire::MessageBuilder& b, const ProbeEnd& e, std::uint16_t by_index,
             std::uint16_t by_name) {
  if (e.ifindex > 0)
    b.put_u32(by_index, e.ifindex);
  else if (!e.name.empty())
    b.put_string(by_name, e.name);
}

}  // namespace

Result<void> encode_probe_request(wire::MessageBuilder& b, std::uint32_t seq,
                                  const ProbeRequest& req, std::uint16_t extra_flags) {
  b.begin({IFCORE_NLMSG_PROBE, static_cast<std::uint16_t>(NLM_F_REQUEST | extra_flags), seq, 0});
  b.put_struct(rtgenmsg{AF_UNSPEC});
  put_end(b, req.from, IFCORE_PROBE_FROM_IFINDEX, IFCORE_PROBE_FROM_NAME);
  put_end(b, req.to, IFCORE_PROBE_TO_IFINDEX, IFCORE_PROBE_TO_NAME);
  b.put_u32(IFCORE_PROBE_COUNT, req.count);
  b.put_u32(IFCORE_PROBE_INTERVAL_US, req.interval_us);
  b.put_u32(IFCORE_PROBE_TIMEOUT_MS, req.timeout_ms);
  return end_message(b);
}

Result<ProbeRequest> decode_probe_request(const wire::Message& m) {
  auto attrs = ifcore_msg_attrs(m, IFCORE_NLMSG_PROBE, "probe");
  if (!attrs) return fail(attrs.error());
  ProbeRequest req;
  for (const wire::RawAttr& a : *attrs) {
    switch (a.type) {
      case IFCORE_PROBE_FROM_IFINDEX:
      case IFCORE_PROBE_TO_IFINDEX:
      case IFCORE_PROBE_COUNT:
      case IFCORE_PROBE_INTERVAL_US:
      case IFCORE_PROBE_TIMEOUT_MS: {
        auto v = a.u32();
        if (!v) return fail(v.error());
        if (a.type == IFCORE_PROBE_FROM_IFINDEX) req.from.ifindex = *v;
        if (a.type == IFCORE_PROBE_TO_IFINDEX) req.to.ifindex = *v;
        if (a.type == IFCORE_PROBE_COUNT) req.count = *v;
        if (a.type == IFCORE_PROBE_INTERVAL_US) req.interval_us = *v;
        if (a.type == IFCORE_PROBE_TIMEOUT_MS) req.timeout_ms = *v;
        break;
      }
      case IFCORE_PROBE_FROM_NAME:
      case IFCORE_PROBE_TO_NAME: {
        auto s = a.string(IFNAMSIZ - 1);
        if (!s) return fail(s.error());
        (a.type == IFCORE_PROBE_FROM_NAME ? req.from : req.to).name = std::move(*s);
        break;
      }
      default:
        break;  // newer clients may add attributes
    }
  }
  if (!req.from.given() || !req.to.given())
    return fail(EINVAL, "probe needs a device to send from and one to receive at");
  return req;
}

Result<void> encode_probe_reply(wire::MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                const ProbeReply& r) {
  b.begin({IFCORE_NLMSG_PROBE, 0, seq, portid});
  b.put_struct(rtgenmsg{AF_UNSPEC});
  b.put_u64(IFCORE_PROBE_ATTEMPTS, r.attempts);
  b.put_u64(IFCORE_PROBE_SENT, r.sent);
  b.put_u64(IFCORE_PROBE_RECEIVED, r.received);
  if (r.first_arrival_us) b.put_u64(IFCORE_PROBE_FIRST_ARRIVAL_US, *r.first_arrival_us);
  return end_message(b);
}

Result<ProbeReply> decode_probe_reply(const wire::Message& m) {
  auto attrs = ifcore_msg_attrs(m, IFCORE_NLMSG_PROBE, "probe");
  if (!attrs) return fail(attrs.error());
  ProbeReply r;
  for (const wire::RawAttr& a : *attrs) {
    if (a.type < IFCORE_PROBE_ATTEMPTS || a.type > IFCORE_PROBE_MAX) continue;
    auto v = a.u64();
    if (!v) return fail(v.error());
    switch (a.type) {
      case IFCORE_PROBE_ATTEMPTS:
        r.attempts = *v;
        break;
      case IFCORE_PROBE_SENT:
        r.sent = *v;
        break;
      case IFCORE_PROBE_RECEIVED:
        r.received = *v;
        break;
      default:
        r.first_arrival_us = *v;
        break;
    }
  }
  return r;
}

}  // namespace ifcore::rtnl
