// Per-namespace tables: names in a cds_lfht, ifindexes in an RCU-published two-level
// array (pages of 4096 slots under a growable top array).
//
// Lock order: writers hold the control lock; readers only an RCU read-side section.
#include "core/registry.h"

#include <urcu/rculfhash.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

#include "base/prefetch.h"
#include "base/tsan.h"
#include "core/engine_impl.h"
#include "core/name_node.h"
#include "ifcore/device.h"
#include "ifcore/kind.h"

namespace ifcore {

// ---------------------------------------------------------------- names

namespace {

constexpr std::size_t kNameMax = 15;       // IFNAMSIZ - 1
constexpr int kMaxPatternNumbers = 32768;  // Linux: 8 * PAGE_SIZE bits of in-use bitmap

constexpr bool kernel_isspace(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

// The bytes a device name may not hold (Linux: dev_valid_name), as a table: names are
// checked on every create.
constexpr std::array<bool, 256> kNameBadByte = [] {
  std::array<bool, 256> t{};
  for (unsigned c = 0; c < 256; ++c)
    t[c] = c == '/' || c == ':' || c == '\0' || kernel_isspace(static_cast<unsigned char>(c));
  return t;
}();

}  // namespace

Result<void> validate_device_name(std::string_view name) {
  // Linux: dev_valid_name.
  if (name.empty()) return fail(EINVAL, "device name is empty");
  if (name.size() > kNameMax)
    return fail(EINVAL, "device name \"{}\" is longer than {} bytes", name, kNameMax);
  // Linux: dev_valid_name answers EINVAL with no extack.
  if (name == "." || name == "..")
    return fail_log_only(EINVAL, "device name \"{}\" is not valid", name);
  for (unsigned char c : name) {
    if (kNameBadByte[c])
      return fail_log_only(EINVAL, "device name \"{}\" contains a character that is not allowed",
                           name);
  }
  return ok();
}

bool is_name_pattern(std::string_view name) {
  auto p = name.find('%');
  if (p == std::string_view::npos) return false;
  return p + 1 < name.size() && name[p + 1] == 'd' &&
         name.find('%', p + 2) == std::string_view::npos;
}

namespace {

// The number `name` carries for `pattern` ("eth%d" and "eth12" -> 12), or -1.
int pattern_number(std::string_view pattern, std::string_view name) {
  auto p = pattern.find('%');
  std::string_view pre = pattern.substr(0, p), post = pattern.substr(p + 2);
  if (name.size() <= pre.size() + post.size()) return -1;
  if (name.substr(0, pre.size()) != pre) return -1;
  if (name.substr(name.size() - post.size()) != post) return -1;
  std::string_view digits = name.substr(pre.size(), name.size() - pre.size() - post.size());
  if (digits.size() > 1 && digits[0] == '0') return -1;  // not what "%d" prints
  int n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
    if (n >= kMaxPatternNumbers) return -1;
  }
  return n;
}

std::string format_pattern(std::string_view pattern, int n) {
  auto p = pattern.find('%');
  return fmt::format("{}{}{}", pattern.substr(0, p), n, pattern.substr(p + 2));
}

}  // namespace

// ---------------------------------------------------------------- index pages

struct Registry::Page {
  static constexpr int kSlots = 4096;
  std::atomic<Device*> slot[kSlots] = {};
  int used = 0;                // control lock
  bool counted_empty = false;  // in Registry::empty_pages_ (control lock)
};

struct Registry::Top {
  std::size_t n;
  std::unique_ptr<std::atomic<Page*>[]> pages;
  explicit Top(std::size_t count) : n(count), pages(new std::atomic<Page*>[count]()) {}
};

Registry::Registry() {
  table_size_ = 1024;
  names_ = cds_lfht_new_flavor(table_size_, table_size_, 1ul << 22, 0, rcu::flavor(), nullptr);
  top_.store(new Top(16));
}

Registry::~Registry() {
  // Context: no reader can reach the namespace any more (it was unlisted and a grace
  // period passed), so nodes are freed directly.
  rcu::register_thread();
  cds_lfht_iter it;
  cds_lfht_node* node;
  rcu::read_lock();
  cds_lfht_first(names_, &it);
  while ((node = cds_lfht_iter_get_node(&it)) != nullptr) {
    cds_lfht_next(names_, &it);
    if (cds_lfht_del(names_, node) == 0) delete reinterpret_cast<NameNode*>(node);
  }
  rcu::read_unlock();
  cds_lfht_destroy(names_, nullptr);
  Top* t = top_.load();
  for (std::size_t i = 0; i < t->n; ++i) delete t->pages[i].load();
  delete t;
}

std::uint64_t Registry::name_hash(std::string_view s) {
  // Names come in runs that differ in a trailing number (eth0, veth1234, vxlan100 ...): a
  // name hashes as its stem's hash (the name without its last 9 digits at most, with how
  // many there are) plus that number. Such a run lands in consecutive buckets, which a
  // table bigger than the cache then reads in memory order, one name after another, where a
  // hash of every byte would send each to a bucket and a chain out of the cache.
  std::size_t digits = 0;
  while (digits < 9 && digits < s.size()) {
    char c = s[s.size() - 1 - digits];
    if (c < '0' || c > '9') break;
    ++digits;
  }
  std::uint64_t number = 0;
  for (char c : s.substr(s.size() - digits)) number = number * 10 + static_cast<unsigned>(c - '0');
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the stem
  for (unsigned char c : s.substr(0, s.size() - digits)) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= digits;  // "d7" and "d007" are other stems
  h *= 1099511628211ull;
  // The table indexes buckets by the low bits and orders each chain by the bit-reversed
  // hash: every bit of the stem's hash must depend on every byte (MurmurHash3's finaliser).
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return (h ^ (h >> 33)) + number;
}

Device* Registry::find_name_rcu(std::string_view name, std::uint64_t hash) const {
  cds_lfht_iter it;
  cds_lfht_lookup(names_, hash, match_name, &name, &it);
  cds_lfht_node* node = cds_lfht_iter_get_node(&it);
  return node ? reinterpret_cast<NameNode*>(node)->dev : nullptr;
}

Device* Registry::find_index_rcu(int ifindex) const {
  if (ifindex <= 0) return nullptr;
  Top* t = top_.load(std::memory_order_acquire);
  std::size_t p = static_cast<std::size_t>(ifindex) / Page::kSlots;
  if (p >= t->n) return nullptr;
  Page* page = t->pages[p].load(std::memory_order_acquire);
  return page ? page->slot[ifindex % Page::kSlots].load(std::memory_order_acquire) : nullptr;
}

Device* Registry::next_index_rcu(int after) const {
  Top* t = top_.load(std::memory_order_acquire);
  std::size_t i = after < 0 ? 0 : static_cast<std::size_t>(after) + 1;
  for (std::size_t p = i / Page::kSlots; p < t->n; ++p) {
    Page* page = t->pages[p].load(std::memory_order_acquire);
    if (!page) {
      i = (p + 1) * Page::kSlots;
      continue;
    }
    for (std::size_t s = i % Page::kSlots; s < Page::kSlots; ++s)
      if (Device* d = page->slot[s].load(std::memory_order_acquire)) return d;
    i = (p + 1) * Page::kSlots;
  }
  return nullptr;
}

void Registry::collect_rcu(std::vector<Device*>& out) const {
  Top* t = top_.load(std::memory_order_acquire);
  for (std::size_t p = 0; p < t->n; ++p) {
    Page* page = t->pages[p].load(std::memory_order_acquire);
    if (!page) continue;
    for (const auto& slot : page->slot)
      if (Device* d = slot.load(std::memory_order_acquire)) out.push_back(d);
  }
}

Registry::Page* Registry::page_for(int ifindex, bool create) {
  std::size_t p = static_cast<std::size_t>(ifindex) / Page::kSlots;
  Top* t = top_.load(std::memory_order_relaxed);
  if (p >= t->n) {
    if (!create) return nullptr;
    std::size_t n = t->n;
    while (n <= p) n *= 2;
    auto* bigger = new Top(n);
    for (std::size_t i = 0; i < t->n; ++i) bigger->pages[i].store(t->pages[i].load());
    top_.store(bigger, std::memory_order_release);
    rcu::retire(t);
    t = bigger;
  }
  Page* page = t->pages[p].load(std::memory_order_relaxed);
  if (!page && create) {
    page = new Page();
    t->pages[p].store(page, std::memory_order_release);
  }
  return page;
}

void Registry::retire_empty_pages() {
  Top* t = top_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < t->n; ++i) {
    Page* page = t->pages[i].load(std::memory_order_relaxed);
    if (!page || page->used) continue;
    t->pages[i].store(nullptr, std::memory_order_release);
    rcu::retire(page);
  }
  empty_pages_ = 0;
}

