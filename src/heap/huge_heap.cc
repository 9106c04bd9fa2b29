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
// Lock order: none (tcmalloc calls Alloc under its own system-allocation lock; the mutex
// only makes this allocator safe on its own).
#include <gperftools/malloc_extension.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace ifcore {

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Reserved at a time: address space only (MAP_NORESERVE) until tcmalloc cuts pages from it.
constexpr std::size_t kRegion = std::size_t{64} << 20;

std::uintptr_t round_up(std::uintptr_t v, std::size_t to) {
  return (v + to - 1) & ~(std::uintptr_t{to} - 1);
}

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
    return reinterpret_cast<void*>(at);
  }

 private:
  static constexpr std::size_t kPage = 4096;

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
