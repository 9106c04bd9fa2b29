// rtnl/wire/netlink.cc — netlink framing, the message builder, DONE and ERROR messages.
#include "rtnl/wire/netlink.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>

#include <algorithm>
#include <cerrno>

#include "rtnl/wire/raw_attrs.h"

namespace ifcore::wire {

namespace {

// The message at `off` of `datagram` (which leaves at least one byte): its header checked
// against the bytes left. Errors: as split_messages.
Result<Message> message_at(std::span<const std::uint8_t> datagram, std::size_t off) {
  std::size_t left = datagram.size() - off;
  if (left < NLMSG_HDRLEN)
    return fail(EINVAL, "truncated netlink header ({} bytes, need {})", left, NLMSG_HDRLEN);
  Message m;
  std::memcpy(&m.hdr, datagram.data() + off, sizeof(nlmsghdr));
  if (m.hdr.nlmsg_len < NLMSG_HDRLEN)
    return fail(EINVAL, "netlink message length {} smaller than header", m.hdr.nlmsg_len);
  if (m.hdr.nlmsg_len > left)
    return fail(EINVAL, "netlink message length {} past the end of the datagram ({} bytes left)",
                m.hdr.nlmsg_len, left);
  // Only now is it safe to let libmnl look at the header.
  const auto* nlh = reinterpret_cast<const nlmsghdr*>(datagram.data() + off);
  int remaining = static_cast<int>(std::min<std::size_t>(left, INT32_MAX));
  if (!mnl_nlmsg_ok(nlh, remaining))
    return fail(EINVAL, "netlink message length {} invalid", m.hdr.nlmsg_len);
  m.bytes = datagram.subspan(off, m.hdr.nlmsg_len);
  return m;
}

// Where the message after `m` (at `off`) starts: the last message may omit its alignment
// padding.
std::size_t next_offset(const Message& m, std::size_t off, std::size_t size) {
  return off + std::min<std::size_t>(NLMSG_ALIGN(m.hdr.nlmsg_len), size - off);
}

}  // namespace

Result<std::vector<Message>> split_messages(std::span<const std::uint8_t> datagram) {
  std::vector<Message> out;
  for (std::size_t off = 0; off < datagram.size();) {
    auto m = message_at(datagram, off);
    if (!m) return fail(m.error());
    out.push_back(*m);
    off = next_offset(*m, off, datagram.size());
  }
  return out;
}

std::optional<Message> only_message(std::span<const std::uint8_t> datagram) {
  if (datagram.empty()) return std::nullopt;
  auto m = message_at(datagram, 0);
  if (!m || next_offset(*m, 0, datagram.size()) != datagram.size()) return std::nullopt;
  return *m;
}

// ---- MessageBuilder

namespace {
constexpr std::size_t kMaxAttrLen = 0xffff;
}

void MessageBuilder::make_room(std::size_t need, std::size_t first) {
  // The buffer grows geometrically, so an attribute costs no reallocation and no zero
  // fill of its own: every byte below end_ is written by the put that claimed it, padding
  // included.
  if (need > buf_.size()) buf_.resize(std::max({need, 2 * buf_.size(), first}));
}

void MessageBuilder::reserve(std::size_t bytes) {
  make_room(end_ + bytes, 0);
}

void MessageBuilder::begin(const Header& h) {
  end_ = done_;
  grow(MNL_ALIGN(sizeof(nlmsghdr)));
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf_.data() + done_);
  nlh->nlmsg_type = h.type;
  nlh->nlmsg_flags = h.flags;
  nlh->nlmsg_seq = h.seq;
  nlh->nlmsg_pid = h.pid;
  open_ = true;
  sticky_.clear();
}

void MessageBuilder::put_attr(std::uint16_t type, const void* data, std::size_t len) {
  if (!open_) return;
  if (len + MNL_ATTR_HDRLEN > kMaxAttrLen) {
    if (sticky_.empty())
      sticky_ = fmt::format("netlink attribute of {} bytes exceeds 65535", len + MNL_ATTR_HDRLEN);
    return;
  }
  char* payload = put_attr_header(type, len);
  if (len) std::memcpy(payload, data, len);
}

void MessageBuilder::put_be16(std::uint16_t type, std::uint16_t host) {
  std::uint16_t v = htons(host);
  put_attr(type, &v, 2);
}

