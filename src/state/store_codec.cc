// state/store_codec.cc — the state store's netlink bytes, read and written without the
// engine, and its SQLite helpers: rows read at start, records not restored (store_impl.h).
#include "state/store_impl.h"

namespace ifcore::state::detail {

// ---- netlink bytes: attributes read and written without the engine

std::vector<RawAttr> attrs_of(View b) {
  std::vector<RawAttr> out;
  std::size_t off = 0;
  while (off + sizeof(nlattr) <= b.size()) {
    nlattr a;
    std::memcpy(&a, b.data() + off, sizeof(a));
    if (a.nla_len < sizeof(nlattr) || off + a.nla_len > b.size()) break;
    out.push_back({static_cast<std::uint16_t>(a.nla_type & NLA_TYPE_MASK),
                   b.subspan(off + sizeof(nlattr), a.nla_len - sizeof(nlattr))});
    off += NLA_ALIGN(a.nla_len);
  }
  return out;
}

const RawAttr* find(const std::vector<RawAttr>& as, std::uint16_t type) {
  for (const auto& a : as)
    if (a.type == type) return &a;
  return nullptr;
}

std::optional<std::uint32_t> u32_of(const std::vector<RawAttr>& as, std::uint16_t type) {
  const RawAttr* a = find(as, type);
  if (!a || a->data.size() < 4) return std::nullopt;
  std::uint32_t v;
  std::memcpy(&v, a->data.data(), 4);
  return v;
}

std::string str_of(const std::vector<RawAttr>& as, std::uint16_t type) {
  const RawAttr* a = find(as, type);
  if (!a) return {};
  std::string s(a->data.begin(), a->data.end());
  if (auto z = s.find('\0'); z != std::string::npos) s.resize(z);
  return s;
}

void put_raw(Bytes& b, const void* p, std::size_t n) {
  const auto* c = static_cast<const std::uint8_t*>(p);
  b.insert(b.end(), c, c + n);
  b.resize(NLA_ALIGN(b.size()), 0);
}

void put_attr(Bytes& b, std::uint16_t type, View data) {
  nlattr a{static_cast<std::uint16_t>(sizeof(nlattr) + data.size()), type};
  b.insert(b.end(), reinterpret_cast<std::uint8_t*>(&a), reinterpret_cast<std::uint8_t*>(&a) + 4);
  put_raw(b, data.data(), data.size());
}

void put_u32(Bytes& b, std::uint16_t type, std::uint32_t v) {
  put_attr(b, type, View(reinterpret_cast<const std::uint8_t*>(&v), 4));
}

void put_str(Bytes& b, std::uint16_t type, std::string_view s) {
  Bytes z(s.begin(), s.end());
  z.push_back(0);
  put_attr(b, type, z);
}

std::size_t begin_nest(Bytes& b, std::uint16_t type) {
  std::size_t at = b.size();
  nlattr a{0, type};
  b.insert(b.end(), reinterpret_cast<std::uint8_t*>(&a), reinterpret_cast<std::uint8_t*>(&a) + 4);
  return at;
}

void end_nest(Bytes& b, std::size_t at) {
  auto len = static_cast<std::uint16_t>(b.size() - at);
  std::memcpy(b.data() + at, &len, 2);
}

// A whole message: header + body.
Bytes message(std::uint16_t type, std::uint16_t flags, std::uint32_t seq, View body) {
  Bytes m(sizeof(nlmsghdr) + body.size());
  nlmsghdr h{static_cast<std::uint32_t>(m.size()), type, flags, seq, 0};
  std::memcpy(m.data(), &h, sizeof(h));
  if (!body.empty()) std::memcpy(m.data() + sizeof(h), body.data(), body.size());
  return m;
}

// One request's answer: ok, or the error it got (with the extended ack's message).
Result<void> answer_of(const std::vector<Bytes>& replies) {
  for (const auto& d : replies) {
    std::size_t off = 0;
    while (off + sizeof(nlmsghdr) <= d.size()) {
      nlmsghdr h;
      std::memcpy(&h, d.data() + off, sizeof(h));
      if (h.nlmsg_len < sizeof(h) || off + h.nlmsg_len > d.size()) break;
      if (h.nlmsg_type == NLMSG_ERROR && h.nlmsg_len >= sizeof(h) + sizeof(nlmsgerr)) {
        nlmsgerr e;
        std::memcpy(&e, d.data() + off + sizeof(h), sizeof(e));
        if (e.error != 0) {
          std::string msg;
          if (h.nlmsg_flags & NLM_F_ACK_TLVS) {
            std::size_t tl = off + sizeof(h) + sizeof(nlmsgerr);
            if (!(h.nlmsg_flags & NLM_F_CAPPED)) tl += e.msg.nlmsg_len - sizeof(nlmsghdr);
            if (tl <= off + h.nlmsg_len)
              msg =
                  str_of(attrs_of(View(d.data() + tl, off + h.nlmsg_len - tl)), NLMSGERR_ATTR_MSG);
          }
          return fail(-e.error, "{}{}{}", std::strerror(-e.error), msg.empty() ? "" : ": ", msg);
        }
      }
      off += NLMSG_ALIGN(h.nlmsg_len);
    }
  }
  return ok();
}

std::string addr_text(int family, View b) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if ((family == AF_INET && b.size() == 4) || (family == AF_INET6 && b.size() == 16))
    inet_ntop(family, b.data(), buf, sizeof(buf));
  return buf;
}

