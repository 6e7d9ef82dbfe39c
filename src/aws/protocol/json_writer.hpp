// Writes one JSON document straight into a string: the request bodies the consumer sends on
// every charge, without building a DOM first. Building a DynamoDB request as an nlohmann-json
// tree and dumping it was about a sixth of the consumer's instructions per charge
// (docs/performance-profile.md); this writes the same document in one pass.
//
//   JsonWriter w;
//   w.begin_object().member("TableName", "t").key("Key").begin_object()
//    .member("pk", "CHG-1").end_object().end_object();
//   std::string body = std::move(w).take();   // {"TableName":"t","Key":{"pk":"CHG-1"}}
//
// Strings are escaped as nlohmann-json escapes them (so a valid UTF-8 string is written byte
// for byte as json(text).dump() writes it); bytes that are not UTF-8 become U+FFFD, as
// nlohmann-json's error_handler_t::replace makes them, so any input gives a valid document and
// nothing throws. Structure is the caller's: key() belongs inside an object before each value,
// and every begin has its end (checked by assertions, not at run time). Not thread-safe; one
// writer per document.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ic::aws {

class JsonWriter {
 public:
  // Room for a typical request body up front: growing the string by doubling from empty
  // cost more than writing into it.
  explicit JsonWriter(std::size_t capacity = 1024) { out_.reserve(capacity); }

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(bool flag);
  JsonWriter& member(std::string_view name, std::string_view text) { return key(name).value(text); }

  [[nodiscard]] std::string take() && { return std::move(out_); }

 private:
  void before_value();
  void append_string(std::string_view text);

  std::string out_;
  // Bit d: the object at depth d already has a member, so the next one needs a comma.
  std::uint64_t has_member_ = 0;
  int depth_ = 0;
  bool after_key_ = false;
};

}  // namespace ic::aws
