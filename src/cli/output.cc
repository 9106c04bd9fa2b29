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
  record_start_ = buf_.size();
}

void Out::flush(std::FILE* f) {
  end_record();
  record_start_ = 0;
  if (!buf_.empty()) {
    std::fwrite(buf_.data(), 1, buf_.size(), f);
    buf_.clear();
  }
  std::fflush(f);
}

void Out::finish(std::FILE* f) {
  flush(f);
  if (json_ && have_root_) {
    std::string s = pretty_ ? root_.dump(4) : root_.dump();
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
