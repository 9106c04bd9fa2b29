// cli/fdb_cmd.cc — `ifc fdb add|append|replace|delete|get|show`: bridge(8)'s `bridge fdb`
// (iproute2 6.1) on RTM_NEWNEIGH / RTM_DELNEIGH / RTM_GETNEIGH of family AF_BRIDGE, with its
// words, its output (text and -j) and its exit statuses (255 for a refused change, 254 for a
// failed get, as `bridge` returns -1 and -2).
#include <net/if.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <climits>
#include <cstdlib>
#include <utility>

#include "cli/commands.h"
#include "rtnl/wire/neigh.h"

namespace ifcore::cli {
namespace {

struct FdbFilter {
  int index = 0;
  int master = 0;
  std::uint32_t state = 0;
  std::uint16_t vlan = 0;
  bool dynamic = false;
};

// iproute2's state_n2a (bridge/fdb.c).
std::string state_name(std::uint16_t s, bool json) {
  if (s & NUD_PERMANENT) return "permanent";
  if (s & NUD_NOARP) return "static";
  if (s & NUD_STALE) return "stale";
  if (s & NUD_REACHABLE) return "";
  return json ? (s ? fmt::format("{:#x}", s) : "0")
              : (s ? fmt::format("state={:#x}", s) : "state=0");
}

// iproute2's print_fdb.
void print_fdb(Ctx& c, const wire::NeighMessage& n, std::uint16_t type, const FdbFilter& f) {
  if (n.family != AF_BRIDGE) return;
  if (f.index && f.index != n.ifindex) return;
  if (f.state && !(n.state & f.state)) return;
  if (f.vlan && f.vlan != n.vlan.value_or(0)) return;
  if (f.dynamic && (n.state & NUD_PERMANENT)) return;
  Out& o = *c.out;
  o.open_object();
  if (type == RTM_DELNEIGH) o.kv("deleted", true, "Deleted ");
  if (n.lladdr) o.kv("mac", n.lladdr->to_string(), n.lladdr->to_string() + " ");
  if (!f.index && n.ifindex) {
    std::string dev = c.client->ifname(n.ifindex);
    o.kv("ifname", dev, "dev " + dev + " ");
  }
  if (n.dst) o.kv("dst", n.dst->to_string(), "dst " + n.dst->to_string() + " ");
  if (n.vlan && *n.vlan) o.kv("vlan", *n.vlan, fmt::format("vlan {} ", *n.vlan));
  if (n.port) o.kv("port", *n.port, fmt::format("port {} ", *n.port));
  if (n.vni) o.kv("vni", *n.vni, fmt::format("vni {} ", *n.vni));
  if (n.src_vni) o.kv("src_vni", *n.src_vni, fmt::format("src_vni {} ", *n.src_vni));
  if (n.dump_ifindex) {
    std::string via = c.client->ifname(static_cast<int>(*n.dump_ifindex));
    o.kv("viaIf", via, "via " + via + " ");
  }
  if (n.nh_id) o.kv("nhid", *n.nh_id, fmt::format("nhid {} ", *n.nh_id));
  if (c.stats && n.cacheinfo) {
    o.kv("used", n.cacheinfo->ndm_used / 100, "");
    o.kv("updated", n.cacheinfo->ndm_updated / 100,
         fmt::format("used {}/{} ", n.cacheinfo->ndm_used / 100, n.cacheinfo->ndm_updated / 100));
  }
  o.open_array("flags");
  static const std::pair<std::uint8_t, const char*> kFlags[] = {
      {NTF_SELF, "self"},         {NTF_ROUTER, "router"}, {NTF_EXT_LEARNED, "extern_learn"},
      {NTF_OFFLOADED, "offload"}, {NTF_MASTER, "master"}, {NTF_STICKY, "sticky"}};
  for (auto [bit, name] : kFlags)
    if (n.flags & bit) {
      o.push(name);
      o.text(std::string(name) + " ");
    }
  o.close();
  if (n.master) {
    std::string m = c.client->ifname(static_cast<int>(*n.master));
    o.kv("master", m, "master " + m + " ");
  }
  o.kv("state", state_name(n.state, c.out->json()), state_name(n.state, false) + "\n");
  o.close();
  o.flush();
}

// iproute2's strtoul-based VNI words ("invalid VNI").
Result<std::uint32_t> vni_word(const std::string& s, const char* what) {
  char* end = nullptr;
  unsigned long v = std::strtoul(s.c_str(), &end, 0);
  if ((end && *end) || (v >> 24) || v == ULONG_MAX) return invarg(what, s);
  return static_cast<std::uint32_t>(v);
}

Result<HwAddr> mac_word(const std::string& s) {
  unsigned b[6];
  char tail;
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                  &tail) < 6)
    return die(255, "Invalid mac address {}", s);
  std::array<std::uint8_t, 6> a;
  for (int i = 0; i < 6; ++i) a[i] = static_cast<std::uint8_t>(b[i]);
  return HwAddr::ethernet(a);
}

