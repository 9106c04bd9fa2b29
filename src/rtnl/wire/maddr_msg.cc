// rtnl/wire/maddr_msg.cc — encode and decode ifcore's multicast-list message.
#include "rtnl/wire/maddr_msg.h"

#include <net/if.h>  // before any <linux/if*.h>
#include <sys/socket.h>

#include <linux/rtnetlink.h>

#include <cerrno>

#include "rtnl/wire/ifcore_msg.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl {

namespace {

std::uint8_t header_family(const wire::Message& m) {
  auto p = m.payload();
  return p.empty() ? 0 : p[0];
}

}  // namespace

Result<void> encode_maddr_request(wire::MessageBuilder& b, std::uint32_t seq,
                                  const MaddrRequest& req, std::uint16_t extra_flags) {
  b.begin({IFCORE_NLMSG_MADDR, static_cast<std::uint16_t>(NLM_F_REQUEST | extra_flags), seq, 0});
  b.put_struct(rtgenmsg{req.family});
  if (req.op) {
    b.put_u8(IFCORE_MADDR_OP, req.op);
    b.put_string(IFCORE_MADDR_IFNAME, req.ifname);
    b.put_bytes(IFCORE_MADDR_ADDRESS, req.address);
    b.put_u16(IFCORE_MADDR_HWFAMILY, req.hw_family);
  }
  return end_message(b);
}

Result<MaddrRequest> decode_maddr_request(const wire::Message& m) {
  auto attrs = ifcore_msg_attrs(m, IFCORE_NLMSG_MADDR, "multicast-list");
  if (!attrs) return fail(attrs.error());
  MaddrRequest req;
  req.family = header_family(m);
  bool has_name = false, has_address = false;
  for (const wire::RawAttr& a : *attrs) {
    if (a.type == IFCORE_MADDR_OP) {
      auto v = a.u8();
      if (!v) return fail(v.error());
      if (*v != IFCORE_MADDR_ADD && *v != IFCORE_MADDR_DEL)
        return fail(EINVAL, "multicast-list request: unknown op {}", *v);
      req.op = *v;
    } else if (a.type == IFCORE_MADDR_IFNAME) {
      auto s = a.string(IFNAMSIZ - 1);
      if (!s) return fail(s.error());
      req.ifname = std::move(*s);
      has_name = true;
    } else if (a.type == IFCORE_MADDR_ADDRESS) {
      auto v = a.binary(0, kMaddrMaxAddress);
      if (!v) return fail(v.error());
      req.address.assign(v->begin(), v->end());
      has_address = true;
    } else if (a.type == IFCORE_MADDR_HWFAMILY) {
      auto v = a.u16();
      if (!v) return fail(v.error());
      req.hw_family = *v;
    }  // other types: newer clients may add attributes
  }
  if (req.op && (!has_name || !has_address))
    return fail(EINVAL, "multicast-list change without a device or an address");
  return req;
}

Result<void> encode_maddr_entry(wire::MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                const MaddrEntry& e, std::uint16_t flags) {
  b.begin({IFCORE_NLMSG_MADDR, flags, seq, portid});
  b.put_struct(rtgenmsg{e.family});
  b.put_u32(IFCORE_MADDR_IFINDEX, e.ifindex);
  b.put_string(IFCORE_MADDR_IFNAME, e.ifname);
  b.put_bytes(IFCORE_MADDR_ADDRESS, e.address);
  b.put_u32(IFCORE_MADDR_USERS, e.users);
  b.put_u32(IFCORE_MADDR_FLAGS, e.flags);
  return end_message(b);
}

Result<MaddrEntry> decode_maddr_entry(const wire::Message& m) {
  auto attrs = ifcore_msg_attrs(m, IFCORE_NLMSG_MADDR, "multicast-list");
  if (!attrs) return fail(attrs.error());
  MaddrEntry e;
  e.family = header_family(m);
  bool has_index = false, has_address = false;
  for (const wire::RawAttr& a : *attrs) {
    switch (a.type) {
      case IFCORE_MADDR_IFINDEX: {
        auto v = a.u32();
        if (!v) return fail(v.error());
        e.ifindex = *v;
        has_index = true;
        break;
      }
      case IFCORE_MADDR_IFNAME:
        e.ifname = a.as_string();
        break;
      case IFCORE_MADDR_ADDRESS:
        e.address.assign(a.data.begin(), a.data.end());
        has_address = true;
        break;
      case IFCORE_MADDR_USERS:
      case IFCORE_MADDR_FLAGS: {
        auto v = a.u32();
        if (!v) return fail(v.error());
        (a.type == IFCORE_MADDR_USERS ? e.users : e.flags) = *v;
        break;
      }
      default:
        break;
    }
  }
  if (!has_index || !has_address)
    return fail(EINVAL, "multicast-list entry without device or address");
  return e;
}

}  // namespace ifcore::rtnl
