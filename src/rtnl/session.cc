// rtnl/session.cc — one client's conversation: socket options, multicast membership, the
// bounded notification queue, and the dispatcher that splits a datagram into messages and
// answers each as Linux's netlink_rcv_skb + rtnetlink_rcv_msg do (ACKs, errors, dumps).
//
// Lock order: 1. control lock (taken by the handlers), 2. Hub::mu_, 3. SessionImpl::qmu_.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/hub.h"
#include "rtnl/wire/control_msg.h"
#include "rtnl/wire/maddr_msg.h"
#include "rtnl/wire/probe_msg.h"
#include "rtnl/wire/stats_msg.h"
#include "rtnl/wire/sysctl_msg.h"

namespace ifcore::rtnl {

// ---- request scope

ScopeGuard::ScopeGuard(Request& r, Control& ctl, int ns_id) : r_(r) {
  scope_.origin = &r.s;
  scope_.ns_id = ns_id;
  scope_.echo = (r.flags() & NLM_F_ECHO) != 0;
  scope_.seq = r.seq();
  scope_.port = r.port();
  r.s.hub().scope = &scope_;
}

ScopeGuard::~ScopeGuard() {
  r_.s.hub().scope = nullptr;
  flush_echo();
}

void ScopeGuard::flush_echo() {
  for (Datagram& d : scope_.echoed) r_.out.send_alone(std::move(d));
  scope_.echoed.clear();
}

Result<Namespace*> session_ns(Control& ctl, const SessionImpl& s) {
  Namespace* ns = ctl.find_namespace_by_id(s.ns_id());
  if (!ns) return fail(ENOENT, "namespace \"{}\" no longer exists", s.options().ns);
  return ns;
}

namespace {

// Linux 6.18 registers RTM_GETLINK, and RTM_GETADDR and RTM_GETROUTE of IPv4, with
// RTNL_FLAG_DUMP_SPLIT_NLM_DONE: their dumps end with NLMSG_DONE in a datagram of its own
// (older clients looked for it there); other dumps (IPv6's) put it behind the last message.
// A request of no family (AF_UNSPEC) is served by the IPv4 handler first.
bool done_travels_alone(const Request& r) {
  std::uint16_t type = r.m.hdr.nlmsg_type;
  if (type == RTM_GETLINK) return true;
  // Linux: rtnl_dump_all (a netconf dump of no family, or of one without netconf) ends
  // alone too; the families' own dumps do not.
  if (type == RTM_GETNETCONF) {
    auto p = r.m.payload();
    std::uint8_t family = p.empty() ? AF_UNSPEC : p[0];
    return family != AF_INET && family != AF_INET6;
  }
  if (type != RTM_GETADDR && type != RTM_GETROUTE) return false;
  auto p = r.m.payload();
  std::uint8_t family = p.empty() ? AF_UNSPEC : p[0];
  return family == AF_INET || family == AF_UNSPEC;
}

}  // namespace

void end_dump(Request& r, int error, std::uint16_t flags) {
  if (done_travels_alone(r)) r.out.flush();
  (void)emit(r.out, [&](wire::MessageBuilder& b) {
    return wire::encode_done(b, r.seq(), r.port(), error, flags);
  });
  r.out.flush();
  r.done = true;
}

Result<void> start_dump(Request& r, std::unique_ptr<DumpRest> rest) {
  Result<bool> more = rest->next(r);
  if (!more) return fail(more.error());
  if (*more) {
    r.rest = std::move(rest);
    r.done = true;  // no ACK: the last part ends the exchange
  }
  return ok();
}

void end_dump_error(Request& r, const Error& e) {
  r.out.flush();
  (void)emit(r.out, [&](wire::MessageBuilder& b) {
    return wire::encode_done_ext(b, r.seq(), r.port(), -e.code, e.log_only ? "" : e.message,
                                 r.s.ack_options());
  });
  r.out.flush();
  r.done = true;
}

// ---- session

SessionImpl::SessionImpl(std::shared_ptr<Hub> hub, SessionOptions opts, int ns_id)
    : hub_(std::move(hub)), opts_(std::move(opts)), ns_id_(ns_id) {
  hub_->add(this);
}

SessionImpl::~SessionImpl() {
  hub_->count_groups(groups_.exchange(0), 0);
  hub_->remove(this);
}

void SessionImpl::set_option(int optname, int value) {
  switch (optname) {
    case NETLINK_CAP_ACK:
      ack_.cap_ack = value != 0;
      break;
    case NETLINK_EXT_ACK:
      ack_.ext_ack = value != 0;
      break;
    case NETLINK_GET_STRICT_CHK:
      strict_ = value != 0;
      break;
    case NETLINK_NO_ENOBUFS:
      no_enobufs_ = value != 0;
      break;
    case NETLINK_LISTEN_ALL_NSID:
      listen_all_nsid_.store(value != 0, std::memory_order_relaxed);
      break;
    case NETLINK_ADD_MEMBERSHIP:
      add_membership(static_cast<unsigned>(value));
      break;
    case NETLINK_DROP_MEMBERSHIP:
      drop_membership(static_cast<unsigned>(value));
      break;
    default:
      break;  // NETLINK_PKTINFO...: nothing to do here
  }
}

void SessionImpl::add_membership(unsigned group) {
  if (group < 1 || group > 64) return;
  std::uint64_t bit = std::uint64_t{1} << (group - 1);
  std::uint64_t before = groups_.fetch_or(bit);
  hub_->count_groups(before, before | bit);
}

void SessionImpl::drop_membership(unsigned group) {
  if (group < 1 || group > 64) return;
  std::uint64_t bit = std::uint64_t{1} << (group - 1);
  std::uint64_t before = groups_.fetch_and(~bit);
  hub_->count_groups(before, before & ~bit);
}

void SessionImpl::set_group_mask(std::uint32_t mask) {
  // Linux: netlink_bind replaces groups 1..32 with nl_groups.
  std::uint64_t cur = groups_.load();
  std::uint64_t next = (cur & ~std::uint64_t{0xffffffff}) | mask;
  while (!groups_.compare_exchange_weak(cur, next))
    next = (cur & ~std::uint64_t{0xffffffff}) | mask;
  hub_->count_groups(cur, next);
}

bool SessionImpl::member(unsigned group) const {
  return group >= 1 && group <= 64 && (groups_.load(std::memory_order_relaxed) >> (group - 1)) & 1;
}

void SessionImpl::enqueue(std::span<const std::uint8_t> msg, std::optional<std::int32_t> nsid) {
  MutexLock lk(qmu_);
  std::size_t size = msg.size() + (nsid ? kNsidPrefixSize : 0);
  if (queue_.size() >= opts_.max_queued || queued_bytes_ + size > opts_.max_queued_bytes) {
    // Linux: netlink_overrun — the message is lost and the socket gets ENOBUFS, unless
    // NETLINK_NO_ENOBUFS was set (a receive queue bounded in bytes: sk_rcvbuf).
    if (!no_enobufs_) {
      overflow_ = true;
      queued_.store(true, std::memory_order_release);
    }
    return;
  }
  Datagram& dg = queue_.emplace_back();
  dg.reserve(size);
  if (nsid) {
    auto prefix = nsid_prefix(*nsid);
    dg.insert(dg.end(), prefix.begin(), prefix.end());
  }
  dg.insert(dg.end(), msg.begin(), msg.end());
  queued_bytes_ += size;
  queued_.store(true, std::memory_order_release);
  if (wake_) wake_();
}

std::size_t SessionImpl::pending_notifications() const {
  MutexLock lk(qmu_);
  return queue_.size();
}

// A notification queued while the flag is read is not lost: its enqueue calls the wakeup,
// and the session's thread asks again.
bool SessionImpl::pop_notification(Datagram& out) {
  if (!queued_.load(std::memory_order_acquire)) return false;
  MutexLock lk(qmu_);
  if (queue_.empty()) return false;
  out = std::move(queue_.front());
  queue_.pop_front();
  queued_bytes_ -= out.size();
  queued_.store(!queue_.empty() || overflow_, std::memory_order_relaxed);
  return true;
}

bool SessionImpl::take_overflow() {
  if (!queued_.load(std::memory_order_acquire)) return false;
  MutexLock lk(qmu_);
  bool was = std::exchange(overflow_, false);
  queued_.store(!queue_.empty(), std::memory_order_relaxed);
  return was;
}

void SessionImpl::set_wakeup(std::function<void()> wake) {
  MutexLock lk(qmu_);
  wake_ = std::move(wake);
}

void SessionImpl::handle(std::span<const std::uint8_t> datagram, const SendFn& send) {
  Reply out(send, opts_.datagram_size);
  if (auto m = wire::only_message(datagram)) {  // as `ip` sends them: one per datagram
    handle_message(*m, out);
  } else {
    // Linux: netlink_rcv_skb handles the messages in order and stops, silently, at a header
    // that is too short or runs past the datagram. `ip` relies on it: it sends its dump
    // requests with the unused rest of its request buffer, zeros, behind the message.
    std::size_t off = 0;
    while (datagram.size() - off >= NLMSG_HDRLEN) {
      nlmsghdr h;
      std::memcpy(&h, datagram.data() + off, sizeof(h));
      if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > datagram.size() - off) break;
      handle_message(wire::Message{h, datagram.subspan(off, h.nlmsg_len)}, out);
      off += std::min<std::size_t>(NLMSG_ALIGN(h.nlmsg_len), datagram.size() - off);
    }
  }
  out.flush();
}

