#include "aws/protocol/json_writer.hpp"

#include <array>
#include <cassert>

namespace ic::aws {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// How many bytes at the start of `text` (which starts with a byte >= 0x80) agree with a
// well-formed UTF-8 sequence (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF),
// and how many that sequence needs; 0 needed when the first byte cannot lead one.
struct Utf8Prefix {
  std::size_t matched = 0;
  std::size_t needed = 0;
};

Utf8Prefix utf8_prefix(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  Utf8Prefix prefix{.matched = 1};
  unsigned char low = 0x80;  // the range of the second byte, narrower after some leads
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    prefix.needed = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    prefix.needed = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    prefix.needed = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return prefix;
  }
  while (prefix.matched < prefix.needed && prefix.matched < text.size()) {
    const unsigned char next = byte(prefix.matched);
    const bool fits = prefix.matched == 1 ? (next >= low && next <= high) : (next & 0xC0U) == 0x80U;
    if (!fits) break;
    ++prefix.matched;
  }
  return prefix;
}

}  // namespace

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  assert(depth_ == 0 && out_.empty() && "a value inside an object needs a key");
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  assert(depth_ < 63);
  ++depth_;
  has_member_ &= ~(std::uint64_t{1} << depth_);
  out_ += '{';
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  assert(depth_ > 0 && !after_key_);
  --depth_;
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  assert(depth_ > 0 && !after_key_);
  const std::uint64_t bit = std::uint64_t{1} << depth_;
  if ((has_member_ & bit) != 0) out_ += ',';
  has_member_ |= bit;
  append_string(name);
  out_ += ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  append_string(text);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
  return *this;
}

void JsonWriter::append_string(std::string_view text) {
  static constexpr std::array<char, 16> kHex = {'0', '1', '2', '3', '4', '5', '6', '7',
                                                '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
  out_ += '"';
  std::size_t plain = 0;  // start of the run of bytes copied as they are
  std::size_t i = 0;
  const auto flush = [&] { out_.append(text.substr(plain, i - plain)); };
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const Utf8Prefix prefix = utf8_prefix(text.substr(i));
      if (prefix.matched == prefix.needed) {
        i += prefix.needed;
        continue;
      }
      // One U+FFFD for the longest start of a sequence that could have been well-formed (the
      // "maximal subpart" of Unicode §3.9, which is what nlohmann-json replaces).
      flush();
      out_ += kReplacement;
      plain = i += prefix.matched;
      continue;
    }
    flush();
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\b':
        out_ += "\\b";
        break;
      case '\f':
        out_ += "\\f";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default:
        out_ += "\\u00";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 0x0F];
    }
    plain = ++i;
  }
  flush();
  out_ += '"';
}

}  // namespace ic::aws
