#include "application/payload_hash.hpp"

#include "core/sha256.hpp"

namespace ic::application {

std::string payload_hash(const domain::Charge& charge) {
  return sha256_hex(domain::canonical_form(charge));
}

}  // namespace ic::application