bool Registry::name_taken(std::string_view name, std::uint64_t hash) const {
  rcu::ReadGuard g;
  return find_name_rcu(name, hash) != nullptr;
}

bool Registry::index_taken(int ifindex) const {
  rcu::ReadGuard g;
  return find_index_rcu(ifindex) != nullptr;
}

Result<void> Registry::add_name(Device& dev, std::string_view name, std::uint64_t hash, bool alt) {
  auto* n = NameNode::make(dev, name);
  cds_lfht_node_init(&n->node);
  rcu::ReadGuard g;
  std::string_view key = n->key();
  tsan::release(n);
  cds_lfht_node* got = cds_lfht_add_unique(names_, hash, match_name, &key, &n->node);
  if (got != &n->node) {
    delete n;
    return fail_log_only(EEXIST, "device \"{}\" already exists", name);
  }
  if (!alt) DeviceAccess::name_node(dev) = n;
  return ok();
}

Result<void> Registry::add_alt_name(Device& dev, std::string_view name) {
  // Linux: netdev_name_node_alt_create — any name or altname of the namespace is taken.
  if (name_taken(name)) return fail_log_only(EEXIST, "name \"{}\" is in use", name);
  IFCORE_TRY(add_name(dev, name, name_hash(name), true));
  DeviceAccess::altnames(dev).emplace_back(name);
  ++alt_count_;
  return ok();
}