// The index of the device `name`, or the exit `bridge` takes with "Cannot find WHAT
// \"NAME\"" (status `status`).
Result<int> index_of(Ctx& c, const std::string& name, const char* what, int status = 255) {
  auto idx = c.client->ifindex(name);
  if (!idx) return fail(idx.error());
  if (!*idx) return die(status, "Cannot find {} \"{}\"", what, name);
  return *idx;
}

// Sends one change (`type` with `flags`) and exits 255 with the kernel's words if refused.
Result<void> send_change(Ctx& c, std::uint16_t type, std::uint16_t flags,
                         const wire::NeighMessage& m) {
  wire::MessageBuilder b;
  if (!wire::encode_fdb(b, {type, std::uint16_t(NLM_F_REQUEST | flags), c.client->next_seq(), 0},
                        m))
    return die(255, "message too long");
  int err = 0;
  std::string ext;
  IFCORE_TRY(c.client->talk_raw(b, {}, err, ext));
  if (err) return die(255, "{}", rtnl_error_text(err, ext));
  return ok();
}

Result<void> fdb_modify(Ctx& c, Args& a, std::uint16_t type, std::uint16_t flags) {
  wire::NeighMessage m;
  m.family = AF_BRIDGE;
  m.state = NUD_NOARP;
  std::string dev, addr;
  std::optional<std::uint16_t> vid;
  while (!a.done()) {
    std::string w = a.take();
    if (w == "dev") {
      auto v = a.value();
      if (!v) return fail(v.error());
      dev = *v;
    } else if (w == "dst") {
      auto v = a.value();
      if (!v) return fail(v.error());
      if (m.dst) return duparg("dst", *v);
      auto ip = IpAddr::parse(*v);
      if (!ip || (c.family && c.family != AF_PACKET && ip->family() != c.family))
        return die_now(1, "Error: {} address is expected rather than \"{}\".",
                       c.family == AF_INET6  ? "inet6"
                       : c.family == AF_INET ? "inet"
                                             : "any valid",
                       *v);
      m.dst = *ip;
    } else if (w == "nhid") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "");
      if (!n) return invarg("\"id\" value is invalid\n", *v);
      m.nh_id = *n;
    } else if (w == "port") {
      auto v = a.value();
      if (!v) return fail(v.error());
      char* end = nullptr;
      unsigned long p = std::strtoul(v->c_str(), &end, 0);
      if ((end && *end) || p > 0xffff) return invarg("invalid port\n", *v);
      if (p) m.port = static_cast<std::uint16_t>(p);
    } else if (w == "vni" || w == "src_vni") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto n = vni_word(*v, w == "vni" ? "invalid VNI\n" : "invalid src VNI\n");
      if (!n) return fail(n.error());
      (w == "vni" ? m.vni : m.src_vni) = *n;
    } else if (w == "via") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto idx = c.client->ifindex(*v);
      if (!idx) return fail(idx.error());
      if (!*idx) return die(255, "Cannot find device \"{}\"", *v);
      m.dump_ifindex = static_cast<std::uint32_t>(*idx);
    } else if (w == "self") {
      m.flags |= NTF_SELF;
    } else if (matches(w, "master")) {
      m.flags |= NTF_MASTER;
    } else if (matches(w, "router")) {
      m.flags |= NTF_ROUTER;
    } else if (matches(w, "local") || matches(w, "permanent")) {
      m.state |= NUD_PERMANENT;
    } else if (matches(w, "temp") || matches(w, "static")) {
      m.state |= NUD_REACHABLE;  // iproute2 6.1 sets REACHABLE for "static"
    } else if (matches(w, "dynamic")) {
      m.state |= NUD_REACHABLE;
      m.state &= ~NUD_NOARP;
    } else if (matches(w, "vlan")) {
      if (vid) return duparg("vlan", a.done() ? w : a.peek());
      auto v = a.value();
      if (!v) return fail(v.error());
      vid = static_cast<std::uint16_t>(std::atoi(v->c_str()));
    } else if (matches(w, "use")) {
      m.flags |= NTF_USE;
    } else if (matches(w, "extern_learn")) {
      m.flags |= NTF_EXT_LEARNED;
    } else if (matches(w, "sticky")) {
      m.flags |= NTF_STICKY;
    } else {
      if (w == "to") {
        auto v = a.value();
        if (!v) return fail(v.error());
        w = *v;
      }
      if (!addr.empty()) return duparg("to", w);
      addr = w;
    }
  }
  if (dev.empty() || addr.empty()) return die(255, "Device and address are required arguments.");
  if (m.nh_id && (m.dst || m.port || m.vni))
    return die(255, "dst, port, vni are mutually exclusive with nhid");
  if (!(m.flags & (NTF_SELF | NTF_MASTER))) m.flags |= NTF_SELF;
  if (!(m.state & (NUD_PERMANENT | NUD_REACHABLE))) m.state |= NUD_PERMANENT;
  auto mac = mac_word(addr);
  if (!mac) return fail(mac.error());
  m.lladdr = *mac;
  if (vid) m.vlan = *vid;
  auto idx = index_of(c, dev, "device");
  if (!idx) return fail(idx.error());
  m.ifindex = *idx;
  return send_change(c, type, flags, m);
}

