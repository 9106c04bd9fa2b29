// cli/output.h — one printer for `ip`'s two faces: plain text and `-j` JSON. Each call
// names the JSON key and the text it stands for; in text mode only the text is written,
// in JSON mode only the key and value (as iproute2's print_* helpers behave).
#pragma once

#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ifcore::cli {

using Json = nlohmann::ordered_json;

inline constexpr char kRawMark = '\x01';  // Out::raw_number's mark
// A line break that `-o` keeps: iproute2 writes a few as a plain "\n" rather than its _SL_
// (print_route's "\n\tnh_info "). Written in text, it becomes '\n' when the record ends.
inline constexpr char kHardNewline = '\x02';

class Out {
 public:
  Out(bool json, bool pretty, bool oneline = false)
      : json_(json), pretty_(pretty), oneline_(oneline && !json) {}
  bool json() const { return json_; }
  bool oneline() const { return oneline_; }

  // Text only.
  void text(std::string_view s) {
    if (!json_) buf_.append(s);
  }
  // A JSON number written as `text` is (iproute2 prints some with printf: `0.00`).
  static Json raw_number(const std::string& text) { return std::string(1, kRawMark) + text; }

  // A member of the current JSON object (text mode: `txt`).
  void kv(std::string_view key, Json v, std::string_view txt) {
    if (json_)
      member(key, std::move(v));
    else
      buf_.append(txt);
  }
  // JSON only.
  void jkv(std::string_view key, Json v) {
    if (json_) member(key, std::move(v));
  }
  // Nesting (JSON only; text is unaffected).
  void open_object(std::string_view key = {});
  void open_array(std::string_view key = {});
  void close();
  // Appends a value to the current JSON array.
  void push(Json v);

  // Ends a record (a device, an address): with `-o` its inner line breaks become "\\", as
  // iproute2's _SL_ is in oneline mode; its last one stays. flush() ends one too.
  void end_record();
  // Writes what was printed so far to `f` (text at once; JSON once the outer array closes).
  void flush(std::FILE* f = stdout);
  // Writes the JSON document (if any) and a newline, as `ip -j` ends its output.
  void finish(std::FILE* f = stdout);
  // Called before anything is written (`ifc -batch` erases its progress line).
  void set_before_write(std::function<void()> hook) { before_write_ = std::move(hook); }

 private:
  void member(std::string_view key, Json v);
  bool json_, pretty_, oneline_;
  std::string buf_;
  std::function<void()> before_write_;
  std::size_t record_start_ = 0;  // where the current record begins in buf_
  Json root_;
  std::vector<Json*> stack_;
  bool have_root_ = false;
};

// Right-aligns `s` in `width` columns.
std::string rpad(std::string_view s, std::size_t width);

}  // namespace ifcore::cli
