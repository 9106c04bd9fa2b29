// cli/nexthop_cmd.cc — `ifc nexthop add|replace|delete|show|get|flush|bucket`:
// RTM_NEWNEXTHOP / RTM_DELNEXTHOP / RTM_GETNEXTHOP (and RTM_GETNEXTHOPBUCKET), with ip
// 6.1's words and errors; printed by nexthop_print.cc. The requests carry the attributes
// in the order of the words, as ip writes them.
#include <net/if.h>

#include <linux/lwtunnel.h>
#include <linux/mpls_iptunnel.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include <cstdio>
#include <utility>

#include "cli/commands.h"
#include "cli/nexthop_print.h"
#include "cli/vrf.h"

namespace ifcore::cli {
namespace {

// iproute2's usage of `ip nexthop` (the words and their grammar).
constexpr const char* kUsage =
    "Usage: ip nexthop { list | flush } [ protocol ID ] SELECTOR\n"
    "       ip nexthop { add | replace } id ID NH [ protocol ID ]\n"
    "       ip nexthop { get | del } id ID\n"
    "       ip nexthop bucket list BUCKET_SELECTOR\n"
    "       ip nexthop bucket get id ID index INDEX\n"
    "SELECTOR := [ id ID ] [ dev DEV ] [ vrf NAME ] [ master DEV ]\n"
    "            [ groups ] [ fdb ]\n"
    "BUCKET_SELECTOR := SELECTOR | [ nhid ID ]\n"
    "NH := { blackhole | [ via ADDRESS ] [ dev DEV ] [ onlink ]\n"
    "        [ encap ENCAPTYPE ENCAPHDR ] |\n"
    "        group GROUP [ fdb ] [ type TYPE [ TYPE_ARGS ] ] }\n"
    "GROUP := [ <id[,weight]>/<id[,weight]>/... ]\n"
    "TYPE := { mpath | resilient }\n"
    "TYPE_ARGS := [ RESILIENT_ARGS ]\n"
    "RESILIENT_ARGS := [ buckets BUCKETS ] [ idle_timer IDLE ]\n"
    "                  [ unbalanced_timer UNBALANCED ]\n"
    "ENCAPTYPE := [ mpls ]\n"
    "ENCAPHDR := [ MPLSLABEL ]";

tl::unexpected<Error> usage() {
  return die(255, "{}", kUsage);
}

Result<std::uint32_t> parse_id(const std::string& s) {
  auto n = parse_u32(s, "");
  if (!n) return invarg("invalid id value", s);
  return *n;
}

Result<void> finish(wire::MessageBuilder& b) {
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  return ok();
}

// `group ID[,WEIGHT]/...` (iproute2's add_nh_group_attr). ip cuts the word at the first
// '/' and ',' as it reads it, so its complaint names what was left of the first entry.
Result<std::vector<nexthop_grp>> parse_group(const std::string& s) {
  std::string first = s.substr(0, s.find_first_of("/,"));
  auto bad = [&]() { return invarg("\"group\" value is invalid\n", first); };
  if (s.empty()) return bad();
  std::vector<nexthop_grp> out;
  std::size_t pos = 0;
  for (;;) {
    std::size_t slash = s.find('/', pos);
    std::string entry = s.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    std::size_t comma = entry.find(',');
    nexthop_grp g{};
    auto id = parse_u32(entry.substr(0, comma), "");
    if (!id) return bad();
    g.id = *id;
    if (comma != std::string::npos) {
      std::string w = entry.substr(comma + 1);
      auto n = parse_u32(w, "");
      if (!n || *n == 0 || *n > 256) return invarg("\"weight\" is invalid\n", w);
      g.weight = std::uint8_t(*n - 1);
    }
    out.push_back(g);
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  return out;
}

// The address after `via` in `family` (iproute2's get_addr, which exits on a bad one):
// its family and bytes. AF_PACKET (`-0`, `via link`): an IPv4 address or a MAC, as
// ll_addr_a2n reads it.
Result<std::pair<int, std::vector<std::uint8_t>>> gateway_bytes(const std::string& s, int family) {
  auto bad = [&]() {
    return die_now(1, "Error: {} address is expected rather than \"{}\".",
                   family == AF_INET     ? "inet"
                   : family == AF_INET6  ? "inet6"
                   : family == AF_PACKET ? "link"
                                         : "any valid",
                   s);
  };
  if (family == AF_PACKET) {
    if (s.find('.') != std::string::npos) {
      auto ip = IpAddr::parse(s);
      if (!ip || ip->family() != AF_INET) {
        std::fprintf(stderr, "\"%s\" is invalid lladdr.\n", s.c_str());
        return bad();
      }
      auto b = ip->bytes();
      return std::pair{AF_PACKET, std::vector<std::uint8_t>(b.begin(), b.end())};
    }
    auto hw = HwAddr::parse(s);
    if (!hw) {
      std::fprintf(stderr, "\"%s\" is invalid lladdr.\n", s.c_str());
      return bad();
    }
    auto b = hw->bytes();
    return std::pair{AF_PACKET, std::vector<std::uint8_t>(b.begin(), b.end())};
  }
  auto ip = IpAddr::parse(s);
  if (!ip || (family && ip->family() != family)) return bad();
  auto b = ip->bytes();
  return std::pair{ip->family(), std::vector<std::uint8_t>(b.begin(), b.end())};
}

// `encap mpls LABEL[/LABEL...] [ttl TTL]` (iproute2's lwt_parse_encap): ip knows more
// types, and so names them here, but writes only mpls's header from these words.
Result<void> put_encap(wire::MessageBuilder& b, Args& a) {
  auto type = a.value();
  if (!type) return fail(type.error());
  static const std::pair<const char*, std::uint16_t> kTypes[] = {
      {"mpls", LWTUNNEL_ENCAP_MPLS},
      {"ip", LWTUNNEL_ENCAP_IP},
      {"ip6", LWTUNNEL_ENCAP_IP6},
      {"ila", LWTUNNEL_ENCAP_ILA},
      {"bpf", LWTUNNEL_ENCAP_BPF},
      {"seg6", LWTUNNEL_ENCAP_SEG6},
      {"seg6local", LWTUNNEL_ENCAP_SEG6_LOCAL},
      {"rpl", LWTUNNEL_ENCAP_RPL},
      {"ioam6", LWTUNNEL_ENCAP_IOAM6},
      {"xfrm", LWTUNNEL_ENCAP_XFRM}};
  std::uint16_t t = 0;
  for (auto [name, n] : kTypes)
    if (*type == name) t = n;
  if (!t) return invarg("\"encap type\" value is invalid\n", *type);
  auto hdr = a.value();
  if (!hdr) return fail(hdr.error());
  if (a.done()) return die(255, "Error: unexpected end of line after \"encap\"");
  if (t != LWTUNNEL_ENCAP_MPLS) return die(255, "Error: encap {} is not supported by ifc", *type);
  // MPLS labels: 20-bit values separated by '/', each in a 4-byte entry (label << 12, the
  // bottom of stack bit on the last).
  std::vector<std::uint8_t> labels;
  std::size_t pos = 0;
  for (;;) {
    std::size_t slash = hdr->find('/', pos);
    auto v = parse_u32(
        hdr->substr(pos, slash == std::string::npos ? std::string::npos : slash - pos), "");
    if (!v || *v >= (1u << 20))
      return die_now(1, "Error: mpls address is expected rather than \"{}\".", *hdr);
    std::uint32_t e = (*v << 12) | (slash == std::string::npos ? 0x100u : 0u);
    for (int shift = 24; shift >= 0; shift -= 8) labels.push_back(std::uint8_t(e >> shift));
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  std::size_t nest = b.begin_nest(NLA_F_NESTED | NHA_ENCAP);
  b.put_attr(MPLS_IPTUNNEL_DST, labels.data(), labels.size());
  bool ttl_given = false;
  while (!a.done() && a.peek() == "ttl") {
    a.take();
    auto v = a.value();
    if (!v) return fail(v.error());
    if (ttl_given) return duparg("ttl", *v);
    ttl_given = true;
    auto n = parse_u32(*v, "");
    if (!n || *n > 255) return invarg("\"ttl\" value is invalid\n", *v);
    b.put_u8(MPLS_IPTUNNEL_TTL, std::uint8_t(*n));
  }
  b.end_nest(nest);
  b.put_u16(NHA_ENCAP_TYPE, t);
  return ok();
}

// `type mpath|resilient [buckets N] [idle_timer S] [unbalanced_timer S]`
// (iproute2's parse_nh_group_type): the resilient words go into NHA_RES_GROUP, then
// NHA_GROUP_TYPE.
Result<void> put_group_type(wire::MessageBuilder& b, Args& a) {
  auto v = a.value();
  if (!v) return fail(v.error());
  std::uint16_t type = 0;
  if (*v == "mpath")
    type = NEXTHOP_GRP_TYPE_MPATH;
  else if (*v == "resilient")
    type = NEXTHOP_GRP_TYPE_RES;
  else
    return invarg("\"type\" value is invalid\n", *v);
  if (type == NEXTHOP_GRP_TYPE_RES && !a.done()) {
    std::size_t nest = b.begin_nest(NLA_F_NESTED | NHA_RES_GROUP);
    while (!a.done()) {
      const std::string& w = a.peek();
      if (w != "buckets" && w != "idle_timer" && w != "unbalanced_timer") break;
      std::string key = a.take();
      auto x = a.value();
      if (!x) return fail(x.error());
      auto n = parse_u32(*x, "");
      if (key == "buckets") {
        if (!n || *n > 0xffff) return invarg("invalid buckets value", *x);
        b.put_u16(NHA_RES_GROUP_BUCKETS, std::uint16_t(*n));
      } else {
        const bool idle = key == "idle_timer";
        if (!n || *n >= 0xffffffffu / 100)
          return invarg(idle ? "invalid idle timer value" : "invalid unbalanced timer value", *x);
        b.put_u32(idle ? NHA_RES_GROUP_IDLE_TIMER : NHA_RES_GROUP_UNBALANCED_TIMER, *n * 100);
      }
    }
    b.end_nest(nest);
  }
  b.put_u16(NHA_GROUP_TYPE, type);
  return ok();
}

// iproute2's ipnh_modify.
Result<void> nexthop_modify(Ctx& c, Args& a, std::uint16_t type, std::uint16_t flags) {
  wire::MessageBuilder b;
  b.begin({type, std::uint16_t(NLM_F_REQUEST | flags), c.client->next_seq(), 0});
  nhmsg hdr{};
  hdr.nh_family = std::uint8_t(c.family);
  b.put_struct(hdr);  // written again once the words are read
  std::uint32_t nh_flags = 0;
  while (!a.done()) {
    std::string w = a.take();
    if (w == "id") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto id = parse_id(*v);
      if (!id) return fail(id.error());
      b.put_u32(NHA_ID, *id);
    } else if (w == "dev") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto idx = c.client->ifindex(*v);
      if (!idx) return fail(idx.error());
      if (!*idx) return invarg("Device does not exist\n", *v);
      b.put_u32(NHA_OIF, std::uint32_t(*idx));
      if (hdr.nh_family == AF_UNSPEC) hdr.nh_family = AF_INET;
    } else if (w == "via") {
      auto v = a.value();
      if (!v) return fail(v.error());
      int family = hdr.nh_family;
      if (*v == "inet" || *v == "inet6" || *v == "link") {
        family = *v == "inet" ? AF_INET : *v == "inet6" ? AF_INET6 : AF_PACKET;
        v = a.value();
        if (!v) return fail(v.error());
      }
      auto gw = gateway_bytes(*v, family);
      if (!gw) return fail(gw.error());
      if (hdr.nh_family == AF_UNSPEC)
        hdr.nh_family = std::uint8_t(gw->first);
      else if (hdr.nh_family != gw->first)
        return invarg("address family mismatch\n", *v);
      b.put_attr(NHA_GATEWAY, gw->second.data(), gw->second.size());
    } else if (w == "encap") {
      IFCORE_TRY(put_encap(b, a));
    } else if (w == "blackhole") {
      b.put_flag(NHA_BLACKHOLE);
      if (hdr.nh_family == AF_UNSPEC) hdr.nh_family = AF_INET;
    } else if (w == "fdb") {
      b.put_flag(NHA_FDB);
    } else if (w == "onlink") {
      nh_flags |= RTNH_F_ONLINK;
    } else if (w == "group") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto g = parse_group(*v);
      if (!g) return fail(g.error());
      b.put_attr(NHA_GROUP, g->data(), g->size() * sizeof(nexthop_grp));
    } else if (w == "type") {
      IFCORE_TRY(put_group_type(b, a));
    } else if (matches(w, "protocol")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto p = rt_proto_number(*v);
      if (!p) return invarg("\"protocol\" value is invalid\n", *v);
      hdr.nh_protocol = *p;
    } else if (w == "help") {
      return usage();
    } else {
      return invarg("", w);
    }
  }
  hdr.nh_flags = nh_flags;
  b.patch(NLMSG_HDRLEN, &hdr, sizeof(hdr));
  IFCORE_TRY(finish(b));
  return c.client->talk(b);
}

// `nexthop get id ID` and `nexthop show id ID` (iproute2's ipnh_get_id).
Result<void> show_id(Ctx& c, std::uint32_t id) {
  int err = 0;
  std::string ext;
  auto got = get_nexthop(c, id, err, ext);
  if (!got) return fail(got.error());
  if (err) return die(2, "{}", rtnl_error_text(err, ext));
  c.out->open_array();
  if (*got) print_nexthop_line(c, **got, false);
  c.out->close();
  return ok();
}

Result<void> delete_id(Ctx& c, std::uint32_t id, int& err, std::string& ext) {
  wire::MessageBuilder b;
  b.begin({RTM_DELNEXTHOP, NLM_F_REQUEST, c.client->next_seq(), 0});
  nhmsg hdr{};
  b.put_struct(hdr);
  b.put_u32(NHA_ID, id);
  IFCORE_TRY(finish(b));
  return c.client->talk_raw(b, {}, err, ext);
}

struct NexthopFilter {
  int oif = 0, master = 0;
  bool groups = false, fdb = false;
  std::uint32_t proto = 0;
  std::uint32_t id = 0, nhid = 0;  // bucket list: the group's id, the member's
  unsigned flushed = 0;
};

// iproute2's filter of ipnexthop.c is one static struct that nothing resets: a selector
// word of show, flush or bucket list stays for the rest of a batch (and flush's count
// grows). ifc keeps the same one, so that a batch prints what ip's prints.
NexthopFilter& sticky_filter() {
  static NexthopFilter f;
  return f;
}

// The dump filter attributes (iproute2's nh_dump_filter).
void put_dump_filter(wire::MessageBuilder& b, const NexthopFilter& f) {
  if (f.oif) b.put_u32(NHA_OIF, std::uint32_t(f.oif));
  if (f.groups) b.put_flag(NHA_GROUPS);
  if (f.master) b.put_u32(NHA_MASTER, std::uint32_t(f.master));
  if (f.fdb) b.put_flag(NHA_FDB);
}

// A dump the target refused: ip has opened its JSON array by then, and leaves it so.
tl::unexpected<Error> dump_failed(Ctx& c, const Error& e) {
  if (c.json) {
    std::fputs("[", stdout);
    std::fflush(stdout);
  }
  return die(2, "{}\nDump terminated", e.message);
}

// A dump with the filters the target applies (NHA_OIF, NHA_GROUPS, NHA_MASTER, NHA_FDB);
// the protocol is tested here, as ip does.
Result<void> dump(Ctx& c, const NexthopFilter& f, const MsgFn& each) {
  wire::MessageBuilder b(1 << 16);
  b.begin({RTM_GETNEXTHOP, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
  nhmsg hdr{};
  hdr.nh_family = std::uint8_t(c.family);
  b.put_struct(hdr);
  put_dump_filter(b, f);
  IFCORE_TRY(finish(b));
  auto r = c.client->dump(b, [&](const wire::Message& m) {
    if (m.hdr.nlmsg_type == RTM_NEWNEXTHOP || m.hdr.nlmsg_type == RTM_DELNEXTHOP) each(m);
  });
  if (!r) return dump_failed(c, r.error());
  return ok();
}

// iproute2's ipnh_flush: delete what the dump finds, groups first when flushing all.
Result<void> flush(Ctx& c, NexthopFilter& f, bool all) {
  if (all) {
    f.groups = true;
    f.oif = f.master = 0;
  }
  for (;;) {
    std::vector<std::uint32_t> ids;
    IFCORE_TRY(dump(c, f, [&](const wire::Message& m) {
      auto n = wire::decode_nexthop(m);
      if (n && n->id && *n->id && !(f.proto && n->protocol != f.proto)) ids.push_back(*n->id);
    }));
    for (std::uint32_t id : ids) {
      int err = 0;
      std::string ext;
      IFCORE_TRY(delete_id(c, id, err, ext));
      if (err)
        std::fprintf(stderr, "%s\n", rtnl_error_text(err, ext).c_str());
      else
        ++f.flushed;
    }
    if (!(all && f.groups)) break;
    f.groups = false;
  }
  Out text(false, false);
  text.text(f.flushed ? fmt::format("Flushed {} nexthops\n", f.flushed) : "Nothing to flush\n");
  text.flush();
  return ok();
}

// The selector words of show, flush and bucket list. `id` ends the words (and, for show
// and flush, the command: the caller acts on that one id).
Result<std::optional<std::uint32_t>> parse_selector(Ctx& c, Args& a, NexthopFilter& f,
                                                    bool bucket) {
  while (!a.done()) {
    std::string w = a.take();
    if (matches(w, "dev") || matches(w, "master")) {
      const bool dev = matches(w, "dev");
      auto v = a.value();
      if (!v) return fail(v.error());
      auto idx = c.client->ifindex(*v);
      if (!idx) return fail(idx.error());
      if (!*idx) return invarg("Device does not exist\n", *v);
      (dev ? f.oif : f.master) = *idx;
    } else if (!bucket && matches(w, "groups")) {
      f.groups = true;
    } else if (matches(w, "vrf")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto is_vrf = name_is_vrf(c, *v);
      if (!is_vrf) return fail(is_vrf.error());
      if (!*is_vrf) return invarg("Invalid VRF\n", *v);
      auto idx = c.client->ifindex(*v);
      if (!idx) return fail(idx.error());
      if (!*idx) return invarg("VRF does not exist\n", *v);
      f.master = *idx;
    } else if (w == "id") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto id = parse_id(*v);
      if (!id) return fail(id.error());
      if (!bucket) return std::optional<std::uint32_t>(*id);
      f.id = *id;
    } else if (bucket && w == "nhid") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto id = parse_id(*v);
      if (!id) return fail(id.error());
      f.nhid = *id;
    } else if (!bucket && matches(w, "protocol")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto p = parse_u32(*v, "");
      if (!p) return invarg("invalid protocol value", *v);
      f.proto = *p;
    } else if (!bucket && matches(w, "fdb")) {
      f.fdb = true;
    } else if (matches(w, "help")) {
      return usage();
    } else {
      return invarg("", w);
    }
  }
  return std::optional<std::uint32_t>();
}

Result<void> list_or_flush(Ctx& c, Args& a, bool flush_them) {
  const bool all = a.done();
  NexthopFilter& f = sticky_filter();
  auto id = parse_selector(c, a, f, false);
  if (!id) return fail(id.error());
  if (*id) {
    if (!flush_them) return show_id(c, **id);
    int err = 0;
    std::string ext;
    IFCORE_TRY(delete_id(c, **id, err, ext));
    if (err) return die(1, "{}", rtnl_error_text(err, ext));
    return ok();
  }
  if (flush_them) return flush(c, f, all);
  std::vector<std::pair<wire::NexthopMessage, bool>> shown;  // and whether deleted
  IFCORE_TRY(dump(c, f, [&](const wire::Message& m) {
    auto n = wire::decode_nexthop(m);
    if (n && !(f.proto && n->protocol != f.proto))
      shown.emplace_back(*n, m.hdr.nlmsg_type == RTM_DELNEXTHOP);
  }));
  c.out->open_array();
  for (const auto& [n, deleted] : shown) print_nexthop_line(c, n, deleted);
  c.out->close();
  return ok();
}

Result<void> nexthop_get(Ctx& c, Args& a) {
  std::uint32_t id = 0;
  while (!a.done()) {
    std::string w = a.take();
    if (w != "id") return usage();
    auto v = a.value();
    if (!v) return fail(v.error());
    auto n = parse_id(*v);
    if (!n) return fail(n.error());
    id = *n;
  }
  if (!id) return usage();
  return show_id(c, id);
}

// `nexthop bucket list|get` (RTM_GETNEXTHOPBUCKET): the buckets of resilient groups.
Result<void> nexthop_bucket(Ctx& c, Args& a) {
  std::string cmd = a.done() ? "list" : a.take();
  wire::MessageBuilder b(1 << 16);
  nhmsg hdr{};
  hdr.nh_family = std::uint8_t(c.family);
  if (matches(cmd, "list") || matches(cmd, "show") || matches(cmd, "lst")) {
    NexthopFilter& f = sticky_filter();
    auto id = parse_selector(c, a, f, true);
    if (!id) return fail(id.error());
    b.begin({RTM_GETNEXTHOPBUCKET, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
    b.put_struct(hdr);
    put_dump_filter(b, f);
    if (f.id) b.put_u32(NHA_ID, f.id);
    if (f.nhid) {
      std::size_t nest = b.begin_nest(NLA_F_NESTED | NHA_RES_BUCKET);
      b.put_u32(NHA_RES_BUCKET_NH_ID, f.nhid);
      b.end_nest(nest);
    }
    IFCORE_TRY(finish(b));
    std::vector<std::vector<std::uint8_t>> buckets;
    auto r = c.client->dump(b, [&](const wire::Message& m) {
      if (m.hdr.nlmsg_type == RTM_NEWNEXTHOPBUCKET)
        buckets.emplace_back(m.bytes.begin(), m.bytes.end());
    });
    if (!r) return dump_failed(c, r.error());
    c.out->open_array();
    for (const auto& bytes : buckets)
      if (auto m = wire::only_message(bytes)) print_nexthop_bucket(c, *m);
    c.out->close();
    return ok();
  }
  if (matches(cmd, "get")) {
    std::uint32_t id = 0;
    std::optional<std::uint16_t> index;
    while (!a.done()) {
      std::string w = a.take();
      auto v = w == "id" || w == "index" ? a.value() : Result<std::string>(usage());
      if (!v) return fail(v.error());
      if (w == "id") {
        auto n = parse_id(*v);
        if (!n) return fail(n.error());
        id = *n;
      } else {
        auto n = parse_u32(*v, "");
        if (!n || *n > 0xffff) return invarg("invalid bucket index value", *v);
        index = std::uint16_t(*n);
      }
    }
    if (!id || !index) return usage();
    b.begin({RTM_GETNEXTHOPBUCKET, NLM_F_REQUEST, c.client->next_seq(), 0});
    b.put_struct(hdr);
    b.put_u32(NHA_ID, id);
    std::size_t nest = b.begin_nest(NLA_F_NESTED | NHA_RES_BUCKET);
    b.put_u16(NHA_RES_BUCKET_INDEX, *index);
    b.end_nest(nest);
    IFCORE_TRY(finish(b));
    std::vector<std::uint8_t> answer;
    IFCORE_TRY(c.client->talk(b, [&](const wire::Message& m) {
      if (m.hdr.nlmsg_type == RTM_NEWNEXTHOPBUCKET) answer.assign(m.bytes.begin(), m.bytes.end());
    }));
    // ip opens its JSON array once the answer is in.
    c.out->open_array();
    if (auto m = wire::only_message(answer)) print_nexthop_bucket(c, *m);
    c.out->close();
    return ok();
  }
  if (matches(cmd, "help")) return usage();
  return die(255, "Command \"{}\" is unknown, try \"ip nexthop help\".", cmd);
}

}  // namespace

Result<void> do_nexthop(Ctx& c, Args& a) {
  if (a.done()) return list_or_flush(c, a, false);
  std::string cmd = a.take();
  if (matches(cmd, "add")) return nexthop_modify(c, a, RTM_NEWNEXTHOP, NLM_F_CREATE | NLM_F_EXCL);
  if (matches(cmd, "replace"))
    return nexthop_modify(c, a, RTM_NEWNEXTHOP, NLM_F_CREATE | NLM_F_REPLACE);
  if (matches(cmd, "delete")) return nexthop_modify(c, a, RTM_DELNEXTHOP, 0);
  if (matches(cmd, "list") || matches(cmd, "show") || matches(cmd, "lst"))
    return list_or_flush(c, a, false);
  if (matches(cmd, "get")) return nexthop_get(c, a);
  if (matches(cmd, "flush")) return list_or_flush(c, a, true);
  if (matches(cmd, "bucket")) return nexthop_bucket(c, a);
  if (matches(cmd, "help")) return usage();
  return die(255, "Command \"{}\" is unknown, try \"ip nexthop help\".", cmd);
}

}  // namespace ifcore::cli