// bridge(8)'s `fdb flush dev DEV [brport DEV] [vlan VID] [self] [master] [[no]permanent |
// [no]static | [no]dynamic] [[no]added_by_user] [[no]extern_learn] [[no]sticky]
// [[no]offloaded]`: one RTM_DELNEIGH with NLM_F_BULK; a word sets (or clears) its bit in
// ndm_state or ndm_flags and marks it in the matching mask; neither self nor master means
// self.
Result<void> fdb_flush(Ctx& c, Args& a) {
  wire::NeighMessage m;
  m.family = AF_BRIDGE;
  std::uint16_t state = 0, state_mask = 0;
  std::uint8_t flags = 0, flags_mask = 0;
  std::string dev, port;
  std::optional<int> vid;
  // [no]WORD for a flag: its bit in ndm_flags and ndm_flags's mask.
  const std::pair<const char*, std::uint8_t> kFlags[] = {{"added_by_user", NTF_USE},
                                                         {"extern_learn", NTF_EXT_LEARNED},
                                                         {"sticky", NTF_STICKY},
                                                         {"offloaded", NTF_OFFLOADED}};
  while (!a.done()) {
    std::string w = a.take();
    bool known = true;
    if (w == "dev") {
      auto v = a.value();
      if (!v) return fail(v.error());
      dev = *v;
    } else if (w == "master") {
      flags |= NTF_MASTER;
    } else if (w == "self") {
      flags |= NTF_SELF;
    } else if (w == "permanent" || w == "nopermanent") {
      state = w == "permanent" ? state | NUD_PERMANENT : state & ~NUD_PERMANENT;
      state_mask |= NUD_PERMANENT;
    } else if (w == "static") {
      state |= NUD_NOARP;
      state_mask |= NUD_NOARP | NUD_PERMANENT;
    } else if (w == "nostatic") {
      state &= ~NUD_NOARP;
      state_mask |= NUD_NOARP;
    } else if (w == "dynamic") {
      state &= ~NUD_NOARP | NUD_PERMANENT;
      state_mask |= NUD_NOARP | NUD_PERMANENT;
    } else if (w == "nodynamic") {
      state |= NUD_NOARP;
      state_mask |= NUD_NOARP;
    } else if (w == "brport") {
      if (!port.empty()) return duparg("brport", w);
      auto v = a.value();
      if (!v) return fail(v.error());
      port = *v;
    } else if (w == "vlan") {
      if (vid) return duparg("vlan", w);
      auto v = a.value();
      if (!v) return fail(v.error());
      vid = static_cast<std::int16_t>(std::atoi(v->c_str()));
    } else {
      known = false;
      for (const auto& [name, bit] : kFlags) {
        const bool no = w.rfind("no", 0) == 0 && w.substr(2) == name;
        if (w != name && !no) continue;
        flags = no ? flags & ~bit : flags | bit;
        flags_mask |= bit;
        known = true;
      }
      if (!known && w == "help" && !a.done()) a.take();  // bridge(8) skips a word after it
    }
  }
  if (dev.empty()) return die(255, "Device is a required argument.");
  auto idx = index_of(c, dev, "bridge device");
  if (!idx) return fail(idx.error());
  m.ifindex = *idx;
  if (!port.empty()) {
    auto p = index_of(c, port, "bridge port device");
    if (!p) return fail(p.error());
    m.dump_ifindex = static_cast<std::uint32_t>(*p);
  }
  if (vid && *vid >= 4096) return die(255, "Invalid VLAN ID \"{}\"", *vid);
  if (!(flags & (NTF_SELF | NTF_MASTER))) flags |= NTF_SELF;
  m.flags = flags;
  m.state = state;
  if (vid && *vid >= 0) m.vlan = static_cast<std::uint16_t>(*vid);
  if (flags_mask) m.flags_mask = flags_mask;
  if (state_mask) m.state_mask = state_mask;
  return send_change(c, RTM_DELNEIGH, NLM_F_BULK, m);
}

