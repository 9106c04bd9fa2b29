// cli/nexthop_print.cc — a nexthop as `ip nexthop`, `ip monitor` and `ip -d route`'s
// nh_info print it, and a resilient group's bucket (iproute2's __print_nexthop_entry,
// print_nexthop_bucket, print_cache_nexthop_id and its cache).
#include "cli/nexthop_print.h"

#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "cli/commands.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::cli {
namespace {

// A time in clock ticks (USER_HZ, 100 a second) as iproute2 prints it: seconds with %g.
std::string ticks_text(std::uint64_t ticks) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", double(ticks) / 100.0);
  return buf;
}

// The nexthops `ip -d route` has looked up, kept for the life of the command (a batch's
// too) and brought up to date by monitor's notifications (iproute2's nh_cache).
std::map<std::uint32_t, wire::NexthopMessage>& nh_cache() {
  static std::map<std::uint32_t, wire::NexthopMessage> cache;
  return cache;
}

}  // namespace

// iproute2's __print_nexthop_entry: one nexthop without its newline.
void print_nexthop_entry(Ctx& c, const wire::NexthopMessage& n, bool deleted,
                         std::string_view key) {
  Out& o = *c.out;
  o.open_object(key);
  if (deleted) o.kv("deleted", true, "Deleted ");
  std::uint32_t id = n.id.value_or(0);
  o.kv("id", id, fmt::format("id {} ", id));
  if (n.group && !n.group_bad_length) {
    o.open_array("group");
    o.text("group ");
    for (std::size_t i = 0; i < n.group->size(); ++i) {
      const nexthop_grp& g = (*n.group)[i];
      o.open_object();
      if (i) o.text("/");
      o.kv("id", g.id, std::to_string(g.id));
      // ip 6.1 reads the low byte of weight - 1 only.
      if (g.weight) o.kv("weight", g.weight + 1, fmt::format(",{}", g.weight + 1));
      o.close();
    }
    o.text(" ");
    o.close();
  }
  std::uint16_t type = n.group_type.value_or(NEXTHOP_GRP_TYPE_MPATH);
  if (type != NEXTHOP_GRP_TYPE_MPATH) {
    const char* name = type == NEXTHOP_GRP_TYPE_RES ? "resilient" : "<unknown type>";
    o.kv("type", name, fmt::format("type {} ", name));
  }
  if (n.res_group) {
    const wire::NexthopResGroup& r = *n.res_group;
    o.open_object("resilient_args");
    o.kv("buckets", r.buckets.value_or(0), fmt::format("buckets {} ", r.buckets.value_or(0)));
    auto timer = [&](const char* name, std::uint64_t ticks) {
      std::string t = ticks_text(ticks);
      o.kv(name, Out::raw_number(t), fmt::format("{} {} ", name, t));
    };
    timer("idle_timer", r.idle_timer.value_or(0));
    timer("unbalanced_timer", r.unbalanced_timer.value_or(0));
    timer("unbalanced_time", r.unbalanced_time.value_or(0));
    o.close();
  }
  if (n.gateway) o.kv("gateway", n.gateway->to_string(), "via " + n.gateway->to_string() + " ");
  if (n.oif) {
    std::string dev = c.client->ifname(int(*n.oif));
    o.kv("dev", dev, "dev " + dev + " ");
  }
  if (n.scope != RT_SCOPE_UNIVERSE || c.details) {
    std::string s = rt_scope_name(n.scope);
    o.kv("scope", s, "scope " + s + " ");
  }
  if (n.blackhole) o.kv("blackhole", nullptr, "blackhole ");
  if (n.protocol != RTPROT_UNSPEC || c.details) {
    std::string p = rt_proto_name(n.protocol);
    o.kv("protocol", p, "proto " + p + " ");
  }
  print_rt_flags(o, n.flags);
  if (n.fdb) o.kv("fdb", nullptr, "fdb");
  o.close();
}

// iproute2's print_cache_nexthop: the entry and its line end.
void print_nexthop_line(Ctx& c, const wire::NexthopMessage& n, bool deleted) {
  print_nexthop_entry(c, n, deleted);
  c.out->text("\n");
  c.out->flush();
}

