// state/store_defaults.cc — the `default` settings a device copies only when it is made
// (every IPv6 one, IPv4's forwarding). The restore writes the current `default` before it
// makes the devices, so that a device made after the write takes it; a device made before
// it took an older value, which is kept as a `sysctl-was` row when the write replaces it
// (`pos` of a link row is when the device was made) and written for the device after it
// is made again.
#include "state/store_impl.h"

namespace ifcore::state::detail {

namespace {

struct Setting {
  std::string name, value, was;
};

Setting setting_of(View msg) {
  auto as = attrs_of(msg.subspan(std::min<std::size_t>(msg.size(), 4)));
  return {str_of(as, rtnl::IFCORE_SYSCTL_NAME), str_of(as, rtnl::IFCORE_SYSCTL_VALUE),
          str_of(as, rtnl::IFCORE_SYSCTL_WAS)};
}

}  // namespace

bool copied_at_creation(std::string_view name) {
  return name.starts_with("net.ipv6.conf.default.") || name == "net.ipv4.conf.default.forwarding";
}

std::vector<DeviceDefault> device_defaults(const std::vector<ObjRow>& rows) {
  // Per namespace and setting, the values in the order they were in force: (since, value);
  // the last is the current row's.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::int64_t, std::string>>>
      values;
  for (const ObjRow& r : rows) {
    if (r.type != "sysctl" && r.type != "sysctl-was") continue;
    Setting s = setting_of(r.msg);
    if (copied_at_creation(s.name)) values[{r.ns, s.name}].emplace_back(r.seq, s.value);
  }
  std::vector<DeviceDefault> out;
  for (auto& [key, v] : values) std::sort(v.begin(), v.end());
  for (const ObjRow& r : rows) {
    if (r.type != "link" || r.pos <= 0) continue;  // pos 0: not known when it was made
    for (const auto& [key, v] : values) {
      if (key.first != r.ns) continue;
      // The value in force when the device was made: the last written before it.
      auto after = std::upper_bound(v.begin(), v.end(), std::make_pair(r.pos, std::string()));
      if (after == v.begin() || after == v.end()) continue;       // none before, or the current one
      if (std::prev(after)->second == v.back().second) continue;  // the same as now
      out.push_back({&r, key.second, std::prev(after)->second});
    }
  }
  return out;
}

}  // namespace ifcore::state::detail

namespace ifcore::state {

using namespace detail;

Result<void> Store::keep_default(const std::string& ns, const Row& r, View msg) {
  Setting s = setting_of(msg);
  if (!copied_at_creation(s.name) || s.was.empty()) return ok();
  auto query = [&](const char* sql, auto&& bind, auto&& row) -> Result<void> {
    sqlite3_stmt* q = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &q, nullptr) != SQLITE_OK)
      return fail(sql_error(db_, "state file: read"));
    bind(q);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) row(q);
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) return fail(sql_error(db_, "state file: read"));
    return ok();
  };
  // Since when the value it replaces was in force: its row's change, or the start.
  std::int64_t since = 0, newest = 0;
  IFCORE_TRY(query(
      "SELECT seq FROM objects WHERE ns=?1 AND type='sysctl' AND key=?2",
      [&](sqlite3_stmt* q) {
        sqlite3_bind_text(q, 1, ns.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_blob(q, 2, r.key.data(), static_cast<int>(r.key.size()), SQLITE_TRANSIENT);
      },
      [&](sqlite3_stmt* q) { since = sqlite3_column_int64(q, 0); }));
  IFCORE_TRY(query(
      "SELECT max(pos) FROM objects WHERE ns=?1 AND type='link'",
      [&](sqlite3_stmt* q) { sqlite3_bind_text(q, 1, ns.c_str(), -1, SQLITE_TRANSIENT); },
      [&](sqlite3_stmt* q) { newest = sqlite3_column_int64(q, 0); }));
  // Kept only if a device was made while it was in force, and it changes.
  if (s.was == s.value || newest <= since) return ok();
  Bytes body(msg.begin(), msg.begin() + std::min<std::ptrdiff_t>(4, msg.size()));
  put_str(body, rtnl::IFCORE_SYSCTL_NAME, s.name);
  put_str(body, rtnl::IFCORE_SYSCTL_VALUE, s.was);
  std::string key = fmt::format("{}#{}", s.name, since);
  int rc = Stmt(upsert_)
               .text(1, ns)
               .text(2, "sysctl-was")
               .blob(3, View(reinterpret_cast<const std::uint8_t*>(key.data()), key.size()))
               .i64(4, 0)
               .i64(5, since)
               .opt(6, std::nullopt)
               .opt(7, std::nullopt)
               .text(8, fmt::format("{} = {} (for the devices made before the next write)", s.name,
                                    s.was))
               .blob(9, body)
               .i64(10, 0)
               .step();
  if (rc != SQLITE_DONE) return fail(sql_error(db_, "state file: write"));
  return ok();
}

}  // namespace ifcore::state