Result<void> fdb_get(Ctx& c, Args& a) {
  wire::NeighMessage m;
  m.family = AF_BRIDGE;
  std::string dev, br, addr;
  std::optional<std::uint16_t> vid;
  FdbFilter f;
  while (!a.done()) {
    std::string w = a.take();
    if (w == "brport" || w == "dev" || w == "br") {
      auto v = a.value();
      if (!v) return fail(v.error());
      (w == "br" ? br : dev) = *v;
    } else if (w == "vni") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto n = vni_word(*v, "invalid VNI\n");
      if (!n) return fail(n.error());
      m.vni = *n;
    } else if (w == "self") {
      m.flags |= NTF_SELF;
    } else if (matches(w, "master")) {
      m.flags |= NTF_MASTER;
    } else if (matches(w, "vlan")) {
      if (vid) return duparg("vlan", a.done() ? w : a.peek());
      auto v = a.value();
      if (!v) return fail(v.error());
      vid = static_cast<std::uint16_t>(std::atoi(v->c_str()));
    } else if (matches(w, "dynamic")) {
      f.dynamic = true;
    } else {
      if (w == "to") {
        auto v = a.value();
        if (!v) return fail(v.error());
        w = *v;
      }
      if (!addr.empty()) return duparg("to", w);
      addr = w;
    }
  }
  if ((dev.empty() && br.empty()) || addr.empty())
    return die(255, "Device or master and address are required arguments.");
  auto mac = mac_word(addr);
  if (!mac) return fail(mac.error());
  m.lladdr = *mac;
  if (vid) m.vlan = *vid;
  if (!dev.empty()) {
    auto idx = c.client->ifindex(dev);
    if (!idx) return fail(idx.error());
    if (!*idx) return die(255, "Cannot find device \"{}\"", dev);
    m.ifindex = *idx;
  }
  if (!br.empty()) {
    auto idx = c.client->ifindex(br);
    if (!idx) return fail(idx.error());
    if (!*idx) return die(255, "Cannot find bridge device \"{}\"", br);
    m.master = static_cast<std::uint32_t>(*idx);
  }
  wire::MessageBuilder b;
  if (!wire::encode_fdb(b, {RTM_GETNEIGH, NLM_F_REQUEST, c.client->next_seq(), 0}, m))
    return die(254, "message too long");
  std::optional<wire::NeighMessage> answer;
  std::uint16_t answer_type = 0;
  int err = 0;
  std::string ext;
  IFCORE_TRY(c.client->talk_raw(
      b,
      [&](const wire::Message& r) {
        if (auto n = wire::decode_neigh(r)) {
          answer = *n;
          answer_type = r.hdr.nlmsg_type;
        }
      },
      err, ext));
  if (err) return die(254, "{}", rtnl_error_text(err, ext));
  c.out->open_array();
  if (answer) print_fdb(c, *answer, answer_type, f);
  c.out->close();
  return ok();
}

