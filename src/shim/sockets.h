// shim/sockets.h — the netlink sockets the preload library redirects to ifcored.
//
// A program's socket(AF_NETLINK, …, NETLINK_ROUTE) becomes an AF_UNIX SOCK_SEQPACKET
// connection to ifcored, so that poll, epoll, close, dup, fork and exec work on it as the
// kernel's own descriptor. What a netlink socket has and a unix socket lacks (a port id,
// multicast groups, SOL_NETLINK options, sockaddr_nl addresses) is kept here, per socket,
// and sent to ifcored in its control message (rtnl/wire/control_msg.h).
//
// Lock order: Table::mu_, then NetlinkSocket::mu. Neither is held across a blocking call
// of the C library except NetlinkSocket::mu during a control exchange (bounded by its
// timeout), which only that socket's users wait for.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "ifcore/mutex.h"
#include "ifcore/result.h"
#include "rtnl/wire/control_msg.h"

namespace ifcore::shim {

// One redirected socket; shared by every descriptor dup() made of it.
struct NetlinkSocket {
  Mutex mu;                   // LOCK ORDERING: after Table::mu_ and the epoll registry's, if at all
  int type = SOCK_RAW;        // as the program asked (SO_TYPE answers it)
  std::uint32_t port_id = 0;  // guarded by mu, like everything below
  std::uint32_t bind_groups = 0;        // groups 1..32 as bind() set them
  std::set<std::uint32_t> memberships;  // NETLINK_ADD_MEMBERSHIP (1..64)
  std::map<int, int> options;           // SOL_NETLINK options set, by name
  std::string ns;                       // ifcore namespace served
  std::uint64_t daemon_netns = 0;       // ifcored's kernel netns inode (0: unknown)
  std::uint32_t seq = 0xc1f00000u;      // control messages' sequence numbers
  // Datagrams that arrived while a control exchange waited for its reply, in order;
  // receive() hands them out before anything on the socket.
  std::deque<std::vector<std::uint8_t>> stash;
  bool state_known = false;  // false for a socket inherited over exec, until asked
  // The datagram at the head of the socket passed receive()'s check on a peek: the read
  // that follows (iproute2 peeks for the size, then reads) need not look again.
  bool head_checked = false;
  // bind() or a first send happened (Linux: netlink_autobind): until then getsockname
  // reports port 0.
  bool bound = false;
};

// The descriptors that are redirected sockets.
class Table {
 public:
  std::shared_ptr<NetlinkSocket> find(int fd);
  void insert(int fd, std::shared_ptr<NetlinkSocket> s);
  void erase(int fd);
  // fd `to` now refers to what `from` does (dup2/dup3/F_DUPFD); erases `to` otherwise.
  void copy(int from, int to);
  bool empty() const { return count_.load(std::memory_order_relaxed) == 0; }

 private:
  Mutex mu_;  // LOCK ORDERING: a leaf
  std::unordered_map<int, std::shared_ptr<NetlinkSocket>> fds_ IFCORE_GUARDED_BY(mu_);
  std::atomic<std::size_t> count_{0};
};
Table& table();

// ifcored's socket: $IFCORE_SOCKET, else /run/ifcore/ifcore.sock as root and
// $XDG_RUNTIME_DIR/ifcore.sock (or /tmp/ifcore-UID.sock) otherwise, as ifcored's default.
std::string socket_path();

// The ifcore namespace that serves a kernel network namespace, by its inode: "default"
// for ifcored's own (when known), NAME for a namespace bind-mounted at /run/netns/NAME,
// else "netns-INODE".
std::string namespace_for_inode(std::uint64_t inode, std::uint64_t daemon_netns);
// The inode of the calling thread's network namespace (0 if /proc cannot tell).
std::uint64_t current_netns_inode();

// Opens a connection to ifcored standing for a new NETLINK_ROUTE socket of the calling
// thread's namespace (made in ifcored on first use). `type_flags` are socket(2)'s
// SOCK_NONBLOCK/SOCK_CLOEXEC. Returns the descriptor, or -1 with errno set.
int open_netlink(int type, int type_flags, std::shared_ptr<NetlinkSocket>* out);

// Adopts a descriptor inherited over exec when it is a connection to ifcored.
std::shared_ptr<NetlinkSocket> adopt_inherited(int fd);

// Sends a control request and waits for its reply; datagrams that come first are stashed.
// Caller must: hold s.mu. Errors: the daemon's (errno and message), ETIMEDOUT, ECONNRESET.
Result<rtnl::ControlState> control_exchange(int fd, NetlinkSocket& s, rtnl::ControlRequest req);
// Sends a control request without waiting (quiet: no reply on success; an error reply is
// dropped by receive()). Caller must: hold s.mu.
Result<void> control_send(int fd, NetlinkSocket& s, rtnl::ControlRequest req);

// recvmsg(2) with netlink's semantics: one datagram, MSG_PEEK and MSG_TRUNC sizing, a
// port-0 sockaddr_nl sender, ENOBUFS for the overflow datagram, and control replies kept
// from the program.
ssize_t receive(int fd, NetlinkSocket& s, msghdr* msg, int flags);
// sendmsg(2): the iovecs as one datagram (netlink's destination address dropped), with
// namespace references translated (translate.h). Returns the program's length.
ssize_t transmit(int fd, NetlinkSocket& s, const msghdr* msg, int flags);

// A one-shot conversation with ifcored in the calling thread's namespace, for the
// functions glibc implements with its own sockets (if_nametoindex, getifaddrs, ioctls):
// sends one request (nlmsg_seq is set) and returns every reply datagram up to the
// NLMSG_DONE of a dump, the ACK or error, or the reply to a non-dump GET with no ACK.
// Errors: those of the connection; a reply's error comes back as datagrams, not here.
Result<std::vector<std::vector<std::uint8_t>>> transact(std::span<const std::uint8_t> request);
// The same on a connection to a named namespace (made if absent when `create`).
Result<std::vector<std::vector<std::uint8_t>>> transact_in(const std::string& ns, bool create,
                                                           std::span<const std::uint8_t> request);

}  // namespace ifcore::shim
