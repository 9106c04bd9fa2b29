// rtnl/wire/control_msg.cc — ifcore's control message, the overflow datagram, the nsid mark.
#include "rtnl/wire/control_msg.h"

#include <cerrno>
#include <cstring>

#include "rtnl/wire/ifcore_msg.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl {

namespace {

Result<std::vector<wire::RawAttr>> control_attrs(const wire::Message& m) {
  if (m.hdr.nlmsg_type != IFCORE_NLMSG_CONTROL)
    return fail(EINVAL, "not an ifcore control message");
  return wire::parse_raw_attrs(m.payload(), static_cast<int>(NLMSG_HDRLEN));
}

}  // namespace

Result<void> encode_control_request(wire::MessageBuilder& b, std::uint32_t seq,
                                    const ControlRequest& req, std::uint16_t extra_flags) {
  b.begin({IFCORE_NLMSG_CONTROL, static_cast<std::uint16_t>(NLM_F_REQUEST | extra_flags), seq, 0});
  if (req.ns) b.put_string(IFCORE_CTRL_NAMESPACE, *req.ns);
  if (req.port_id) b.put_u32(IFCORE_CTRL_PORT_ID, *req.port_id);
  if (req.groups) b.put_u32(IFCORE_CTRL_GROUPS, *req.groups);
  for (auto g : req.add_membership) b.put_u32(IFCORE_CTRL_ADD_MEMBERSHIP, g);
  for (auto g : req.drop_membership) b.put_u32(IFCORE_CTRL_DROP_MEMBERSHIP, g);
  for (auto [name, value] : req.options) {
    std::uint32_t v[2] = {name, value};
    b.put_attr(IFCORE_CTRL_OPTION, v, sizeof(v));
  }
  if (req.ring) b.put_u32(IFCORE_CTRL_RING, *req.ring);
  if (req.netns_inode) b.put_u64(IFCORE_CTRL_NETNS_INODE, *req.netns_inode);
  if (req.create) b.put_attr(IFCORE_CTRL_CREATE, nullptr, 0);
  if (req.quiet) b.put_attr(IFCORE_CTRL_QUIET, nullptr, 0);
  return end_message(b);
}

Result<ControlRequest> decode_control_request(const wire::Message& m) {
  auto attrs = control_attrs(m);
  if (!attrs) return fail(attrs.error());
  ControlRequest req;
  for (const wire::RawAttr& a : *attrs) {
    switch (a.type) {
      case IFCORE_CTRL_NAMESPACE: {
        auto s = a.string(255);
        if (!s) return fail(s.error());
        req.ns = *s;
        break;
      }
      case IFCORE_CTRL_PORT_ID:
      case IFCORE_CTRL_GROUPS:
      case IFCORE_CTRL_ADD_MEMBERSHIP:
      case IFCORE_CTRL_DROP_MEMBERSHIP:
      case IFCORE_CTRL_RING: {
        auto v = a.u32();
        if (!v) return fail(v.error());
        if (a.type == IFCORE_CTRL_RING) req.ring = *v;
        if (a.type == IFCORE_CTRL_PORT_ID) req.port_id = *v;
        if (a.type == IFCORE_CTRL_GROUPS) req.groups = *v;
        if (a.type == IFCORE_CTRL_ADD_MEMBERSHIP) req.add_membership.push_back(*v);
        if (a.type == IFCORE_CTRL_DROP_MEMBERSHIP) req.drop_membership.push_back(*v);
        break;
      }
      case IFCORE_CTRL_OPTION: {
        auto v = a.binary(8, 8);
        if (!v) return fail(v.error());
        std::uint32_t p[2];
        std::memcpy(p, v->data(), sizeof(p));
        req.options.emplace_back(p[0], p[1]);
        break;
      }
      case IFCORE_CTRL_NETNS_INODE: {
        auto v = a.u64();
        if (!v) return fail(v.error());
        req.netns_inode = *v;
        break;
      }
      case IFCORE_CTRL_CREATE:
      case IFCORE_CTRL_QUIET:
        if (!a.data.empty())
          return wire::fail_at(a.offset, EINVAL, "attribute type {}: a flag carries no payload",
                               a.type);
        (a.type == IFCORE_CTRL_CREATE ? req.create : req.quiet) = true;
        break;
      default:
        return wire::fail_at(a.offset, EINVAL, "unknown attribute type {}", a.type);
    }
  }
  return req;
}

