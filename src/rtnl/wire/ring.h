// rtnl/wire/ring.h — mapped rings: ifcored and one client pass datagrams through shared memory
// instead of sending each one with a syscall, the idea of Linux's netlink mmap rings
// (NETLINK_RX_RING/NETLINK_TX_RING, Linux 3.10 to 4.5). The client asks for them with the
// control message (IFCORE_CTRL_RING); the daemon makes a sealed memfd and passes it back
// with SCM_RIGHTS. The socket stays: it carries control messages, the end of the connection,
// and doorbells, one-byte datagrams that wake a side which said it is going to sleep.
// Format in docs/WIRE.md ("Mapped rings").
//
// Layout of the file: one page of header, then the request ring (client to daemon), then
// the reply ring (daemon to client), each `size` bytes, a power of two. A ring holds records
// of an 8-byte header (u32 length, u32 flags) and the datagram, padded to 8 bytes; a record
// never wraps (a pad record fills the end of the ring instead). Each ring has a head, the
// bytes its producer has written, and a tail, the bytes its consumer has read, both counting
// up for ever.
//
// A datagram larger than a quarter of the ring goes through the socket instead, and a
// socket record (no data, flag kRecordSocket) stands in the ring where it belongs, as Linux's
// rings marked a frame NL_MMAP_STATUS_COPY: the reader then reads the socket.
//
// Trust: each side holds its own copy of the index it writes and reads the other side's
// once per call; an index or a length that cannot be is EPROTO, never a read or write
// outside the ring. Datagrams are copied out before anyone parses them.
//
// Context: one thread at a time uses one end. Lock-free; no call blocks or makes a syscall.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ifcore/result.h"

namespace ifcore::rtnl {

inline constexpr std::uint32_t kRingMinSize = std::uint32_t{1} << 16;      // 64 KiB
inline constexpr std::uint32_t kRingMaxSize = std::uint32_t{1} << 26;      // 64 MiB
inline constexpr std::uint32_t kRingDefaultSize = std::uint32_t{1} << 20;  // 1 MiB
inline constexpr std::uint8_t kDoorbell = 0;  // the byte of a doorbell datagram

// Errors: EINVAL "ring size N is not a power of two between 65536 and 67108864".
Result<void> check_ring_size(std::uint32_t size);

// The ring file travels with the control reply (SCM_RIGHTS). Sends `datagram` on the
// connected socket `sock` with a copy of `fd` attached. Errors: sendmsg's errno.
Result<void> send_with_fd(int sock, std::span<const std::uint8_t> datagram, int fd, int flags);
struct DatagramWithFd {
  std::size_t size = 0;  // 0: end of file
  int fd = -1;           // -1: none came with it (the caller owns it, close-on-exec)
};
// Receives one datagram into `buf`, and the descriptor passed with it.
// Errors: recvmsg's errno.
Result<DatagramWithFd> recv_with_fd(int sock, std::span<std::uint8_t> buf, int flags);

class MappedRings {
 public:
  enum class Role { Daemon, Client };

  // The daemon's side: a new sealed memfd of `size`-byte rings, mapped.
  // Errors: check_ring_size's; memfd_create, ftruncate, fcntl or mmap's errno.
  static Result<MappedRings> create(std::uint32_t size);
  // The client's side: maps the file the daemon passed (takes `fd`, closed on failure).
  // Errors: EPROTO when the file is not a ring file of a supported version; mmap's errno.
  static Result<MappedRings> attach(int fd);

  MappedRings(MappedRings&& o) noexcept;
  MappedRings& operator=(MappedRings&& o) noexcept;
  MappedRings(const MappedRings&) = delete;
  MappedRings& operator=(const MappedRings&) = delete;
  ~MappedRings();

  int fd() const { return fd_; }
  std::uint32_t size() const { return size_; }
  Role role() const { return role_; }
  // The largest datagram push() takes: a quarter of the ring.
  std::size_t max_datagram() const { return size_ / 4; }

  // Writes one datagram to the outgoing ring (requests for a client, replies for the
  // daemon) and publishes it. False when the ring has no room for it now.
  // Errors: EMSGSIZE for an empty datagram or one above max_datagram(); EPROTO when the
  // consumer's tail cannot be.
  [[nodiscard]] Result<bool> push(std::span<const std::uint8_t> datagram);
  // Writes a socket record: the next datagram in order is the one just sent on the socket.
  // False when the ring has no room for it now (check fits(0) before sending the datagram).
  // Errors: EPROTO as push().
  [[nodiscard]] Result<bool> push_socket_record();
  // Whether push() of `datagram_size` bytes (0: a socket record) would find room now.
  bool fits(std::size_t datagram_size) const;

  enum class Popped { Empty, Datagram, OnSocket };
  // Takes the next record of the incoming ring and releases its room: a datagram is copied
  // into `out` (resized to it); OnSocket means the next datagram is to be read from the
  // socket (`out` is left alone).
  // Errors: EPROTO when the producer's head, a length or a flag cannot be.
  [[nodiscard]] Result<Popped> pop(std::vector<std::uint8_t>& out);
  // True when the incoming ring holds a datagram (or a record to skip).
  bool readable() const;

  // The sleep handshake. A side that is about to block calls prepare_sleep(): it raises its
  // asleep flag and says whether it may block (false: something arrived meanwhile, and the
  // flag is lowered again). After waking it calls awake(). A producer calls
  // take_peer_asleep() after push(): true means the peer may be blocked, and the caller
  // must send it a doorbell (the flag is lowered, so one doorbell per sleep).
  bool prepare_sleep();
  void awake();
  bool take_peer_asleep();
  // The same for room: a producer whose push() of `datagram_size` bytes found the ring full
  // calls prepare_wait_room() (false: room appeared, push again); a consumer calls
  // take_peer_wants_room() after pop() and sends a doorbell when it is true.
  bool prepare_wait_room(std::size_t datagram_size);
  bool take_peer_wants_room();

 private:
  struct Header;
  struct Ring {  // the indices live in the shared header (used through std::atomic_ref)
    std::uint64_t* head;
    std::uint64_t* tail;
    std::uint8_t* data;
  };
  MappedRings(int fd, void* base, std::size_t length, std::uint32_t size, Role role);
  Header* header() const;
  // Bytes of pad record a record of `need` bytes written now would need first.
  std::size_t pad_before(std::size_t need) const;
  // Writes one record of `len` bytes of `data` and `flags`, if there is room.
  Result<bool> put_record(const std::uint8_t* data, std::size_t len, std::uint32_t flags);
  Ring out_ring() const;
  Ring in_ring() const;
  enum Flag { kAsleep = 0, kWantsRoom = 1 };
  std::uint32_t* own_flag(Flag f) const;
  std::uint32_t* peer_flag(Flag f) const;

  int fd_ = -1;
  void* base_ = nullptr;
  std::size_t length_ = 0;
  std::uint32_t size_ = 0;
  Role role_ = Role::Client;
  std::uint64_t out_head_ = 0;  // our copy of the outgoing ring's head
  std::uint64_t in_tail_ = 0;   // our copy of the incoming ring's tail
};

}  // namespace ifcore::rtnl
