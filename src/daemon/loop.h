// daemon/loop.h — internal to ifcore_daemon: the epoll loop's client state (Outbox, Client)
// and the Loop, whose work is split by job: daemon.cc (the listening socket, accepting,
// authorising, the main loop and shutdown), daemon_io.cc (reading requests, writing replies,
// notifications and dump parts, mapped rings) and daemon_control.cc (ifcore's control
// message: sessions, namespaces, options, the switch to rings).
//
// Lock order: the loop takes no lock of its own; sessions take the engine's control lock
// inside handle(). Session wakeups (from any thread) only write to an eventfd.
#pragma once

#include <sys/epoll.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/daemon.h"
#include "ifcore/rtnl.h"
#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/ring.h"

namespace ifcore::daemon {

inline constexpr std::size_t kOutboxHigh = 64;    // stop pulling notifications above this
inline constexpr std::size_t kOutboxStop = 1024;  // stop reading requests above this
inline constexpr int kReadBudget = 64;            // datagrams read from one client per turn
inline constexpr std::size_t kSendBatch = 64;     // datagrams per sendmmsg(2)
inline constexpr int kDumpPartsPerTurn = 16;      // dump parts made for one client per turn
// Linux builds one AF_UNIX datagram from at most KMALLOC_MAX_SIZE (4 MiB) of linear data
// plus MAX_SKB_FRAGS pages (sock_alloc_send_pskb): about 4.07 MiB with 4 KiB pages, whatever
// SO_SNDBUF the sender forces. A buffer twice that reads any datagram whole in ONE recv(2)
// (no MSG_PEEK for its size first); its pages are only committed when a datagram fills them.
inline constexpr std::size_t kRecvBuffer = std::size_t{8} << 20;
// What stays committed of each buffer once the loop has slept kRecvTrimAfterMs with nothing
// to do; until then a big datagram's pages stay, so that back-to-back batches do not fault
// them in again.
inline constexpr std::size_t kRecvKeep = std::size_t{64} << 10;
inline constexpr int kRecvTrimAfterMs = 1000;
// Datagrams per recvmmsg(2), each into a buffer of its own: a pipelining client (ip -batch)
// costs one syscall per kRecvSlots requests. The buffers are address space (128 MiB of it),
// not memory, until datagrams fill them.
inline constexpr unsigned kRecvSlots = 16;
// A client on mapped rings that keeps sending requests on its socket while it reads none of
// its replies is closed when this many wait (its ring's requests simply stop being read).
inline constexpr std::size_t kRingOutboxLimit = 16 * kOutboxStop;

// Datagrams waiting to be sent to one client, and their bytes.
class Outbox {
 public:
  using Store = std::deque<rtnl::Datagram>;
  void push_back(rtnl::Datagram&& d) {
    bytes_ += d.size();
    q_.push_back(std::move(d));
  }
  void pop_front() {
    bytes_ -= q_.front().size();
    q_.pop_front();
  }
  void erase_front(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) bytes_ -= q_[i].size();
    q_.erase(q_.begin(), q_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  std::size_t size() const { return q_.size(); }
  std::size_t bytes() const { return bytes_; }
  bool empty() const { return q_.empty(); }
  const rtnl::Datagram& front() const { return q_.front(); }
  const rtnl::Datagram& operator[](std::size_t i) const { return q_[i]; }
  Store::iterator begin() { return q_.begin(); }
  Store::iterator end() { return q_.end(); }

 private:
  Store q_;
  std::size_t bytes_ = 0;
};

struct Client {
  int fd = -1;
  std::uint64_t serial = 0;  // the connection's number, from 1 (Config::record_dir)
  ucred cred{};
  bool may_write = false;          // everywhere: uid 0 or a member of --group
  bool session_may_write = false;  // in the session's namespace (may_write or its owner)
  std::string ns = "default";
  std::uint32_t port_id = 0;
  std::uint64_t groups = 0;  // what the daemon asked the session, to replay it
  std::map<std::uint32_t, std::uint32_t> options;
  std::unique_ptr<rtnl::Session> session;
  Outbox out;
  std::uint32_t events = 0;  // registered with epoll
  // Mapped rings, once the client asked for them: every datagram for it goes out through
  // the reply ring (or, too large for it, through the socket behind a socket record).
  std::optional<rtnl::MappedRings> ring;
  bool socket_full = false;  // a datagram for the socket met EAGAIN: wait for EPOLLOUT
  // Requests read with a dump's request, after it: served when the dump has ended, so
  // that their replies follow it (Linux would refuse a second dump with EBUSY meanwhile).
  std::deque<rtnl::Datagram> after_dump;
  // True while a dump goes out or requests wait for its end: no more are read.
  bool dumping() const { return session->dump_pending() || !after_dump.empty(); }
};

class Loop {
 public:
  Loop(Engine& e, const Config& cfg) : engine_(e), cfg_(cfg), server_(e) {}
  ~Loop();
  Result<void> start();
  Result<void> run();

