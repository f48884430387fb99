// A small JSON value, reader and writer: as much JSON as the exchange format's manifests
// use (docs/reference/exchange-format.md). Objects keep their keys in insertion order so
// the answer reads like the Python agent's. Numbers keep whether they were written as
// integers, so an int input stays an int.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace etsuite {

class Json {
 public:
  enum class Kind { Null, Bool, Integer, Real, String, Array, Object };

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool value) : kind_(Kind::Bool), boolean_(value) {}
  Json(int value) : Json(static_cast<int64_t>(value)) {}
  Json(int64_t value) : kind_(Kind::Integer), integer_(value) {}
  Json(uint64_t value) : Json(static_cast<int64_t>(value)) {}
  Json(double value) : kind_(Kind::Real), real_(value) {}
  Json(const char* value) : kind_(Kind::String), text_(value) {}
  Json(std::string value) : kind_(Kind::String), text_(std::move(value)) {}

  static Json array() {
    Json value;
    value.kind_ = Kind::Array;
    return value;
  }
  static Json object() {
    Json value;
    value.kind_ = Kind::Object;
    return value;
  }

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_number() const { return kind_ == Kind::Integer || kind_ == Kind::Real; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_object() const { return kind_ == Kind::Object; }

  bool as_bool() const { return kind_ == Kind::Bool ? boolean_ : as_real() != 0; }
  int64_t as_integer() const {
    return kind_ == Kind::Integer ? integer_ : static_cast<int64_t>(as_real());
  }
  double as_real() const {
    if (kind_ == Kind::Integer) return static_cast<double>(integer_);
    if (kind_ == Kind::Real) return real_;
    if (kind_ == Kind::Bool) return boolean_ ? 1 : 0;
    throw std::runtime_error("a number was expected");
  }
  const std::string& as_string() const {
    if (kind_ != Kind::String) throw std::runtime_error("a string was expected");
    return text_;
  }
  const std::vector<Json>& items() const { return items_; }

  // Object access: `get` returns null for a missing key; `set` replaces or appends.
  const Json& get(const std::string& key) const;
  bool has(const std::string& key) const;
  Json& set(const std::string& key, Json value);
  Json& push(Json value) {
    kind_ = Kind::Array;
    items_.push_back(std::move(value));
    return items_.back();
  }

  static Json parse(const std::string& text);  // throws std::runtime_error
  std::string dump(int indent = 1) const;

 private:
  void write(std::string& out, int indent, int depth) const;

  Kind kind_ = Kind::Null;
  bool boolean_ = false;
  int64_t integer_ = 0;
  double real_ = 0;
  std::string text_;
  std::vector<Json> items_;                 // array items, or object values
  std::vector<std::string> keys_;           // object keys, parallel to items_
};

}  // namespace etsuite
