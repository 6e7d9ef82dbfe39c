// The domain result recorded when a charge is final (the record's `status` attribute).
#pragma once

#include <string_view>

namespace ic::domain {

// DebitUncertain: an earlier attempt may have debited, the bank can no longer say (its
// idempotency window has passed), so the charge is never sent again automatically.
enum class ChargeStatus { Debited, DebitedNotificationFailed, FailedPermanent, DebitUncertain };

[[nodiscard]] constexpr std::string_view to_string(ChargeStatus status) {
  switch (status) {
    case ChargeStatus::Debited:
      return "DEBITED";
    case ChargeStatus::DebitedNotificationFailed:
      return "DEBITED_NOTIFICATION_FAILED";
    case ChargeStatus::FailedPermanent:
      return "FAILED_PERMANENT";
    case ChargeStatus::DebitUncertain:
      return "DEBIT_UNCERTAIN";
  }
  return "UNKNOWN";
}

// The DLQ failureReason values of docs/design.md §5.
namespace dlq_reason {
inline constexpr std::string_view kInvalidMessage = "INVALID_MESSAGE";
inline constexpr std::string_view kPayloadMismatch = "PAYLOAD_MISMATCH";
inline constexpr std::string_view kPermanentDebitFailure = "PERMANENT_DEBIT_FAILURE";
inline constexpr std::string_view kPreviouslyFailed = "PREVIOUSLY_FAILED";
inline constexpr std::string_view kDebitUncertain = "DEBIT_UNCERTAIN";
}  // namespace dlq_reason

}  // namespace ic::domain
