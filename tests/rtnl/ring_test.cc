// tests/rtnl/ring_test.cc — mapped rings (src/rtnl/wire/ring.h): records in order across the
// wrap, room, socket records, the sleep handshake, and a peer that writes nonsense.
#include "rtnl/wire/ring.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <thread>

namespace ifcore::rtnl {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes datagram(std::size_t n, std::uint8_t seed) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 7);
  return b;
}

// Both ends of one ring file, as the daemon and a client hold them.
struct Pair {
  MappedRings daemon;
  MappedRings client;
};

Pair make_pair(std::uint32_t size = kRingMinSize) {
  auto d = MappedRings::create(size);
  EXPECT_TRUE(d) << d.error().message;
  auto c = MappedRings::attach(dup(d->fd()));
  EXPECT_TRUE(c) << c.error().message;
  return Pair{std::move(*d), std::move(*c)};
}

// The header as a peer could scribble on it: the file mapped once more.
struct Scribbler {
  explicit Scribbler(int fd) {
    base =
        static_cast<std::uint8_t*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  }
  ~Scribbler() { munmap(base, 4096); }
  void put64(std::size_t off, std::uint64_t v) { std::memcpy(base + off, &v, sizeof v); }
  std::uint8_t* base;
};
// Offsets of the indices in the header (docs/WIRE.md, "Mapped rings").
constexpr std::size_t kReqHead = 64, kRepTail = 256;

TEST(RingSize, OnlyPowersOfTwoInRange) {
  EXPECT_TRUE(check_ring_size(kRingMinSize));
  EXPECT_TRUE(check_ring_size(kRingMaxSize));
  EXPECT_EQ(check_ring_size(kRingMinSize + 8).error().code, EINVAL);
  EXPECT_EQ(check_ring_size(kRingMinSize / 2).error().code, EINVAL);
  EXPECT_EQ(check_ring_size(kRingMaxSize * 2).error().code, EINVAL);
  EXPECT_EQ(MappedRings::create(1000).error().code, EINVAL);
}

TEST(Ring, DatagramsArriveInOrderBothWays) {
  auto [d, c] = make_pair();
  Bytes out;
  EXPECT_EQ(*d.pop(out), MappedRings::Popped::Empty);
  ASSERT_TRUE(*c.push(datagram(32, 1)));
  ASSERT_TRUE(*c.push(datagram(5, 2)));
  EXPECT_TRUE(d.readable());
  EXPECT_FALSE(c.readable());
  ASSERT_EQ(*d.pop(out), MappedRings::Popped::Datagram);
  EXPECT_EQ(out, datagram(32, 1));
  ASSERT_EQ(*d.pop(out), MappedRings::Popped::Datagram);
  EXPECT_EQ(out, datagram(5, 2));
  EXPECT_EQ(*d.pop(out), MappedRings::Popped::Empty);
  ASSERT_TRUE(*d.push(datagram(36, 3)));
  ASSERT_EQ(*c.pop(out), MappedRings::Popped::Datagram);
  EXPECT_EQ(out, datagram(36, 3));
}

// attach() readies the client's mapping page by page (src/rtnl/wire/ring.cc, warm): what the
// daemon pushed before the client mapped the file, over several pages, arrives unchanged.
TEST(Ring, RepliesPushedBeforeTheClientAttachesSurviveIt) {
  auto d = MappedRings::create(kRingMinSize);
  ASSERT_TRUE(d) << d.error().message;
  constexpr int kCount = 12;  // 12 x 3000 bytes: across nine pages of the reply ring
  for (int i = 0; i < kCount; ++i)
    ASSERT_TRUE(*d->push(datagram(3000, static_cast<std::uint8_t>(i))));
  auto c = MappedRings::attach(dup(d->fd()));
  ASSERT_TRUE(c) << c.error().message;
  Bytes out;
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(*c->pop(out), MappedRings::Popped::Datagram);
    EXPECT_EQ(out, datagram(3000, static_cast<std::uint8_t>(i)));
  }
  EXPECT_EQ(*c->pop(out), MappedRings::Popped::Empty);
  ASSERT_TRUE(*c->push(datagram(100, 42)));
  ASSERT_EQ(*d->pop(out), MappedRings::Popped::Datagram);
  EXPECT_EQ(out, datagram(100, 42));
}

TEST(Ring, FullRingRefusesUntilTheConsumerReads) {
  auto [d, c] = make_pair();
  const std::size_t n = c.max_datagram();
  int pushed = 0;
  while (*c.push(datagram(n, 9))) ++pushed;
  EXPECT_EQ(pushed, 3);  // a quarter of the ring and its record header: three fit, not four
  EXPECT_FALSE(c.fits(n));
  EXPECT_TRUE(c.prepare_wait_room(n));  // no room: the producer may wait
  Bytes out;
  ASSERT_EQ(*d.pop(out), MappedRings::Popped::Datagram);
  EXPECT_TRUE(d.take_peer_wants_room());   // the consumer is told to ring the doorbell
  EXPECT_FALSE(d.take_peer_wants_room());  // once
  EXPECT_FALSE(c.prepare_wait_room(n));    // room now: push again instead of waiting
  EXPECT_TRUE(*c.push(datagram(n, 10)));
}

