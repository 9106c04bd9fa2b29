// tests/rtnl/daemon_ring_isolation_test.cc — the ring file reaches nothing but its own
// rings: each client has a file of its own, sealed against resizing and further seals; an
// index or a length it writes that cannot be is EPROTO and closes that client alone, while
// another keeps being served.
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "rtnl/daemon_fixture.h"

#ifdef IFCORED_PATH

namespace ifcore::rtnl::test {
namespace {

using namespace ifcore::wire::test;

// The ring file's header (docs/WIRE.md, "Mapped rings"): the four indices, each on a cache
// line of its own, then the rings after the first page.
constexpr std::size_t kReqHead = 64, kRepHead = 192, kRepTail = 256;
constexpr std::size_t kPage = 4096;

// True when the daemon closes `c`'s connection within five seconds (doorbells it sends
// before are read and skipped).
bool closed_by_daemon(RingConn& c) {
  for (int i = 0; i < 50; ++i) {
    pollfd p{c.conn.fd, POLLIN, 0};
    if (poll(&p, 1, 100) == 0) continue;
    char b[64];
    ssize_t n = ::recv(c.conn.fd, b, sizeof b, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
  }
  return false;
}

class RingIsolationTest : public DaemonTest {
 protected:
  void SetUp() override {
    DaemonTest::SetUp();
    log_ = dir_ + ".log";
  }
  void TearDown() override {
    DaemonTest::TearDown();
    unlink(log_.c_str());
  }
  // Starts ifcored with its standard error in a file of the test's.
  void start_logged() {
    int saved = dup(2);
    int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    dup2(fd, 2);
    start();
    dup2(saved, 2);
    close(saved);
    close(fd);
  }
  std::string log() const {
    std::ifstream in(log_);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // A client on rings whose file the test also maps, to write lies into it.
  struct Mapped {
    std::uint8_t* base = nullptr;
    std::size_t length = 0;
    ~Mapped() {
      if (base) munmap(base, length);
    }
    void put(std::size_t off, std::uint64_t v) const { std::memcpy(base + off, &v, sizeof v); }
    std::uint64_t get(std::size_t off) const {
      std::uint64_t v;
      std::memcpy(&v, base + off, sizeof v);
      return v;
    }
  };
  static void map(const RingConn& c, Mapped& m) {
    m.length = kPage + 2 * std::size_t{c.ring->size()};
    void* p = mmap(nullptr, m.length, PROT_READ | PROT_WRITE, MAP_SHARED, c.ring->fd(), 0);
    ASSERT_NE(p, MAP_FAILED);
    m.base = static_cast<std::uint8_t*>(p);
  }
  // Writes a lie with `lie`, rings the doorbell (and sends `then` through the ring when
  // given), and checks that the daemon closed that client with EPROTO while `good` is served.
  void expect_lie_closes_only_its_client(const std::function<void(Mapped&, std::uint32_t)>& lie,
                                         bool then_request = false) {
    RingConn good(try_connect());
    ASSERT_EQ(good.switch_rings({}), 0);
    RingConn bad(try_connect());
    ASSERT_EQ(bad.switch_rings({}, kRingMinSize), 0);
    Mapped m;
    map(bad, m);
    lie(m, bad.ring->size());
    if (then_request) {
      wire::GetLinkRequest g;
      g.name = "lo";
      bad.send_dg(getlink(1, g));
    }
    bad.ring_doorbell();
    EXPECT_TRUE(closed_by_daemon(bad)) << "the daemon kept a connection whose ring lies";
    EXPECT_NE(log().find("EPROTO: ring: "), std::string::npos) << log();
    good.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("g" + std::to_string(++made_), "dummy")));
    EXPECT_EQ(good.until_end().last_error(), 0);
  }
  std::string log_;
  int made_ = 0;
};

TEST_F(RingIsolationTest, EachClientHasASealedFileOfItsOwn) {
  start();
  RingConn a(try_connect()), b(try_connect());
  ASSERT_EQ(a.switch_rings({}), 0);
  ASSERT_EQ(b.switch_rings({}), 0);
  struct stat sa {
  }, sb{};
  ASSERT_EQ(fstat(a.ring->fd(), &sa), 0);
  ASSERT_EQ(fstat(b.ring->fd(), &sb), 0);
  EXPECT_NE(sa.st_ino, sb.st_ino) << "two clients share a ring file";
  EXPECT_EQ(sa.st_size, static_cast<off_t>(kPage + 2 * std::size_t{a.ring->size()}));
  for (int fd : {a.ring->fd(), b.ring->fd()}) {
    int seals = fcntl(fd, F_GET_SEALS);
    EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
              F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    errno = 0;
    EXPECT_EQ(ftruncate(fd, sa.st_size * 2), -1);
    EXPECT_EQ(errno, EPERM);
    errno = 0;
    EXPECT_EQ(ftruncate(fd, kPage), -1);
    EXPECT_EQ(errno, EPERM);
    errno = 0;
    EXPECT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), -1);  // no seal may be added or removed
    EXPECT_EQ(errno, EPERM);
  }
  // Requests through one ring touch nothing of the other.
  Mapped mb;
  map(b, mb);
  std::uint64_t b_req = mb.get(kReqHead), b_rep = mb.get(kRepHead);
  a.send_dg(link_msg(RTM_NEWLINK, kCreate, 1, named("a0", "dummy")));
  EXPECT_EQ(a.until_end().last_error(), 0);
  EXPECT_EQ(mb.get(kReqHead), b_req);
  EXPECT_EQ(mb.get(kRepHead), b_rep);
  // A client that writes nonsense over all of its file is closed; the other goes on.
  Mapped ma;
  map(a, ma);
  std::memset(ma.base, 0xa5, ma.length);
  a.ring_doorbell();
  EXPECT_TRUE(closed_by_daemon(a));
  b.send_dg(link_msg(RTM_NEWLINK, kCreate, 2, named("b0", "dummy")));
  EXPECT_EQ(b.until_end().last_error(), 0);
}

