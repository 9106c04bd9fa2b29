// cli/link_cmd.cc — `ifc link add|delete|set|show`: words to RTM_NEWLINK / RTM_DELLINK /
// RTM_GETLINK, replies to text or JSON.
#include <fnmatch.h>
#include <net/if.h>

#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cctype>

#include "cli/batch_adds.h"
#include "cli/commands.h"
#include "cli/link_print.h"
#include "cli/vrf.h"
#include "rtnl/wire/link.h"

namespace ifcore::cli {
namespace {

constexpr std::size_t kIfiFlags = NLMSG_HDRLEN + offsetof(ifinfomsg, ifi_flags);

Result<void> finish(wire::MessageBuilder& b) {
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  return ok();
}

void patch_flags(wire::MessageBuilder& b, const LinkFlags& lf) {
  std::uint32_t v[2] = {lf.flags, lf.change};
  b.patch(kIfiFlags, v, sizeof v);
}

Result<void> link_usage() {
  return die(255,
             "Usage: ip link add [link DEV] [ name ] NAME type TYPE [ ARGS ]\n"
             "       ip link delete {{ DEVICE | group GROUP }}\n"
             "       ip link set {{ DEVICE | group GROUP }} [ up | down ] [ mtu MTU ] ...\n"
             "       ip link show [ DEVICE | type KIND | master DEV ]\n"
             "       ip link property add dev DEVICE [ altname NAME .. ]\n"
             "       ip link property del dev DEVICE [ altname NAME .. ]");
}

Result<void> link_add(Ctx& c, Args& a) {
  wire::MessageBuilder b(1 << 16);
  b.begin({RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL, c.client->next_seq(), 0});
  ifinfomsg ifi{};
  b.put_struct(ifi);
  LinkFlags lf;
  std::string name, kind;
  bool have_type = false;
  while (!a.done()) {
    std::string w = a.take();
    if (w == "type") {
      auto v = a.value();
      if (!v) return fail(v.error());
      kind = *v;
      have_type = true;
      break;
    }
    if (w == "link") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto idx = dev_index(c, *v);
      if (!idx) return fail(idx.error());
      b.put_u32(IFLA_LINK, std::uint32_t(*idx));
      continue;
    }
    if (w == "dev") {
      auto v = a.value();
      if (!v) return fail(v.error());
      w = "name";
      name = *v;
      b.put_string(IFLA_IFNAME, *v);
      continue;
    }
    auto r = put_link_word(c, b, w, a, lf, false);
    if (!r) return fail(r.error());
    if (*r) continue;
    if (!name.empty()) return duparg("dev", w);
    if (w.size() >= IFNAMSIZ) return invarg("\"dev\" not a valid ifname", w);
    name = w;
    b.put_string(IFLA_IFNAME, w);
  }
  if (!have_type) return die(1, "Not enough information: \"type\" argument is required");
  IFCORE_TRY(put_linkinfo(c, b, kind, a));
  patch_flags(b, lf);
  IFCORE_TRY(finish(b));
  if (c.deferred) {
    defer_add(*c.deferred, b.bytes());
    return ok();
  }
  return c.client->talk(b);
}

Result<void> link_del(Ctx& c, Args& a) {
  wire::MessageBuilder b;
  b.begin({RTM_DELLINK, NLM_F_REQUEST, c.client->next_seq(), 0});
  ifinfomsg ifi{};
  std::string name;
  std::optional<std::uint32_t> group;
  while (!a.done()) {
    std::string w = a.take();
    if (w == "group") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "Invalid \"group\" value\n");
      if (!n) return fail(n.error());
      group = *n;
    } else if (w == "type") {
      (void)a.value();  // `ip link del NAME type KIND` is accepted; the kind is not checked
    } else {
      if (w == "dev") {
        auto v = a.value();
        if (!v) return fail(v.error());
        w = *v;
      }
      if (!name.empty()) return duparg("dev", w);
      name = w;
    }
  }
  if (group) {
    b.put_struct(ifi);
    b.put_u32(IFLA_GROUP, *group);
  } else {
    if (name.empty()) return die(1, "Not enough information: \"dev\" argument is required.");
    auto idx = dev_index(c, name);
    if (!idx) return fail(idx.error());
    ifi.ifi_index = *idx;
    b.put_struct(ifi);
  }
  IFCORE_TRY(finish(b));
  return c.client->talk(b);
}

