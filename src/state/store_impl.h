// state/store_impl.h — internal to the state store (store.cc, store_codec.cc,
// store_rows.cc, store_replay.cc): netlink bytes read and written without the engine,
// the rows notifications become, and SQLite's helpers.
#pragma once

#include <net/if.h>  // before any <linux/if*.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/if_addrlabel.h>
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "ifcore/addrlabel.h"
#include "ifcore/namespace.h"
#include "rtnl/wire/nsid.h"
#include "rtnl/wire/sysctl_msg.h"

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ifcore/result.h"
#include "state/store.h"

namespace ifcore::state::detail {

inline constexpr const char* kFormat = "ifcore-state 1";
// <linux/if.h> values that <net/if.h> leaves out, and addrconf's "forever".
inline constexpr std::uint32_t kIffLowerUp = 1u << 16, kIffDormant = 1u << 17;
inline constexpr std::uint32_t kForever = 0xffffffffu;
// ifcore's own IFLA_*: create in (or move to) a namespace by name (rtnl/wire/link.h).
inline constexpr std::uint16_t kIflaNetNsName = 0x3f00;
// A device's offload limits, in the order do_setlink sets them (IFLA_GSO_IPV4_MAX_SIZE and
// IFLA_GRO_IPV4_MAX_SIZE, 63 and 64, are newer than the uapi headers).
inline constexpr std::uint16_t kOffloadLimits[] = {IFLA_GSO_MAX_SIZE, IFLA_GSO_MAX_SEGS,
                                                   IFLA_GRO_MAX_SIZE, 63, 64};

using Bytes = std::vector<std::uint8_t>;
using View = std::span<const std::uint8_t>;

struct RawAttr {
  std::uint16_t type;  // without NLA_F_NESTED / NLA_F_NET_BYTEORDER
  View data;
};

std::vector<RawAttr> attrs_of(View b);
const RawAttr* find(const std::vector<RawAttr>& as, std::uint16_t type);
std::optional<std::uint32_t> u32_of(const std::vector<RawAttr>& as, std::uint16_t type);
std::string str_of(const std::vector<RawAttr>& as, std::uint16_t type);
void put_raw(Bytes& b, const void* p, std::size_t n);
void put_attr(Bytes& b, std::uint16_t type, View data);
void put_u32(Bytes& b, std::uint16_t type, std::uint32_t v);
void put_str(Bytes& b, std::uint16_t type, std::string_view s);
std::size_t begin_nest(Bytes& b, std::uint16_t type);
void end_nest(Bytes& b, std::size_t at);
Bytes message(std::uint16_t type, std::uint16_t flags, std::uint32_t seq, View body);
// The answer to one request the replay sent: ok, or the error it got (errno and the extended
// ack's message).
Result<void> answer_of(const std::vector<Bytes>& replies);
std::string addr_text(int family, View b);
std::int64_t wall_now();

template <class T>
T header_of(View body) {
  T t{};
  std::memcpy(&t, body.data(), std::min(sizeof(T), body.size()));
  return t;
}

// What a row does to the file: nothing, insert or update, delete, delete a device's rows.
enum class Kind { None, Upsert, Erase, EraseDev };

struct Row {
  Kind what = Kind::None;
  const char* type = "";
  Bytes key;
  int dev = 0;
  Bytes body;  // filtered: what is kept (without the nlmsghdr)
  std::optional<std::int64_t> valid_until, preferred_until;
  std::string summary;
};

// Routes (store_routes.cc): one row per IPv4 alias or IPv6 sibling, keyed by the key they
// share (route_base) and what tells them apart.
struct RouteRow {
  Bytes key;
  int dev = 0;
  Bytes body;
  std::string summary;
};
struct RouteRows {
  bool del = false, replace = false, append = false;  // RTM_DELROUTE, NLM_F_* of a NEW
  Bytes base;                                         // the key they share
  std::vector<RouteRow> rows;                         // none: not kept (kernel, cloned)
};
Bytes route_base(View body);
RouteRows route_rows(const nlmsghdr& h, View body);
// True for a row of an IPv6 hop with a gateway (one sibling of a multipath route).
bool route_sibling(View key, std::size_t base_len);

void key_add(Bytes& k, const void* p, std::size_t n);
void key_attr(Bytes& k, const std::vector<RawAttr>& as, std::uint16_t type);
Bytes filtered(View body, std::size_t hdr, std::initializer_list<std::uint16_t> drop);
Bytes link_info_kept(View info);
struct ObjRow;
struct NsRow;
// The bridges (namespace, ifindex) whose address is their ports' lowest: made again
// without one, they take it from their ports again and follow them as before (Linux:
// br_stp_recalculate_bridge_id changes a bridge's address that was not set).
std::set<std::pair<std::string, int>> bridges_addressed_by_ports(const std::vector<ObjRow>& rows);
// A bridge port's kept settings as the IFLA_LINKINFO of a request that sets them again
// (IFLA_INFO_SLAVE_KIND "bridge" and IFLA_INFO_SLAVE_DATA); empty if none are kept.
Bytes port_settings(const std::vector<RawAttr>& link_attrs);
Row link_row(const nlmsghdr& h, View body);
Row addr_row(const nlmsghdr& h, View body);
Row rule_row(const nlmsghdr& h, View body);
Row neigh_row(const nlmsghdr& h, View body);
Row nexthop_row(const nlmsghdr& h, View body);
Row sysctl_row(const nlmsghdr& h, View body);
// RTM_NEWNSID / RTM_DELNSID as the tap gets them (naming the peer): the id a namespace
// gives a peer, keyed by the id; replayed as the RTM_NEWNSID that sets it again.
Row nsid_row(const nlmsghdr& h, View body);
// The peers the kept ids name: (namespace, nsid) -> the peer's name (for a file without
// "nsid" rows, the namespaces' own numbers, which the ids were before).
std::map<std::pair<std::string, int>, std::string> nsid_peers(const std::vector<ObjRow>& rows,
                                                              const std::vector<NsRow>& nss);
// The ifal_flags of an addrlabel row that keeps a default entry's delete (Linux reads no
// flags from a request: the replay sends the delete as it is).
inline constexpr std::uint8_t kDeletedDefault = 1;
Row addrlabel_row(const nlmsghdr& h, View body);
// An addrlabel row that keeps a default entry's delete; a row of a default entry's key.
bool addrlabel_deleted(const ObjRow& r);
bool addrlabel_of_default(const ObjRow& r);
Row row_of(const nlmsghdr& h, View body);
bool kept_type(std::uint16_t t);

struct Stmt {
  sqlite3_stmt* s;
  explicit Stmt(sqlite3_stmt* st) : s(st) {}
  ~Stmt() { sqlite3_reset(s); }
  Stmt& text(int i, std::string_view v) {
    sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& blob(int i, View v) {
    sqlite3_bind_blob(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& i64(int i, std::int64_t v) {
    sqlite3_bind_int64(s, i, v);
    return *this;
  }
  Stmt& opt(int i, std::optional<std::int64_t> v) {
    if (v)
      sqlite3_bind_int64(s, i, *v);
    else
      sqlite3_bind_null(s, i);
    return *this;
  }
  int step() { return sqlite3_step(s); }
};

Error sql_error(sqlite3* db, std::string_view what);
View column_blob(sqlite3_stmt* s, int i);
std::string column_text(sqlite3_stmt* s, int i);
Result<sqlite3*> open_db(const std::string& path, bool read_only);
Result<bool> check_db(sqlite3* db, const std::string& path);

struct NsRow {
  std::string name;
  int id;
  std::int64_t seq;
};

struct ObjRow {
  std::string ns, type;
  Bytes key;
  int dev = 0;
  std::int64_t seq = 0;
  std::optional<std::int64_t> valid_until, preferred_until;
  std::string summary;
  Bytes msg;             // the body
  std::int64_t pos = 0;  // routes: the place among those of its key
};

// One route request of the replay: the rows it restores (an IPv4 alias, an IPv6 route
// without siblings, or an IPv6 route's siblings as one multipath route), its body and
// flags; in the order the replay sends them.
struct RouteReplay {
  std::vector<const ObjRow*> rows;
  Bytes body;
  std::uint16_t flags = 0;
};
std::vector<RouteReplay> route_replays(const std::vector<ObjRow>& rows);

// An ifinfomsg for device `index` with these flags; an attribute of `as` copied to `b`.
Bytes ifinfo(int index, std::uint32_t flags = 0, std::uint32_t change = 0);
void copy_attr(Bytes& b, const std::vector<RawAttr>& as, std::uint16_t type);

// Settings whose `default` a device copies only when it is made (store_defaults.cc):
// every IPv6 one, IPv4's forwarding (Linux's devinet_copy_dflt_conf copies the others to
// the devices that never set them).
bool copied_at_creation(std::string_view name);
// A device made before the `default` write in force now, whose setting must be written
// with the value it took then: its link row, the setting's name with "default", the value.
struct DeviceDefault {
  const ObjRow* link;
  std::string name, value;
};
std::vector<DeviceDefault> device_defaults(const std::vector<ObjRow>& rows);

// True if `table` has a column `column`.
bool has_column(sqlite3* db, const char* table, const char* column);
// Reads every namespace and object row of the file.
Result<void> load_rows(sqlite3* db, std::vector<NsRow>& nss, std::vector<ObjRow>& rows);

// A record the replay could not apply, and why.
struct Lost {
  const ObjRow* row;
  std::string error;
};
// Under --state-recover: moves the records not restored from the live rows to the table
// `lost`, with their errors, in one transaction.
Result<void> keep_lost(sqlite3* db, const std::vector<Lost>& lost);

}  // namespace ifcore::state::detail

namespace ifcore::state {

// Rows read from a damaged file (--state-recover).
struct Store::Salvage {
  std::vector<detail::NsRow> nss;
  std::vector<detail::ObjRow> rows;
};

}  // namespace ifcore::state
