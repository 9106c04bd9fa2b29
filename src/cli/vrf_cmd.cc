// cli/vrf_cmd.cc — vrf devices as iproute2 6.1 sees them: `type vrf table TABLE` for link
// add (iplink_vrf.c's words), the table of a vrf named in `route ... vrf NAME`, `link show
// vrf NAME` and `neigh ... vrf NAME` (ipvrf_get_table, name_is_vrf), and `ifc vrf show
// [NAME]` (ipvrf.c). `ip vrf exec`, `identify` and `pids` bind processes to a vrf through
// cgroups and a BPF program: they are not ifc's, and say so.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cstring>

#include "cli/commands.h"
#include "cli/link_print.h"
#include "cli/vrf.h"

namespace ifcore::cli {
namespace {

constexpr const char* kVrfUsage = "Usage: ... vrf table TABLEID";

// The device `name` as one RTM_GETLINK answers it; nullopt when there is none (`err`: why).
Result<std::optional<LinkView>> get_link(Ctx& c, const std::string& name, int& err) {
  wire::MessageBuilder b;
  b.begin({RTM_GETLINK, NLM_F_REQUEST, c.client->next_seq(), 0});
  ifinfomsg ifi{};
  ifi.ifi_family = static_cast<unsigned char>(c.family);
  b.put_struct(ifi);
  b.put_string(IFLA_IFNAME, name);
  err = ENODEV;
  if (auto e = b.end(); !e) return std::optional<LinkView>{};
  std::optional<LinkView> got;
  std::string ext;
  IFCORE_TRY(c.client->talk_raw(
      b,
      [&](const wire::Message& m) {
        if (m.hdr.nlmsg_type != RTM_NEWLINK) return;
        if (auto l = read_link(m)) got = std::move(*l);
      },
      err, ext));
  return err ? std::optional<LinkView>{} : got;
}

// IFLA_VRF_TABLE of a vrf's link message, 0 when it is no vrf or has none.
std::uint32_t table_of(const LinkView& l) {
  if (l.m.kind.value_or("") != "vrf" || !l.has_info_data) return 0;
  auto attrs = wire::parse_raw_attrs(l.info_data, 0);
  if (!attrs) return 0;
  const wire::RawAttr* t = wire::find_raw(*attrs, IFLA_VRF_TABLE);
  std::uint32_t v = 0;
  if (t && t->data.size() == sizeof v) std::memcpy(&v, t->data.data(), sizeof v);
  return v;
}

Result<void> vrf_show(Ctx& c, Args& a) {
  if (a.left() > 1) return vrf_usage();
  if (a.left() == 1) {
    // iproute2: one vrf is printed with printf, whatever the output mode.
    std::string name = a.take();
    auto t = vrf_table(c, name);
    if (!t) return fail(t.error());
    if (!*t) return die(255, "Invalid VRF");
    c.out->text(fmt::format("{} {}\n", name, *t));
    return ok();
  }
  wire::MessageBuilder b;
  b.begin({RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
  ifinfomsg ifi{};
  ifi.ifi_family = static_cast<unsigned char>(c.family);
  b.put_struct(ifi);
  b.put_u32(IFLA_EXT_MASK, RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS);
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  std::vector<std::pair<std::string, std::uint32_t>> vrfs;
  auto r = c.client->dump(b, [&](const wire::Message& m) {
    auto l = read_link(m);
    if (!l) return;
    if (std::uint32_t t = table_of(*l)) vrfs.emplace_back(l->m.name, t);
  });
  if (!r) return die(1, "{}\nDump terminated", r.error().message);
  c.out->open_array();
  c.out->text(fmt::format("{:<16}  {:>5}\n", "Name", "Table"));
  c.out->text("-----------------------\n");
  for (const auto& [name, table] : vrfs) {
    c.out->open_object();
    c.out->kv("name", name, fmt::format("{:<16}", name));
    c.out->kv("table", table, fmt::format(" {:>5}", table));
    c.out->text("\n");
    c.out->close();
  }
  if (vrfs.empty()) c.out->text("No VRF has been configured\n");
  c.out->close();
  return ok();
}

}  // namespace

tl::unexpected<Error> vrf_usage() {
  return die(255,
             "Usage:\tip vrf show [NAME] ...\n"
             "\tip vrf exec [NAME] cmd ...\n"
             "\tip vrf identify [PID]\n"
             "\tip vrf pids [NAME]");
}

Result<std::uint32_t> vrf_table(Ctx& c, const std::string& name) {
  // iproute2: ipvrf_get_table — "default", when no device has that name, is table main.
  int err = 0;
  auto l = get_link(c, name, err);
  if (!l) return fail(l.error());
  if (!*l) return err == ENODEV && name == "default" ? RT_TABLE_MAIN : 0u;
  return table_of(**l);
}

Result<bool> name_is_vrf(Ctx& c, const std::string& name) {
  // iproute2: name_is_vrf — the device's kind is vrf.
  int err = 0;
  auto l = get_link(c, name, err);
  if (!l) return fail(l.error());
  return *l && (*l)->m.kind.value_or("") == "vrf";
}

Result<void> parse_vrf(wire::MessageBuilder& b, Args& a) {
  // iproute2: vrf_parse_opt — `table` takes a number or a name of rt_tables.
  auto data = b.begin_nest(IFLA_INFO_DATA);
  while (!a.done()) {
    std::string w = a.take();
    if (matches(w, "table")) {
      auto v = a.value();
      if (!v) return fail(v.error());
      auto t = table_number(*v);
      if (!t) return invarg("invalid table ID\n", *v);
      b.put_u32(IFLA_VRF_TABLE, *t);
    } else if (matches(w, "help")) {
      return die(1, "{}", kVrfUsage);
    } else {
      return die(1, "vrf: unknown option \"{}\"?\n{}", w, kVrfUsage);
    }
  }
  b.end_nest(data);
  return ok();
}

Result<void> do_vrf(Ctx& c, Args& a) {
  if (a.done()) return vrf_show(c, a);
  std::string w = a.take();
  if (matches(w, "identify") || matches(w, "pids") || matches(w, "exec"))
    return die(1, "Command \"{}\" needs cgroups and BPF: it is not implemented by ifc.", w);
  if (matches(w, "show") || matches(w, "lst") || matches(w, "list")) return vrf_show(c, a);
  if (matches(w, "help")) return vrf_usage();
  return die(255, "Command \"{}\" is unknown, try \"ip vrf help\".", w);
}

}  // namespace ifcore::cli
