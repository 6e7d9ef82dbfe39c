// SHA-256 (lower-case hex) of a charge's canonical form: independent of JSON key order and
// whitespace, so a producer retry with a reformatted body is still recognised as the same.
#pragma once

#include <string>

#include "domain/charge.hpp"

namespace ic::application {

[[nodiscard]] std::string payload_hash(const domain::Charge& charge);

}  // namespace ic::application
