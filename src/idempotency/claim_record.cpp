#include "idempotency/claim_record.hpp"

#include "idempotency/idempotency_store.hpp"

namespace ic::idempotency {

std::string_view to_string(ClaimState state) {
  switch (state) {
    case ClaimState::InProgress:
      return "IN_PROGRESS";
    case ClaimState::Done:
      return "DONE";
    case ClaimState::Failed:
      return "FAILED";
  }
  return "UNKNOWN";
}

std::optional<ClaimState> parse_claim_state(std::string_view text) {
  for (auto state : {ClaimState::InProgress, ClaimState::Done, ClaimState::Failed}) {
    if (to_string(state) == text) return state;
  }
  return std::nullopt;
}

std::string_view to_string(ClaimOutcome outcome) {
  switch (outcome) {
    case ClaimOutcome::Acquired:
      return "ACQUIRED";
    case ClaimOutcome::DuplicateDone:
      return "DUPLICATE_DONE";
    case ClaimOutcome::DuplicateInProgress:
      return "DUPLICATE_IN_PROGRESS";
    case ClaimOutcome::DuplicateFailed:
      return "DUPLICATE_FAILED";
    case ClaimOutcome::PayloadMismatch:
      return "PAYLOAD_MISMATCH";
  }
  return "UNKNOWN";
}

std::string_view to_string(WriteOutcome outcome) {
  return outcome == WriteOutcome::Written ? "WRITTEN" : "FENCED";
}

std::string_view to_string(StoreOperation operation) {
  switch (operation) {
    case StoreOperation::Claim:
      return "claim";
    case StoreOperation::Complete:
      return "complete";
    case StoreOperation::Fail:
      return "fail";
    case StoreOperation::Extend:
      return "extend";
    case StoreOperation::Release:
      return "release";
    case StoreOperation::Get:
      return "get";
  }
  return "unknown";
}

ClaimOutcome classify_refusal(const ClaimRecord& existing, std::string_view payload_hash) {
  if (existing.payload_hash != payload_hash) return ClaimOutcome::PayloadMismatch;
  switch (existing.state) {
    case ClaimState::Done:
      return ClaimOutcome::DuplicateDone;
    case ClaimState::Failed:
      return ClaimOutcome::DuplicateFailed;
    case ClaimState::InProgress:
      break;
  }
  return ClaimOutcome::DuplicateInProgress;
}

bool claim_allowed(const ClaimRecord& existing, const ClaimRequest& request) {
  return existing.state == ClaimState::InProgress &&
         existing.payload_hash == request.payload_hash &&
         (existing.lease_until < request.now || existing.claim_token == request.token);
}

}  // namespace ic::idempotency
