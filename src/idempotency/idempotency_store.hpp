// The IdempotencyStore port: every write is one atomic conditional request (docs/design.md §3).
//
//   auto claimed = store.claim({.key = "CHG-1", .payload_hash = h, .token = t, .owner = me,
//                               .now = clock.now(), .lease = 60s});
//   if (claimed && claimed->outcome == ClaimOutcome::Acquired) { /* effect */
//     (void)store.complete("CHG-1", t, {.status = "DEBITED", .result_ref = ref}, clock.now()); }
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "idempotency/claim_record.hpp"

namespace ic::idempotency {

// `payload` on a final write is the input an operator's follow-up needs without the message
// (the charge's canonical form): a store keeps it only when the record needs a person (a
// failure, or a status the table lists as needing attention), so a healthy record pays nothing.
struct Completion {
  std::string status;      // e.g. DEBITED
  std::string result_ref;  // e.g. the bank's debitId; may be empty
  std::string payload;
};

struct Failure {
  std::string status;  // e.g. FAILED_PERMANENT
  std::string reason;  // machine code, e.g. INSUFFICIENT_FUNDS
  std::string payload;
};

enum class WriteOutcome {
  Written,  // the write took effect (or a retried write finds its own earlier success)
  Fenced,   // the caller no longer holds the claim; nothing was written
};

[[nodiscard]] std::string_view to_string(WriteOutcome outcome);

// The port's operations, as observers report a failed, fenced or recorded call.
enum class StoreOperation { Claim, Complete, Fail, Extend, Release, Get };

// "claim", "complete", "fail", "extend", "release", "get": the `operation` label and log field.
[[nodiscard]] std::string_view to_string(StoreOperation operation);

// Thread-safety: every method is safe to call concurrently from any number of threads and
// processes; atomicity per key is the store's job (a conditional write), never the caller's.
// Ownership: the store owns no caller data; string_views need only live for the call.
// Errors: an ic::Error after the store's own retries. An `ambiguous` write may have taken
// effect; repeating the call with the same token is safe and tells (claim, complete and fail
// recognise their own earlier success).
// Retention: records expire `retention` after their last write (configured per store).
class IdempotencyStore {
 public:
  virtual ~IdempotencyStore() = default;

  // Upsert that succeeds iff attribute_not_exists(pk) OR (state = IN_PROGRESS AND
  // payloadHash = :h AND (leaseUntil < :now OR claimToken = :token)); a success sets
  // IN_PROGRESS, the new token/owner/lease and increments `fence`. A refusal is not an error:
  // it comes back as a duplicate outcome with the refusing record.
  [[nodiscard]] virtual std::expected<ClaimResult, Error> claim(const ClaimRequest& request) = 0;

  // state = IN_PROGRESS AND claimToken = :token -> DONE with the completion.
  [[nodiscard]] virtual std::expected<WriteOutcome, Error> complete(std::string_view key,
                                                                    std::string_view token,
                                                                    const Completion& completion,
                                                                    Instant now) = 0;

  // state = IN_PROGRESS AND claimToken = :token -> FAILED with the failure.
  [[nodiscard]] virtual std::expected<WriteOutcome, Error> fail(std::string_view key,
                                                                std::string_view token,
                                                                const Failure& failure,
                                                                Instant now) = 0;

  // Heartbeat: state = IN_PROGRESS AND claimToken = :token -> leaseUntil = new_lease_until.
  [[nodiscard]] virtual std::expected<WriteOutcome, Error> extend(std::string_view key,
                                                                  std::string_view token,
                                                                  Instant new_lease_until) = 0;

  // Gives a claim up after a transient failure (leaseUntil = 0) so a redelivery can reclaim at
  // once. Same condition as extend.
  [[nodiscard]] virtual std::expected<WriteOutcome, Error> release(std::string_view key,
                                                                   std::string_view token) = 0;

  // Strongly consistent read; nullopt when the key was never claimed (or has expired).
  [[nodiscard]] virtual std::expected<std::optional<ClaimRecord>, Error> get(
      std::string_view key) = 0;
};

}  // namespace ic::idempotency