void MessageBuilder::put_be32(std::uint16_t type, std::uint32_t host) {
  std::uint32_t v = htonl(host);
  put_attr(type, &v, 4);
}

void MessageBuilder::put_string(std::uint16_t type, std::string_view s) {
  if (!open_) return;
  if (s.size() + 1 + MNL_ATTR_HDRLEN > kMaxAttrLen) return put_attr(type, nullptr, s.size() + 1);
  char* payload = put_attr_header(type, s.size() + 1);
  if (!s.empty()) std::memcpy(payload, s.data(), s.size());
  payload[s.size()] = 0;
}

std::size_t MessageBuilder::begin_nest(std::uint16_t type) {
  if (!open_) return 0;
  std::size_t token = end_;
  grow(MNL_ALIGN(MNL_ATTR_HDRLEN));
  nlattr* start = mnl_attr_nest_start(cur(), type);
  start->nla_type = type;  // Linux fills its replies with nla_nest_start_noflag
  return token;
}

void MessageBuilder::end_nest(std::size_t token) {
  if (!open_ || token < done_ || token + MNL_ATTR_HDRLEN > end_) return;
  std::size_t len = end_ - token;
  if (len > kMaxAttrLen) {
    if (sticky_.empty()) sticky_ = fmt::format("netlink attribute of {} bytes exceeds 65535", len);
    return;
  }
  auto* start = reinterpret_cast<nlattr*>(buf_.data() + token);
  mnl_attr_nest_end(cur(), start);
}

Result<std::span<const std::uint8_t>> MessageBuilder::end() {
  if (!open_) return fail(EINVAL, "no message started");
  open_ = false;
  if (!sticky_.empty()) {
    end_ = done_;
    return fail(EMSGSIZE, sticky_);
  }
  last_start_ = done_;
  done_ = end_;
  ++count_;
  return std::span<const std::uint8_t>(buf_.data() + last_start_, done_ - last_start_);
}

void MessageBuilder::drop_last() {
  if (count_ == 0) return;
  done_ = end_ = last_start_;
  --count_;
  // Find the new last message so a second drop_last works.
  std::size_t off = 0, prev = 0;
  while (off < done_) {
    prev = off;
    off += NLMSG_ALIGN(reinterpret_cast<const nlmsghdr*>(buf_.data() + off)->nlmsg_len);
  }
  last_start_ = prev;
}

std::vector<std::uint8_t> MessageBuilder::take() {
  buf_.resize(done_);
  std::vector<std::uint8_t> out = std::move(buf_);
  buf_.clear();
  done_ = end_ = last_start_ = count_ = 0;
  open_ = false;
  return out;
}

void DatagramWriter::append(std::span<const std::uint8_t> message) {
  std::size_t len = NLMSG_ALIGN(message.size());
  if (out_.empty() || (!out_.back().empty() && out_.back().size() + len > limit_))
    out_.emplace_back();
  auto& d = out_.back();
  d.insert(d.end(), message.begin(), message.end());
  d.resize(d.size() + (len - message.size()), 0);
}

std::vector<std::vector<std::uint8_t>> DatagramWriter::take() {
  return std::move(out_);
}

// ---- DONE and ERROR

Result<void> encode_done(MessageBuilder& b, std::uint32_t seq, std::uint32_t portid, int error,
                         std::uint16_t flags) {
  b.begin({NLMSG_DONE, static_cast<std::uint16_t>(NLM_F_MULTI | flags), seq, portid});
  b.put_struct(error);
  auto r = b.end();
  if (!r) return fail(r.error());
  return ok();
}

Result<void> encode_done_ext(MessageBuilder& b, std::uint32_t seq, std::uint32_t portid, int error,
                             std::string_view message, AckOptions opts) {
  const bool with_msg = opts.ext_ack && !message.empty();
  b.begin({NLMSG_DONE, static_cast<std::uint16_t>(NLM_F_MULTI | (with_msg ? NLM_F_ACK_TLVS : 0)),
           seq, portid});
  b.put_struct(error);
  if (with_msg) b.put_string(NLMSGERR_ATTR_MSG, message);
  auto r = b.end();
  if (!r) return fail(r.error());
  return ok();
}

