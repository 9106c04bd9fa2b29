// ifcore/config.h — an engine's configuration and policies.
//
// The policies reproduce the kernel's historical behaviour (the seeds) next to the
// defaults that fix it. In the legacy modes the sleeps are real.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ifcore/clock.h"
#include "ifcore/result.h"

namespace ifcore {

// How an unregistering caller waits for a device's references to drop.
enum class RefWaitPolicy {
  Event,    // never waits: the finalizer frees the device when its last Ref drops
  Backoff,  // the caller waits: one barrier, then sleeps of 1, 2, 4 ... 250 ms (seed 001 after)
  Poll250,  // the caller waits: fixed 250 ms sleeps (seed 001 before)
};

// How many devices share one notifier pass and one grace period.
enum class UnregisterPolicy {
  Batched,  // one pass and one grace period per batch
  Single,   // each device its own pass and its own grace periods (seed 002 before)
};

// What a grace period costs.
enum class GracePolicy {
  Urcu,    // a real liburcu grace period (microseconds)
  Kernel,  // a real grace period that lasts at least `grace_floor`, like a kernel's
};

// When link-state changes are delivered (used by the link watch).
enum class LinkWatchPolicy {
  Adaptive,  // virtual kinds are urgent; flapping devices are coalesced per device
  Kernel,    // non-urgent events wait so that at most one batch runs per second (seed 003)
};

struct Policies {
  RefWaitPolicy ref_wait = RefWaitPolicy::Event;
  UnregisterPolicy unregister = UnregisterPolicy::Batched;
  GracePolicy grace = GracePolicy::Urcu;
  LinkWatchPolicy linkwatch = LinkWatchPolicy::Adaptive;
  int dst_priority = -10;  // the dst subscriber's notifier priority (seed 000 before: 0)
  Duration grace_floor = std::chrono::milliseconds(4);
  // Kernel's legacy waits: the UNREGISTER re-broadcast interval while a caller waits.
  Duration rebroadcast_interval = std::chrono::seconds(1);
  // Limits (0: none). Devices per namespace, its loopback included, and namespaces per
  // engine, its first one included. A create that would pass one is refused with ENOSPC
  // and changes nothing, as Linux refuses a namespace past /proc/sys/user/max_net_namespaces.
  std::size_t max_devices = 0;
  std::size_t max_namespaces = 0;

  // The kernel of the seeds' time: poll250, single, kernel grace periods and link watch,
  // dst at priority 0.
  static Policies legacy();
  // Parses "default", "legacy", or a comma list of key=value: ref-wait=event|backoff|poll250,
  // unregister=batched|single, grace=urcu|kernel, linkwatch=adaptive|kernel, dst-priority=N,
  // grace-floor-ms=N, max-devices=N, max-namespaces=N (0: no limit). EINVAL with a message
  // naming the bad item.
  static Result<Policies> parse(std::string_view text);
  std::string to_string() const;
};

enum class LogLevel { Debug, Info, Warning, Error };
using LogSink = std::function<void(LogLevel, std::string_view)>;

struct EngineConfig {
  Policies policies;
  // Track every live Ref with its holder (debug mode), so leaks can be listed by holder.
  bool track_refs = false;
  // A device whose references have not dropped this long after unregister is reported,
  // then again every `leak_report_interval`.
  Duration leak_report_after = std::chrono::seconds(10);
  Duration leak_report_interval = std::chrono::seconds(10);
  // Where warnings go; default: standard error.
  LogSink log;
  // Time source for deadlines and the link watch; default: the steady clock.
  std::shared_ptr<TimeSource> time;
  // Name of the namespace made at start-up ("" = none).
  std::string default_namespace = "default";
  // true: the finalizer and the link watch each run on a thread of their own, which wakes
  // at their deadlines. false: no such thread; whoever embeds the engine (a test with a
  // FakeTime, an event loop of its own) calls Engine::poll(now), which does the work that is
  // due and returns the next deadline.
  bool background_threads = true;
};

}  // namespace ifcore