std::int64_t wall_now() {
  return static_cast<std::int64_t>(std::time(nullptr));
}

// ---- SQLite

Error sql_error(sqlite3* db, std::string_view what) {
  int code = db ? sqlite3_errcode(db) : SQLITE_ERROR;
  int e = code == SQLITE_NOTADB || code == SQLITE_CORRUPT ? EBADMSG
          : code == SQLITE_FULL                           ? ENOSPC
          : code == SQLITE_CANTOPEN                       ? ENOENT
                                                          : EIO;
  return Error{e, fmt::format("{}: {}", what, db ? sqlite3_errmsg(db) : "out of memory")};
}

View column_blob(sqlite3_stmt* s, int i) {
  auto* p = static_cast<const std::uint8_t*>(sqlite3_column_blob(s, i));
  return View(p, static_cast<std::size_t>(sqlite3_column_bytes(s, i)));
}

std::string column_text(sqlite3_stmt* s, int i) {
  const auto* p = sqlite3_column_text(s, i);
  return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
}

Result<sqlite3*> open_db(const std::string& path, bool read_only) {
  sqlite3* db = nullptr;
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    Error e = sql_error(db, fmt::format("state file {}", path));
    sqlite3_close(db);
    return fail(e);
  }
  sqlite3_extended_result_codes(db, 0);
  return db;
}

// The integrity check and the format's mark. A file with no table is a new one.
Result<bool> check_db(sqlite3* db, const std::string& path) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &s, nullptr) != SQLITE_OK)
    return fail(sql_error(db, fmt::format("state file {}", path)));
  std::vector<std::string> problems;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    std::string line = column_text(s, 0);
    if (line != "ok") problems.push_back(line);
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE)
    return fail(sql_error(db, fmt::format("state file {} fails its integrity check", path)));
  if (!problems.empty())
    return fail(EBADMSG, "state file {} fails its integrity check: {}{}", path, problems[0],
                problems.size() > 1 ? fmt::format(" (and {} more)", problems.size() - 1) : "");
  int tables = 0;
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type='table'", -1, &s,
                         nullptr) != SQLITE_OK)
    return fail(sql_error(db, fmt::format("state file {}", path)));
  if (sqlite3_step(s) == SQLITE_ROW) tables = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  if (tables == 0) return false;
  std::string format;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='format'", -1, &s, nullptr) ==
      SQLITE_OK) {
    if (sqlite3_step(s) == SQLITE_ROW) format = column_text(s, 0);
    sqlite3_finalize(s);
  }
  if (format != kFormat)
    return fail(EBADMSG, "{} is not an ifcore state file (format \"{}\", want \"{}\")", path,
                format, kFormat);
  return true;
}

Bytes ifinfo(int index, std::uint32_t flags, std::uint32_t change) {
  ifinfomsg ifi{};
  ifi.ifi_index = index;
  ifi.ifi_flags = flags;
  ifi.ifi_change = change;
  Bytes b(sizeof(ifi));
  std::memcpy(b.data(), &ifi, sizeof(ifi));
  return b;
}

void copy_attr(Bytes& b, const std::vector<RawAttr>& as, std::uint16_t type) {
  if (const RawAttr* a = find(as, type)) put_attr(b, type, a->data);
}

bool has_column(sqlite3* db, const char* table, const char* column) {
  sqlite3_stmt* s = nullptr;
  std::string sql = fmt::format("PRAGMA table_info({})", table);
  bool found = false;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK)
    while (!found && sqlite3_step(s) == SQLITE_ROW) found = column_text(s, 1) == column;
  sqlite3_finalize(s);
  return found;
}