namespace {

// NLMSGERR_ATTR_POLICY's payload size for `p` (Linux: netlink_policy_dump_write_attr).
std::size_t policy_size(const ErrorPolicy& p) {
  std::size_t n = MNL_ATTR_HDRLEN + sizeof(std::uint32_t);  // NL_POLICY_TYPE_ATTR_TYPE
  if (p.max_length) n += MNL_ATTR_HDRLEN + sizeof(std::uint32_t);
  if (p.has_range) n += 2 * (MNL_ATTR_HDRLEN + sizeof(std::uint64_t));
  return n;
}

// Writes the policy nest in the order Linux's __netlink_policy_dump_write_attr does: the
// limits first, the attribute type last.
void put_policy(MessageBuilder& b, const ErrorPolicy& p) {
  std::size_t nest = b.begin_nest(NLA_F_NESTED | NLMSGERR_ATTR_POLICY);  // nla_nest_start
  if (p.has_range) {
    b.put_u64(p.is_signed ? NL_POLICY_TYPE_ATTR_MIN_VALUE_S : NL_POLICY_TYPE_ATTR_MIN_VALUE_U,
              p.min_value);
    b.put_u64(p.is_signed ? NL_POLICY_TYPE_ATTR_MAX_VALUE_S : NL_POLICY_TYPE_ATTR_MAX_VALUE_U,
              p.max_value);
  }
  if (p.max_length) b.put_u32(NL_POLICY_TYPE_ATTR_MAX_LENGTH, p.max_length);
  b.put_u32(NL_POLICY_TYPE_ATTR_TYPE, p.type);
  b.end_nest(nest);
}

Result<void> encode_error_with(MessageBuilder& b, std::span<const std::uint8_t> request,
                               std::uint32_t portid, int error, std::string_view message,
                               int attr_offset, const ErrorPolicy* policy, AckOptions opts) {
  if (request.size() < NLMSG_HDRLEN) return fail(EINVAL, "request shorter than a netlink header");
  nlmsghdr req;
  std::memcpy(&req, request.data(), sizeof(req));
  std::size_t req_len = std::min<std::size_t>(req.nlmsg_len, request.size());
  if (req_len < NLMSG_HDRLEN) req_len = NLMSG_HDRLEN;

  bool capped = error == 0 || opts.cap_ack;
  std::uint16_t flags = capped ? NLM_F_CAPPED : 0;
  bool with_msg = opts.ext_ack && !message.empty();
  bool with_offs = opts.ext_ack && error != 0 && attr_offset >= static_cast<int>(NLMSG_HDRLEN) &&
                   static_cast<std::size_t>(attr_offset) < req_len;
  // Linux: netlink_ack_tlv_fill writes the policy of the failed attribute after its offset.
  bool with_policy = opts.ext_ack && error != 0 && policy && policy->type != 0;
  if (with_msg || with_offs || with_policy) flags |= NLM_F_ACK_TLVS;

  b.reserve(NLMSG_HDRLEN + sizeof(std::int32_t) + NLMSG_ALIGN(capped ? NLMSG_HDRLEN : req_len) +
            (with_msg ? MNL_ALIGN(MNL_ATTR_HDRLEN + message.size() + 1) : 0) +
            (with_offs ? MNL_ATTR_HDRLEN + sizeof(std::uint32_t) : 0) +
            (with_policy ? MNL_ATTR_HDRLEN + policy_size(*policy) : 0));
  b.begin({NLMSG_ERROR, flags, req.nlmsg_seq, portid});
  std::int32_t neg = -error;
  b.put_raw(&neg, sizeof(neg));
  if (capped) {
    b.put_raw(request.data(), NLMSG_HDRLEN);
  } else {
    b.put_raw(request.data(), req_len);
  }
  if (with_msg) b.put_string(NLMSGERR_ATTR_MSG, message);
  if (with_offs) b.put_u32(NLMSGERR_ATTR_OFFS, static_cast<std::uint32_t>(attr_offset));
  if (with_policy) put_policy(b, *policy);
  auto r = b.end();
  if (!r) return fail(r.error());
  return ok();
}

}  // namespace

Result<void> encode_error(MessageBuilder& b, std::span<const std::uint8_t> request,
                          std::uint32_t portid, int error, std::string_view message,
                          int attr_offset, AckOptions opts) {
  return encode_error_with(b, request, portid, error, message, attr_offset, nullptr, opts);
}

