// Register batches: many devices registered with one notifier pass, all or nothing
// (ifcore's counterpart of Linux's unregister_netdevice_many; Linux registers one device
// at a time).
//
// Lock order: runs under the control lock.
#include <net/if.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "base/prefetch.h"
#include "core/engine_impl.h"
#include "core/registry.h"

namespace ifcore {

std::size_t RegisterBatch::add(std::unique_ptr<Device> dev, std::string name, int ifindex) {
  // Filled in place: a braced Item would be moved into the vector, its name copied again.
  Item& it = items_.emplace_back();
  it.dev = std::move(dev);
  it.name = std::move(name);
  it.ifindex = ifindex;
  it.ns = &it.dev->ns();
  return items_.size() - 1;
}

namespace {

using Items = std::vector<RegisterBatch::Item>;
using Spaces = std::vector<Namespace*>;  // each item's namespace

BatchError item_error(std::size_t i, Error e) {
  return BatchError{i, std::move(e)};
}

// Marks each item whose name an earlier item of the batch already asked for in the same
// namespace: an open-addressed table of item positions, with no allocation per item (a
// batch may hold 10^5 devices).
std::vector<bool> repeated_names(const Items& items, const std::vector<std::uint64_t>& hashes) {
  std::vector<bool> repeated(items.size());
  const std::size_t mask = std::bit_ceil(2 * items.size() + 1) - 1;
  std::vector<std::uint32_t> slots(mask + 1, 0);  // an item's position + 1; 0: free
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    if (it.name.find('%') != std::string::npos) continue;  // resolved when listed
    const Namespace* ns = &it.dev->ns();
    std::size_t s = (hashes[i] ^ std::hash<const void*>{}(ns)) & mask;
    for (;; s = (s + 1) & mask) {
      if (slots[s] == 0) {
        slots[s] = static_cast<std::uint32_t>(i + 1);
        break;
      }
      const auto& seen = items[slots[s] - 1];
      if (seen.name == it.name && &seen.dev->ns() == ns) {
        repeated[i] = true;
        break;
      }
    }
  }
  return repeated;
}

// Whether check_items looks the names up, or leaves that to the listing (see
// Control::register_batch).
enum class NameCheck { Listed, Looked };

// The checks register_device makes one device at a time, made for the whole batch before
// anything changes: names valid and unique in the batch and in their namespace (the latter
// only with NameCheck::Looked), ifindexes likewise, room. The first item that fails one is
// reported.
tl::expected<void, BatchError> check_items(const Control& ctl, const Items& items,
                                           const Spaces& spaces,
                                           const std::vector<std::uint64_t>& hashes,
                                           NameCheck names) {
  const bool look = names == NameCheck::Looked;
  const std::vector<bool> repeated = look ? repeated_names(items, hashes) : std::vector<bool>();
  std::set<std::pair<const Namespace*, int>> indexes;      // the ifindexes asked for (rare)
  std::vector<std::pair<Namespace*, std::size_t>> per_ns;  // most batches have one
  std::size_t counted = 0;                                 // the last item's, in per_ns
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    Namespace& ns = *spaces[i];
    // The last item's namespace is looked up only when this item's differs.
    if (counted == per_ns.size() || per_ns[counted].first != &ns) {
      counted = static_cast<std::size_t>(
          std::find_if(per_ns.begin(), per_ns.end(), [&](auto& p) { return p.first == &ns; }) -
          per_ns.begin());
      if (counted == per_ns.size()) per_ns.emplace_back(&ns, 0);
    }
    ++per_ns[counted].second;
    bool pattern = it.name.find('%') != std::string::npos;
    if (pattern && !is_name_pattern(it.name))
      return tl::unexpected(item_error(
          i,
          Error{EINVAL, fmt::format("device name pattern \"{}\" must hold exactly one %d", it.name),
                -1, true}));
    if (!pattern) {
      if (auto v = validate_device_name(it.name); !v)
        return tl::unexpected(item_error(i, v.error()));
      if (look && (repeated[i] || ns.registry().name_taken(it.name, hashes[i])))
        return tl::unexpected(item_error(
            i, Error{EEXIST, fmt::format("device \"{}\" already exists", it.name), -1, true}));
    }
    if (it.ifindex < 0)
      return tl::unexpected(item_error(i, Error{EINVAL, "ifindex can't be negative"}));
    if (it.ifindex > 0 &&
        (ns.registry().index_taken(it.ifindex) || !indexes.emplace(&ns, it.ifindex).second))
      return tl::unexpected(
          item_error(i, Error{EBUSY, fmt::format("ifindex {} is in use", it.ifindex)}));
  }
  for (const auto& [ns, count] : per_ns)
    if (auto room = ctl.check_device_room(*ns, count); !room)
      return tl::unexpected(BatchError{std::nullopt, room.error()});
  return {};
}

