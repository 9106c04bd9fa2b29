// ifcore/rtnl.h — rtnetlink served from an engine: the interface every face uses.
//
// A `Session` is one client's conversation (Linux: one NETLINK_ROUTE socket). A face feeds
// it the datagrams the client sent and delivers the datagrams it produces: the daemon over
// an AF_UNIX SOCK_SEQPACKET socket, the CLI's embedded mode and the bench in-process. The
// bytes are exactly what Linux's rtnetlink would exchange.
//
// Context: a Session is used by one thread at a time. Notifications are queued on the
// session from whichever thread changed the engine; `pending_notifications` and
// `pop_notification` are safe to call from the session's thread at any time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ifcore/engine.h"

namespace ifcore::rtnl {

struct SessionOptions {
  std::string ns = "default";  // the namespace the session is bound to
  bool may_write = true;       // false: changes get EPERM (peer not authorised)
  // false: may_write holds in `ns` only (its owner): making or destroying namespaces, and
  // naming another one as a target, get EPERM.
  bool may_write_elsewhere = true;
  std::uint32_t port_id = 0;      // the client's netlink port id (nlmsg_pid in replies)
  std::size_t max_queued = 4096;  // notification datagrams queued before ENOBUFS
  std::size_t max_queued_bytes = std::size_t{8} << 20;  // their bytes, likewise
  std::size_t datagram_size = 4096;                     // dump datagrams are kept near this size
  // 0: handle() sends a whole dump. Otherwise a dump that can be sent in parts (links)
  // stops after about this many bytes and keeps its place; continue_dump() sends the next
  // part. Each part takes the control lock anew, so a long dump neither holds it nor needs
  // memory for the whole reply (Linux: netlink_dump, one skb per recvmsg).
  std::size_t dump_chunk_bytes = 0;
};

using Datagram = std::vector<std::uint8_t>;
using SendFn = std::function<void(Datagram&&)>;

class Session {
 public:
  virtual ~Session() = default;

  // Handles one datagram from the client (one or more netlink messages); every reply
  // datagram (data, dump parts, NLMSG_DONE, acks, errors) goes to `send`, in order.
  // Never throws; malformed bytes get an NLMSG_ERROR, as Linux answers them.
  virtual void handle(std::span<const std::uint8_t> datagram, const SendFn& send) = 0;
  // True while a dump begun by handle() has parts left (SessionOptions::dump_chunk_bytes).
  // A second dump asked for meanwhile is refused with EBUSY, as Linux refuses one on a
  // socket whose dump is running; other requests are served.
  virtual bool dump_pending() const = 0;
  // Sends the next part of that dump to `send`; the last part ends it with NLMSG_DONE. A
  // part sent after devices were listed or unlisted has NLM_F_DUMP_INTR in its messages'
  // flags (Linux: nl_dump_check_consistent). Does nothing when no dump is pending.
  virtual void continue_dump(const SendFn& send) = 0;

  // Socket options a client sets with setsockopt(SOL_NETLINK, ...).
  virtual void set_option(int optname, int value) = 0;  // NETLINK_CAP_ACK, NETLINK_EXT_ACK...
  // Multicast membership (RTNLGRP_* numbers, as NETLINK_ADD_MEMBERSHIP), and the legacy
  // bind-time group mask (nl_groups).
  virtual void add_membership(unsigned group) = 0;
  virtual void drop_membership(unsigned group) = 0;
  virtual void set_group_mask(std::uint32_t mask) = 0;

  // Notifications queued for this session.
  virtual std::size_t pending_notifications() const = 0;
  virtual bool pop_notification(Datagram& out) = 0;
  // True once the queue overflowed (the client must be told ENOBUFS, then resynchronise
  // with a dump); reading it clears it.
  virtual bool take_overflow() = 0;
  // Called (from any thread) when a notification is queued; the daemon uses it to wake
  // its event loop. May be empty.
  virtual void set_wakeup(std::function<void()> wake) = 0;
};

// Serves rtnetlink for one engine. Thread-safe.
class Server {
 public:
  explicit Server(Engine& engine);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Errors: ENOENT if the namespace does not exist.
  Result<std::unique_ptr<Session>> open_session(SessionOptions opts);

  // A tap sees every notification the server makes, for every namespace and group,
  // whether or not a session listens (ifcored --state keeps its store with it). It is
  // called with the control lock held, in the order the changes happen, with the id of the
  // namespace the message speaks of; it must not block or take the control lock. An empty
  // function removes it. Context: takes the control lock (not held by the caller).
  using TapFn = std::function<void(int ns_id, std::span<const std::uint8_t> msg)>;
  void set_tap(TapFn tap);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ifcore::rtnl
