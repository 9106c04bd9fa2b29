// tests/fuzz/fuzz_wire.cc — the wire decoder alone: one input is one datagram as a client
// (or the kernel, for the CLI) sends it. Every message of it goes through every decoder of
// src/rtnl/wire/ and of ifcore's own messages whatever its type, the attribute walkers go
// over its payload with every kind's policy, and whatever decodes is encoded again.
//
// Contract under test: untrusted bytes give a value or an Error, never a crash, a read
// outside the input, a leak or undefined behaviour (docs/WIRE.md).
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ifcore/ifcore.h"
#include "rtnl/wire/address.h"
#include "rtnl/wire/attrs.h"
#include "rtnl/wire/bulk.h"
#include "rtnl/wire/bulk_create.h"
#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/neigh.h"
#include "rtnl/wire/netconf.h"
#include "rtnl/wire/netlink.h"
#include "rtnl/wire/nexthop.h"
#include "rtnl/wire/nsid.h"
#include "rtnl/wire/probe_msg.h"
#include "rtnl/wire/raw_attrs.h"
#include "rtnl/wire/route.h"
#include "rtnl/wire/rule.h"
#include "rtnl/wire/stats_msg.h"
#include "rtnl/wire/sysctl_msg.h"

namespace ifcore::fuzz {
namespace {

using Bytes = std::span<const std::uint8_t>;

struct KindPolicies {
  std::vector<std::pair<std::string, AttrPolicy>> data, slave;
};

// The kinds' attribute policies, taken once from an engine with the built-in kinds (the
// engine only lends its tables: nothing here calls it per input). Never freed: it lives
// as long as the process.
const KindPolicies& policies() {
  static const KindPolicies* p = [] {
    static Engine* engine = make_engine().release();
    auto* out = new KindPolicies;
    auto ctl = engine->control();
    for (const char* k : {"dummy", "veth", "vlan", "macvlan", "macvtap", "bridge", "vxlan", "vrf",
                          "ipip", "gre", "gretap", "loopback"}) {
      const Kind* kind = ctl.find_kind(k);
      if (!kind) continue;
      out->data.emplace_back(k, kind->policy());
      out->slave.emplace_back(k, kind->slave_policy());
    }
    return out;
  }();
  return *p;
}

wire::DecodeContext context() {
  wire::DecodeContext c;
  c.kind_policy = [](std::string_view kind, bool slave) -> std::optional<AttrPolicy> {
    for (const auto& [name, policy] : slave ? policies().slave : policies().data)
      if (name == kind) return policy;
    return std::nullopt;
  };
  return c;
}

// Walks attributes and their nests as a tolerant reader would, to a bounded depth.
void walk(Bytes bytes, int base, int depth) {
  auto list = wire::parse_raw_attrs(bytes, base);
  if (!list) return;
  if (auto w = wire::walk_attrs(bytes, base))
    for (wire::RawAttr a : *w) (void)a.u8();
  for (const wire::RawAttr& a : *list) {
    (void)a.u8(), (void)a.u16(), (void)a.u32(), (void)a.u64(), (void)a.be16(), (void)a.be32();
    (void)a.string(), (void)a.string(15), (void)a.as_string(), (void)a.binary(4, 16);
    (void)wire::find_raw(*list, a.type);
    if (depth < wire::kMaxNestDepth + 2) walk(a.data, a.offset + NLA_HDRLEN, depth + 1);
  }
}

wire::Header header_of(const wire::Message& m) {
  return {m.hdr.nlmsg_type, m.hdr.nlmsg_flags, m.hdr.nlmsg_seq, m.hdr.nlmsg_pid};
}

void decode_everything(const wire::Message& m, const wire::DecodeContext& ctx) {
  const wire::Header h = header_of(m);
  wire::MessageBuilder b;
  if (auto r = wire::decode_link_request(m, ctx)) {
    b.cancel();
    (void)wire::encode_link_request(b, h, r->req);
  }
  if (auto r = wire::decode_link_message(m, ctx)) {
    b.cancel();
    (void)wire::encode_link_message(b, h, *r);
  }
  if (auto r = wire::decode_getlink(m)) {
    b.cancel();
    (void)wire::encode_getlink(b, h, *r);
  }
  if (auto r = wire::decode_linkprop(m))
    for (const wire::RawAttr& e : r->props) (void)wire::linkprop_alt_name(e);
  if (auto r = wire::decode_addr(m)) {
    b.cancel();
    (void)wire::encode_addr(b, h, *r);
  }
  if (auto r = wire::decode_route(m)) {
    b.cancel();
    (void)wire::encode_route(b, h, *r);
  }
  if (auto r = wire::decode_neigh(m)) {
    b.cancel();
    (void)wire::encode_neigh(b, h, *r);
    b.cancel();
    (void)wire::encode_fdb(b, h, *r);
  }
  if (auto r = wire::decode_nexthop(m)) {
    b.cancel();
    (void)wire::encode_nexthop(b, h, *r);
  }
  if (auto r = wire::decode_rule(m)) {
    b.cancel();
    (void)wire::encode_rule(b, h, *r);
  }
  if (auto r = wire::decode_nsid(m)) {
    b.cancel();
    (void)wire::encode_nsid(b, h, *r);
  }
  if (auto r = wire::decode_netconf(m)) {
    b.cancel();
    (void)wire::encode_netconf(b, h, *r);
  }
  for (int family : {AF_UNSPEC, AF_INET, AF_INET6, AF_MPLS})
    for (bool strict : {false, true}) (void)wire::decode_netconf_get(m, family, strict);
  (void)wire::check_netconf_dump(m, AF_INET);
  if (auto r = wire::decode_bulk_delete(m); r && *r) {
    b.cancel();
    (void)wire::encode_bulk_delete(b, h, **r);
  }
  if (auto r = wire::decode_bulk_create(m, ctx); r && *r) {
    std::vector<wire::BulkLinkRequest> items;
    for (auto& it : (*r)->items) items.push_back({std::move(it.link.req), std::move(it.addrs)});
    b.cancel();
    (void)wire::encode_bulk_create(b, h, items);
  }
  if (auto r = wire::decode_bulk_result(m)) {
    b.cancel();
    (void)wire::encode_bulk_result(b, h.seq, h.pid, *r);
  }
  (void)wire::decode_error(m);
  (void)wire::decode_done(m);
  for (bool cap : {false, true})
    for (bool ext : {false, true}) {
      b.cancel();
      (void)wire::encode_error(b, m.bytes, 1, EINVAL, "bad", 20, {cap, ext});
    }
  (void)wire::ack_datagram(m.bytes, 1);

  // ifcore's own messages (docs/WIRE.md).
  if (auto r = rtnl::decode_control_request(m)) {
    b.cancel();
    (void)rtnl::encode_control_request(b, h.seq, *r);
  }
  if (auto r = rtnl::decode_control_state(m)) {
    b.cancel();
    (void)rtnl::encode_control_state(b, h.seq, h.pid, *r);
  }
  if (auto r = rtnl::decode_probe_request(m)) {
    b.cancel();
    (void)rtnl::encode_probe_request(b, h.seq, *r);
  }
  if (auto r = rtnl::decode_probe_reply(m)) {
    b.cancel();
    (void)rtnl::encode_probe_reply(b, h.seq, h.pid, *r);
  }
  if (auto r = rtnl::decode_sysctl_request(m)) {
    b.cancel();
    (void)rtnl::encode_sysctl_request(b, h.seq, *r);
    (void)rtnl::parse_sysctl_name(r->name);
  }
  if (auto r = rtnl::decode_sysctl_reply(m)) {
    b.cancel();
    (void)rtnl::encode_sysctl_reply(b, h.seq, h.pid, *r);
  }
  (void)rtnl::decode_stats_reply(m);

  // The payload after every family header size, as attributes: plain walks and the
  // kinds' policies (what IFLA_INFO_DATA of each kind goes through).
  Bytes payload = m.payload();
  for (std::size_t fixed : {0, 4, 8, 12, 16}) {
    if (payload.size() < fixed) break;
    Bytes attrs = payload.subspan(fixed);
    int base = static_cast<int>(NLMSG_HDRLEN + fixed);
    walk(attrs, base, 0);
    if (fixed != 0) continue;
    for (const auto& [name, policy] : policies().data)
      if (auto r = wire::decode_attrs(attrs, policy, base, ctx)) {
        b.begin(h);
        (void)wire::encode_attrs(b, *r);
        (void)b.end();
      }
    for (const auto& [name, policy] : policies().slave)
      (void)wire::decode_attrs(attrs, policy, base, ctx);
  }
}

}  // namespace
}  // namespace ifcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ifcore;
  std::span<const std::uint8_t> datagram(data, size);
  (void)wire::only_message(datagram);
  (void)rtnl::is_overflow_datagram(datagram);
  auto msgs = wire::split_messages(datagram);
  if (!msgs) return 0;
  const wire::DecodeContext ctx = fuzz::context();
  for (const wire::Message& m : *msgs) fuzz::decode_everything(m, ctx);
  return 0;
}
