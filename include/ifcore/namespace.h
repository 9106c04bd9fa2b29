// ifcore/namespace.h — a network namespace (Linux: struct net): its own tables by name and
// by ifindex, its own loopback device, its own ifindex sequence.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ifcore/mutex.h"
#include "ifcore/result.h"

namespace ifcore {

class Device;
class Engine;
class Kind;
class Registry;

class Namespace {
 public:
  ~Namespace();
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;

  const std::string& name() const { return name_; }
  // The namespace's id, engine-unique and never reused: ifcore's own handle for it (the
  // sessions' and the protocols' tables). Not what the wire calls a netnsid: see below.
  int id() const { return id_; }
  Engine& engine() const { return *engine_; }

  // Lock-free lookups. Context: inside an rcu::ReadGuard; the pointer is valid until the
  // guard ends (take a Ref to keep it). Never blocks. Returns nullptr if absent.
  Device* find_by_name_rcu(std::string_view name) const;
  Device* find_by_index_rcu(int ifindex) const;
  // The listed device with the smallest ifindex greater than `after` (a dump cursor).
  // Context: inside an rcu::ReadGuard, or control lock.
  Device* next_by_index_rcu(int after) const;

  // Context: control lock. Devices in ifindex order.
  std::vector<Device*> devices_locked() const;
  // The devices of `kind`, in no order, for a kind that is Kind::listed_by_kind() (empty
  // for the others). Context: control lock.
  std::vector<Device*> devices_of_kind_locked(const Kind& kind) const;
  std::size_t device_count() const;
  // Grows whenever a device is listed or unlisted here (Linux: net->dev_base_seq): a dump
  // sent in parts compares it between them. Context: control lock.
  std::uint64_t list_seq() const;
  // The loopback device (ifindex 1) once the loopback kind made it; nullptr before.
  Device* loopback() const { return loopback_; }
  void set_loopback_locked(Device* lo) { loopback_ = lo; }

  // Per-namespace state of plug-ins (protocol settings, route tables), keyed by the
  // plug-in's own tag address. Freed with the namespace. Context: control lock.
  // A plug-in looks its state up for every device event: a list (there are a few plug-ins),
  // not a hash table.
  template <class T>
  T* data_locked(const void* tag) const {
    for (const auto& [t, p] : data_)
      if (t == tag) return static_cast<T*>(p.get());
    return nullptr;
  }
  void set_data_locked(const void* tag, std::shared_ptr<void> p) {
    for (auto& [t, q] : data_)
      if (t == tag) {
        q = std::move(p);
        return;
      }
    data_.emplace_back(tag, std::move(p));
  }

  // The next ifindex the namespace will hand out (tests use it to check wrap-around).
  // Context: control lock.
  void set_next_ifindex_locked(int next);
  int next_ifindex_locked() const;
  // Takes the next ifindex as a registration would and hands it out to nobody (a veth
  // refused as Linux refuses it after registering its peer). Context: control lock.
  void pass_over_ifindex_locked();

  Registry& registry() const { return *registry_; }

  // ---- namespace ids (Linux: net->netns_ids): the number this namespace gives a peer, the
  // one its IFLA_LINK_NETNSID, IFLA_TARGET_NETNSID and RTM_*NSID messages use. A peer has
  // one only once it is needed (RTM_NEWNSID, or a message that must name it), as in Linux.
  // Context: control lock; the changes under one that covers this namespace.
  // The peer's id, -1 (NETNSA_NSID_NOT_ASSIGNED) if it has none (Linux: peernet2id).
  int peer_id_locked(const Namespace& peer) const;
  // The peer with id `id`, nullptr if none (Linux: get_net_ns_by_id).
  Namespace* peer_by_id_locked(int id) const;
  // Every peer with an id, in id order.
  const std::map<int, Namespace*>& peer_ids_locked() const { return peer_ids_; }
  // Gives `peer` the id `id`, or the lowest free one when `id` is negative (Linux:
  // alloc_netid), and tells the engine's nsid observers (Control::add_nsid_observer).
  // Caller must: make sure `peer` has no id here. Errors: EEXIST when `id` is taken.
  Result<int> assign_peer_id_locked(Namespace& peer, int id);
  // The peer's id, the lowest free one given now if it has none; -1 for a namespace being
  // destroyed, which gets none (Linux: peernet2id_alloc).
  int peer_id_alloc_locked(Namespace& peer);
  bool dying_locked() const { return dying_; }

 private:
  friend class Engine;
  friend class Control;
  Namespace(Engine& engine, std::string name, int id);

  Engine* const engine_;
  const std::string name_;
  const int id_;
  std::unique_ptr<Registry> registry_;
  Device* loopback_ = nullptr;
  std::vector<std::pair<const void*, std::shared_ptr<void>>> data_;
  std::map<int, Namespace*> peer_ids_;  // control lock (see peer_id_locked)
  bool dying_ = false;
  // Held by a Control of this namespace alone (Engine::control(Namespace&)), inside the
  // engine's control lock taken shared (LOCK ORDERING: after the control lock).
  Mutex mu_;
};

}  // namespace ifcore
