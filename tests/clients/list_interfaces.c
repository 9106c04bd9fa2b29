/* tests/clients/list_interfaces.c — prints what the C library says about the network
 * devices: if_nameindex, if_nametoindex/if_indextoname (and their errors), and getifaddrs
 * with every entry's family, address, netmask, broadcast/peer and flags. Run against the
 * kernel and through the preload shim, the two outputs must be the same (clients.glibc). */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <stdio.h>
#include <string.h>

static void show(const char* what, const struct sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = "-";
  if (!sa) {
    printf(" %s -", what);
    return;
  }
  if (sa->sa_family == AF_INET) {
    inet_ntop(AF_INET, &((const struct sockaddr_in*)sa)->sin_addr, buf, sizeof(buf));
  } else if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6* in6 = (const struct sockaddr_in6*)sa;
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
    printf(" %s %s%%%u", what, buf, in6->sin6_scope_id);
    return;
  } else if (sa->sa_family == AF_PACKET) {
    const struct sockaddr_ll* ll = (const struct sockaddr_ll*)sa;
    printf(" %s ll(if%d type%u len%u", what, ll->sll_ifindex, ll->sll_hatype, ll->sll_halen);
    for (int i = 0; i < ll->sll_halen; ++i) printf("%c%02x", i ? ':' : ' ', ll->sll_addr[i]);
    printf(")");
    return;
  }
  printf(" %s %s", what, buf);
}

int main(void) {
  struct if_nameindex* ni = if_nameindex();
  for (struct if_nameindex* p = ni; p && p->if_index; ++p) printf("nameindex %u %s\n", p->if_index, p->if_name);
  if_freenameindex(ni);
  printf("nametoindex lo %u\n", if_nametoindex("lo"));
  errno = 0;
  unsigned none = if_nametoindex("nosuch0");
  int none_err = errno;
  printf("nametoindex nosuch0 %u %s\n", none, strerror(none_err));
  char name[IF_NAMESIZE];
  printf("indextoname 1 %s\n", if_indextoname(1, name) ? name : "-");
  errno = 0;
  const char* got = if_indextoname(999, name);
  int err = errno;
  printf("indextoname 999 %s %s\n", got ? got : "-", strerror(err));
  struct ifaddrs* ifa = NULL;
  if (getifaddrs(&ifa) != 0) {
    perror("getifaddrs");
    return 1;
  }
  for (struct ifaddrs* p = ifa; p; p = p->ifa_next) {
    printf("ifaddrs %s flags %#x", p->ifa_name, p->ifa_flags);
    show("addr", p->ifa_addr);
    show("mask", p->ifa_netmask);
    show("other", p->ifa_ifu.ifu_broadaddr);
    printf(" data %s\n", p->ifa_data ? "yes" : "no");
  }
  freeifaddrs(ifa);
  return 0;
}
