// rtnl/sysctl_handler.cc — IFCORE_NLMSG_SYSCTL (sysctl_msg.h): reads and writes the
// per-device protocol settings by their sysctl name, as /proc/sys/net/ipv{4,6}/conf/ does
// on Linux: scopes `all`, `default` and a device; an unknown name or device is ENOENT (no
// such file), a bad value EINVAL, a write from a peer that may not write EPERM. Reads are
// open to every peer. A write that fails changes nothing.
//
// Lock order: only the control lock.
#include <sys/socket.h>

#include <linux/netlink.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "ifcore/engine.h"
#include "ifcore/inet.h"
#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/wire/sysctl_msg.h"

namespace ifcore::rtnl {

namespace {

// One setting: where it lives in Inet4Conf / Inet6Conf, which values it takes and what a
// write of "all" copies (inet.h ConfCopy).
struct Key {
  int family;
  std::string_view name;
  unsigned copy;
  std::string_view values;  // for the error message
  bool (*valid)(int);
  int (*get)(const inet::Inet4Conf&, const inet::Inet6Conf&);
  void (*set)(inet::Inet4Conf&, inet::Inet6Conf&, int);
  unsigned own = 0;  // IPv4: what a write marks as the device's own (inet.h ConfOwn4)
};

bool boolean(int v) {
  return v == 0 || v == 1;
}

// Linux accepts IN6_ADDR_GEN_MODE_STABLE_PRIVACY (2) only with a stable_secret, which
// ifcore does not model: without one, Linux answers EINVAL too.
bool gen_mode(int v) {
  return v == 0 || v == 1 || v == 3;
}

bool any(int) {
  return true;
}

// A key kept as the integer written (proc_dointvec), `field` of Inet4Conf or Inet6Conf.
#define IFC_INT4(name, field, copy, own)                                               \
  {                                                                                    \
    AF_INET, name, copy, "an integer", any,                                            \
        [](const inet::Inet4Conf& c, const inet::Inet6Conf&) { return int(c.field); }, \
        [](inet::Inet4Conf& c, inet::Inet6Conf&, int v) { c.field = v; }, own          \
  }
#define IFC_INT6(name, field, copy)                                                    \
  {                                                                                    \
    AF_INET6, name, copy, "an integer", any,                                           \
        [](const inet::Inet4Conf&, const inet::Inet6Conf& c) { return int(c.field); }, \
        [](inet::Inet4Conf&, inet::Inet6Conf& c, int v) { c.field = v; }               \
  }

// Linux keeps forwarding, rp_filter, proxy_arp, proxy_ndp, bc_forwarding and
// ignore_routes_with_linkdown as written, whatever the integer (devinet_conf_proc,
// addrconf_sysctl_forward... read them as booleans, rp_filter as 0/1/2).
const Key kKeys[] = {
    IFC_INT4("forwarding", forwarding, inet::kCopyForwarding, 0),
    {AF_INET, "promote_secondaries", inet::kCopyNone, "0 or 1", boolean,
     [](const inet::Inet4Conf& c, const inet::Inet6Conf&) { return int(c.promote_secondaries); },
     [](inet::Inet4Conf& c, inet::Inet6Conf&, int v) { c.promote_secondaries = v != 0; },
     inet::kOwn4Promote},
    IFC_INT4("rp_filter", rp_filter, inet::kCopyNone, inet::kOwn4RpFilter),
    IFC_INT4("proxy_arp", proxy_arp, inet::kCopyNone, inet::kOwn4ProxyArp),
    IFC_INT4("ignore_routes_with_linkdown", ignore_routes_with_linkdown, inet::kCopyNone,
             inet::kOwn4IgnoreLinkdown),
    IFC_INT4("bc_forwarding", bc_forwarding, inet::kCopyNone, inet::kOwn4BcForwarding),
    // Linux: 0444, the multicast router's (writes are EACCES, see handle_sysctl).
    IFC_INT4("mc_forwarding", mc_forwarding, inet::kCopyNone, 0),
    IFC_INT6("forwarding", forwarding, inet::kCopyForwarding),
    IFC_INT6("proxy_ndp", proxy_ndp, inet::kCopyNone),
    IFC_INT6("accept_dad", accept_dad, inet::kCopyNone),
    IFC_INT6("ignore_routes_with_linkdown", ignore_routes_with_linkdown, inet::kCopyIgnoreLinkdown),
    // Linux 6.17+: proc_dointvec_minmax 0..1.
    {AF_INET6, "force_forwarding", inet::kCopyForceForwarding, "0 or 1", boolean,
     [](const inet::Inet4Conf&, const inet::Inet6Conf& c) { return int(c.force_forwarding); },
     [](inet::Inet4Conf&, inet::Inet6Conf& c, int v) { c.force_forwarding = v; }},
    {AF_INET6, "disable_ipv6", inet::kCopyDisableIpv6, "0 or 1", boolean,
     [](const inet::Inet4Conf&, const inet::Inet6Conf& c) { return int(c.disable_ipv6); },
     [](inet::Inet4Conf&, inet::Inet6Conf& c, int v) { c.disable_ipv6 = v != 0; }},
    {AF_INET6, "addr_gen_mode", inet::kCopyAddrGenMode, "0, 1 or 3", gen_mode,
     [](const inet::Inet4Conf&, const inet::Inet6Conf& c) { return int(c.addr_gen_mode); },
     [](inet::Inet4Conf&, inet::Inet6Conf& c, int v) {
       c.addr_gen_mode = static_cast<std::uint8_t>(v);
     }},
    {AF_INET6, "keep_addr_on_down", inet::kCopyNone, "0 or 1", boolean,
     [](const inet::Inet4Conf&, const inet::Inet6Conf& c) { return int(c.keep_addr_on_down); },
     [](inet::Inet4Conf&, inet::Inet6Conf& c, int v) { c.keep_addr_on_down = v != 0; }},
};
#undef IFC_INT4
#undef IFC_INT6

const Key* find_key(const SysctlName& n) {
  for (const Key& k : kKeys)
    if (k.family == n.family && k.name == n.key) return &k;
  return nullptr;
}

// The scope as inet.h numbers it: kConfAll, kConfDefault or the device's ifindex.
// Context: control lock. Errors: ENOENT for a missing device.
Result<int> scope_of(Control& ctl, Namespace& ns, const SysctlName& n, const std::string& full) {
  if (n.scope == "all") return inet::kConfAll;
  if (n.scope == "default") return inet::kConfDefault;
  // The directories are named after devices' names only: an altname names none (Linux:
  // devinet_sysctl_register and addrconf_sysctl_register use dev->name).
  Device* d = ctl.find(ns, n.scope);
  if (d && d->name() != n.scope) d = nullptr;
  if (!d) return fail(ENOENT, "unknown setting \"{}\": no device \"{}\"", full, n.scope);
  return d->ifindex();
}

// Reads (and, with `value`, first writes) one setting. Context: control lock.
// Errors: ENOENT (a device without that protocol's state).
Result<int> apply(Control& ctl, Namespace& ns, int scope, const Key& k, std::optional<int> value,
                  const std::string& full) {
  auto missing = [&] {
    return fail(ENOENT, "unknown setting \"{}\": no {} state on the device", full,
                k.family == AF_INET ? "IPv4" : "IPv6");
  };
  inet::Inet4Conf c4;
  inet::Inet6Conf c6;
  if (k.family == AF_INET) {
    auto c = inet::inet4_conf(ctl, ns, scope);
    if (!c) return missing();
    c4 = *c;
  } else {
    auto c = inet::inet6_conf(ctl, ns, scope);
    if (!c) return missing();
    c6 = *c;
  }
  if (value) {
    k.set(c4, c6, *value);
    auto w = k.family == AF_INET ? inet::set_inet4_conf(ctl, ns, scope, c4, k.copy, k.own)
                                 : inet::set_inet6_conf(ctl, ns, scope, c6, k.copy);
    if (!w) return fail(w.error());
  }
  return k.get(c4, c6);
}

// The namespace's own settings (net.ipv4.KEY, net.ipv6.KEY): the multipath hash ones
// (Linux: ipv4_net_table's fib_multipath_hash_policy 0..3, _fields 1..0xfff
// (proc_douintvec_minmax), _seed any u32; ipv6_table_template's two),
// fib_multipath_use_neigh and nexthop_compat_mode (0..1, proc_dou8vec_minmax).
struct NetValues {
  inet::MultipathHashConf mp;
  bool nh_compat = true;
};

struct NetKey {
  int family;
  std::string_view name;
  std::string_view values;
  std::uint64_t min, max;
  std::uint32_t (*get)(const NetValues&);
  void (*set)(NetValues&, std::uint32_t);
};

const NetKey kNetKeys[] = {
    {AF_INET, "fib_multipath_hash_policy", "0..3", 0, 3,
     [](const NetValues& c) -> std::uint32_t { return c.mp.policy4; },
     [](NetValues& c, std::uint32_t v) { c.mp.policy4 = std::uint8_t(v); }},
    {AF_INET, "fib_multipath_hash_fields", "1..4095", 1, inet::kMpHashAllFields,
     [](const NetValues& c) { return c.mp.fields4; },
     [](NetValues& c, std::uint32_t v) { c.mp.fields4 = v; }},
    {AF_INET, "fib_multipath_hash_seed", "0..4294967295", 0, 0xffffffffu,
     [](const NetValues& c) { return c.mp.seed; },
     [](NetValues& c, std::uint32_t v) { c.mp.seed = v; }},
    {AF_INET, "fib_multipath_use_neigh", "0..1", 0, 1,
     [](const NetValues& c) -> std::uint32_t { return c.mp.use_neigh; },
     [](NetValues& c, std::uint32_t v) { c.mp.use_neigh = v != 0; }},
    {AF_INET, "nexthop_compat_mode", "0..1", 0, 1,
     [](const NetValues& c) -> std::uint32_t { return c.nh_compat; },
     [](NetValues& c, std::uint32_t v) { c.nh_compat = v != 0; }},
    {AF_INET6, "fib_multipath_hash_policy", "0..3", 0, 3,
     [](const NetValues& c) -> std::uint32_t { return c.mp.policy6; },
     [](NetValues& c, std::uint32_t v) { c.mp.policy6 = std::uint8_t(v); }},
    {AF_INET6, "fib_multipath_hash_fields", "1..4095", 1, inet::kMpHashAllFields,
     [](const NetValues& c) { return c.mp.fields6; },
     [](NetValues& c, std::uint32_t v) { c.mp.fields6 = v; }},
};

// An unsigned value as proc_douintvec reads it: blanks around, decimal digits, no sign.
std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n'))
    text.remove_suffix(1);
  if (text.empty() || text.size() > 12) return std::nullopt;
  std::uint64_t v = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return std::nullopt;
    v = v * 10 + std::uint64_t(ch - '0');
  }
  return v;
}

