// shim/rtclient.cc — one-shot rtnetlink requests to ifcored (see rtclient.h).
#include "shim/rtclient.h"

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/rtnetlink.h>

#include <cerrno>

#include "rtnl/wire/netlink.h"
#include "shim/sockets.h"

namespace ifcore::shim::rt {

namespace {

// Sends `request` and returns the messages of the replies; an NLMSG_ERROR with an errno
// becomes that error, NLMSG_DONE and ACKs are left out.
Result<std::vector<std::vector<std::uint8_t>>> ask(std::vector<std::uint8_t> request,
                                                   std::vector<wire::Message>* out) {
  auto dgs = transact(request);
  if (!dgs) return fail(dgs.error());
  for (const auto& dg : *dgs) {
    auto msgs = wire::split_messages(dg);
    if (!msgs) return fail(EPROTO, "malformed reply from ifcored");
    for (const wire::Message& m : *msgs) {
      if (m.hdr.nlmsg_type == NLMSG_DONE) continue;
      if (m.hdr.nlmsg_type == NLMSG_ERROR) {
        auto e = wire::decode_error(m);
        if (!e) return fail(EPROTO, "malformed error from ifcored");
        if (e->error) return fail(e->error, "{}", e->message);
        continue;
      }
      out->push_back(m);
    }
  }
  return std::move(*dgs);  // the messages point into these
}

constexpr std::uint16_t kReq = NLM_F_REQUEST;

Result<std::vector<wire::LinkMessage>> get_links(const wire::GetLinkRequest& g,
                                                 std::uint16_t flags) {
  wire::MessageBuilder b;
  IFCORE_TRY(
      wire::encode_getlink(b, {RTM_GETLINK, static_cast<std::uint16_t>(kReq | flags), 0, 0}, g));
  std::vector<wire::Message> msgs;
  auto keep = ask(b.take(), &msgs);
  if (!keep) return fail(keep.error());
  std::vector<wire::LinkMessage> out;
  for (const wire::Message& m : msgs) {
    if (m.hdr.nlmsg_type != RTM_NEWLINK) continue;
    auto l = wire::decode_link_message(m);
    if (l) out.push_back(std::move(*l));
  }
  return out;
}

Result<void> simple(std::vector<std::uint8_t> request) {
  std::vector<wire::Message> msgs;
  auto keep = ask(std::move(request), &msgs);
  if (!keep) return fail(keep.error());
  return ok();
}

}  // namespace

Result<std::vector<wire::LinkMessage>> links() {
  wire::GetLinkRequest g;
  g.dump = true;
  return get_links(g, NLM_F_DUMP);
}

Result<wire::LinkMessage> link_by_name(const std::string& name) {
  wire::GetLinkRequest g;
  g.name = name;
  auto l = get_links(g, 0);
  if (!l) return fail(l.error());
  if (l->empty()) return fail(ENODEV);
  return std::move(l->front());
}

Result<wire::LinkMessage> link_by_index(int ifindex) {
  wire::GetLinkRequest g;
  g.ifindex = ifindex;
  auto l = get_links(g, 0);
  if (!l) return fail(l.error());
  if (l->empty()) return fail(ENODEV);
  return std::move(l->front());
}

Result<std::vector<wire::AddrMessage>> addresses(int family) {
  wire::AddrMessage q;
  q.family = static_cast<std::uint8_t>(family);
  wire::MessageBuilder b;
  IFCORE_TRY(wire::encode_addr(b, {RTM_GETADDR, kReq | NLM_F_DUMP, 0, 0}, q));
  std::vector<wire::Message> msgs;
  auto keep = ask(b.take(), &msgs);
  if (!keep) return fail(keep.error());
  std::vector<wire::AddrMessage> out;
  for (const wire::Message& m : msgs) {
    if (m.hdr.nlmsg_type != RTM_NEWADDR) continue;
    auto a = wire::decode_addr(m);
    if (a) out.push_back(std::move(*a));
  }
  return out;
}

Result<void> set_link(const LinkRequest& req) {
  wire::MessageBuilder b;
  IFCORE_TRY(wire::encode_link_request(b, {RTM_NEWLINK, kReq | NLM_F_ACK, 0, 0}, req));
  return simple(b.take());
}

Result<void> add_address(const wire::AddrMessage& a) {
  wire::MessageBuilder b;
  IFCORE_TRY(
      wire::encode_addr(b, {RTM_NEWADDR, kReq | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, 0, 0}, a));
  return simple(b.take());
}

Result<void> delete_address(const wire::AddrMessage& a) {
  wire::MessageBuilder b;
  IFCORE_TRY(wire::encode_addr(b, {RTM_DELADDR, kReq | NLM_F_ACK, 0, 0}, a));
  return simple(b.take());
}

Result<std::vector<rtnl::MaddrEntry>> multicast_lists(int family) {
  rtnl::MaddrRequest q;
  q.family = static_cast<std::uint8_t>(family);
  wire::MessageBuilder b;
  IFCORE_TRY(rtnl::encode_maddr_request(b, 0, q, NLM_F_DUMP));
  std::vector<wire::Message> msgs;
  auto keep = ask(b.take(), &msgs);
  if (!keep) return fail(keep.error());
  std::vector<rtnl::MaddrEntry> out;
  for (const wire::Message& m : msgs) {
    if (m.hdr.nlmsg_type != rtnl::IFCORE_NLMSG_MADDR) continue;
    auto e = rtnl::decode_maddr_entry(m);
    if (e) out.push_back(std::move(*e));
  }
  return out;
}

Result<void> change_multicast(const std::string& ifname, std::span<const std::uint8_t> sa_data,
                              std::uint16_t sa_family, bool add) {
  rtnl::MaddrRequest q;
  q.op = add ? rtnl::IFCORE_MADDR_ADD : rtnl::IFCORE_MADDR_DEL;
  q.ifname = ifname;
  q.address.assign(sa_data.begin(), sa_data.end());
  q.hw_family = sa_family;
  wire::MessageBuilder b;
  IFCORE_TRY(rtnl::encode_maddr_request(b, 0, q, NLM_F_ACK));
  return simple(b.take());
}

}  // namespace ifcore::shim::rt
