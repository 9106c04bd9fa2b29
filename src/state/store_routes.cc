// state/store_routes.cc — routes in the state store. Routes that share a key (table,
// destination, source, tos, metric) keep their order: IPv4's aliases as the requests'
// NLM_F_* flags placed them (append after the last, create and prepend before the first,
// replace in the first's place), IPv6's siblings (the hops of one multipath route) in the
// order they joined. A row is one IPv4 alias or one IPv6 hop, keyed by the shared key and
// what tells it from the others; `pos` is its place among them. The replay sends each
// key's routes in that order, an IPv6 route's siblings as one multipath request.
#include "state/store_impl.h"

namespace ifcore::state::detail {

namespace {

// What tells a row from the others of its key (the first byte of its identity).
constexpr std::uint8_t kAlias = 'a';      // IPv4: the whole route
constexpr std::uint8_t kGateway = 'g';    // IPv6: a hop with a gateway (a sibling)
constexpr std::uint8_t kDevice = 'd';     // IPv6: a route without a gateway
constexpr std::uint8_t kNexthopId = 'n';  // IPv6: a route through a nexthop object

struct Hop {
  rtnexthop nh{};
  View attrs;  // its nested attributes (RTA_GATEWAY, RTA_VIA, RTA_ENCAP...)
};

std::vector<Hop> hops_of(View mp) {
  std::vector<Hop> out;
  std::size_t off = 0;
  while (off + sizeof(rtnexthop) <= mp.size()) {
    Hop h;
    std::memcpy(&h.nh, mp.data() + off, sizeof(rtnexthop));
    if (h.nh.rtnh_len < sizeof(rtnexthop) || off + h.nh.rtnh_len > mp.size()) break;
    h.attrs = mp.subspan(off + RTNH_ALIGN(sizeof(rtnexthop)),
                         h.nh.rtnh_len - RTNH_ALIGN(sizeof(rtnexthop)));
    out.push_back(h);
    off += RTNH_ALIGN(h.nh.rtnh_len);
  }
  return out;
}

void put_hop(Bytes& b, const Hop& h) {
  rtnexthop nh = h.nh;
  nh.rtnh_flags &= RTNH_F_ONLINK;  // dead and linkdown are the link's state
  nh.rtnh_len = static_cast<unsigned short>(RTNH_ALIGN(sizeof(rtnexthop)) + h.attrs.size());
  put_raw(b, &nh, sizeof(nh));
  b.resize(b.size() - sizeof(nh) + RTNH_ALIGN(sizeof(nh)), 0);
  b.insert(b.end(), h.attrs.begin(), h.attrs.end());
}

// The route's hops: those of RTA_MULTIPATH, or its one gateway and device.
std::vector<Bytes> hop_bytes(const rtmsg& rt, const std::vector<RawAttr>& as) {
  std::vector<Bytes> out;
  if (const RawAttr* mp = find(as, RTA_MULTIPATH)) {
    for (const Hop& h : hops_of(mp->data)) put_hop(out.emplace_back(), h);
    return out;
  }
  Bytes attrs;
  if (const RawAttr* gw = find(as, RTA_GATEWAY)) put_attr(attrs, RTA_GATEWAY, gw->data);
  Hop h;
  h.nh.rtnh_flags = static_cast<unsigned char>(rt.rtm_flags & RTNH_F_ONLINK);
  h.nh.rtnh_ifindex = static_cast<int>(u32_of(as, RTA_OIF).value_or(0));
  h.attrs = attrs;
  put_hop(out.emplace_back(), h);
  return out;
}

// The route's header and attributes without its next hops.
Bytes without_hops(View kept) {
  Bytes b = filtered(kept, sizeof(rtmsg), {RTA_MULTIPATH, RTA_GATEWAY, RTA_OIF});
  rtmsg rt;
  std::memcpy(&rt, b.data(), sizeof(rt));
  rt.rtm_flags &= RTNH_F_ONLINK;
  std::memcpy(b.data(), &rt, sizeof(rt));
  return b;
}

// A route's body with these hops: one as its gateway and device, more as RTA_MULTIPATH.
Bytes with_hops(View kept, const std::vector<Bytes>& hops) {
  Bytes b = without_hops(kept);
  std::size_t mp = begin_nest(b, RTA_MULTIPATH);
  for (const Bytes& h : hops) b.insert(b.end(), h.begin(), h.end());
  end_nest(b, mp);
  return b;
}

Bytes kept_route(View body, const std::vector<RawAttr>& as) {
  // A route through a nexthop object is reported with that nexthop's gateway and device,
  // which a request may not give beside the id.
  Bytes b =
      find(as, RTA_NH_ID)
          ? filtered(body, sizeof(rtmsg),
                     {RTA_CACHEINFO, RTA_EXPIRES, RTA_OIF, RTA_GATEWAY, RTA_MULTIPATH, RTA_VIA})
          : filtered(body, sizeof(rtmsg), {RTA_CACHEINFO, RTA_EXPIRES});
  rtmsg rt;
  std::memcpy(&rt, b.data(), sizeof(rt));
  rt.rtm_flags &= RTNH_F_ONLINK;
  std::memcpy(b.data(), &rt, sizeof(rt));
  if (const RawAttr* mp = find(as, RTA_MULTIPATH); mp && !find(as, RTA_NH_ID))
    b = with_hops(b, hop_bytes(rt, as));
  return b;
}

}  // namespace

Bytes route_base(View body) {
  Bytes k;
  auto rt = header_of<rtmsg>(body);
  auto as = attrs_of(body.subspan(std::min(body.size(), NLMSG_ALIGN(sizeof(rtmsg)))));
  std::uint32_t table = u32_of(as, RTA_TABLE).value_or(rt.rtm_table);
  key_add(k, &rt.rtm_family, 1);
  key_add(k, &table, 4);
  key_add(k, &rt.rtm_dst_len, 1);
  key_attr(k, as, RTA_DST);
  key_add(k, &rt.rtm_src_len, 1);
  key_attr(k, as, RTA_SRC);
  key_add(k, &rt.rtm_tos, 1);
  key_attr(k, as, RTA_PRIORITY);
  return k;
}

RouteRows route_rows(const nlmsghdr& h, View body) {
  RouteRows out;
  auto rt = header_of<rtmsg>(body);
  auto as = attrs_of(body.subspan(std::min(body.size(), NLMSG_ALIGN(sizeof(rtmsg)))));
  out.del = h.nlmsg_type == RTM_DELROUTE;
  out.replace = h.nlmsg_flags & NLM_F_REPLACE;
  out.append = h.nlmsg_flags & NLM_F_APPEND;
  // What the engine makes by itself (local, connected, link-local and multicast routes)
  // it makes again; cache entries are not configuration.
  if (rt.rtm_protocol == RTPROT_KERNEL || (rt.rtm_flags & RTM_F_CLONED)) return out;
  out.base = route_base(body);
  const RawAttr* dst = find(as, RTA_DST);
  std::string summary =
      fmt::format("{}/{} table {}", dst ? addr_text(rt.rtm_family, dst->data) : "default",
                  rt.rtm_dst_len, u32_of(as, RTA_TABLE).value_or(rt.rtm_table));
  Bytes kept = kept_route(body, as);
  auto item = [&](std::uint8_t kind, View id, int dev, Bytes b) {
    RouteRow r;
    r.summary = summary;
    auto hop = attrs_of(View(b).subspan(std::min(b.size(), NLMSG_ALIGN(sizeof(rtmsg)))));
    if (const RawAttr* gw = find(hop, RTA_GATEWAY))
      r.summary += " via " + addr_text(rt.rtm_family, gw->data);
    r.key = out.base;
    r.key.push_back(kind);
    r.key.insert(r.key.end(), id.begin(), id.end());
    r.dev = dev;
    r.body = std::move(b);
    out.rows.push_back(std::move(r));
  };
  const int oif = static_cast<int>(u32_of(as, RTA_OIF).value_or(0));
  if (rt.rtm_family != AF_INET6 || find(as, RTA_NH_ID)) {
    std::uint8_t kind = rt.rtm_family == AF_INET6 ? kNexthopId : kAlias;
    item(kind, kept, oif, kept);
    return out;
  }
  // IPv6: one row per sibling.
  for (const Bytes& hop : hop_bytes(rt, as)) {
    rtnexthop nh;
    std::memcpy(&nh, hop.data(), sizeof(nh));
    auto attrs = attrs_of(View(hop).subspan(RTNH_ALIGN(sizeof(rtnexthop))));
    const RawAttr* gw = find(attrs, RTA_GATEWAY);
    Bytes id;
    key_add(id, &nh.rtnh_ifindex, sizeof(nh.rtnh_ifindex));
    if (gw) key_add(id, gw->data.data(), gw->data.size());
    item(gw && rt.rtm_type == RTN_UNICAST ? kGateway : kDevice, id, nh.rtnh_ifindex,
         with_hops(kept, {hop}));
  }
  return out;
}

bool route_sibling(View key, std::size_t base_len) {
  // (kGateway rows are IPv6's only.)
  return key.size() > base_len && key[base_len] == kGateway;
}

std::vector<RouteReplay> route_replays(const std::vector<ObjRow>& rows) {
  // Each key's routes go together, when the last of them changed (after everything
  // any of them needs), in their order.
  struct Group {
    std::vector<const ObjRow*> rows;
    std::int64_t last = 0;
  };
  std::map<std::pair<std::string, Bytes>, Group> groups;
  for (const ObjRow& r : rows) {
    if (r.type != "route") continue;
    Group& g = groups[{r.ns, route_base(r.msg)}];
    g.rows.push_back(&r);
    g.last = std::max(g.last, r.seq);
  }
  std::vector<std::pair<std::int64_t, Group*>> order;
  for (auto& [k, g] : groups) {
    std::stable_sort(g.rows.begin(), g.rows.end(),
                     [](const ObjRow* a, const ObjRow* b) { return a->pos < b->pos; });
    order.emplace_back(g.last, &g);
  }
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<RouteReplay> out;
  for (auto& [last, g] : order) {
    const std::size_t base_len = route_base(g->rows.front()->msg).size();
    for (std::size_t i = 0; i < g->rows.size();) {
      RouteReplay q;
      // The first replaces what the engine made with the key (a kernel route the user
      // replaced); the others go after it.
      q.flags = NLM_F_CREATE | (i == 0 ? NLM_F_REPLACE : NLM_F_APPEND);
      q.rows.push_back(g->rows[i]);
      std::size_t j = i + 1;
      // Siblings go together while they say the same besides their hop (their metrics:
      // each request's are its siblings').
      const Bytes same = without_hops(g->rows[i]->msg);
      if (route_sibling(g->rows[i]->key, base_len))
        while (j < g->rows.size() && route_sibling(g->rows[j]->key, base_len) &&
               without_hops(g->rows[j]->msg) == same)
          q.rows.push_back(g->rows[j++]);
      if (q.rows.size() == 1) {
        q.body = q.rows.front()->msg;
      } else {
        std::vector<Bytes> hops;
        for (const ObjRow* r : q.rows) {
          auto as = attrs_of(View(r->msg).subspan(NLMSG_ALIGN(sizeof(rtmsg))));
          auto one = hop_bytes(header_of<rtmsg>(r->msg), as);
          hops.insert(hops.end(), one.begin(), one.end());
        }
        q.body = with_hops(q.rows.front()->msg, hops);
      }
      out.push_back(std::move(q));
      i = j;
    }
  }
  return out;
}

}  // namespace ifcore::state::detail

