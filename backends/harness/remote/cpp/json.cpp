// The reader and writer of json.h. The reader is a recursive descent over the text; it
// accepts standard JSON (no comments, no trailing commas) and decodes \uXXXX escapes,
// surrogate pairs included (Python's json.dumps writes one for a character beyond the
// Basic Multilingual Plane).
#include "json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace etsuite {

namespace {

const Json kNull;

class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  Json document() {
    Json value = next();
    skip_space();
    if (at_ < text_.size()) fail("text after the JSON value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(at_));
  }

  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t')) {
      ++at_;
    }
  }

  bool take(const char* word) {
    size_t length = std::char_traits<char>::length(word);
    if (text_.compare(at_, length, word) != 0) return false;
    at_ += length;
    return true;
  }

  Json next() {
    skip_space();
    if (at_ >= text_.size()) fail("unexpected end");
    char c = text_[at_];
    if (c == '{' || c == '[') {
      // nesting is bounded, so a hostile document cannot overflow the stack
      if (++depth_ > kMaxDepth) fail("more than " + std::to_string(kMaxDepth) + " levels of nesting");
      Json value = c == '{' ? object() : array();
      --depth_;
      return value;
    }
    if (c == '"') return Json(string());
    if (take("true")) return Json(true);
    if (take("false")) return Json(false);
    if (take("null")) return Json();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    fail(std::string("unexpected character '") + c + "'");
  }

  Json object() {
    Json value = Json::object();
    ++at_;
    skip_space();
    if (take("}")) return value;
    while (true) {
      skip_space();
      if (at_ >= text_.size() || text_[at_] != '"') fail("a key was expected");
      std::string key = string();
      skip_space();
      if (!take(":")) fail("':' was expected");
      value.set(key, next());
      skip_space();
      if (take(",")) continue;
      if (take("}")) return value;
      fail("',' or '}' was expected");
    }
  }

  Json array() {
    Json value = Json::array();
    ++at_;
    skip_space();
    if (take("]")) return value;
    while (true) {
      value.push(next());
      skip_space();
      if (take(",")) continue;
      if (take("]")) return value;
      fail("',' or ']' was expected");
    }
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  // The four hex digits of a \u escape, `at_` on the first.
  unsigned hex4() {
    if (at_ + 4 > text_.size()) fail("a short \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[at_++];
      int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (digit < 0) fail("a \\u escape that is not hex");
      code = code * 16 + static_cast<unsigned>(digit);
    }
    return code;
  }

  // A \u escape's character: a surrogate pair (how JSON writes one beyond the Basic
  // Multilingual Plane) is one character; a lone surrogate is U+FFFD.
  unsigned escaped_code() {
    unsigned code = hex4();
    if (code >= 0xD800 && code < 0xDC00 && text_.compare(at_, 2, "\\u") == 0) {
      size_t back = at_;
      at_ += 2;
      unsigned low = hex4();
      if (low >= 0xDC00 && low < 0xE000) return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
      at_ = back;
    }
    return code >= 0xD800 && code < 0xE000 ? 0xFFFD : code;
  }

  std::string string() {
    std::string out;
    ++at_;  // the opening quote
    while (at_ < text_.size()) {
      char c = text_[at_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) break;
      char escaped = text_[at_++];
      switch (escaped) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': append_utf8(out, escaped_code()); break;
        default: out += escaped;  // \" \\ \/
      }
    }
    fail("an unterminated string");
  }

  Json number() {
    size_t start = at_;
    bool integral = true;
    if (text_[at_] == '-') ++at_;
    while (at_ < text_.size()) {
      char c = text_[at_];
      if (c == '.' || c == 'e' || c == 'E' || c == '+' || (c == '-' && at_ > start)) {
        integral = false;
      } else if (c < '0' || c > '9') {
        break;
      }
      ++at_;
    }
    std::string digits = text_.substr(start, at_ - start);
    if (integral) return Json(static_cast<int64_t>(std::strtoll(digits.c_str(), nullptr, 10)));
    return Json(std::strtod(digits.c_str(), nullptr));
  }

  static constexpr int kMaxDepth = 256;
  const std::string& text_;
  size_t at_ = 0;
  int depth_ = 0;
};

void write_string(std::string& out, const std::string& text) {
  out += '"';
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04x", c);
          out += escape;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

}  // namespace

const Json& Json::get(const std::string& key) const {
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return items_[i];
  }
  return kNull;
}

bool Json::has(const std::string& key) const {
  for (const auto& name : keys_) {
    if (name == key) return true;
  }
  return false;
}

Json& Json::set(const std::string& key, Json value) {
  kind_ = Kind::Object;
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return items_[i] = std::move(value);
  }
  keys_.push_back(key);
  items_.push_back(std::move(value));
  return items_.back();
}

Json Json::parse(const std::string& text) { return Reader(text).document(); }

std::string Json::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  return out;
}

void Json::write(std::string& out, int indent, int depth) const {
  auto newline = [&](int level) {
    if (indent <= 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * level), ' ');
  };
  switch (kind_) {
    case Kind::Null: out += "null"; return;
    case Kind::Bool: out += boolean_ ? "true" : "false"; return;
    case Kind::Integer: out += std::to_string(integer_); return;
    case Kind::Real: {
      if (!std::isfinite(real_)) {  // JSON has no infinity or NaN
        out += "null";
        return;
      }
      // The shortest form that reads back as the same double, as Python writes it.
      char number[32];
      for (int digits = 15; digits <= 17; ++digits) {
        std::snprintf(number, sizeof number, "%.*g", digits, real_);
        if (std::strtod(number, nullptr) == real_) break;
      }
      std::string text = number;
      if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // still a float
      out += text;
      return;
    }
    case Kind::String: write_string(out, text_); return;
    case Kind::Array:
    case Kind::Object: {
      bool is_object = kind_ == Kind::Object;
      out += is_object ? '{' : '[';
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) out += ',';
        newline(depth + 1);
        if (is_object) {
          write_string(out, keys_[i]);
          out += indent > 0 ? ": " : ":";
        }
        items_[i].write(out, indent, depth + 1);
      }
      if (!items_.empty()) newline(depth);
      out += is_object ? '}' : ']';
      return;
    }
  }
}

}  // namespace etsuite