Result<void> Registry::del_alt_name(Device& dev, std::string_view name) {
  // Linux: netdev_name_node_alt_destroy — ENOENT for a name nobody has; EINVAL for the
  // device's own name and another device's names (no extack in either case).
  Device* owner = nullptr;
  {
    rcu::ReadGuard g;
    owner = find_name_rcu(name);
  }
  if (!owner) return fail_log_only(ENOENT, "no device has the name \"{}\"", name);
  auto& alts = DeviceAccess::altnames(dev);
  auto it = std::find(alts.begin(), alts.end(), name);
  if (owner != &dev || it == alts.end())
    return fail_log_only(EINVAL, "\"{}\" is not an altname of this device", name);
  del_name(dev, name);
  alts.erase(it);
  --alt_count_;
  name_freed(name);
  return ok();
}

void Registry::del_name(Device& dev, std::string_view name, RetiredNames* later) {
  rcu::ReadGuard g;
  // The entry add_name noted in the device, if it is this name's (not an altname, nor the
  // old name of a rename); else a lookup.
  if (auto* n = static_cast<NameNode*>(DeviceAccess::name_node(dev)); n && n->key() == name)
    return del_node(dev, n, later);
  cds_lfht_iter it;
  cds_lfht_lookup(names_, name_hash(name), match_name, &name, &it);
  if (cds_lfht_node* node = cds_lfht_iter_get_node(&it))
    del_node(dev, reinterpret_cast<NameNode*>(node), later);
}

void Registry::del_own_name(Device& dev, RetiredNames* later) {
  auto* n = static_cast<NameNode*>(DeviceAccess::name_node(dev));
  if (!n) return del_name(dev, dev.name(), later);
  rcu::ReadGuard g;
  del_node(dev, n, later);
}

void Registry::del_node(Device& dev, NameNode* n, RetiredNames* later) {
  if (n->dev != &dev || cds_lfht_del(names_, &n->node) != 0) return;
  if (DeviceAccess::name_node(dev) == n) DeviceAccess::name_node(dev) = nullptr;
  if (later) {
    later->nodes_.push_back(n);
  } else {
    rcu::call(&n->rcu, NameNode::free_rcu);
  }
}

Registry::RetiredNames::~RetiredNames() {
  if (nodes_.empty()) return;
  struct Nodes {
    std::vector<NameNode*> nodes;
    ~Nodes() { delete_prefetched(std::span<NameNode* const>(nodes)); }
  };
  rcu::retire(new Nodes{std::move(nodes_)});
}

Result<void> Registry::insert(Device& dev, std::string_view name, int ifindex, std::uint64_t hash) {
  // The index is read without a read-side section: only the control lock's holder
  // replaces or retires the index pages, and it is us. A name in use is reported first
  // (EEXIST), by add_name's unique insert in the common case.
  if (find_index_rcu(ifindex)) {
    if (name_taken(name, hash)) return fail_log_only(EEXIST, "device \"{}\" already exists", name);
    return fail_log_only(EBUSY, "ifindex {} is in use", ifindex);  // Linux: dev_index_reserve
  }
  IFCORE_TRY(add_name(dev, name, hash));
  // A device that moves between namespaces brings its altnames (checked free by the caller).
  for (const std::string& alt : dev.altnames_locked()) {
    if (auto a = add_name(dev, alt, name_hash(alt), true); !a) {
      for (const std::string& added : dev.altnames_locked()) {
        if (added == alt) break;
        del_name(dev, added);
      }
      del_name(dev, name);
      return a;
    }
  }
  alt_count_ += dev.altnames_locked().size();
  list_index(dev, ifindex);
  return ok();
}

