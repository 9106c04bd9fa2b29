// shim/epoll.h — epoll readiness of redirected sockets. A datagram held back during a
// control exchange (sockets.h) is readable although the unix socket may hold nothing, so
// the shim remembers which epoll instances watch a redirected socket for input and reports
// such a socket from epoll_wait, as it does from poll and select.
//
// Context: any thread; one mutex guards the registrations (never held across a blocking
// call).
#pragma once

namespace ifcore::shim {

// `fd` was closed: it is no longer an epoll instance nor watched by one.
void epoll_forget(int fd);

}  // namespace ifcore::shim