TEST(Ring, OversizeAndEmptyDatagramsAreEmsgsize) {
  auto [d, c] = make_pair();
  EXPECT_EQ(c.push(datagram(c.max_datagram() + 1, 0)).error().code, EMSGSIZE);
  EXPECT_EQ(c.push(Bytes{}).error().code, EMSGSIZE);
  Bytes out;
  EXPECT_EQ(*d.pop(out), MappedRings::Popped::Empty);  // nothing was written
}

TEST(Ring, SocketRecordKeepsItsPlace) {
  auto [d, c] = make_pair();
  ASSERT_TRUE(*d.push(datagram(10, 1)));
  ASSERT_TRUE(d.fits(0));
  ASSERT_TRUE(*d.push_socket_record());
  ASSERT_TRUE(*d.push(datagram(11, 2)));
  Bytes out;
  ASSERT_EQ(*c.pop(out), MappedRings::Popped::Datagram);
  EXPECT_EQ(out, datagram(10, 1));
  EXPECT_EQ(*c.pop(out), MappedRings::Popped::OnSocket);
  ASSERT_EQ(*c.pop(out), MappedRings::Popped::Datagram);
  EXPECT_EQ(out, datagram(11, 2));
}

TEST(Ring, RecordsCrossTheEndThroughPadRecords) {
  // Sizes that do not divide the ring: records keep landing near its end.
  auto [d, c] = make_pair();
  Bytes out;
  for (int i = 0; i < 5000; ++i) {
    std::size_t n = 1 + (i * 977) % 5000;
    ASSERT_TRUE(*c.push(datagram(n, static_cast<std::uint8_t>(i))));
    ASSERT_EQ(*d.pop(out), MappedRings::Popped::Datagram);
    ASSERT_EQ(out, datagram(n, static_cast<std::uint8_t>(i))) << "datagram " << i;
  }
}

TEST(Ring, TwoThreadsPassEveryDatagramIntact) {
  auto [d, c] = make_pair();
  constexpr int kCount = 100000;
  auto& client = c;  // a structured binding cannot be captured before C++20's P1091 (clang 16)
  std::thread producer([&client] {
    std::mt19937 rng(1);
    for (int i = 0; i < kCount; ++i) {
      Bytes b = datagram(1 + rng() % 3000, static_cast<std::uint8_t>(i));
      while (!*client.push(b)) std::this_thread::yield();
    }
  });
  std::mt19937 rng(1);
  Bytes out;
  for (int i = 0; i < kCount;) {
    auto p = d.pop(out);
    ASSERT_TRUE(p);
    if (*p == MappedRings::Popped::Empty) continue;
    ASSERT_EQ(out, datagram(1 + rng() % 3000, static_cast<std::uint8_t>(i))) << "datagram " << i;
    ++i;
  }
  producer.join();
}

TEST(Ring, SleepHandshakeNeverMissesADatagram) {
  auto [d, c] = make_pair();
  EXPECT_FALSE(c.take_peer_asleep());  // the daemon is awake
  EXPECT_TRUE(d.prepare_sleep());      // nothing queued: it may sleep
  ASSERT_TRUE(*c.push(datagram(8, 1)));
  EXPECT_TRUE(c.take_peer_asleep());   // so the client rings the doorbell
  EXPECT_FALSE(c.take_peer_asleep());  // once per sleep
  d.awake();
  EXPECT_FALSE(d.prepare_sleep());     // a datagram waits: do not sleep
  EXPECT_FALSE(c.take_peer_asleep());  // and the flag went down again
}

TEST(Ring, NonsenseIndicesAreEproto) {
  auto [d, c] = make_pair();
  Scribbler s(d.fd());
  Bytes out;
  s.put64(kReqHead, 12345);  // not a record boundary
  EXPECT_EQ(d.pop(out).error().code, EPROTO);
  s.put64(kReqHead, std::uint64_t{1} << 40);  // far beyond the ring
  EXPECT_EQ(d.pop(out).error().code, EPROTO);
  s.put64(kRepTail, 999999);  // the client claims to have read what was never written
  EXPECT_EQ(d.push(datagram(8, 1)).error().code, EPROTO);
}

TEST(Ring, NonsenseRecordsAreEproto) {
  auto [d, c] = make_pair();
  Bytes out;
  // A record header claiming more bytes than were published.
  ASSERT_TRUE(*c.push(datagram(8, 1)));
  auto* ring = static_cast<std::uint8_t*>(
      mmap(nullptr, 4096 + kRingMinSize, PROT_READ | PROT_WRITE, MAP_SHARED, d.fd(), 0));
  ASSERT_NE(ring, MAP_FAILED);
  std::uint32_t bad[2] = {4096, 0};
  std::memcpy(ring + 4096, bad, sizeof bad);
  EXPECT_EQ(d.pop(out).error().code, EPROTO);
  // Unknown flags.
  std::uint32_t flags[2] = {8, 0x80};
  std::memcpy(ring + 4096, flags, sizeof flags);
  EXPECT_EQ(d.pop(out).error().code, EPROTO);
  munmap(ring, 4096 + kRingMinSize);
}

TEST(Ring, AttachRefusesWhatIsNoRingFile) {
  int fd = memfd_create("not-a-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 4096 + 2 * kRingMinSize), 0);
  EXPECT_EQ(MappedRings::attach(dup(fd)).error().code, EPROTO);  // unsealed
  ASSERT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
  EXPECT_EQ(MappedRings::attach(dup(fd)).error().code, EPROTO);  // no magic
  close(fd);
}

}  // namespace
}  // namespace ifcore::rtnl