 private:
  using Clock = std::chrono::steady_clock;
  // Busy polling's state across the loop's turns.
  struct Spin {
    Clock::time_point until{};       // look for work without sleeping until then
    Clock::time_point last_epoll{};  // the last turn that asked epoll
    unsigned turn = 0;
  };
  // After serving: keeps looking for work for Config::busy_poll.
  void served(Spin& spin) const {
    if (cfg_.busy_poll.count() > 0) spin.until = Clock::now() + cfg_.busy_poll;
  }
  // While spinning: asks the client served last for its next request directly, on most
  // turns. False when this turn must go through epoll instead.
  bool serve_hot(Clock::time_point now, Spin& spin);
  // One epoll event of a client, the listening socket or the session wakeups' eventfd.
  void dispatch(const epoll_event& ev);
  // SIGTERM or SIGINT: the last replies leave after their commit, and the state is closed.
  Result<void> shut_down();
  Result<void> bind_socket();
  void accept_clients();
  void on_client(Client& c, std::uint32_t ev);
  int read_some(Client& c);
  int read_socket(Client& c);
  int read_ring(Client& c);
  void flush_ring(Client& c);
  void doorbell(Client& c);
  // Before blocking: tells every client on rings that the loop sleeps. False when one of
  // them has a request waiting (the loop then serves it instead of sleeping).
  bool rings_allow_sleep();
  void rings_awake();
  int poll_rings();  // requests served
  void reap();
  void handle_datagram(Client& c, std::span<const std::uint8_t> dg);
  void handle_control(Client& c, std::span<const std::uint8_t> dg);
  // What the client's socket options ask of acknowledgements and errors.
  wire::AckOptions ack_options(const Client& c) const;
  // Queues an NLMSG_ERROR (error 0: an ACK) answering `request`.
  void answer_error(Client& c, std::span<const std::uint8_t> request, const Error& e,
                    const wire::AckOptions& ack);
  void switch_to_rings(Client& c, const wire::Message& req, rtnl::Datagram state,
                       rtnl::MappedRings rings);
  Result<void> open_session(Client& c, const std::string& ns, std::uint32_t port);
  void collect(Client& c);
  void pump(Client& c);
  void flush(Client& c);
  // Sends the client's outbox on its socket. False when the client was dropped.
  bool send_outbox(Client& c);
  // Makes the next parts of the client's pending dump while its outbox is empty, up to
  // kDumpPartsPerTurn parts (the rest on the next turn). True when it made any.
  bool feed_dump(Client& c);
  // Where the session's replies go: the outbox, after the notifications already queued.
  rtnl::SendFn reply_to(Client& c);
  void update_events(Client& c);
  // Backpressure: a client whose replies wait beyond Config::max_outbox_bytes (or
  // kOutboxStop datagrams) is not read until they leave.
  bool outbox_full(const Client& c) const {
    return c.out.size() >= kOutboxStop || c.out.bytes() >= cfg_.max_outbox_bytes;
  }
  // A client on rings whose socket requests' replies wait beyond this is closed.
  bool ring_outbox_over(const Client& c) const {
    return c.out.size() >= kRingOutboxLimit || c.out.bytes() >= 16 * cfg_.max_outbox_bytes;
  }
  // With a state store: commits what it recorded, then sends what was held for the
  // clients meanwhile. Context: the end of each pass of the loop.
  void settle();
  void drop(int fd);
  // Logs why a client that broke the protocol is closed, and closes it (as drop).
  void close_for(Client& c, std::string_view why);
  // Writes `d` to Config::record_dir when set (`dir`: "in" or "out").
  void record(const Client& c, std::span<const std::uint8_t> d, const char* dir);
  std::uint32_t pick_port(pid_t pid);

  Engine& engine_;
  Config cfg_;
  rtnl::Server server_;
  int ep_ = -1, lfd_ = -1, sfd_ = -1, efd_ = -1;
  bool bound_ = false;
  std::map<int, std::unique_ptr<Client>> clients_;
  std::set<std::uint32_t> ports_;
  std::uint32_t next_port_ = 0x80000000u;
  // The kernel network namespace ifcored runs in (its inode; 0 if /proc does not say): a
  // shim's socket in that namespace is served by "default".
  std::uint64_t own_netns_ = 0;
  // Namespaces made by a control message's IFCORE_CTRL_CREATE, and the uid that made them:
  // that peer may change them as root may (Linux: a user owns the network namespaces its
  // user namespace makes, e.g. `unshare -rn`).
  // Keyed by name; the namespace's id tells a namespace made again under the same name
  // (by RTM_NEWNSID, say) from the one the peer made.
  struct Owner {
    uid_t uid;
    int ns_id;
  };
  std::map<std::string, Owner> ns_owner_;
  std::vector<int> dead_;
  int hot_ = -1;  // the client whose datagrams were read last: busy polling asks it first
  std::uint8_t* rbuf_ = nullptr;  // kRecvSlots buffers of kRecvBuffer bytes, mapped lazily
  // recvmmsg(2)'s headers, one per buffer, set once: the kernel only writes msg_len and
  // msg_flags.
  std::array<mmsghdr, kRecvSlots> rmsgs_{};
  std::array<iovec, kRecvSlots> riov_{};
  std::size_t rbuf_used_ = 0;  // the most bytes a buffer was filled with since the last trim
  void trim_receive_buffers();
  std::vector<std::uint8_t> ring_in_;     // a request copied out of a request ring
  std::set<int> ring_fds_;                // the clients on mapped rings
  std::uint64_t connections_ = 0;         // connections accepted so far
  std::map<uid_t, std::size_t> per_uid_;  // open connections by peer uid
  std::uint64_t recorded_ = 0;            // datagrams written to Config::record_dir
  // Set by session wakeups (any thread) until the loop pumps: one eventfd write per turn,
  // however many notifications are queued meanwhile.
  std::atomic<bool> wake_pending_{false};
  // Clients whose datagrams wait for the state store's commit (Config::state).
  std::set<int> held_;
  std::optional<Error> state_failed_;
};

}  // namespace ifcore::daemon
