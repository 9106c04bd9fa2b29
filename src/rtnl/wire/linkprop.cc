// rtnl/wire/linkprop.cc — RTM_NEWLINKPROP / RTM_DELLINKPROP requests <-> values.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstring>

#include "rtnl/wire/link.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

constexpr std::size_t kIfinfoLen = NLMSG_ALIGN(sizeof(ifinfomsg));
constexpr std::size_t kMaxAltName = ALTIFNAMSIZ - 1;  // Linux: ifla_policy[IFLA_ALT_IFNAME]

Result<void> set_string(std::optional<std::string>& field, const RawAttr& a, std::size_t max) {
  auto v = a.string_view(max);
  if (!v) return fail(v.error());
  field.emplace(*v);
  return ok();
}

}  // namespace

Result<LinkPropRequest> decode_linkprop(const Message& m) {
  auto p = m.payload();
  if (p.size() < sizeof(ifinfomsg))
    return fail(EINVAL, "ifinfomsg payload too short ({} bytes, need {})", p.size(),
                sizeof(ifinfomsg));
  LinkPropRequest r;
  ifinfomsg ifi;
  std::memcpy(&ifi, p.data(), sizeof(ifi));
  r.ifindex = ifi.ifi_index;
  auto attrs = parse_raw_attrs(p.subspan(std::min(kIfinfoLen, p.size())),
                               static_cast<int>(NLMSG_HDRLEN + kIfinfoLen));
  if (!attrs) return fail(attrs.error());
  for (const RawAttr& a : *attrs) {
    switch (a.type) {
      case IFLA_IFNAME:
        IFCORE_TRY(set_string(r.name, a, IFNAMSIZ - 1));
        break;
      case IFLA_ALT_IFNAME:
        IFCORE_TRY(set_string(r.alt_name, a, kMaxAltName));
        break;
      case IFLA_NET_NS_PID:
      case IFLA_NET_NS_FD:
        // Linux: rtnl_ensure_unique_netns(tb, extack, true).
        return fail(EOPNOTSUPP, "specified netns attribute not supported");
      case IFLA_PROP_LIST: {
        // Linux: ifla_policy's NLA_NESTED — empty, or at least one attribute header.
        if (!a.data.empty() && a.data.size() < NLA_HDRLEN)
          return fail_policy(a.offset, ErrorPolicy{NL_ATTR_TYPE_NESTED});
        auto inner = parse_nested(a);
        if (!inner) return fail(inner.error());
        r.has_prop_list = true;
        r.props = std::move(*inner);
        break;
      }
      default:
        break;
    }
  }
  return r;
}

Result<std::string> linkprop_alt_name(const RawAttr& entry) {
  auto v = entry.string_view(kMaxAltName);
  if (!v) return fail(v.error());
  return std::string(*v);
}

Result<void> encode_linkprop(MessageBuilder& b, const Header& h, int ifindex,
                             const std::vector<std::string>& alt_names) {
  b.begin(h);
  ifinfomsg ifi{};
  ifi.ifi_index = ifindex;
  b.put_struct(ifi);
  std::size_t props = b.begin_nest(NLA_F_NESTED | IFLA_PROP_LIST);
  for (const std::string& n : alt_names) b.put_string(IFLA_ALT_IFNAME, n);
  b.end_nest(props);
  auto e = b.end();
  if (!e) return fail(e.error());
  return ok();
}

}  // namespace ifcore::wire
