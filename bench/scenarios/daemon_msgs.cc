// bench/scenarios/daemon_msgs.cc — settings and frames for the daemon path, through ifcore's
// own messages (daemon_msgs.h).
#include "bench/scenarios/daemon_msgs.h"

#include <linux/netlink.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

#include "rtnl/wire/netlink.h"
#include "rtnl/wire/probe_msg.h"
#include "rtnl/wire/sysctl_msg.h"

namespace ifcore::bench {
namespace {

constexpr std::uint32_t kProbeTimeoutMs = 2000;

// Waits up to `timeout_ms` for the answer to `seq`: a message of `type`, read with `decode`,
// or the NLMSG_ERROR that refused the request. Errors: that error (with `what` and the
// extack text), the decoder's, ETIMEDOUT.
template <class Decode>
auto await_reply(NlClient& c, std::uint32_t seq, std::uint16_t type, int timeout_ms,
                 std::string_view what, Decode decode)
    -> decltype(decode(std::declval<const wire::Message&>())) {
  auto deadline = BenchClock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - BenchClock::now())
            .count());
    if (left <= 0) return fail(ETIMEDOUT, "{}: no answer from ifcored", what);
    auto d = c.recv(left);
    if (!d) return fail(d.error());
    if (!*d) continue;
    auto msgs = wire::split_messages(**d);
    if (!msgs) return fail(msgs.error());
    for (const wire::Message& m : *msgs) {
      if (m.hdr.nlmsg_seq != seq) continue;
      if (m.hdr.nlmsg_type == type) return decode(m);
      if (m.hdr.nlmsg_type == NLMSG_ERROR) {
        auto e = wire::decode_error(m);
        if (!e) return fail(e.error());
        return fail(e->error ? e->error : EIO, "{}: {}", what, e->message);
      }
    }
  }
}

class DaemonProbe final : public FrameProbe {
 public:
  DaemonProbe(std::unique_ptr<NlClient> c, int tx, int rx) : c_(std::move(c)), tx_(tx), rx_(rx) {}

  Result<void> send() override {
    rtnl::ProbeRequest req;
    req.from.ifindex = static_cast<std::uint32_t>(tx_);
    req.to.ifindex = static_cast<std::uint32_t>(rx_);
    req.count = 1;
    req.interval_us = 50;
    req.timeout_ms = kProbeTimeoutMs;
    wire::MessageBuilder b;
    seq_ = c_->next_seq();
    if (auto e = rtnl::encode_probe_request(b, seq_, req, NLM_F_ACK); !e) return fail(e.error());
    return c_->send(b.bytes());
  }

  Result<void> wait_received(int timeout_ms) override {
    // The daemon answers once a frame arrived or its own timeout passed; the ACK that
    // follows is read next time.
    auto rep = await_reply(*c_, seq_, rtnl::IFCORE_NLMSG_PROBE, timeout_ms + kProbeTimeoutMs,
                           "probe", rtnl::decode_probe_reply);
    if (!rep) return fail(rep.error());
    if (rep->received == 0)
      return fail(ETIMEDOUT, "probe: nothing arrived within {} ms", kProbeTimeoutMs);
    return ok();
  }

 private:
  std::unique_ptr<NlClient> c_;
  int tx_, rx_;
  std::uint32_t seq_ = 0;
};

}  // namespace

Bytes sysctl_write_msg(std::uint32_t seq, const std::string& name, const std::string& value) {
  wire::MessageBuilder b;
  (void)rtnl::encode_sysctl_request(b, seq, rtnl::SysctlRequest{name, value}, NLM_F_ACK);
  return b.take();
}

Result<void> daemon_sysctl(NlClient& c, const std::string& name, const std::string& value) {
  auto r = c.call(sysctl_write_msg(c.next_seq(), name, value));
  if (!r) return fail(r.error().code, "sysctl {}={}: {}", name, value, r.error().message);
  return ok();
}

Result<std::string> daemon_sysctl_read(NlClient& c, const std::string& name) {
  wire::MessageBuilder b;
  std::uint32_t seq = c.next_seq();
  if (auto e = rtnl::encode_sysctl_request(b, seq, rtnl::SysctlRequest{name, std::nullopt}); !e)
    return fail(e.error());
  IFCORE_TRY(c.send(b.bytes()));
  auto rep = await_reply(c, seq, rtnl::IFCORE_NLMSG_SYSCTL, 5000, "sysctl " + name,
                         rtnl::decode_sysctl_reply);
  if (!rep) return fail(rep.error());
  return rep->value;
}

Result<std::unique_ptr<FrameProbe>> daemon_frame_probe(const WireEnv& env, int tx_ifindex,
                                                       int rx_ifindex) {
  auto c = env.connect({});
  if (!c) return fail(c.error());
  return std::unique_ptr<FrameProbe>(new DaemonProbe(std::move(*c), tx_ifindex, rx_ifindex));
}

WireEnv daemon_env(const std::string& socket_path, bool rings) {
  WireEnv env;
  env.connect = [socket_path,
                 rings](std::vector<unsigned> groups) -> Result<std::unique_ptr<NlClient>> {
    auto c = NlClient::open_daemon(socket_path, std::move(groups));
    if (c && rings) IFCORE_TRY((*c)->use_rings());
    return c;
  };
  // What the kernel path writes under /proc/sys, through ifcore's sysctl message.
  auto write = [connect = env.connect](const std::string& name, bool on) -> Result<void> {
    auto c = connect({});
    if (!c) return fail(c.error());
    return daemon_sysctl(**c, name, on ? "1" : "0");
  };
  env.set_ipv6_forwarding = [write](bool on) -> Result<void> {
    for (const char* scope : {"all", "default"}) {
      auto r = write(std::string("net.ipv6.conf.") + scope + ".forwarding", on);
      if (!r) return r;
    }
    return ok();
  };
  env.set_ipv6_keep_addr_on_down = [write](bool on) {
    return write("net.ipv6.conf.all.keep_addr_on_down", on);
  };
  // Frames through ifcore's probe message: ifcored sends them on its frame path.
  env.frame_probe = [connect = env.connect](int tx, int rx) {
    WireEnv e;
    e.connect = connect;
    return daemon_frame_probe(e, tx, rx);
  };
  return env;
}

}  // namespace ifcore::bench