void Registry::list_index(Device& dev, int ifindex) {
  Page* page = page_for(ifindex, true);
  page->slot[ifindex % Page::kSlots].store(&dev, std::memory_order_release);
  if (page->counted_empty) {
    page->counted_empty = false;
    --empty_pages_;
  }
  ++page->used;
  ++count_;
  ++list_seq_;
  if (dev.kind().listed_by_kind()) by_kind_[&dev.kind()].insert(&dev);
}

void Registry::erase(Device& dev, int ifindex, RetiredNames* later) {
  // Linux: unlist_netdevice takes the altnames out of the name hash with the name.
  for (const std::string& alt : dev.altnames_locked()) {
    del_name(dev, alt, later);
    name_freed(alt);
  }
  alt_count_ -= dev.altnames_locked().size();
  del_own_name(dev, later);
  unlist_index(dev, ifindex);
}

void Registry::unlist_index(Device& dev, int ifindex) {
  Page* page = page_for(ifindex, false);
  if (page && page->slot[ifindex % Page::kSlots].load() == &dev) {
    page->slot[ifindex % Page::kSlots].store(nullptr, std::memory_order_release);
    if (--page->used == 0) {
      // An emptied page stays published for the next devices (a device made and deleted
      // alone on its page would otherwise allocate, clear and retire 32 KiB each time);
      // past a few, the empty ones go.
      constexpr std::size_t kKeepEmptyPages = 8;
      page->counted_empty = true;
      if (++empty_pages_ > kKeepEmptyPages) retire_empty_pages();
    }
  }
  --count_;
  ++list_seq_;
  if (dev.kind().listed_by_kind()) by_kind_[&dev.kind()].erase(&dev);
  if (!pattern_low_.empty()) name_freed(dev.name());
}

const std::unordered_set<Device*>& Registry::of_kind(const Kind& kind) const {
  static const std::unordered_set<Device*> kNone;
  auto it = by_kind_.find(&kind);
  return it == by_kind_.end() ? kNone : it->second;
}

Result<void> Registry::rename(Device& dev, std::string_view old_name, std::string_view new_name) {
  IFCORE_TRY(add_name(dev, new_name,
                      name_hash(new_name)));  // the new name first: a reader finds one of them
  del_name(dev, old_name);
  name_freed(old_name);
  return ok();
}

void Registry::name_freed(std::string_view name) {
  for (auto& [pattern, low] : pattern_low_) {
    int n = pattern_number(pattern, name);
    if (n >= 0 && n < low) low = n;
  }
}

Result<int> Registry::alloc_ifindex() {
  // Linux allocates cyclically in 1..INT_MAX, skipping indexes in use.
  int candidate = next_ifindex_;
  for (std::size_t tries = 0; tries <= count_ + 1; ++tries) {
    if (candidate <= 0) candidate = 1;  // wrapped past INT_MAX
    if (!index_taken(candidate)) {
      next_ifindex_ = candidate == INT_MAX ? 1 : candidate + 1;
      return candidate;
    }
    candidate = candidate == INT_MAX ? 1 : candidate + 1;
  }
  return fail(ENFILE, "no free ifindex");
}

Result<std::string> Registry::resolve_pattern(std::string_view pattern) {
  if (!is_name_pattern(pattern))
    return fail_log_only(EINVAL, "device name pattern \"{}\" must hold exactly one %d", pattern);
  auto it = pattern_low_.find(pattern);
  if (it == pattern_low_.end()) it = pattern_low_.emplace(std::string(pattern), 0).first;
  for (int n = it->second; n < kMaxPatternNumbers; ++n) {
    std::string name = format_pattern(pattern, n);
    if (name.size() > kNameMax) break;
    if (!name_taken(name)) {
      it->second = n;
      return name;
    }
  }
  return fail(ENFILE, "no free name for pattern \"{}\"", pattern);
}

void Registry::maybe_resize(std::size_t incoming) {
  // Grow to keep the load factor under 2 (explicit resizes, no auto-resize); never shrink
  // (Linux never shrinks its name hash). A table emptied by a batch keeps its buckets for
  // the next: 10^6 dummies deleted and made again in a batch would otherwise pay a resize
  // to 2^19 buckets (28 ms, a tenth of the batch) where 10^4 pay none. The buckets cost 8 B
  // for each name the namespace once held at most.
  std::size_t entries = count_ + alt_count_ + incoming;
  std::size_t want = table_size_;
  while (entries > want * 2 && want < (1ul << 22)) want *= 2;
  if (want != table_size_) {
    table_size_ = want;
    cds_lfht_resize(names_, want);
  }
}

}  // namespace ifcore
