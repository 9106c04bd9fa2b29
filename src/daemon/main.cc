// daemon/main.cc — ifcored: the engine served as rtnetlink over a Unix socket.
//   ifcored [--socket PATH] [--group NAME] [--policy TEXT] [--namespace NAME]...
//           [--max-queued N] [--max-queued-bytes N] [--max-outbox-bytes N]
//           [--max-connections-per-uid N] [--busy-poll US] [--reserve MIB] [--record DIR]
#include <grp.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "daemon/daemon.h"
#include "ifcore/ifcore.h"

int main(int argc, char** argv) {
  CLI::App app{"ifcored: ifcore's network-device engine served as rtnetlink over a Unix socket"};
  ifcore::daemon::Config cfg;
  cfg.socket_path = ifcore::daemon::default_socket_path();
  std::string group, policy = "default";
  std::vector<std::string> namespaces;
  app.add_option("--socket", cfg.socket_path, "socket path")->capture_default_str();
  app.add_option("--group", group, "group whose members may change state (besides root)");
  app.add_option("--policy", policy,
                 "engine policies (default, legacy, or key=value,...; limits: max-devices=N "
                 "per namespace, max-namespaces=N, 0 = none, refused with ENOSPC)")
      ->capture_default_str();
  app.add_option("--namespace", namespaces, "extra namespaces to create at start");
  app.add_option("--max-queued", cfg.max_queued,
                 "notification datagrams queued per client before it reads ENOBUFS")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-queued-bytes", cfg.max_queued_bytes,
                 "notification bytes queued per client before it reads ENOBUFS")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-outbox-bytes", cfg.max_outbox_bytes,
                 "reply bytes waiting for one client before its requests are no longer read "
                 "(backpressure)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-connections-per-uid", cfg.max_connections_per_uid,
                 "connections open at once per peer uid; one more is closed at once (0: none)")
      ->capture_default_str();
  long busy_poll_us = cfg.busy_poll.count();
  app.add_option("--busy-poll", busy_poll_us,
                 "µs the loop keeps polling for the next request before it sleeps (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0L, 1000000L));
  app.add_option("--record", cfg.record_dir,
                 "debugging: write every datagram clients send and are sent to files in this "
                 "folder (tests/fuzz/capture_corpus.sh)");
  std::size_t reserve_mib = 32;
  app.add_option("--reserve", reserve_mib,
                 "MiB of heap touched at start and kept for devices, so that creating them "
                 "takes no page faults (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 20));
  CLI11_PARSE(app, argc, argv);
  cfg.busy_poll = std::chrono::microseconds(busy_poll_us);
  ifcore::daemon::reserve_heap(reserve_mib);

  auto pol = ifcore::Policies::parse(policy);
  if (!pol) {
    std::fprintf(stderr, "ifcored: --policy: %s\n", pol.error().message.c_str());
    return 2;
  }
  if (!group.empty()) {
    struct group* g = getgrnam(group.c_str());
    if (!g) {
      std::fprintf(stderr, "ifcored: --group: no group \"%s\"\n", group.c_str());
      return 2;
    }
    cfg.write_group = g->gr_gid;
  }
  // Before the engine starts its threads, so that only the loop's signalfd hears SIGTERM.
  ifcore::daemon::block_signals();

  ifcore::EngineConfig ecfg;
  ecfg.policies = *pol;
  auto engine = ifcore::make_engine(std::move(ecfg));
  {
    auto ctl = engine->control();
    for (const auto& n : namespaces) {
      auto r = ctl.create_namespace(n);
      if (!r) {
        std::fprintf(stderr, "ifcored: --namespace %s: %s\n", n.c_str(), r.error().message.c_str());
        return 2;
      }
    }
  }
  auto r = ifcore::daemon::serve(*engine, cfg);
  if (!r) {
    std::fprintf(stderr, "ifcored: %s\n", r.error().message.c_str());
    return 1;
  }
  return 0;
}
