// References: sharded while live, exact once unregistering; see ref_shards.h.
//
// Lock order: RefShards::mu_ and Device::Tracker::mu are leaves.
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cassert>
#include <cstdlib>
#include <thread>

#include "base/rcu.h"
#include "core/engine_impl.h"
#include "core/ref_shards.h"
#include "ifcore/device.h"

namespace ifcore {

// ---------------------------------------------------------------- shards

namespace {
// Never destroyed: threads may outlive main. Made at load time, so no guard on each use.
RefShards* const g_shards = &RefShards::instance();
}  // namespace

RefShards& RefShards::instance() {
  static RefShards* shards = new RefShards();
  return *shards;
}

RefShards::RefShards() {
  long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
      syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
    membarrier_ok_ = true;
}

void RefShards::quiesce() {
  if (membarrier_ok_) {
    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  std::vector<Arena*> all;
  {
    MutexLock lk(mu_);
    all = arenas_;
  }
  for (Arena* a : all) {
    for (int spins = 0; a->busy.load(std::memory_order_acquire); ++spins)
      if (spins > 64) std::this_thread::yield();
  }
}

RefShards::Arena::~Arena() {
  for (auto& c : chunks) delete[] c.load();
}

std::atomic<std::int64_t>* RefShards::Arena::chunk(std::uint32_t i, bool create) {
  auto* c = chunks[i].load(std::memory_order_acquire);
  if (c || !create) return c;
  c = new std::atomic<std::int64_t>[kChunk]();
  chunks[i].store(c, std::memory_order_release);  // only the owner thread creates
  return c;
}

// The calling thread's arena: a trivial initial-exec thread-local for the fast path; the
// owner object that hands the arena back at thread exit is made on the slow path only.
thread_local RefShards::Arena* t_arena IFCORE_TLS_IE = nullptr;

struct ArenaOwner {
  RefShards::Arena* arena = nullptr;
  ~ArenaOwner() {
    if (!arena) return;
    auto& s = RefShards::instance();
    MutexLock lk(s.mu_);
    arena->owned.store(false);
    s.orphans_.push_back(arena);
    t_arena = nullptr;
  }
};

RefShards::Arena* RefShards::arena_for_thread() {
  if (t_arena) return t_arena;
  Arena* a;
  {
    MutexLock lk(mu_);
    if (!orphans_.empty()) {
      a = orphans_.back();
      orphans_.pop_back();
      a->owned.store(true);
    } else {
      a = new Arena();
      arenas_.push_back(a);
    }
  }
  static thread_local ArenaOwner owner;
  owner.arena = a;
  t_arena = a;
  return a;
}

namespace {

// The calling thread's free slots (RefShards::alloc_slot), returned when it exits.
struct SlotCache {
  std::vector<std::uint32_t> slots;
  ~SlotCache() {
    if (!slots.empty()) RefShards::instance().give_back(slots);
  }
};
thread_local SlotCache t_slots;

}  // namespace

std::uint32_t RefShards::alloc_slot() {
  auto& mine = t_slots.slots;
  if (mine.empty()) {
    MutexLock lk(mu_);
    while (mine.size() < kSlotRun && !free_slots_.empty()) {
      mine.push_back(free_slots_.back());
      free_slots_.pop_back();
    }
    // New slots for the rest of the run, pushed highest first so that they go out in order.
    std::uint32_t fresh = std::min<std::uint32_t>(
        static_cast<std::uint32_t>(kSlotRun - mine.size()), kChunk * kMaxChunks - next_slot_);
    for (std::uint32_t i = fresh; i-- > 0;) mine.push_back(next_slot_ + i);
    next_slot_ += fresh;
    if (mine.empty()) {
      std::fprintf(stderr, "ifcore: out of reference slots (%u devices alive)\n", next_slot_);
      std::abort();
    }
  }
  auto s = mine.back();
  mine.pop_back();
  return s;
}

void RefShards::free_slot(std::uint32_t slot) {
  auto& mine = t_slots.slots;
  mine.push_back(slot);
  if (mine.size() < 2 * kSlotRun) return;
  MutexLock lk(mu_);
  free_slots_.insert(free_slots_.end(), mine.end() - kSlotRun, mine.end());
  mine.resize(mine.size() - kSlotRun);
}

void RefShards::give_back(std::vector<std::uint32_t>& slots) {
  MutexLock lk(mu_);
  free_slots_.insert(free_slots_.end(), slots.begin(), slots.end());
  slots.clear();
}

std::int64_t RefShards::fold(std::uint32_t slot) {
  MutexLock lk(mu_);
  std::int64_t sum = 0;
  for (Arena* a : arenas_) {
    auto* c = a->chunk(slot / kChunk, false);
    if (!c) continue;
    sum += c[slot % kChunk].exchange(0, std::memory_order_acq_rel);
  }
  return sum;
}

void RefShards::fold_many(std::span<const std::uint32_t> slots, std::span<std::int64_t> sums) {
  MutexLock lk(mu_);
  for (std::size_t i = 0; i < slots.size(); ++i) sums[i] = 0;
  for (Arena* a : arenas_) {
    for (std::size_t i = 0; i < slots.size(); ++i) {
      auto* c = a->chunks[slots[i] / kChunk].load(std::memory_order_acquire);
      if (c) sums[i] += c[slots[i] % kChunk].exchange(0, std::memory_order_acq_rel);
    }
  }
}

std::int64_t RefShards::peek(std::uint32_t slot) const {
  MutexLock lk(mu_);
  std::int64_t sum = 0;
  for (Arena* a : arenas_) {
    auto* c = a->chunks[slot / kChunk].load(std::memory_order_acquire);
    if (c) sum += c[slot % kChunk].load(std::memory_order_relaxed);
  }
  return sum;
}

// ---------------------------------------------------------------- Ref

namespace {

inline RefShards& shards() {
  return *g_shards;
}

inline void shard_add(std::atomic<std::int64_t>& c, std::int64_t d) {
  // Single writer: a plain load and store, no locked instruction.
  c.store(c.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}

}  // namespace

// The busy section: mark, fence, read the flag, count, unmark (see ref_shards.h).
inline RefShards::Arena* enter() {
  RefShards::Arena* a = t_arena ? t_arena : shards().arena_for_thread();
  a->busy.store(1, std::memory_order_relaxed);
  if (__builtin_expect(shards().needs_full_fence(), 0))
    std::atomic_thread_fence(std::memory_order_seq_cst);
  else
    std::atomic_signal_fence(std::memory_order_seq_cst);
  return a;
}

inline void leave(RefShards::Arena* a) {
  a->busy.store(0, std::memory_order_release);
}

inline std::atomic<std::int64_t>& counter(RefShards::Arena* a, std::uint32_t slot) {
  auto* c = a->chunks[slot / RefShards::kChunk].load(std::memory_order_relaxed);  // owner-written
  if (__builtin_expect(c == nullptr, 0)) c = a->chunk(slot / RefShards::kChunk, true);
  return c[slot % RefShards::kChunk];
}

void DeviceAccess::get(Device& d) {
  RefShards::Arena* a = enter();
  if (!d.ref_dying_.load(std::memory_order_relaxed))
    shard_add(counter(a, d.ref_slot_), 1);
  else
    d.ref_exact_.fetch_add(1, std::memory_order_relaxed);
  leave(a);
}

void DeviceAccess::put(Device& d) {
  RefShards::Arena* a = enter();
  if (!d.ref_dying_.load(std::memory_order_relaxed)) {
    shard_add(counter(a, d.ref_slot_), -1);
    leave(a);
    return;
  }
  leave(a);
  drop_exact(d, 1);
}

bool DeviceAccess::drop_exact_last(Device& d, std::int64_t n) {
  auto before = d.ref_exact_.fetch_sub(n, std::memory_order_acq_rel);
  if (before < n) {
    d.engine().log(LogLevel::Error,
                   fmt::format("device id {}: reference count went negative", d.id()));
  }
  return before == n;
}

void DeviceAccess::drop_exact(Device& d, std::int64_t n) {
  if (drop_exact_last(d, n)) d.engine().impl().last_ref_dropped(d);
}

Ref::Ref(Device& dev, const char* holder) : dev_(&dev), holder_(holder) {
  DeviceAccess::get(dev);
  if (dev.tracker_) track_id_ = DeviceAccess::track(dev, holder);
}

Ref& Ref::operator=(Ref&& o) noexcept {
  if (this != &o) {
    reset();
    dev_ = o.dev_;
    holder_ = o.holder_;
    track_id_ = o.track_id_;
    o.dev_ = nullptr;
  }
  return *this;
}

void Ref::reset() {
  Device* d = dev_;
  if (!d) return;
  dev_ = nullptr;
  if (track_id_) DeviceAccess::untrack(*d, track_id_);
  track_id_ = 0;
  DeviceAccess::put(*d);
}

std::int64_t Device::refcount() const {
  std::int64_t exact = ref_exact_.load(std::memory_order_acquire);
  if (ref_dying_.load(std::memory_order_acquire)) return exact;
  return exact + RefShards::instance().peek(ref_slot_);
}

// ---------------------------------------------------------------- tracking (debug mode)

std::uint64_t DeviceAccess::track(Device& d, const char* holder) {
  auto& t = *d.tracker_;
  MutexLock lk(t.mu);
  auto id = ++t.next;
  t.live.emplace(id, holder ? holder : "?");
  return id;
}

void DeviceAccess::untrack(Device& d, std::uint64_t id) {
  auto& t = *d.tracker_;
  MutexLock lk(t.mu);
  t.live.erase(id);
}

std::vector<std::string> DeviceAccess::holders(const Device& d) {
  std::vector<std::string> out;
  if (!d.tracker_) return out;
  MutexLock lk(d.tracker_->mu);
  std::map<std::string, int> counts;
  for (auto& [id, h] : d.tracker_->live) ++counts[h];
  for (auto& [h, n] : counts) out.push_back(n == 1 ? h : fmt::format("{} x{}", h, n));
  return out;
}

// Switches a batch to exact counting: ONE grace period for the whole batch.
//
// Between setting the dying flag and the fold, a Ref taken live (counted in a shard) may be
// dropped exactly (counted in ref_exact_), so the exact count alone can dip below the
// truth. A bias keeps it far from zero until the shards are folded in (percpu_ref does
// the same), so the last put is recognised exactly once.
std::uint32_t DeviceAccess::start_dying(Device& d) {
  d.ref_exact_.fetch_add(kDyingBias, std::memory_order_acq_rel);
  d.ref_dying_.store(true, std::memory_order_release);
  return d.ref_slot_;
}

std::vector<std::int64_t> DeviceAccess::finish_dying(Engine::Impl& impl,
                                                     std::span<const std::uint32_t> slots) {
  // The grace period: no reader that found these devices before they were unlisted is
  // still about to take a Ref; quiesce: no get/put that missed the flag is still counting.
  impl.grace_period();
  auto& shards = RefShards::instance();
  shards.quiesce();
  std::vector<std::int64_t> drops(slots.size());
  shards.fold_many(slots, drops);
  for (std::int64_t& d : drops) d = kDyingBias - d;
  return drops;
}

void DeviceAccess::kill_refs(Engine::Impl& impl, std::span<Device* const> devs) {
  std::vector<std::uint32_t> slots(devs.size());
  for (std::size_t i = 0; i < devs.size(); ++i) {
    prefetch_refs(devs, i);
    slots[i] = start_dying(*devs[i]);
  }
  std::vector<std::int64_t> drops = finish_dying(impl, slots);
  for (std::size_t i = 0; i < devs.size(); ++i) {
    prefetch_refs(devs, i);
    drop_exact(*devs[i], drops[i]);
  }
}

}  // namespace ifcore