// ifcored --state keeps what is written (Server::set_tap): a write that succeeded is shown
// to the tap as the request that would make it again, the setting's full name and the value
// it now has (and the one it had, IFCORE_SYSCTL_WAS), with the device's ifindex as
// nlmsg_pid (0: all, default, the namespace's own). Context: control lock.
void tap_write(Request& r, const Namespace& ns, const std::string& full, const std::string& value,
               const std::string& was, int ifindex) {
  Hub& hub = r.s.hub();
  if (!hub.tap) return;
  wire::MessageBuilder b;
  if (!encode_sysctl_request(b, 0, SysctlRequest{full, value, was})) return;
  std::vector<std::uint8_t> m = b.take();
  if (m.size() < sizeof(nlmsghdr)) return;
  std::uint32_t pid = static_cast<std::uint32_t>(ifindex);
  std::memcpy(m.data() + offsetof(nlmsghdr, nlmsg_pid), &pid, sizeof(pid));
  hub.tap(ns.id(), m);
}

Result<void> handle_net_sysctl(Request& r, const SysctlRequest& req, const SysctlName& name) {
  const std::string full = sysctl_name(name);
  const NetKey* k = nullptr;
  for (const NetKey& x : kNetKeys)
    if (x.family == name.family && x.name == name.key) k = &x;
  if (!k) return fail(ENOENT, "unknown setting \"{}\"", full);
  std::optional<std::uint32_t> value;
  if (req.value) {
    auto v = parse_unsigned(*req.value);
    if (!v || *v < k->min || *v > k->max)
      return fail(EINVAL, "setting \"{}\": value \"{}\" is not {}", full, *req.value, k->values);
    value = std::uint32_t(*v);
  }
  SysctlReply rep;
  rep.name = full;
  {
    Control ctl = r.s.hub().engine().control();
    auto ns = session_ns(ctl, r.s);
    if (!ns) return fail(ns.error());
    NetValues c{inet::multipath_hash_conf(ctl, **ns), inet::nexthop_compat_mode(ctl, **ns)};
    const std::string was = std::to_string(k->get(c));
    if (value) {
      k->set(c, *value);
      IFCORE_TRY(inet::set_multipath_hash_conf(ctl, **ns, c.mp));
      IFCORE_TRY(inet::set_nexthop_compat_mode(ctl, **ns, c.nh_compat));
    }
    rep.value = std::to_string(k->get(c));
    if (value) tap_write(r, **ns, full, rep.value, was, 0);
  }
  return emit(r.out, [&](wire::MessageBuilder& b) {
    return encode_sysctl_reply(b, r.seq(), r.port(), rep);
  });
}

}  // namespace