namespace ifcore::state {

using namespace detail;

Result<void> Store::apply_route(const std::string& ns, const nlmsghdr& h, View body) {
  RouteRows rr = route_rows(h, body);
  if (rr.rows.empty()) return ok();
  auto erase = [&](View key) -> Result<void> {
    if (Stmt(erase_).text(1, ns).text(2, "route").blob(3, key).step() != SQLITE_DONE)
      return fail(sql_error(db_, "state file: write"));
    return ok();
  };
  if (rr.del) {
    for (const RouteRow& r : rr.rows) IFCORE_TRY(erase(r.key));
    return ok();
  }
  // The rows of the key, in their order (keys that start with the key's bytes).
  struct Member {
    Bytes key;
    std::int64_t pos;
  };
  std::vector<Member> group;
  Bytes hi = rr.base;
  while (!hi.empty() && hi.back() == 0xff) hi.pop_back();
  if (!hi.empty()) ++hi.back();
  {
    Stmt q(route_group_);
    q.text(1, ns).blob(2, rr.base).blob(3, hi);
    int rc;
    while ((rc = q.step()) == SQLITE_ROW) {
      View k = column_blob(q.s, 0);
      group.push_back({Bytes(k.begin(), k.end()), sqlite3_column_int64(q.s, 1)});
    }
    if (rc != SQLITE_DONE) return fail(sql_error(db_, "state file: read"));
  }
  auto has = [&](const Bytes& k) {
    return std::any_of(group.begin(), group.end(), [&](const Member& m) { return m.key == k; });
  };
  auto write = [&](const RouteRow& r, std::int64_t pos) -> Result<void> {
    int rc = Stmt(upsert_)
                 .text(1, ns)
                 .text(2, "route")
                 .blob(3, r.key)
                 .i64(4, r.dev)
                 .i64(5, ++seq_)
                 .opt(6, std::nullopt)
                 .opt(7, std::nullopt)
                 .text(8, r.summary)
                 .blob(9, r.body)
                 .i64(10, pos)
                 .step();
    if (rc != SQLITE_DONE) return fail(sql_error(db_, "state file: write"));
    return ok();
  };
  const std::int64_t first = group.empty() ? 0 : group.front().pos;
  const std::int64_t last = group.empty() ? 0 : group.back().pos;
  const bool v6 = rr.base.size() > 1 && rr.base[1] == AF_INET6;
  std::int64_t pos = v6 || rr.append ? last + 1 : first - 1;
  if (group.empty()) pos = 0;
  // A route announced again (a nexthop replaced, a hop's state) keeps its place.
  if (std::all_of(rr.rows.begin(), rr.rows.end(), [&](const RouteRow& r) { return has(r.key); }))
    rr.replace = false;
  if (rr.replace && !group.empty()) {
    // Linux replaces the first route of the key (IPv4), or the first of the new one's kind
    // (IPv6: a route with siblings, all of them, or one without), in its place.
    const std::size_t base_len = rr.base.size();
    const bool sibling = route_sibling(rr.rows.front().key, base_len);
    std::vector<const Member*> gone;
    for (const Member& m : group)
      if (v6 && route_sibling(m.key, base_len) == sibling && (sibling || gone.empty()))
        gone.push_back(&m);
    if (gone.empty()) gone.push_back(&group.front());
    pos = gone.front()->pos;
    for (const Member* m : gone) IFCORE_TRY(erase(m->key));
  }
  // A row already kept stays as it is: a sibling that joins is announced with the route's
  // other hops but its own metrics (rt6_fill_node of the new sibling).
  for (const RouteRow& r : rr.rows)
    if (!has(r.key)) IFCORE_TRY(write(r, pos++));
  return ok();
}

}  // namespace ifcore::state
