// proto/table_map.h — one family's route tables by id, and the order Linux lists them in.
//
// Lock order: none (a plain value; its owner's lock covers it).
#pragma once

#include <linux/rtnetlink.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace ifcore::proto {

// The route tables of one family by id (std::map's interface), and when each was made:
// Linux lists them in the order of its table hash, bucket id & 255 first, the newest table
// of a bucket first (fib_new_table and fib6_link_table add at the bucket's head). IPv6's main
// and local come with the namespace (fib6_tables_init: main, then local); IPv4 makes main
// before local, local's alias while no rule was added (fib_new_table).
template <class T>
class TableMap : public std::map<std::uint32_t, T> {
 public:
  explicit TableMap(bool v6) : v6_(v6) {}

  // The table `id`, made empty if missing.
  T& operator[](std::uint32_t id) {
    if (!v6_ && id == RT_TABLE_LOCAL) born_.try_emplace(RT_TABLE_MAIN, next_++);
    auto [it, made] = this->try_emplace(id);
    if (made) born_.try_emplace(id, next_++);
    return it->second;
  }

  // The ids of the tables, in the order Linux dumps them (inet_dump_fib, inet6_dump_fib).
  std::vector<std::uint32_t> dump_order() const {
    std::vector<std::uint32_t> ids;
    ids.reserve(this->size());
    for (const auto& e : *this) ids.push_back(e.first);
    std::stable_sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) {
      if ((a & 255) != (b & 255)) return (a & 255) < (b & 255);
      return born(a) > born(b);
    });
    return ids;
  }

 private:
  std::int64_t born(std::uint32_t id) const {
    if (v6_ && id == RT_TABLE_MAIN) return -2;
    if (v6_ && id == RT_TABLE_LOCAL) return -1;
    auto it = born_.find(id);
    return it == born_.end() ? 0 : it->second;
  }

  bool v6_;
  std::map<std::uint32_t, std::int64_t> born_;
  std::int64_t next_ = 0;
};

}  // namespace ifcore::proto
