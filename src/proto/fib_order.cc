// proto/fib_order.cc — the order IPv6 lists its routes in (fib6's walk) and the source
// prefixes of IPv6 routes (CONFIG_IPV6_SUBTREES).
//
// Lock order: none (pure functions).
#include "proto/fib_impl.h"

namespace ifcore::proto::fib {

// ---------------------------------------------------------------- IPv6 walk order
// Linux keeps IPv6 routes in a radix tree (fib6) and lists them as fib6_walk visits it: at
// each prefix, first the routes with a source prefix (the node's source subtree, in the same
// order), then the longer prefixes below it (the 0 branch first), then its own routes by
// metric. The tables here are keyed by prefix in the tree's pre-order; these give the walk.

// True if prefix `p`/`plen` holds `a`/`alen` (the same prefix included).
bool covers(const IpAddr& p, int plen, const IpAddr& a, int alen) {
  return plen <= alen && prefix_of(a, plen) == p;
}

// The walk's order of two prefixes' own routes: the longer prefixes below a prefix come
// before it; others by their first different bit.
bool post_order_less(const IpAddr& a, int alen, const IpAddr& b, int blen) {
  if (alen == blen && a == b) return false;
  if (covers(a, alen, b, blen)) return false;
  if (covers(b, blen, a, alen)) return true;
  return a < b;
}

// Within one prefix's list: the routes with a source prefix (in the walk's order of their
// source prefixes, then by metric), then those without, by metric.
bool node_before(const RouteInfo& a, const RouteInfo& b) {
  if ((a.src_len > 0) != (b.src_len > 0)) return a.src_len > 0;
  if (a.src_len > 0 && (a.src_len != b.src_len || a.src != b.src))
    return post_order_less(a.src, a.src_len, b.src, b.src_len);
  return a.priority < b.priority;
}

// The order Linux lists two IPv6 routes of one table in (see above).
bool walk_before(const Route& a, const Route& b) {
  const RouteInfo &x = a.info, &y = b.info;
  if (x.dst_len == y.dst_len && x.dst == y.dst) {
    if (node_before(x, y)) return true;
    if (node_before(y, x)) return false;
    return a.seq < b.seq;
  }
  if (covers(x.dst, x.dst_len, y.dst, y.dst_len)) return x.src_len > 0;
  if (covers(y.dst, y.dst_len, x.dst, x.dst_len)) return y.src_len == 0;
  return x.dst < y.dst;
}

// Whether a flow from `src` (empty: ::) is one `r`'s source prefix takes.
bool from_prefix(const RouteInfo& r, const IpAddr& src) {
  if (!r.src_len) return true;
  const IpAddr from = src.empty() ? IpAddr::v6(std::array<std::uint8_t, 16>{}) : src;
  return from.family() == AF_INET6 && prefix_of(from, r.src_len) == r.src;
}

// The source prefix `req` gives an IPv6 route, masked (RTA_SRC absent: ::).
IpAddr source_of(const RouteRequest& req) {
  const IpAddr src = req.src.empty() ? IpAddr::v6(std::array<std::uint8_t, 16>{}) : req.src;
  return prefix_of(src, req.src_len);
}

void set_source(RouteInfo& i, const RouteRequest& req) {
  if (req.family != AF_INET6 || !req.src_len) return;
  i.src = source_of(req);
  i.src_len = req.src_len;
}

bool same_source(const RouteInfo& i, const RouteRequest& req) {
  return i.src_len == req.src_len && (!req.src_len || i.src == source_of(req));
}

}  // namespace ifcore::proto::fib
