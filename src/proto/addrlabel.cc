// proto/addrlabel.cc — the IPv6 address label table of a namespace (RFC 6724's policy
// table; Linux: net/ipv6/addrlabel.c, semantics only): the default entries, adding in
// order, replacing in place, deleting, and the lookup RTM_GETADDRLABEL makes.
//
// Context: control lock, everywhere (the table is the namespace's NetState, under the
// protocols' lock). An entry names a device by ifindex and holds no reference on it: like
// Linux's, it stays when the device goes.
#include <algorithm>
#include <array>

#include "proto/state.h"

namespace ifcore::proto {

namespace {

using inet::AddrLabel;
using Type = AddrLabelEntry::Type;

constexpr std::uint32_t kNoLabel = 0xffffffffu;  // Linux: IPV6_ADDR_LABEL_DEFAULT

// Linux: ipv6_addr_type, the kinds a label's prefix is told apart by (__ipv6_addr_type:
// the first 96 bits zero, the last 32 not 0 or 1, is IPv4-compatible; ::ffff:0:0/96 mapped).
Type type_of(const IpAddr& a) {
  const std::uint8_t* b = a.data();
  if (std::any_of(b, b + 8, [](std::uint8_t x) { return x != 0; })) return Type::Any;
  if (b[8] == 0 && b[9] == 0 && b[10] == 0xff && b[11] == 0xff) return Type::Mapped;
  if (b[8] | b[9] | b[10] | b[11]) return Type::Any;
  bool zero = !(b[12] | b[13] | b[14] | b[15]);
  if (zero) return Type::Any;
  bool one = !(b[12] | b[13] | b[14]) && b[15] == 1;
  return one ? Type::Loopback : Type::Compat;
}

// Linux: ip6addrlbl_alloc — the prefix's kind kept only where the length covers it.
Result<AddrLabelEntry> make_entry(const AddrLabel& l) {
  AddrLabelEntry e;
  e.info = l;
  e.info.prefix = prefix_of(l.prefix, l.prefix_len);
  e.type = type_of(l.prefix);
  switch (e.type) {
    case Type::Mapped:
      if (l.prefix_len > 96) return fail_log_only(EINVAL, "addrlabel: a mapped prefix over /96");
      if (l.prefix_len < 96) e.type = Type::Any;
      break;
    case Type::Compat:
      if (l.prefix_len != 96) e.type = Type::Any;
      break;
    case Type::Loopback:
      if (l.prefix_len != 128) e.type = Type::Any;
      break;
    case Type::Any:
      break;
  }
  return e;
}

bool same_key(const AddrLabel& a, const AddrLabel& b) {
  return a.prefix_len == b.prefix_len && a.ifindex == b.ifindex && a.prefix == b.prefix;
}

// Linux: __ip6addrlbl_add — before the first entry of a shorter prefix or of the same
// length for every device; an equal key met before it is EEXIST, or replaced in its place.
Result<void> insert(AddrLabels& t, AddrLabelEntry e, bool replace) {
  auto& list = t.entries;
  auto it = list.begin();
  for (; it != list.end(); ++it) {
    if (same_key(it->info, e.info)) {
      if (!replace) return fail_log_only(EEXIST, "addrlabel: the entry exists");
      *it = std::move(e);
      ++t.seq;
      return ok();
    }
    const AddrLabel& p = it->info;
    if ((p.prefix_len == e.info.prefix_len && !p.ifindex) || p.prefix_len < e.info.prefix_len)
      break;
  }
  list.insert(it, std::move(e));
  ++t.seq;
  return ok();
}

AddrLabel v6(std::array<std::uint8_t, 16> b, std::uint8_t len, std::uint32_t label) {
  return AddrLabel{IpAddr::v6(b), len, 0, label};
}

Result<void> check(const AddrLabel& l) {
  if (l.prefix_len > 128) return fail_log_only(EINVAL, "addrlabel: prefix length over 128");
  if (l.prefix.empty() || !l.prefix.is_v6())
    return fail_log_only(EINVAL, "addrlabel: not an IPv6 prefix");
  if (l.label == kNoLabel) return fail_log_only(EINVAL, "addrlabel: label 0xffffffff");
  return ok();
}

}  // namespace

void addrlabels_init(AddrLabels& t) {
  t = AddrLabels{};
  for (const AddrLabel& l : inet::default_addrlabels())
    if (auto e = make_entry(l)) (void)insert(t, std::move(*e), false);
}

}  // namespace ifcore::proto

