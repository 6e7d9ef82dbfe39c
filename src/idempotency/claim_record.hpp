// The idempotency record of one business key and the vocabulary of claiming it (docs/design.md §3).
// Generic: nothing here knows about charges, so another consumer can reuse the protocol.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.hpp"

namespace ic::idempotency {

enum class ClaimState { InProgress, Done, Failed };

[[nodiscard]] std::string_view to_string(ClaimState state);
[[nodiscard]] std::optional<ClaimState> parse_claim_state(std::string_view text);

// One operator write on a record (docs/design.md §3 `audit`): who did what, when and why.
struct AuditEntry {
  Instant at{};
  std::string actor;
  std::string action;  // e.g. reopen, renotify
  std::string reason;
  friend bool operator==(const AuditEntry&, const AuditEntry&) = default;
};

// One item of the idempotency table. Field names follow the table's attributes.
struct ClaimRecord {
  std::string key;  // pk
  ClaimState state = ClaimState::InProgress;
  Instant lease_until{};
  std::string claim_token;
  std::int64_t fence = 0;
  std::string owner;
  std::string payload_hash;
  std::string status;          // domain result once final, empty before
  std::string failure_reason;  // machine code once FAILED
  std::string result_ref;      // the effect's reference (debitRef) once DONE
  Instant created_at{};
  Instant updated_at{};
  std::optional<Instant> completed_at;
  std::int64_t expires_at_epoch_seconds = 0;  // DynamoDB TTL
  // firstAttemptAt: written by the first claim (a later claim keeps it) and removed by reopen, so
  // no attempt of the effect can have reached its target before it (docs/design.md §3).
  std::optional<Instant> first_attempt_at;
  // Kept only while the record needs a person: what the follow-up needs without the message.
  std::string payload;
  std::vector<AuditEntry> audit;  // operator writes, oldest first

  // An effect of an earlier claim may have reached the bank: this record's first claim (or the
  // first since a reopen) predates the claim now held (whose write set updatedAt).
  [[nodiscard]] bool earlier_effect_possible() const {
    return first_attempt_at && *first_attempt_at < updated_at;
  }
  [[nodiscard]] bool is_final() const { return state != ClaimState::InProgress; }
  [[nodiscard]] bool lease_live(Instant now) const {
    return state == ClaimState::InProgress && lease_until >= now;
  }
  friend bool operator==(const ClaimRecord&, const ClaimRecord&) = default;
};

enum class ClaimOutcome {
  Acquired,             // the caller holds the claim and may run the effect
  DuplicateDone,        // already done with the same payload: ack
  DuplicateInProgress,  // someone else holds a live lease: come back when it ends
  DuplicateFailed,      // final failure recorded: dead-letter
  PayloadMismatch,      // the key was claimed with a different payload: dead-letter, never run
};

[[nodiscard]] std::string_view to_string(ClaimOutcome outcome);

struct ClaimRequest {
  std::string key;
  std::string payload_hash;
  std::string token;  // fresh per delivery; reused only when retrying the same claim
  std::string owner;  // worker identity, for diagnosis
  Instant now{};
  Millis lease{};
};

struct ClaimResult {
  ClaimOutcome outcome = ClaimOutcome::Acquired;
  // Acquired: the record as written (ALL_NEW). Otherwise: the record that refused the claim.
  ClaimRecord record;
};

// Decides a refused claim from the record that refused it. Shared by every store so that
// all of them classify duplicates identically. A different payload wins over every state:
// it is the most informative answer and never runs the effect.
[[nodiscard]] ClaimOutcome classify_refusal(const ClaimRecord& existing,
                                            std::string_view payload_hash);

// The claim condition of DESIGN §3, evaluated on an existing record:
// state = IN_PROGRESS AND payloadHash = :h AND (leaseUntil < :now OR claimToken = :token).
[[nodiscard]] bool claim_allowed(const ClaimRecord& existing, const ClaimRequest& request);

}  // namespace ic::idempotency
