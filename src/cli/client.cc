// cli/client.cc — requests, acks, dumps and the device name map.
#include "cli/client.h"

#include <net/if.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cctype>
#include <cstring>

#include "rtnl/wire/link.h"

namespace ifcore::cli {

std::string rtnl_error_text(int err, const std::string& extack) {
  // iproute2 prints the extack message alone when there is one, with a final period.
  if (!extack.empty()) {
    std::string s = "Error: " + extack;
    if (s.back() != '.') s += '.';
    return s;
  }
  return std::string("RTNETLINK answers: ") + std::strerror(err);
}

Client::Client(std::unique_ptr<Transport> t) : t_(std::move(t)) {
  (void)t_->set_option(NETLINK_EXT_ACK, 1);
  (void)t_->set_option(NETLINK_CAP_ACK, 1);
}

Result<void> Client::wait_ack(std::uint32_t seq, const MsgFn& on_reply, int& err,
                              std::string& ext) {
  // Replies are kept until the ack: a callback may ask for names (a dump of its own).
  std::vector<Datagram> replies;
  auto deliver = [&]() {
    if (!on_reply) return;
    for (const auto& d : replies) {
      auto msgs = wire::split_messages(d);
      if (!msgs) continue;
      for (const auto& m : *msgs)
        if (m.hdr.nlmsg_seq == seq && m.hdr.nlmsg_type != NLMSG_ERROR &&
            m.hdr.nlmsg_type != NLMSG_DONE)
          on_reply(m);
    }
  };
  for (;;) {
    auto d = t_->recv(-1);
    if (!d) return die(2, "{}", d.error().message);
    if (!*d) return die(2, "no answer from the {} target", t_->target());
    auto msgs = wire::split_messages(**d);
    if (!msgs) return die(2, "malformed reply: {}", msgs.error().message);
    bool keep = false;
    if (!msgs->empty() && msgs->front().hdr.nlmsg_seq == 0) {
      events_.push_back(std::move(**d));  // a notification: for monitor
      continue;
    }
    for (const auto& m : *msgs) {
      if (m.hdr.nlmsg_seq != seq) continue;  // a stale reply
      if (m.hdr.nlmsg_type == NLMSG_ERROR) {
        auto e = wire::decode_error(m);
        if (!e) return die(2, "malformed error reply: {}", e.error().message);
        err = e->error;
        ext = e->message;
        if (keep) replies.push_back(std::move(**d));
        if (!err) deliver();
        return ok();
      }
      keep = true;
    }
    if (keep) replies.push_back(std::move(**d));
  }
}

Result<void> Client::talk_raw(wire::MessageBuilder& b, const MsgFn& on_reply, int& err,
                              std::string& ext) {
  auto bytes = b.take();
  if (bytes.size() < sizeof(nlmsghdr)) return die(2, "empty request");
  auto* h = reinterpret_cast<nlmsghdr*>(bytes.data());
  h->nlmsg_flags |= NLM_F_ACK;
  std::uint32_t seq = h->nlmsg_seq;
  std::uint16_t type = h->nlmsg_type;
  if (auto s = t_->send(bytes); !s) return die(2, "{}", s.error().message);
  err = 0;
  ext.clear();
  IFCORE_TRY(wait_ack(seq, on_reply, err, ext));
  if (type == RTM_NEWLINK || type == RTM_DELLINK || type == RTM_SETLINK) invalidate();
  return ok();
}

Result<void> Client::talk(wire::MessageBuilder& b, const MsgFn& on_reply) {
  int err = 0;
  std::string ext;
  IFCORE_TRY(talk_raw(b, on_reply, err, ext));
  if (err) return die(2, "{}", rtnl_error_text(err, ext));
  return ok();
}

Result<void> Client::dump(wire::MessageBuilder& b, const MsgFn& cb) {
  auto bytes = b.take();
  auto* h = reinterpret_cast<nlmsghdr*>(bytes.data());
  h->nlmsg_flags |= NLM_F_DUMP | NLM_F_REQUEST;
  std::uint32_t seq = h->nlmsg_seq;
  if (auto s = t_->send(bytes); !s) return die(2, "{}", s.error().message);
  // The whole dump is read before any callback runs: a callback may ask for names, which
  // is a dump of its own on the same socket.
  std::vector<Datagram> parts;
  for (bool done = false; !done;) {
    auto d = t_->recv(-1);
    if (!d) return die(2, "{}", d.error().message);
    if (!*d) return die(2, "Dump was interrupted: no answer from the {} target", t_->target());
    auto msgs = wire::split_messages(**d);
    if (!msgs) return die(2, "malformed reply: {}", msgs.error().message);
    if (!msgs->empty() && msgs->front().hdr.nlmsg_seq == 0) {
      events_.push_back(std::move(**d));  // a notification: for monitor
      continue;
    }
    for (const auto& m : *msgs) {
      if (m.hdr.nlmsg_seq != seq) continue;
      if (m.hdr.nlmsg_type == NLMSG_DONE) {
        auto e = wire::decode_done(m);
        // A refused dump's extack rides in its NLMSG_DONE (ip prints it as "Error: ...").
        if (e && *e) return die(2, "{}", rtnl_error_text(*e, wire::decode_done_message(m)));
        done = true;
      } else if (m.hdr.nlmsg_type == NLMSG_ERROR) {
        auto e = wire::decode_error(m);
        if (!e) return die(2, "malformed error reply");
        if (e->error == 0) continue;
        return die(2, "{}", rtnl_error_text(e->error, e->message));
      }
    }
    parts.push_back(std::move(**d));
  }
  for (const auto& d : parts) {
    auto msgs = wire::split_messages(d);
    if (!msgs) continue;
    for (const auto& m : *msgs)
      if (m.hdr.nlmsg_seq == seq && m.hdr.nlmsg_type != NLMSG_DONE &&
          m.hdr.nlmsg_type != NLMSG_ERROR)
        cb(m);
  }
  return ok();
}

Result<std::optional<Datagram>> Client::next_event(int timeout_ms) {
  if (!events_.empty()) {
    Datagram d = std::move(events_.front());
    events_.erase(events_.begin());
    return std::optional<Datagram>(std::move(d));
  }
  return t_->recv(timeout_ms);
}

Result<void> Client::load() {
  if (loaded_) return ok();
  names_.clear();
  altnames_.clear();
  wire::MessageBuilder b(1 << 16);
  b.begin({RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, next_seq(), 0});
  ifinfomsg ifi{};
  b.put_struct(ifi);
  b.put_u32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
  if (auto e = b.end(); !e) return die(2, "{}", e.error().message);
  IFCORE_TRY(dump(b, [this](const wire::Message& m) {
    auto l = wire::decode_link_message(m);
    if (!l) return;
    names_[l->ifindex] = {l->name, l->flags};
    for (const std::string& alt : l->alt_names) altnames_[alt] = l->ifindex;
  }));
  loaded_ = true;
  return ok();
}

namespace {

// iproute2: check_ifname — under IFNAMSIZ bytes, not empty, no '/' and no white space.
bool valid_ifname(const std::string& s) {
  if (s.empty() || s.size() >= IFNAMSIZ) return false;
  for (unsigned char ch : s)
    if (ch == '/' || std::isspace(ch)) return false;
  return true;
}

}  // namespace

Result<int> Client::ifindex(const std::string& name) {
  if (loaded_) {
    for (const auto& [idx, v] : names_)
      if (v.first == name) return idx;
    auto alt = altnames_.find(name);
    return alt == altnames_.end() ? 0 : alt->second;
  }
  // iproute2: ll_name_to_index asks for the one device (RTM_GETLINK with IFLA_IFNAME) and,
  // when that fails, if_nametoindex: a name it cannot find is 0, whatever the error. No
  // dump: a batch that deletes N devices by name would read N dumps.
  wire::MessageBuilder b;
  b.begin({RTM_GETLINK, NLM_F_REQUEST, next_seq(), 0});
  ifinfomsg ifi{};
  b.put_struct(ifi);
  // iproute2: a name check_ifname refuses (16 bytes or more, '/', white space) is looked
  // up as an altname (IFLA_ALT_IFNAME); the kernel finds a device by any of its names.
  b.put_string(valid_ifname(name) ? IFLA_IFNAME : IFLA_ALT_IFNAME, name);
  b.put_u32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
  if (auto e = b.end(); !e) return 0;  // a name too long for a message names no device
  int idx = 0, err = 0;
  std::string ext;
  IFCORE_TRY(talk_raw(
      b,
      [&](const wire::Message& m) {
        auto l = wire::decode_link_message(m);
        if (l && m.hdr.nlmsg_type == RTM_NEWLINK) {
          idx = l->ifindex;
          names_[idx] = {l->name, l->flags};
        }
      },
      err, ext));
  return err ? 0 : idx;
}

std::string Client::ifname(int ifindex) {
  if (load()) {
    auto it = names_.find(ifindex);
    if (it != names_.end()) return it->second.first;
  }
  return "if" + std::to_string(ifindex);
}

std::string Client::ifname_asking(int ifindex) {
  if (load()) {
    if (auto it = names_.find(ifindex); it != names_.end()) return it->second.first;
    // iproute2: ll_index_to_name asks for a device it does not know (ll_link_get); the
    // names it knew stay, those of deleted devices too.
    auto known = std::move(names_);
    loaded_ = false;
    if (load()) {
      for (auto& [idx, v] : known) names_.emplace(idx, std::move(v));
      if (auto it = names_.find(ifindex); it != names_.end()) return it->second.first;
    } else {
      names_ = std::move(known);
      loaded_ = true;
    }
  }
  return "if" + std::to_string(ifindex);
}

std::uint32_t Client::ifflags(int ifindex) {
  if (load()) {
    auto it = names_.find(ifindex);
    if (it != names_.end()) return it->second.second;
  }
  return 0;
}

}  // namespace ifcore::cli
