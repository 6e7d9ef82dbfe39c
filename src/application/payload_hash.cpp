#include "application/payload_hash.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace ic::application {

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 failed");  // broken crypto library: an invariant
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0x0f];
  }
  return hex;
}

std::string payload_hash(const charge::Charge& charge) {
  return sha256_hex(charge::canonical_form(charge));
}

}  // namespace ic::application
