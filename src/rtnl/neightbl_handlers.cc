// rtnl/neightbl_handlers.cc — RTM_GETNEIGHTBL (a dump) and RTM_SETNEIGHTBL on top of
// ifcore/neigh_table.h (Linux: neightbl_dump_info, neightbl_set). Linux announces no change
// of a table: there is no RTM_NEWNEIGHTBL notification.
//
// Lock order: each handler takes the control lock once.
#include <linux/rtnetlink.h>

#include "ifcore/neigh_table.h"
#include "rtnl/handlers.h"
#include "rtnl/wire/neightbl.h"

namespace ifcore::rtnl {

Result<void> handle_getneightbl(Request& r) {
  // Linux registers only a dumpit: a get without NLM_F_DUMP is EOPNOTSUPP.
  if (!r.dump()) return fail(EOPNOTSUPP);
  auto family = wire::check_neightbl_dump(r.m, r.s.strict_check());
  if (!family) {
    end_dump_error(r, family.error());
    return ok();
  }
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  for (const inet::NeighTableDump& t : inet::list_neigh_tables(ctl, **ns, *family)) {
    IFCORE_TRY(emit(r.out, [&](wire::MessageBuilder& b) {
      return wire::encode_neightbl(b, {RTM_NEWNEIGHTBL, NLM_F_MULTI, r.seq(), r.port()}, t.table);
    }));
    IFCORE_TRY(dump_items(
        r, RTM_NEWNEIGHTBL, t.devices,
        [&](wire::MessageBuilder& b, const wire::Header& h, const inet::NeighParmsInfo& p) {
          return wire::encode_neightbl_parms(b, h, t.table.family, t.table.name, p);
        }));
  }
  end_dump(r);
  return ok();
}

Result<void> handle_setneightbl(Request& r) {
  auto d = wire::decode_neightbl_set(r.m);
  if (!d) return fail(d.error());
  Control ctl = r.s.hub().engine().control();
  auto ns = session_ns(ctl, r.s);
  if (!ns) return fail(ns.error());
  IFCORE_TRY(inet::set_neigh_table(ctl, **ns, d->req));
  r.warning = d->warning;
  return ok();
}

}  // namespace ifcore::rtnl
