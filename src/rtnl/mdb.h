// rtnl/mdb.h — internal: the bridges' multicast databases as rtnetlink messages
// (RTM_{NEW,DEL,GET}MDB of family AF_BRIDGE) and their RTNLGRP_MDB notifications.
#pragma once

#include "ifcore/mdb.h"

namespace ifcore::rtnl {

class Hub;
struct Request;

// Context: control lock (the bridges call it).
class MdbPublisher final : public mdb::Listener {
 public:
  explicit MdbPublisher(Hub& hub) : hub_(hub) {}
  void on_mdb(Namespace& ns, int bridge, bool added, const mdb::Entry& e) override;

 private:
  Hub& hub_;
};

Result<void> handle_newmdb(Request& r);
Result<void> handle_delmdb(Request& r);
Result<void> handle_getmdb(Request& r);

}  // namespace ifcore::rtnl
