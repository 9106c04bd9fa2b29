// bench/scenarios/kernel.cc — the kernel path: every repetition runs in a thread that made
// its own network namespace (unshare(CLONE_NEWNET)); the namespace goes away with the
// thread's sockets when the thread ends. Sysctls are written through /proc/sys inside it,
// and frames cross a veth pair through two AF_PACKET sockets.
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "bench/scenarios/wire.h"

namespace ifcore::bench {
namespace {

constexpr std::uint16_t kProbeEtherType = 0x88b5;  // IEEE local experimental

class PacketProbe final : public FrameProbe {
 public:
  ~PacketProbe() override {
    if (tx_ >= 0) ::close(tx_);
    if (rx_ >= 0) ::close(rx_);
  }
  Result<void> open(int tx_ifindex, int rx_ifindex) {
    tx_ifindex_ = tx_ifindex;
    rx_ = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(kProbeEtherType));
    tx_ = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (rx_ < 0 || tx_ < 0) return fail(errno, "packet socket: {}", std::strerror(errno));
    sockaddr_ll sa{};
    sa.sll_family = AF_PACKET;
    sa.sll_protocol = htons(kProbeEtherType);
    sa.sll_ifindex = rx_ifindex;
    if (::bind(rx_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0)
      return fail(errno, "packet bind: {}", std::strerror(errno));
    return ok();
  }
  Result<void> send() override {
    std::uint8_t frame[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1};
    frame[12] = kProbeEtherType >> 8;
    frame[13] = kProbeEtherType & 0xff;
    sockaddr_ll sa{};
    sa.sll_family = AF_PACKET;
    sa.sll_ifindex = tx_ifindex_;
    sa.sll_halen = ETH_ALEN;
    std::memset(sa.sll_addr, 0xff, ETH_ALEN);
    if (::sendto(tx_, frame, sizeof frame, 0, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0)
      return fail(errno, "packet send: {}", std::strerror(errno));
    return ok();
  }
  Result<void> wait_received(int timeout_ms) override {
    pollfd p{rx_, POLLIN, 0};
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0) return fail(errno, "poll: {}", std::strerror(errno));
    if (r == 0) return fail(ETIMEDOUT, "the frame did not cross within {} ms", timeout_ms);
    std::uint8_t buf[256];
    (void)::recv(rx_, buf, sizeof buf, 0);
    return ok();
  }

 private:
  int tx_ = -1, rx_ = -1, tx_ifindex_ = 0;
};

Result<void> write_sysctl(const std::string& path, const std::string& value) {
  std::ofstream f(path);
  if (!f) return fail(errno ? errno : EACCES, "cannot open {}", path);
  f << value;
  f.flush();
  if (!f) return fail(EIO, "cannot write {}", path);
  return ok();
}

// Runs `fn` in a new thread inside a new network namespace.
template <class F>
auto in_new_netns(F&& fn) -> decltype(fn()) {
  decltype(fn()) result = fail(EINTR, "not run");
  std::thread t([&] {
    if (::unshare(CLONE_NEWNET) < 0) {
      int e = errno;
      result = fail(e, "network namespaces not permitted here (unshare: {})", std::strerror(e));
      return;
    }
    result = fn();
  });
  t.join();
  return result;
}

}  // namespace

std::string kernel_unavailable() {
  auto r = in_new_netns([]() -> Result<void> {
    auto c = NlClient::open_kernel();
    if (!c) return fail(c.error());
    return ok();
  });
  return r ? std::string() : r.error().message;
}

Result<RunOutput> run_kernel(const ScenarioSpec& s, const RunParams& p) {
  return in_new_netns([&]() -> Result<RunOutput> {
    // The kernel does a request's work in this thread's syscalls: on the CPU ifcored's
    // serving thread gets on the daemon path (cpu_pair.h).
    if (p.cpus.valid()) (void)pin_self(p.cpus.server);
    WireEnv env;
    env.substitute_kinds = true;
    env.connect = [](std::vector<unsigned> groups) {
      return NlClient::open_kernel(std::move(groups));
    };
    env.set_ipv6_forwarding = [](bool on) -> Result<void> {
      for (const char* scope : {"all", "default"}) {
        auto r = write_sysctl(std::string("/proc/sys/net/ipv6/conf/") + scope + "/forwarding",
                              on ? "1" : "0");
        if (!r) return r;
      }
      return ok();
    };
    env.set_ipv6_keep_addr_on_down = [](bool on) {
      return write_sysctl("/proc/sys/net/ipv6/conf/all/keep_addr_on_down", on ? "1" : "0");
    };
    env.frame_probe = [](int tx, int rx) -> Result<std::unique_ptr<FrameProbe>> {
      auto probe = std::make_unique<PacketProbe>();
      auto r = probe->open(tx, rx);
      if (!r) return fail(r.error());
      return std::unique_ptr<FrameProbe>(std::move(probe));
    };
    // ip link set lo up, as the seeds' scripts do in a fresh namespace.
    {
      auto c = NlClient::open_kernel();
      if (!c) return fail(c.error());
      auto r = (*c)->call(setlink_msg((*c)->next_seq(), up_request(1)));
      if (!r) return fail(r.error());
    }
    return run_wire(s, p, env);
  });
}

}  // namespace ifcore::bench
