// cli/tunnel_cmd.cc — `ifc tunnel` (and `ifc tunl`): iproute2 6.1's `ip tunnel` words,
// checks, errors and output for the gre and ipip kinds, over rtnetlink only. Where `ip`
// sends SIOC{ADD,CHG,DEL,GET}TUNNEL to a base device (gre0, tunl0, sit0, ip_vti0) or to
// the tunnel, ifc sends the RTM_NEWLINK / RTM_DELLINK / RTM_GETLINK that the preload shim
// turns those ioctls into (shim/tunnel.cc), so that both give the same answers: ifcore
// has no fallback device, no sit, vti or IPv6 tunnel kind; an error is the ioctl's errno.
#include <arpa/inet.h>
#include <net/if.h>  // before any <linux/if*.h>
#include <netinet/in.h>

#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/if_tunnel.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cli/commands.h"
#include "cli/link_print.h"
#include "cli/tunnel_print.h"

namespace ifcore::cli {
namespace {

constexpr const char* kUsage =
    "Usage: ip tunnel { add | change | del | show | prl | 6rd } [ NAME ]\n"
    "        [ mode { gre | ipip | isatap | sit | vti } ]\n"
    "        [ remote ADDR ] [ local ADDR ]\n"
    "        [ [i|o]seq ] [ [i|o]key KEY ] [ [i|o]csum ]\n"
    "        [ prl-default ADDR ] [ prl-nodefault ADDR ] [ prl-delete ADDR ]\n"
    "        [ 6rd-prefix ADDR ] [ 6rd-relay_prefix ADDR ] [ 6rd-reset ]\n"
    "        [ ttl TTL ] [ tos TOS ] [ [no]pmtudisc ] [ dev PHYS_DEV ]\n"
    "\n"
    "Where: NAME := STRING\n"
    "       ADDR := { IP_ADDRESS | any }\n"
    "       TOS  := { STRING | 00..ff | inherit | inherit/STRING | inherit/00..ff }\n"
    "       TTL  := { 1..255 | inherit }\n"
    "       KEY  := { DOTTED_QUAD | NUMBER }";

enum class Cmd { Add, Change, Del, Show };

// An IPv4 address as iproute2's get_addr32 reads it: any/all/default are 0.0.0.0, parts
// may be fewer than four and in any base; a bad one ends ip at once (status 1).
Result<std::uint32_t> addr32(const std::string& s) {
  if (s == "any" || s == "all" || s == "default") return 0u;
  auto bad = [&] { return die_now(1, "Error: an IP address is expected rather than \"{}\"", s); };
  if (s.find(':') != std::string::npos) return bad();
  std::uint8_t part[4] = {};
  const char* cp = s.c_str();
  for (int i = 0; i < 4; ++i) {
    char* end = nullptr;
    unsigned long n = std::strtoul(cp, &end, 0);
    if (n > 255 || end == cp) return bad();
    part[i] = std::uint8_t(n);
    if (*end == '\0') break;
    if (i == 3 || *end != '.') return bad();
    cp = end + 1;
  }
  return std::uint32_t(part[0]) << 24 | std::uint32_t(part[1]) << 16 | std::uint32_t(part[2]) << 8 |
         part[3];
}

// A gre key: a dotted quad, or an unsigned number in any base.
Result<std::uint32_t> key_value(const std::string& word, const std::string& v) {
  if (v.find('.') != std::string::npos) return addr32(v);
  auto n = parse_u32(v, "");
  if (!n)
    return die(255, "invalid value for \"{}\": \"{}\"; it should be an unsigned integer", word, v);
  return *n;
}

bool valid_ifname(const std::string& s) {
  return !s.empty() && s.size() < IFNAMSIZ && std::none_of(s.begin(), s.end(), [](char ch) {
    return ch == '/' || std::isspace(static_cast<unsigned char>(ch));
  });
}

bool starts(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The device `name` as RTM_GETLINK answers it; nullopt with `err` set when it cannot.
Result<std::optional<LinkView>> get_link(Ctx& c, const std::string& name, int& err) {
  wire::MessageBuilder b;
  b.begin({RTM_GETLINK, NLM_F_REQUEST, c.client->next_seq(), 0});
  ifinfomsg ifi{};
  b.put_struct(ifi);
  b.put_string(IFLA_IFNAME, name);
  err = ENODEV;
  if (auto e = b.end(); !e) return std::optional<LinkView>{};
  std::optional<LinkView> got;
  std::string ext;
  IFCORE_TRY(c.client->talk_raw(
      b,
      [&](const wire::Message& m) {
        if (m.hdr.nlmsg_type != RTM_NEWLINK) return;
        if (auto l = read_link(m)) got = std::move(*l);
      },
      err, ext));
  if (!err && !got) err = EINVAL;
  return err ? std::optional<LinkView>{} : got;
}

bool is_tunnel_kind(const LinkView& l) {
  auto k = l.m.kind.value_or("");
  return k == "gre" || k == "ipip";
}

// A gre or ipip device's parameters from its IFLA_INFO_DATA, as SIOCGETTUNNEL fills them.
Parm parm_of(const LinkView& l) {
  Parm p;
  bool gre = l.m.kind.value_or("") == "gre";
  p.name = l.m.name;
  p.proto = gre ? IPPROTO_GRE : IPPROTO_IPIP;
  p.pmtudisc = false;
  auto attrs = wire::parse_raw_attrs(l.info_data, 0);
  if (!attrs) return p;
  auto be = [](const wire::RawAttr& a) {
    std::uint32_t v = 0;
    for (std::uint8_t x : a.data) v = v << 8 | x;
    return v;
  };
  auto u32 = [](const wire::RawAttr& a) {
    std::uint32_t v = 0;
    if (a.data.size() == 4) std::memcpy(&v, a.data.data(), 4);
    return v;
  };
  auto u8 = [](const wire::RawAttr& a) { return a.data.empty() ? std::uint8_t{0} : a.data[0]; };
  for (const wire::RawAttr& a : *attrs) {
    if (gre) {
      if (a.type == IFLA_GRE_LINK) p.link = u32(a);
      if (a.type == IFLA_GRE_IFLAGS) p.iflags = std::uint16_t(be(a));
      if (a.type == IFLA_GRE_OFLAGS) p.oflags = std::uint16_t(be(a));
      if (a.type == IFLA_GRE_IKEY) p.ikey = be(a);
      if (a.type == IFLA_GRE_OKEY) p.okey = be(a);
      if (a.type == IFLA_GRE_LOCAL) p.local = be(a);
      if (a.type == IFLA_GRE_REMOTE) p.remote = be(a);
      if (a.type == IFLA_GRE_TTL) p.ttl = u8(a);
      if (a.type == IFLA_GRE_TOS) p.tos = u8(a);
      if (a.type == IFLA_GRE_PMTUDISC) p.pmtudisc = u8(a) != 0;
    } else {
      if (a.type == IFLA_IPTUN_LINK) p.link = u32(a);
      if (a.type == IFLA_IPTUN_LOCAL) p.local = be(a);
      if (a.type == IFLA_IPTUN_REMOTE) p.remote = be(a);
      if (a.type == IFLA_IPTUN_TTL) p.ttl = u8(a);
      if (a.type == IFLA_IPTUN_TOS) p.tos = u8(a);
      if (a.type == IFLA_IPTUN_PMTUDISC) p.pmtudisc = u8(a) != 0;
    }
  }
  return p;
}

// SIOCGETTUNNEL on `ifr` (the tunnel, or a base device with `p.name`), as the shim
// answers it. Errors: ip's `get tunnel "IFR" failed: ...` (status 1).
Result<Parm> get_tunnel(Ctx& c, const std::string& ifr, const std::string& pname) {
  bool base = ifr == "gre0" || ifr == "tunl0";
  std::string target = base ? pname : ifr;
  int err = ENODEV;
  std::optional<LinkView> l;
  if (!target.empty()) {
    auto got = get_link(c, target, err);
    if (!got) return fail(got.error());
    l = std::move(*got);
    if (l && !is_tunnel_kind(*l)) err = EINVAL, l.reset();
  }
  if (!l) return die(1, "get tunnel \"{}\" failed: {}", ifr, std::strerror(err));
  return parm_of(*l);
}

Result<void> set_proto(Parm& p, std::uint8_t proto) {
  if (p.proto && p.proto != proto)
    return die(255, "You managed to ask for more than one tunnel mode.");
  p.proto = proto;
  return ok();
}

// The words of add, change, del and show (iproute2 6.1's parse_args in iptunnel.c).
// Errors: ip's texts; status 255 for syntax, 1 for what ip returns -1 on.
Result<void> parse(Ctx& c, Args& a, Cmd cmd, Parm& p) {
  p = Parm{};
  std::string medium;
  for (int count = 0; !a.done(); ++count) {
    std::string w = a.take();
    if (w == "mode") {
      auto v = a.value();
      if (!v) return fail(v.error());
      if (*v == "ipip" || *v == "ip/ip") {
        IFCORE_TRY(set_proto(p, IPPROTO_IPIP));
      } else if (*v == "gre" || *v == "gre/ip") {
        IFCORE_TRY(set_proto(p, IPPROTO_GRE));
      } else if (*v == "sit" || *v == "ipv6/ip" || *v == "isatap") {
        IFCORE_TRY(set_proto(p, IPPROTO_IPV6));
      } else if (*v == "vti") {
        IFCORE_TRY(set_proto(p, IPPROTO_IPIP));
        p.vti = true;
      } else {
        return die(255, "Unknown tunnel mode \"{}\"", *v);
      }
    } else if (w == "key" || w == "ikey" || w == "okey") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto k = key_value(w, *v);
      if (!k) return fail(k.error());
      if (w != "okey") p.iflags |= kKey, p.ikey = *k;
      if (w != "ikey") p.oflags |= kKey, p.okey = *k;
    } else if (w == "seq" || w == "iseq" || w == "oseq") {
      if (w != "oseq") p.iflags |= kSeq;
      if (w != "iseq") p.oflags |= kSeq;
    } else if (w == "csum" || w == "icsum" || w == "ocsum") {
      if (w != "ocsum") p.iflags |= kCsum;
      if (w != "icsum") p.oflags |= kCsum;
    } else if (w == "nopmtudisc" || w == "pmtudisc") {
      p.pmtudisc = w == "pmtudisc";
    } else if (w == "remote" || w == "local") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto ip = addr32(*v);
      if (!ip) return fail(ip.error());
      (w == "remote" ? p.remote : p.local) = *ip;
    } else if (w == "dev") {
      auto v = a.value();
      if (!v) return fail(v.error());
      medium = *v;
    } else if (w == "ttl" || w == "hoplimit" || w == "hlim") {
      auto v = a.value();
      if (!v) return fail(v.error());
      if (*v != "inherit") {  // inherit leaves the ttl as it is (0, or a change's old one)
        auto n = parse_u32(*v, "invalid TTL\n");
        if (!n || *n > 255) return invarg("invalid TTL\n", *v);
        p.ttl = std::uint8_t(*n);
      }
    } else if (w == "tos" || w == "tclass" || matches(w, "dsfield")) {
      // TOS, inherit, or inherit/TOS: bit 0 asks for the inner packet's tos.
      auto v = a.value();
      if (!v) return fail(v.error());
      std::string head = v->substr(0, v->find('/'));
      std::optional<std::string> ds;
      if (head != "inherit") {
        ds = *v;
        p.tos = 0;
      } else {
        p.tos = 1;
        if (head.size() < v->size()) ds = v->substr(head.size() + 1);
      }
      if (ds) {
        auto n = ds_number(*ds);
        if (!n) return invarg("bad TOS value", head);
        p.tos |= *n;
      }
    } else {
      std::string name = w;
      if (w == "name") {
        auto v = a.value();
        if (!v) return fail(v.error());
        name = *v;
      } else if (matches(w, "help")) {
        return die(255, "{}", kUsage);
      }
      if (!p.name.empty()) return duparg("name", name);
      if (!valid_ifname(name)) return invarg("\"name\" not a valid ifname", name);
      p.name = name;
      // A change named first starts from the tunnel's present parameters.
      if (cmd == Cmd::Change && count == 0) {
        auto old = get_tunnel(c, name, "");
        if (!old) return fail(old.error());
        p = *old;
      }
    }
  }
  if (!p.proto) {
    if (starts(p.name, "gre")) {
      p.proto = IPPROTO_GRE;
    } else if (starts(p.name, "ipip")) {
      p.proto = IPPROTO_IPIP;
    } else if (starts(p.name, "sit") || starts(p.name, "isatap")) {
      p.proto = IPPROTO_IPV6;
    } else if (starts(p.name, "vti")) {
      p.proto = IPPROTO_IPIP;
      p.vti = true;
    }
  }
  if (((p.iflags | p.oflags) & kKey) && !p.vti && p.proto != IPPROTO_GRE)
    return die(1, "Keys are not allowed with ipip and sit tunnels");
  if (!medium.empty()) {
    auto idx = dev_index(c, medium);
    if (!idx) return fail(idx.error());
    p.link = std::uint32_t(*idx);
  }
  // A multicast remote end: its address is the key where none is given.
  if (IN_MULTICAST(p.remote)) {
    if (!p.ikey) p.ikey = p.remote, p.iflags |= kKey;
    if (!p.okey) p.okey = p.remote, p.oflags |= kKey;
    if (!p.local) return die(1, "A broadcast tunnel requires a source address");
  }
  return ok();
}

// The device ip addresses for a tunnel of this mode (iproute2's tnl_defname).
const char* base_device(const Parm& p) {
  switch (p.proto) {
    case IPPROTO_IPIP:
      return p.vti ? "ip_vti0" : "tunl0";
    case IPPROTO_GRE:
      return "gre0";
    case IPPROTO_IPV6:
      return "sit0";
    default:
      return nullptr;
  }
}

// The kind's IFLA_INFO_DATA for `p` (as the shim's SIOCADDTUNNEL / SIOCCHGTUNNEL).
void put_info_data(wire::MessageBuilder& b, const Parm& p, bool gre) {
  std::uint8_t pmtudisc = p.pmtudisc || p.ttl;  // a fixed ttl implies DF
  auto data = b.begin_nest(IFLA_INFO_DATA);
  if (gre) {
    b.put_u32(IFLA_GRE_LINK, p.link);
    b.put_be16(IFLA_GRE_IFLAGS, p.iflags);
    b.put_be16(IFLA_GRE_OFLAGS, p.oflags);
    b.put_be32(IFLA_GRE_IKEY, p.ikey);
    b.put_be32(IFLA_GRE_OKEY, p.okey);
    b.put_be32(IFLA_GRE_LOCAL, p.local);
    b.put_be32(IFLA_GRE_REMOTE, p.remote);
    b.put_u8(IFLA_GRE_TTL, p.ttl);
    b.put_u8(IFLA_GRE_TOS, p.tos);
    b.put_u8(IFLA_GRE_PMTUDISC, pmtudisc);
  } else {
    b.put_u32(IFLA_IPTUN_LINK, p.link);
    b.put_be32(IFLA_IPTUN_LOCAL, p.local);
    b.put_be32(IFLA_IPTUN_REMOTE, p.remote);
    b.put_u8(IFLA_IPTUN_TTL, p.ttl);
    b.put_u8(IFLA_IPTUN_TOS, p.tos);
    b.put_u8(IFLA_IPTUN_PMTUDISC, pmtudisc);
  }
  b.end_nest(data);
}

// Sends a finished request; returns its errno (0: done).
Result<int> send(Ctx& c, wire::MessageBuilder& b) {
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  int err = 0;
  std::string ext;
  IFCORE_TRY(c.client->talk_raw(b, {}, err, ext));
  return err;
}

Result<int> new_link(Ctx& c, const std::string& name, const Parm& p, bool gre, bool create) {
  wire::MessageBuilder b;
  std::uint16_t flags = NLM_F_REQUEST | (create ? NLM_F_CREATE | NLM_F_EXCL : 0);
  b.begin({RTM_NEWLINK, flags, c.client->next_seq(), 0});
  ifinfomsg ifi{};
  b.put_struct(ifi);
  b.put_string(IFLA_IFNAME, name);
  auto info = b.begin_nest(IFLA_LINKINFO);
  b.put_string(IFLA_INFO_KIND, gre ? "gre" : "ipip");
  put_info_data(b, p, gre);
  b.end_nest(info);
  return send(c, b);
}

// add and change: SIOCADDTUNNEL on the base device, SIOCCHGTUNNEL on the tunnel named.
Result<void> tunnel_add(Ctx& c, Args& a, Cmd cmd) {
  Parm p;
  IFCORE_TRY(parse(c, a, cmd, p));
  if (p.ttl && !p.pmtudisc) return die(1, "ttl != 0 and nopmtudisc are incompatible");
  const char* basedev = base_device(p);
  if (!basedev) return die(1, "cannot determine tunnel mode (ipip, gre, vti or sit)");
  std::string ifr = cmd == Cmd::Change && !p.name.empty() ? p.name : basedev;
  bool gre = p.proto == IPPROTO_GRE || (p.proto != IPPROTO_IPIP && starts(ifr, "gre"));
  bool base = ifr == "gre0" || ifr == "tunl0";
  std::string target = base ? p.name : ifr;
  auto failed = [&](int err) {
    return die(1, "add tunnel \"{}\" failed: {}", ifr, std::strerror(err));
  };
  if (cmd == Cmd::Change) {
    // The tunnel keeps its kind, whatever the mode asked.
    if (target.empty()) return failed(EINVAL);
    int err = 0;
    auto l = get_link(c, target, err);
    if (!l) return fail(l.error());
    if (!*l) return failed(err);
    if (!is_tunnel_kind(**l)) return failed(EINVAL);
    auto r = new_link(c, target, p, (*l)->m.kind == "gre", false);
    if (!r) return fail(r.error());
    return *r ? failed(*r) : ok();
  }
  if (!base) {
    // sit0, ip_vti0: ifcore has no such kind, nor a device of that name.
    auto idx = c.client->ifindex(ifr);
    if (!idx) return fail(idx.error());
    if (!*idx) return failed(ENODEV);
  }
  std::string name = !target.empty() ? target : gre ? "gre%d" : "tunl%d";
  auto r = new_link(c, name, p, gre, true);
  if (!r) return fail(r.error());
  return *r ? failed(*r) : ok();
}

Result<void> tunnel_del(Ctx& c, Args& a) {
  Parm p;
  IFCORE_TRY(parse(c, a, Cmd::Del, p));
  const char* basedev = base_device(p);
  std::string ifr = !p.name.empty() ? p.name : basedev ? basedev : "";
  bool base = ifr == "gre0" || ifr == "tunl0";
  std::string target = base ? p.name : ifr;
  int err = EPERM;  // the fallback device (that ifcore lacks) is never deleted
  if (!target.empty()) {
    wire::MessageBuilder b;
    b.begin({RTM_DELLINK, NLM_F_REQUEST, c.client->next_seq(), 0});
    ifinfomsg ifi{};
    b.put_struct(ifi);
    b.put_string(IFLA_IFNAME, target);
    auto r = send(c, b);
    if (!r) return fail(r.error());
    err = *r;
  }
  if (err) return die(1, "delete tunnel \"{}\" failed: {}", ifr, std::strerror(err));
  return ok();
}

// Every IPv4 tunnel device that `want` selects (iproute2 6.1's do_tunnels_list and
// ip_tunnel_parm_match: dev, name, remote, local and ikey, where given).
Result<void> list_tunnels(Ctx& c, const Parm& want) {
  wire::MessageBuilder b;
  b.begin({RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
  ifinfomsg ifi{};
  ifi.ifi_family = AF_INET;
  b.put_struct(ifi);
  b.put_u32(IFLA_EXT_MASK, RTEXT_FILTER_VF);
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  std::vector<LinkView> links;
  auto r = c.client->dump(b, [&](const wire::Message& m) {
    auto l = read_link(m);
    if (!l) return;
    auto t = l->m.hw_type;
    if (t != ARPHRD_TUNNEL && t != ARPHRD_IPGRE && t != ARPHRD_SIT) return;
    if (!want.name.empty() && want.name != l->m.name) return;
    links.push_back(std::move(*l));
  });
  if (!r) return die(1, "{}\nDump terminated", r.error().message);
  c.out->open_array();
  for (const LinkView& l : links) {
    if (!is_tunnel_kind(l)) continue;  // SIOCGETTUNNEL fails for it: ip skips it
    Parm p = parm_of(l);
    if ((want.link && want.link != p.link) || (want.remote && want.remote != p.remote) ||
        (want.local && want.local != p.local) || (want.ikey && want.ikey != p.ikey))
      continue;
    c.out->open_object();
    print_parm(c, p);
    if (c.stats) print_stats(c, l);
    c.out->text("\n");
    c.out->close();
    c.out->end_record();
  }
  c.out->close();
  return ok();
}

Result<void> tunnel_show(Ctx& c, Args& a) {
  Parm p;
  IFCORE_TRY(parse(c, a, Cmd::Show, p));
  const char* basedev = base_device(p);
  if (!basedev) return list_tunnels(c, p);
  // A mode, or a name that implies one: one tunnel, asked by name.
  std::string ifr = !p.name.empty() ? p.name : basedev;
  auto got = get_tunnel(c, ifr, p.name);
  if (!got) return fail(got.error());
  c.out->open_object();
  print_parm(c, *got);
  c.out->text("\n");
  c.out->close();
  c.out->end_record();
  return ok();
}

// iproute2 6.1 sends `mode` values of IPv6 tunnels (and -6) to ip6tunnel.c.
bool ipv6_mode(const std::string& m) {
  static const char* const kModes[] = {"ipv6/ipv6", "ip6ip6",   "vti6",   "ip/ipv6",
                                       "ipv4/ipv6", "ipip6",    "ip4ip6", "ip6gre",
                                       "gre/ipv6",  "any/ipv6", "any"};
  for (const char* k : kModes)
    if (m == k) return true;
  return false;
}

}  // namespace

Result<void> do_tunnel(Ctx& c, Args& a) {
  int family = c.family;
  {
    Args scan = a;
    while (scan.left() > 1) {
      if (scan.take() == "mode") {
        if (ipv6_mode(scan.peek())) family = AF_INET6;
        break;
      }
    }
  }
  if (family == AF_INET6) {
    // ip6tunnel.c's list shows ARPHRD_TUNNEL6 / ARPHRD_IP6GRE devices: ifcore makes none.
    if (a.done() || (a.left() == 1 && (matches(a.peek(), "show") || matches(a.peek(), "lst") ||
                                       matches(a.peek(), "list"))))
      return ok();
    return die(1,
               "IPv6 tunnels are not implemented by ifc: ifcore has no ip6tnl, ip6gre or "
               "vti6 kind");
  }
  if (family != AF_UNSPEC && family != AF_INET)
    return die(255, "Unsupported protocol family: {}", family);
  if (a.done()) return tunnel_show(c, a);
  std::string w = a.take();
  if (matches(w, "add")) return tunnel_add(c, a, Cmd::Add);
  if (matches(w, "change")) return tunnel_add(c, a, Cmd::Change);
  if (matches(w, "delete")) return tunnel_del(c, a);
  if (matches(w, "show") || matches(w, "lst") || matches(w, "list")) return tunnel_show(c, a);
  if (matches(w, "prl") || matches(w, "6rd"))
    return die(
        1, "Command \"{}\" is for sit tunnels: ifcore has no sit kind, not implemented by ifc", w);
  if (matches(w, "help")) return die(255, "{}", kUsage);
  return die(255, "Command \"{}\" is unknown, try \"ip tunnel help\"", w);
}

}  // namespace ifcore::cli
