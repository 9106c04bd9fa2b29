// Sharded reference counters (the kernel's percpu_ref idea, per thread here).
//
// Every device owns a slot number. Every thread that takes or drops references owns an
// arena: one counter per slot, written only by that thread (relaxed load + store, no
// shared cache line). A live device's count is its exact count plus the sum of its slot
// over every arena. To switch a batch of devices to exact counting: set each device's
// dying flag, wait ONE grace period, then `quiesce()` and fold the shards into the exact
// count.
//
// Each get/put marks its arena busy around "read the dying flag, add to the shard", with
// only a compiler fence. quiesce() issues one membarrier(PRIVATE_EXPEDITED) — a full
// barrier on every thread of the process — and then waits for the few arenas that are
// busy at that instant: every get/put that read the dying flag as clear has then finished
// adding to its shard, and every later one sees the flag set (the asymmetric fence that
// liburcu's memb flavor uses for its read side). Without membarrier, the fast path uses a
// full fence instead.
//
// Lock order: RefShards::mu_ is a leaf (see engine.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "ifcore/mutex.h"

namespace ifcore {

class RefShards {
 public:
  static constexpr std::uint32_t kChunk = 4096;
  static constexpr std::uint32_t kMaxChunks = 2048;  // 8 M slots

  static RefShards& instance();

  // Slots. Context: any thread. A freed slot must read zero in every arena. Each thread
  // keeps a few free slots of its own, taken from and given back to the shared list in
  // runs (kSlotRun), so that threads that make and free devices at once (two namespaces'
  // writers, the RCU callback thread) do not take turns at mu_ for every device.
  std::uint32_t alloc_slot();
  void free_slot(std::uint32_t slot);
  static constexpr std::size_t kSlotRun = 64;
  // Moves a thread's cached slots back to the shared list (at the thread's exit).
  void give_back(std::vector<std::uint32_t>& slots);

  // Sums the slot over every arena and zeroes it. Context: after the grace period that
  // follows setting the device's dying flag (no concurrent writers of this slot).
  std::int64_t fold(std::uint32_t slot);
  // fold() for many slots under one lock: sums[i] receives slots[i]'s sum.
  void fold_many(std::span<const std::uint32_t> slots, std::span<std::int64_t> sums);
  // Sums without zeroing (approximate while writers run). Context: any thread.
  std::int64_t peek(std::uint32_t slot) const;
  // Waits until no get/put that may have missed a dying flag set before the call is still
  // running. Context: any thread but a get/put; never inside a busy section.
  void quiesce();
  // True when the fast path needs a full fence (no membarrier on this system).
  bool needs_full_fence() const { return !membarrier_ok_; }

  struct Arena {
    std::atomic<std::uint32_t> busy{0};  // owner: 1 around a get/put
    std::atomic<std::atomic<std::int64_t>*> chunks[kMaxChunks] = {};
    std::atomic<bool> owned{true};
    ~Arena();
    std::atomic<std::int64_t>* chunk(std::uint32_t i, bool create);
  };

 private:
  RefShards();

 public:
  // The calling thread's arena (made on first use). Context: any thread.
  Arena* arena_for_thread();

 private:
  mutable Mutex mu_;  // LOCK ORDERING: a leaf
  // Never shrinks: a dead thread's counts still count.
  std::vector<Arena*> arenas_ IFCORE_GUARDED_BY(mu_);
  // Arenas of exited threads, reused by new threads.
  std::vector<Arena*> orphans_ IFCORE_GUARDED_BY(mu_);
  std::vector<std::uint32_t> free_slots_ IFCORE_GUARDED_BY(mu_);
  std::uint32_t next_slot_ IFCORE_GUARDED_BY(mu_) = 0;
  bool membarrier_ok_ = false;
  friend struct ArenaOwner;
};

}  // namespace ifcore
