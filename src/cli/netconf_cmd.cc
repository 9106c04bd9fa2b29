// cli/netconf_cmd.cc — `ifc netconf show [dev NAME]` and the netconf lines of `ifc monitor`,
// worded as iproute2's ipnetconf.c prints them: one line per scope (a device, "all",
// "default") and family, every setting the message carries.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/netconf.h>
#include <linux/rtnetlink.h>

#include "cli/commands.h"
#include "rtnl/wire/netconf.h"

namespace ifcore::cli {
namespace {

struct Filter {
  int family = 0;   // AF_UNSPEC: both
  int ifindex = 0;  // 0: every scope
};

const char* family_name(int f) {
  switch (f) {
    case AF_INET:
      return "inet";
    case AF_INET6:
      return "inet6";
    default:
      return "???";
  }
}

// iproute2's print_netconf: "[Deleted ]FAMILY NAME [forwarding on|off] [rp_filter
// off|strict|loose|N] [mc_forwarding ...] [proxy_neigh ...] [ignore_routes_with_linkdown
// ...] [input ...]", each word followed by a blank.
void print_netconf(Ctx& c, const wire::Message& m, const Filter& f, bool ask = false) {
  auto n = wire::decode_netconf(m);
  if (!n) return;
  if (f.family && f.family != n->family) return;
  const int ifindex = n->ifindex.value_or(0);
  if (f.ifindex && f.ifindex != ifindex) return;
  Out& o = *c.out;
  o.open_object();
  if (m.hdr.nlmsg_type == RTM_DELNETCONF) o.kv("deleted", true, "Deleted ");
  std::string fam = family_name(n->family);
  o.kv("family", fam, fam + " ");
  if (n->ifindex) {
    std::string dev = ifindex == NETCONFA_IFINDEX_ALL       ? "all"
                      : ifindex == NETCONFA_IFINDEX_DEFAULT ? "default"
                      : ask                                 ? c.client->ifname_asking(ifindex)
                                                            : c.client->ifname(ifindex);
    o.kv("interface", dev, dev + " ");
  }
  auto on_off = [&](const char* key, const std::optional<std::int32_t>& v) {
    if (!v) return;
    o.kv(key, *v != 0, fmt::format("{} {} ", key, *v ? "on" : "off"));
  };
  on_off("forwarding", n->forwarding);
  if (n->rp_filter) {
    static const char* const kNames[] = {"off", "strict", "loose"};
    auto v = static_cast<std::uint32_t>(*n->rp_filter);
    if (v < 3)
      o.kv("rp_filter", kNames[v], fmt::format("rp_filter {} ", kNames[v]));
    else
      o.kv("rp_filter", v, fmt::format("rp_filter {} ", v));
  }
  on_off("mc_forwarding", n->mc_forwarding);
  on_off("proxy_neigh", n->proxy_neigh);
  on_off("ignore_routes_with_linkdown", n->ignore_routes_with_linkdown);
  on_off("input", n->input);
  o.close();
  o.text("\n");
  o.flush();
}

}  // namespace

void print_netconf_event(Ctx& c, const wire::Message& m) {
  print_netconf(c, m, Filter{}, true);
}

// iproute2's do_show: with a device and a family, a get of that family (whose errors
// print nothing, as rtnl_listen leaves them); otherwise a dump of the family asked for
// (of both: AF_UNSPEC), filtered by family and device.
Result<void> netconf_show(Ctx& c, Args& a) {
  Filter f;
  f.family = c.family;
  while (!a.done()) {
    std::string w = a.take();
    if (w != "dev") continue;
    if (a.done()) return incomplete();
    std::string name = a.take();
    auto idx = c.client->ifindex(name);
    if (!idx) return fail(idx.error());
    if (*idx <= 0) return die(1, "Device \"{}\" does not exist.", name);
    f.ifindex = *idx;
  }
  if (f.ifindex && f.family != AF_UNSPEC) {
    wire::MessageBuilder b;
    wire::NetconfMessage req;
    req.family = static_cast<std::uint8_t>(f.family);
    req.ifindex = f.ifindex;
    IFCORE_TRY(
        wire::encode_netconf(b, {RTM_GETNETCONF, NLM_F_REQUEST, c.client->next_seq(), 0}, req));
    // ip prints the reply without a JSON document around it, in text even with -j.
    Out text(false, false);
    Out* saved = c.out;
    c.out = &text;
    int err = 0;
    std::string ext;
    auto r = c.client->talk_raw(
        b,
        [&](const wire::Message& m) {
          if (m.hdr.nlmsg_type == RTM_NEWNETCONF || m.hdr.nlmsg_type == RTM_DELNETCONF)
            print_netconf(c, m, f);
        },
        err, ext);
    c.out = saved;
    return r;
  }
  wire::MessageBuilder b;
  b.begin({RTM_GETNETCONF, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
  netconfmsg ncm{};
  ncm.ncm_family = static_cast<std::uint8_t>(f.family);
  b.put_struct(ncm);
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  c.out->open_array();
  auto r = c.client->dump(b, [&](const wire::Message& m) { print_netconf(c, m, f); });
  c.out->close();
  if (!r) {
    std::string msg = r.error().message;
    return die(1, "{}\nDump terminated", msg);
  }
  return ok();
}

Result<void> do_netconf(Ctx& c, Args& a) {
  if (a.done()) return netconf_show(c, a);
  std::string cmd = a.take();
  if (matches(cmd, "show") || matches(cmd, "lst") || matches(cmd, "list"))
    return netconf_show(c, a);
  if (matches(cmd, "help")) return die(255, "Usage: ip netconf show [ dev STRING ]");
  return die(255, "Command \"{}\" is unknown, try \"ip netconf help\".", cmd);
}

}  // namespace ifcore::cli