Result<void> fdb_show(Ctx& c, Args& a) {
  FdbFilter f;
  std::string dev, br;
  while (!a.done()) {
    std::string w = a.take();
    if (w == "brport" || w == "dev" || w == "br") {
      auto v = a.value();
      if (!v) return fail(v.error());
      (w == "br" ? br : dev) = *v;
    } else if (w == "vlan") {
      auto v = a.value();
      if (!v) return fail(v.error());
      if (f.vlan) return duparg("vlan", *v);
      f.vlan = static_cast<std::uint16_t>(std::atoi(v->c_str()));
    } else if (w == "state") {
      auto v = a.value();
      if (!v) return fail(v.error());
      std::uint32_t s = 0;
      if (matches(*v, "permanent")) {
        s = NUD_PERMANENT;
      } else if (matches(*v, "static") || matches(*v, "temp")) {
        s = NUD_NOARP;
      } else if (matches(*v, "stale")) {
        s = NUD_STALE;
      } else if (matches(*v, "reachable") || matches(*v, "dynamic")) {
        s = NUD_REACHABLE;
      } else if (*v == "all") {
        s = ~0u;
      } else {
        auto n = parse_u32(*v, "");
        if (!n) return invarg("invalid state", *v);
        s = *n;
      }
      f.state |= s;
    } else if (w == "dynamic") {
      f.dynamic = true;
    }
  }
  if (!br.empty()) {
    auto idx = c.client->ifindex(br);
    if (!idx) return fail(idx.error());
    if (!*idx) return die(255, "Cannot find bridge device \"{}\"", br);
    f.master = *idx;
  }
  if (!dev.empty()) {
    auto idx = c.client->ifindex(dev);
    if (!idx) return fail(idx.error());
    if (!*idx) return die(255, "Cannot find device \"{}\"", dev);
    f.index = *idx;
  }
  // bridge(8) asks for strict checking of its dumps (rtnl_set_strict_dump), without which
  // the filters are not read.
  (void)c.client->transport().set_option(NETLINK_GET_STRICT_CHK, 1);
  wire::MessageBuilder b(1 << 16);
  b.begin({RTM_GETNEIGH, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
  ndmsg nd{};
  nd.ndm_family = AF_BRIDGE;
  nd.ndm_ifindex = f.index;
  b.put_struct(nd);
  if (f.master) b.put_u32(NDA_MASTER, std::uint32_t(f.master));
  if (auto e = b.end(); !e) return die(255, "{}", e.error().message);
  c.out->open_array();
  IFCORE_TRY(c.client->dump(b, [&](const wire::Message& m) {
    if (auto n = wire::decode_neigh(m)) print_fdb(c, *n, m.hdr.nlmsg_type, f);
  }));
  c.out->close();
  return ok();
}

}  // namespace

Result<void> do_fdb(Ctx& c, Args& a) {
  if (a.done()) return fdb_show(c, a);
  std::string cmd = a.take();
  if (matches(cmd, "add")) return fdb_modify(c, a, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_EXCL);
  if (matches(cmd, "append")) return fdb_modify(c, a, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_APPEND);
  if (matches(cmd, "replace")) return fdb_modify(c, a, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE);
  if (matches(cmd, "delete")) return fdb_modify(c, a, RTM_DELNEIGH, 0);
  if (matches(cmd, "get")) return fdb_get(c, a);
  if (matches(cmd, "show") || matches(cmd, "lst") || matches(cmd, "list")) return fdb_show(c, a);
  if (cmd == "flush") return fdb_flush(c, a);
  return die(255, "Command \"{}\" is unknown, try \"bridge fdb help\".", cmd);
}

// For monitor: one forwarding entry notification, as `bridge monitor fdb` prints it.
void print_fdb_event(Ctx& c, const wire::Message& m) {
  if (auto n = wire::decode_neigh(m)) print_fdb(c, *n, m.hdr.nlmsg_type, FdbFilter{});
}

}  // namespace ifcore::cli