Result<void> link_set(Ctx& c, Args& a) {
  wire::MessageBuilder b;
  b.begin({RTM_NEWLINK, NLM_F_REQUEST, c.client->next_seq(), 0});
  ifinfomsg ifi{};
  b.put_struct(ifi);
  LinkFlags lf;
  std::string name;
  std::optional<std::uint32_t> group;
  while (!a.done()) {
    std::string w = a.take();
    if (w == "dev") {
      auto v = a.value();
      if (!v) return fail(v.error());
      name = *v;
      continue;
    }
    if (w == "type") {
      auto v = a.value();
      if (!v) return fail(v.error());
      IFCORE_TRY(put_linkinfo(c, b, *v, a, true));
      continue;
    }
    if (w == "group" && name.empty()) {  // `link set group N up`: every device of a group
      auto v = a.value();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "Invalid \"group\" value\n");
      if (!n) return fail(n.error());
      group = *n;
      b.put_u32(IFLA_GROUP, *n);
      continue;
    }
    auto r = put_link_word(c, b, w, a, lf, true);
    if (!r) return fail(r.error());
    if (*r) continue;
    if (!name.empty()) return duparg("dev", w);
    name = w;
  }
  if (!group) {
    if (name.empty()) return die(255, "Not enough information: \"dev\" argument is required.");
    auto idx = dev_index(c, name);
    if (!idx) return fail(idx.error());
    std::int32_t i = *idx;
    b.patch(NLMSG_HDRLEN + offsetof(ifinfomsg, ifi_index), &i, 4);
  }
  patch_flags(b, lf);
  IFCORE_TRY(finish(b));
  if (c.deferred) {
    defer_add(*c.deferred, b.bytes());
    return ok();
  }
  return c.client->talk(b);
}

}  // namespace

