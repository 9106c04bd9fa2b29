// The tables of one namespace: name -> device (liburcu cds_lfht) and ifindex -> device
// (an RCU-published two-level array). Readers take no lock; writers hold the control lock.
//
// Lock order: writers hold the control lock (engine.h); readers hold nothing but an RCU
// read-side section.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/rcu.h"
#include "ifcore/result.h"

struct cds_lfht;

namespace ifcore {

class Kind;

class Device;

// Linux: dev_valid_name. Errors: EINVAL (empty, ".", "..", '/', ':' or whitespace),
// ENAMETOOLONG is NOT used: Linux says EINVAL for names of 16 bytes or more too.
Result<void> validate_device_name(std::string_view name);
// True if `name` holds exactly one "%d" and no other '%'.
bool is_name_pattern(std::string_view name);

class Registry {
 public:
  struct NameNode;  // a name table entry (public for the table's match callback)

  // Name entries that erase() unlisted, freed together one grace period after this goes
  // out of scope: one RCU callback for a batch, not one per device. Context: control lock.
  class RetiredNames {
   public:
    explicit RetiredNames(std::size_t expected) { nodes_.reserve(expected); }
    ~RetiredNames();
    RetiredNames(const RetiredNames&) = delete;
    RetiredNames& operator=(const RetiredNames&) = delete;

   private:
    friend class Registry;
    std::vector<NameNode*> nodes_;
  };

  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The hash a name is listed under: a caller that looks a name up and then lists it
  // computes it once and passes it to the overloads below.
  static std::uint64_t name_hash(std::string_view name);

  // Lock-free lookups. Context: inside an RCU read-side section.
  Device* find_name_rcu(std::string_view name) const {
    return find_name_rcu(name, name_hash(name));
  }
  Device* find_name_rcu(std::string_view name, std::uint64_t hash) const;
  Device* find_index_rcu(int ifindex) const;
  Device* next_index_rcu(int after) const;
  // Appends every listed device to `out`, in ifindex order. Reads only the index pages,
  // never a device: a walk through next_index_rcu reads each device's ifindex before it
  // can look for the next one, one cache miss after another (10 000 devices: most of the
  // 0.5-1 ms a group delete spent collecting its devices).
  void collect_rcu(std::vector<Device*>& out) const;

  // Context: control lock for everything below.
  // Lists `dev` under `name`, its altnames and `ifindex`. Errors: EEXIST (name; before EBUSY when
  // both are in use), EBUSY (ifindex).
  Result<void> insert(Device& dev, std::string_view name, int ifindex) {
    return insert(dev, name, ifindex, name_hash(name));
  }
  Result<void> insert(Device& dev, std::string_view name, int ifindex, std::uint64_t hash);
  // Lists many new devices at once (a big create batch): each under names[i] (hashed
  // hashes[i]) and the ifindex it holds, free (as alloc_ifindex gives them); none has
  // altnames. The entries are made in the order given and inserted bucket by bucket (the
  // table's buckets read in memory order, each bucket's entries, just inserted, in the
  // cache), reading no device; the devices are then noted and indexed in the order given.
  // Errors: EEXIST (a name in use), with `fault.item` the position at fault; nothing is
  // left listed, and `fault.seen` holds the positions of the devices a lock-free reader
  // may have found by name meanwhile (to be freed a grace period on).
  struct BulkFault {
    std::size_t item = 0;
    std::vector<std::size_t> seen;
  };
  Result<void> insert_many(std::span<Device* const> devs, std::span<const std::string_view> names,
                           std::span<const std::uint64_t> hashes, BulkFault& fault);
  // Unlists a device (name, altnames and index are free at once). Its name entry is freed after a
  // grace period, or with `later` if given. Its own name's entry is the one add_name noted in
  // the device: the name's bytes are not read (a batch of 10^6 would miss the cache on each).
  void erase(Device& dev, int ifindex, RetiredNames* later = nullptr);
  // Unlists many devices at once (a big delete batch), as erase() does each: the indexes
  // in the order given, then the names' entries bucket by bucket, as insert_many's,
  // reading no device. Their entries go to `later`. Each device is marked Unregistering as
  // it is unlisted (unregister's state, set in the same walk).
  void erase_many(std::span<Device* const> devs, RetiredNames& later);
  // For a pass that unlists `devs` in order, at `i`: fetches the device 8 places ahead and
  // the name entry of the one 4 places ahead (in a batch that does not fit in the cache,
  // each would be a miss waited for in turn).
  static void prefetch_unlisting(std::span<Device* const> devs, std::size_t i);
  // A batch's writer leaves its read-side section and enters it again every so many
  // devices: a grace period waits for every section running when it starts, and another
  // namespace's writer waits for one at each of its deletes; a section over a whole batch
  // would make it wait for the batch.
  static constexpr std::size_t kReadSection = 256;
  // What the table keeps a device's name entry under: liburcu's split-ordered list keeps
  // its entries by bit-reversed hash. 0 for a device without an entry.
  static std::uint64_t table_order(Device& dev);
  // The same for a name's hash: its bits reversed (reversed again, the hash).
  static std::uint64_t split_order(std::uint64_t hash);
  // Replaces one name with another for `dev`. Errors: EEXIST.
  Result<void> rename(Device& dev, std::string_view old_name, std::string_view new_name);
  // Alternative names (Linux: netdev_name_node_alt_create / _destroy): listed in the same
  // table as the names, so that a name and an altname are unique together.
  // add_alt_name: Errors: EEXIST (any device's name or altname). Appends to the device's
  // list. del_alt_name: Errors: ENOENT (no device has the name), EINVAL (the device's own
  // name, or another device's name or altname).
  Result<void> add_alt_name(Device& dev, std::string_view name);
  Result<void> del_alt_name(Device& dev, std::string_view name);
  // True if a device has `name` as its name or one of its altnames.
  bool name_taken(std::string_view name) const { return name_taken(name, name_hash(name)); }
  bool name_taken(std::string_view name, std::uint64_t hash) const;
  bool index_taken(int ifindex) const;

