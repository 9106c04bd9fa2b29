// tests/fuzz/fuzz_shim.cc — the preload shim's message path: what the shim reads from the
// connection to ifcored on a program's behalf (control replies it keeps from the program,
// the overflow marker, replies and notifications it passes on) and what it rewrites in
// the program's requests (namespace references, translate.h). The shim trusts ifcored no
// more than a program trusts the kernel: whatever arrives, the program gets datagrams or
// an errno, never a crash.
//
//   input := mode:u8 datagram*      datagram := len:u16le bytes[len]
//   mode bit 0: a control exchange first (the shim's first words with ifcored)
//   mode bit 1: the program peeks before each read (iproute2's habit)
//   mode bit 2: the program's buffer is 16 bytes instead of 64 KiB (MSG_TRUNC sizing)
//
// The datagrams are queued on an AF_UNIX SOCK_SEQPACKET pair as ifcored would send them,
// then the connection is closed; the shim's end is read until end of file. Each datagram
// also goes through translate_request as a program's request.
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <span>
#include <vector>

#include "rtnl/wire/control_msg.h"
#include "shim/sockets.h"
#include "shim/translate.h"

namespace ifcore::fuzz {
namespace {

constexpr std::size_t kMaxDatagrams = 48;

struct Pair {
  int shim = -1, daemon = -1;
  Pair() {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
    shim = sv[0];
    daemon = sv[1];
  }
  ~Pair() {
    if (shim >= 0) close(shim);
    if (daemon >= 0) close(daemon);
  }
};

}  // namespace
}  // namespace ifcore::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A namespace reference that resolves (a pid of this machine) makes the shim ask ifcored
  // to create the namespace: let it find no ifcored rather than a real one.
  setenv("IFCORE_SOCKET", "/nonexistent/ifcore-fuzz.sock", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ifcore;
  if (size == 0) return 0;
  static bool init = (LLVMFuzzerInitialize(nullptr, nullptr), true);
  (void)init;
  const std::uint8_t mode = data[0];
  std::size_t off = 1;
  fuzz::Pair pair;
  std::size_t queued = 0;
  while (off + 2 <= size && queued < fuzz::kMaxDatagrams) {
    std::size_t len = data[off] | std::size_t{data[off + 1]} << 8;
    off += 2;
    len = std::min(len, size - off);
    std::vector<std::uint8_t> dg(data + off, data + off + len);
    off += len;
    // The program's side: the same bytes as a request to translate.
    std::vector<std::uint8_t> request = dg;
    (void)shim::translate_request(request, 0);
    if (send(pair.daemon, dg.data(), dg.size(), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) break;
    ++queued;
  }
  close(pair.daemon);
  pair.daemon = -1;

  shim::NetlinkSocket s;
  if (mode & 1) {
    std::lock_guard lock(s.mu);
    rtnl::ControlRequest req;
    req.ns = "default";
    (void)shim::control_exchange(pair.shim, s, req);
  }
  std::vector<std::uint8_t> buf((mode & 4) ? 16 : 65536);
  for (std::size_t i = 0; i < 2 * queued + 4; ++i) {
    iovec iov{buf.data(), buf.size()};
    sockaddr_nl from{};
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    int flags = MSG_DONTWAIT;
    if ((mode & 2) && i % 2 == 0) flags |= MSG_PEEK | MSG_TRUNC;
    ssize_t n = shim::receive(pair.shim, s, &msg, flags);
    if (n < 0 && errno != ENOBUFS) break;
    if (n > 0 && msg.msg_namelen != sizeof(sockaddr_nl)) std::abort();
  }
  return 0;
}
