// The operator's writes and listings on the idempotency table (docs/design.md §3 "Operator
// writes"). Each write is one conditional request fenced on the record the operator read (its
// fence and claimToken), like the consumer's writes are fenced on its claim token: if anything
// wrote the record since the read, the write is refused and nothing changes. Each appends an
// audit entry to the record.
//
//   auto read = store.get("CHG-1");                       // IdempotencyStore::get
//   auto w = operators.reopen({.key = "CHG-1", .read = fence_of(**read), .new_token = t,
//                              .audit = {.at = now, .actor = "alice", .action = "reopen",
//                                        .reason = "account reopened"}});
//   if (w && *w == OperatorWrite::Refused) { /* raced: re-read and say what changed */ }
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "idempotency/claim_record.hpp"

namespace ic::idempotency {

// What the operator's decision was based on: the write applies only to this very record.
struct OperatorFence {
  std::int64_t fence = 0;
  std::string claim_token;
};
[[nodiscard]] inline OperatorFence fence_of(const ClaimRecord& record) {
  return {.fence = record.fence, .claim_token = record.claim_token};
}

// FAILED → IN_PROGRESS with leaseUntil 0 and a token no worker holds; payloadHash kept, so
// the next delivery with the same payload claims it under §3's unchanged claim condition.
struct ReopenRequest {
  std::string key;
  OperatorFence read;
  std::string new_token;
  AuditEntry audit;
};

// A DONE record whose status is `from_status`: to `to_status` (which ends its need for
// attention), or, with `to_status` empty, only the audit entry (an attempt that did not help).
struct AmendRequest {
  std::string key;
  OperatorFence read;
  std::string from_status;
  std::string to_status;
  AuditEntry audit;
};

// A FAILED record whose status is `from_status` (DEBIT_UNCERTAIN) that the effect's ledger shows
// done: DONE with `to_status` and `result_ref`; failureReason and the attention attributes
// removed, payload kept (docs/design.md §5 "reconcile", --resolve-uncertain).
struct SettleRequest {
  std::string key;
  OperatorFence read;
  std::string from_status;
  std::string to_status;
  std::string result_ref;
  AuditEntry audit;
};

enum class OperatorWrite {
  Written,
  Refused,  // the record is no longer the one read (or not in the required state)
};

struct RecordPage {
  std::vector<ClaimRecord> records;
  std::string next;  // opaque cursor for the next page; empty on the last page
};

// Thread-safety: every method may be called concurrently; atomicity is the store's conditional
// write. Ownership: copies what it needs. Errors: ic::Error after the store's own retries; an
// `ambiguous` write may have taken effect, and the caller re-reads to tell.
class OperatorStore {
 public:
  virtual ~OperatorStore() = default;

  [[nodiscard]] virtual std::expected<OperatorWrite, Error> reopen(
      const ReopenRequest& request) = 0;
  [[nodiscard]] virtual std::expected<OperatorWrite, Error> amend(const AmendRequest& request) = 0;
  [[nodiscard]] virtual std::expected<OperatorWrite, Error> settle(
      const SettleRequest& request) = 0;

  // Records whose attention value is `attention` (FAILED, or a DONE status that needs a
  // person), written at or after `since`, from a sparse index: one page from `cursor`.
  [[nodiscard]] virtual std::expected<RecordPage, Error> needing_attention(
      std::string_view attention, Instant since, std::string_view cursor) = 0;

  // IN_PROGRESS records whose lease ended before `stale_before`: a Scan of up to `page_items`
  // items from `cursor` (there is no index on claims in progress, by design: a healthy claim
  // pays no index write).
  [[nodiscard]] virtual std::expected<RecordPage, Error> stale_in_progress(Instant stale_before,
                                                                           std::string_view cursor,
                                                                           int page_items) = 0;
};

}  // namespace ic::idempotency