Result<std::vector<LinkView>> list_links(Ctx& c, const LinkFilter& f) {
  std::vector<LinkView> out;
  wire::MessageBuilder b(1 << 16);
  int master_idx = 0;
  if (!f.master.empty()) {
    auto idx = c.client->ifindex(f.master);
    if (!idx) return fail(idx.error());
    if (!*idx) return die(1, "Device \"{}\" does not exist.", f.master);
    master_idx = *idx;
  }
  // iproute2's print_linkinfo tests (the kernel has applied master and kind to a dump).
  auto keep = [&](const wire::Message& m) {
    if (m.hdr.nlmsg_type != RTM_NEWLINK) return;
    auto l = read_link(m);
    if (!l) return;
    bool other_master = master_idx && l->m.master.value_or(0) != std::uint32_t(master_idx);
    bool other_kind = !f.kind.empty() && l->m.kind.value_or("") != f.kind;
    // A dump asks the kernel to leave out other masters and kinds (IFLA_MASTER, -1 for
    // nomaster, and IFLA_INFO_KIND): those do not come back at all.
    if (f.name.empty() && (other_master || other_kind || (f.nomaster && l->m.master.value_or(0))))
      return;
    l->hidden = other_master || other_kind || (f.up && !(l->m.flags & IFF_UP)) ||
                (!f.slave_kind.empty() && l->m.slave_kind.value_or("") != f.slave_kind) ||
                (f.group && l->m.group.value_or(0) != *f.group);
    out.push_back(std::move(*l));
  };
  if (!f.name.empty()) {
    auto idx = c.client->ifindex(f.name);
    if (!idx) return fail(idx.error());
    if (!*idx) return die(1, "Device \"{}\" does not exist.", f.name);
    b.begin({RTM_GETLINK, NLM_F_REQUEST, c.client->next_seq(), 0});
    ifinfomsg ifi{};
    ifi.ifi_index = *idx;
    b.put_struct(ifi);
    b.put_u32(IFLA_EXT_MASK, RTEXT_FILTER_VF);
    IFCORE_TRY(finish(b));
    IFCORE_TRY(c.client->talk(b, keep));
    return out;
  }
  b.begin({RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
  ifinfomsg ifi{};
  ifi.ifi_family = std::uint8_t(f.family);
  b.put_struct(ifi);
  b.put_u32(IFLA_EXT_MASK, RTEXT_FILTER_VF);
  if (master_idx) b.put_u32(IFLA_MASTER, std::uint32_t(master_idx));
  if (!f.kind.empty()) {
    auto n = b.begin_nest(IFLA_LINKINFO);
    b.put_string(IFLA_INFO_KIND, f.kind);
    b.end_nest(n);
  }
  IFCORE_TRY(finish(b));
  IFCORE_TRY(c.client->dump(b, keep));
  return out;
}

namespace {

// iproute2's address flag words for filters (get_filter): NAME requires the flag, -NAME
// its absence; `dynamic` is -permanent and `primary` -secondary.
bool take_flag_filter(std::string w, AddrFilter& af) {
  bool inverse = false;
  if (!w.empty() && w[0] == '-') {
    inverse = true;
    w.erase(0, 1);
  }
  if (w == "dynamic") {
    inverse = !inverse;
    w = "permanent";
  } else if (w == "primary") {
    inverse = !inverse;
    w = "secondary";
  }
  static const std::pair<const char*, std::uint32_t> kNames[] = {
      {"secondary", IFA_F_SECONDARY},
      {"temporary", IFA_F_SECONDARY},
      {"nodad", IFA_F_NODAD},
      {"optimistic", IFA_F_OPTIMISTIC},
      {"dadfailed", IFA_F_DADFAILED},
      {"home", IFA_F_HOMEADDRESS},
      {"deprecated", IFA_F_DEPRECATED},
      {"tentative", IFA_F_TENTATIVE},
      {"permanent", IFA_F_PERMANENT},
      {"mngtmpaddr", IFA_F_MANAGETEMPADDR},
      {"noprefixroute", IFA_F_NOPREFIXROUTE},
      {"autojoin", IFA_F_MCAUTOJOIN},
      {"stable-privacy", IFA_F_STABLE_PRIVACY}};
  for (auto [name, bit] : kNames) {
    if (w != name) continue;
    if (inverse)
      af.flags &= ~bit;
    else
      af.flags |= bit;
    af.flag_mask |= bit;
    return true;
  }
  return false;
}

// A scope by the names of iproute2's rt_scopes table, or a number below 256.
std::optional<std::uint8_t> scope_number(const std::string& s) {
  static const std::pair<const char*, std::uint8_t> kScopes[] = {{"global", RT_SCOPE_UNIVERSE},
                                                                 {"site", RT_SCOPE_SITE},
                                                                 {"link", RT_SCOPE_LINK},
                                                                 {"host", RT_SCOPE_HOST},
                                                                 {"nowhere", RT_SCOPE_NOWHERE}};
  for (auto [name, n] : kScopes)
    if (s == name) return n;
  auto n = parse_u32(s, "");
  if (!n || *n > 255) return std::nullopt;
  return std::uint8_t(*n);
}

}  // namespace

// An address protocol (IFAPROT_*) by iproute2's rt_addrprotos names, or a number.
std::optional<std::uint8_t> addr_proto_number(const std::string& s) {
  static const std::pair<const char*, std::uint8_t> kProtos[] = {{"unspec", IFAPROT_UNSPEC},
                                                                 {"kernel_lo", IFAPROT_KERNEL_LO},
                                                                 {"kernel_ra", IFAPROT_KERNEL_RA},
                                                                 {"kernel_ll", IFAPROT_KERNEL_LL}};
  for (auto [name, n] : kProtos)
    if (s == name) return n;
  auto n = parse_u32(s, "");
  if (!n || *n > 255) return std::nullopt;
  return std::uint8_t(*n);
}

bool AddrFilter::selects(const wire::AddrMessage& a, const std::string& dev) const {
  if ((scope ^ a.scope) & scope_mask) return false;
  if ((flags ^ a.all_flags()) & flag_mask) return false;
  if (family && a.family != family) return false;
  if (proto && a.proto && *a.proto != *proto) return false;
  if (label && fnmatch(label->c_str(), (a.label ? *a.label : dev).c_str(), 0) != 0) return false;
  if (to && !to->any && to->len != 0) {
    const IpAddr* local = a.local ? &*a.local : a.address ? &*a.address : nullptr;
    if (!local || local->family() != to->addr.family()) return false;
    int len = to->len < 0 ? int(to->addr.size() * 8) : to->len;
    if (!local->in_prefix(to->addr, len)) return false;
  }
  return true;
}

Result<void> parse_show_filter(Ctx& c, Args& a, LinkFilter& f, AddrFilter& af) {
  while (!a.done()) {
    std::string w = a.take();
    if (w == "to") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto p = prefix_or_exit(*v, c.family == AF_PACKET ? AF_PACKET : af.family);
      if (!p) return fail(p.error());
      af.to = *p;
      if (!af.family && !p->any) af.family = p->addr.family();
    } else if (w == "scope") {
      auto v = a.value();
      if (!v) return fail(v.error());
      af.scope_mask = 0xff;
      if (auto n = scope_number(*v)) {
        af.scope = *n;
      } else {
        if (*v != "all") return invarg("invalid \"scope\"\n", *v);
        af.scope = RT_SCOPE_NOWHERE;
        af.scope_mask = 0;
      }
    } else if (w == "up") {
      f.up = true;
    } else if (take_flag_filter(w, af)) {
    } else if (w == "label") {
      auto v = a.value();
      if (!v) return fail(v.error());
      af.label = *v;
    } else if (w == "group") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto n =
          *v == "default" ? Result<std::uint32_t>(0u) : parse_u32(*v, "Invalid \"group\" value\n");
      if (!n) return fail(n.error());
      f.group = *n;
    } else if (w == "master" || w == "vrf") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto idx = c.client->ifindex(*v);
      if (!idx) return fail(idx.error());
      if (w == "vrf") {
        // iproute2: the device must exist and be a vrf.
        if (!*idx) return invarg("Not a valid VRF name\n", *v);
        auto is = name_is_vrf(c, *v);
        if (!is) return fail(is.error());
        if (!*is) return invarg("Not a valid VRF name\n", *v);
      }
      if (!*idx) return invarg("Device does not exist\n", *v);
      f.master = *v;
    } else if (w == "nomaster") {
      f.nomaster = true;
    } else if (w == "type") {
      auto v = a.value();
      if (!v) return fail(v.error());
      static const std::string kSlave = "_slave";
      if (v->size() >= kSlave.size() &&
          v->compare(v->size() - kSlave.size(), kSlave.size(), kSlave) == 0)
        f.slave_kind = v->substr(0, v->size() - kSlave.size());
      else
        f.kind = *v;
    } else if (w == "proto") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto n = addr_proto_number(*v);
      if (!n) return invarg("\"proto\" value is invalid\n", *v);
      af.proto = *n;
    } else if (w == "novf") {
    } else {
      if (w == "dev") {
        auto v = a.value();
        if (!v) return fail(v.error());
        w = *v;
      }
      if (!f.name.empty()) return duparg("dev", w);
      f.name = w;
    }
  }
  return ok();
}