Result<std::vector<std::uint8_t>> ack_datagram(std::span<const std::uint8_t> request,
                                               std::uint32_t portid) {
  if (request.size() < NLMSG_HDRLEN) return fail(EINVAL, "request shorter than a netlink header");
  // Linux: netlink_ack — a success carries no payload beyond the request's header, so it
  // is capped whatever NETLINK_CAP_ACK says, and has no TLVs without a message.
  nlmsghdr req;
  std::memcpy(&req, request.data(), sizeof(req));
  nlmsghdr h{};
  h.nlmsg_len = NLMSG_HDRLEN + sizeof(std::int32_t) + NLMSG_HDRLEN;
  h.nlmsg_type = NLMSG_ERROR;
  h.nlmsg_flags = NLM_F_CAPPED;
  h.nlmsg_seq = req.nlmsg_seq;
  h.nlmsg_pid = portid;
  std::vector<std::uint8_t> d(h.nlmsg_len);  // zeroed: the error field reads 0
  std::memcpy(d.data(), &h, sizeof(h));
  std::memcpy(d.data() + NLMSG_HDRLEN + sizeof(std::int32_t), request.data(), NLMSG_HDRLEN);
  return d;
}

Result<void> encode_error(MessageBuilder& b, std::span<const std::uint8_t> request,
                          std::uint32_t portid, const Error& e, AckOptions opts) {
  if (e.log_only) return encode_error(b, request, portid, e.code, {}, -1, opts);
  return encode_error_with(b, request, portid, e.code, e.message, e.attr_offset, &e.policy, opts);
}

Result<ErrorReply> decode_error(const Message& m) {
  if (m.hdr.nlmsg_type != NLMSG_ERROR) return fail(EINVAL, "not an NLMSG_ERROR message");
  auto p = m.payload();
  if (p.size() < sizeof(nlmsgerr))
    return fail(EINVAL, "nlmsgerr payload too short ({} bytes, need {})", p.size(),
                sizeof(nlmsgerr));
  nlmsgerr e;
  std::memcpy(&e, p.data(), sizeof(e));
  ErrorReply r;
  r.error = e.error == INT32_MIN ? INT32_MAX : -e.error;
  r.request = e.msg;
  r.capped = m.hdr.nlmsg_flags & NLM_F_CAPPED;
  if (!(m.hdr.nlmsg_flags & NLM_F_ACK_TLVS)) return r;
  std::size_t echoed = NLMSG_HDRLEN;
  if (!r.capped) echoed = std::max<std::size_t>(NLMSG_HDRLEN, e.msg.nlmsg_len);
  std::size_t tlv_start = sizeof(std::int32_t) + NLMSG_ALIGN(echoed);
  if (tlv_start > p.size())
    return fail(EINVAL, "echoed request of {} bytes past the end of the error message", echoed);
  auto tlvs = parse_raw_attrs(p.subspan(tlv_start), static_cast<int>(NLMSG_HDRLEN + tlv_start));
  if (!tlvs) return fail(tlvs.error());
  for (const RawAttr& a : *tlvs) {
    if (a.type == NLMSGERR_ATTR_MSG) {
      r.message = a.as_string();
    } else if (a.type == NLMSGERR_ATTR_OFFS) {
      auto v = a.as_u32();
      if (!v) return fail(v.error());
      r.attr_offset = static_cast<int>(*v);
    }
  }
  return r;
}

Result<int> decode_done(const Message& m) {
  if (m.hdr.nlmsg_type != NLMSG_DONE) return fail(EINVAL, "not an NLMSG_DONE message");
  auto p = m.payload();
  if (p.size() < sizeof(int)) return 0;
  int v;
  std::memcpy(&v, p.data(), sizeof(v));
  return v == INT32_MIN ? INT32_MAX : (v < 0 ? -v : v);
}

std::string decode_done_message(const Message& m) {
  if (m.hdr.nlmsg_type != NLMSG_DONE || !(m.hdr.nlmsg_flags & NLM_F_ACK_TLVS)) return {};
  auto p = m.payload();
  if (p.size() <= sizeof(std::int32_t)) return {};
  auto tlvs = parse_raw_attrs(p.subspan(sizeof(std::int32_t)),
                              static_cast<int>(NLMSG_HDRLEN + sizeof(std::int32_t)));
  if (!tlvs) return {};
  for (const RawAttr& a : *tlvs)
    if (a.type == NLMSGERR_ATTR_MSG) return a.as_string();
  return {};
}

}  // namespace ifcore::wire