// The ifindex allocators of the namespaces a batch touches, as they were before it.
std::map<Namespace*, int> save_allocators(const Spaces& spaces) {
  std::map<Namespace*, int> saved;
  const Namespace* last = nullptr;  // most batches have one namespace: no map walk per item
  for (Namespace* ns : spaces) {
    if (ns == last) continue;
    last = ns;
    saved.try_emplace(ns, ns->registry().next_ifindex());
  }
  return saved;
}

void restore_allocators(const std::map<Namespace*, int>& saved) {
  for (const auto& [ns, next] : saved) ns->registry().set_next_ifindex(next);
}

// Names (resolving patterns in order), indexes and lists one device. `hash` is the name's
// (not used for a pattern).
Result<void> list_one(const Control& ctl, Registry& reg, Device& dev, const std::string& name,
                      std::uint64_t hash, int ifindex) {
  std::string resolved;
  std::string_view final_name = name;
  if (name.find('%') != std::string::npos) {
    auto n = reg.resolve_pattern(name);
    if (!n) return fail(n.error());
    resolved = std::move(*n);
    final_name = resolved;
    hash = Registry::name_hash(final_name);
  }
  if (ifindex == 0) {
    auto i = reg.alloc_ifindex();
    if (!i) return fail(i.error());
    ifindex = *i;
  }
  dev.set_name_locked(ctl, final_name);
  DeviceAccess::set_ifindex(dev, ifindex);
  IFCORE_TRY(reg.insert(dev, final_name, ifindex, hash));
  DeviceAccess::set_state(dev, RegState::Registered);
  return ok();
}

// Unlists the devices listed so far, newest first.
void unlist(const std::vector<Device*>& listed) {
  for (auto d = listed.rbegin(); d != listed.rend(); ++d)
    (*d)->ns().registry().erase(**d, (*d)->ifindex());
}

// Frees every device of the batch once unlisted: the items at `listed` a grace period later
// (a lock-free reader may have found one by its name or index), the others at once.
void free_listed(const std::vector<std::size_t>& listed, Items& items) {
  for (std::size_t k : listed) rcu::retire(items[k].dev.release());
  items.clear();  // the devices not listed
}

// A big batch, of plain names and ifindexes left to the engine in one namespace (the
// bulk case), is listed in two steps: names and ifindexes given in request order, then
// the whole batch listed by Registry::insert_many, its names inserted bucket by bucket of
// the name table, each insert finding its bucket and its bucket's entries in the cache.
// In request order each insert misses on them once the table outgrows the cache (10^6
// dummies: half of the batch's time). Big is 16 384 items, or 4 096 into a namespace of
// 65 536 devices or more (ifcored's batches of 10 000 as a namespace grows to 10^6: 0.91
// s instead of 1.2). A pattern or an ifindex asked for needs the earlier items listed
// first.
constexpr std::size_t kBulkFrom = std::size_t{1} << 14;
constexpr std::size_t kBulkIntoBigFrom = std::size_t{1} << 12, kBigTable = std::size_t{1} << 16;

bool listed_in_bulk(const Items& items, const Spaces& spaces) {
  const Namespace* ns = spaces.front();
  if (items.size() < kBulkFrom &&
      (items.size() < kBulkIntoBigFrom || ns->registry().size() < kBigTable))
    return false;
  if (std::any_of(spaces.begin(), spaces.end(), [ns](const Namespace* n) { return n != ns; }))
    return false;
  return std::none_of(items.begin(), items.end(), [](const RegisterBatch::Item& it) {
    return it.ifindex != 0 || it.name.find('%') != std::string::npos;
  });
}

// What a listing that failed leaves to undo: the devices it listed, in the order it listed
// them, their items' positions, and the item at fault with its error.
struct ListingFault {
  std::vector<Device*> listed;
  std::vector<std::size_t> positions;
  std::size_t item;
  Error error;
};
using Listing = tl::expected<void, ListingFault>;

Listing list_in_request_order(const Control& ctl, Items& items,
                              const std::vector<std::uint64_t>& hashes) {
  std::vector<Device*> listed;
  listed.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    Device* d = items[i].dev.get();
    if (auto r = list_one(ctl, d->ns().registry(), *d, items[i].name, hashes[i], items[i].ifindex);
        !r) {
      std::vector<std::size_t> positions(i);
      std::iota(positions.begin(), positions.end(), 0);
      return tl::unexpected(
          ListingFault{std::move(listed), std::move(positions), i, std::move(r).error()});
    }
    listed.push_back(d);
  }
  return {};
}

