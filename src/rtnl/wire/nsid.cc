// rtnl/wire/nsid.cc — rtgenmsg + NETNSA_* <-> NsidMessage.
#include "rtnl/wire/nsid.h"

#include <cerrno>

#include "rtnl/wire/field.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

Result<NsidMessage> decode_nsid(const Message& m) {
  NsidMessage n;
  auto p = m.payload();
  if (p.empty()) {
    if (m.is_dump()) return n;
    return fail(EINVAL, "rtgenmsg payload too short (0 bytes, need 1)");
  }
  n.family = p[0];
  std::size_t start = std::min<std::size_t>(NLMSG_ALIGN(sizeof(rtgenmsg)), p.size());
  auto attrs = parse_raw_attrs(p.subspan(start), static_cast<int>(NLMSG_HDRLEN + start));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& x : *attrs) {
    switch (x.type) {
      case NETNSA_NSID:
        IFCORE_TRY(set_field(n.nsid, x.s32()));
        break;
      case NETNSA_PID:
        IFCORE_TRY(set_field(n.pid, x.u32()));
        break;
      case NETNSA_FD:
        IFCORE_TRY(set_field(n.fd, x.u32()));
        break;
      case NETNSA_TARGET_NSID:
        IFCORE_TRY(set_field(n.target_nsid, x.s32()));
        break;
      case NETNSA_CURRENT_NSID:
        IFCORE_TRY(set_field(n.current_nsid, x.s32()));
        break;
      case IFCORE_NETNSA_NAME:
        IFCORE_TRY(set_field(n.name, x.string(255)));
        break;
      default:
        break;
    }
  }
  return n;
}

Result<void> encode_nsid(MessageBuilder& b, const Header& h, const NsidMessage& n) {
  b.begin(h);
  rtgenmsg g{};
  g.rtgen_family = n.family;
  b.put_struct(g);
  if (n.nsid) b.put_s32(NETNSA_NSID, *n.nsid);
  if (n.pid) b.put_u32(NETNSA_PID, *n.pid);
  if (n.fd) b.put_u32(NETNSA_FD, *n.fd);
  if (n.target_nsid) b.put_s32(NETNSA_TARGET_NSID, *n.target_nsid);
  if (n.current_nsid) b.put_s32(NETNSA_CURRENT_NSID, *n.current_nsid);
  if (n.name) b.put_string(IFCORE_NETNSA_NAME, *n.name);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

}  // namespace ifcore::wire
