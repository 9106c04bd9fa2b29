// state/store.cc — the state store (store.h): recording the server's notifications as rows,
// committing them (one transaction per pass of the daemon's loop), and replaying the rows
// as requests at start. Schema and rules: docs/STATE.md.
//
// Lock order: 1. the engine's control lock, 2. Store::mu_. sync_mu_ is taken alone.
#include "state/store.h"

#include "ifcore/namespace.h"
#include "rtnl/wire/sysctl_msg.h"
#include "state/store_impl.h"

namespace ifcore::state {

using namespace detail;

Result<Sync> parse_sync(std::string_view s) {
  if (s == "full") return Sync::Full;
  if (s == "batch") return Sync::Batch;
  if (s == "off") return Sync::Off;
  return fail(EINVAL, "--sync: \"{}\" is not one of full, batch, off", s);
}

Result<std::unique_ptr<Store>> Store::open(const Options& opts) {
  std::unique_ptr<Store> st(new Store(opts));
  auto db = open_db(opts.path, false);
  if (!db) return fail(db.error());
  st->db_ = *db;
  // (A file in WAL mode stays in it: its log is read by the check too.)
  auto existing = check_db(st->db_, opts.path);
  if (existing)
    if (auto w = st->exec("PRAGMA journal_mode=WAL"); !w) existing = fail(w.error());
  if (!existing && opts.recover) {
    // --state-recover: what can still be read is kept for the restore; the damaged file
    // is set aside (FILE.corrupt) and a new one takes its place.
    auto salvage = std::make_unique<Salvage>();
    auto read = load_rows(st->db_, salvage->nss, salvage->rows);
    std::fprintf(stderr,
                 "ifcored: %s\nifcored: --state-recover: %zu namespaces and %zu records read "
                 "from it%s%s; the file is kept as %s.corrupt\n",
                 existing.error().message.c_str(), salvage->nss.size(), salvage->rows.size(),
                 read ? "" : ", then: ", read ? "" : read.error().message.c_str(),
                 opts.path.c_str());
    sqlite3_close(st->db_);
    st->db_ = nullptr;
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::string from = opts.path + suffix, to = opts.path + ".corrupt" + suffix;
      if (std::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT)
        return fail(errno, "cannot set {} aside: {}", from, std::strerror(errno));
    }
    auto fresh = open_db(opts.path, false);
    if (!fresh) return fail(fresh.error());
    st->db_ = *fresh;
    IFCORE_TRY(st->exec("PRAGMA journal_mode=WAL"));
    existing = check_db(st->db_, opts.path);
    st->salvaged_ = std::move(salvage);
  }
  if (!existing) return fail(existing.error());
  const char* sync = opts.sync == Sync::Full    ? "PRAGMA synchronous=FULL"
                     : opts.sync == Sync::Batch ? "PRAGMA synchronous=NORMAL"
                                                : "PRAGMA synchronous=OFF";
  IFCORE_TRY(st->exec(sync));
  if (!*existing) {
    IFCORE_TRY(
        st->exec("BEGIN;"
                 "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                 "CREATE TABLE namespaces(name TEXT PRIMARY KEY, id INTEGER NOT NULL, "
                 "  seq INTEGER NOT NULL);"
                 "CREATE TABLE objects(ns TEXT NOT NULL, type TEXT NOT NULL, key BLOB NOT NULL, "
                 "  dev INTEGER NOT NULL, seq INTEGER NOT NULL, valid_until INTEGER, "
                 "  preferred_until INTEGER, summary TEXT NOT NULL, msg BLOB NOT NULL, "
                 "  pos INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(ns, type, key));"
                 "CREATE INDEX objects_dev ON objects(ns, dev);"
                 "CREATE TABLE lost(ns TEXT NOT NULL, type TEXT NOT NULL, summary TEXT NOT NULL, "
                 "  msg BLOB NOT NULL, error TEXT NOT NULL, at INTEGER NOT NULL);"
                 "COMMIT;"));
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(st->db_, "INSERT INTO meta(key, value) VALUES('format', ?)", -1, &s,
                       nullptr);
    sqlite3_bind_text(s, 1, kFormat, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return fail(sql_error(st->db_, "state file"));
  }
  // A file from before routes kept their order has no `pos`: its routes get 0 (the order
  // of their changes).
  if (!has_column(st->db_, "objects", "pos"))
    IFCORE_TRY(st->exec("ALTER TABLE objects ADD COLUMN pos INTEGER NOT NULL DEFAULT 0"));
  IFCORE_TRY(st->prepare());
  if (opts.sync == Sync::Batch) st->syncer_ = std::thread([p = st.get()] { p->syncer(); });
  return st;
}

Store::Store(Options opts) : opts_(std::move(opts)) {}

Store::~Store() {
  if (syncer_.joinable()) {
    {
      MutexLock lk(sync_mu_);
      sync_stop_ = true;
    }
    sync_cv_.notify_all();
    syncer_.join();
  }
  if (wal_fd_ >= 0) close(wal_fd_);
  for (auto* s : {upsert_, erase_, erase_dev_, erase_ns_objs_, upsert_ns_, erase_ns_, route_group_})
    if (s) sqlite3_finalize(s);
  if (db_) sqlite3_close(db_);
}

Result<void> Store::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    Error e = sql_error(db_, fmt::format("state file {}", opts_.path));
    sqlite3_free(err);
    return fail(e);
  }
  return ok();
}

