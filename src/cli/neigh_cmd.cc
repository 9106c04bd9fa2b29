// cli/neigh_cmd.cc — `ifc neighbour add|change|replace|delete|get|show|flush`:
// RTM_NEWNEIGH / RTM_DELNEIGH / RTM_GETNEIGH, printed as `ip neigh` prints them, with its
// filters (dev, master, nomaster, nud, proxy, protocol, unused, to PREFIX).
#include <net/if.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include <utility>

#include "cli/commands.h"
#include "cli/vrf.h"
#include "rtnl/wire/neigh.h"

namespace ifcore::cli {
namespace {

// iproute2's nud_state_a2n: a name, or a number that is one state bit (0: none).
std::optional<std::uint16_t> nud_number(const std::string& s) {
  if (matches(s, "permanent")) return NUD_PERMANENT;
  if (matches(s, "reachable")) return NUD_REACHABLE;
  if (s == "noarp") return NUD_NOARP;
  if (s == "none") return NUD_NONE;
  if (s == "stale") return NUD_STALE;
  if (s == "incomplete") return NUD_INCOMPLETE;
  if (s == "delay") return NUD_DELAY;
  if (s == "probe") return NUD_PROBE;
  if (matches(s, "failed")) return NUD_FAILED;
  auto n = parse_u32(s, "");
  if (!n || *n >= 0x100 || (*n & (*n - 1))) return std::nullopt;
  return std::uint16_t(*n);
}

struct NeighFilter {
  int family = 0;
  int index = 0;
  std::int32_t master = 0;  // -1: nomaster
  std::uint32_t state = ~0u;
  std::uint8_t ndm_flags = 0;
  std::optional<std::uint8_t> protocol;
  bool unused_only = false;
  std::optional<Prefix> to;
};

bool selected(const NeighFilter& f, const wire::NeighMessage& n) {
  if (f.family && f.family != n.family) return false;
  if (f.index && f.index != n.ifindex) return false;
  if (!(f.state & n.state) && !(n.flags & NTF_PROXY) && !(n.flags & NTF_EXT_LEARNED) &&
      (n.state || !(f.state & 0x100)))
    return false;
  if (f.to && !f.to->any && f.to->len != 0) {
    if (!n.dst || n.dst->family() != f.to->addr.family()) return false;
    int len = f.to->len < 0 ? int(f.to->addr.size() * 8) : f.to->len;
    if (!n.dst->in_prefix(f.to->addr, len)) return false;
  }
  if (f.protocol && *f.protocol && n.protocol.value_or(0) != *f.protocol) return false;
  if (f.unused_only && n.cacheinfo && n.cacheinfo->ndm_refcnt) return false;
  return true;
}

// iproute2's print_neigh. `shown_index`: the device filter, whose name is not printed.
void print_neigh(Ctx& c, const wire::NeighMessage& n, std::uint16_t type, int shown_index) {
  Out& o = *c.out;
  o.open_object();
  if (type == RTM_DELNEIGH) o.kv("deleted", true, "Deleted ");
  if (type == RTM_GETNEIGH) o.kv("miss", nullptr, "miss ");
  if (n.dst) o.kv("dst", n.dst->to_string(), n.dst->to_string() + " ");
  if (!shown_index && n.ifindex) {
    std::string dev = c.client->ifname(n.ifindex);
    o.kv("dev", dev, "dev " + dev + " ");
  }
  if (n.lladdr) o.kv("lladdr", n.lladdr->to_string(), "lladdr " + n.lladdr->to_string() + " ");
  if (n.flags & NTF_ROUTER) o.kv("router", nullptr, "router ");
  if (n.flags & NTF_PROXY) o.kv("proxy", nullptr, "proxy ");
  if (n.flags_ext.value_or(0) & NTF_EXT_MANAGED) o.kv("managed", nullptr, "managed ");
  if (n.flags & NTF_EXT_LEARNED) o.kv("extern_learn", nullptr, "extern_learn ");
  if (n.flags & NTF_OFFLOADED) o.kv("offload", nullptr, "offload ");
  if (c.stats) {
    if (n.cacheinfo) {
      const nda_cacheinfo& ci = *n.cacheinfo;
      if (ci.ndm_refcnt) o.kv("refcnt", ci.ndm_refcnt, fmt::format(" ref {}", ci.ndm_refcnt));
      o.kv("used", ci.ndm_used / 100, fmt::format(" used {}", ci.ndm_used / 100));
      o.kv("confirmed", ci.ndm_confirmed / 100, fmt::format("/{}", ci.ndm_confirmed / 100));
      o.kv("updated", ci.ndm_updated / 100, fmt::format("/{}", ci.ndm_updated / 100));
    }
    if (n.probes) o.kv("probes", *n.probes, fmt::format("probes {} ", *n.probes));
  }
  if (n.state) {
    static const std::pair<std::uint16_t, const char*> kStates[] = {
        {NUD_INCOMPLETE, "INCOMPLETE"}, {NUD_REACHABLE, "REACHABLE"}, {NUD_STALE, "STALE"},
        {NUD_DELAY, "DELAY"},           {NUD_PROBE, "PROBE"},         {NUD_FAILED, "FAILED"},
        {NUD_NOARP, "NOARP"},           {NUD_PERMANENT, "PERMANENT"}};
    Json states = Json::array();
    std::string text;
    for (auto [bit, name] : kStates)
      if (n.state & bit) {
        states.push_back(name);
        text += std::string(name) + " ";
      }
    o.kv("state", states, text);
  }
  if (n.protocol && *n.protocol) {
    std::string p = rt_proto_name(*n.protocol);
    o.kv("protocol", p, "proto " + p + " ");
  }
  o.text("\n");
  o.close();
  o.flush();
}

Result<void> neigh_modify(Ctx& c, Args& a, std::uint16_t type, std::uint16_t flags) {
  wire::NeighMessage m;
  m.family = std::uint8_t(c.family == AF_PACKET ? 0 : c.family);
  m.state = NUD_PERMANENT;
  std::string dev, lla;
  std::optional<IpAddr> dst;
  bool dev_ok = false, lladdr_given = false;
  std::uint32_t ext_flags = 0;
  auto get_addr = [&](const std::string& s) -> Result<IpAddr> {
    auto ip = IpAddr::parse(s);
    if (!ip || (m.family && ip->family() != m.family))
      return die_now(1, "Error: {} address is expected rather than \"{}\".",
                     m.family == AF_INET6  ? "inet6"
                     : m.family == AF_INET ? "inet"
                                           : "any valid",
                     s);
    return *ip;
  };
  while (!a.done()) {
    std::string w = a.take();
    if (matches(w, "lladdr")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      if (lladdr_given) return duparg("lladdr", *v);
      lla = *v;
      lladdr_given = true;
    } else if (w == "nud") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto st = nud_number(*v);
      if (!st) return invarg("nud state is bad", *v);
      m.state = *st;
    } else if (matches(w, "proxy")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      if (dst) return duparg("address", *v);
      auto ip = get_addr(*v);
      if (!ip) return fail(ip.error());
      dst = *ip;
      dev_ok = true;
      m.flags |= NTF_PROXY;
    } else if (w == "router") {
      m.flags |= NTF_ROUTER;
    } else if (w == "use") {
      m.flags |= NTF_USE;
    } else if (w == "managed") {
      ext_flags |= NTF_EXT_MANAGED;
      m.state = NUD_NONE;
    } else if (matches(w, "extern_learn")) {
      m.flags |= NTF_EXT_LEARNED;
    } else if (w == "dev") {
      auto v = a.value();
      if (!v) return fail(v.error());
      dev = *v;
      dev_ok = true;
    } else if (matches(w, "protocol")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto p = rt_proto_number(*v);
      if (!p) return invarg("\"protocol\" value is invalid\n", *v);
      m.protocol = *p;
    } else {
      if (w == "to") {
        auto v = a.value();
        if (!v) return fail(v.error());
        w = *v;
      }
      if (dst) return duparg("to", w);
      auto ip = get_addr(w);
      if (!ip) return fail(ip.error());
      dst = *ip;
    }
  }
  // ip exits at once here, and when the kernel refuses (a batch ends there, -force or not).
  if (!dev_ok || !dst) return die_now(255, "Device and destination are required arguments.");
  m.family = std::uint8_t(dst->family());
  m.dst = *dst;
  if (ext_flags) m.flags_ext = ext_flags;
  if (lladdr_given && lla != "null") {
    auto hw = HwAddr::parse(lla);
    if (!hw) return die(1, "\"{}\" is invalid lladdr.", lla);
    m.lladdr = *hw;
  }
  if (!dev.empty()) {
    auto idx = dev_index(c, dev);
    if (!idx) return fail(idx.error());
    m.ifindex = *idx;
  }
  wire::MessageBuilder b;
  IFCORE_TRY([&]() -> Result<void> {
    auto r = wire::encode_neigh(
        b, {type, std::uint16_t(NLM_F_REQUEST | flags), c.client->next_seq(), 0}, m);
    if (!r) return die(2, "{}", r.error().message);
    return ok();
  }());
  int err = 0;
  std::string ext;
  IFCORE_TRY(c.client->talk_raw(b, {}, err, ext));
  if (err) return die_now(2, "{}", rtnl_error_text(err, ext));
  return ok();
}

Result<void> neigh_get(Ctx& c, Args& a) {
  wire::NeighMessage m;
  m.family = std::uint8_t(c.family == AF_PACKET ? 0 : c.family);
  std::string dev;
  std::optional<IpAddr> dst;
  bool dev_ok = false;
  while (!a.done()) {
    std::string w = a.take();
    if (w == "dev") {
      auto v = a.value();
      if (!v) return fail(v.error());
      dev = *v;
      dev_ok = true;
    } else {
      bool proxy = matches(w, "proxy");
      if (proxy || w == "to") {
        auto v = a.value();
        if (!v) return fail(v.error());
        w = *v;
      }
      if (dst) return proxy ? duparg("address", w) : duparg("to", w);
      auto ip = IpAddr::parse(w);
      if (!ip || (m.family && ip->family() != m.family))
        return die_now(1, "Error: {} address is expected rather than \"{}\".",
                       m.family == AF_INET6  ? "inet6"
                       : m.family == AF_INET ? "inet"
                                             : "any valid",
                       w);
      dst = *ip;
      if (proxy) {
        dev_ok = true;
        m.flags |= NTF_PROXY;
      }
    }
  }
  if (!dev_ok || !dst) return die(1, "Device and address are required arguments.");
  m.family = std::uint8_t(dst->family());
  m.dst = *dst;
  if (!dev.empty()) {
    auto idx = c.client->ifindex(dev);
    if (!idx) return fail(idx.error());
    if (!*idx) return die(1, "Cannot find device \"{}\"", dev);
    m.ifindex = *idx;
  }
  wire::MessageBuilder b;
  if (!wire::encode_neigh(b, {RTM_GETNEIGH, NLM_F_REQUEST, c.client->next_seq(), 0}, m))
    return die(2, "message too long");
  std::optional<wire::NeighMessage> answer;
  std::uint16_t answer_type = 0;
  int err = 0;
  std::string ext;
  IFCORE_TRY(c.client->talk_raw(
      b,
      [&](const wire::Message& r) {
        auto n = wire::decode_neigh(r);
        if (n) {
          answer = *n;
          answer_type = r.hdr.nlmsg_type;
        }
      },
      err, ext));
  if (err) return die(2, "{}", rtnl_error_text(err, ext));
  // ip neigh get prints text even under -j (it opens no JSON document).
  Out text(false, false);
  Out* saved = std::exchange(c.out, &text);
  if (answer) print_neigh(c, *answer, answer_type, 0);
  c.out = saved;
  return ok();
}

Result<void> neigh_show_or_flush(Ctx& c, Args& a, bool flush) {
  NeighFilter f;
  f.family = c.family == AF_PACKET ? 0 : c.family;
  std::string dev;
  bool state_given = false;
  if (flush) {
    if (a.done()) return die(1, "Flush requires arguments.");
    f.state = ~std::uint32_t(NUD_PERMANENT | NUD_NOARP);
  } else {
    f.state = 0xff & ~std::uint32_t(NUD_NOARP);
  }
  while (!a.done()) {
    std::string w = a.take();
    if (w == "dev") {
      auto v = a.value();
      if (!v) return fail(v.error());
      if (!dev.empty()) return duparg("dev", *v);
      dev = *v;
    } else if (w == "master" || w == "vrf") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto idx = c.client->ifindex(*v);
      if (!idx) return fail(idx.error());
      if (w == "vrf") {
        // iproute2: the device must exist and be a vrf.
        if (!*idx) return invarg("Not a valid VRF name\n", *v);
        auto is = name_is_vrf(c, *v);
        if (!is) return fail(is.error());
        if (!*is) return invarg("Not a valid VRF name\n", *v);
      }
      if (!*idx) return invarg("Device does not exist\n", *v);
      f.master = *idx;
    } else if (w == "nomaster") {
      f.master = -1;
    } else if (w == "unused") {
      f.unused_only = true;
    } else if (w == "nud") {
      auto v = a.value();
      if (!v) return fail(v.error());
      if (!state_given) {
        state_given = true;
        f.state = 0;
      }
      std::uint32_t st = 0;
      if (auto n = nud_number(*v)) {
        st = *n;
      } else {
        if (*v != "all") return invarg("nud state is bad", *v);
        st = ~0u;
        if (flush) st &= ~std::uint32_t(NUD_NOARP);
      }
      if (st == 0) st = 0x100;
      f.state |= st;
    } else if (w == "proxy") {
      f.ndm_flags = NTF_PROXY;
    } else if (matches(w, "protocol")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto p = rt_proto_number(*v);
      if (!p) {
        if (*v != "all") return invarg("invalid \"protocol\"\n", *v);
        p = 0;
      }
      f.protocol = *p;
    } else {
      if (w == "to") {
        auto v = a.value();
        if (!v) return fail(v.error());
        w = *v;
      }
      auto p = prefix_or_exit(w, f.family);
      if (!p) return fail(p.error());
      f.to = *p;
      if (!f.family && !p->any) f.family = p->addr.family();
    }
  }
  if (!dev.empty()) {
    auto idx = c.client->ifindex(dev);
    if (!idx) return fail(idx.error());
    if (!*idx) return die(1, "Cannot find device \"{}\"", dev);
    f.index = *idx;
  }
  auto dump = [&](const std::function<void(const wire::NeighMessage&, std::uint16_t)>& each) {
    wire::MessageBuilder b(1 << 16);
    b.begin({RTM_GETNEIGH, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
    ndmsg nd{};
    nd.ndm_family = std::uint8_t(f.family);
    nd.ndm_flags = f.ndm_flags;
    b.put_struct(nd);
    if (f.index) b.put_u32(NDA_IFINDEX, std::uint32_t(f.index));
    if (f.master) b.put_u32(NDA_MASTER, std::uint32_t(f.master));
    if (auto e = b.end(); !e) return Result<void>(die(2, "{}", e.error().message));
    return c.client->dump(b, [&](const wire::Message& m) {
      if (m.hdr.nlmsg_type != RTM_NEWNEIGH) return;
      auto n = wire::decode_neigh(m);
      if (n && selected(f, *n)) each(*n, m.hdr.nlmsg_type);
    });
  };
  if (flush) {
    constexpr int kMaxRounds = 10;
    for (int round = 0; round < kMaxRounds; ++round) {
      std::vector<wire::NeighMessage> gone;
      IFCORE_TRY(dump([&](const wire::NeighMessage& n, std::uint16_t) { gone.push_back(n); }));
      if (gone.empty()) {
        print_flush_done(c, round);
        return ok();
      }
      for (const auto& n : gone) {
        wire::MessageBuilder b;
        if (!wire::encode_neigh(b, {RTM_DELNEIGH, NLM_F_REQUEST, c.client->next_seq(), 0}, n))
          continue;
        int err = 0;
        std::string ext;
        IFCORE_TRY(c.client->talk_raw(b, {}, err, ext));
      }
      if (c.stats)
        c.out->text(
            fmt::format("\n*** Round {}, deleting {} entries ***\n", round + 1, gone.size()));
      f.state &= ~std::uint32_t(NUD_FAILED);
    }
    c.out->text(fmt::format("*** Flush not complete bailing out after {} rounds\n", kMaxRounds));
    return die(1, "");
  }
  c.out->open_array();
  IFCORE_TRY(dump(
      [&](const wire::NeighMessage& n, std::uint16_t type) { print_neigh(c, n, type, f.index); }));
  c.out->close();
  return ok();
}

}  // namespace

Result<void> do_neigh(Ctx& c, Args& a) {
  if (a.done()) return neigh_show_or_flush(c, a, false);
  std::string cmd = a.take();
  if (matches(cmd, "add")) return neigh_modify(c, a, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_EXCL);
  if (matches(cmd, "change") || cmd == "chg")
    return neigh_modify(c, a, RTM_NEWNEIGH, NLM_F_REPLACE);
  if (matches(cmd, "replace"))
    return neigh_modify(c, a, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE);
  if (matches(cmd, "delete")) return neigh_modify(c, a, RTM_DELNEIGH, 0);
  if (matches(cmd, "get")) return neigh_get(c, a);
  if (matches(cmd, "show") || matches(cmd, "lst") || matches(cmd, "list"))
    return neigh_show_or_flush(c, a, false);
  if (matches(cmd, "flush")) return neigh_show_or_flush(c, a, true);
  return die(255, "Command \"{}\" is unknown, try \"ip neigh help\".", cmd);
}

// For monitor: one neighbour notification.
void print_neigh_event(Ctx& c, const wire::Message& m) {
  auto n = wire::decode_neigh(m);
  if (n) print_neigh(c, *n, m.hdr.nlmsg_type, 0);
}

}  // namespace ifcore::cli