  // Allocates the next ifindex (monotonic, wraps past INT_MAX, never one in use).
  // Errors: ENFILE when every index is taken.
  Result<int> alloc_ifindex();
  void set_next_ifindex(int next) { next_ifindex_ = next < 1 ? 1 : next; }
  int next_ifindex() const { return next_ifindex_; }

  // Resolves "name%d" to the lowest free number (Linux: __dev_alloc_name).
  // Errors: EINVAL (bad pattern), ENFILE (all of 0..32767 taken).
  Result<std::string> resolve_pattern(std::string_view pattern);

  std::size_t size() const { return count_; }
  // The listed devices of a kind that is listed_by_kind() (none for the others).
  const std::unordered_set<Device*>& of_kind(const Kind& kind) const;
  // Counts every device listed or unlisted (Linux: net->dev_base_seq): a dump that spans
  // several takes of the control lock compares it to say it was interrupted.
  std::uint64_t list_seq() const { return list_seq_; }
  // Grows the name table to fit the current count and `incoming` names about to be listed
  // (before and after big batches); it never shrinks.
  void maybe_resize(std::size_t incoming = 0);

 private:
  struct Page;
  struct Top;
  Page* page_for(int ifindex, bool create);
  // Lists `dev` at `ifindex` (free) and counts it; unlist_index undoes it (and notes its
  // name free for the patterns).
  void list_index(Device& dev, int ifindex);
  void unlist_index(Device& dev, int ifindex);
  // Unpublishes and retires every index page that holds no device (see erase).
  void retire_empty_pages();
  // The name table alone. add_name: EEXIST if taken; del_name: only `dev`'s entry.
  Result<void> add_name(Device& dev, std::string_view name, std::uint64_t hash, bool alt = false);
  void del_name(Device& dev, std::string_view name, RetiredNames* later = nullptr);
  // `dev`'s own name's entry, as add_name noted it in the device (a rename notes the new
  // entry before it deletes the old one).
  void del_own_name(Device& dev, RetiredNames* later);
  // Takes `n`, found for `dev`, out of the table. Context: inside a read-side section.
  void del_node(Device& dev, NameNode* n, RetiredNames* later);
  void name_freed(std::string_view name);

  cds_lfht* names_ = nullptr;
  std::atomic<Top*> top_{nullptr};
  std::size_t count_ = 0;
  std::uint64_t list_seq_ = 0;
  std::unordered_map<const Kind*, std::unordered_set<Device*>> by_kind_;
  std::size_t alt_count_ = 0;  // altnames listed (table entries beyond one per device)
  std::size_t table_size_ = 0;
  std::size_t empty_pages_ = 0;  // published index pages that hold no device
  int next_ifindex_ = 1;
  // "%d" patterns seen, with the lowest number that may be free.
  std::map<std::string, int, std::less<>> pattern_low_;
};

}  // namespace ifcore
