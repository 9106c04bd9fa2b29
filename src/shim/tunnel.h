// shim/tunnel.h — the gre/ipip tunnel ioctls `ip tunnel` uses, answered by ifcored
// (tunnel.cc). Context: any thread; one or two round trips to ifcored.
#pragma once

#include <net/if.h>

namespace ifcore::shim {

bool is_tunnel_request(unsigned long req);
// SIOC{GET,ADD,CHG,DEL}TUNNEL with `ifr`'s ip_tunnel_parm. Returns 0 or -1 with errno set.
int tunnel_ioctl(unsigned long req, ifreq& ifr);

}  // namespace ifcore::shim
