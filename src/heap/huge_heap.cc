// heap/huge_heap.cc — tcmalloc's heap in transparent huge pages, for the programs that may
// hold a million devices (compiled into each of them by ifcore_fast_malloc(... HUGE_PAGES):
// ifcored and the benches, not ifc; the library itself leaves the allocator to its
// embedder).
//
// A million devices are about 500 MB of small objects, each cut from memory the process
// touches for the first time: with 4 KiB pages that is 120 000 page faults, about a third
// of the time it takes to create them (docs/MEMORY.md). tcmalloc takes its memory from a
// system allocator that the program may replace (gperftools' SysAllocator): this one maps
// regions aligned to 2 MiB and asks the kernel for huge pages in them (MADV_HUGEPAGE, which
// the default "madvise" setting of transparent huge pages honours), so that one fault maps
// 2 MiB. IFCORE_HUGE_PAGES=0 in the environment keeps tcmalloc's own system allocator.
//
// The pages tcmalloc will cut next are faulted in ahead of it, on a thread of its own
// (Prefaulter, MADV_POPULATE_WRITE): the first touch of fresh memory costs a fault and the
// zeroing of its page (in a virtual machine also the host's backing of it), which was a
// third of the time it took to create a million devices; the prefaulter does it on the
// other CPU while the devices are made. It keeps at most kSkip + kAhead bytes faulted in
// beyond what tcmalloc was given.
//
// Lock order: none (tcmalloc calls Alloc under its own system-allocation lock; the mutex
// only makes this allocator safe on its own; the prefaulter takes no lock).
#include <gperftools/malloc_extension.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace ifcore {

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Reserved at a time: address space only (MAP_NORESERVE) until tcmalloc cuts pages from it.
constexpr std::size_t kRegion = std::size_t{64} << 20;

std::uintptr_t round_up(std::uintptr_t v, std::size_t to) {
  return (v + to - 1) & ~(std::uintptr_t{to} - 1);
}

// Faults in ranges of the heap on its own thread, one range asked at a time: a range asked
// while it works replaces the one before (what it never reaches is faulted in by whoever
// touches it first, as without it). Asking allocates nothing and takes no lock,
// so that tcmalloc's Alloc may ask. In a child after fork() the thread is gone and the
// ranges are never taken.
class Prefaulter {
 public:
  Prefaulter() {
    // Started with every signal blocked, which it keeps: a signal the program waits for
    // (ifcored's SIGTERM, taken from a signalfd with the signal blocked in its threads)
    // must not be delivered to this thread, which the program knows nothing of.
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    std::thread([this] { run(); }).detach();
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
  }

  // [from, from + bytes), both multiples of 4 KiB, bytes at most 256 MiB.
  void ask(std::uintptr_t from, std::size_t bytes) {
    asked_.store((from >> 12) << 16 | (bytes >> 12), std::memory_order_release);
    asked_.notify_one();
  }

 private:
  [[noreturn]] void run() {
    for (;;) {
      asked_.wait(0, std::memory_order_acquire);
      const std::uint64_t a = asked_.exchange(0, std::memory_order_acq_rel);
      if (a == 0) continue;
      // EINVAL before Linux 5.14: the pages are then faulted in as they are touched.
      madvise(reinterpret_cast<void*>((a >> 16) << 12), (a & 0xffff) << 12, MADV_POPULATE_WRITE);
    }
  }

  std::atomic<std::uint64_t> asked_{0};  // the page number << 16 | pages; 0: none
};

class HugePageHeap final : public SysAllocator {
 public:
  explicit HugePageHeap(SysAllocator* fallback) : fallback_(fallback) {}

  void* Alloc(std::size_t size, std::size_t* actual_size, std::size_t alignment) override {
    std::lock_guard<std::mutex> hold(mu_);
    size = round_up(size, kPage);
    if (alignment < kPage) alignment = kPage;
    std::uintptr_t at = round_up(next_, alignment);
    if (next_ == 0 || at + size > end_) {
      if (!map_region(size, alignment))
        return fallback_ ? fallback_->Alloc(size, actual_size, alignment) : nullptr;
      at = round_up(next_, alignment);
    }
    next_ = at + size;
    if (actual_size) *actual_size = size;
    // What the requests after the next will be given, faulted in ahead of them: the next
    // huge page is left to the program, which may be about to touch it (a batch of devices
    // outruns the prefaulter; two CPUs faulting the same page wait for each other). The
    // whole window each time (faulting in what is already mapped costs a walk of a few
    // page tables), so that one the prefaulter had no time for is covered by this one.
    const std::uintptr_t from = std::min(end_, next_ + kSkip), to = std::min(end_, from + kAhead);
    if (to > from) prefaulter_.ask(from, to - from);
    return reinterpret_cast<void*>(at);
  }

 private:
  static constexpr std::size_t kPage = 4096;
  static constexpr std::size_t kSkip = kHugePage;
  static constexpr std::size_t kAhead = std::size_t{4} << 20;

  // A new region of at least `size` bytes (aligned to `alignment`), starting on a huge
  // page. What was left of the last one stays unused address space.
  bool map_region(std::size_t size, std::size_t alignment) {
    const std::size_t want = round_up(std::max(size + alignment, kRegion), kHugePage);
    const std::size_t span = want + kHugePage;
    void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return false;
    const auto base = reinterpret_cast<std::uintptr_t>(m);
    const std::uintptr_t start = round_up(base, kHugePage);
    // The unaligned head and the tail beyond the region go back at once.
    if (start > base) munmap(m, start - base);
    if (const std::uintptr_t tail = base + span - (start + want); tail > 0)
      munmap(reinterpret_cast<void*>(start + want), tail);
    // EINVAL where transparent huge pages are not built in: plain pages then.
    madvise(reinterpret_cast<void*>(start), want, MADV_HUGEPAGE);
    next_ = start;
    end_ = start + want;
    return true;
  }

  SysAllocator* fallback_;
  std::mutex mu_;
  std::uintptr_t next_ = 0;
  std::uintptr_t end_ = 0;
  Prefaulter prefaulter_;
};

bool wanted() {
  const char* v = std::getenv("IFCORE_HUGE_PAGES");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

// Installed before main: what tcmalloc allocated before then (the C++ runtime's first
// blocks) stays where it is.
[[gnu::constructor]] void install_huge_heap() {
  if (!wanted()) return;
  // The first allocation makes tcmalloc set up its system allocator, which would
  // otherwise replace this one when it does.
  std::free(std::malloc(1));
  MallocExtension* ext = MallocExtension::instance();
  // Never destroyed: tcmalloc may grow its heap until the process's last moment.
  ext->SetSystemAllocator(new HugePageHeap(ext->GetSystemAllocator()));
}

}  // namespace

}  // namespace ifcore
