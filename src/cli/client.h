// cli/client.h — the rtnetlink conversation `ifc` has with its target: requests with
// NLM_F_ACK, dumps read until NLMSG_DONE, errors turned into `ip`'s words, and the
// device name <-> ifindex map the printers need. Also the command context (options).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/output.h"
#include "cli/transport.h"
#include "ifcore/result.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::cli {

// A command failure: Error::code is the exit status (1, 2 or 255 as `ip` uses them) and
// Error::message the text printed on standard error (without the final newline).
template <typename... Args>
tl::unexpected<Error> die(int status, fmt::format_string<Args...> f, Args&&... args) {
  return tl::unexpected<Error>(Error{status, fmt::format(f, std::forward<Args>(args)...), -1});
}
// Marks an error after which ip calls exit(status) at once, ending a batch even with -force
// (iproute2's get_prefix, get_addr); carried in Error::attr_offset, unused by the CLI.
inline constexpr int kExitNow = -2;
template <typename... Args>
tl::unexpected<Error> die_now(int status, fmt::format_string<Args...> f, Args&&... args) {
  return tl::unexpected<Error>(
      Error{status, fmt::format(f, std::forward<Args>(args)...), kExitNow});
}

using MsgFn = std::function<void(const wire::Message&)>;

class Client {
 public:
  explicit Client(std::unique_ptr<Transport> t);
  Transport& transport() { return *t_; }

  // Sends one request (finished in `b`) with NLM_F_ACK added and waits for its ack; any
  // non-error reply message goes to `on_reply` (RTM_GETROUTE answers, NLM_F_ECHO).
  // Errors: status 2 with "Error: <extack>." or "RTNETLINK answers: <strerror>".
  Result<void> talk(wire::MessageBuilder& b, const MsgFn& on_reply = {});
  // Like talk, but returns the raw errno (0 = success) and the extack text instead of
  // formatting them (for callers that word errors themselves).
  Result<void> talk_raw(wire::MessageBuilder& b, const MsgFn& on_reply, int& err, std::string& ext);
  // Sends a dump request and calls `cb` for each message until NLMSG_DONE.
  Result<void> dump(wire::MessageBuilder& b, const MsgFn& cb);

  std::uint32_t next_seq() { return ++seq_; }

  // The ifindex of device `name`, 0 when there is none.
  Result<int> ifindex(const std::string& name);
  // The name of `ifindex` ("if%d" when unknown) and its IFF_* flags (0 when unknown).
  std::string ifname(int ifindex);
  std::uint32_t ifflags(int ifindex);
  // The same, asking the target again for a device not in the map (notifications about a
  // device made since the map was read).
  std::string ifname_asking(int ifindex);
  // Forget the map after a change.
  void invalidate() { loaded_ = false; }
  // Keep the map current from a link notification (monitor); names of deleted devices
  // stay known, as ip prints them in the notifications that follow.
  void note_link(int ifindex, const std::string& name, std::uint32_t flags) {
    names_[ifindex] = {name, flags};
  }

  // The next notification datagram: those that arrived during a request first.
  // Errors: as Transport::recv.
  Result<std::optional<Datagram>> next_event(int timeout_ms);

 private:
  Result<void> load();
  Result<void> wait_ack(std::uint32_t seq, const MsgFn& on_reply, int& err, std::string& ext);
  std::unique_ptr<Transport> t_;
  std::uint32_t seq_ = 0;
  bool loaded_ = false;
  std::map<int, std::pair<std::string, std::uint32_t>> names_;
  std::map<std::string, int, std::less<>> altnames_;  // from load(): altname -> ifindex
  std::vector<Datagram> events_;  // notifications read while waiting for a reply
};

// Formats an rtnetlink error as `ip` prints it.
std::string rtnl_error_text(int err, const std::string& extack);

struct BatchedAdds;

// Global options and the things every command uses.
struct Ctx {
  // Set while `ifc -batch` runs a `link add` it may send in a create batch: link add then
  // keeps its request there instead of sending it (batch_adds.h).
  BatchedAdds* deferred = nullptr;
  Client* client = nullptr;
  Out* out = nullptr;
  bool json = false, pretty = false, details = false, brief = false, oneline = false;
  int stats = 0;
  int family = 0;  // AF_UNSPEC, AF_INET, AF_INET6 (-4 / -6)
  std::string netns;
};

}  // namespace ifcore::cli