namespace {

using Handler = Result<void> (*)(Request&);

Handler find_handler(std::uint16_t type) {
  switch (type) {
    case RTM_NEWLINK:
      return handle_newlink;
    case RTM_SETLINK:
      return handle_setlink;
    case RTM_DELLINK:
      return handle_dellink;
    case RTM_GETLINK:
      return handle_getlink;
    case RTM_NEWLINKPROP:
      return handle_newlinkprop;
    case RTM_DELLINKPROP:
      return handle_dellinkprop;
    case RTM_NEWNSID:
      return handle_newnsid;
    case RTM_DELNSID:
      return handle_delnsid;
    case RTM_GETNSID:
      return handle_getnsid;
    case RTM_NEWADDR:
      return handle_newaddr;
    case RTM_DELADDR:
      return handle_deladdr;
    case RTM_GETADDR:
      return handle_getaddr;
    case RTM_NEWROUTE:
      return handle_newroute;
    case RTM_DELROUTE:
      return handle_delroute;
    case RTM_GETROUTE:
      return handle_getroute;
    case RTM_NEWNEIGH:
      return handle_newneigh;
    case RTM_DELNEIGH:
      return handle_delneigh;
    case RTM_GETNEIGH:
      return handle_getneigh;
    case RTM_NEWRULE:
      return handle_newrule;
    case RTM_DELRULE:
      return handle_delrule;
    case RTM_GETRULE:
      return handle_getrule;
    case RTM_NEWNEXTHOP:
      return handle_newnexthop;
    case RTM_DELNEXTHOP:
      return handle_delnexthop;
    case RTM_GETNEXTHOP:
      return handle_getnexthop;
    case RTM_GETNEXTHOPBUCKET:
      return handle_getnexthopbucket;
    case RTM_GETNETCONF:
      return handle_getnetconf;
    case RTM_GETNEIGHTBL:
      return handle_getneightbl;
    case RTM_SETNEIGHTBL:
      return handle_setneightbl;
    case RTM_GETSTATS:
      return handle_getlinkstats;
    case RTM_NEWADDRLABEL:
    case RTM_DELADDRLABEL:
      return handle_changeaddrlabel;
    case RTM_GETADDRLABEL:
      return handle_getaddrlabel;
    case RTM_NEWMDB:
      return handle_newmdb;
    case RTM_DELMDB:
      return handle_delmdb;
    case RTM_GETMDB:
      return handle_getmdb;
    case RTM_NEWTUNNEL:
    case RTM_DELTUNNEL:
      return handle_changetunnel;
    case RTM_GETTUNNEL:
      return handle_gettunnel;
    case RTM_GETMULTICAST:
      return handle_getmulticast;
    default:
      return nullptr;
  }
}

}  // namespace

