// cli/addrlabel_cmd.cc — `ifc addrlabel { add | del } prefix PREFIX [ dev DEV ] label LABEL`,
// `ifc addrlabel [ list | flush | help ]`: the IPv6 address label table, in the words,
// requests and output of iproute2's ipaddrlabel.c.
#include <sys/socket.h>

#include <linux/if_addrlabel.h>
#include <linux/rtnetlink.h>

#include "cli/commands.h"
#include "rtnl/wire/addrlabel.h"

namespace ifcore::cli {
namespace {

// iproute2's print_addrlabel: "prefix ADDR/LEN [dev NAME] [label N]", each word followed by
// a blank; in JSON address, prefixlen, ifname, label.
void print_addrlabel(Ctx& c, const wire::Message& m) {
  if (m.hdr.nlmsg_type != RTM_NEWADDRLABEL && m.hdr.nlmsg_type != RTM_DELADDRLABEL) return;
  auto l = wire::decode_addrlabel(m);
  if (!l) return;
  Out& o = *c.out;
  o.open_object();
  if (m.hdr.nlmsg_type == RTM_DELADDRLABEL) o.kv("deleted", true, "Deleted ");
  if (l->address) {
    auto a = IpAddr::from_bytes(l->family, *l->address);
    std::string host = a ? a->to_string() : "???";
    o.text("prefix ");
    o.kv("address", host, host);
    o.kv("prefixlen", l->prefix_len, fmt::format("/{} ", l->prefix_len));
  }
  if (l->ifindex) {
    std::string dev = c.client->ifname(static_cast<int>(l->ifindex));
    o.text("dev ");
    o.kv("ifname", dev, dev + " ");
  }
  if (l->label) o.kv("label", *l->label, fmt::format("label {} ", *l->label));
  o.close();
  o.text("\n");
}

// iproute2 asks for the table of the family given (-4, -6), IPv6's without one.
// A refused dump: "WHAT terminated" and the status ip exits with.
Result<void> dump_table(Ctx& c, const MsgFn& cb, const char* what, int status) {
  wire::MessageBuilder b;
  b.begin({RTM_GETADDRLABEL, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0});
  ifaddrlblmsg ifal{};
  ifal.ifal_family = static_cast<std::uint8_t>(c.family ? c.family : AF_INET6);
  b.put_struct(ifal);
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  auto r = c.client->dump(b, cb);
  if (!r) return die(status, "{}\n{} terminated", r.error().message, what);
  return ok();
}

Result<void> addrlabel_list(Ctx& c, Args& a) {
  if (!a.done()) return die(1, "\"ip addrlabel show\" does not take any arguments.");
  c.out->open_array();
  auto r = dump_table(
      c, [&](const wire::Message& m) { print_addrlabel(c, m); }, "Dump", 255);
  c.out->close();
  return r;
}

// iproute2 deletes each entry the dump gives, as it comes, by sending it back as
// RTM_DELADDRLABEL; the first refusal ends the flush.
Result<void> addrlabel_flush(Ctx& c, Args& a) {
  if (!a.done()) return die(1, "\"ip addrlabel flush\" does not allow extra arguments");
  std::vector<std::vector<std::uint8_t>> entries;
  IFCORE_TRY(dump_table(
      c,
      [&](const wire::Message& m) {
        auto l = wire::decode_addrlabel(m);
        if (l && l->address) entries.emplace_back(m.payload().begin(), m.payload().end());
      },
      "Flush", 1));
  for (const auto& body : entries) {
    wire::MessageBuilder b;
    b.begin({RTM_DELADDRLABEL, NLM_F_REQUEST, c.client->next_seq(), 0});
    b.put_raw(body.data(), body.size());
    if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
    if (auto r = c.client->talk(b); !r) return die(1, "{}\nFlush terminated", r.error().message);
  }
  return ok();
}

// iproute2's ipaddrlabel_modify: words it does not know are skipped; the label comes before
// the address in the request, which holds the prefix's bytes as parsed (4 for IPv4).
Result<void> addrlabel_modify(Ctx& c, Args& a, std::uint16_t type) {
  std::optional<Prefix> prefix;
  std::optional<std::uint32_t> label;
  std::uint32_t ifindex = 0;
  while (!a.done()) {
    std::string w = a.take();
    if (w != "prefix" && w != "dev" && w != "label") continue;
    auto value = a.value();
    if (!value) return fail(value.error());
    if (w == "prefix") {
      auto p = prefix_or_exit(*value, c.family);
      if (!p) return fail(p.error());
      prefix = *p;
    } else if (w == "dev") {
      auto idx = c.client->ifindex(*value);
      if (!idx) return fail(idx.error());
      if (*idx <= 0) return invarg("dev is invalid\n", *value);
      ifindex = static_cast<std::uint32_t>(*idx);
    } else {
      auto v = parse_u32(*value, "label is invalid\n");
      if (!v || *v == 0xffffffffu) return invarg("label is invalid\n", *value);
      label = *v;
    }
  }
  if (!prefix) return die(1, "Not enough information: \"prefix\" argument is required.");
  if (!label) return die(1, "Not enough information: \"label\" argument is required.");
  wire::MessageBuilder b;
  std::uint16_t flags = NLM_F_REQUEST;
  if (type == RTM_NEWADDRLABEL) flags |= NLM_F_CREATE | NLM_F_EXCL;
  b.begin({type, flags, c.client->next_seq(), 0});
  ifaddrlblmsg ifal{};
  ifal.ifal_family = static_cast<std::uint8_t>(c.family ? c.family : AF_INET6);
  ifal.ifal_prefixlen = static_cast<std::uint8_t>(
      prefix->len >= 0 ? prefix->len : static_cast<int>(prefix->addr.bytes().size() * 8));
  ifal.ifal_index = ifindex;
  b.put_struct(ifal);
  b.put_u32(IFAL_LABEL, *label);
  b.put_attr(IFAL_ADDRESS, prefix->addr.data(), prefix->addr.bytes().size());
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  return c.client->talk(b);
}

}  // namespace

Result<void> do_addrlabel(Ctx& c, Args& a) {
  if (a.done()) return addrlabel_list(c, a);
  std::string cmd = a.take();
  if (matches(cmd, "list") || matches(cmd, "lst") || matches(cmd, "show"))
    return addrlabel_list(c, a);
  if (matches(cmd, "add")) return addrlabel_modify(c, a, RTM_NEWADDRLABEL);
  if (matches(cmd, "delete")) return addrlabel_modify(c, a, RTM_DELADDRLABEL);
  if (matches(cmd, "flush")) return addrlabel_flush(c, a);
  if (matches(cmd, "help"))
    return die(255,
               "Usage: ip addrlabel {{ add | del }} prefix PREFIX [ dev DEV ] [ label LABEL ]\n"
               "       ip addrlabel [ list | flush | help ]");
  return die(255, "Command \"{}\" is unknown, try \"ip addrlabel help\".", cmd);
}

}  // namespace ifcore::cli