Result<void> Store::prepare() {
  struct P {
    sqlite3_stmt** s;
    const char* sql;
  } ps[] = {
      {&upsert_,
       "INSERT INTO objects(ns, type, key, dev, seq, valid_until, preferred_until, summary, msg, "
       "pos) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT(ns, type, key) DO UPDATE "
       "SET "
       "dev=excluded.dev, seq=excluded.seq, valid_until=excluded.valid_until, "
       "preferred_until=excluded.preferred_until, summary=excluded.summary, msg=excluded.msg "
       "WHERE objects.msg IS NOT excluded.msg OR objects.dev IS NOT excluded.dev OR "
       "objects.valid_until IS NOT excluded.valid_until OR "
       "objects.preferred_until IS NOT excluded.preferred_until"},
      {&erase_, "DELETE FROM objects WHERE ns=?1 AND type=?2 AND key=?3"},
      {&erase_dev_, "DELETE FROM objects WHERE ns=?1 AND dev=?2"},
      {&erase_ns_objs_, "DELETE FROM objects WHERE ns=?1"},
      {&upsert_ns_,
       "INSERT INTO namespaces(name, id, seq) VALUES(?1, ?2, ?3) ON CONFLICT(name) DO UPDATE "
       "SET id=excluded.id WHERE namespaces.id IS NOT excluded.id"},
      {&erase_ns_, "DELETE FROM namespaces WHERE name=?1"},
      {&route_group_,
       "SELECT key, pos FROM objects WHERE ns=?1 AND type='route' AND key>=?2 AND key<?3 "
       "ORDER BY pos, seq"},
  };
  for (auto& p : ps)
    if (sqlite3_prepare_v3(db_, p.sql, -1, SQLITE_PREPARE_PERSISTENT, p.s, nullptr) != SQLITE_OK)
      return fail(sql_error(db_, "state file: prepare"));
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db_,
                     "SELECT max((SELECT max(seq) FROM objects), (SELECT max(seq) FROM "
                     "namespaces))",
                     -1, &s, nullptr);
  if (s && sqlite3_step(s) == SQLITE_ROW) seq_ = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return ok();
}

void Store::tap(int ns_id, std::span<const std::uint8_t> msg) {
  if (msg.size() < sizeof(nlmsghdr)) return;
  nlmsghdr h;
  std::memcpy(&h, msg.data(), sizeof(h));
  if (!kept_type(h.nlmsg_type)) return;
  MutexLock lk(mu_);
  auto it = names_.find(ns_id);
  if (it == names_.end()) return;  // not a namespace the store knows (cannot happen)
  log_.push_back({Entry::Msg, it->second, ns_id, Bytes(msg.begin(), msg.end())});
  pending_.store(true, std::memory_order_release);
}

Result<void> Store::init(Control&, Namespace& ns) {
  MutexLock lk(mu_);
  names_[ns.id()] = ns.name();
  log_.push_back({Entry::NsAdd, ns.name(), ns.id(), {}});
  pending_.store(true, std::memory_order_release);
  return ok();
}