// Reads the kept rows: namespaces in the order they were made, objects in the order they
// changed. Errors: the file cannot be read; what was read before stays in the vectors.
Result<void> load_rows(sqlite3* db, std::vector<NsRow>& nss, std::vector<ObjRow>& rows) {
  sqlite3_stmt* s = nullptr;
  int rc =
      sqlite3_prepare_v2(db, "SELECT name, id, seq FROM namespaces ORDER BY seq", -1, &s, nullptr);
  while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    nss.push_back({column_text(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int64(s, 2)});
    rc = SQLITE_OK;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return fail(sql_error(db, "state file: read"));
  rc = sqlite3_prepare_v2(db,
                          has_column(db, "objects", "pos")
                              ? "SELECT ns, type, key, dev, seq, valid_until, preferred_until, "
                                "summary, msg, pos FROM objects ORDER BY seq"
                              : "SELECT ns, type, key, dev, seq, valid_until, preferred_until, "
                                "summary, msg, 0 FROM objects ORDER BY seq",
                          -1, &s, nullptr);
  while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    ObjRow r;
    r.ns = column_text(s, 0);
    r.type = column_text(s, 1);
    View k = column_blob(s, 2);
    r.key.assign(k.begin(), k.end());
    r.dev = sqlite3_column_int(s, 3);
    r.seq = sqlite3_column_int64(s, 4);
    if (sqlite3_column_type(s, 5) != SQLITE_NULL) r.valid_until = sqlite3_column_int64(s, 5);
    if (sqlite3_column_type(s, 6) != SQLITE_NULL) r.preferred_until = sqlite3_column_int64(s, 6);
    r.summary = column_text(s, 7);
    View m = column_blob(s, 8);
    r.msg.assign(m.begin(), m.end());
    r.pos = sqlite3_column_int64(s, 9);
    rows.push_back(std::move(r));
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return fail(sql_error(db, "state file: read"));
  return ok();
}

// Under --state-recover: what could not be applied leaves the live rows for the table
// `lost`, with the error, so that it is neither replayed again nor forgotten.
Result<void> keep_lost(sqlite3* db, const std::vector<Lost>& lost) {
  auto exec = [&](const char* sql) -> Result<void> {
    if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
      return fail(sql_error(db, "state file: write"));
    return ok();
  };
  IFCORE_TRY(exec("BEGIN"));
  sqlite3_stmt* ins = nullptr;
  sqlite3_stmt* del = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT INTO lost(ns, type, summary, msg, error, at) VALUES(?1, ?2, ?3, "
                     "?4, ?5, ?6)",
                     -1, &ins, nullptr);
  sqlite3_prepare_v2(db, "DELETE FROM objects WHERE ns=?1 AND type=?2 AND key=?3", -1, &del,
                     nullptr);
  bool okay = ins && del;
  for (const auto& l : lost) {
    if (!okay) break;
    okay =
        Stmt(ins)
                .text(1, l.row->ns)
                .text(2, l.row->type)
                .text(3, l.row->summary)
                .blob(4, l.row->msg)
                .text(5, l.error)
                .i64(6, wall_now())
                .step() == SQLITE_DONE &&
        Stmt(del).text(1, l.row->ns).text(2, l.row->type).blob(3, l.row->key).step() == SQLITE_DONE;
  }
  sqlite3_finalize(ins);
  sqlite3_finalize(del);
  if (!okay) {
    Error e = sql_error(db, "state file: write");
    (void)exec("ROLLBACK");
    return fail(e);
  }
  return exec("COMMIT");
}

std::map<std::pair<std::string, int>, std::string> nsid_peers(const std::vector<ObjRow>& rows,
                                                              const std::vector<NsRow>& nss) {
  std::map<std::pair<std::string, int>, std::string> out;
  bool kept = false;
  for (const auto& r : rows) {
    if (r.type != "nsid") continue;
    kept = true;
    auto as = attrs_of(View(r.msg).subspan(std::min<std::size_t>(r.msg.size(), NLMSG_ALIGN(1))));
    if (auto id = u32_of(as, NETNSA_NSID))
      out[{r.ns, static_cast<int>(*id)}] = str_of(as, wire::IFCORE_NETNSA_NAME);
  }
  // A file written before the ids were kept per namespace has no "nsid" rows: there, every
  // namespace called another by that one's own number.
  if (!kept)
    for (const auto& from : nss)
      for (const auto& peer : nss)
        if (&from != &peer) out[{from.name, peer.id}] = peer.name;
  return out;
}

}  // namespace ifcore::state::detail