// The lines of a device the listing writes (its index, state and name, in its first 256
// bytes).
constexpr std::size_t kDeviceLines = 4 * kCacheLine;

Listing list_in_bulk(const Control& ctl, Items& items, const std::vector<std::uint64_t>& hashes) {
  Registry& registry = items.front().dev->ns().registry();
  std::vector<Device*> devs(items.size());
  std::vector<std::string_view> names(items.size());
  constexpr std::size_t kAhead = 4;  // devices: made long ago, past the cache at 10^6
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i + kAhead < items.size()) prefetch_lines(items[i + kAhead].dev.get(), kDeviceLines, true);
    Device& d = *items[i].dev;
    auto index = registry.alloc_ifindex();
    if (!index) return tl::unexpected(ListingFault{{}, {}, i, std::move(index).error()});
    d.set_name_locked(ctl, items[i].name);
    DeviceAccess::set_ifindex(d, *index);
    // Set while the device is in cache: before it is in the tables, where only a batch
    // that fails whole would show it (Linux sets it after list_netdevice).
    DeviceAccess::set_state(d, RegState::Registered);
    devs[i] = &d;
    names[i] = items[i].name;
  }
  Registry::BulkFault fault;
  if (auto r = registry.insert_many(devs, names, hashes, fault); !r)
    return tl::unexpected(
        ListingFault{{}, std::move(fault.seen), fault.item, std::move(r).error()});
  return {};
}

}  // namespace

BatchResult Control::register_batch(RegisterBatch& batch) {
  Items items = std::move(batch.items_);
  batch.items_.clear();
  if (items.empty()) return std::vector<Device*>{};
  auto& impl = engine_->impl();
  // Each item's namespace, as add() read it (10^6 new devices are far past the cache; the
  // checks and the listing read them here).
  Spaces spaces(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    spaces[i] = items[i].ns;
    if (auto r = check_covers(*spaces[i]); !r)
      return tl::unexpected(item_error(i, std::move(r).error()));
  }
  // Each name's hash, made once for the checks and the listing (patterns are hashed once
  // resolved).
  std::vector<std::uint64_t> hashes(items.size());
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].name.find('%') == std::string::npos)
      hashes[i] = Registry::name_hash(items[i].name);
  // A name in use (in the namespace, or by an earlier item) is found by listing it: the name
  // table's unique insert walks the name's chain anyway, so a lookup before it would walk it
  // twice. The items are checked for everything else first. When a check or the listing
  // fails, the batch is checked again with the names looked up, the state being as it was:
  // the item reported is the first at fault in request order, as if every name had been
  // looked up before anything changed.
  auto first_fault = [&](BatchError e) {
    if (auto c = check_items(*this, items, spaces, hashes, NameCheck::Looked); !c)
      return std::move(c).error();
    return e;
  };
  if (auto c = check_items(*this, items, spaces, hashes, NameCheck::Listed); !c)
    return tl::unexpected(first_fault(std::move(c).error()));
  auto saved = save_allocators(spaces);
  // The name tables grown first for what they are about to hold: listing 10^4 names into a
  // table sized for a few would walk long chains.
  for (const auto& [ns, next] : saved) ns->registry().maybe_resize(items.size());
  auto listing = listed_in_bulk(items, spaces) ? list_in_bulk(*this, items, hashes)
                                               : list_in_request_order(*this, items, hashes);
  if (!listing) {
    ListingFault& f = listing.error();
    unlist(f.listed);
    restore_allocators(saved);
    auto fault = first_fault(item_error(f.item, std::move(f.error)));
    free_listed(f.positions, items);
    return tl::unexpected(std::move(fault));
  }
  for (const auto& [ns, next] : saved) ns->registry().maybe_resize();
  std::vector<Device*> devs;  // listed (and Registered, by the listing): devs holds them now
  devs.reserve(items.size());
  for (auto& it : items) devs.push_back(it.dev.release());
  impl.stats.count(*this, StatsCounters::Registered, devs.size());
  // One Register pass for the whole batch; a veto undoes it all.
  std::size_t vetoed = 0;
  if (auto r = impl.call_register_many(*this, devs, vetoed); !r) {
    impl.discard_registered(*this, devs);
    restore_allocators(saved);
    return tl::unexpected(item_error(vetoed, std::move(r).error()));
  }
  return devs;
}

}  // namespace ifcore