void Store::exit(Control&, Namespace& ns) {
  MutexLock lk(mu_);
  // remove_pernet (stop) calls exit for every namespace: they are not gone.
  if (detaching_) return;
  log_.push_back({Entry::NsDel, ns.name(), ns.id(), {}});
  pending_.store(true, std::memory_order_release);
}

Result<void> Store::apply(const std::string& ns, std::span<const std::uint8_t> msg) {
  std::size_t off = 0;
  while (off + sizeof(nlmsghdr) <= msg.size()) {
    nlmsghdr h;
    std::memcpy(&h, msg.data() + off, sizeof(h));
    if (h.nlmsg_len < sizeof(h) || off + h.nlmsg_len > msg.size()) break;
    View body = msg.subspan(off + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN);
    off += NLMSG_ALIGN(h.nlmsg_len);
    if (h.nlmsg_type == RTM_NEWROUTE || h.nlmsg_type == RTM_DELROUTE) {
      if (body.size() >= sizeof(rtmsg)) IFCORE_TRY(apply_route(ns, h, body));
      continue;
    }
    Row r = row_of(h, body);
    int rc = SQLITE_DONE;
    switch (r.what) {
      case Kind::None:
        continue;
      case Kind::Upsert:
        if (h.nlmsg_type == rtnl::IFCORE_NLMSG_SYSCTL && !r.dev)
          IFCORE_TRY(keep_default(ns, r, body));
        ++seq_;
        // A link row's `pos`: when the device was made (a conflict keeps the first).
        rc = Stmt(upsert_)
                 .text(1, ns)
                 .text(2, r.type)
                 .blob(3, r.key)
                 .i64(4, r.dev)
                 .i64(5, seq_)
                 .opt(6, r.valid_until)
                 .opt(7, r.preferred_until)
                 .text(8, r.summary)
                 .blob(9, r.body)
                 .i64(10, std::string_view(r.type) == "link" ? seq_ : 0)
                 .step();
        break;
      case Kind::Erase:
        rc = Stmt(erase_).text(1, ns).text(2, r.type).blob(3, r.key).step();
        break;
      case Kind::EraseDev:
        // The device and what hangs on it (addresses, routes through it, neighbours).
        rc = Stmt(erase_dev_).text(1, ns).i64(2, r.dev).step();
        break;
    }
    if (rc != SQLITE_DONE) return fail(sql_error(db_, "state file: write"));
  }
  return ok();
}

Result<void> Store::commit() {
  std::vector<Entry> log;
  {
    MutexLock lk(mu_);
    log.swap(log_);
    pending_.store(false, std::memory_order_release);
  }
  if (log.empty()) return ok();
  const int changes_before = sqlite3_total_changes(db_);
  IFCORE_TRY(exec("BEGIN"));
  auto body = [&]() -> Result<void> {
    for (const auto& e : log) {
      int rc = SQLITE_DONE;
      switch (e.op) {
        case Entry::Msg:
          IFCORE_TRY(apply(e.ns, e.msg));
          break;
        case Entry::NsAdd:
          rc = Stmt(upsert_ns_).text(1, e.ns).i64(2, e.ns_id).i64(3, ++seq_).step();
          break;
        case Entry::NsDel:
          rc = Stmt(erase_ns_objs_).text(1, e.ns).step();
          if (rc == SQLITE_DONE) rc = Stmt(erase_ns_).text(1, e.ns).step();
          break;
      }
      if (rc != SQLITE_DONE) return fail(sql_error(db_, "state file: write"));
    }
    return ok();
  };
  if (auto r = body(); !r) {
    (void)exec("ROLLBACK");
    return r;
  }
  const bool wrote = sqlite3_total_changes(db_) != changes_before;
  IFCORE_TRY(exec("COMMIT"));
  ++commits_;
  if (wrote && opts_.sync == Sync::Batch) {
    MutexLock lk(sync_mu_);
    sync_wanted_ = true;
    sync_cv_.notify_one();
  }
  return ok();
}

