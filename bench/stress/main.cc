// bench/stress/main.cc — ifcore-stress: runs every worker of stress.h against one engine
// that ifcored's loop serves in this process, stops them when the time or the operation
// bound is reached, ends the loop with SIGTERM, and checks what must hold after any
// interleaving: every device finalized, no reference left, each client's belief equal to
// a dump, the heap back near where it started. Exit status 0 when all of it holds, 1
// otherwise (each broken promise printed), 2 for bad options.
//
//   ifcore-stress [--seconds S] [--ops N] [--writers N] [--readers N] [--socket-clients N]
//                 [--ring-clients N] [--no-hostile] [--seed N] [--socket PATH]
//                 [--heap-slack-mib M] [--leak]
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <linux/rtnetlink.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "bench/scenarios/nl_client.h"
#include "bench/stress/stress.h"
#include "daemon/daemon.h"
#include "ifcore/ifcore.h"
#include "ifcore/namespace.h"
#include "ifcore/rcu.h"

// The sanitizers' allocators count what is in use; glibc's mallinfo2 does not see them.
extern "C" std::size_t __sanitizer_get_current_allocated_bytes() __attribute__((weak));

namespace ifcore::stress {
namespace {

// Bytes the program's allocator has handed out and not had back.
std::size_t heap_in_use() {
  if (__sanitizer_get_current_allocated_bytes) return __sanitizer_get_current_allocated_bytes();
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// The peak resident set (VmHWM), in bytes.
std::size_t peak_rss() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

int run(const Options& o) {
  // SIGTERM ends the daemon's loop (its signalfd): blocked before any thread starts.
  daemon::block_signals();

  Shared sh(o);
  // The engine's log goes to standard error; its leak reports are also kept, to tell the
  // deliberate leak's from any other.
  Mutex log_mu;  // LOCK ORDERING: a leaf
  std::vector<std::string> leak_lines;
  EngineConfig cfg;
  cfg.log = [&](LogLevel, std::string_view text) {
    std::fprintf(stderr, "ifcore: %.*s\n", static_cast<int>(text.size()), text.data());
    if (text.find("to become free") == std::string_view::npos) return;
    MutexLock lk(log_mu);
    leak_lines.emplace_back(text);
  };
  if (o.leak) {
    // Holders are listed in leak reports, and the first comes after a second.
    cfg.track_refs = true;
    cfg.leak_report_after = cfg.leak_report_interval = std::chrono::seconds(1);
  }
  auto engine = make_engine(std::move(cfg));
  const Stats before = engine->stats();
  std::vector<Namespace*> read_from;
  Ref leaked;
  {
    auto ctl = engine->control();
    read_from.push_back(ctl.find_namespace("default"));
    if (o.leak) {
      LinkRequest req;
      req.kind = "dummy";
      req.name = "leaky";
      auto d = ctl.create_link(*ctl.find_namespace("default"), req);
      if (d) leaked = Ref(**d, "stress-leak");
      if (!d || !ctl.delete_link(**d)) {
        std::fprintf(stderr, "ifcore-stress: the device to leak could not be made\n");
        return 1;
      }
    }
    for (int i = 0; i < o.writers; ++i) {
      auto ns = ctl.create_namespace(writer_namespace(i));
      if (!ns) {
        std::fprintf(stderr, "ifcore-stress: %s\n", ns.error().message.c_str());
        return 1;
      }
      read_from.push_back(*ns);
    }
  }

  daemon::Config dcfg;
  dcfg.socket_path = o.socket_path;
  Result<void> served = ok();
  std::thread server([&] { served = daemon::serve(*engine, dcfg); });
  // The heap as the run finds it: the engine, its namespaces and the daemon's loop.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::size_t heap_start = heap_in_use();
  const auto t0 = std::chrono::steady_clock::now();

  std::vector<WriterStats> ws(static_cast<std::size_t>(o.writers));
  std::vector<ReaderStats> rs(static_cast<std::size_t>(o.readers));
  std::vector<ClientStats> cs(static_cast<std::size_t>(o.socket_clients + o.ring_clients));
  HostileStats hs;
  std::vector<std::thread> threads;
  for (int i = 0; i < o.writers; ++i)
    threads.emplace_back([&, i] { run_writer(*engine, sh, i, ws[static_cast<std::size_t>(i)]); });
  for (int i = 0; i < o.readers; ++i)
    threads.emplace_back([&, i] { run_reader(sh, read_from, i, rs[static_cast<std::size_t>(i)]); });
  for (int i = 0; i < o.socket_clients + o.ring_clients; ++i)
    threads.emplace_back(
        [&, i] { run_client(sh, i, i >= o.socket_clients, cs[static_cast<std::size_t>(i)]); });
  if (o.hostile) threads.emplace_back([&] { run_hostile(sh, hs); });

  const auto deadline = t0 + std::chrono::duration<double>(o.seconds);
  while (!sh.done() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  sh.stop = true;
  for (auto& t : threads) t.join();
  const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The end: SIGTERM, as a service manager sends it, while two clients are still there: a
  // subscriber to the busiest namespace and a client on mapped rings whose request may be
  // unanswered. Each must see its connection end.
  std::vector<std::unique_ptr<bench::NlClient>> lingering;
  if (auto s = bench::NlClient::open_daemon(o.socket_path, {RTNLGRP_LINK}, kHostileNamespace))
    lingering.push_back(std::move(*s));
  if (auto r = bench::NlClient::open_daemon(o.socket_path, {}, kHostileNamespace);
      r && (*r)->use_rings()) {
    LinkRequest req;
    req.kind = "dummy";
    req.name = "lingering";
    (void)(*r)->send(bench::newlink_msg((*r)->next_seq(), req));
    lingering.push_back(std::move(*r));
  }
  if (lingering.size() != 2) sh.fail("the clients kept for SIGTERM could not connect");
  ::kill(::getpid(), SIGTERM);
  server.join();
  if (!served) sh.fail(fmt::format("the daemon's loop: {}", served.error().message));
  if (::access(o.socket_path.c_str(), F_OK) == 0) sh.fail("the socket was not removed at SIGTERM");
  int ended = 0;
  for (auto& c : lingering) {
    for (int i = 0; i < 10000; ++i) {  // what was queued for it, then the end
      auto d = c->recv(2000);
      if (!d) {
        ++ended;
        break;
      }
      if (!*d) break;  // silence: the daemon left the connection open
    }
  }
  if (ended != static_cast<int>(lingering.size()))
    sh.fail(fmt::format("{} of {} clients saw their connection end at SIGTERM", ended,
                        lingering.size()));
  lingering.clear();

  // Every namespace the run made goes, in one batch each; then every device unregistered
  // must be released: no reference is left anywhere (RCU readers, routes, neighbours,
  // the daemon's sessions).
  {
    auto ctl = engine->control();
    for (Namespace* ns : ctl.namespaces())
      if (ns->name() != "default")
        if (auto r = ctl.destroy_namespace(*ns); !r)
          sh.fail(fmt::format("destroying {}: {}", ns->name(), r.error().message));
  }
  if (o.leak) {
    // The leaked device alone waits, reported with its holder, and every other delete of
    // the run went through beside it.
    for (int i = 0; i < 1000 && engine->pending_finalization() > 1; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto waiting = engine->waiting_devices();
    const bool named = waiting.size() == 1 && waiting[0].name == "leaky" &&
                       waiting[0].holders == std::vector<std::string>{"stress-leak"};
    if (!named) sh.fail(fmt::format("{} devices wait, not the leaked one alone", waiting.size()));
    bool reported;
    {
      MutexLock lk(log_mu);
      reported = !leak_lines.empty();
    }
    if (run_s >= 1.5 && !reported) sh.fail("the leaked reference was not reported");
    // Not under log_mu: the last put wakes the finalizer, whose lock is held while it logs.
    leaked.reset();
  }
  if (!engine->drain(std::chrono::seconds(10)))
    sh.fail(
        fmt::format("{} devices still wait for their references", engine->pending_finalization()));
  for (const auto& w : engine->waiting_devices())
    sh.fail(fmt::format("{} still has {} references", w.name, w.usage_count));
  const Stats after = engine->stats();
  const std::uint64_t registered = after.devices_registered - before.devices_registered;
  const std::uint64_t unregistered = after.devices_unregistered - before.devices_unregistered;
  const std::uint64_t released = after.devices_released - before.devices_released;
  if (released != unregistered)
    sh.fail(fmt::format("{} devices unregistered, {} released", unregistered, released));
  {
    MutexLock lk(log_mu);
    // The leaked device's reports (one may race with its release and say usage count 0);
    // its holder is checked in waiting_devices() above.
    const std::string expected = "waiting for leaky to become free, usage count ";
    for (const auto& line : leak_lines)
      if (!o.leak || line.rfind(expected, 0) != 0) sh.fail(fmt::format("a leak report: {}", line));
  }
  std::size_t left = 0;
  {
    auto ctl = engine->control();
    left = ctl.find_namespace("default")->device_count();
  }
  rcu::barrier();
  const std::size_t heap_end = heap_in_use();

  std::uint64_t w_ops = 0, r_lookups = 0, r_refs = 0, r_long = 0, c_reqs = 0, c_checks = 0;
  for (const auto& w : ws) w_ops += w.creates + w.deletes + w.batch_deletes + w.changes;
  for (const auto& r : rs) r_lookups += r.lookups, r_refs += r.refs, r_long += r.long_holds;
  for (const auto& c : cs) c_reqs += c.requests, c_checks += c.dumps_checked;
  fmt::print("ifcore-stress: {:.1f} s, seed {}, {} operations\n", run_s, o.seed, sh.ops.load());
  fmt::print("  embedded writers  {} in {} namespaces: {} operations\n", o.writers, o.writers,
             w_ops);
  fmt::print("  rcu readers       {}: {} lookups, {} references held ({} for milliseconds)\n",
             o.readers, r_lookups, r_refs, r_long);
  fmt::print(
      "  daemon clients    {} on the socket, {} on rings: {} requests pipelined, {} dumps "
      "checked\n",
      o.socket_clients, o.ring_clients, c_reqs, c_checks);
  if (o.hostile) {
    fmt::print("  leaving clients   {} mid-dump, {} mid-batch, {} mid-ring; {} clean-ups checked\n",
               hs.mid_dump, hs.mid_batch, hs.mid_ring, hs.cleanups);
    fmt::print("  never-reading subscriber: {} datagrams queued for it, {} overflow notices\n",
               hs.subscriber_datagrams, hs.subscriber_overflows);
  }
  fmt::print("  at SIGTERM        {} clients connected (one on rings), {} saw the end\n", 2, ended);
  if (o.leak)
    fmt::print("  leaked reference  1 device held all along: {} reports naming its holder\n",
               leak_lines.size());
  fmt::print(
      "  devices           {} registered, {} unregistered, {} released, {} left (loopback)\n",
      registered, unregistered, released, left);
  fmt::print("  heap in use       {:.2f} MiB at start, {:.2f} MiB at end; peak RSS {:.1f} MiB\n",
             mib(heap_start), mib(heap_end), mib(peak_rss()));
  if (heap_end > heap_start + static_cast<std::size_t>(o.heap_slack_mib * (1 << 20)))
    sh.fail(fmt::format("the heap grew by {:.2f} MiB (allowed {:.2f})", mib(heap_end - heap_start),
                        o.heap_slack_mib));
  if (left != 1) sh.fail(fmt::format("{} devices left in the default namespace", left));

  auto failures = sh.failures();
  for (const auto& f : failures) fmt::print("  FAILED: {}\n", f);
  fmt::print("ifcore-stress: {}\n", failures.empty() ? "PASS" : "FAIL");
  return failures.empty() ? 0 : 1;
}

}  // namespace
}  // namespace ifcore::stress

int main(int argc, char** argv) {
  ifcore::stress::Options o;
  o.socket_path = fmt::format("/tmp/ifcore-stress-{}.sock", ::getpid());
  CLI::App app{"ifcore-stress: every kind of client at once against one engine, then checks"};
  app.add_option("--seconds", o.seconds, "how long the run lasts")->capture_default_str();
  app.add_option("--ops", o.max_ops, "stop after this many operations (0: time only)")
      ->capture_default_str();
  app.add_option("--writers", o.writers, "embedded writers (one namespace each)")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  app.add_option("--readers", o.readers, "RCU readers holding references")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  app.add_option("--socket-clients", o.socket_clients, "daemon clients on the socket")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  app.add_option("--ring-clients", o.ring_clients, "daemon clients on mapped rings")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  bool no_hostile = false;
  app.add_flag("--no-hostile", no_hostile, "no subscriber that never reads, no leaving clients");
  app.add_option("--seed", o.seed, "random seed")->capture_default_str();
  app.add_option("--socket", o.socket_path, "the in-process daemon's socket path");
  app.add_flag("--leak", o.leak,
               "hold a reference on one deleted device all along: it alone must wait, reported "
               "with its holder each second, while every other delete goes through");
  app.add_option("--heap-slack-mib", o.heap_slack_mib,
                 "how much more heap may be in use at the end than at the start")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  o.hostile = !no_hostile;
  if (o.seconds <= 0 || o.seconds > 3600) {
    std::fprintf(stderr, "ifcore-stress: --seconds must be in (0, 3600]\n");
    return 2;
  }
  return ifcore::stress::run(o);
}
