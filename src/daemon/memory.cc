// daemon/memory.cc — the heap reserve ifcored touches at start (see reserve_heap).
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "daemon/daemon.h"

#ifdef IFCORE_TCMALLOC_LINKED
#include <gperftools/malloc_extension.h>
#endif

namespace ifcore::daemon {

namespace {

constexpr std::size_t kPage = 4096;

void touch(char* p, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += kPage) static_cast<volatile char*>(p)[i] = 0;
}

}  // namespace

void reserve_heap(std::size_t mib) {
  if (mib == 0) return;
  const std::size_t bytes = mib << 20;
#ifdef IFCORE_TCMALLOC_LINKED
  // One span from tcmalloc's page heap, faulted in and freed: small objects are then cut
  // from it. A release rate of 0 keeps the page heap from returning it to the system.
  MallocExtension::instance()->SetMemoryReleaseRate(0.0);
  if (char* p = static_cast<char*>(std::malloc(bytes))) {
    touch(p, bytes);
    std::free(p);
  }
#else
  // glibc: blocks below the mmap threshold come from the heap, which is not trimmed.
  constexpr std::size_t kBlock = std::size_t{64} << 10;
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(std::min<std::size_t>(2 * bytes, 1u << 30)));
  std::vector<char*> blocks;
  blocks.reserve(bytes / kBlock);
  for (std::size_t got = 0; got < bytes; got += kBlock) {
    auto* p = static_cast<char*>(std::malloc(kBlock));
    if (!p) break;
    touch(p, kBlock);
    blocks.push_back(p);
  }
  for (char* p : blocks) std::free(p);
#endif
}

}  // namespace ifcore::daemon
