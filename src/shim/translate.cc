// shim/translate.cc — namespace references in requests, from descriptors and pids to names.
#include "shim/translate.h"

#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/if_link.h>
#include <linux/magic.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <span>
#include <string>

#include "rtnl/wire/link.h"
#include "rtnl/wire/nsid.h"
#include "shim/sockets.h"

namespace ifcore::shim {

namespace {

using Bytes = std::vector<std::uint8_t>;
using Span = std::span<const std::uint8_t>;

// Rewrites one attribute: appends its replacement to `out` and returns true, or returns
// false to keep it as it is.
using AttrFn = std::function<Result<bool>(std::uint16_t type, Span payload, Bytes& out)>;

void put_attr(Bytes& out, std::uint16_t type, Span payload) {
  nlattr a{static_cast<std::uint16_t>(NLA_HDRLEN + payload.size()), type};
  std::size_t at = out.size();
  out.resize(at + NLA_ALIGN(a.nla_len));
  std::memcpy(out.data() + at, &a, sizeof(a));
  if (!payload.empty()) std::memcpy(out.data() + at + NLA_HDRLEN, payload.data(), payload.size());
}

void put_u32(Bytes& out, std::uint16_t type, std::uint32_t v) {
  put_attr(out, type, Span(reinterpret_cast<const std::uint8_t*>(&v), sizeof v));
}

void put_string(Bytes& out, std::uint16_t type, const std::string& s) {
  put_attr(out, type, Span(reinterpret_cast<const std::uint8_t*>(s.c_str()), s.size() + 1));
}

// Walks `attrs`, copying each attribute or its rewrite; malformed tails are copied as
// they are (ifcored answers them). Sets `changed` when anything was rewritten.
Result<Bytes> rewrite_attrs(Span attrs, const AttrFn& fn, bool& changed) {
  Bytes out;
  out.reserve(attrs.size() + 32);
  std::size_t off = 0;
  while (off + NLA_HDRLEN <= attrs.size()) {
    nlattr a;
    std::memcpy(&a, attrs.data() + off, sizeof(a));
    if (a.nla_len < NLA_HDRLEN || off + a.nla_len > attrs.size()) break;
    Span payload = attrs.subspan(off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN);
    auto r = fn(static_cast<std::uint16_t>(a.nla_type & NLA_TYPE_MASK), payload, out);
    if (!r) return fail(r.error());
    if (*r) {
      changed = true;
    } else {
      std::size_t at = out.size();
      out.resize(at + NLA_ALIGN(a.nla_len));
      std::memcpy(out.data() + at, attrs.data() + off, a.nla_len);
    }
    off += NLA_ALIGN(a.nla_len);
  }
  if (off < attrs.size()) out.insert(out.end(), attrs.begin() + off, attrs.end());
  return out;
}

std::optional<std::uint32_t> u32_of(Span p) {
  if (p.size() != 4) return std::nullopt;
  std::uint32_t v;
  std::memcpy(&v, p.data(), 4);
  return v;
}

Result<std::string> checked(Result<std::string> name) {
  if (!name) return name;
  IFCORE_TRY(ensure_namespace(*name));
  return name;
}

// The link attributes of a request or of a veth's peer (after its ifinfomsg).
Result<Bytes> rewrite_link_attrs(Span attrs, std::uint64_t netns, bool& changed);

Result<bool> rewrite_link_attr(std::uint16_t type, Span p, Bytes& out, std::uint64_t netns,
                               std::string& kind) {
  if (type == IFLA_NET_NS_FD || type == IFLA_NET_NS_PID) {
    auto v = u32_of(p);
    if (!v) return false;  // ifcored answers the bad length
    auto name = checked(type == IFLA_NET_NS_FD ? namespace_of_fd(static_cast<int>(*v), netns)
                                               : namespace_of_pid(*v, netns));
    // A reference that does not resolve goes to ifcored as its errno, answered as Linux
    // answers it (an error reply, not a failed send).
    if (!name &&
        (name.error().code == ESRCH || name.error().code == EINVAL || name.error().code == EBADF)) {
      put_u32(out, wire::IFCORE_IFLA_NET_NS_ERRNO, static_cast<std::uint32_t>(name.error().code));
      return true;
    }
    if (!name) return fail(name.error());
    put_string(out, wire::IFCORE_IFLA_NET_NS_NAME, *name);
    return true;
  }
  if (type != IFLA_LINKINFO) return false;
  // IFLA_LINKINFO { IFLA_INFO_KIND "veth", IFLA_INFO_DATA { VETH_INFO_PEER ifinfomsg + attrs } }
  bool inner_changed = false;
  auto info = rewrite_attrs(
      p,
      [&](std::uint16_t t, Span q, Bytes& o) -> Result<bool> {
        if (t == IFLA_INFO_KIND)
          kind.assign(reinterpret_cast<const char*>(q.data()),
                      strnlen(reinterpret_cast<const char*>(q.data()), q.size()));
        if (t != IFLA_INFO_DATA || kind != "veth") return false;
        auto data = rewrite_attrs(
            q,
            [&](std::uint16_t u, Span r, Bytes& o2) -> Result<bool> {
              if (u != VETH_INFO_PEER || r.size() < sizeof(ifinfomsg)) return false;
              bool peer_changed = false;
              auto peer = rewrite_link_attrs(r.subspan(sizeof(ifinfomsg)), netns, peer_changed);
              if (!peer) return fail(peer.error());
              if (!peer_changed) return false;
              Bytes body(r.begin(), r.begin() + sizeof(ifinfomsg));
              body.insert(body.end(), peer->begin(), peer->end());
              put_attr(o2, u, body);
              return true;
            },
            inner_changed);
        if (!data) return fail(data.error());
        if (!inner_changed) return false;
        put_attr(o, t, *data);
        return true;
      },
      inner_changed);
  if (!info) return fail(info.error());
  if (!inner_changed) return false;
  put_attr(out, type, *info);
  return true;
}

Result<Bytes> rewrite_link_attrs(Span attrs, std::uint64_t netns, bool& changed) {
  std::string kind;
  return rewrite_attrs(
      attrs,
      [&](std::uint16_t t, Span p, Bytes& o) { return rewrite_link_attr(t, p, o, netns, kind); },
      changed);
}

Result<Bytes> rewrite_nsid_attrs(Span attrs, std::uint64_t netns, bool& changed) {
  return rewrite_attrs(
      attrs,
      [&](std::uint16_t t, Span p, Bytes& o) -> Result<bool> {
        if (t != NETNSA_FD && t != NETNSA_PID) return false;
        auto v = u32_of(p);
        if (!v) return false;
        auto name = checked(t == NETNSA_FD ? namespace_of_fd(static_cast<int>(*v), netns)
                                           : namespace_of_pid(*v, netns));
        if (!name) return fail(name.error());
        put_string(o, wire::IFCORE_NETNSA_NAME, *name);
        return true;
      },
      changed);
}

// Rewrites one message (header included) into `out`; false when it needs nothing.
Result<bool> rewrite_message(Span msg, std::uint64_t netns, Bytes& out) {
  nlmsghdr h;
  std::memcpy(&h, msg.data(), sizeof(h));
  std::size_t fixed = 0;
  bool link = h.nlmsg_type == RTM_NEWLINK || h.nlmsg_type == RTM_SETLINK;
  bool nsid =
      h.nlmsg_type == RTM_NEWNSID || h.nlmsg_type == RTM_GETNSID || h.nlmsg_type == RTM_DELNSID;
  if (link)
    fixed = NLMSG_ALIGN(sizeof(ifinfomsg));
  else if (nsid)
    fixed = NLMSG_ALIGN(sizeof(rtgenmsg));
  else
    return false;
  if (msg.size() < NLMSG_HDRLEN + fixed) return false;
  Span attrs = msg.subspan(NLMSG_HDRLEN + fixed);
  bool changed = false;
  auto body =
      link ? rewrite_link_attrs(attrs, netns, changed) : rewrite_nsid_attrs(attrs, netns, changed);
  if (!body) return fail(body.error());
  if (!changed) return false;
  h.nlmsg_len = static_cast<std::uint32_t>(NLMSG_HDRLEN + fixed + body->size());
  std::size_t at = out.size();
  out.resize(at + NLMSG_HDRLEN + fixed);
  std::memcpy(out.data() + at, &h, sizeof(h));
  std::memcpy(out.data() + at + NLMSG_HDRLEN, msg.data() + NLMSG_HDRLEN, fixed);
  out.insert(out.end(), body->begin(), body->end());
  out.resize(at + NLMSG_ALIGN(h.nlmsg_len));
  return true;
}

Result<std::string> namespace_of_stat(const char* what, int rc, const struct stat& st, bool is_nsfs,
                                      std::uint64_t netns, int err) {
  if (rc != 0 || !is_nsfs) return fail(err, "{} is not a network namespace", what);
  return namespace_for_inode(st.st_ino, netns);
}

}  // namespace

Result<std::string> namespace_of_fd(int fd, std::uint64_t daemon_netns) {
  struct stat st {};
  struct statfs fs {};
  int rc = fstat(fd, &st);
  bool nsfs = rc == 0 && fstatfs(fd, &fs) == 0 && fs.f_type == NSFS_MAGIC;
  return namespace_of_stat("descriptor", rc, st, nsfs, daemon_netns, EINVAL);
}

Result<std::string> namespace_of_pid(std::uint32_t pid, std::uint64_t daemon_netns) {
  std::string path = "/proc/" + std::to_string(pid) + "/ns/net";
  struct stat st {};
  int rc = stat(path.c_str(), &st);
  return namespace_of_stat("pid", rc, st, rc == 0, daemon_netns, ESRCH);
}

Result<void> ensure_namespace(const std::string& ns) {
  if (ns == "default") return ok();
  // An empty GETLINK of lo... any request will do: the connection's control exchange
  // makes the namespace; this reads nothing of it.
  struct {
    nlmsghdr h;
    rtgenmsg g;
  } req{};
  req.h.nlmsg_len = NLMSG_LENGTH(sizeof(rtgenmsg));
  req.h.nlmsg_type = NLMSG_NOOP;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  auto r =
      transact_in(ns, true, Span(reinterpret_cast<const std::uint8_t*>(&req), req.h.nlmsg_len));
  if (!r) return fail(r.error());
  return ok();
}

Result<void> translate_request(std::vector<std::uint8_t>& dg, std::uint64_t daemon_netns) {
  // Fast path: nothing to do unless a message is of a type that can carry a reference.
  bool any = false;
  for (std::size_t off = 0; off + NLMSG_HDRLEN <= dg.size();) {
    nlmsghdr h;
    std::memcpy(&h, dg.data() + off, sizeof(h));
    if (h.nlmsg_len < NLMSG_HDRLEN || off + h.nlmsg_len > dg.size()) break;
    any |= h.nlmsg_type == RTM_NEWLINK || h.nlmsg_type == RTM_SETLINK ||
           h.nlmsg_type == RTM_NEWNSID || h.nlmsg_type == RTM_GETNSID ||
           h.nlmsg_type == RTM_DELNSID;
    off += NLMSG_ALIGN(h.nlmsg_len);
  }
  if (!any) return ok();
  Bytes out;
  out.reserve(dg.size() + 64);
  bool changed = false;
  std::size_t off = 0;
  while (off + NLMSG_HDRLEN <= dg.size()) {
    nlmsghdr h;
    std::memcpy(&h, dg.data() + off, sizeof(h));
    if (h.nlmsg_len < NLMSG_HDRLEN || off + h.nlmsg_len > dg.size()) break;
    Span msg(dg.data() + off, h.nlmsg_len);
    auto r = rewrite_message(msg, daemon_netns, out);
    if (!r) return fail(r.error());
    if (*r) {
      changed = true;
    } else {
      std::size_t end = std::min(dg.size(), off + NLMSG_ALIGN(h.nlmsg_len));
      out.insert(out.end(), dg.begin() + off, dg.begin() + end);
      out.resize(out.size() + (NLMSG_ALIGN(h.nlmsg_len) - (end - off)));
    }
    off += NLMSG_ALIGN(h.nlmsg_len);
  }
  if (!changed) return ok();
  if (off < dg.size()) out.insert(out.end(), dg.begin() + off, dg.end());
  dg = std::move(out);
  return ok();
}

}  // namespace ifcore::shim
