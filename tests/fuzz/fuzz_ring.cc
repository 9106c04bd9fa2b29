// tests/fuzz/fuzz_ring.cc — the mapped-ring reader (rtnl/wire/ring.h) facing a hostile peer. The
// peer shares the ring file and may write any byte of it at any time: the indices in the
// header, the records of the ring it produces, the flags. One input is a list of steps:
//
//   step := op:u8 ...
//   0 poke   off:u16le len:u8 bytes[len]   bytes written into the file at off (the header
//                                          page and the request ring: 4096 + 65536 bytes)
//   1 head   v:u64le    the request ring's head, as a client would publish it
//   2 tail   v:u64le    the reply ring's tail, as a client would publish it
//   3 pop               the daemon reads requests until its ring is empty or refused
//   4 push   len:u16le  the daemon writes a reply of len bytes (refusals are fine)
//   5 client len:u16le bytes[len]   a well-behaved client pushes a request
//   6 handshake         the sleep and room handshakes of both sides
//   7 rhead  v:u64le    the reply ring's head, as a hostile daemon would publish it
//   8 cpop              the client reads replies until its ring is empty or refused
// (op is taken modulo 9). The client's side is fuzzed as well: its reader faces a daemon
// whose reply ring's head lies (step 7).
//
// Contract under test (ring.h, "Trust"): an index or a length that cannot be is EPROTO,
// never a read or write outside the ring, and every datagram handed out lies inside it.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "rtnl/wire/netlink.h"
#include "rtnl/wire/ring.h"

namespace ifcore::fuzz {
namespace {

// The header's layout (docs/WIRE.md, "Mapped rings"): each index on a cache line of its own.
constexpr std::size_t kHeaderSize = 4096;
constexpr std::size_t kReqHead = 64, kRepHead = 192, kRepTail = 256;
constexpr std::uint32_t kSize = rtnl::kRingMinSize;

struct Reader {
  std::span<const std::uint8_t> in;
  std::size_t off = 0;
  bool more() const { return off < in.size(); }
  std::uint8_t u8() { return off < in.size() ? in[off++] : 0; }
  std::uint64_t le(int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t{u8()} << (8 * i);
    return v;
  }
  std::span<const std::uint8_t> take(std::size_t n) {
    n = std::min(n, in.size() - off);
    auto s = in.subspan(off, n);
    off += n;
    return s;
  }
};

// A hostile client's own mapping of the ring file: what it writes, the daemon reads.
class Mapping {
 public:
  explicit Mapping(int fd) : length_(kHeaderSize + 2 * std::size_t{kSize}) {
    void* p = mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) std::abort();
    base_ = static_cast<std::uint8_t*>(p);
  }
  ~Mapping() { munmap(base_, length_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  // Writes within the header page and the request ring only: the reply ring is the
  // daemon's to write (a client that scribbles there only garbles its own replies).
  void poke(std::size_t off, std::span<const std::uint8_t> bytes) {
    const std::size_t limit = kHeaderSize + kSize;
    if (off >= limit) return;
    std::memcpy(base_ + off, bytes.data(), std::min(bytes.size(), limit - off));
  }
  void store64(std::size_t off, std::uint64_t v) {
    std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(base_ + off))
        .store(v, std::memory_order_release);
  }

 private:
  std::uint8_t* base_ = nullptr;
  std::size_t length_;
};

// A datagram handed out must be what a reader can parse: split it as the daemon would.
void consume(const std::vector<std::uint8_t>& d) {
  if (d.empty() || d.size() > kSize) std::abort();  // ring.h: never empty, within the ring
  (void)wire::split_messages(d);
}

void drain(rtnl::MappedRings& r) {
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 1024; ++i) {
    auto p = r.pop(out);
    if (!p || *p == rtnl::MappedRings::Popped::Empty) return;
    if (*p == rtnl::MappedRings::Popped::Datagram) consume(out);
  }
}

}  // namespace
}  // namespace ifcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ifcore;
  using fuzz::kSize;
  auto daemon = rtnl::MappedRings::create(kSize);
  if (!daemon) std::abort();
  auto client = rtnl::MappedRings::attach(dup(daemon->fd()));
  if (!client) std::abort();
  fuzz::Mapping hostile(daemon->fd());
  fuzz::Reader in{{data, size}};
  std::vector<std::uint8_t> buf;
  for (int steps = 0; in.more() && steps < 256; ++steps) {
    switch (in.u8() % 9) {
      case 0: {
        std::size_t off = in.le(2) % (fuzz::kHeaderSize + kSize);
        hostile.poke(off, in.take(in.u8()));
        break;
      }
      case 1:
        hostile.store64(fuzz::kReqHead, in.le(8));
        break;
      case 2:
        hostile.store64(fuzz::kRepTail, in.le(8));
        break;
      case 3:
        fuzz::drain(*daemon);
        break;
      case 4: {
        buf.assign(in.le(2), 0x5a);
        (void)daemon->fits(buf.size());
        if (auto r = daemon->push(buf); !r || !*r) (void)daemon->push_socket_record();
        break;
      }
      case 5: {
        auto bytes = in.take(in.le(2));
        if (auto r = client->push(bytes); r && !*r) (void)client->prepare_wait_room(bytes.size());
        break;
      }
      case 6:
        for (rtnl::MappedRings* r : {&*daemon, &*client}) {
          if (r->prepare_sleep()) r->awake();
          (void)r->take_peer_asleep();
          (void)r->take_peer_wants_room();
          (void)r->readable();
        }
        break;
      case 7:
        hostile.store64(fuzz::kRepHead, in.le(8));
        break;
      case 8:
        fuzz::drain(*client);
        break;
    }
  }
  return 0;
}
