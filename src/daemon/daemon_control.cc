// daemon/daemon_control.cc — ifcore's control message (daemon/loop.h): a client picks its
// namespace (made for it if asked), port id, groups and socket options, and may switch to
// mapped rings; errors are answered as NLMSG_ERROR.
#include "daemon/loop.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ifcore/rtnl.h"
#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/ring.h"

namespace ifcore::daemon {

std::uint32_t Loop::pick_port(pid_t pid) {
  // Linux: netlink_autobind tries the process id first, then negative numbers.
  std::uint32_t p = static_cast<std::uint32_t>(pid);
  if (p == 0 || ports_.count(p)) {
    do p = next_port_++;
    while (ports_.count(p) || p == 0);
  }
  return p;
}

Result<void> Loop::open_session(Client& c, const std::string& ns, std::uint32_t port) {
  rtnl::SessionOptions o;
  o.ns = ns;
  bool owns = false;
  if (auto owner = ns_owner_.find(ns);
      owner != ns_owner_.end() && owner->second.uid == c.cred.uid) {
    Namespace* n = engine_.control().find_namespace(ns);
    owns = n && n->id() == owner->second.ns_id;
  }
  o.may_write = c.may_write || owns;
  o.may_write_elsewhere = c.may_write;
  o.port_id = port;
  o.max_queued = cfg_.max_queued;
  o.max_queued_bytes = cfg_.max_queued_bytes;
  o.datagram_size = cfg_.datagram_size;
  o.dump_chunk_bytes = cfg_.dump_part_bytes;
  auto s = server_.open_session(o);
  if (!s) return fail(s.error());
  int efd = efd_;
  std::atomic<bool>* pending = &wake_pending_;
  (*s)->set_wakeup([efd, pending] {
    if (pending->exchange(true, std::memory_order_acq_rel)) return;  // a wakeup is on its way
    std::uint64_t one = 1;
    (void)!write(efd, &one, sizeof(one));
  });
  // Replay what the client asked of its previous session.
  (*s)->set_group_mask(static_cast<std::uint32_t>(c.groups));
  for (unsigned g = 33; g <= 64; ++g)
    if ((c.groups >> (g - 1)) & 1) (*s)->add_membership(g);
  for (auto [name, value] : c.options)
    (*s)->set_option(static_cast<int>(name), static_cast<int>(value));
  c.session = std::move(*s);
  c.session_may_write = o.may_write;
  c.ns = ns;
  c.port_id = port;
  return ok();
}

wire::AckOptions Loop::ack_options(const Client& c) const {
  auto on = [&c](std::uint32_t name) {
    auto it = c.options.find(name);
    return it != c.options.end() && it->second != 0;
  };
  wire::AckOptions ack;
  ack.cap_ack = on(NETLINK_CAP_ACK);
  ack.ext_ack = on(NETLINK_EXT_ACK);
  return ack;
}

void Loop::answer_error(Client& c, std::span<const std::uint8_t> request, const Error& e,
                        const wire::AckOptions& ack) {
  wire::MessageBuilder b;
  if (wire::encode_error(b, request, c.port_id, e, ack)) c.out.push_back(b.take());
}

void Loop::handle_control(Client& c, std::span<const std::uint8_t> dg) {
  wire::AckOptions ack = ack_options(c);  // errors are answered as the options were
  auto msgs = wire::split_messages(dg);
  if (!msgs || msgs->size() != 1) {
    // A control message that does not parse is answered, not dropped: the client waits for
    // its reply. The error echoes the datagram's first header.
    Error e = msgs ? Error{EINVAL, "a control message must be alone in its datagram"}
                   : Error{EINVAL, "malformed control message: " + msgs.error().message};
    return answer_error(c, dg, e, ack);
  }
  const wire::Message& m = (*msgs)[0];
  auto answer = [&](const Error& e) { answer_error(c, m.bytes, e, ack); };
  auto req = rtnl::decode_control_request(m);
  if (!req) return answer(req.error());
  // The rings are made first, so that a refusal changes nothing.
  std::optional<rtnl::MappedRings> rings;
  if (req->ring) {
    if (c.ring) return answer(Error{EBUSY, "the connection uses mapped rings already"});
    auto r = rtnl::MappedRings::create(*req->ring ? *req->ring : rtnl::kRingDefaultSize);
    if (!r) return answer(r.error());
    rings.emplace(std::move(*r));
  }
  std::string ns = req->ns.value_or(c.ns);
  if (req->netns_inode && own_netns_ && *req->netns_inode == own_netns_) ns = "default";
  std::uint32_t port = c.port_id;
  if (req->port_id && *req->port_id != c.port_id) {
    if (*req->port_id == 0 || ports_.count(*req->port_id))
      return answer(Error{EADDRINUSE, fmt::format("port id {} is in use", *req->port_id)});
    port = *req->port_id;
  }
  // Made last among the checks, so that a refused request makes no namespace.
  if (req->create && ns != c.ns) {
    auto ctl = engine_.control();
    if (!ctl.find_namespace(ns)) {
      auto made = ctl.create_namespace(ns);
      if (!made) return answer(made.error());
      ns_owner_[ns] = Owner{c.cred.uid, (*made)->id()};
    }
  }
  if (req->groups) c.groups = (c.groups & ~std::uint64_t{0xffffffff}) | *req->groups;
  for (auto g : req->add_membership)
    if (g >= 1 && g <= 64) c.groups |= std::uint64_t{1} << (g - 1);
  for (auto g : req->drop_membership)
    if (g >= 1 && g <= 64) c.groups &= ~(std::uint64_t{1} << (g - 1));
  for (auto [name, value] : req->options) {
    if (name == NETLINK_ADD_MEMBERSHIP && value >= 1 && value <= 64)
      c.groups |= std::uint64_t{1} << (value - 1);
    else if (name == NETLINK_DROP_MEMBERSHIP && value >= 1 && value <= 64)
      c.groups &= ~(std::uint64_t{1} << (value - 1));
    else
      c.options[name] = value;
  }
  if (ns != c.ns || port != c.port_id) {
    std::uint32_t old = c.port_id;
    auto r = open_session(c, ns, port);
    if (!r) return answer(r.error());
    ports_.erase(old);
    ports_.insert(port);
  } else {
    // Same session: apply the changes in place.
    c.session->set_group_mask(static_cast<std::uint32_t>(c.groups));
    for (unsigned g = 33; g <= 64; ++g)
      ((c.groups >> (g - 1)) & 1) ? c.session->add_membership(g) : c.session->drop_membership(g);
    for (auto [name, value] : c.options)
      c.session->set_option(static_cast<int>(name), static_cast<int>(value));
  }
  ack = ack_options(c);
  rtnl::ControlState st{c.port_id,
                        c.ns,
                        static_cast<std::uint32_t>(c.groups),
                        c.session_may_write,
                        c.ring  ? c.ring->size()
                        : rings ? rings->size()
                                : 0,
                        own_netns_};
  if (req->quiet && !rings) {
    if (m.hdr.nlmsg_flags & NLM_F_ACK) answer(Error{});
    return;
  }
  wire::MessageBuilder b;
  if (!rtnl::encode_control_state(b, m.hdr.nlmsg_seq, c.port_id, st)) return;
  if (rings) return switch_to_rings(c, m, b.take(), std::move(*rings));
  c.out.push_back(b.take());
  if (m.hdr.nlmsg_flags & NLM_F_ACK) answer(Error{});
}

void Loop::switch_to_rings(Client& c, const wire::Message& req, rtnl::Datagram state,
                           rtnl::MappedRings rings) {
  // The reply carries the ring file (SCM_RIGHTS) and goes on the socket after every earlier
  // datagram; from the next datagram on, everything for the client goes through the rings.
  auto answer = [&](const Error& e) { answer_error(c, req.bytes, e, ack_options(c)); };
  settle();
  flush(c);
  if (!c.out.empty())
    return answer(Error{EAGAIN, "the connection's socket is full: read it, then ask again"});
  if (auto r = rtnl::send_with_fd(c.fd, state, rings.fd(), MSG_DONTWAIT | MSG_NOSIGNAL); !r)
    return answer(Error{r.error().code, "cannot pass the ring file: " + r.error().message});
  if (req.hdr.nlmsg_flags & NLM_F_ACK) {
    answer(Error{});
    flush(c);
  }
  c.ring.emplace(std::move(rings));
  ring_fds_.insert(c.fd);
  update_events(c);
}

}  // namespace ifcore::daemon
