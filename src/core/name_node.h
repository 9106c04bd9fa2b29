// A name table entry of Registry (liburcu cds_lfht node with its device and name), shared
// by registry.cc and registry_bulk.cc.
//
// Lock order: as Registry's: entries are added and deleted under the control lock, read
// inside RCU read-side sections.
#pragma once

#include <urcu/rculfhash.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string_view>

#include "base/tsan.h"
#include "core/registry.h"

namespace ifcore {

// The name's bytes follow the struct in the same allocation: a device name (at most 15
// bytes) makes a node of 64 bytes, one cache line, where a std::string member made 80.
struct Registry::NameNode {
  cds_lfht_node node;  // first member: the node's address is the struct's
  Device* dev;
  rcu_head rcu;
  std::uint32_t len;

  static NameNode* make(Device& dev, std::string_view name) {
    void* p = ::operator new(sizeof(NameNode) + name.size() + 1);
    auto* n = new (p) NameNode{{}, &dev, {}, static_cast<std::uint32_t>(name.size())};
    char* bytes = reinterpret_cast<char*>(n + 1);
    std::memcpy(bytes, name.data(), name.size());
    bytes[name.size()] = '\0';
    return n;
  }
  // What make() allocated, whatever its size (a delete-expression would pass the struct's).
  static void operator delete(void* p) { ::operator delete(p); }

  std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), len}; }
  static void free_rcu(rcu_head* h) {
    auto* n = reinterpret_cast<NameNode*>(reinterpret_cast<char*>(h) - offsetof(NameNode, rcu));
    delete n;
  }
};

// The table's match function: the entry's name is the key (a std::string_view).
inline int match_name(cds_lfht_node* node, const void* key) {
  tsan::acquire(node);  // published by add_name through the (uninstrumented) table
  auto* n = reinterpret_cast<const Registry::NameNode*>(node);
  return n->key() == *static_cast<const std::string_view*>(key);
}

}  // namespace ifcore
