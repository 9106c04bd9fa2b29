// Policies: the legacy set, parsing and printing.
#include <cerrno>
#include <charconv>

#include "ifcore/config.h"

namespace ifcore {

Policies Policies::legacy() {
  Policies p;
  p.ref_wait = RefWaitPolicy::Poll250;
  p.unregister = UnregisterPolicy::Single;
  p.grace = GracePolicy::Kernel;
  p.linkwatch = LinkWatchPolicy::Kernel;
  p.dst_priority = 0;
  return p;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

Result<int> parse_int(std::string_view key, std::string_view v) {
  int n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size())
    return fail(EINVAL, "policy \"{}\": \"{}\" is not a number", key, v);
  return n;
}

}  // namespace

Result<Policies> Policies::parse(std::string_view text) {
  Policies p;
  text = trim(text);
  if (text.empty() || text == "default") return p;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (item.empty()) continue;
    if (item == "default") continue;
    if (item == "legacy") {
      p = legacy();
      continue;
    }
    auto eq = item.find('=');
    if (eq == std::string_view::npos)
      return fail(EINVAL, "policy \"{}\": expected key=value", item);
    std::string_view k = trim(item.substr(0, eq)), v = trim(item.substr(eq + 1));
    if (k == "ref-wait") {
      if (v == "event")
        p.ref_wait = RefWaitPolicy::Event;
      else if (v == "backoff")
        p.ref_wait = RefWaitPolicy::Backoff;
      else if (v == "poll250")
        p.ref_wait = RefWaitPolicy::Poll250;
      else
        return fail(EINVAL, "policy \"ref-wait\": unknown value \"{}\"", v);
    } else if (k == "unregister") {
      if (v == "batched")
        p.unregister = UnregisterPolicy::Batched;
      else if (v == "single")
        p.unregister = UnregisterPolicy::Single;
      else
        return fail(EINVAL, "policy \"unregister\": unknown value \"{}\"", v);
    } else if (k == "grace") {
      if (v == "urcu")
        p.grace = GracePolicy::Urcu;
      else if (v == "kernel")
        p.grace = GracePolicy::Kernel;
      else
        return fail(EINVAL, "policy \"grace\": unknown value \"{}\"", v);
    } else if (k == "linkwatch") {
      if (v == "adaptive")
        p.linkwatch = LinkWatchPolicy::Adaptive;
      else if (v == "kernel")
        p.linkwatch = LinkWatchPolicy::Kernel;
      else
        return fail(EINVAL, "policy \"linkwatch\": unknown value \"{}\"", v);
    } else if (k == "dst-priority") {
      auto n = parse_int(k, v);
      if (!n) return fail(n.error());
      p.dst_priority = *n;
    } else if (k == "grace-floor-ms") {
      auto n = parse_int(k, v);
      if (!n) return fail(n.error());
      if (*n < 0) return fail(EINVAL, "policy \"grace-floor-ms\": {} is negative", *n);
      p.grace_floor = std::chrono::milliseconds(*n);
    } else if (k == "max-devices" || k == "max-namespaces") {
      auto n = parse_int(k, v);
      if (!n) return fail(n.error());
      if (*n < 0) return fail(EINVAL, "policy \"{}\": {} is negative", k, *n);
      (k == "max-devices" ? p.max_devices : p.max_namespaces) = static_cast<std::size_t>(*n);
    } else {
      return fail(EINVAL, "unknown policy \"{}\"", k);
    }
  }
  return p;
}

std::string Policies::to_string() const {
  auto rw = ref_wait == RefWaitPolicy::Event     ? "event"
            : ref_wait == RefWaitPolicy::Backoff ? "backoff"
                                                 : "poll250";
  std::string limits;
  if (max_devices) limits += fmt::format(",max-devices={}", max_devices);
  if (max_namespaces) limits += fmt::format(",max-namespaces={}", max_namespaces);
  return fmt::format(
      "ref-wait={},unregister={},grace={},linkwatch={},dst-priority={},grace-floor-ms={}{}", rw,
      unregister == UnregisterPolicy::Batched ? "batched" : "single",
      grace == GracePolicy::Urcu ? "urcu" : "kernel",
      linkwatch == LinkWatchPolicy::Adaptive ? "adaptive" : "kernel", dst_priority,
      std::chrono::duration_cast<std::chrono::milliseconds>(grace_floor).count(), limits);
}

}  // namespace ifcore
