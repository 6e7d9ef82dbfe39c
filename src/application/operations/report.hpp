// The output the record commands share: timestamps, audit entries, and an action's outcome
// as its line and exit code.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "application/operations/operator_actions.hpp"
#include "application/operations/ports.hpp"
#include "core/error.hpp"
#include "core/time.hpp"
#include "idempotency/claim_record.hpp"

namespace ic::application {

// "2026-11-30T08:15:00Z"
[[nodiscard]] std::string iso(Instant t);
[[nodiscard]] nlohmann::json audit_json(const idempotency::AuditEntry& entry);
// "<command>: <code> <message>" as a note; returns 1.
[[nodiscard]] int store_failure(Console& console, std::string_view command, const Error& error);
// The outcome's line and note, and its exit code.
[[nodiscard]] int report_outcome(Console& console, std::string_view command,
                                 const OperatorOutcome& outcome, std::string_view key);

}  // namespace ic::application
