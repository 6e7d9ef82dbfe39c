// reconcile --resolve-uncertain: DEBIT_UNCERTAIN charges settled from the bank's ledger (docs/
// design.md §5 "reconcile"). The uncertain records are few (a Query of the attention index), so
// the ledger is streamed once for their keys only.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "application/operations/commands.hpp"
#include "application/operations/reconcile.hpp"
#include "domain/charge_status.hpp"

namespace ic::application {
namespace {

constexpr std::string_view kUncertain = to_string(domain::ChargeStatus::DebitUncertain);

using Records = std::map<std::string, idempotency::ClaimRecord, std::less<>>;

std::expected<Records, Error> uncertain_records(idempotency::OperatorStore& operators) {
  Records out;
  std::string cursor;
  do {
    auto page = operators.needing_attention(idempotency::to_string(idempotency::ClaimState::Failed),
                                            Instant{}, cursor);
    if (!page) return std::unexpected(page.error());
    for (auto& record : page->records) {
      if (record.status == kUncertain) out.emplace(record.key, std::move(record));
    }
    cursor = page->next;
  } while (!cursor.empty());
  return out;
}

struct LedgerView {
  std::map<std::string, std::string, std::less<>> debit_of;  // the first row of each wanted key
  std::optional<Instant> first_posted;
};

std::expected<LedgerView, LedgerError> read_ledger(LedgerSource& ledger, const Records& wanted) {
  LedgerView view;
  while (true) {
    auto row = ledger.next();
    if (!row) return std::unexpected(row.error());
    if (!*row) return view;
    if (!view.first_posted || (*row)->posted_at < *view.first_posted) {
      view.first_posted = (*row)->posted_at;
    }
    if (wanted.contains((*row)->idempotency_key)) {
      view.debit_of.try_emplace((*row)->idempotency_key, (*row)->debit_id);
    }
  }
}

}  // namespace

int resolve_uncertain(LedgerSource& ledger, idempotency::OperatorStore& operators,
                      OperatorActions& actions, Console& console, const ResolveRequest& request) {
  auto records = uncertain_records(operators);
  if (!records) {
    console.note(fmt::format("reconcile: listing DEBIT_UNCERTAIN records failed: {} {}",
                             records.error().code, records.error().message));
    return 1;
  }
  auto view = read_ledger(ledger, *records);
  if (!view) {
    const LedgerError& e = view.error();
    console.note(e.column.empty() ? fmt::format("reconcile: line {}: {}", e.line, e.message)
                                  : fmt::format("reconcile: line {}, column {}: {}", e.line,
                                                e.column, e.message));
    return kInputErrorExit;
  }
  // The ledger speaks for "not debited" only from where it starts (an empty one: for nothing).
  Instant covered_from = Instant::max();
  if (request.since) {
    covered_from = *request.since;
  } else if (view->first_posted) {
    covered_from = *view->first_posted - request.lease;
  }
  int debited = 0;
  int reopened = 0;
  int unresolved = 0;
  for (const auto& [key, record] : *records) {
    const auto found = view->debit_of.find(key);
    std::optional<std::string> debit_ref;
    if (found != view->debit_of.end()) debit_ref = found->second;
    const Instant first = record.first_attempt_at.value_or(record.created_at);
    if (!debit_ref && covered_from > first) {
      ++unresolved;
      console.result(nlohmann::json{{"event", "unresolved"},
                                    {"chargeId", key},
                                    {"detail",
                                     "the ledger does not reach back to its first "
                                     "attempt; give an export that does (--since)"}}
                         .dump());
      continue;
    }
    nlohmann::json line{{"event", request.dry_run ? "would resolve" : "resolved"},
                        {"chargeId", key},
                        {"as", debit_ref ? "DEBITED" : "REOPENED"}};
    if (debit_ref) line["debitRef"] = *debit_ref;
    if (!request.dry_run) {
      const OperatorOutcome outcome = actions.resolve_uncertain(
          key, debit_ref,
          debit_ref ? "reconcile: the bank's ledger has the debit"
                    : "reconcile: not in the bank's ledger; a fresh attempt");
      if (outcome.kind == OperatorOutcome::Kind::StoreError) {
        console.note("reconcile: " + outcome.detail);
        return 1;
      }
      if (outcome.kind != OperatorOutcome::Kind::Written) {
        ++unresolved;
        console.result(
            nlohmann::json{{"event", "unresolved"}, {"chargeId", key}, {"detail", outcome.detail}}
                .dump());
        continue;
      }
    }
    ++(debit_ref ? debited : reopened);
    console.result(line.dump());
  }
  console.result(nlohmann::json{
      {"event", "uncertain resolved"},
      {"dryRun", request.dry_run},
      {"debited", debited},
      {"reopened", reopened},
      {"unresolved",
       unresolved}}.dump());
  if (reopened > 0 && !request.dry_run) {
    console.note(
        "reconcile: now redrive their DLQ copies (charge-recovery redrive --reason "
        "DEBIT_UNCERTAIN): a DEBITED one is acked, a reopened one is debited afresh");
  }
  return unresolved > 0 ? kFoundExit : 0;
}

}  // namespace ic::application
