// rtnl/neigh_handlers.cc — neighbours: RTM_NEWNEIGH / RTM_DELNEIGH / RTM_GETNEIGH (dump
// and get) on top of ifcore/inet.h, and RTNLGRP_NEIGH notifications (Linux: neigh_add,
// neigh_delete, neigh_get, neigh_dump_info, neigh_fill_info, pneigh_fill_info).
//
// Lock order: each handler takes the control lock once.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include <cerrno>

#include "ifcore/namespace.h"
#include "rtnl/fdb.h"
#include "rtnl/handlers.h"
#include "rtnl/proto.h"

namespace ifcore::rtnl {

wire::NeighMessage neigh_message(const inet::NeighInfo& n) {
  wire::NeighMessage m;
  m.family = static_cast<std::uint8_t>(n.family);
  m.ifindex = n.ifindex;
  m.state = n.state;
  m.flags = n.flags;
  m.type = n.type;
  m.dst = n.dst;
  if (n.flags & NTF_PROXY) {
    if (n.protocol) m.protocol = n.protocol;  // pneigh_fill_info: NDA_DST, NDA_PROTOCOL
    return m;
  }
  m.lladdr = n.lladdr;
  m.probes = n.probes;
  nda_cacheinfo ci{};
  ci.ndm_confirmed = n.confirmed;
  ci.ndm_used = n.used;
  ci.ndm_updated = n.updated;
  ci.ndm_refcnt = n.refcnt;
  m.cacheinfo = ci;
  if (n.protocol) m.protocol = n.protocol;
  return m;
}

void ProtoPublisher::on_neigh(Namespace& ns, inet::ProtoEvent ev, const inet::NeighInfo& n) {
  if (!hub_.wanted(ns.id(), RTNLGRP_NEIGH)) return;
  std::uint16_t type =
      ev == inet::ProtoEvent::New ? std::uint16_t{RTM_NEWNEIGH} : std::uint16_t{RTM_DELNEIGH};
  wire::Header h = hub_.notify_header(ns.id(), type);
  wire::MessageBuilder b;
  if (wire::encode_neigh(b, h, neigh_message(n))) hub_.publish(ns.id(), RTNLGRP_NEIGH, b.bytes());
}

namespace {

inet::NeighRequest neigh_request(const wire::NeighMessage& m, std::uint16_t flags) {
  inet::NeighRequest q;
  q.family = m.family;
  q.ifindex = m.ifindex;
  q.dst = m.dst;
  q.lladdr = m.lladdr;
  q.state = m.state;
  q.flags = m.flags;
  q.protocol = m.protocol;
  q.create = flags & NLM_F_CREATE;
  q.excl = flags & NLM_F_EXCL;
  q.replace = flags & NLM_F_REPLACE;
  return q;
}

// Linux: the dst attribute is checked against the table's key length once the family is
// known; decode_neigh read it by the family.
Result<wire::NeighMessage> decode(const Request& r) {
  auto m = wire::decode_neigh(r.m);
  if (!m) return fail(m.error());
  if (m->dst && m->dst->family() != (m->family == AF_INET6 ? AF_INET6 : AF_INET))
    return fail(EINVAL, "Invalid network address");
  return m;
}

}  // namespace

Result<void> handle_newneigh(Request& r) {
  if (is_fdb_request(r)) return handle_fdb_add(r);
  auto m = decode(r);
  if (!m) return fail(m.error());
  if (m->flags_ext && (*m->flags_ext & ~std::uint32_t{NTF_EXT_MANAGED}))
    return fail(EINVAL, "Invalid extended flags");
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  auto made = inet::add_neigh(ctl, **ns, neigh_request(*m, r.flags()));
  if (!made) return fail(made.error());
  return ok();
}

Result<void> handle_delneigh(Request& r) {
  if (is_fdb_request(r)) return handle_fdb_del(r);
  auto m = decode(r);
  if (!m) return fail(m.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  ScopeGuard guard(r, ctl, (*ns)->id());
  return inet::delete_neigh(ctl, **ns, neigh_request(*m, r.flags()));
}

Result<void> handle_getneigh(Request& r) {
  if (is_fdb_request(r)) return handle_fdb_get(r);
  const bool strict = r.s.strict_check();
  auto m = decode(r);
  if (!m) return fail(m.error());
  const bool full_header = r.m.payload().size() >= sizeof(ndmsg);
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  if (!r.dump()) {
    // Linux: neigh_valid_get_req, then neigh_get.
    if (!full_header) return fail(EINVAL, "Invalid header for neighbor get request");
    if (m->state || m->type)
      return fail(EINVAL, "Invalid values in header for neighbor get request");
    if (m->flags & ~NTF_PROXY)
      return fail(EINVAL, "Invalid flags in header for neighbor get request");
    if (m->family != AF_INET && m->family != AF_INET6)
      return fail(EAFNOSUPPORT, "Unsupported family in header for neighbor get request");
    if (m->lladdr || m->probes || m->cacheinfo || m->protocol || m->flags_ext || m->dump_ifindex ||
        m->master || m->vlan || m->has_unknown)
      return fail(EINVAL, "Unsupported attribute in neighbor get request");
    inet::NeighRequest q = neigh_request(*m, 0);
    auto got = inet::get_neigh(ctl, **ns, q);
    if (!got) return fail(got.error());
    return emit(r.out, [&](wire::MessageBuilder& b) {
      return wire::encode_neigh(b, {RTM_NEWNEIGH, 0, r.seq(), r.port()}, neigh_message(*got));
    });
  }
  // Linux: neigh_valid_dump_req — strict requests are checked whole; both kinds may
  // filter by device (NDA_IFINDEX) and master (NDA_MASTER).
  if (strict) {
    if (!full_header) return fail(EINVAL, "Invalid header for neighbor dump request");
    if (m->ifindex || m->state || m->type)
      return fail(EINVAL, "Invalid values in header for neighbor dump request");
    if (m->flags & ~NTF_PROXY)
      return fail(EINVAL, "Invalid flags in header for neighbor dump request");
    if (m->dst || m->lladdr || m->probes || m->cacheinfo || m->protocol || m->flags_ext ||
        m->vlan || m->has_unknown)
      return fail(EINVAL, "Unsupported attribute in neighbor dump request");
  }
  const bool proxy = full_header && m->flags == NTF_PROXY;
  int family = m->family == AF_INET || m->family == AF_INET6 ? m->family : 0;
  int master = m->master ? static_cast<int>(*m->master) : 0;
  int dev_idx = m->dump_ifindex ? static_cast<int>(*m->dump_ifindex) : 0;
  std::uint16_t flags = NLM_F_MULTI | (master || dev_idx ? NLM_F_DUMP_FILTERED : 0);
  if (m->family == AF_UNSPEC || family) {
    for (const auto& n : inet::list_neighs(ctl, **ns, family, proxy, dev_idx)) {
      if (master) {
        // Linux: neigh_master_filtered — -1 asks for the entries of devices without one.
        Device* d = n.ifindex ? ctl.find(**ns, n.ifindex) : nullptr;
        Device* up = d ? d->master() : nullptr;
        if (master == -1 ? up != nullptr : (!up || up->ifindex() != master)) continue;
      }
      auto e = emit(r.out, [&](wire::MessageBuilder& b) {
        return wire::encode_neigh(b, {RTM_NEWNEIGH, flags, r.seq(), r.port()}, neigh_message(n));
      });
      if (!e) {
        end_dump(r, -e.error().code);
        return e;
      }
    }
  }
  end_dump(r);
  return ok();
}

}  // namespace ifcore::rtnl
