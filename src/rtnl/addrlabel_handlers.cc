// rtnl/addrlabel_handlers.cc — RTM_NEWADDRLABEL, RTM_DELADDRLABEL and RTM_GETADDRLABEL (get
// and dump) on top of ifcore/inet.h: `ip addrlabel` (Linux: ip6addrlbl_newdel,
// ip6addrlbl_get, ip6addrlbl_dump). Linux announces no change of the table.
//
// Lock order: each handler takes the control lock once.
#include <linux/rtnetlink.h>

#include <cerrno>

#include "ifcore/addrlabel.h"
#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/proto.h"
#include "rtnl/wire/addrlabel.h"

namespace ifcore::rtnl {

namespace {

wire::AddrLabelMessage message_of(const inet::AddrLabel& l, std::uint32_t seq) {
  wire::AddrLabelMessage m;
  m.family = AF_INET6;
  m.prefix_len = l.prefix_len;
  m.ifindex = static_cast<std::uint32_t>(l.ifindex);
  m.seq = seq;
  std::array<std::uint8_t, 16> a{};
  std::copy(l.prefix.bytes().begin(), l.prefix.bytes().end(), a.begin());
  m.address = a;
  m.label = l.label;
  return m;
}

// ifcored --state keeps the table (Server::set_tap): a change that succeeded is shown to the
// tap as the request that makes it again. Context: control lock.
void tap_change(Request& r, const Namespace& ns, std::uint16_t type, const inet::AddrLabel& l) {
  Hub& hub = r.s.hub();
  if (!hub.tap) return;
  wire::MessageBuilder b;
  if (wire::encode_addrlabel(b, {type, 0, 0, 0}, message_of(l, 0))) hub.tap(ns.id(), b.bytes());
}

}  // namespace

// Both RTM_NEWADDRLABEL and RTM_DELADDRLABEL (Linux: ip6addrlbl_newdel, in its order).
Result<void> handle_changeaddrlabel(Request& r) {
  // Linux: only PF_INET6 registers them; another family finds no handler.
  if (r.m.payload()[0] != AF_INET6) return fail(EOPNOTSUPP);
  auto m = wire::decode_addrlabel_request(r.m, false, false);
  if (!m) return fail(m.error());
  if (m->leftover) r.warning = "bytes leftover after parsing attributes";
  if (m->prefix_len > 128) return fail_log_only(EINVAL, "addrlabel: prefix length over 128");
  if (!m->address) return fail_log_only(EINVAL, "addrlabel: no IFAL_ADDRESS");
  if (!m->label) return fail_log_only(EINVAL, "addrlabel: no IFAL_LABEL");
  // (The label 0xffffffff and an unknown device: add_addrlabel's EINVAL, Linux's alone.)
  inet::AddrLabel l{IpAddr::v6(*m->address), m->prefix_len, static_cast<int>(m->ifindex),
                    *m->label};
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  const bool add = r.m.hdr.nlmsg_type == RTM_NEWADDRLABEL;
  if (add)
    IFCORE_TRY(inet::add_addrlabel(ctl, **ns, l, (r.flags() & NLM_F_REPLACE) != 0));
  else
    IFCORE_TRY(inet::delete_addrlabel(ctl, **ns, l));
  tap_change(r, **ns, r.m.hdr.nlmsg_type, l);
  return ok();
}

Result<void> handle_getaddrlabel(Request& r) {
  if (r.m.payload()[0] != AF_INET6) {
    r.no_dumpit = true;  // Linux: only PF_INET6 registers RTM_GETADDRLABEL
    return fail(EOPNOTSUPP);
  }
  if (!r.dump()) {
    auto m = wire::decode_addrlabel_request(r.m, true, r.s.strict_check());
    if (!m) return fail(m.error());
    if (m->leftover) r.warning = "bytes leftover after parsing attributes";
    if (m->prefix_len != 128)
      return fail_log_only(EINVAL, "addrlabel: get of a /{}", m->prefix_len);
    Control ctl = r.s.hub().engine().control();
    auto ns = session_ns(ctl, r.s);
    if (!ns) return fail(ns.error());
    // (An unknown device: find_addrlabel's EINVAL, Linux's alone.)
    if (!m->address) return fail_log_only(EINVAL, "addrlabel: no IFAL_ADDRESS");
    auto got =
        inet::find_addrlabel(ctl, **ns, IpAddr::v6(*m->address), static_cast<int>(m->ifindex));
    if (!got) return fail(got.error());
    return emit(r.out, [&](wire::MessageBuilder& b) {
      return wire::encode_addrlabel(b, {RTM_NEWADDRLABEL, 0, r.seq(), r.port()},
                                    message_of(got->first, got->second));
    });
  }
  if (r.s.strict_check()) {
    if (auto c = wire::check_addrlabel_dump(r.m); !c) {
      end_dump_error(r, c.error());
      return ok();
    }
  }
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  inet::AddrLabelTable t = inet::addrlabels(ctl, **ns);
  IFCORE_TRY(
      dump_items(r, RTM_NEWADDRLABEL, t.entries,
                 [&](wire::MessageBuilder& b, const wire::Header& h, const inet::AddrLabel& l) {
                   return wire::encode_addrlabel(b, h, message_of(l, t.seq));
                 }));
  end_dump(r);
  return ok();
}

}  // namespace ifcore::rtnl
