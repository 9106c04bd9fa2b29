// cli/link_cmd.cc — `ifc link add|delete|set|show`: words to RTM_NEWLINK / RTM_DELLINK /
// RTM_GETLINK, replies to text or JSON.
#include <net/if.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "cli/commands.h"
#include "cli/link_print.h"
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
      IFCORE_TRY(put_linkinfo(c, b, *v, a));
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
    Result<void> bad = ok();
    IFCORE_TRY(c.client->talk(b, [&](const wire::Message& m) {
      auto l = read_link(m);
      if (l) out.push_back(std::move(*l));
    }));
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
  IFCORE_TRY(c.client->dump(b, [&](const wire::Message& m) {
    if (m.hdr.nlmsg_type != RTM_NEWLINK) return;
    auto l = read_link(m);
    if (!l) return;
    if (master_idx && l->m.master.value_or(0) != std::uint32_t(master_idx)) return;
    if (!f.kind.empty() && l->m.kind.value_or("") != f.kind) return;
    if (f.up && !(l->m.flags & IFF_UP)) return;
    if (f.group && l->m.group.value_or(0) != *f.group) return;
    out.push_back(std::move(*l));
  }));
  return out;
}

Result<LinkFilter> parse_link_filter(Args& a) {
  LinkFilter f;
  while (!a.done()) {
    std::string w = a.take();
    if (w == "type") {
      auto v = a.value();
      if (!v) return fail(v.error());
      f.kind = *v;
    } else if (w == "master") {
      auto v = a.value();
      if (!v) return fail(v.error());
      f.master = *v;
    } else if (w == "up") {
      f.up = true;
    } else if (w == "group") {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto n = parse_u32(*v, "Invalid \"group\" value\n");
      if (!n) return fail(n.error());
      f.group = *n;
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
  return f;
}

Result<void> link_show(Ctx& c, Args& a) {
  auto f = parse_link_filter(a);
  if (!f) return fail(f.error());
  auto links = list_links(c, *f);
  if (!links) return fail(links.error());
  c.out->open_array();
  for (const auto& l : *links) {
    c.out->open_object();
    if (c.brief) {
      print_link_brief(c, l);
      std::string addr = l.m.address ? l.m.address->to_string() : "";
      if (l.m.address) c.out->kv("address", addr, "");
      std::string t = addr;
      if (t.size() < 17) t.append(17 - t.size(), ' ');
      c.out->text(t + " ");
      Json jf = Json::array();
      std::string tf;
      bool mdown = l.m.link && *l.m.link && !l.m.link_netnsid &&
                   !(c.client->ifflags(int(*l.m.link)) & IFF_UP);
      for (const auto& fl : link_flag_names(l.m.flags, mdown)) {
        jf.push_back(fl);
        tf += (tf.empty() ? "" : ",") + fl;
      }
      c.out->kv("flags", jf, "<" + tf + "> \n");
    } else {
      print_link(c, l, true);
    }
    c.out->close();
    c.out->flush();
  }
  c.out->close();
  return ok();
}

Result<void> do_link(Ctx& c, Args& a) {
  if (a.done()) return link_show(c, a);
  std::string cmd = a.take();
  if (matches(cmd, "add")) return link_add(c, a);
  if (matches(cmd, "delete")) return link_del(c, a);
  if (matches(cmd, "set") || matches(cmd, "change")) return link_set(c, a);
  if (matches(cmd, "show") || matches(cmd, "list") || matches(cmd, "lst")) return link_show(c, a);
  if (matches(cmd, "help"))
    return die(255,
               "Usage: ip link add [link DEV] [ name ] NAME type TYPE [ ARGS ]\n"
               "       ip link delete {{ DEVICE | group GROUP }}\n"
               "       ip link set {{ DEVICE | group GROUP }} [ up | down ] [ mtu MTU ] ...\n"
               "       ip link show [ DEVICE | type KIND | master DEV ]");
  return die(255, "Command \"{}\" is unknown, try \"ip link help\".", cmd);
}

}  // namespace ifcore::cli
