// Namespace: its registry and its plug-in data.
#include "ifcore/namespace.h"

#include <cerrno>

#include "core/engine_impl.h"
#include "core/registry.h"
#include "ifcore/device.h"
#include "ifcore/kind.h"

namespace ifcore {

Namespace::Namespace(Engine& engine, std::string name, int id)
    : engine_(&engine), name_(std::move(name)), id_(id), registry_(std::make_unique<Registry>()) {}

Namespace::~Namespace() = default;

Device* Namespace::find_by_name_rcu(std::string_view name) const {
  return registry_->find_name_rcu(name);
}

Device* Namespace::find_by_index_rcu(int ifindex) const {
  return registry_->find_index_rcu(ifindex);
}

Device* Namespace::next_by_index_rcu(int after) const {
  return registry_->next_index_rcu(after);
}

std::vector<Device*> Namespace::devices_locked() const {
  std::vector<Device*> out;
  out.reserve(registry_->size());
  rcu::ReadGuard g;
  registry_->collect_rcu(out);
  return out;
}

std::vector<Device*> Namespace::devices_of_kind_locked(const Kind& kind) const {
  const auto& set = registry_->of_kind(kind);
  return {set.begin(), set.end()};
}

std::size_t Namespace::device_count() const {
  return registry_->size();
}

std::uint64_t Namespace::list_seq() const {
  return registry_->list_seq();
}

void Namespace::set_next_ifindex_locked(int next) {
  registry_->set_next_ifindex(next);
}
void Namespace::pass_over_ifindex_locked() {
  (void)registry_->alloc_ifindex();  // none free: nothing to pass over
}

int Namespace::next_ifindex_locked() const {
  return registry_->next_ifindex();
}

int Namespace::peer_id_locked(const Namespace& peer) const {
  for (const auto& [id, ns] : peer_ids_)
    if (ns == &peer) return id;
  return -1;
}

Namespace* Namespace::peer_by_id_locked(int id) const {
  auto it = peer_ids_.find(id);
  return it == peer_ids_.end() ? nullptr : it->second;
}

Result<int> Namespace::assign_peer_id_locked(Namespace& peer, int id) {
  if (id >= 0 && peer_ids_.count(id))
    return fail(EEXIST, "namespace \"{}\": id {} is taken", name_, id);
  if (id < 0) {
    id = 0;  // the lowest free one (Linux: alloc_netid with an idr from 0)
    for (const auto& [taken, ns] : peer_ids_) {
      if (taken != id) break;
      ++id;
    }
  }
  peer_ids_.emplace(id, &peer);
  engine_->impl().tell_nsid_observers(*this, peer, id, true);
  return id;
}

int Namespace::peer_id_alloc_locked(Namespace& peer) {
  int id = peer_id_locked(peer);
  if (id >= 0 || peer.dying_) return id;
  auto r = assign_peer_id_locked(peer, -1);
  return r ? *r : -1;
}

}  // namespace ifcore
