// state/store.h — ifcored --state FILE: the configured state kept in SQLite (WAL mode), so
// that a restarted ifcored comes back with every namespace and object it acknowledged.
//
// How: the store taps the notifications the rtnl server makes (rtnl::Server::set_tap), for
// every namespace, and keeps one row per object keyed by its identity (namespace, type,
// key): a NEW* upserts it, a DEL* deletes it; what is derived or transient is left out
// (carrier, operstate, counters, learned and non-permanent neighbours, routes and rules the
// engine makes itself). Namespaces come from a pernet hook. The daemon's loop commits once
// per pass and holds every reply until then (daemon::StateHook). On start, the rows are
// replayed as requests in dependency order. Schema and rules: docs/STATE.md.
//
// Lock order: 1. the engine's control lock (the tap and the pernet hooks run under it),
// 2. Store::mu_ (the changes recorded and not yet committed).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "daemon/daemon.h"
#include "ifcore/engine.h"
#include "ifcore/mutex.h"
#include "ifcore/result.h"

struct sqlite3;
struct sqlite3_stmt;
struct nlmsghdr;

namespace ifcore::state {

namespace detail {
struct Row;
}

enum class Sync {
  Full,   // every commit is synced before its replies go (synchronous=FULL)
  Batch,  // commits reach the file at once, a sync at most every batch_interval
  Off,    // never synced (tests): survives a killed process, not a crashed machine
};

struct Options {
  std::string path;
  Sync sync = Sync::Full;
  std::chrono::milliseconds batch_interval{10};
  bool recover = false;  // --state-recover: apply what can be applied, report the rest
};

// Parses "full", "batch" or "off". Errors: EINVAL.
Result<Sync> parse_sync(std::string_view s);

class Store final : public daemon::StateHook, public PernetHooks {
 public:
  // Opens (or makes) the file, checks its integrity and its schema.
  // Errors: the file cannot be opened, is not a state file, or fails its integrity check.
  static Result<std::unique_ptr<Store>> open(const Options& opts);
  ~Store() override;

  // daemon::StateHook
  Result<void> start(Engine& engine, rtnl::Server& server) override;
  bool dirty() const override { return pending_.load(std::memory_order_acquire); }
  Result<void> commit() override;
  Result<void> stop() override;

  // PernetHooks (Context: control lock)
  Result<void> init(Control& ctl, Namespace& ns) override;
  void exit(Control& ctl, Namespace& ns) override;

  // Figures for logs and tests.
  std::uint64_t commits() const { return commits_; }

 private:
  explicit Store(Options opts);
  Result<void> exec(const char* sql);
  Result<void> prepare();
  Result<void> replay(Engine& engine, rtnl::Server& server);
  // Applies one recorded change to the open transaction.
  Result<void> apply(const std::string& ns, std::span<const std::uint8_t> msg);
  // Before a `default` that devices copy only when made is written: the value it replaces,
  // kept if a device was made meanwhile (store_defaults.cc).
  Result<void> keep_default(const std::string& ns, const detail::Row& r,
                            std::span<const std::uint8_t> msg);
  // A route's RTM_NEWROUTE or RTM_DELROUTE (store_routes.cc).
  Result<void> apply_route(const std::string& ns, const nlmsghdr& h,
                           std::span<const std::uint8_t> body);
  void tap(int ns_id, std::span<const std::uint8_t> msg);
  void syncer();

  struct Entry {
    enum Op : std::uint8_t { Msg, NsAdd, NsDel } op;
    std::string ns;
    int ns_id = 0;
    std::vector<std::uint8_t> msg;
  };

  struct Salvage;  // rows read from a damaged file (--state-recover)
  std::unique_ptr<Salvage> salvaged_;
  Options opts_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* upsert_ = nullptr;
  sqlite3_stmt* erase_ = nullptr;
  sqlite3_stmt* erase_dev_ = nullptr;
  sqlite3_stmt* erase_ns_objs_ = nullptr;
  sqlite3_stmt* upsert_ns_ = nullptr;
  sqlite3_stmt* erase_ns_ = nullptr;
  sqlite3_stmt* route_group_ = nullptr;
  Engine* engine_ = nullptr;
  rtnl::Server* server_ = nullptr;
  bool attached_ = false;
  std::int64_t seq_ = 0;
  std::uint64_t commits_ = 0;

  mutable Mutex mu_;  // LOCK ORDERING: inside the control lock (the tap) or alone; a leaf
  std::vector<Entry> log_ IFCORE_GUARDED_BY(mu_);
  // Namespace id -> name (ids are never reused).
  std::map<int, std::string> names_ IFCORE_GUARDED_BY(mu_);
  std::atomic<bool> pending_{false};
  bool detaching_ IFCORE_GUARDED_BY(mu_) = false;

  // Sync::Batch: a thread syncs the write-ahead log at most every batch_interval.
  int wal_fd_ = -1;
  std::thread syncer_;
  Mutex sync_mu_;  // LOCK ORDERING: a leaf, taken alone
  std::condition_variable sync_cv_;
  bool sync_stop_ IFCORE_GUARDED_BY(sync_mu_) = false;
  bool sync_wanted_ IFCORE_GUARDED_BY(sync_mu_) = false;
};

// Prints every row of a state file (namespaces, objects, records that could not be
// applied), one line each, without a daemon. Errors: as Store::open.
Result<void> dump(const std::string& path, std::FILE* out);

}  // namespace ifcore::state
