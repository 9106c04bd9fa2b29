// cli/progress.h — how far `ifc -batch` is, on standard error when that is a terminal: the
// lines done and, for a file, the share of its bytes read. Redrawn in place at most every
// 100 ms, and erased before anything else is printed and at the end, so that the batch's
// own output and errors read as without it.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace ifcore::cli {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kInterval{100};

  // Draws on `out` when `enabled`; `total_bytes` is the input's size, if known.
  Progress(std::FILE* out, bool enabled, std::string name,
           std::optional<std::uint64_t> total_bytes);
  ~Progress() { hide(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // The batch has read `lines` lines, `bytes` bytes, at `now`: drawn the first time, then
  // when the last drawing is kInterval old.
  void update(std::uint64_t lines, std::uint64_t bytes, Clock::time_point now);
  // Erases the line, if shown (before other output, and at the end).
  void hide();
  bool shown() const { return shown_; }

 private:
  std::FILE* out_;
  bool enabled_;
  std::string name_;
  std::optional<std::uint64_t> total_;
  bool shown_ = false;
  std::optional<Clock::time_point> drawn_;
};

}  // namespace ifcore::cli
