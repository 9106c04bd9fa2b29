// shim/epoll.cc — epoll_ctl and epoll_wait/epoll_pwait/epoll_pwait2 for redirected sockets
// (epoll.h).
#include "shim/epoll.h"

#include <errno.h>
#include <signal.h>
#include <sys/epoll.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "shim/real.h"
#include "shim/sockets.h"

namespace ifcore::shim {
namespace {

// One redirected socket watched by an epoll instance.
struct Watch {
  int fd;
  epoll_event ev;
  bool armed = true;  // false after an EPOLLONESHOT report, until EPOLL_CTL_MOD
};

struct Registry {
  Mutex mu;  // LOCK ORDERING: first, then a socket's NetlinkSocket::mu
  std::unordered_map<int, std::vector<Watch>> by_epfd IFCORE_GUARDED_BY(mu);
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: interposers run until exit
  return *r;
}

bool has_stash(int fd) {
  auto s = table().find(fd);
  if (!s) return false;
  MutexLock lock(s->mu);
  return !s->stash.empty();
}

// The events epoll_wait owes for held-back datagrams on `epfd`'s watches; one-shot
// watches it reports are disarmed (here and in the kernel's instance).
std::vector<epoll_event> held_events(int epfd) {
  std::vector<epoll_event> out;
  if (table().empty()) return out;
  Registry& reg = registry();
  MutexLock lock(reg.mu);
  auto it = reg.by_epfd.find(epfd);
  if (it == reg.by_epfd.end()) return out;
  for (Watch& w : it->second) {
    if (!w.armed || !(w.ev.events & EPOLLIN) || !has_stash(w.fd)) continue;
    out.push_back({EPOLLIN, w.ev.data});
    if (w.ev.events & EPOLLONESHOT) {
      w.armed = false;
      epoll_event off{EPOLLONESHOT, w.ev.data};
      (void)real::fn().epoll_ctl(epfd, EPOLL_CTL_MOD, w.fd, &off);
    }
  }
  return out;
}

// Adds `held` to the `n` events the kernel reported, merged by their data (what a
// program tells its sockets apart by), up to `max`.
int merge(epoll_event* events, int n, int max, const std::vector<epoll_event>& held) {
  for (const epoll_event& h : held) {
    auto same = std::find_if(events, events + n,
                             [&](const epoll_event& e) { return e.data.u64 == h.data.u64; });
    if (same != events + n)
      same->events |= EPOLLIN;
    else if (n < max)
      events[n++] = h;
  }
  return n;
}

}  // namespace

void epoll_forget(int fd) {
  Registry& reg = registry();
  MutexLock lock(reg.mu);
  if (reg.by_epfd.empty()) return;
  reg.by_epfd.erase(fd);
  for (auto& [epfd, watches] : reg.by_epfd)
    std::erase_if(watches, [&](const Watch& w) { return w.fd == fd; });
}

}  // namespace ifcore::shim

using namespace ifcore::shim;

#pragma GCC visibility push(default)
extern "C" {

int epoll_ctl(int epfd, int op, int fd, epoll_event* ev) {
  int r = real::fn().epoll_ctl(epfd, op, fd, ev);
  if (r != 0 || table().empty() || !table().find(fd)) return r;
  Registry& reg = registry();
  ifcore::MutexLock lock(reg.mu);
  auto& watches = reg.by_epfd[epfd];
  auto it =
      std::find_if(watches.begin(), watches.end(), [&](const Watch& w) { return w.fd == fd; });
  if (op == EPOLL_CTL_DEL) {
    if (it != watches.end()) watches.erase(it);
  } else if (ev) {
    if (it == watches.end()) it = watches.insert(watches.end(), Watch{fd, *ev});
    it->ev = *ev;
    it->armed = true;
  }
  return r;
}

int epoll_pwait2(int epfd, epoll_event* events, int max, const struct timespec* timeout,
                 const sigset_t* mask) {
  std::vector<epoll_event> held = held_events(epfd);
  if (held.empty()) return real::fn().epoll_pwait2(epfd, events, max, timeout, mask);
  if (max <= 0) {
    errno = EINVAL;
    return -1;
  }
  struct timespec zero {};
  int n = real::fn().epoll_pwait2(epfd, events, max, &zero, mask);
  if (n < 0) return n;
  return merge(events, n, max, held);
}

int epoll_pwait(int epfd, epoll_event* events, int max, int timeout_ms, const sigset_t* mask) {
  std::vector<epoll_event> held = held_events(epfd);
  if (held.empty()) return real::fn().epoll_pwait(epfd, events, max, timeout_ms, mask);
  if (max <= 0) {
    errno = EINVAL;
    return -1;
  }
  int n = real::fn().epoll_pwait(epfd, events, max, 0, mask);
  if (n < 0) return n;
  return merge(events, n, max, held);
}

int epoll_wait(int epfd, epoll_event* events, int max, int timeout_ms) {
  return epoll_pwait(epfd, events, max, timeout_ms, nullptr);
}

}  // extern "C"
#pragma GCC visibility pop
