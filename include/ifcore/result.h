// ifcore/result.h — errors are values.
//
// Every fallible call returns `Result<T>`: either a value or an `Error` carrying a positive
// errno and the message that becomes the rtnetlink extack text. `Result` is [[nodiscard]].
//
// Messages follow one style: lower case, no trailing period, name the object and the
// limit: `device "v0": mtu 70000 exceeds maximum 65535`.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <tl/expected.hpp>
#include <utility>

namespace ifcore {

// The policy of an attribute that failed validation, as Linux reports it in
// NLMSGERR_ATTR_POLICY (validate_nla sets it with NL_SET_ERR_MSG_ATTR_POL): the attribute's
// NL_ATTR_TYPE_* and the limits it was checked against (uapi linux/netlink.h,
// NL_POLICY_TYPE_ATTR_*). Wire only: set by the decoder, written by the error encoder.
struct ErrorPolicy {
  std::uint32_t type = 0;        // NL_ATTR_TYPE_*; 0: no policy to report
  std::uint32_t max_length = 0;  // strings, binary: NL_POLICY_TYPE_ATTR_MAX_LENGTH when not 0
  bool has_range = false;        // integers: NL_POLICY_TYPE_ATTR_MIN/MAX_VALUE_U (or _S)
  bool is_signed = false;        // the range as signed values (NL_ATTR_TYPE_S8..S64)
  std::uint64_t min_value = 0;   // an int64_t's bits when is_signed
  std::uint64_t max_value = 0;

  friend bool operator==(const ErrorPolicy&, const ErrorPolicy&) = default;
};

struct Error {
  int code = 0;          // positive errno value (EINVAL, EEXIST, ...)
  std::string message;   // extack text; may be empty
  int attr_offset = -1;  // offending attribute offset in the request, -1 if none (wire only)
  // Linux answers this error with its errno alone: the message explains it in ifcore's log
  // (and to embedders), never on the wire, where clients must see what the kernel sends.
  bool log_only = false;
  ErrorPolicy policy;  // the failed attribute's policy (wire only), policy.type 0 if none

  friend bool operator==(const Error&, const Error&) = default;
};

template <class T = void>
class [[nodiscard]] Result : public tl::expected<T, Error> {
 public:
  using tl::expected<T, Error>::expected;
  using Base = tl::expected<T, Error>;
  // User-provided, so that `Result<void>{}` (ok()) is not value-initialised: with an
  // implicit constructor the whole object (88 bytes, the room for an Error) was zeroed
  // before being constructed, at every success of every call.
  Result() {}                               // NOLINT(modernize-use-equals-default)
  Result(const Base& b) : Base(b) {}        // NOLINT(google-explicit-constructor)
  Result(Base&& b) : Base(std::move(b)) {}  // NOLINT(google-explicit-constructor)
};

// fail(EINVAL, "device \"{}\": bad", name) -> an unexpected Error, for `return fail(...)`.
inline tl::unexpected<Error> fail(int code, std::string message = {}) {
  return tl::unexpected<Error>(Error{code, std::move(message), -1});
}
template <typename... Args>
tl::unexpected<Error> fail(int code, fmt::format_string<Args...> f, Args&&... args) {
  return tl::unexpected<Error>(Error{code, fmt::format(f, std::forward<Args>(args)...), -1});
}
inline tl::unexpected<Error> fail(Error e) {
  return tl::unexpected<Error>(std::move(e));
}

// An error Linux sends without an extack message (see Error::log_only):
// `return fail_log_only(EEXIST, "device \"{}\" already exists", name);`
template <typename... Args>
tl::unexpected<Error> fail_log_only(int code, fmt::format_string<Args...> f, Args&&... args) {
  return tl::unexpected<Error>(Error{code, fmt::format(f, std::forward<Args>(args)...), -1, true});
}
// The same error, its message kept from the wire.
inline tl::unexpected<Error> fail_log_only(Error e) {
  e.log_only = true;
  return tl::unexpected<Error>(std::move(e));
}

// The success value for Result<void>.
inline Result<void> ok() {
  return {};
}

// Returns the errno name ("EEXIST") for logs and tests; "E?" for unknown values.
const char* errno_name(int code);

}  // namespace ifcore

// IFCORE_TRY(expr): evaluate a Result<void>-like expression and return its error if any.
#define IFCORE_TRY(expr)                                                         \
  do {                                                                           \
    auto ifcore_try_r_ = (expr);                                                 \
    if (!ifcore_try_r_) return ::ifcore::fail(std::move(ifcore_try_r_).error()); \
  } while (0)
