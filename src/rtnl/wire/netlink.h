// rtnl/wire/netlink.h — netlink framing: datagrams split into checked messages, a builder
// that writes messages (header, family struct, attributes, nests), and the control
// messages every netlink family shares (NLMSG_DONE, NLMSG_ERROR acks with extack).
//
// Pure: bytes in, values out, and back. Nothing here knows the engine or a socket.
// Byte order is the host's (netlink is host-endian); constants come from <linux/netlink.h>.
#pragma once

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ifcore/result.h"

namespace ifcore::wire {

// One page: what libmnl clients read at once (MNL_SOCKET_BUFFER_SIZE caps at 8 KiB, and
// `ip` reads 32 KiB); dumps are cut into datagrams of about this size.
inline constexpr std::size_t kDefaultDatagramSize = 4096;

// One message of a datagram, checked: `bytes` is the whole message (nlmsghdr included,
// trailing alignment padding excluded) and lies inside the datagram it was split from.
struct Message {
  nlmsghdr hdr{};                       // a copy of the header
  std::span<const std::uint8_t> bytes;  // hdr.nlmsg_len bytes starting at the header

  // The bytes after the header (the family struct and the attributes).
  std::span<const std::uint8_t> payload() const { return bytes.subspan(NLMSG_HDRLEN); }
  bool is_dump() const { return (hdr.nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP; }
};

// Splits a received datagram into messages.
// Errors: EINVAL "truncated netlink header" when fewer than 16 bytes remain, EINVAL
// "netlink message length N smaller than header" and EINVAL "netlink message length N
// past the end of the datagram (M bytes left)". An empty datagram gives an empty list.
// Linux: netlink_rcv_skb drops the rest of such a datagram silently; we report it.
Result<std::vector<Message>> split_messages(std::span<const std::uint8_t> datagram);
// The datagram's message when it holds exactly one that split_messages accepts (the
// common case, read without building a list); nothing otherwise: none, several, or a
// malformed one (split_messages then tells which).
std::optional<Message> only_message(std::span<const std::uint8_t> datagram);

// Reads a trivially-copyable struct (ifinfomsg, rtmsg...) from the start of `bytes`.
// Errors: EINVAL "<what> payload too short (N bytes, need M)".
template <class T>
Result<T> read_struct(std::span<const std::uint8_t> bytes, std::string_view what) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (bytes.size() < sizeof(T))
    return fail(EINVAL, "{} payload too short ({} bytes, need {})", what, bytes.size(), sizeof(T));
  T v;
  std::memcpy(&v, bytes.data(), sizeof(T));
  return v;
}

// The header fields of a message to write.
struct Header {
  std::uint16_t type = 0;
  std::uint16_t flags = 0;
  std::uint32_t seq = 0;
  std::uint32_t pid = 0;  // the port id of the socket the message goes to (0 = kernel)
};

// Writes one or more netlink messages into a growing buffer, using libmnl for the
// attribute layout. Errors that can only appear while writing (an attribute or a nest
// larger than 65535 bytes) are sticky and reported by end().
// Context: not thread-safe; one builder per reply being written.
class MessageBuilder {
 public:
  explicit MessageBuilder(std::size_t datagram_limit = kDefaultDatagramSize)
      : limit_(datagram_limit) {}

  // Starts a message; a message already started and not ended is discarded.
  void begin(const Header& h);
  // Makes room for `bytes` more at once: a writer that knows the size of what it writes
  // next (an ack: 36 bytes) gets one allocation of that size, not 256 bytes zero-filled.
  void reserve(std::size_t bytes);
  // Appends a family struct (ifinfomsg, ifaddrmsg, rtmsg...), padded to 4 bytes.
  template <class T>
  void put_struct(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put_raw(&v, sizeof(T));
  }
  // Appends `len` raw payload bytes, padded to 4 bytes (the padding zeroed).
  void put_raw(const void* data, std::size_t len) {
    if (!open_) return;
    std::uint8_t* at = claim(NLMSG_ALIGN(len));
    if (len) std::memcpy(at, data, len);
    std::memset(at + len, 0, NLMSG_ALIGN(len) - len);
  }

  void put_flag(std::uint16_t type) { put_attr(type, nullptr, 0); }
  void put_u8(std::uint16_t type, std::uint8_t v) { put_value(type, v); }
  void put_u16(std::uint16_t type, std::uint16_t v) { put_value(type, v); }
  void put_u32(std::uint16_t type, std::uint32_t v) { put_value(type, v); }
  void put_s32(std::uint16_t type, std::int32_t v) { put_value(type, v); }
  void put_u64(std::uint16_t type, std::uint64_t v) { put_value(type, v); }
  void put_be16(std::uint16_t type, std::uint16_t host);
  void put_be32(std::uint16_t type, std::uint32_t host);
  // A NUL-terminated string (every string ifcore writes carries its NUL).
  void put_string(std::uint16_t type, std::string_view s);
  void put_bytes(std::uint16_t type, std::span<const std::uint8_t> b) {
    put_attr(type, b.data(), b.size());
  }
  void put_attr(std::uint16_t type, const void* data, std::size_t len);

