// Hex encoding of bytes: digests and tokens (lower case), percent-escapes (upper case).
#pragma once

#include <span>
#include <string>

namespace ic {

enum class HexCase { Lower, Upper };

// Appends two digits per byte, high nibble first.
void append_hex(std::string& out, std::span<const unsigned char> bytes,
                HexCase letters = HexCase::Lower);

[[nodiscard]] std::string to_hex(std::span<const unsigned char> bytes,
                                 HexCase letters = HexCase::Lower);

}  // namespace ic
