// shim/real.h — the C library's own functions, reached past the preload library's
// interposers (dlsym(RTLD_NEXT)). The shim's own I/O on its sockets goes through these,
// never through the interposed names, so it cannot recurse into itself.
//
// Context: any thread; resolved once, on first use, before main in practice (the
// library's constructor calls resolve()).
#pragma once

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>

namespace ifcore::shim::real {

struct Functions {
  int (*socket)(int, int, int);
  int (*bind)(int, const sockaddr*, socklen_t);
  int (*connect)(int, const sockaddr*, socklen_t);
  int (*getsockname)(int, sockaddr*, socklen_t*);
  int (*getpeername)(int, sockaddr*, socklen_t*);
  int (*getsockopt)(int, int, int, void*, socklen_t*);
  int (*setsockopt)(int, int, int, const void*, socklen_t);
  ssize_t (*send)(int, const void*, size_t, int);
  ssize_t (*sendto)(int, const void*, size_t, int, const sockaddr*, socklen_t);
  ssize_t (*sendmsg)(int, const msghdr*, int);
  ssize_t (*recv)(int, void*, size_t, int);
  ssize_t (*recvfrom)(int, void*, size_t, int, sockaddr*, socklen_t*);
  ssize_t (*recvmsg)(int, msghdr*, int);
  int (*close)(int);
  int (*dup)(int);
  int (*dup2)(int, int);
  int (*dup3)(int, int, int);
  int (*fcntl)(int, int, ...);
  int (*ioctl)(int, unsigned long, ...);
  int (*poll)(pollfd*, nfds_t, int);
  int (*ppoll)(pollfd*, nfds_t, const struct timespec*, const sigset_t*);
  int (*select)(int, fd_set*, fd_set*, fd_set*, struct timeval*);
  int (*pselect)(int, fd_set*, fd_set*, fd_set*, const struct timespec*, const sigset_t*);
  int (*epoll_ctl)(int, int, int, epoll_event*);
  int (*epoll_pwait)(int, epoll_event*, int, int, const sigset_t*);
  int (*epoll_pwait2)(int, epoll_event*, int, const struct timespec*, const sigset_t*);
  int (*unlink)(const char*);
  FILE* (*fopen)(const char*, const char*);
  FILE* (*fopen64)(const char*, const char*);
  int (*mount)(const char*, const char*, const char*, unsigned long, const void*);
};

// The resolved table. Aborts (with a message) if the C library lacks one of them.
const Functions& fn();

}  // namespace ifcore::shim::real