void SessionImpl::handle_message(const wire::Message& m, Reply& out) {
  Request r{*this, m, out};
  auto answer = [&](const Error& e) {
    out.flush();
    wire::MessageBuilder b;
    if (wire::encode_error(b, m.bytes, opts_.port_id, e, ack_)) out.send_alone(b.take());
  };
  // Linux: netlink_rcv_skb — only requests are handled; control messages (< NLMSG_MIN_TYPE)
  // are skipped and acknowledged on request.
  if (!(m.hdr.nlmsg_flags & NLM_F_REQUEST)) return;
  Result<void> res = ok();
  if (m.hdr.nlmsg_type >= NLMSG_MIN_TYPE) {
    std::uint16_t type = m.hdr.nlmsg_type;
    // Linux: rtnetlink_rcv_msg — a payload shorter than struct rtgenmsg is ignored.
    if (type == IFCORE_NLMSG_GETSTATS) {
      res = handle_getstats(r);  // ifcore: reading, open to every peer
    } else if (type == IFCORE_NLMSG_PROBE) {
      res = handle_probe(r);  // ifcore: sends frames, needs may_write (checked there)
    } else if (type == IFCORE_NLMSG_SYSCTL) {
      res = handle_sysctl(r);  // ifcore: reads open to all, writes need may_write (there)
    } else if (type == IFCORE_NLMSG_MADDR) {
      res = handle_maddr(r);  // ifcore: reads open to all, changes need may_write (there)
    } else if (type > RTM_MAX) {
      res = fail(EOPNOTSUPP);
    } else if (m.payload().size() < sizeof(rtgenmsg)) {
      res = ok();
    } else {
      int kind = (type - RTM_BASE) & 3;  // 0 new, 1 del, 2 get, 3 set
      Handler h = find_handler(type);
      if (kind == 2 && r.dump() && dump_) {
        res = fail(EBUSY);  // Linux: netlink_dump_start, while the socket's dump runs
      } else if (kind != 2 && !opts_.may_write) {
        res = fail(EPERM);  // Linux: netlink_net_capable(skb, CAP_NET_ADMIN)
      } else if (((type == RTM_NEWNSID && (r.flags() & NLM_F_CREATE)) || type == RTM_DELNSID) &&
                 !opts_.may_write_elsewhere) {
        res = fail(EPERM);  // ifcore: they make and destroy namespaces
      } else if (!h) {
        res = fail(EOPNOTSUPP);
      } else {
        res = h(r);
        // Linux: a dump's checks run in its dumpit, whose error ends the dump: NLMSG_DONE
        // carries the errno and the extack, not NLMSG_ERROR (netlink_dump).
        if (!res && kind == 2 && r.dump() && !r.done && !r.rest && !r.no_dumpit)
          end_dump_error(r, res.error());
      }
    }
  }
  if (r.rest) return keep_dump(m, std::move(r.rest));
  if (!res) {
    if (r.done) return;  // a dump already ended with the error in NLMSG_DONE
    const Error& e = res.error();
    if (e.log_only && !e.message.empty())
      hub_->engine().log(
          LogLevel::Debug,
          fmt::format("port {} request {} seq {}: {}: {}", opts_.port_id, m.hdr.nlmsg_type,
                      m.hdr.nlmsg_seq, errno_name(e.code), e.message));
    answer(e);
    return;
  }
  if (r.done) return;
  out.flush();
  if (!(m.hdr.nlmsg_flags & NLM_F_ACK)) return;
  if (!r.warning.empty() && ack_.ext_ack) {
    wire::MessageBuilder b;
    if (wire::encode_error(b, m.bytes, opts_.port_id, 0, r.warning, -1, ack_))
      out.send_alone(b.take());
    return;
  }
  if (auto ack = wire::ack_datagram(m.bytes, opts_.port_id)) out.send_alone(std::move(*ack));
}

void SessionImpl::keep_dump(const wire::Message& m, std::unique_ptr<DumpRest> rest) {
  dump_ = std::move(rest);
  dump_request_.assign(m.bytes.begin(), m.bytes.end());
}

void SessionImpl::continue_dump(const SendFn& send) {
  if (!dump_) return;
  Reply out(send, opts_.datagram_size);
  wire::Message m;
  std::memcpy(&m.hdr, dump_request_.data(), sizeof(m.hdr));
  m.bytes = dump_request_;
  Request r{*this, m, out};
  Result<bool> more = dump_->next(r);
  if (!more && !r.done) end_dump_error(r, more.error());
  if (!more || !*more) {
    dump_.reset();
    dump_request_.clear();
  }
  out.flush();
}

}  // namespace ifcore::rtnl