  // Opens a nest (the NLA_F_NESTED bit is not set, as Linux's own replies do not set it);
  // returns a token for end_nest. Nests may be opened inside nests.
  std::size_t begin_nest(std::uint16_t type);
  void end_nest(std::size_t token);

  // Overwrites bytes already written in the open message at `pos` (a token from
  // begin_nest, plus an offset): for headers like rtnexthop whose fields follow a length.
  void patch(std::size_t pos, const void* data, std::size_t len) {
    if (open_ && pos >= done_ && pos + len <= end_) std::memcpy(buf_.data() + pos, data, len);
  }

  // Finishes the current message and returns its bytes (valid until the next write).
  // Errors: EMSGSIZE "netlink attribute of N bytes exceeds 65535" (sticky, from any put
  // since begin), EINVAL "no message started".
  Result<std::span<const std::uint8_t>> end();

  // Discards the message being written (after an encode error).
  void cancel() {
    end_ = done_;
    open_ = false;
  }

  // Drops the last finished message (a dump that overshot the datagram limit puts it
  // into the next datagram instead).
  void drop_last();

  // True when a message of `next_len` more bytes still fits in this datagram: always for
  // the first message (a message larger than the limit travels alone), else when the
  // total stays within the limit.
  bool fits(std::size_t next_len) const {
    return count_ == 0 || size() + NLMSG_ALIGN(next_len) <= limit_;
  }
  // True when the finished messages exceed the datagram limit and there are several.
  bool over_limit() const { return count_ > 1 && size() > limit_; }
  std::size_t limit() const { return limit_; }

  std::size_t size() const { return done_; }    // bytes of finished messages
  std::size_t tail() const { return end_; }     // where the next byte of the open one goes
  std::size_t count() const { return count_; }  // finished messages
  std::span<const std::uint8_t> bytes() const { return {buf_.data(), done_}; }
  // Moves the finished messages out and resets the builder.
  std::vector<std::uint8_t> take();

 private:
  nlmsghdr* cur() { return reinterpret_cast<nlmsghdr*>(buf_.data() + done_); }
  // Makes buf_ at least `need` long: twice as long as it was, or `first` if that is more.
  void make_room(std::size_t need, std::size_t first);
  void grow(std::size_t extra) {
    // The open message ends at end_ (libmnl writes at its tail).
    if (end_ + extra > buf_.size()) make_room(end_ + extra, kFirstCapacity);
    end_ += extra;
  }
  // `bytes` (aligned) more at the open message's tail, counted in its length: where to
  // write them. The writers are inline so that those of fixed sizes write with constant
  // sizes: a dump or a bulk reply writes a few of them in each of 10^4 messages.
  std::uint8_t* claim(std::size_t bytes) {
    grow(bytes);
    cur()->nlmsg_len += static_cast<std::uint32_t>(bytes);
    return buf_.data() + end_ - bytes;
  }
  // An attribute of a fixed-size value.
  template <class T>
  void put_value(std::uint16_t type, const T& v) {
    if (open_) std::memcpy(put_attr_header(type, sizeof(T)), &v, sizeof(T));
  }
  // Claims an attribute of `len` payload bytes at the open message's tail: writes its
  // header and zeroes its padding (the storage is reused); returns where the payload goes.
  // Written here rather than with mnl_attr_put, which leaves the padding as it finds it.
  char* put_attr_header(std::uint16_t type, std::size_t len) {
    const std::size_t total = NLA_HDRLEN + len;
    std::uint8_t* at = claim(NLA_ALIGN(total));
    const nlattr h{static_cast<std::uint16_t>(total), type};
    std::memcpy(at, &h, sizeof h);
    std::memset(at + total, 0, NLA_ALIGN(total) - total);
    return reinterpret_cast<char*>(at + NLA_HDRLEN);
  }

  static constexpr std::size_t kFirstCapacity = 256;

  std::vector<std::uint8_t> buf_;  // storage; bytes at and past end_ are unused
  std::size_t limit_;
  std::size_t end_ = 0;         // end of the open message (done_ when none is open)
  std::size_t done_ = 0;        // end of the last finished message
  std::size_t last_start_ = 0;  // start of the last finished message
  std::size_t count_ = 0;
  bool open_ = false;
  std::string sticky_;  // first write error since begin
};

// Writes messages straight into datagrams of the builder's limit, each datagram being the
// builder's buffer: `encode()` writes one message into `b` (begin to end); one that makes
// the datagram overflow is dropped, the datagram without it goes to `full` (as
// b.take()), and it is written again at the start of the next. Errors: encode's.
template <class Encode, class Full>
Result<void> put_filling(MessageBuilder& b, Encode&& encode, Full&& full) {
  IFCORE_TRY(encode());
  if (!b.over_limit()) return ok();
  b.drop_last();
  full(b.take());
  b.reserve(b.limit());
  return encode();
}

// Collects whole messages into datagrams of at most `limit` bytes each (a message larger
// than the limit gets a datagram of its own). For dumps built message by message.
class DatagramWriter {
 public:
  explicit DatagramWriter(std::size_t limit = kDefaultDatagramSize) : limit_(limit) {}
  void append(std::span<const std::uint8_t> message);
  std::vector<std::vector<std::uint8_t>> take();

