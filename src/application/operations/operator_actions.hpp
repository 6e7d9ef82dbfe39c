// The operator's audited actions on one charge's record (docs/design.md §3 "Operator writes"):
// reopen a FAILED charge, and re-send the notification of a DEBITED_NOTIFICATION_FAILED one.
// Each reads the record, decides from it, and writes once, fenced on what it read; a record
// that changed in between is refused, never overwritten. Neither ever calls the debit.
//
//   OperatorActions actions(store, operators, clock, tokens, "alice@ops-host");
//   auto outcome = actions.reopen("CHG-1", "account reopened on 2026-12-01");
//   if (outcome.kind != OperatorOutcome::Kind::Written) fail(outcome.detail);
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "core/time.hpp"
#include "domain/charge.hpp"
#include "domain/ports.hpp"
#include "idempotency/idempotency_store.hpp"
#include "idempotency/operator_store.hpp"

namespace ic::application {

struct OperatorOutcome {
  enum class Kind {
    Written,             // the record was changed and the audit entry appended
    NotificationFailed,  // renotify: sent again and failed again; the attempt is audited
    Refused,             // the record is not in a state the action applies to, or it raced
    NotFound,
    StoreError,
  };
  Kind kind = Kind::Refused;
  std::string detail;                    // one line for the operator
  idempotency::AuditEntry audit;         // the entry appended, when one was
  std::optional<domain::Charge> charge;  // reopen: the charge the record kept, if it kept one
};

// Thread-safety: as the ports it borrows (all of which must outlive it); holds no state. Blocks:
// the store's reads and the notification run to completion on the calling thread
// (event/run_blocking.hpp), so it is for the operator's commands, never for code in a task.
class OperatorActions {
 public:
  OperatorActions(idempotency::IdempotencyStore& store, idempotency::OperatorStore& operators,
                  const Clock& clock, domain::TokenSource& tokens, std::string actor)
      : store_(store),
        operators_(operators),
        clock_(clock),
        tokens_(tokens),
        actor_(std::move(actor)) {}

  // FAILED only (never DONE): IN_PROGRESS with an expired lease and a token no worker holds,
  // so the next delivery of the same payload claims it. Not DEBIT_UNCERTAIN: only the bank's
  // ledger can say it was not debited (resolve_uncertain).
  [[nodiscard]] OperatorOutcome reopen(std::string_view key, std::string_view reason);

  // FAILED/DEBIT_UNCERTAIN only, from what the bank's ledger says: with `debit_ref` (the ledger
  // has the debit) DONE/DEBITED with that reference; without it (the ledger covers the charge's
  // attempts and has no debit) reopened as reopen() does (docs/design.md §5 "reconcile").
  [[nodiscard]] OperatorOutcome resolve_uncertain(std::string_view key,
                                                  const std::optional<std::string>& debit_ref,
                                                  std::string_view reason);

  // DONE/DEBITED_NOTIFICATION_FAILED only: notifies again with the key <chargeId>:notify (the
  // notification service dedupes), then records DEBITED; a failure is recorded as an attempt.
  [[nodiscard]] OperatorOutcome renotify(std::string_view key, domain::NotificationPort& notifier);

 private:
  // The record of `key` when it is `state` with `status`; otherwise what to answer: a store
  // error, not found, or refused ("only <state> (<status>) is <action>").
  [[nodiscard]] std::expected<idempotency::ClaimRecord, OperatorOutcome> read_in(
      std::string_view key, idempotency::ClaimState state, std::string_view status,
      std::string_view action);
  // The reopen write on the FAILED `record` read.
  [[nodiscard]] OperatorOutcome write_reopen(std::string_view key,
                                             const idempotency::ClaimRecord& record,
                                             std::string_view reason);
  // Why a fenced write was refused: what the record is now, against what was read.
  [[nodiscard]] std::string raced(std::string_view key, const idempotency::ClaimRecord& read);

  idempotency::IdempotencyStore& store_;
  idempotency::OperatorStore& operators_;
  const Clock& clock_;
  domain::TokenSource& tokens_;
  const std::string actor_;
};

}  // namespace ic::application
