// cli/transport_embedded.cc — the embedded backend: an ifcore engine living inside the
// `ifc` process, served by ifcore's rtnl library through a Session. The bytes are the same
// as over the daemon socket; only the carrier differs. One engine per process, so a
// `-batch` script sees its own changes.
#include <cstdio>
#include <deque>

#include "cli/transport.h"
#include "ifcore/ifcore.h"
#include "ifcore/rtnl.h"

namespace ifcore::cli {
namespace {

// The engine's debug lines (the reasons of errors Linux sends without a message) are not
// ip's output: only warnings and errors reach standard error, as ifcored's default.
EngineConfig quiet_config() {
  EngineConfig cfg;
  cfg.log = [](LogLevel level, std::string_view text) {
    if (level < LogLevel::Warning) return;
    std::fprintf(stderr, "ifcore: %s: %.*s\n", level == LogLevel::Warning ? "warning" : "error",
                 static_cast<int>(text.size()), text.data());
  };
  return cfg;
}

struct Host {
  std::unique_ptr<Engine> engine = make_engine(quiet_config());
  rtnl::Server server{*engine};
};

Host& host() {
  static Host h;
  return h;
}

class EmbeddedTransport final : public Transport {
 public:
  explicit EmbeddedTransport(std::unique_ptr<rtnl::Session> s) : session_(std::move(s)) {}

  Result<void> send(std::span<const std::uint8_t> d) override {
    session_->handle(d, [this](rtnl::Datagram&& out) { replies_.push_back(std::move(out)); });
    return ok();
  }

  Result<std::optional<Datagram>> recv(int) override {
    if (!replies_.empty()) {
      Datagram d = std::move(replies_.front());
      replies_.pop_front();
      return std::optional<Datagram>(std::move(d));
    }
    if (session_->take_overflow()) return fail(ENOBUFS, "notifications lost");
    rtnl::Datagram d;
    if (session_->pop_notification(d)) return std::optional<Datagram>(std::move(d));
    // Nothing else can change the engine while this thread waits: report a timeout.
    return std::optional<Datagram>{};
  }

  Result<void> set_option(int opt, int value) override {
    session_->set_option(opt, value);
    return ok();
  }
  Result<void> join_group(unsigned group) override {
    session_->add_membership(group);
    return ok();
  }
  std::uint32_t port_id() const override { return kPort; }
  const char* target() const override { return "embedded"; }

  static constexpr std::uint32_t kPort = 4242;

 private:
  std::unique_ptr<rtnl::Session> session_;
  std::deque<Datagram> replies_;
};

}  // namespace

Result<std::unique_ptr<Transport>> make_embedded_transport(const std::string& netns) {
  rtnl::SessionOptions o;
  if (!netns.empty()) o.ns = netns;
  o.port_id = EmbeddedTransport::kPort;
  auto s = host().server.open_session(o);
  if (!s) {
    if (s.error().code == ENOENT)
      return fail(ENOENT, "Cannot open network namespace \"{}\": No such file or directory", netns);
    return fail(s.error());
  }
  return std::unique_ptr<Transport>(new EmbeddedTransport(std::move(*s)));
}

}  // namespace ifcore::cli
