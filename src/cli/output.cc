// cli/output.cc — the text/JSON printer.
#include "cli/output.h"

namespace ifcore::cli {

void Out::member(std::string_view key, Json v) {
  if (stack_.empty()) return;
  Json& top = *stack_.back();
  if (top.is_array())
    top.push_back(std::move(v));
  else
    top[std::string(key)] = std::move(v);
}

void Out::open_object(std::string_view key) {
  if (!json_) return;
  if (stack_.empty()) {
    root_ = Json::object();
    have_root_ = true;
    stack_.push_back(&root_);
    return;
  }
  Json& top = *stack_.back();
  if (top.is_array()) {
    top.push_back(Json::object());
    stack_.push_back(&top.back());
  } else {
    top[std::string(key)] = Json::object();
    stack_.push_back(&top[std::string(key)]);
  }
}

void Out::open_array(std::string_view key) {
  if (!json_) return;
  if (stack_.empty()) {
    root_ = Json::array();
    have_root_ = true;
    stack_.push_back(&root_);
    return;
  }
  Json& top = *stack_.back();
  if (top.is_array()) {
    top.push_back(Json::array());
    stack_.push_back(&top.back());
  } else {
    top[std::string(key)] = Json::array();
    stack_.push_back(&top[std::string(key)]);
  }
}

void Out::close() {
  if (json_ && !stack_.empty()) stack_.pop_back();
}

void Out::push(Json v) {
  if (json_ && !stack_.empty() && stack_.back()->is_array()) stack_.back()->push_back(std::move(v));
}

void Out::end_record() {
  if (oneline_)
    for (std::size_t i = record_start_; i + 1 < buf_.size(); ++i)
      if (buf_[i] == '\n') buf_[i] = '\\';
  for (std::size_t i = record_start_; i < buf_.size(); ++i)
    if (buf_[i] == kHardNewline) buf_[i] = '\n';
  record_start_ = buf_.size();
}

void Out::flush(std::FILE* f) {
  end_record();
  record_start_ = 0;
  if (!buf_.empty()) {
    if (before_write_) before_write_();
    std::fwrite(buf_.data(), 1, buf_.size(), f);
    buf_.clear();
  }
  std::fflush(f);
}

namespace {

// iproute2's json_writer (lib/json_writer.c). Pretty: an object's members each on a line of
// their own, indented four spaces a level, its closing brace on one too; an array's elements
// on the same line, `[ a,b ]`; no space after a separating comma. Compact: no spaces.
class PrettyWriter {
 public:
  explicit PrettyWriter(bool pretty) : pretty_(pretty) {}
  std::string out;
  void value(const Json& v) {
    if (v.is_object()) {
      begin('{');
      for (auto it = v.begin(); it != v.end(); ++it) {
        eor();
        eol();
        sep_ = '\0';
        out += Json(it.key()).dump();
        out += pretty_ ? ": " : ":";
        value(it.value());
      }
      end('}');
    } else if (v.is_array()) {
      begin('[');
      if (pretty_) out += ' ';
      for (const auto& e : v) value(e);
      if (sep_ && pretty_) out += ' ';
      sep_ = '\0';
      end(']');
    } else {
      eor();
      const std::string* raw = v.is_string() ? v.get_ptr<const std::string*>() : nullptr;
      if (raw && !raw->empty() && (*raw)[0] == kRawMark)
        out.append(*raw, 1);  // a number printed as iproute2 formats it (Out::raw_number)
      else
        out += v.dump();
    }
  }

 private:
  void eor() {
    if (sep_) out += sep_;
    sep_ = ',';
  }
  void eol() {
    if (!pretty_) return;
    out += '\n';
    out.append(std::size_t(depth_) * 4, ' ');
  }
  void begin(char c) {
    eor();
    out += c;
    ++depth_;
    sep_ = '\0';
  }
  void end(char c) {
    --depth_;
    if (sep_) eol();
    out += c;
    sep_ = ',';
  }
  bool pretty_;
  int depth_ = 0;
  char sep_ = '\0';
};

}  // namespace

void Out::finish(std::FILE* f) {
  flush(f);
  if (json_ && have_root_) {
    if (before_write_) before_write_();
    PrettyWriter w(pretty_);
    w.value(root_);
    std::string s = std::move(w.out);
    std::fprintf(f, "%s\n", s.c_str());
    have_root_ = false;
    stack_.clear();
  }
  std::fflush(f);
}

std::string rpad(std::string_view s, std::size_t width) {
  std::string r;
  if (s.size() < width) r.assign(width - s.size(), ' ');
  r.append(s);
  return r;
}

}  // namespace ifcore::cli