void Store::syncer() {
  // Batch: the commits are in the write-ahead log's pages (a killed daemon loses none of
  // them); this makes them durable against a crash of the machine, at most one interval
  // late.
  MutexLock lk(sync_mu_);
  for (;;) {
    while (!sync_stop_ && !sync_wanted_) lk.wait(sync_cv_);
    if (sync_stop_) return;
    lk.unlock();
    std::this_thread::sleep_for(opts_.batch_interval);
    lk.lock();
    sync_wanted_ = false;
    if (wal_fd_ < 0) wal_fd_ = ::open((opts_.path + "-wal").c_str(), O_RDONLY | O_CLOEXEC);
    int fd = wal_fd_;
    lk.unlock();
    if (fd >= 0) fdatasync(fd);
    lk.lock();
  }
}

Result<void> Store::start(Engine& engine, rtnl::Server& server) {
  engine_ = &engine;
  server_ = &server;
  // Recording starts before the replay, so that the rows are rewritten as the engine
  // announces what it made of them (new namespace ids, the kernel-made parts).
  server.set_tap([this](int ns_id, std::span<const std::uint8_t> msg) { tap(ns_id, msg); });
  {
    Control ctl = engine.control();
    IFCORE_TRY(ctl.add_pernet(*this));
  }
  attached_ = true;
  auto r = replay(engine, server);
  if (!r) {
    // Nothing of the failed start reaches the file.
    MutexLock lk(mu_);
    log_.clear();
    pending_.store(false);
    return r;
  }
  return commit();
}

Result<void> Store::stop() {
  if (!attached_) return ok();
  server_->set_tap({});
  {
    Control ctl = engine_->control();
    {
      MutexLock lk(mu_);
      detaching_ = true;
    }
    ctl.remove_pernet(*this);
  }
  attached_ = false;
  auto r = commit();
  if (r && opts_.sync != Sync::Off) (void)exec("PRAGMA wal_checkpoint(TRUNCATE)");
  return r;
}

Result<void> dump(const std::string& path, std::FILE* out) {
  if (access(path.c_str(), R_OK) != 0)
    return fail(errno, "state file {}: {}", path, std::strerror(errno));
  auto db = open_db(path, true);
  if (!db) return fail(db.error());
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> guard(*db, sqlite3_close);
  auto existing = check_db(*db, path);
  if (!existing) return fail(existing.error());
  if (!*existing) return ok();
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(*db, "SELECT name, id FROM namespaces ORDER BY seq", -1, &s, nullptr);
  while (s && sqlite3_step(s) == SQLITE_ROW)
    std::fprintf(out, "namespace %s id %d\n", column_text(s, 0).c_str(), sqlite3_column_int(s, 1));
  sqlite3_finalize(s);
  sqlite3_prepare_v2(*db,
                     "SELECT ns, type, summary, valid_until, preferred_until FROM objects ORDER BY "
                     "ns, CASE type WHEN 'link' THEN 0 WHEN 'addr' THEN 1 WHEN 'nexthop' THEN 2 "
                     "WHEN 'route' THEN 3 WHEN 'rule' THEN 4 ELSE 5 END, dev, summary",
                     -1, &s, nullptr);
  while (s && sqlite3_step(s) == SQLITE_ROW) {
    std::string extra;
    if (sqlite3_column_type(s, 3) != SQLITE_NULL)
      extra += fmt::format(" valid_until {}", sqlite3_column_int64(s, 3));
    if (sqlite3_column_type(s, 4) != SQLITE_NULL)
      extra += fmt::format(" preferred_until {}", sqlite3_column_int64(s, 4));
    std::fprintf(out, "%s %s %s%s\n", column_text(s, 0).c_str(), column_text(s, 1).c_str(),
                 column_text(s, 2).c_str(), extra.c_str());
  }
  sqlite3_finalize(s);
  sqlite3_prepare_v2(*db, "SELECT ns, type, summary, error FROM lost ORDER BY rowid", -1, &s,
                     nullptr);
  while (s && sqlite3_step(s) == SQLITE_ROW)
    std::fprintf(out, "lost %s %s %s: %s\n", column_text(s, 0).c_str(), column_text(s, 1).c_str(),
                 column_text(s, 2).c_str(), column_text(s, 3).c_str());
  sqlite3_finalize(s);
  return ok();
}

}  // namespace ifcore::state
