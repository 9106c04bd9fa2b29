// rtnl/wire/ring.cc — mapped rings: the shared file, records, and the sleep handshake.
#include "rtnl/wire/ring.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

namespace ifcore::rtnl {

// The file's first page. Each index and each side's flags sit on a cache line of their own,
// so that a producer and a consumer polling each other do not also fight over a line.
struct MappedRings::Header {
  std::uint32_t magic;
  std::uint32_t version;
  std::uint32_t size;         // bytes per ring
  std::uint32_t header_size;  // bytes before the request ring
  alignas(64) std::uint64_t req_head;
  alignas(64) std::uint64_t req_tail;
  alignas(64) std::uint64_t rep_head;
  alignas(64) std::uint64_t rep_tail;
  alignas(64) std::uint32_t daemon_flags[2];  // asleep, wants room
  alignas(64) std::uint32_t client_flags[2];
};

namespace {

constexpr std::uint32_t kMagic = 0x47524649;  // "IFRG" in memory order
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderSize = 4096;
constexpr std::uint32_t kRecordPad = 1;     // flag: skip to the end of the ring
constexpr std::uint32_t kRecordSocket = 2;  // flag: the next datagram is on the socket
constexpr std::size_t kRecordHeader = 8;
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic_ref<std::uint32_t>::is_always_lock_free);

std::size_t align8(std::size_t n) {
  return (n + 7) & ~std::size_t{7};
}

template <class T>
std::atomic_ref<T> at(T* p) {
  return std::atomic_ref<T>(*p);
}

// How much of each ring is made ready when it is mapped (a larger ring readies the rest on
// its first lap): as much as seed 4's timed run of 100 veth creates and deletes uses of
// either ring, on a connection of its own, about 25 KiB. Readying costs 6 µs a page on each
// side, and a short-lived connection pays it too (seed 1's two sysctl writes open one
// each: its total on rings was 3.5 ms with nothing readied and 8-9 ms with 256 KiB).
constexpr std::size_t kWarmPerRing = kRingMinSize;
constexpr std::size_t kPage = 4096;

// Readies the header and the start of both rings in this side's mapping, so that the
// requests that follow do not pay for it: on this machine the first access to each page of
// a mapping costs 4-5 µs on top of its fault (13 µs for a page of the file touched first),
// and a veth pair's whole creation through the daemon costs 3-5 µs. One madvise(2) faults the
// pages in (1.6 µs a page); a touch of each page then pays its first access. The side that
// writes a ring touches it with a write of the byte it holds (nobody else writes there, and
// nothing was pushed yet), the side that reads it with a read. Best effort: a kernel
// without MADV_POPULATE_WRITE (before Linux 5.14) leaves the faults to the touches.
void warm(void* base, std::uint32_t size, bool daemon) {
  auto* p = static_cast<std::uint8_t*>(base);
  const std::size_t part = std::min<std::size_t>(size, kWarmPerRing);
  std::uint8_t* req = p + kHeaderSize;
  std::uint8_t* rep = req + size;
  (void)madvise(p, kHeaderSize + part, MADV_POPULATE_WRITE);
  (void)madvise(rep, part, MADV_POPULATE_WRITE);
  at(static_cast<std::uint32_t*>(base)).fetch_or(0, std::memory_order_relaxed);  // the header
  volatile std::uint8_t* mine = daemon ? rep : req;
  volatile std::uint8_t* theirs = daemon ? req : rep;
  for (std::size_t off = 0; off < part; off += kPage) {
    mine[off] = mine[off];
    (void)theirs[off];
  }
}

}  // namespace

Result<void> check_ring_size(std::uint32_t size) {
  if (!std::has_single_bit(size) || size < kRingMinSize || size > kRingMaxSize)
    return fail(EINVAL, "ring size {} is not a power of two between {} and {}", size, kRingMinSize,
                kRingMaxSize);
  return ok();
}

namespace {

// A msghdr over one buffer, with room for one descriptor.
struct OneFdMessage {
  iovec iov;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr mh{};
  OneFdMessage(void* data, std::size_t len) : iov{data, len} {
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
  }
  OneFdMessage(const OneFdMessage&) = delete;
  OneFdMessage& operator=(const OneFdMessage&) = delete;
};

}  // namespace

Result<void> send_with_fd(int sock, std::span<const std::uint8_t> datagram, int fd, int flags) {
  OneFdMessage m(const_cast<std::uint8_t*>(datagram.data()), datagram.size());
  msghdr& mh = m.mh;
  cmsghdr* cm = CMSG_FIRSTHDR(&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cm), &fd, sizeof fd);
  if (sendmsg(sock, &mh, flags) < 0) return fail(errno, "sendmsg: {}", std::strerror(errno));
  return ok();
}