namespace ifcore::inet {

using namespace ifcore::proto;

const std::vector<AddrLabel>& default_addrlabels() {
  static const std::vector<AddrLabel> defaults = {
      v6({}, 0, 1),                                                  // ::/0
      v6({0xfc}, 7, 5),                                              // fc00::/7
      v6({0xfe, 0xc0}, 10, 11),                                      // fec0::/10
      v6({0x20, 0x02}, 16, 2),                                       // 2002::/16
      v6({0x3f, 0xfe}, 16, 12),                                      // 3ffe::/16
      v6({0x20, 0x01}, 32, 6),                                       // 2001::/32
      v6({0x20, 0x01, 0x00, 0x10}, 28, 7),                           // 2001:10::/28
      v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96, 4),         // ::ffff:0:0/96
      v6({}, 96, 3),                                                 // ::/96
      v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, 0),  // ::1/128
  };
  return defaults;
}

Result<void> add_addrlabel(Control& ctl, Namespace& ns, const AddrLabel& l, bool replace) {
  IFCORE_TRY(ctl.check_covers(ns));
  IFCORE_TRY(check(l));
  // Linux: __dev_get_by_index on the u32 of the message.
  if (l.ifindex && !ctl.find(ns, l.ifindex))
    return fail_log_only(EINVAL, "addrlabel: no device {}", l.ifindex);
  auto e = make_entry(l);
  if (!e) return fail(e.error());
  PluginGuard guard(ctl);  // the protocols' engine-wide state
  return insert(net_state(ns).labels, std::move(*e), replace);
}

Result<void> delete_addrlabel(Control& ctl, Namespace& ns, const AddrLabel& l) {
  IFCORE_TRY(ctl.check_covers(ns));
  IFCORE_TRY(check(l));
  AddrLabel key = l;
  key.prefix = prefix_of(l.prefix, l.prefix_len);
  PluginGuard guard(ctl);
  auto& list = net_state(ns).labels.entries;
  auto it = std::find_if(list.begin(), list.end(),
                         [&](const AddrLabelEntry& e) { return same_key(e.info, key); });
  if (it == list.end()) return fail_log_only(ESRCH, "addrlabel: no such entry");
  list.erase(it);  // Linux: the seq counts adds only
  return ok();
}

AddrLabelTable addrlabels(Control& ctl, Namespace& ns) {
  PluginGuard guard(ctl);
  const AddrLabels& labels = net_state(ns).labels;
  AddrLabelTable t;
  t.seq = labels.seq;
  t.entries.reserve(labels.entries.size());
  for (const AddrLabelEntry& e : labels.entries) t.entries.push_back(e.info);
  return t;
}

Result<std::pair<AddrLabel, std::uint32_t>> find_addrlabel(Control& ctl, Namespace& ns,
                                                           const IpAddr& addr, int ifindex) {
  IFCORE_TRY(ctl.check_covers(ns));
  if (ifindex && !ctl.find(ns, ifindex))
    return fail_log_only(EINVAL, "addrlabel: no device {}", ifindex);
  if (addr.empty() || !addr.is_v6()) return fail_log_only(EINVAL, "addrlabel: not IPv6");
  const Type type = type_of(addr);
  PluginGuard guard(ctl);
  const AddrLabels& labels = net_state(ns).labels;
  for (const AddrLabelEntry& e : labels.entries) {
    if (e.info.ifindex && e.info.ifindex != ifindex) continue;
    // Linux compares the entry's kind with the address's whole ipv6_addr_type, which for
    // the loopback and IPv4-compatible addresses carries the unicast bit as well.
    if (e.type != Type::Any && !(e.type == Type::Mapped && type == Type::Mapped)) continue;
    if (!addr.in_prefix(e.info.prefix, e.info.prefix_len)) continue;
    return std::pair{e.info, labels.seq};
  }
  return fail_log_only(ESRCH, "addrlabel: no entry for the address");
}

}  // namespace ifcore::inet
