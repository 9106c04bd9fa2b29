// cli/addr_cmd.cc — `ifc address add|delete|show|flush`: RTM_NEWADDR / RTM_DELADDR /
// RTM_GETADDR, printed under their device as `ip addr show` does.
#include <arpa/inet.h>
#include <net/if.h>

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "cli/link_print.h"
#include "rtnl/wire/address.h"

namespace ifcore::cli {

namespace {

Result<void> finish(wire::MessageBuilder& b) {
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  return ok();
}

const char* family_name(int f) {
  return f == AF_INET ? "inet" : f == AF_INET6 ? "inet6" : "unknown";
}

Result<std::uint8_t> parse_scope(const std::string& s) {
  if (s == "global" || s == "universe") return RT_SCOPE_UNIVERSE;
  if (s == "site") return RT_SCOPE_SITE;
  if (s == "link") return RT_SCOPE_LINK;
  if (s == "host") return RT_SCOPE_HOST;
  if (s == "nowhere") return RT_SCOPE_NOWHERE;
  auto n = parse_u32(s, "invalid scope value.");
  if (!n || *n > 255) return invarg("invalid scope value.", s);
  return std::uint8_t(*n);
}

constexpr std::uint32_t kForever = 0xffffffffu;  // iproute2: INFINITY_LIFE_TIME

std::string lft(std::uint32_t v) {
  return v == kForever ? "forever" : std::to_string(v) + "sec";
}

void print_addr(Ctx& c, const wire::AddrMessage& a, bool deleted) {
  Out& o = *c.out;
  std::uint32_t fl = a.all_flags();
  o.open_object();
  if (deleted) o.kv("deleted", true, "Deleted ");
  o.kv("family", family_name(a.family), fmt::format("    {} ", family_name(a.family)));
  const IpAddr* local = a.local ? &*a.local : a.address ? &*a.address : nullptr;
  if (local) o.kv("local", local->to_string(), local->to_string());
  if (a.local && a.address && !(*a.local == *a.address))
    o.kv("address", a.address->to_string(), " peer " + a.address->to_string());
  o.kv("prefixlen", a.prefixlen, fmt::format("/{} ", a.prefixlen));
  if (a.broadcast)
    o.kv("broadcast", a.broadcast->to_string(), "brd " + a.broadcast->to_string() + " ");
  if (a.anycast) o.kv("anycast", a.anycast->to_string(), "any " + a.anycast->to_string() + " ");
  if (a.rt_priority) o.kv("metric", *a.rt_priority, fmt::format("metric {} ", *a.rt_priority));
  o.kv("scope", rt_scope_name(a.scope), "scope " + rt_scope_name(a.scope) + " ");
  static const std::pair<std::uint32_t, const char*> kFlags[] = {
      {IFA_F_SECONDARY, "secondary"},
      {IFA_F_NODAD, "nodad"},
      {IFA_F_OPTIMISTIC, "optimistic"},
      {IFA_F_DADFAILED, "dadfailed"},
      {IFA_F_HOMEADDRESS, "home"},
      {IFA_F_DEPRECATED, "deprecated"},
      {IFA_F_TENTATIVE, "tentative"},
      {IFA_F_MANAGETEMPADDR, "mngtmpaddr"},
      {IFA_F_NOPREFIXROUTE, "noprefixroute"},
      {IFA_F_MCAUTOJOIN, "autojoin"},
      {IFA_F_STABLE_PRIVACY, "stable-privacy"}};
  for (auto [bit, name] : kFlags) {
    if (!(fl & bit)) continue;
    const char* n = (bit == IFA_F_SECONDARY && a.family == AF_INET6) ? "temporary" : name;
    o.kv(n, true, std::string(n) + " ");
  }
  if (!(fl & IFA_F_PERMANENT)) o.kv("dynamic", true, "dynamic ");
  if (a.label) o.kv("label", *a.label, *a.label);
  std::uint32_t valid = 0xffffffffu, pref = 0xffffffffu;
  if (a.cacheinfo) valid = a.cacheinfo->ifa_valid, pref = a.cacheinfo->ifa_prefered;
  o.kv("valid_life_time", valid, "\n       valid_lft " + lft(valid));
  o.kv("preferred_life_time", pref, " preferred_lft " + lft(pref));
  o.text("\n");
  o.close();
}

// Every address of `family` (0: all) — iproute2 dumps with the filter's family.
Result<std::vector<wire::AddrMessage>> list_addrs(Ctx& c, int family) {
  std::vector<wire::AddrMessage> out;
  wire::MessageBuilder b(1 << 16);
  b.begin({RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
  ifaddrmsg ifa{};
  ifa.ifa_family = std::uint8_t(family == AF_PACKET ? AF_UNSPEC : family);
  b.put_struct(ifa);
  IFCORE_TRY(finish(b));
  IFCORE_TRY(c.client->dump(b, [&](const wire::Message& m) {
    if (m.hdr.nlmsg_type != RTM_NEWADDR) return;
    auto a = wire::decode_addr(m);
    if (!a) return;
    if (family && a->family != family) return;
    out.push_back(std::move(*a));
  }));
  return out;
}

// `ip address show` (iproute2's ipaddr_list_flush_or_save): the devices the link filters
// select, less those with addresses none of which the address filters select (a device
// without any address stays, unless a family was asked for), each followed by its
// selected addresses. A label filter prints the addresses alone, without their device.
Result<void> addr_show(Ctx& c, Args& a) {
  LinkFilter lf;
  AddrFilter af;
  af.family = c.family == AF_PACKET ? 0 : c.family;
  IFCORE_TRY(parse_show_filter(c, a, lf, af));
  lf.family = c.family;
  auto links = list_links(c, lf);
  if (!links) return fail(links.error());
  const bool packet = c.family == AF_PACKET;
  std::vector<wire::AddrMessage> addrs;
  if (!packet) {
    auto got = list_addrs(c, af.family);
    if (!got) return fail(got.error());
    addrs = std::move(*got);
  }
  std::multimap<std::uint32_t, const wire::AddrMessage*> by_dev;
  for (const auto& x : addrs) by_dev.emplace(x.ifindex, &x);
  // The devices print in the filter's family (`to 10.0.0.0/8` is `-4`: no link/ether
  // line), for this command only.
  struct FamilyScope {
    Ctx& c;
    int saved;
    ~FamilyScope() { c.family = saved; }
  } family_scope{c, c.family};
  if (!packet) c.family = af.family;
  Out& o = *c.out;
  o.open_array();
  for (const auto& l : *links) {
    auto [lo, hi] = by_dev.equal_range(std::uint32_t(l.m.ifindex));
    // Every address of the device, null where the filters pass it over (iproute2 still
    // opens a JSON object for it: `{}`).
    std::vector<const wire::AddrMessage*> shown;
    bool any = false;
    for (auto it = lo; it != hi; ++it) {
      bool sel = af.selects(*it->second, l.m.name);
      shown.push_back(sel ? it->second : nullptr);
      any = any || sel;
    }
    if (!packet && !any && (lo != hi || af.family)) continue;
    o.open_object();
    // A device the link filters pass over prints nothing (`{}`), unless -o prints its
    // addresses without it: then only `up` keeps them back (print_selected_addrinfo).
    const bool no_link = o.oneline() && !packet && !c.brief;
    if (l.hidden && (!no_link || (lf.up && !(l.m.flags & IFF_UP)))) {
      o.close();
      o.flush();
      continue;
    }
    if (c.brief) {
      if (packet)
        print_link_brief_packet(c, l);
      else if (!af.label)
        print_link_brief(c, l);
    } else if (!o.oneline() || packet) {
      if (!af.label) print_link(c, l, false);
    }
    if (!packet) {
      o.open_array("addr_info");
      for (const wire::AddrMessage* x : shown) {
        if (!x) {
          o.open_object();
          o.close();
        } else if (c.brief) {
          const IpAddr* ip = x->local ? &*x->local : &*x->address;
          // iproute2: a point-to-point address shows its peer (`A peer P/len`).
          bool peer = x->local && x->address && !(*x->local == *x->address);
          o.open_object();
          o.jkv("local", ip->to_string());
          if (peer) o.jkv("address", x->address->to_string());
          o.jkv("prefixlen", x->prefixlen);
          o.close();
          if (peer)
            o.text(fmt::format("{} peer {}/{} ", ip->to_string(), x->address->to_string(),
                               x->prefixlen));
          else
            o.text(fmt::format("{}/{} ", ip->to_string(), x->prefixlen));
        } else if (o.oneline()) {
          // iproute2 (-o): one line per address, "IFINDEX: NAME" and the address.
          o.text(fmt::format("{}: {}", l.m.ifindex, l.m.name));
          print_addr(c, *x, false);
          o.end_record();
        } else {
          print_addr(c, *x, false);
        }
      }
      o.close();
      if (c.brief) o.text("\n");
    }
    o.close();
    o.flush();
  }
  o.close();
  return ok();
}

// iproute2's address flag words (ifa_flag_data): which a user may set, and which only
// for IPv6.
struct AddrFlagWord {
  const char* name;
  std::uint32_t mask;
  bool readonly, v6only;
};
const AddrFlagWord* addr_flag_word(const std::string& w) {
  static const AddrFlagWord kWords[] = {
      {"secondary", IFA_F_SECONDARY, true, false},
      {"temporary", IFA_F_SECONDARY, true, false},
      {"nodad", IFA_F_NODAD, false, true},
      {"optimistic", IFA_F_OPTIMISTIC, false, true},
      {"dadfailed", IFA_F_DADFAILED, true, true},
      {"home", IFA_F_HOMEADDRESS, false, true},
      {"deprecated", IFA_F_DEPRECATED, true, true},
      {"tentative", IFA_F_TENTATIVE, true, true},
      {"permanent", IFA_F_PERMANENT, true, true},
      {"mngtmpaddr", IFA_F_MANAGETEMPADDR, false, true},
      {"noprefixroute", IFA_F_NOPREFIXROUTE, false, false},
      {"autojoin", IFA_F_MCAUTOJOIN, false, false},
      {"stable-privacy", IFA_F_STABLE_PRIVACY, true, true},
  };
  for (const AddrFlagWord& f : kWords)
    if (w == f.name) return &f;
  return nullptr;
}

Result<void> addr_modify(Ctx& c, Args& a, std::uint16_t type, std::uint16_t flags) {
  wire::AddrMessage m;
  std::string dev;
  std::optional<Prefix> local, peer;
  bool brd_auto = false;
  bool valid_given = false, preferred_given = false;
  std::uint32_t valid_lft = kForever, preferred_lft = kForever;
  while (!a.done()) {
    std::string w = a.take();
    auto v = [&]() { return a.value(); };
    if (w == "dev") {
      auto x = v();
      if (!x) return fail(x.error());
      dev = *x;
    } else if (w == "peer" || w == "remote") {
      auto x = v();
      if (!x) return fail(x.error());
      auto p = parse_prefix(*x, c.family, "invalid peer address");
      if (!p) return fail(p.error());
      peer = *p;
    } else if (matches(w, "broadcast") || w == "brd") {
      auto x = v();
      if (!x) return fail(x.error());
      if (*x == "+" || *x == "-") {
        brd_auto = *x == "+";
        continue;
      }
      auto ip = IpAddr::parse(*x);
      if (!ip) return invarg("invalid broadcast address", *x);
      m.broadcast = *ip;
    } else if (w == "label") {
      auto x = v();
      if (!x) return fail(x.error());
      m.label = *x;
    } else if (w == "proto") {
      // From iproute2 6.4 on (Debian 12's ip 6.1 has no such word): IFA_PROTO.
      auto x = v();
      if (!x) return fail(x.error());
      auto n = addr_proto_number(*x);
      if (!n) return invarg("\"proto\" value is invalid\n", *x);
      m.proto = *n;
    } else if (w == "scope") {
      auto x = v();
      if (!x) return fail(x.error());
      auto s = parse_scope(*x);
      if (!s) return fail(s.error());
      m.scope = *s;
    } else if (matches(w, "metric") || matches(w, "priority") || matches(w, "preference")) {
      auto x = v();
      if (!x) return fail(x.error());
      auto n = parse_u32(*x, "\"metric\" value is invalid\n");
      if (!n) return fail(n.error());
      m.rt_priority = *n;
    } else if (matches(w, "valid_lft") || matches(w, "preferred_lft")) {
      const bool valid = matches(w, "valid_lft");
      const char* name = valid ? "valid_lft" : "preferred_lft";
      if (valid ? valid_given : preferred_given) return duparg_second(name, w);
      auto x = v();
      if (!x) return fail(x.error());
      std::uint32_t& slot = valid ? valid_lft : preferred_lft;
      if (*x == "forever") {
        slot = kForever;
      } else {
        auto n = parse_u32(*x, "");
        if (!n) return invarg(fmt::format("{} value", name), *x);
        slot = *n;
      }
      (valid ? valid_given : preferred_given) = true;
    } else if (const AddrFlagWord* f = addr_flag_word(w)) {
      // iproute2: a flag the kernel sets is refused with a warning, and so is an IPv6-only
      // one unless the family is IPv6 so far (-6, or an IPv6 address given before it).
      int family = local ? local->addr.family() : c.family;
      if (f->readonly)
        std::fprintf(stderr, "Warning: %s option is not mutable from userspace\n", f->name);
      else if (f->v6only && family != AF_INET6)
        std::fprintf(stderr, "Warning: %s option can be set only for IPv6 addresses\n", f->name);
      else
        m.flags32 = m.flags32.value_or(0) | f->mask;
    } else {
      if (w == "local") {
        auto x = v();
        if (!x) return fail(x.error());
        w = *x;
      }
      if (local) return duparg("local", w);
      auto p = prefix_or_exit(w, c.family);
      if (!p) return fail(p.error());
      local = *p;
    }
  }
  if (dev.empty()) return die(1, "Not enough information: \"dev\" argument is required.");
  if (!local && type != RTM_DELADDR) return die(1, "Not enough information: address is required.");
  auto idx = dev_index(c, dev);
  if (!idx) return fail(idx.error());
  m.ifindex = std::uint32_t(*idx);
  if (local) {
    m.family = std::uint8_t(local->addr.family());
    m.local = local->addr;
    m.address = peer ? peer->addr : local->addr;
    int full = int(local->addr.size() * 8);
    m.prefixlen = std::uint8_t(peer && peer->len >= 0 ? peer->len
                               : local->len >= 0      ? local->len
                                                      : full);
    if (brd_auto && m.family == AF_INET && m.prefixlen < 31) {
      std::uint32_t host = local->addr.v4_host() | (0xffffffffu >> m.prefixlen);
      m.broadcast = IpAddr::v4(host);
    }
  }
  if (m.scope == 0 && local && local->addr.is_v4() && (local->addr.v4_host() >> 24) == 127)
    m.scope = RT_SCOPE_HOST;
  if (valid_given || preferred_given) {
    if (!valid_lft) return die(1, "valid_lft is zero");
    if (valid_lft < preferred_lft) return die(1, "preferred_lft is greater than valid_lft");
    ifa_cacheinfo ci{};
    ci.ifa_prefered = preferred_lft;
    ci.ifa_valid = valid_lft;
    m.cacheinfo = ci;
  }
  if (m.flags32) m.flags = std::uint8_t(*m.flags32 & 0xff);
  wire::MessageBuilder b;
  IFCORE_TRY([&]() -> Result<void> {
    auto r = wire::encode_addr(
        b, {type, std::uint16_t(NLM_F_REQUEST | flags), c.client->next_seq(), 0}, m);
    if (!r) return die(2, "{}", r.error().message);
    return ok();
  }());
  return c.client->talk(b);
}

// `ip address flush` (iproute2's ipaddr_flush): deletes the addresses the filters select,
// dumping again until a round finds none (a deleted primary may promote a secondary), at
// most ten rounds; one round when only primaries were asked for.
Result<void> addr_flush(Ctx& c, Args& a) {
  if (a.done()) return die(1, "Flush requires arguments.");
  if (c.family == AF_PACKET) return die(1, "Cannot flush link addresses.");
  LinkFilter lf;
  AddrFilter af;
  af.family = c.family;
  IFCORE_TRY(parse_show_filter(c, a, lf, af));
  int ifindex = 0;
  if (!lf.name.empty()) {
    auto idx = c.client->ifindex(lf.name);
    if (!idx) return fail(idx.error());
    if (!*idx) return die(1, "Device \"{}\" does not exist.", lf.name);
    ifindex = *idx;
  }
  const bool primaries_only = (af.flag_mask & IFA_F_SECONDARY) && !(af.flags & IFA_F_SECONDARY);
  constexpr int kMaxRounds = 10;
  for (int round = 0; round < kMaxRounds; ++round) {
    auto addrs = list_addrs(c, af.family);
    if (!addrs) return fail(addrs.error());
    int flushed = 0;
    for (const auto& x : *addrs) {
      if (ifindex && x.ifindex != std::uint32_t(ifindex)) continue;
      if (!af.selects(x, c.client->ifname(int(x.ifindex)))) continue;
      wire::AddrMessage d;
      d.family = x.family, d.prefixlen = x.prefixlen, d.scope = x.scope, d.ifindex = x.ifindex;
      d.local = x.local, d.address = x.address;
      wire::MessageBuilder b;
      if (!wire::encode_addr(b, {RTM_DELADDR, NLM_F_REQUEST, c.client->next_seq(), 0}, d)) continue;
      int err = 0;
      std::string ext;
      IFCORE_TRY(c.client->talk_raw(b, {}, err, ext));
      // Secondaries vanish with their primary (EADDRNOTAVAIL): not an error for flush.
      if (err && err != EADDRNOTAVAIL) return die(2, "{}", rtnl_error_text(err, ext));
      ++flushed;
    }
    if (flushed == 0 || primaries_only) return ok();
  }
  return die(1, "*** Flush remains incomplete after {} rounds. ***", kMaxRounds);
}

}  // namespace

Result<void> do_addr(Ctx& c, Args& a) {
  if (a.done()) return addr_show(c, a);
  std::string cmd = a.take();
  if (matches(cmd, "add")) return addr_modify(c, a, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
  if (matches(cmd, "change")) return addr_modify(c, a, RTM_NEWADDR, NLM_F_REPLACE);
  if (matches(cmd, "replace")) return addr_modify(c, a, RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE);
  if (matches(cmd, "delete")) return addr_modify(c, a, RTM_DELADDR, 0);
  if (matches(cmd, "show") || matches(cmd, "list") || matches(cmd, "lst")) return addr_show(c, a);
  if (matches(cmd, "flush")) return addr_flush(c, a);
  return die(255, "Command \"{}\" is unknown, try \"ip address help\".", cmd);
}

// For monitor: one address notification.
void print_addr_event(Ctx& c, const wire::Message& m) {
  auto a = wire::decode_addr(m);
  if (!a) return;
  std::string dev = c.client->ifname(int(a->ifindex));
  if (m.hdr.nlmsg_type == RTM_DELADDR) c.out->text("Deleted ");
  c.out->text(fmt::format("{}: {}", a->ifindex, dev));
  print_addr(c, *a, false);
}

}  // namespace ifcore::cli