void print_link_brief_packet(Ctx& c, const LinkView& l) {
  print_link_brief(c, l);
  if (l.m.address) {
    std::string a = ll_addr_text(*l.m.address, l.m.hw_type);
    c.out->kv("address", a, a + " ");
  }
  Json jf = Json::array();
  std::string tf;
  bool mdown =
      l.m.link && *l.m.link && !l.m.link_netnsid && !(c.client->ifflags(int(*l.m.link)) & IFF_UP);
  for (const auto& fl : link_flag_names(l.m.flags, mdown)) {
    jf.push_back(fl);
    tf += (tf.empty() ? "" : ",") + fl;
  }
  c.out->kv("flags", jf, "<" + tf + "> \n");
}

Result<void> link_show(Ctx& c, Args& a) {
  LinkFilter lf;
  AddrFilter af;
  IFCORE_TRY(parse_show_filter(c, a, lf, af));
  auto links = list_links(c, lf);
  if (!links) return fail(links.error());
  c.out->open_array();
  for (const auto& l : *links) {
    c.out->open_object();
    // iproute2's print_linkinfo prints no device when a label is asked for.
    if (af.label || l.hidden) {
    } else if (c.brief) {
      print_link_brief_packet(c, l);
    } else {
      print_link(c, l, true);
    }
    c.out->close();
    c.out->flush();
  }
  c.out->close();
  return ok();
}

