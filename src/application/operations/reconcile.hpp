// reconcile: the idempotency table against the bank's debit ledger (docs/design.md §5
// "reconcile"). The ledger streams in one row at a time; records are read by key in batches of
// at most kMaxBatchKeys, and the records the ledger does not name are found through
// RecordSource::debited_between. Memory is bounded by the distinct keys of the ledger (one
// 64-bit hash each), never by its rows' width or by the table. Discrepancies are printed as
// they are found; a malformed row stops the run with one note and kInputErrorExit, and it is
// the caller's to withhold what was printed before it (the command spools its output).
//
//   LedgerCsv ledger(stream);  RecordsOnDynamoDb records(store);
//   return application::reconcile(ledger, records, console, {.lease = 60s});
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "application/operations/operator_actions.hpp"
#include "application/operations/ports.hpp"
#include "core/error.hpp"
#include "core/time.hpp"
#include "idempotency/claim_record.hpp"
#include "idempotency/operator_store.hpp"

namespace ic::application {

// One debit of the bank's ledger export.
struct LedgerRow {
  std::string idempotency_key;  // our chargeId
  std::string debit_id;
  std::string account_id;
  std::int64_t amount_minor = 0;
  std::string currency;
  Instant posted_at{};
  std::size_t line = 0;  // in the export, for the person who reads the report
};

// A row the reader could not take: where, and what is wrong (never the row's content).
struct LedgerError {
  std::size_t line = 0;
  std::string column;  // empty when the line as a whole is wrong (e.g. an unclosed quote)
  std::string message;
};

// The bank's ledger, one row at a time. nullopt at the end. Thread-safety: one reader.
class LedgerSource {
 public:
  virtual ~LedgerSource() = default;
  [[nodiscard]] virtual std::expected<std::optional<LedgerRow>, LedgerError> next() = 0;
};

inline constexpr std::size_t kMaxBatchKeys = 100;  // BatchGetItem's limit

// The table as reconcile reads it. Errors: after the store's own retries.
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // The records of up to kMaxBatchKeys keys, strongly consistent, in any order; absent keys
  // are simply missing from the answer.
  [[nodiscard]] virtual std::expected<std::vector<idempotency::ClaimRecord>, Error> get_many(
      std::span<const std::string> keys) = 0;
  // One page of records that may have been debited between `since` and `until` (the caller
  // filters again): a Query where an index serves, else a bounded Scan of `page_items`.
  [[nodiscard]] virtual std::expected<idempotency::RecordPage, Error> debited_between(
      Instant since, Instant until, bool full_scan, std::string_view cursor, int page_items) = 0;
};

struct ReconcileRequest {
  std::optional<Instant> since;  // default: the ledger's first postedAt minus one lease
  std::optional<Instant> until;  // default: its last postedAt plus one lease
  std::chrono::seconds lease{60};
  // RECORDED_NOT_DEBITED for DEBITED records too (a Scan); without it only the attention
  // index's DEBITED_NOTIFICATION_FAILED records are checked (docs/design.md "reconcile").
  bool full_scan = false;
  int scan_limit = 10'000'000;  // items the Scan reads at most
  bool text = false;            // lines for a person instead of JSON
  // Called on the way with the rows read so far, for progress on long runs.
  std::function<void(std::size_t rows)> progress;
};

// Exit codes besides 0, 1 (a store failure) and kFoundExit (discrepancies found).
inline constexpr int kInputErrorExit = 2;

[[nodiscard]] int reconcile(LedgerSource& ledger, RecordSource& records, Console& console,
                            const ReconcileRequest& request);

// --resolve-uncertain: each FAILED/DEBIT_UNCERTAIN record from the ledger: its key has a row →
// DONE/DEBITED with the row's debitId; no row, and the ledger covers its first attempt (from
// `since`, else the ledger's first postedAt minus one lease) → reopened; else left, reported
// "unresolved". Exit 0, kFoundExit when any is left, 1 on a store failure, kInputErrorExit on a
// malformed ledger.
struct ResolveRequest {
  std::optional<Instant> since;
  std::chrono::seconds lease{60};
  bool dry_run = false;  // say what would be written; write nothing
};
[[nodiscard]] int resolve_uncertain(LedgerSource& ledger, idempotency::OperatorStore& operators,
                                    OperatorActions& actions, Console& console,
                                    const ResolveRequest& request);

}  // namespace ic::application