Result<DatagramWithFd> recv_with_fd(int sock, std::span<std::uint8_t> buf, int flags) {
  OneFdMessage m(buf.data(), buf.size());
  msghdr& mh = m.mh;
  ssize_t n;
  do n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) return fail(errno, "recvmsg: {}", std::strerror(errno));
  DatagramWithFd out{static_cast<std::size_t>(n), -1};
  for (cmsghdr* cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
        cm->cmsg_len >= CMSG_LEN(sizeof(int))) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cm), sizeof fd);
      if (out.fd < 0)
        out.fd = fd;
      else
        close(fd);  // only one is expected
    }
  return out;
}

MappedRings::MappedRings(int fd, void* base, std::size_t length, std::uint32_t size, Role role)
    : fd_(fd), base_(base), length_(length), size_(size), role_(role) {}

MappedRings::MappedRings(MappedRings&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)),
      base_(std::exchange(o.base_, nullptr)),
      length_(std::exchange(o.length_, 0)),
      size_(o.size_),
      role_(o.role_),
      out_head_(o.out_head_),
      in_tail_(o.in_tail_) {}

MappedRings& MappedRings::operator=(MappedRings&& o) noexcept {
  if (this != &o) {
    this->~MappedRings();
    new (this) MappedRings(std::move(o));
  }
  return *this;
}

MappedRings::~MappedRings() {
  if (base_) munmap(base_, length_);
  if (fd_ >= 0) close(fd_);
}

Result<MappedRings> MappedRings::create(std::uint32_t size) {
  IFCORE_TRY(check_ring_size(size));
  int fd = memfd_create("ifcore-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return fail(errno, "memfd_create: {}", std::strerror(errno));
  std::size_t length = kHeaderSize + 2 * std::size_t{size};
  // Sealed so that the client can neither shrink the file under the daemon's mapping (a
  // SIGBUS) nor grow it.
  if (ftruncate(fd, static_cast<off_t>(length)) < 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
    int e = errno;
    close(fd);
    return fail(e, "ring file: {}", std::strerror(e));
  }
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int e = errno;
    close(fd);
    return fail(e, "mmap of the ring file: {}", std::strerror(e));
  }
  warm(base, size, true);
  auto* h = static_cast<Header*>(base);
  h->magic = kMagic;
  h->version = kVersion;
  h->size = size;
  h->header_size = kHeaderSize;
  return MappedRings(fd, base, length, size, Role::Daemon);
}

Result<MappedRings> MappedRings::attach(int fd) {
  auto refuse = [fd](int code, std::string why) {
    close(fd);
    return fail(code, "ring file: {}", why);
  };
  struct stat st {};
  if (fstat(fd, &st) < 0) return refuse(errno, std::strerror(errno));
  int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0 || !(seals & F_SEAL_SHRINK)) return refuse(EPROTO, "not sealed against shrinking");
  if (st.st_size < static_cast<off_t>(kHeaderSize) + 2 * off_t{kRingMinSize} ||
      st.st_size > static_cast<off_t>(kHeaderSize) + 2 * off_t{kRingMaxSize})
    return refuse(EPROTO, fmt::format("{} bytes is no ring file's size", st.st_size));
  auto length = static_cast<std::size_t>(st.st_size);
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return refuse(errno, std::strerror(errno));
  Header h;
  std::memcpy(&h, base, sizeof h);
  if (h.magic != kMagic || h.version != kVersion || h.header_size != kHeaderSize ||
      !check_ring_size(h.size) || length != kHeaderSize + 2 * std::size_t{h.size}) {
    munmap(base, length);
    return refuse(EPROTO, "unknown format or version");
  }
  warm(base, h.size, false);
  return MappedRings(fd, base, length, h.size, Role::Client);
}

MappedRings::Header* MappedRings::header() const {
  return static_cast<Header*>(base_);
}

MappedRings::Ring MappedRings::out_ring() const {
  Header* h = header();
  auto* data = static_cast<std::uint8_t*>(base_) + kHeaderSize;
  if (role_ == Role::Client) return {&h->req_head, &h->req_tail, data};
  return {&h->rep_head, &h->rep_tail, data + size_};
}

MappedRings::Ring MappedRings::in_ring() const {
  Header* h = header();
  auto* data = static_cast<std::uint8_t*>(base_) + kHeaderSize;
  if (role_ == Role::Daemon) return {&h->req_head, &h->req_tail, data};
  return {&h->rep_head, &h->rep_tail, data + size_};
}

std::uint32_t* MappedRings::own_flag(Flag f) const {
  Header* h = header();
  return role_ == Role::Daemon ? &h->daemon_flags[f] : &h->client_flags[f];
}

std::uint32_t* MappedRings::peer_flag(Flag f) const {
  Header* h = header();
  return role_ == Role::Daemon ? &h->client_flags[f] : &h->daemon_flags[f];
}

std::size_t MappedRings::pad_before(std::size_t need) const {
  std::size_t to_end = size_ - (out_head_ & (size_ - 1));
  return need > to_end ? to_end : 0;
}

