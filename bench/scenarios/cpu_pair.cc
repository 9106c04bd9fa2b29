// bench/scenarios/cpu_pair.cc — the daemon path's client and server on two CPUs.
#include "bench/scenarios/cpu_pair.h"

namespace ifcore::bench {

CpuPair::CpuPair(pid_t server) {
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  int first = -1, last = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) {
      if (first < 0) first = c;
      last = c;
    }
  if (first < 0 || first == last) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  if (::sched_setaffinity(server, sizeof one, &one) != 0) return;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  if (::sched_setaffinity(0, sizeof one, &one) != 0) return;
  saved_ = allowed;
  pinned_ = true;
  client_ = first;
  server_ = last;
}

CpuPair::~CpuPair() {
  if (pinned_) (void)::sched_setaffinity(0, sizeof saved_, &saved_);
}

}  // namespace ifcore::bench
