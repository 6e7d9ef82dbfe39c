// JSON written as text (json_text.hpp).
#include "fast_aws/json_text.hpp"

#include <charconv>
#include <cstdio>

namespace ic::bench::fast_aws {

void put_string(std::string& out, std::string_view text) {
  out += '"';
  std::size_t plain = 0;  // start of the run of bytes that need no escape
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.substr(plain, i - plain));
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
        out += escaped;
      }
    }
    plain = i + 1;
  }
  out.append(text.substr(plain));
  out += '"';
}

void put_key(std::string& out, std::string_view name) {
  put_string(out, name);
  out += ':';
}

void put_number(std::string& out, std::int64_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

std::string number_text(std::int64_t value) {
  std::string out;
  put_number(out, value);
  return out;
}

}  // namespace ic::bench::fast_aws
