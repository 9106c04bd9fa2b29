// rtnl/mdb.h — internal: the bridges' multicast databases as rtnetlink messages
// (RTM_{NEW,DEL,GET}MDB of family AF_BRIDGE), their RTNLGRP_MDB notifications, and the
// vxlan devices' VNI filters (RTM_GETTUNNEL).
#pragma once

#include "ifcore/mdb.h"
#include "ifcore/vnifilter.h"

namespace ifcore::rtnl {

class Hub;
struct Request;

// Context: control lock (the bridges call it).
class MdbPublisher final : public mdb::Listener {
 public:
  explicit MdbPublisher(Hub& hub) : hub_(hub) {}
  void on_mdb(Namespace& ns, int bridge, bool added, const mdb::Entry& e) override;
  void on_mdb_router(Namespace& ns, int bridge, bool added, int port) override;

 private:
  Hub& hub_;
};

// Context: control lock (the vxlan devices call it).
class VniPublisher final : public vnifilter::Listener {
 public:
  explicit VniPublisher(Hub& hub) : hub_(hub) {}
  void on_vni(Namespace& ns, int ifindex, bool added, const vnifilter::Vni& v) override;

 private:
  Hub& hub_;
};

Result<void> handle_newmdb(Request& r);
Result<void> handle_delmdb(Request& r);
Result<void> handle_getmdb(Request& r);
// tunnel_handlers.cc: RTM_NEWTUNNEL / RTM_DELTUNNEL / RTM_GETTUNNEL.
Result<void> handle_changetunnel(Request& r);
Result<void> handle_gettunnel(Request& r);

}  // namespace ifcore::rtnl
