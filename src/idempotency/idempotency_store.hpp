// The IdempotencyStore port: every write is one atomic conditional request (docs/design.md §3).
//
//   auto claimed = co_await store.claim({.key = "CHG-1", .payload_hash = h, .token = t,
//                                        .owner = me, .now = clock.now(), .lease = 60s});
//   if (claimed && claimed->outcome == ClaimOutcome::Acquired) { /* effect */
//     (void)co_await store.complete("CHG-1", t, {.status = "DEBITED", .result_ref = ref},
//                                   clock.now()); }
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/task.hpp"
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

// What the port's tasks finish with.
using ClaimReply = std::expected<ClaimResult, Error>;
using WriteReply = std::expected<WriteOutcome, Error>;
using ReadReply = std::expected<std::optional<ClaimRecord>, Error>;

// The port's operations, as observers report a failed, fenced or recorded call.
enum class StoreOperation { Claim, Complete, Fail, Extend, Release, Get };

// "claim", "complete", "fail", "extend", "release", "get": the `operation` label and log field.
[[nodiscard]] std::string_view to_string(StoreOperation operation);

// Thread-safety: every method returns a task, awaited at once on an event loop's thread
// (event/event_loop.hpp; event::run_blocking for a blocking caller); any number of calls may be
// in flight at once, on any number of loops and processes. Atomicity per key is the store's job
// (a conditional write), never the caller's.
// Ownership: the store owns no caller data; arguments need only live until the task finishes.
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
  [[nodiscard]] virtual Task<ClaimReply> claim(const ClaimRequest& request) = 0;

  // state = IN_PROGRESS AND claimToken = :token -> DONE with the completion.
  [[nodiscard]] virtual Task<WriteReply> complete(std::string_view key, std::string_view token,
                                                  const Completion& completion, Instant now) = 0;

  // state = IN_PROGRESS AND claimToken = :token -> FAILED with the failure.
  [[nodiscard]] virtual Task<WriteReply> fail(std::string_view key, std::string_view token,
                                              const Failure& failure, Instant now) = 0;

  // Heartbeat: state = IN_PROGRESS AND claimToken = :token -> leaseUntil = new_lease_until.
  [[nodiscard]] virtual Task<WriteReply> extend(std::string_view key, std::string_view token,
                                                Instant new_lease_until) = 0;

  // Gives a claim up after a transient failure (leaseUntil = 0) so a redelivery can reclaim at
  // once. Same condition as extend.
  [[nodiscard]] virtual Task<WriteReply> release(std::string_view key, std::string_view token) = 0;

  // Strongly consistent read; nullopt when the key was never claimed (or has expired).
  [[nodiscard]] virtual Task<ReadReply> get(std::string_view key) = 0;
};

}  // namespace ic::idempotency
