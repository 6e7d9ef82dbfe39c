#include "core/text_escape.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

namespace ic {
namespace {

constexpr std::string_view kEllipsis = "...";

struct Decoded {
  char32_t code_point;
  std::size_t length;
};

// The lead byte of a multi-byte UTF-8 sequence: (lead & mask) == bits; the shortest value
// that needs `length` bytes (anything smaller is an overlong form).
struct LeadByte {
  std::uint8_t mask;
  std::uint8_t bits;
  std::size_t length;
  char32_t minimum;
};
constexpr std::array<LeadByte, 3> kLeadBytes{
    {{0xE0, 0xC0, 2, 0x80}, {0xF0, 0xE0, 3, 0x800}, {0xF8, 0xF0, 4, 0x10000}}};

// The code point at the start of `text`, or nullopt for malformed UTF-8 (overlong forms,
// surrogates, values above U+10FFFF, truncated sequences).
std::optional<Decoded> decode_utf8(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[i]); };
  const std::uint8_t lead = byte(0);
  if (lead < 0x80) return Decoded{lead, 1};
  const auto* kind = std::ranges::find_if(kLeadBytes, [&](const LeadByte& candidate) {
    return (lead & candidate.mask) == candidate.bits;
  });
  if (kind == kLeadBytes.end() || text.size() < kind->length) return std::nullopt;
  char32_t value = lead & static_cast<std::uint8_t>(~kind->mask);
  for (std::size_t i = 1; i < kind->length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return std::nullopt;
    value = (value << 6) | (byte(i) & 0x3Fu);
  }
  if (value < kind->minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
    return std::nullopt;
  }
  return Decoded{value, kind->length};
}

bool printable(char32_t c) {
  if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0)) return false;  // C0, DEL, C1 controls
  return c != 0xFFFE && c != 0xFFFF;
}

constexpr std::array<char, 16> kHex = {'0', '1', '2', '3', '4', '5', '6', '7',
                                       '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};

std::string hex_escape(std::string_view prefix, std::uint32_t value, int digits) {
  std::string out(prefix);
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
    out.push_back(kHex[(value >> shift) & 0xFu]);
  }
  return out;
}

// One input unit as output text, and how many characters (code points) that text has.
struct Piece {
  std::string text;
  std::size_t chars;
};

Piece next_piece(std::string_view rest, std::size_t& consumed) {
  const auto decoded = decode_utf8(rest);
  if (!decoded) {
    consumed = 1;
    return {hex_escape("\\x", static_cast<std::uint8_t>(rest[0]), 2), 4};
  }
  consumed = decoded->length;
  const char32_t c = decoded->code_point;
  if (printable(c)) return {std::string(rest.substr(0, decoded->length)), 1};
  if (c <= 0xFFFF) return {hex_escape("\\u", c, 4), 6};
  return {hex_escape("\\U", c, 8), 10};
}

}  // namespace

std::string escape_bounded(std::string_view text, std::size_t max_chars) {
  max_chars = std::max(max_chars, kEllipsis.size());
  std::string out;
  std::size_t chars = 0;
  // Whether everything fits is only known at the end, so remember where the output stood when
  // it last had room for the ellipsis.
  std::size_t cut_bytes = 0;
  while (!text.empty()) {
    std::size_t consumed = 0;
    Piece piece = next_piece(text, consumed);
    text.remove_prefix(consumed);
    if (chars + piece.chars > max_chars) {
      out.resize(cut_bytes);
      out.append(kEllipsis);
      return out;
    }
    out.append(piece.text);
    chars += piece.chars;
    if (chars + kEllipsis.size() <= max_chars) cut_bytes = out.size();
  }
  return out;
}

bool xml_chars_only(std::string_view text) {
  while (!text.empty()) {
    const auto decoded = decode_utf8(text);
    if (!decoded) return false;
    const char32_t c = decoded->code_point;
    const bool allowed = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
                         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
    if (!allowed) return false;
    text.remove_prefix(decoded->length);
  }
  return true;
}

}  // namespace ic
