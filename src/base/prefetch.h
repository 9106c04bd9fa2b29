// base/prefetch.h — deleting many objects that are no longer in the cache.
//
// Lock order: none.
#pragma once

#include <cstddef>
#include <span>

namespace ifcore {

// Deletes every object of `objs`, in order, fetching the first `bytes` of those a few
// places ahead while one is deleted. Objects freed a grace period after they were last
// touched (a batch of 10 000 devices) are out of the cache: each destructor would
// otherwise wait for its object's lines one after another.
template <class T>
void delete_prefetched(std::span<T* const> objs, std::size_t bytes = sizeof(T)) {
  constexpr std::size_t kAhead = 4, kLine = 64;
  const std::size_t n = objs.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      const auto* p = reinterpret_cast<const char*>(objs[i + kAhead]);
      for (std::size_t off = 0; off < bytes; off += kLine) __builtin_prefetch(p + off, 1);
    }
    delete objs[i];
  }
}

}  // namespace ifcore