Result<void> encode_control_state(wire::MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                  const ControlState& st) {
  b.begin({IFCORE_NLMSG_CONTROL, 0, seq, portid});
  b.put_string(IFCORE_CTRL_NAMESPACE, st.ns);
  b.put_u32(IFCORE_CTRL_PORT_ID, st.port_id);
  b.put_u32(IFCORE_CTRL_GROUPS, st.groups);
  b.put_u8(IFCORE_CTRL_MAY_WRITE, st.may_write ? 1 : 0);
  if (st.ring) b.put_u32(IFCORE_CTRL_RING, st.ring);
  if (st.netns_inode) b.put_u64(IFCORE_CTRL_NETNS_INODE, st.netns_inode);
  return end_message(b);
}

Result<ControlState> decode_control_state(const wire::Message& m) {
  auto attrs = control_attrs(m);
  if (!attrs) return fail(attrs.error());
  ControlState st;
  for (const wire::RawAttr& a : *attrs) {
    if (a.type == IFCORE_CTRL_NAMESPACE) {
      st.ns = a.as_string();
    } else if (a.type == IFCORE_CTRL_PORT_ID || a.type == IFCORE_CTRL_GROUPS ||
               a.type == IFCORE_CTRL_RING) {
      auto v = a.u32();
      if (!v) return fail(v.error());
      (a.type == IFCORE_CTRL_PORT_ID  ? st.port_id
       : a.type == IFCORE_CTRL_GROUPS ? st.groups
                                      : st.ring) = *v;
    } else if (a.type == IFCORE_CTRL_NETNS_INODE) {
      auto v = a.u64();
      if (!v) return fail(v.error());
      st.netns_inode = *v;
    } else if (a.type == IFCORE_CTRL_MAY_WRITE) {
      auto v = a.u8();
      if (!v) return fail(v.error());
      st.may_write = *v != 0;
    }
  }
  return st;
}

std::vector<std::uint8_t> overflow_datagram() {
  nlmsghdr bare{};
  bare.nlmsg_len = NLMSG_HDRLEN;
  bare.nlmsg_type = IFCORE_NLMSG_CONTROL;
  std::vector<std::uint8_t> req(NLMSG_HDRLEN);
  std::memcpy(req.data(), &bare, sizeof(bare));
  wire::MessageBuilder b;
  // Capped: only the bare header is echoed, whatever the client's options.
  (void)wire::encode_error(b, req, 0, ENOBUFS, {}, -1, wire::AckOptions{true, false});
  return b.take();
}

bool is_overflow_datagram(std::span<const std::uint8_t> datagram) {
  static const std::vector<std::uint8_t> kOverflow = overflow_datagram();
  return datagram.size() == kOverflow.size() &&
         std::memcmp(datagram.data(), kOverflow.data(), kOverflow.size()) == 0;
}

std::array<std::uint8_t, kNsidPrefixSize> nsid_prefix(std::int32_t nsid) {
  std::array<std::uint8_t, kNsidPrefixSize> out{};
  nlmsghdr h{};
  h.nlmsg_len = kNsidPrefixSize;
  h.nlmsg_type = IFCORE_NLMSG_NSID;
  std::memcpy(out.data(), &h, sizeof(h));
  std::memcpy(out.data() + NLMSG_HDRLEN, &nsid, sizeof(nsid));
  return out;
}

std::optional<std::int32_t> nsid_of_prefix(std::span<const std::uint8_t> datagram) {
  if (datagram.size() < kNsidPrefixSize) return std::nullopt;
  nlmsghdr h;
  std::memcpy(&h, datagram.data(), sizeof(h));
  if (h.nlmsg_type != IFCORE_NLMSG_NSID || h.nlmsg_len != kNsidPrefixSize) return std::nullopt;
  std::int32_t id;
  std::memcpy(&id, datagram.data() + NLMSG_HDRLEN, sizeof(id));
  return id;
}

}  // namespace ifcore::rtnl
