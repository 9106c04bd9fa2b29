#include "rtnl/wire/ifcore_msg.h"

#include <linux/rtnetlink.h>

#include <cerrno>

namespace ifcore::rtnl {

Result<std::vector<wire::RawAttr>> ifcore_msg_attrs(const wire::Message& m, std::uint16_t type,
                                                    std::string_view what) {
  constexpr std::size_t kHead = NLMSG_ALIGN(sizeof(rtgenmsg));
  if (m.hdr.nlmsg_type != type) return fail(EINVAL, "not an ifcore {} message", what);
  if (m.payload().size() < kHead) return fail(EINVAL, "{} message is truncated", what);
  return wire::parse_raw_attrs(m.payload().subspan(kHead), static_cast<int>(NLMSG_HDRLEN + kHead));
}

Result<void> end_message(wire::MessageBuilder& b) {
  auto r = b.end();
  if (!r) return fail(r.error());
  return ok();
}

}  // namespace ifcore::rtnl