bool MappedRings::fits(std::size_t datagram_size) const {
  std::uint64_t used = out_head_ - at(out_ring().tail).load(std::memory_order_acquire);
  std::size_t need = kRecordHeader + align8(datagram_size);
  return used <= size_ && used + pad_before(need) + need <= size_;
}

Result<bool> MappedRings::push(std::span<const std::uint8_t> d) {
  if (d.empty() || d.size() > max_datagram())
    return fail(EMSGSIZE, "datagram of {} bytes: a ring of {} bytes takes 1 to {}", d.size(), size_,
                max_datagram());
  return put_record(d.data(), d.size(), 0);
}

Result<bool> MappedRings::push_socket_record() {
  return put_record(nullptr, 0, kRecordSocket);
}

Result<bool> MappedRings::put_record(const std::uint8_t* data, std::size_t len,
                                     std::uint32_t flags) {
  Ring r = out_ring();
  std::uint64_t tail = at(r.tail).load(std::memory_order_acquire);
  std::uint64_t used = out_head_ - tail;
  if (used > size_)
    return fail(EPROTO, "ring: the consumer's tail {} is not within {} bytes behind the head {}",
                tail, size_, out_head_);
  std::size_t need = kRecordHeader + align8(len);
  std::size_t off = out_head_ & (size_ - 1);
  std::size_t pad = pad_before(need);
  if (used + pad + need > size_) return false;
  if (pad) {
    const std::uint32_t rec[2] = {0, kRecordPad};
    std::memcpy(r.data + off, rec, sizeof rec);
    out_head_ += pad;
    off = 0;
  }
  const std::uint32_t rec[2] = {static_cast<std::uint32_t>(len), flags};
  std::memcpy(r.data + off, rec, sizeof rec);
  if (len) std::memcpy(r.data + off + kRecordHeader, data, len);
  out_head_ += need;
  at(r.head).store(out_head_, std::memory_order_release);
  return true;
}

Result<MappedRings::Popped> MappedRings::pop(std::vector<std::uint8_t>& out) {
  Ring r = in_ring();
  for (;;) {
    std::uint64_t head = at(r.head).load(std::memory_order_acquire);
    std::uint64_t avail = head - in_tail_;
    if (avail == 0) return Popped::Empty;
    if (avail > size_ || avail % 8 != 0)
      return fail(EPROTO, "ring: the producer's head {} is not a record boundary within {} bytes",
                  head, size_);
    std::size_t off = in_tail_ & (size_ - 1);
    std::uint32_t rec[2];
    std::memcpy(rec, r.data + off, sizeof rec);
    std::size_t need = rec[1] == kRecordPad ? size_ - off : kRecordHeader + align8(rec[0]);
    bool known = rec[1] == 0 ? rec[0] != 0
                             : rec[0] == 0 && (rec[1] == kRecordPad || rec[1] == kRecordSocket);
    if (!known || need > size_ - off || need > avail)
      return fail(EPROTO, "ring: a record of {} bytes with flags {:#x} at {} cannot be", rec[0],
                  rec[1], in_tail_);
    if (rec[1] == 0) {
      const std::uint8_t* p = r.data + off + kRecordHeader;
      out.assign(p, p + rec[0]);
    }
    in_tail_ += need;
    at(r.tail).store(in_tail_, std::memory_order_release);
    if (rec[1] == 0) return Popped::Datagram;
    if (rec[1] == kRecordSocket) return Popped::OnSocket;
  }
}

bool MappedRings::readable() const {
  return at(in_ring().head).load(std::memory_order_acquire) != in_tail_;
}

// Both handshakes are Dekker's: each side stores its flag or index, then a full fence, then
// loads the other's. At least one of the two sees the other's store, so a sleeper is never
// left with a datagram and no doorbell.
bool MappedRings::prepare_sleep() {
  at(own_flag(kAsleep)).store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!readable()) return true;
  at(own_flag(kAsleep)).store(0, std::memory_order_relaxed);
  return false;
}

void MappedRings::awake() {
  at(own_flag(kAsleep)).store(0, std::memory_order_relaxed);
}

bool MappedRings::take_peer_asleep() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  auto flag = at(peer_flag(kAsleep));
  return flag.load(std::memory_order_relaxed) != 0 && flag.exchange(0) != 0;
}

bool MappedRings::prepare_wait_room(std::size_t datagram_size) {
  at(own_flag(kWantsRoom)).store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!fits(datagram_size)) return true;
  at(own_flag(kWantsRoom)).store(0, std::memory_order_relaxed);
  return false;
}

bool MappedRings::take_peer_wants_room() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  auto flag = at(peer_flag(kWantsRoom));
  return flag.load(std::memory_order_relaxed) != 0 && flag.exchange(0) != 0;
}

}  // namespace ifcore::rtnl
