#include "aws/protocol/uri_encode.hpp"

#include <cctype>

#include "core/hex.hpp"

namespace ic::aws {
namespace {

bool unreserved(unsigned char c) {
  return std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~';
}

}  // namespace

std::string uri_encode(std::string_view raw, bool keep_slash) {
  std::string out;
  out.reserve(raw.size() + raw.size() / 2);
  for (char ch : raw) {
    const auto c = static_cast<unsigned char>(ch);
    if (unreserved(c) || (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      append_hex(out, {&c, 1}, HexCase::Upper);
    }
  }
  return out;
}

}  // namespace ic::aws
