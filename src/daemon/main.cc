// daemon/main.cc — ifcored: the engine served as rtnetlink over a Unix socket.
//   ifcored [--socket PATH] [--group NAME] [--policy TEXT] [--namespace NAME]...
//           [--max-queued N] [--max-queued-bytes N] [--max-outbox-bytes N] [--dump-part-bytes N]
//           [--max-connections-per-uid N] [--busy-poll US] [--reserve MIB] [--record DIR]
//           [--state FILE [--sync full|batch|off] [--sync-interval MS] [--state-recover]]
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>

#include "daemon/daemon.h"
#include "ifcore/ifcore.h"
#include "ifcore/version.h"
#include "state/store.h"

int main(int argc, char** argv) {
  CLI::App app{"ifcored: ifcore's network-device engine served as rtnetlink over a Unix socket"};
  app.set_version_flag("-V,--version", "ifcored " + std::string(ifcore::version()));
  ifcore::daemon::Config cfg;
  cfg.socket_path = ifcore::daemon::default_socket_path();
  std::string group, policy = "default";
  std::vector<std::string> namespaces;
  app.add_option("--socket", cfg.socket_path,
                 "socket path (not used when a listening socket is inherited: socket activation)")
      ->capture_default_str();
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
  app.add_option("--dump-part-bytes", cfg.dump_part_bytes,
                 "a dump goes out in parts of about this many bytes, the next made when the "
                 "client has read the last (0: a whole dump at once, in one snapshot)")
      ->capture_default_str();
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
  std::string state_path, sync = "full";
  long sync_interval_ms = 10;
  bool state_recover = false;
  app.add_option("--state", state_path,
                 "keep the configured state in this SQLite file and restore it at start "
                 "(docs/STATE.md)");
  app.add_option("--sync", sync,
                 "with --state: full (every commit synced before its ACK), batch (a sync at most "
                 "every --sync-interval; a machine crash loses that much), off (tests)")
      ->capture_default_str();
  app.add_option("--sync-interval", sync_interval_ms, "with --sync batch: ms between syncs")
      ->capture_default_str()
      ->check(CLI::Range(1L, 60000L));
  app.add_flag("--state-recover", state_recover,
               "with --state: start even if records cannot be applied (they are reported and "
               "kept aside in the file's table lost)");
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
  // Opened before the engine (and destroyed after it): a file that fails its check
  // stops the start before anything is made.
  std::unique_ptr<ifcore::state::Store> store;
  if (!state_path.empty()) {
    auto s = ifcore::state::parse_sync(sync);
    if (!s) {
      std::fprintf(stderr, "ifcored: %s\n", s.error().message.c_str());
      return 2;
    }
    ifcore::state::Options so;
    so.path = state_path;
    so.sync = *s;
    so.batch_interval = std::chrono::milliseconds(sync_interval_ms);
    so.recover = state_recover;
    auto st = ifcore::state::Store::open(so);
    if (!st) {
      std::fprintf(stderr, "ifcored: --state: %s\n", st.error().message.c_str());
      return 1;
    }
    store = std::move(*st);
    cfg.state = store.get();
  } else if (state_recover) {
    std::fprintf(stderr, "ifcored: --state-recover needs --state FILE\n");
    return 2;
  }
  // Socket activation (ifcored.socket): one listening socket passed as fd 3; the
  // LISTEN_* variables are unset so that no child inherits them.
  int inherited = sd_listen_fds(1);
  if (inherited < 0) {
    std::fprintf(stderr, "ifcored: sd_listen_fds: %s\n", std::strerror(-inherited));
    return 2;
  }
  if (inherited > 1) {
    std::fprintf(stderr, "ifcored: %d sockets inherited, one expected\n", inherited);
    return 2;
  }
  if (inherited == 1) {
    if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_SEQPACKET, 1, nullptr, 0) <= 0) {
      std::fprintf(stderr,
                   "ifcored: the inherited socket is not a listening AF_UNIX SOCK_SEQPACKET "
                   "socket\n");
      return 2;
    }
    cfg.listen_fd = SD_LISTEN_FDS_START;
  }
  // Before the engine starts its threads, so that only the loop's signalfd hears SIGTERM.
  ifcore::daemon::block_signals();

  ifcore::EngineConfig ecfg;
  ecfg.policies = *pol;
  auto engine = ifcore::make_engine(std::move(ecfg));
  {
    auto ctl = engine->control();
    for (const auto& n : namespaces) {
      // With --state, a namespace the file keeps too is found by the restore, which
      // then fills it.
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
