// tests/heap/huge_heap_test.cc — the heap in huge pages (src/heap/huge_heap.cc): its
// regions are advised for huge pages, and the pages a little past what tcmalloc was given are
// faulted in ahead of it, before the program touches them.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;

bool huge_heap_in_use() {
#ifdef IFCORE_TCMALLOC_LINKED
  const char* v = std::getenv("IFCORE_HUGE_PAGES");
  return v == nullptr || std::strcmp(v, "0") != 0;
#else
  return false;
#endif
}

// Pages of [from, from + bytes) resident, or -1 where part of it is not mapped.
long resident_pages(std::uintptr_t from, std::size_t bytes) {
  const long page = sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> in(bytes / static_cast<std::size_t>(page));
  if (mincore(reinterpret_cast<void*>(from), bytes, in.data()) != 0) return -1;
  return std::count_if(in.begin(), in.end(), [](unsigned char c) { return (c & 1) != 0; });
}

// Small blocks, each written to, `bytes` of them in all; the end of the highest.
std::uintptr_t allocate_small(std::vector<char*>& blocks, std::size_t bytes) {
  constexpr std::size_t kBlock = 512;
  std::uintptr_t edge = 0;
  for (std::size_t got = 0; got < bytes; got += kBlock) {
    auto* p = static_cast<char*>(std::malloc(kBlock));
    p[0] = 1;
    blocks.push_back(p);
    edge = std::max(edge, reinterpret_cast<std::uintptr_t>(p) + kBlock);
  }
  return edge;
}

// Pages of [from, from + bytes) resident, in the parts of it that are mapped (2 MiB each).
long resident_where_mapped(std::uintptr_t from, std::size_t bytes) {
  long n = 0;
  for (std::uintptr_t at = from; at < from + bytes; at += kHugePage)
    n += std::max(0L, resident_pages(at, kHugePage));
  return n;
}

TEST(HugeHeap, ThePagesPastTheHeapsEdgeAreFaultedInBeforeTheyAreTouched) {
  if (!huge_heap_in_use()) GTEST_SKIP() << "the heap is not tcmalloc's in huge pages here";
  std::vector<char*> blocks;
  blocks.reserve(std::size_t{1} << 20);
  // tcmalloc grows its heap 1 MiB at a time as the blocks are made, and the prefaulter is
  // asked each time for 4 MiB from a huge page past what tcmalloc holds: once the blocks
  // are made, the last of those windows meets the 6 MiB past the huge page after the one
  // the program wrote to last, where nothing of the program's is (and where nothing would be
  // resident without the prefaulter, a huge page being faulted in whole only when one of its bytes
  // is touched).
  const std::uintptr_t edge = allocate_small(blocks, std::size_t{24} << 20);
  const std::uintptr_t from = (edge + kHugePage - 1) / kHugePage * kHugePage + kHugePage;
  const std::size_t span = 3 * kHugePage;
  // The prefaulter works on its own thread: it is given ten seconds.
  long resident = resident_where_mapped(from, span);
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       resident == 0 && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    resident = resident_where_mapped(from, span);
  }
  EXPECT_GT(resident, 0) << "no page resident in the 6 MiB at " << std::hex << from;
  for (char* p : blocks) std::free(p);
}

TEST(HugeHeap, ItsRegionsAreAdvisedForHugePages) {
  if (!huge_heap_in_use()) GTEST_SKIP() << "the heap is not tcmalloc's in huge pages here";
  std::vector<char*> blocks;
  const std::uintptr_t edge = allocate_small(blocks, std::size_t{4} << 20);
  // The mapping that holds the heap's edge has "hg" among its VmFlags.
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false, advised = false, found = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo < edge && edge <= hi;
      found = found || inside;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      advised = line.find(" hg") != std::string::npos;
    }
  }
  ASSERT_TRUE(found) << "no mapping holds " << std::hex << edge;
  EXPECT_TRUE(advised);
  for (char* p : blocks) std::free(p);
}

// The prefaulter's thread, started before main, takes no signal: a program that blocks
// SIGTERM in its own threads to read it from a signalfd (ifcored) would otherwise be
// killed by it.
TEST(HugeHeap, ItsThreadBlocksEverySignal) {
  if (!huge_heap_in_use()) GTEST_SKIP() << "the heap is not tcmalloc's in huge pages here";
  const std::string self = std::to_string(gettid());
  int others = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    if (task.path().filename() == self) continue;
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("SigBlk:", 0) == 0) {
        const unsigned long long blocked = std::stoull(line.substr(7), nullptr, 16);
        EXPECT_NE(blocked & (1ull << (SIGTERM - 1)), 0u) << task.path() << ": " << line;
        EXPECT_NE(blocked & (1ull << (SIGINT - 1)), 0u) << task.path() << ": " << line;
        ++others;
      }
  }
  EXPECT_GE(others, 1) << "no thread besides the test's";
}

}  // namespace
