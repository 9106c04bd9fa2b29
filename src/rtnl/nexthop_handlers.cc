// rtnl/nexthop_handlers.cc — nexthop objects: RTM_NEWNEXTHOP / RTM_DELNEXTHOP /
// RTM_GETNEXTHOP (get and dump) on top of ifcore/nexthop.h, and RTNLGRP_NEXTHOP
// notifications (Linux: rtm_new_nexthop with rtm_to_nh_config, rtm_del_nexthop,
// rtm_get_nexthop, rtm_dump_nexthop, nh_fill_node).
//
// Lock order: each handler takes the control lock once.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <climits>

#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/proto.h"
#include "rtnl/wire/nexthop.h"

namespace ifcore::rtnl {

namespace {

// Linux: nh_fill_node.
wire::NexthopMessage nexthop_message(const inet::NexthopInfo& n) {
  wire::NexthopMessage m;
  m.family = static_cast<std::uint8_t>(n.family);
  m.scope = n.scope;
  m.protocol = n.protocol;
  m.flags = n.flags;
  m.id = n.id;
  m.fdb = n.fdb;
  if (n.is_group()) {
    std::vector<nexthop_grp> g;
    for (const inet::NexthopMember& x : n.group) {
      nexthop_grp e{};
      e.id = x.id;
      // weight - 1 in 16 bits: the low byte in `weight`, the high one after it (Linux 6.12
      // named that byte weight_high).
      std::uint16_t w = static_cast<std::uint16_t>(x.weight - 1);
      e.weight = static_cast<std::uint8_t>(w & 0xff);
      e.resvd1 = static_cast<std::uint8_t>(w >> 8);
      g.push_back(e);
    }
    m.group = std::move(g);
    m.group_type = n.group_type;
    if (n.group_type == NEXTHOP_GRP_TYPE_RES) {
      wire::NexthopResGroup r;
      r.buckets = n.resilient.buckets;
      r.idle_timer = n.resilient.idle_timer;
      r.unbalanced_timer = n.resilient.unbalanced_timer;
      r.unbalanced_time = n.resilient.unbalanced_time;
      m.res_group = r;
    }
    m.op_flags = wire::kNhaOpFlagRespGrpResvd0;
    m.family = AF_UNSPEC;
    m.scope = 0;
    return m;
  }
  if (n.blackhole) {
    m.blackhole = true;
    m.scope = 0;
    return m;
  }
  if (!n.fdb && n.oif) m.oif = static_cast<std::uint32_t>(n.oif);
  if (!n.gateway.empty()) m.gateway = n.gateway;
  return m;
}

// Linux: rtm_to_nh_config — the header and the attributes' combinations, before anything
// is looked up (what needs the namespace is add_nexthop's).
Result<inet::NexthopRequest> nexthop_request(const wire::NexthopMessage& m, std::uint16_t flags) {
  if (m.resvd || m.scope) return fail(EINVAL, "Invalid values in ancillary header");
  if (m.flags & ~std::uint32_t{RTNH_F_ONLINK})
    return fail(EINVAL, "Invalid nexthop flags in ancillary header");
  if (m.family != AF_INET && m.family != AF_INET6 && !(m.family == AF_UNSPEC && m.group))
    return fail(EINVAL, "Invalid address family");
  inet::NexthopRequest q;
  q.id = m.id.value_or(0);
  q.family = m.family;
  q.protocol = m.protocol;
  q.flags = m.flags;
  q.create = flags & NLM_F_CREATE;
  q.replace = flags & NLM_F_REPLACE;
  if (m.fdb) {
    if (m.oif || m.blackhole || m.encap || m.encap_type)
      return fail(EINVAL, "Fdb attribute can not be used with encap, oif or blackhole");
    if (m.flags) return fail(EINVAL, "Unsupported nexthop flags in ancillary header");
    q.fdb = true;
  }
  if (m.group) {
    if (m.family != AF_UNSPEC) return fail(EINVAL, "Invalid family for group");
    q.group_type = m.group_type.value_or(NEXTHOP_GRP_TYPE_MPATH);
    if (q.group_type > NEXTHOP_GRP_TYPE_MAX) return fail(EINVAL, "Invalid group type");
    if (m.group_bad_length) return fail(EINVAL, "Invalid length for nexthop group attribute");
    for (const nexthop_grp& e : *m.group) {
      if (e.resvd2) return fail(EINVAL, "Reserved field in nexthop_grp must be 0");
      q.group.push_back({e.id, static_cast<std::uint16_t>((e.resvd1 << 8 | e.weight) + 1)});
    }
    if (m.other_attrs) return fail(EINVAL, "No other attributes can be set in nexthop groups");
    if (q.group_type == NEXTHOP_GRP_TYPE_RES && m.res_group) {
      if (m.res_group->buckets && !*m.res_group->buckets)
        return fail(EINVAL, "Number of buckets needs to be non-0");
      q.buckets = m.res_group->buckets;
      q.idle_timer = m.res_group->idle_timer;
      q.unbalanced_timer = m.res_group->unbalanced_timer;
    }
    return q;
  }
  if (m.blackhole) {
    if (m.gateway_len || m.oif || m.encap || m.encap_type || m.fdb)
      return fail(EINVAL, "Blackhole attribute can not be used with gateway, oif, encap or fdb");
    q.blackhole = true;
    return q;
  }
  if (!q.fdb && !m.oif)
    return fail(EINVAL, "Device attribute required for non-blackhole and non-fdb nexthops");
  if (!q.fdb) {
    q.oif = static_cast<int>(*m.oif);
    if (!q.oif || *m.oif > INT_MAX) return fail(EINVAL, "Invalid device index");
  }
  if (m.gateway_len) {
    std::size_t want = m.family == AF_INET ? 4 : 16;
    if (*m.gateway_len != want || !m.gateway) return fail(EINVAL, "Invalid gateway");
    q.gateway = *m.gateway;
  }
  if (m.encap) {
    if (!m.encap_type) return fail(EINVAL, "LWT encapsulation type is missing");
    // Linux: lwtunnel_valid_encap_type, in its own lower case.
    return fail(EOPNOTSUPP, "lwt encapsulation type not supported");
  }
  if (m.encap_type) return fail(EINVAL, "LWT encapsulation attribute is missing");
  return q;
}

// Linux: __nh_valid_get_del_req.
Result<std::uint32_t> get_del_id(const wire::NexthopMessage& m) {
  if (m.protocol || m.resvd || m.scope || m.flags) return fail(EINVAL, "Invalid values in header");
  if (!m.id) return fail(EINVAL, "Nexthop id is missing");
  if (!*m.id) return fail(EINVAL, "Invalid nexthop id");
  return *m.id;
}

Result<wire::NexthopMessage> decode(Request& r) {
  return wire::decode_nexthop(r.m);
}

}  // namespace

void ProtoPublisher::on_nexthop(Namespace& ns, inet::ProtoEvent ev, const inet::NexthopInfo& n) {
  if (!hub_.wanted(ns.id(), RTNLGRP_NEXTHOP)) return;
  std::uint16_t type =
      ev == inet::ProtoEvent::New ? std::uint16_t{RTM_NEWNEXTHOP} : std::uint16_t{RTM_DELNEXTHOP};
  wire::Header h = hub_.notify_header(ns.id(), type);
  wire::MessageBuilder b;
  if (wire::encode_nexthop(b, h, nexthop_message(n)))
    hub_.publish(ns.id(), RTNLGRP_NEXTHOP, b.bytes());
}

// Linux: nh_fill_res_bucket.
wire::NexthopBucketMessage bucket_message(const inet::NexthopBucket& b) {
  wire::NexthopBucketMessage m;
  m.protocol = b.protocol;
  m.flags = b.flags;
  m.id = b.group;
  m.index = b.index;
  m.nhid = b.nhid;
  m.idle_time = b.idle_time;
  return m;
}

void ProtoPublisher::on_nexthop_bucket(Namespace& ns, const inet::NexthopBucket& bucket) {
  if (!hub_.wanted(ns.id(), RTNLGRP_NEXTHOP)) return;
  // Linux: nexthop_bucket_notify — from the upkeep work, port 0, seq 0, NLM_F_REPLACE.
  wire::Header h{RTM_NEWNEXTHOPBUCKET, NLM_F_REPLACE, 0, 0};
  wire::MessageBuilder b;
  if (wire::encode_nexthop_bucket(b, h, bucket_message(bucket)))
    hub_.publish(ns.id(), RTNLGRP_NEXTHOP, b.bytes());
}

Result<void> handle_newnexthop(Request& r) {
  auto m = decode(r);
  if (!m) return fail(m.error());
  auto q = nexthop_request(*m, r.flags());
  if (!q) return fail(q.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  auto made = inet::add_nexthop(ctl, **ns, *q);
  return made ? ok() : Result<void>(fail(made.error()));
}

Result<void> handle_delnexthop(Request& r) {
  auto m = decode(r);
  if (!m) return fail(m.error());
  auto id = get_del_id(*m);
  if (!id) return fail(id.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  return inet::delete_nexthop(ctl, **ns, *id);
}

namespace {

// Linux: __nh_valid_dump_req, which the nexthop and bucket dumps share: the device and
// master filters, NHA_GROUPS, a header of zeros but the family.
template <class Message, class Filter>
Result<void> valid_dump_req(const Message& m, Filter& f) {
  if (m.oif) {
    if (*m.oif > INT_MAX) return fail(EINVAL, "Invalid device index");
    f.oif = static_cast<int>(*m.oif);
  }
  if (m.master) {
    if (*m.master > INT_MAX) return fail(EINVAL, "Invalid master device index");
    f.master = static_cast<int>(*m.master);
  }
  f.groups = m.groups;
  if (m.protocol || m.resvd || m.scope || m.flags)
    return fail(EINVAL, "Invalid values in header for nexthop dump request");
  f.family = m.family;
  return ok();
}

}  // namespace

Result<void> handle_getnexthop(Request& r) {
  auto m = decode(r);
  Control ctl = r.s.hub().engine().control();
  if (!r.dump()) {
    if (!m) return fail(m.error());
    auto id = get_del_id(*m);
    if (!id) return fail(id.error());
    auto ns = session_ns(ctl, r.s);
    if (!ns) return fail(ns.error());
    auto got = inet::get_nexthop(ctl, **ns, *id);
    if (!got) return fail(got.error());
    return emit(r.out, [&](wire::MessageBuilder& b) {
      return wire::encode_nexthop(b, {RTM_NEWNEXTHOP, 0, r.seq(), r.port()}, nexthop_message(*got));
    });
  }
  // Linux: rtm_dump_nexthop checks the request (__nh_valid_dump_req) in the dump itself: a
  // refusal ends it with NLMSG_DONE carrying the error.
  auto filter = [&]() -> Result<inet::NexthopFilter> {
    if (!m) return fail(m.error());
    inet::NexthopFilter f;
    IFCORE_TRY(valid_dump_req(*m, f));
    return f;
  }();
  if (!filter) {
    end_dump_error(r, filter.error());
    return ok();
  }
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  IFCORE_TRY(
      dump_items(r, RTM_NEWNEXTHOP, inet::list_nexthops(ctl, **ns, *filter),
                 [](wire::MessageBuilder& b, const wire::Header& h, const inet::NexthopInfo& n) {
                   return wire::encode_nexthop(b, h, nexthop_message(n));
                 }));
  end_dump(r);
  return ok();
}

// Linux: rtm_get_nexthop_bucket (nh_valid_get_bucket_req) and rtm_dump_nexthop_bucket
// (nh_valid_dump_bucket_req, whose refusals end the dump with NLMSG_DONE).
Result<void> handle_getnexthopbucket(Request& r) {
  auto m = wire::decode_nexthop_bucket(r.m);
  Control ctl = r.s.hub().engine().control();
  if (!r.dump()) {
    if (!m) return fail(m.error());
    if (m->protocol || m->resvd || m->scope || m->flags)
      return fail(EINVAL, "Invalid values in header");
    if (!m->id) return fail(EINVAL, "Nexthop id is missing");
    if (!*m->id) return fail(EINVAL, "Invalid nexthop id");
    if (!m->bucket) return fail(EINVAL, "Bucket information is missing");
    if (!m->index) return fail(EINVAL, "Bucket index is missing");
    auto ns = session_ns(ctl, r.s);
    if (!ns) return fail(ns.error());
    auto got = inet::get_nexthop_bucket(ctl, **ns, *m->id, *m->index);
    if (!got) return fail(got.error());
    return emit(r.out, [&](wire::MessageBuilder& b) {
      return wire::encode_nexthop_bucket(b, {RTM_NEWNEXTHOPBUCKET, 0, r.seq(), r.port()},
                                         bucket_message(*got));
    });
  }
  auto filter = [&]() -> Result<inet::NexthopBucketFilter> {
    if (!m) return fail(m.error());
    inet::NexthopBucketFilter f;
    // Linux: nh_valid_dump_nhid, for NHA_ID and NHA_RES_BUCKET_NH_ID.
    if (m->id && !*m->id) return fail(EINVAL, "Invalid nexthop id");
    f.id = m->id.value_or(0);
    if (m->nhid && !*m->nhid) return fail(EINVAL, "Invalid nexthop id");
    f.nhid = m->nhid.value_or(0);
    IFCORE_TRY(valid_dump_req(*m, f));
    return f;
  }();
  if (!filter) {
    end_dump_error(r, filter.error());
    return ok();
  }
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  auto buckets = inet::list_nexthop_buckets(ctl, **ns, *filter);
  if (!buckets) {
    end_dump_error(r, buckets.error());
    return ok();
  }
  IFCORE_TRY(
      dump_items(r, RTM_NEWNEXTHOPBUCKET, *buckets,
                 [](wire::MessageBuilder& b, const wire::Header& h, const inet::NexthopBucket& x) {
                   return wire::encode_nexthop_bucket(b, h, bucket_message(x));
                 }));
  end_dump(r);
  return ok();
}

}  // namespace ifcore::rtnl
