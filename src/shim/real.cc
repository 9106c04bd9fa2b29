// shim/real.cc — resolves the C library's functions behind the interposers.
#include "shim/real.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace ifcore::shim::real {

namespace {

template <class F>
void resolve(F& slot, const char* name) {
  slot = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
  if (!slot) {
    const char* head = "ifcore-preload: the C library has no ";
    (void)!::write(2, head, std::strlen(head));
    (void)!::write(2, name, std::strlen(name));
    (void)!::write(2, "\n", 1);
    std::abort();
  }
}

Functions load() {
  Functions f{};
  resolve(f.socket, "socket");
  resolve(f.bind, "bind");
  resolve(f.connect, "connect");
  resolve(f.getsockname, "getsockname");
  resolve(f.getpeername, "getpeername");
  resolve(f.getsockopt, "getsockopt");
  resolve(f.setsockopt, "setsockopt");
  resolve(f.send, "send");
  resolve(f.sendto, "sendto");
  resolve(f.sendmsg, "sendmsg");
  resolve(f.recv, "recv");
  resolve(f.recvfrom, "recvfrom");
  resolve(f.recvmsg, "recvmsg");
  resolve(f.close, "close");
  resolve(f.dup, "dup");
  resolve(f.dup2, "dup2");
  resolve(f.dup3, "dup3");
  resolve(f.fcntl, "fcntl");
  resolve(f.ioctl, "ioctl");
  resolve(f.poll, "poll");
  resolve(f.ppoll, "ppoll");
  resolve(f.select, "select");
  resolve(f.pselect, "pselect");
  resolve(f.epoll_ctl, "epoll_ctl");
  resolve(f.epoll_pwait, "epoll_pwait");
  resolve(f.epoll_pwait2, "epoll_pwait2");
  resolve(f.unlink, "unlink");
  resolve(f.fopen, "fopen");
  resolve(f.fopen64, "fopen64");
  resolve(f.mount, "mount");
  return f;
}

}  // namespace

const Functions& fn() {
  static const Functions f = load();  // thread-safe initialisation
  return f;
}

}  // namespace ifcore::shim::real