 private:
  std::size_t limit_;
  std::vector<std::vector<std::uint8_t>> out_;
};

// What the requesting socket asked for with setsockopt(SOL_NETLINK, ...).
struct AckOptions {
  bool cap_ack = false;  // NETLINK_CAP_ACK: do not echo the request's payload
  bool ext_ack = false;  // NETLINK_EXT_ACK: append NLMSGERR_ATTR_* TLVs
};

// Writes NLMSG_DONE ending a dump: a 4-byte int `error` (0, or a negative errno the
// dump stopped with, as Linux sends it) with NLM_F_MULTI, echoing `seq`, addressed to
// `portid`.
// Errors: none in practice (EMSGSIZE from the builder cannot happen for 4 bytes).
// `flags`: NLM_F_MULTI and the dump's answer flags (Linux: cb->answer_flags, such as
// NLM_F_DUMP_FILTERED).
Result<void> encode_done(MessageBuilder& b, std::uint32_t seq, std::uint32_t portid, int error = 0,
                         std::uint16_t flags = 0);
// The same, for a dump that failed with an extack message (Linux: netlink_dump_done): with
// ext_ack and a message, NLM_F_ACK_TLVS and NLMSGERR_ATTR_MSG follow the error.
Result<void> encode_done_ext(MessageBuilder& b, std::uint32_t seq, std::uint32_t portid, int error,
                             std::string_view message, AckOptions opts);

// Writes the NLMSG_ERROR reply to `request` (the whole request message, header included):
// `error` is a positive errno, or 0 for an ACK. Linux (netlink_ack): an ACK and a capped
// error carry only the request's header and set NLM_F_CAPPED; an error otherwise echoes
// the whole request. With ext_ack, NLMSGERR_ATTR_MSG (NUL-terminated) is added when
// `message` is not empty, and NLMSGERR_ATTR_OFFS when `attr_offset` (from the start of
// the request's nlmsghdr) lies inside the request; NLM_F_ACK_TLVS says TLVs follow.
// Errors: EINVAL "request shorter than a netlink header".
Result<void> encode_error(MessageBuilder& b, std::span<const std::uint8_t> request,
                          std::uint32_t portid, int error, std::string_view message,
                          int attr_offset, AckOptions opts);
inline Result<void> encode_ack(MessageBuilder& b, std::span<const std::uint8_t> request,
                               std::uint32_t portid, AckOptions opts) {
  return encode_error(b, request, portid, 0, {}, -1, opts);
}
// The ACK of a request that succeeded with no message, as one finished datagram of 36
// bytes: what encode_ack writes for every AckOptions, without a builder (the reply every
// create, change and delete sends). Errors: EINVAL "request shorter than a netlink header".
Result<std::vector<std::uint8_t>> ack_datagram(std::span<const std::uint8_t> request,
                                               std::uint32_t portid);
// Same, from an Error value (code, message, attr_offset).
Result<void> encode_error(MessageBuilder& b, std::span<const std::uint8_t> request,
                          std::uint32_t portid, const Error& e, AckOptions opts);

// A decoded NLMSG_ERROR (what a client reads back).
struct ErrorReply {
  int error = 0;         // positive errno; 0 for an ACK
  nlmsghdr request{};    // the echoed request header
  std::string message;   // NLMSGERR_ATTR_MSG, empty if none
  int attr_offset = -1;  // NLMSGERR_ATTR_OFFS, -1 if none
  bool capped = false;   // NLM_F_CAPPED
};

// Decodes an NLMSG_ERROR message (from ifcored or the kernel).
// Errors: EINVAL "not an NLMSG_ERROR message", EINVAL "nlmsgerr payload too short ...",
// EINVAL for malformed extack TLVs.
Result<ErrorReply> decode_error(const Message& m);

// Decodes NLMSG_DONE's 4-byte error (positive errno; 0 = the dump ended normally). A
// missing payload (old senders) reads as 0.
// Errors: EINVAL "not an NLMSG_DONE message".
Result<int> decode_done(const Message& m);
// The extack message of an NLMSG_DONE that ends a refused dump (NLM_F_ACK_TLVS: the TLVs
// follow the 4-byte error, nothing echoed); empty if none.
std::string decode_done_message(const Message& m);

}  // namespace ifcore::wire
