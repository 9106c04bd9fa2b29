// cli/tunnel_print.h — what `ifc tunnel` keeps of a tunnel (iproute2's struct
// ip_tunnel_parm) and how it prints one (tunnel_print.cc).
#pragma once

#include <arpa/inet.h>
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_tunnel.h>

#include <cstdint>
#include <string>

#include "cli/commands.h"
#include "cli/link_print.h"

namespace ifcore::cli {

// GRE_* and VTI_ISVTI are big endian in the uapi; Parm keeps flags in host order.
inline const std::uint16_t kKey = ntohs(GRE_KEY);
inline const std::uint16_t kCsum = ntohs(GRE_CSUM);
inline const std::uint16_t kSeq = ntohs(GRE_SEQ);

// What `ip tunnel` puts in its struct ip_tunnel_parm, in host order.
struct Parm {
  std::string name;
  std::uint8_t proto = 0;  // IPPROTO_IPIP, IPPROTO_GRE, IPPROTO_IPV6 (sit), 0: not said
  bool vti = false;
  std::uint32_t link = 0, local = 0, remote = 0;
  std::uint8_t ttl = 0, tos = 0;
  bool pmtudisc = true;  // iph.frag_off's DF, set until `nopmtudisc`
  std::uint16_t iflags = 0, oflags = 0;
  std::uint32_t ikey = 0, okey = 0;
};

// An IPv4 address in host order, dotted.
std::string v4_text(std::uint32_t host);

// ip tunnel -s: a few of the device's counters.
void print_stats(Ctx& c, const LinkView& l);
// One tunnel as ip tunnel prints it, without the final newline.
void print_parm(Ctx& c, const Parm& p);

}  // namespace ifcore::cli
