// SHA-256 over OpenSSL, with OpenSSL kept out of this header.
//
//   const Sha256Digest d = sha256({header, body});   // the parts are hashed as one message
//   const std::string h = sha256_hex("v1|CHG-1|...");   // lower-case hex
#pragma once

#include <array>
#include <initializer_list>
#include <string>
#include <string_view>

namespace ic {

using Sha256Digest = std::array<unsigned char, 32>;

// The digest of the concatenation of `parts`. Thread-safe. Throws std::runtime_error only when
// the crypto library itself is broken (no SHA-256): an invariant, not an input error.
[[nodiscard]] Sha256Digest sha256(std::initializer_list<std::string_view> parts);

[[nodiscard]] std::string sha256_hex(std::string_view data);

}  // namespace ic
