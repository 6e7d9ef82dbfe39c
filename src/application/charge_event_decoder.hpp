// Decodes and validates a ChargeDueEvent v1 message body (docs/design.md §5). Anything it refuses
// becomes INVALID_MESSAGE with the field and the rule as failureDetail; it never throws and
// never crashes on hostile input.
//
//   auto event = decode_charge_due_event(body);
//   if (!event) dead_letter("INVALID_MESSAGE", event.error().detail());
#pragma once

#include <cstddef>
#include <expected>
#include <optional>
#include <string_view>

#include "domain/charge.hpp"
#include "domain/validation_error.hpp"

namespace ic::application {

inline constexpr std::size_t kMaxBodyBytes = 1024 * 1024;
inline constexpr int kSchemaVersion = 1;
// Deeper nesting is refused before it can cost stack or memory; a valid event has depth 1.
inline constexpr std::size_t kMaxNestingDepth = 32;
// The field that names the charge: the message's business key, which a dead-lettered copy
// also carries as a message attribute of this name (§5), for `redrive` and operators to read.
inline constexpr std::string_view kChargeIdField = domain::rules::ChargeIdRules::kField;

[[nodiscard]] std::expected<domain::Charge, domain::ValidationError> decode_charge_due_event(
    std::string_view body);

// The chargeId of a body the decoder refused, when the body got as far as naming a valid one:
// a dead-lettered INVALID_MESSAGE then still carries the chargeId attribute (§5), and an
// operator can find it. nullopt when the body names none, or none that is valid.
[[nodiscard]] std::optional<domain::ChargeId> parseable_charge_id(std::string_view body);

}  // namespace ic::application