TEST_F(RingIsolationTest, RequestHeadFarAheadOfTheTail) {
  start_logged();
  expect_lie_closes_only_its_client(
      [](Mapped& m, std::uint32_t size) { m.put(kReqHead, 4 * std::uint64_t{size}); });
}

TEST_F(RingIsolationTest, RecordLongerThanTheRing) {
  start_logged();
  expect_lie_closes_only_its_client([](Mapped& m, std::uint32_t size) {
    const std::uint32_t rec[2] = {size, 0};  // the whole ring, and its header besides
    std::memcpy(m.base + kPage, rec, sizeof rec);
    m.put(kReqHead, size);
  });
}

TEST_F(RingIsolationTest, RecordLongerThanWhatTheHeadPublished) {
  start_logged();
  expect_lie_closes_only_its_client([](Mapped& m, std::uint32_t) {
    const std::uint32_t rec[2] = {200, 0};  // 208 bytes, of which the head publishes 16
    std::memcpy(m.base + kPage, rec, sizeof rec);
    m.put(kReqHead, 16);
  });
}

TEST_F(RingIsolationTest, RecordWithUnknownFlags) {
  start_logged();
  expect_lie_closes_only_its_client([](Mapped& m, std::uint32_t) {
    const std::uint32_t rec[2] = {8, 0x80};
    std::memcpy(m.base + kPage, rec, sizeof rec);
    m.put(kReqHead, 16);
  });
}

TEST_F(RingIsolationTest, ReplyTailAheadOfTheHead) {
  start_logged();
  // The consumer claims to have read what was never written: the daemon's next reply finds
  // the claim impossible.
  expect_lie_closes_only_its_client(
      [](Mapped& m, std::uint32_t) { m.put(kRepTail, m.get(kRepHead) + 4096); }, true);
}

}  // namespace
}  // namespace ifcore::rtnl::test

#endif  // IFCORED_PATH
