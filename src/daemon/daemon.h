// daemon/daemon.h — ifcored's server loop: an AF_UNIX SOCK_SEQPACKET socket served with
// epoll, one rtnl::Session per client, peer credentials for authorisation, per-client
// outboxes, and the ifcore control message (rtnl/wire/control_msg.h) in place of bind(2) and
// setsockopt(2).
//
// Context: run() owns the calling thread until SIGTERM/SIGINT; the engine's own threads
// only reach the loop through an eventfd (session wakeups).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "ifcore/engine.h"
#include "ifcore/result.h"
#include "ifcore/rtnl.h"

namespace ifcore::daemon {

// What keeps the configured state across restarts (ifcored --state: src/state/): the loop
// restores through it before it listens, and holds every datagram for its clients while
// changes it recorded are not committed, so that an ACK is only sent once its change is
// durable. Requests handled in one pass of the loop share one commit (group commit).
// Context: the loop's thread, except where said.
class StateHook {
 public:
  virtual ~StateHook() = default;
  // Restores the kept state into the engine through `server`, then records every change.
  // Called once, before the socket listens. Errors: the state cannot be restored.
  virtual Result<void> start(Engine& engine, rtnl::Server& server) = 0;
  // Whether changes were recorded that are not committed yet. Context: any thread.
  virtual bool dirty() const = 0;
  // Commits what was recorded (one transaction, one sync). Errors: the store failed: the
  // loop stops, since it could no longer keep its promise.
  virtual Result<void> commit() = 0;
  // Commits what is left and stops recording (before the engine goes away).
  virtual Result<void> stop() = 0;
};

struct Config {
  std::string socket_path;
  // A listening AF_UNIX SOCK_SEQPACKET socket the daemon inherited (socket activation:
  // systemd's ifcored.socket, sd_listen_fds(3)), served instead of binding socket_path;
  // its file is then left alone at exit. -1: none.
  int listen_fd = -1;
  std::optional<gid_t> write_group;  // members may change state (besides uid 0)
  std::size_t max_queued = 4096;     // notification datagrams queued per client
  // Notification bytes queued per client: past either bound the client loses what follows
  // and reads ENOBUFS (Linux: a netlink socket's receive buffer overrun).
  std::size_t max_queued_bytes = std::size_t{8} << 20;
  // Reply bytes waiting to be sent to one client, beyond which the daemon stops reading its
  // requests until it reads its replies (backpressure; also at 1024 datagrams).
  std::size_t max_outbox_bytes = std::size_t{4} << 20;
  // Connections open at once per peer uid (0: no limit); one more is closed at once.
  std::size_t max_connections_per_uid = 256;
  std::size_t datagram_size = 4096;  // dump datagrams
  // A dump goes out in parts of about this many bytes, the next made when the client has
  // read the last (Linux: netlink_dump per recvmsg): a dump of any size needs this much of
  // the daemon's memory, and other clients are served between its parts.
  std::size_t dump_part_bytes = std::size_t{64} << 10;
  // After serving, the loop keeps looking for work this long before it sleeps (0: never
  // spins). It yields the CPU while it looks, so a busy machine loses nothing.
  std::chrono::microseconds busy_poll{50};
  // Debugging: every datagram a client sends and is sent is also written to a file of its
  // own in this folder (empty: none), named SERIAL-cCONN-in.bin or -out.bin (SERIAL counts
  // every datagram recorded, CONN numbers the connections). tests/fuzz/capture_corpus.sh
  // makes the fuzzers' seed corpus from what real clients send this way.
  std::string record_dir;
  // The state store (nullptr: none; the loop then behaves as without it).
  StateHook* state = nullptr;
};

// Touches `mib` MiB of heap once and hands it back to the allocator, which keeps it for
// the devices to come: the first creations take no page fault (about 2 µs each on a
// virtual machine, one per 4 KiB; 2 000 dummies made by a fresh ifcored took 511 faults,
// and 7 after a reserve of 32 MiB). With tcmalloc, freed memory is then never returned
// to the system (its release rate is set to 0); with glibc's malloc, the heap is not
// trimmed. Context: at start, before other threads allocate; not thread-safe.
void reserve_heap(std::size_t mib);

// The default socket path: /run/ifcore/ifcore.sock for root, else
// $XDG_RUNTIME_DIR/ifcore.sock (or /tmp/ifcore-UID.sock without XDG_RUNTIME_DIR).
std::string default_socket_path();

// Serves `engine` until SIGTERM or SIGINT (which the caller must have blocked in every
// thread before starting any, so that the loop's signalfd receives them). The socket is
// 0666 (anyone may read; changes are authorised per peer); its directory is made 0755 if
// missing.
// Errors: the socket cannot be made or bound (EADDRINUSE when another daemon answers there);
// EPERM when its directory is writable by others without the sticky bit or owned by
// another user than the daemon's or root.
Result<void> serve(Engine& engine, const Config& cfg);

// Blocks SIGTERM and SIGINT in the calling thread (which every thread it starts inherits),
// so that only serve()'s signalfd receives them, and ignores SIGPIPE (a client that left).
// Context: at start, before any thread is started (the engine's included).
void block_signals();

}  // namespace ifcore::daemon
