// Registry's batches: many devices listed or unlisted at once, the name table's entries
// inserted or erased bucket by bucket, so that liburcu's buckets are read in memory order
// and each bucket's entries are found in the cache.
//
// Lock order: writers hold the control lock; readers only an RCU read-side section.
#include <urcu/rculfhash.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cerrno>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/prefetch.h"
#include "core/engine_impl.h"
#include "core/name_node.h"
#include "core/registry.h"
#include "ifcore/device.h"

namespace ifcore {

std::uint64_t Registry::split_order(std::uint64_t hash) {
  // liburcu's rculfhash orders its list by the bit-reversed hash.
  hash = ((hash >> 1) & 0x5555555555555555ull) | ((hash & 0x5555555555555555ull) << 1);
  hash = ((hash >> 2) & 0x3333333333333333ull) | ((hash & 0x3333333333333333ull) << 2);
  hash = ((hash >> 4) & 0x0f0f0f0f0f0f0f0full) | ((hash & 0x0f0f0f0f0f0f0f0full) << 4);
  return __builtin_bswap64(hash);
}

namespace {

using NameNode = Registry::NameNode;

// A name entry with its name's hash.
struct Entry {
  std::uint64_t hash;
  NameNode* node;
};

// The entries of `nodes` (their hashes `hashes`) in the order of the buckets of a table of
// `buckets` (a power of 2) they are in: a counting sort on each hash's low bits (the
// bucket), in blocks of neighbouring buckets when the table has more buckets than the
// least power of 2 above the count of entries. Each insert or erase reads its bucket (in liburcu's
// arrays: these are then read in memory order) and walks its bucket's part of the list
// (the entries before it in its bucket, just inserted or erased, are in the cache). The
// walk over them reads nothing else: a list of positions would send each step to the
// arrays out of memory order.
std::vector<Entry> in_bucket_order(std::span<const std::uint64_t> hashes,
                                   const std::vector<NameNode*>& nodes, std::size_t buckets) {
  const int table_bits = std::countr_zero(buckets);
  const int bits = std::min(table_bits, static_cast<int>(std::bit_width(hashes.size())));
  auto block = [&](std::uint64_t hash) {
    return static_cast<std::size_t>((hash & (buckets - 1)) >> (table_bits - bits));
  };
  std::vector<std::uint32_t> start((std::size_t{1} << bits) + 1, 0);
  for (std::uint64_t h : hashes) ++start[block(h) + 1];
  for (std::size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<Entry> sorted(hashes.size());
  for (std::size_t i = 0; i < hashes.size(); ++i)
    sorted[start[block(hashes[i])]++] = {hashes[i], nodes[i]};
  return sorted;
}

// Calls step(entry) on each entry in order, inside read-side sections of
// Registry::kReadSection entries, the entries a few places ahead fetched. Stops at the
// first step that returns false; returns how many returned true.
template <class Step>
std::size_t walk(const std::vector<Entry>& sorted, Step step) {
  constexpr std::size_t kAhead = 8;
  std::size_t k = 0;
  while (k < sorted.size()) {
    rcu::ReadGuard g;
    for (const std::size_t end = std::min(sorted.size(), k + Registry::kReadSection); k < end;
         ++k) {
      if (k + kAhead < sorted.size()) __builtin_prefetch(sorted[k + kAhead].node, 1);
      if (!step(sorted[k])) return k;
    }
  }
  return k;
}

}  // namespace

void Registry::prefetch_unlisting(std::span<Device* const> devs, std::size_t i) {
  constexpr std::size_t kDeviceAhead = 8, kEntryAhead = 4;
  if (i + kDeviceAhead < devs.size()) prefetch_lines(devs[i + kDeviceAhead], 2 * kCacheLine);
  if (i + kEntryAhead < devs.size())
    if (void* e = DeviceAccess::name_node(*devs[i + kEntryAhead])) __builtin_prefetch(e);
}

std::uint64_t Registry::table_order(Device& dev) {
  const auto* n = static_cast<const NameNode*>(DeviceAccess::name_node(dev));
  return n ? n->node.reverse_hash : 0;
}

Result<void> Registry::insert_many(std::span<Device* const> devs,
                                   std::span<const std::string_view> names,
                                   std::span<const std::uint64_t> hashes, BulkFault& fault) {
  std::vector<NameNode*> nodes(devs.size());
  for (std::size_t i = 0; i < devs.size(); ++i) {
    nodes[i] = NameNode::make(*devs[i], names[i]);
    cds_lfht_node_init(&nodes[i]->node);
    tsan::release(nodes[i]);
  }
  const std::vector<Entry> sorted = in_bucket_order(hashes, nodes, table_size_);
  const std::size_t inserted = walk(sorted, [this](const Entry& e) {
    std::string_view key = e.node->key();
    return cds_lfht_add_unique(names_, e.hash, match_name, &key, &e.node->node) == &e.node->node;
  });
  if (inserted < sorted.size()) {
    // A name in use: the entries inserted come out again (freed a grace period on), the
    // others are freed now.
    std::unordered_map<const NameNode*, std::size_t> position;
    for (std::size_t i = 0; i < nodes.size(); ++i) position.emplace(nodes[i], i);
    fault.item = position[sorted[inserted].node];
    RetiredNames later(inserted);
    {
      rcu::ReadGuard g;
      for (std::size_t j = 0; j < inserted; ++j) {
        fault.seen.push_back(position[sorted[j].node]);
        if (cds_lfht_del(names_, &sorted[j].node->node) == 0)
          later.nodes_.push_back(sorted[j].node);
      }
    }
    for (std::size_t j = inserted; j < sorted.size(); ++j) delete sorted[j].node;
    return fail_log_only(EEXIST, "device \"{}\" already exists", names[fault.item]);
  }
  for (std::size_t i = 0; i < devs.size(); ++i) {
    assert(devs[i]->altnames_locked().empty());
    DeviceAccess::name_node(*devs[i]) = nodes[i];
    list_index(*devs[i], devs[i]->ifindex());
  }
  return ok();
}

void Registry::erase_many(std::span<Device* const> devs, RetiredNames& later) {
  std::vector<NameNode*> nodes;
  std::vector<std::uint64_t> hashes;
  nodes.reserve(devs.size());
  hashes.reserve(devs.size());
  for (std::size_t i = 0; i < devs.size(); ++i) {
    prefetch_unlisting(devs, i);
    Device& dev = *devs[i];
    DeviceAccess::set_state(dev, RegState::Unregistering);
    auto* n = static_cast<NameNode*>(DeviceAccess::name_node(dev));
    if (!n || !dev.altnames_locked().empty()) {
      erase(dev, dev.ifindex(), &later);  // the uncommon device, on its own
      continue;
    }
    DeviceAccess::name_node(dev) = nullptr;
    nodes.push_back(n);
    hashes.push_back(split_order(n->node.reverse_hash));  // the bits reversed back
    unlist_index(dev, dev.ifindex());
  }
  walk(in_bucket_order(hashes, nodes, table_size_), [&](const Entry& e) {
    if (cds_lfht_del(names_, &e.node->node) == 0) later.nodes_.push_back(e.node);
    return true;
  });
}

}  // namespace ifcore
