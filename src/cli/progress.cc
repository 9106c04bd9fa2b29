// cli/progress.cc — `ifc -batch`'s progress line (progress.h).
#include "cli/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace ifcore::cli {

Progress::Progress(std::FILE* out, bool enabled, std::string name,
                   std::optional<std::uint64_t> total_bytes)
    : out_(out), enabled_(enabled), name_(std::move(name)), total_(total_bytes) {}

void Progress::update(std::uint64_t lines, std::uint64_t bytes, Clock::time_point now) {
  if (!enabled_) return;
  if (drawn_ && now - *drawn_ < kInterval) return;
  drawn_ = now;
  std::string text = fmt::format("\r{}: {} lines", name_, lines);
  if (total_ && *total_ > 0)
    text += fmt::format(", {}%", std::min<std::uint64_t>(100, bytes * 100 / *total_));
  text += "\x1b[K";  // the rest of a longer line before it goes
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
  shown_ = true;
}

void Progress::hide() {
  if (!shown_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  shown_ = false;
}

}  // namespace ifcore::cli
