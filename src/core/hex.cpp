#include "core/hex.hpp"

#include <string_view>

namespace ic {

void append_hex(std::string& out, std::span<const unsigned char> bytes, HexCase letters) {
  const std::string_view digits =
      letters == HexCase::Lower ? "0123456789abcdef" : "0123456789ABCDEF";
  for (const unsigned char byte : bytes) {
    out.push_back(digits[byte >> 4]);
    out.push_back(digits[byte & 0x0F]);
  }
}

std::string to_hex(std::span<const unsigned char> bytes, HexCase letters) {
  std::string out;
  out.reserve(2 * bytes.size());
  append_hex(out, bytes, letters);
  return out;
}

}  // namespace ic