// RTM_GETNEXTHOP for one id (iproute2's __ipnh_get_id); nothing when the target refuses
// (`err` and `ext` say why).
Result<std::optional<wire::NexthopMessage>> get_nexthop(Ctx& c, std::uint32_t id, int& err,
                                                        std::string& ext) {
  wire::MessageBuilder b;
  b.begin({RTM_GETNEXTHOP, NLM_F_REQUEST, c.client->next_seq(), 0});
  nhmsg hdr{};
  hdr.nh_family = std::uint8_t(c.family);
  b.put_struct(hdr);
  b.put_u32(NHA_ID, id);
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  std::optional<wire::NexthopMessage> got;
  IFCORE_TRY(c.client->talk_raw(
      b,
      [&](const wire::Message& m) {
        if (m.hdr.nlmsg_type != RTM_NEWNEXTHOP || got) return;
        if (auto n = wire::decode_nexthop(m)) got = *n;
      },
      err, ext));
  return got;
}

// iproute2's print_nexthop_bucket.
void print_nexthop_bucket(Ctx& c, const wire::Message& m) {
  auto p = m.payload();
  if (p.size() < sizeof(nhmsg)) return;
  nhmsg hdr;
  std::memcpy(&hdr, p.data(), sizeof(hdr));
  auto attrs = wire::parse_raw_attrs(p.subspan(NLMSG_ALIGN(sizeof(nhmsg))),
                                     int(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nhmsg))));
  if (!attrs) return;
  Out& o = *c.out;
  o.open_object();
  if (const auto* x = wire::find_raw(*attrs, NHA_ID))
    if (auto id = x->u32()) o.kv("id", *id, fmt::format("id {} ", *id));
  if (const auto* x = wire::find_raw(*attrs, NHA_RES_BUCKET)) {
    auto in = wire::parse_raw_attrs(x->data, x->offset + NLA_HDRLEN);
    if (in) {
      o.open_object("bucket");
      if (const auto* y = wire::find_raw(*in, NHA_RES_BUCKET_INDEX))
        if (auto v = y->u16()) o.kv("index", *v, fmt::format("index {} ", *v));
      if (const auto* y = wire::find_raw(*in, NHA_RES_BUCKET_IDLE_TIME))
        if (auto v = y->u64()) {
          std::string t = ticks_text(*v);
          o.kv("idle_time", Out::raw_number(t), fmt::format("idle_time {} ", t));
        }
      if (const auto* y = wire::find_raw(*in, NHA_RES_BUCKET_NH_ID))
        if (auto v = y->u32()) o.kv("nhid", *v, fmt::format("nhid {} ", *v));
      o.close();
    }
  }
  print_rt_flags(o, hdr.nh_flags);
  o.text("\n");
  o.close();
  o.flush();
}

void print_nexthop_event(Ctx& c, const wire::Message& m) {
  auto n = wire::decode_nexthop(m);
  if (!n) return;
  print_nexthop_line(c, *n, m.hdr.nlmsg_type == RTM_DELNEXTHOP);
  // iproute2's ipnh_cache_process_nlmsg.
  if (n->id) {
    if (m.hdr.nlmsg_type == RTM_DELNEXTHOP)
      nh_cache().erase(*n->id);
    else
      nh_cache()[*n->id] = *n;
  }
}

void print_nh_info(Ctx& c, std::uint32_t id) {
  auto it = nh_cache().find(id);
  if (it == nh_cache().end()) {
    int err = 0;
    std::string ext;
    auto got = get_nexthop(c, id, err, ext);
    if (got && err) std::fprintf(stderr, "%s\n", rtnl_error_text(err, ext).c_str());
    if (!got || !*got) return;
    it = nh_cache().emplace(id, **got).first;
  }
  c.out->text(std::string(1, kHardNewline) + "\tnh_info ");
  print_nexthop_entry(c, it->second, false, "nh_info");
}

}  // namespace ifcore::cli
