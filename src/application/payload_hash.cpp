#include "application/payload_hash.hpp"

#include "core/sha256.hpp"

namespace ic::application {

std::string payload_hash(const charge::Charge& charge) {
  return sha256_hex(charge::canonical_form(charge));
}

}  // namespace ic::application
