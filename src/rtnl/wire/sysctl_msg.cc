// rtnl/wire/sysctl_msg.cc — encode and decode ifcore's sysctl message; sysctl names and values.
#include "rtnl/wire/sysctl_msg.h"

#include <sys/socket.h>

#include <linux/rtnetlink.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <vector>

#include "rtnl/wire/ifcore_msg.h"
#include "rtnl/wire/raw_attrs.h"

namespace ifcore::rtnl {

namespace {

// The value: may be empty (a write of nothing), at most kSysctlMaxValue bytes.
Result<std::string> value_of(const wire::RawAttr& a) {
  std::string v = a.as_string();
  if (v.size() > kSysctlMaxValue)
    return wire::fail_at(a.offset, ERANGE, "sysctl value of {} bytes exceeds {}", v.size(),
                         kSysctlMaxValue);
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    std::size_t i = s.find(sep);
    parts.push_back(s.substr(0, i));
    if (i == std::string_view::npos) return parts;
    s.remove_prefix(i + 1);
  }
}

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

}  // namespace

Result<void> encode_sysctl_request(wire::MessageBuilder& b, std::uint32_t seq,
                                   const SysctlRequest& req, std::uint16_t extra_flags) {
  b.begin({IFCORE_NLMSG_SYSCTL, static_cast<std::uint16_t>(NLM_F_REQUEST | extra_flags), seq, 0});
  b.put_struct(rtgenmsg{AF_UNSPEC});
  b.put_string(IFCORE_SYSCTL_NAME, req.name);
  if (req.value) b.put_string(IFCORE_SYSCTL_VALUE, *req.value);
  if (req.was) b.put_string(IFCORE_SYSCTL_WAS, *req.was);
  return end_message(b);
}

Result<SysctlRequest> decode_sysctl_request(const wire::Message& m) {
  auto attrs = ifcore_msg_attrs(m, IFCORE_NLMSG_SYSCTL, "sysctl");
  if (!attrs) return fail(attrs.error());
  SysctlRequest req;
  for (const wire::RawAttr& a : *attrs) {
    if (a.type == IFCORE_SYSCTL_NAME) {
      auto s = a.string(kSysctlMaxName);
      if (!s) return fail(s.error());
      req.name = std::move(*s);
    } else if (a.type == IFCORE_SYSCTL_VALUE) {
      auto v = value_of(a);
      if (!v) return fail(v.error());
      req.value = std::move(*v);
    }  // other types: newer clients may add attributes
  }
  if (req.name.empty()) return fail(EINVAL, "sysctl request names no setting");
  return req;
}

Result<void> encode_sysctl_reply(wire::MessageBuilder& b, std::uint32_t seq, std::uint32_t portid,
                                 const SysctlReply& r) {
  b.begin({IFCORE_NLMSG_SYSCTL, 0, seq, portid});
  b.put_struct(rtgenmsg{AF_UNSPEC});
  b.put_string(IFCORE_SYSCTL_NAME, r.name);
  b.put_string(IFCORE_SYSCTL_VALUE, r.value);
  return end_message(b);
}

Result<SysctlReply> decode_sysctl_reply(const wire::Message& m) {
  auto attrs = ifcore_msg_attrs(m, IFCORE_NLMSG_SYSCTL, "sysctl");
  if (!attrs) return fail(attrs.error());
  SysctlReply r;
  bool has_name = false, has_value = false;
  for (const wire::RawAttr& a : *attrs) {
    if (a.type == IFCORE_SYSCTL_NAME) {
      r.name = a.as_string();
      has_name = true;
    } else if (a.type == IFCORE_SYSCTL_VALUE) {
      r.value = a.as_string();
      has_value = true;
    }
  }
  if (!has_name || !has_value) return fail(EINVAL, "sysctl reply without name or value");
  return r;
}

Result<SysctlName> parse_sysctl_name(std::string_view name) {
  // The form is set by the first separator, as sysctl(8) reads it.
  std::size_t dot = name.find('.'), slash = name.find('/');
  bool dotted = dot < slash;
  auto parts = split(name, dotted ? '.' : '/');
  // A namespace's own setting (net.ipv4.fib_multipath_hash_policy): no scope.
  if (parts.size() == 3 && parts[0] == "net" && (parts[1] == "ipv4" || parts[1] == "ipv6") &&
      !parts[2].empty()) {
    SysctlName n;
    n.family = parts[1] == "ipv4" ? AF_INET : AF_INET6;
    n.key = std::string(parts[2]);
    return n;
  }
  if (parts.size() != 5 || parts[0] != "net" || parts[2] != "conf" || parts[3].empty() ||
      parts[4].empty() || (parts[1] != "ipv4" && parts[1] != "ipv6"))
    return fail(ENOENT, "unknown setting \"{}\"", name);
  SysctlName n;
  n.family = parts[1] == "ipv4" ? AF_INET : AF_INET6;
  n.scope = std::string(parts[3]);
  if (dotted) std::replace(n.scope.begin(), n.scope.end(), '/', '.');
  n.key = std::string(parts[4]);
  return n;
}

std::string sysctl_name(const SysctlName& n) {
  if (n.scope.empty())
    return "net." + std::string(n.family == AF_INET ? "ipv4" : "ipv6") + "." + n.key;
  std::string scope = n.scope;
  std::replace(scope.begin(), scope.end(), '.', '/');
  return "net." + std::string(n.family == AF_INET ? "ipv4" : "ipv6") + ".conf." + scope + "." +
         n.key;
}

std::string sysctl_path(const SysctlName& n) {
  if (n.scope.empty())
    return "net/" + std::string(n.family == AF_INET ? "ipv4" : "ipv6") + "/" + n.key;
  return "net/" + std::string(n.family == AF_INET ? "ipv4" : "ipv6") + "/conf/" + n.scope + "/" +
         n.key;
}

Result<int> parse_sysctl_int(std::string_view text) {
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  int v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || (text.front() == '+' && digits.front() == '-') || ec != std::errc() ||
      end != digits.data() + digits.size())
    return fail(EINVAL, "\"{}\" is not an integer", text);
  return v;
}

}  // namespace ifcore::rtnl