// iproute2: check_altifname — not empty, no '/' and no white space.
bool valid_altname(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char ch : s)
    if (ch == '/' || std::isspace(ch)) return false;
  return true;
}

// `ifc link property {add|del} [dev] DEV [altname NAME]...`: RTM_NEWLINKPROP /
// RTM_DELLINKPROP with the names in IFLA_PROP_LIST, the device by index (iproute2:
// iplink_prop, iplink_prop_mod).
Result<void> link_property(Ctx& c, Args& a) {
  if (a.done()) return link_usage();
  std::string op = a.take();
  wire::Header h{0, NLM_F_REQUEST, c.client->next_seq(), 0};
  if (matches(op, "add")) {
    h.type = RTM_NEWLINKPROP;
    h.flags |= NLM_F_EXCL | NLM_F_CREATE | NLM_F_APPEND;
  } else if (matches(op, "del")) {
    h.type = RTM_DELLINKPROP;
  } else if (matches(op, "help")) {
    return link_usage();
  } else {
    return die(255, "Operator required");
  }
  std::vector<std::string> names;
  std::string dev;
  while (!a.done()) {
    std::string w = a.take();
    if (matches(w, "altname")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      if (!valid_altname(*v)) return invarg("not a valid altname", *v);
      names.push_back(*v);
    } else if (matches(w, "help")) {
      return link_usage();
    } else {
      if (w == "dev") {
        auto v = a.value();
        if (!v) return fail(v.error());
        w = *v;
      }
      if (!dev.empty()) return die(255, "Error: duplicate \"dev\": \"{}\" is the second value.", w);
      if (!valid_altname(w)) return invarg("\"dev\" not a valid ifname", w);
      dev = w;
    }
  }
  if (dev.empty()) return die(255, "Not enough of information: \"dev\" argument is required.");
  auto idx = c.client->ifindex(dev);
  if (!idx) return fail(idx.error());
  if (!*idx) return die(1, "Cannot find device \"{}\"", dev);
  wire::MessageBuilder b(1 << 16);
  if (auto e = wire::encode_linkprop(b, h, *idx, names); !e) return die(2, "{}", e.error().message);
  return c.client->talk(b);
}

Result<void> do_link(Ctx& c, Args& a) {
  if (a.done()) return link_show(c, a);
  std::string cmd = a.take();
  if (matches(cmd, "add")) return link_add(c, a);
  if (matches(cmd, "delete")) return link_del(c, a);
  if (matches(cmd, "set") || matches(cmd, "change")) return link_set(c, a);
  if (matches(cmd, "show") || matches(cmd, "list") || matches(cmd, "lst")) return link_show(c, a);
  if (matches(cmd, "property")) return link_property(c, a);
  if (matches(cmd, "help")) return link_usage();
  return die(255, "Command \"{}\" is unknown, try \"ip link help\".", cmd);
}

}  // namespace ifcore::cli
