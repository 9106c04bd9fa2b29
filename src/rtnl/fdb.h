// rtnl/fdb.h — internal: forwarding entries as rtnetlink messages of family AF_BRIDGE
// (Linux: fdb_fill_info, vxlan_fdb_info, nlmsg_populate_fdb_fill) and the listener that
// turns the databases' changes into RTNLGRP_NEIGH notifications.
#pragma once

#include "ifcore/fdb.h"
#include "rtnl/wire/neigh.h"

namespace ifcore::rtnl {

class Hub;
struct Request;

wire::NeighMessage fdb_message(const fdb::Entry& e);

// Context: control lock (the databases call it).
class FdbPublisher final : public fdb::Listener {
 public:
  explicit FdbPublisher(Hub& hub) : hub_(hub) {}
  void on_fdb(Namespace& ns, bool added, const fdb::Entry& e) override;

 private:
  Hub& hub_;
};

// RTM_{NEW,DEL,GET}NEIGH whose family is AF_BRIDGE go to these (Linux registers them for
// PF_BRIDGE).
bool is_fdb_request(const Request& r);
Result<void> handle_fdb_add(Request& r);
Result<void> handle_fdb_del(Request& r);
Result<void> handle_fdb_get(Request& r);

}  // namespace ifcore::rtnl