Result<void> handle_sysctl(Request& r) {
  auto req = decode_sysctl_request(r.m);
  if (!req) return fail(req.error());
  // Reading is open to every peer; writing needs may_write (Linux: the files are 0644).
  if (req->value && !r.s.options().may_write) return fail(EPERM);
  auto name = parse_sysctl_name(req->name);
  if (!name) return fail(name.error());
  if (name->scope.empty()) return handle_net_sysctl(r, *req, *name);
  const std::string full = sysctl_name(*name);
  const Key* k = find_key(*name);
  if (!k) return fail(ENOENT, "unknown setting \"{}\"", full);
  // Linux: mc_forwarding is mode 0444 (EACCES from the sysctl permission check, before
  // the value is read).
  if (req->value && k->name == "mc_forwarding") return fail(EACCES);
  std::optional<int> value;
  if (req->value) {
    auto v = parse_sysctl_int(*req->value);
    if (!v || !k->valid(*v))
      return fail(EINVAL, "setting \"{}\": value \"{}\" is not {}", full, *req->value, k->values);
    value = *v;
  }
  SysctlReply rep;
  rep.name = full;
  {
    Control ctl = r.s.hub().engine().control();
    auto ns = session_ns(ctl, r.s);
    if (!ns) return fail(ns.error());
    auto scope = scope_of(ctl, **ns, *name, full);
    if (!scope) return fail(scope.error());
    auto before = apply(ctl, **ns, *scope, *k, std::nullopt, full);
    if (!before) return fail(before.error());
    auto v = apply(ctl, **ns, *scope, *k, value, full);
    if (!v) return fail(v.error());
    rep.value = std::to_string(*v);
    if (value)
      tap_write(r, **ns, full, rep.value, std::to_string(*before), *scope > 0 ? *scope : 0);
  }
  return emit(r.out, [&](wire::MessageBuilder& b) {
    return encode_sysctl_reply(b, r.seq(), r.port(), rep);
  });
}

}  // namespace ifcore::rtnl
