// base/prefetch.h — fetching objects ahead of their use, and deleting many objects that are
// no longer in the cache.
//
// Lock order: none.
#pragma once

#include <cstddef>
#include <span>

namespace ifcore {

inline constexpr std::size_t kCacheLine = 64;

// Fetches the first `bytes` of `p` into the cache, line by line; `for_write` when the
// caller will write them (a destructor, the allocator's free list).
inline void prefetch_lines(const void* p, std::size_t bytes, bool for_write = false) {
  const auto* c = static_cast<const char*>(p);
  for (std::size_t off = 0; off < bytes; off += kCacheLine)
    for_write ? __builtin_prefetch(c + off, 1) : __builtin_prefetch(c + off, 0);
}

// Deletes every object of `objs`, in order, fetching the first `bytes` of those a few
// places ahead while one is deleted. Objects freed a grace period after they were last
// touched (a batch of 10 000 devices) are out of the cache: each destructor would
// otherwise wait for its object's lines one after another.
template <class T>
void delete_prefetched(std::span<T* const> objs, std::size_t bytes = sizeof(T)) {
  constexpr std::size_t kAhead = 4;
  const std::size_t n = objs.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) prefetch_lines(objs[i + kAhead], bytes, true);
    delete objs[i];
  }
}

}  // namespace ifcore
