// list, renotify and reopen: the operator's view of the charges that need a person, and the
// audited actions on them (docs/design.md §5 "Command line").
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "adapters/bank_http/notification_client.hpp"
#include "adapters/dynamodb/dynamodb_codec.hpp"
#include "adapters/dynamodb/dynamodb_operator_store.hpp"
#include "adapters/dynamodb/dynamodb_store.hpp"
#include "app/admin_commands.hpp"
#include "app/run_command.hpp"
#include "app/system_adapters.hpp"
#include "application/operator_actions.hpp"
#include "domain/charge_status.hpp"

namespace ic::app {
namespace {

using application::OperatorOutcome;

constexpr int kScanPageItems = 1000;

std::string iso(Instant t) {
  return fmt::format("{:%FT%TZ}", std::chrono::floor<std::chrono::seconds>(t));
}

nlohmann::json audit_json(const idem::AuditEntry& entry) {
  return {{"at", iso(entry.at)},
          {"actor", entry.actor},
          {"action", entry.action},
          {"reason", entry.reason}};
}

// One line per record: what an operator needs to decide, never the kept payload (it holds
// the full account number).
nlohmann::json list_line(const idem::ClaimRecord& r) {
  nlohmann::json out = {
      {"chargeId", r.key}, {"state", idem::to_string(r.state)}, {"updatedAt", iso(r.updated_at)}};
  if (!r.status.empty()) out["status"] = r.status;
  if (!r.failure_reason.empty()) out["failureReason"] = r.failure_reason;
  if (!r.result_ref.empty()) out["debitRef"] = r.result_ref;
  if (r.state == idem::ClaimState::InProgress) {
    out["leaseUntil"] = iso(r.lease_until);
    out["owner"] = r.owner;
  }
  if (!r.audit.empty()) out["lastAudit"] = audit_json(r.audit.back());
  return out;
}

int aws_failure(std::string_view command, const Error& error) {
  std::cerr << fmt::format("{}: {} {}\n", command, error.code, error.message);
  return 1;
}

int list_attention(idem::OperatorStore& store, const ListOptions& options) {
  std::size_t count = 0;
  std::string cursor;
  do {
    auto page = store.needing_attention(options.status, options.since, cursor);
    if (!page) return aws_failure("list", page.error());
    for (const idem::ClaimRecord& record : page->records) {
      std::cout << list_line(record).dump() << "\n";
      ++count;
    }
    cursor = page->next;
  } while (!cursor.empty());
  std::cout
      << nlohmann::json{{"event", "listed"}, {"status", options.status}, {"count", count}}.dump()
      << "\n";
  return 0;
}

// Claims in progress have no index (a healthy claim must not pay an index write), so they are
// found by a Scan: bounded, paginated, and announced.
int list_stale_in_progress(idem::OperatorStore& store, const ListOptions& options) {
  const Instant stale_before = real_clock().now() - options.lease * options.older_than_leases;
  std::cerr << nlohmann::json{{"event", "warning"},
                              {"detail",
                               fmt::format("IN_PROGRESS is listed by a Scan of the table (no "
                                           "index, by design), reading at most {} items",
                                           options.scan_limit)}}
                   .dump()
            << "\n";
  std::size_t count = 0;
  int budget = options.scan_limit;
  std::string cursor;
  do {
    auto page = store.stale_in_progress(stale_before, cursor, std::min(kScanPageItems, budget));
    if (!page) return aws_failure("list", page.error());
    budget -= std::min(kScanPageItems, budget);
    for (const idem::ClaimRecord& record : page->records) {
      std::cout << list_line(record).dump() << "\n";
      ++count;
    }
    cursor = page->next;
  } while (!cursor.empty() && budget > 0);
  if (!cursor.empty()) {
    std::cerr << nlohmann::json{{"event", "warning"},
                                {"detail", fmt::format("the Scan stopped at --scan-limit {}; "
                                                       "there may be more",
                                                       options.scan_limit)}}
                     .dump()
              << "\n";
  }
  std::cout << nlohmann::json{{"event", "listed"},
                              {"status", options.status},
                              {"count", count},
                              {"complete", cursor.empty()}}
                   .dump()
            << "\n";
  return 0;
}

// Exit code and output of one action's outcome.
int report_outcome(std::string_view command, const OperatorOutcome& outcome, std::string_view key) {
  using Kind = OperatorOutcome::Kind;
  switch (outcome.kind) {
    case Kind::Written:
    case Kind::NotificationFailed:
      std::cout << nlohmann::json{{"event", command},
                                  {"chargeId", key},
                                  {"result", outcome.kind == Kind::Written ? "written"
                                                                           : "notification_failed"},
                                  {"audit", audit_json(outcome.audit)}}
                       .dump()
                << "\n";
      if (outcome.kind == Kind::NotificationFailed) {
        std::cerr << command << ": " << outcome.detail << "\n";
        return kNotificationFailedExit;
      }
      return 0;
    case Kind::Refused:
      std::cerr << command << ": " << outcome.detail << "\n";
      return kRefusedExit;
    case Kind::NotFound:
      std::cerr << command << ": " << outcome.detail << "\n";
      return kNoRecordExit;
    case Kind::StoreError:
      std::cerr << command << ": " << outcome.detail << "\n";
      return 1;
  }
  return 1;
}

std::string event_body(const charge::Charge& c) {
  return nlohmann::json{{"schemaVersion", 1},
                        {"chargeId", c.id.value()},
                        {"accountId", c.account.value()},
                        {"chargeType", c.type.value()},
                        {"amountMinor", c.amount.amount_minor()},
                        {"currency", c.amount.currency().code()},
                        {"dueDate", c.due.iso()}}
      .dump();
}

}  // namespace

int list(AwsStack& aws, const ListOptions& options) {
  dynamodb::DynamoDbOperatorStore store(aws.dynamodb(),
                                        charge_table(options.table, options.retention));
  if (options.status == idem::to_string(idem::ClaimState::InProgress)) {
    return list_stale_in_progress(store, options);
  }
  return list_attention(store, options);
}

int renotify(AwsStack& aws, const RenotifyOptions& options) {
  auto endpoint = bank::BankEndpoint::create(options.notification_url, kBankTimeouts);
  if (!endpoint) return report({"NOTIFICATION_URL: " + endpoint.error()});
  const auto table = charge_table(options.table, options.retention);
  dynamodb::DynamoDbIdempotencyStore store(aws.dynamodb(), table);
  dynamodb::DynamoDbOperatorStore operators(aws.dynamodb(), table);
  auto token =
      open_token_file("NOTIFICATION_TOKEN_FILE", options.bank_auth.notification_token_file);
  if (!token) return report(token.error());
  http::CurlHttpTransport transport(options.bank_auth.bank_tls);
  bank::NotificationClient notifier(transport, *endpoint, token->get());
  RandomTokens tokens;
  application::OperatorActions actions(store, operators, real_clock(), tokens, options.actor);
  if (!options.all_failed_notifications) {
    return report_outcome("renotify", actions.renotify(options.charge_id, notifier),
                          options.charge_id);
  }
  // Every record listed first, then acted on: each action takes its record out of the index,
  // and paging an index while emptying it would skip entries.
  std::vector<std::string> keys;
  std::string cursor;
  const std::string wanted(to_string(charge::ChargeStatus::DebitedNotificationFailed));
  do {
    auto page = operators.needing_attention(wanted, Instant{}, cursor);
    if (!page) return aws_failure("renotify", page.error());
    for (const auto& record : page->records) keys.push_back(record.key);
    cursor = page->next;
  } while (!cursor.empty());
  int worst = 0;
  for (const std::string& key : keys) {
    worst = std::max(worst, report_outcome("renotify", actions.renotify(key, notifier), key));
  }
  std::cout << nlohmann::json{{"event", "renotified"}, {"charges", keys.size()}}.dump() << "\n";
  return worst;
}

int reopen(AwsStack& aws, const ReopenOptions& options) {
  const auto table = charge_table(options.table, options.retention);
  dynamodb::DynamoDbIdempotencyStore store(aws.dynamodb(), table);
  dynamodb::DynamoDbOperatorStore operators(aws.dynamodb(), table);
  RandomTokens tokens;
  application::OperatorActions actions(store, operators, real_clock(), tokens, options.actor);
  const OperatorOutcome outcome = actions.reopen(options.charge_id, options.reason);
  const int code = report_outcome("reopen", outcome, options.charge_id);
  if (code != 0) return code;
  // Only now, after the reopen: a copy sent before it would be dead-lettered again as
  // PREVIOUSLY_FAILED (docs/model-check.md, "what the extended model found").
  if (!options.resend) {
    std::cerr << fmt::format(
        "reopen: now redrive its DLQ copies (charge-recovery redrive --reason "
        "PERMANENT_DEBIT_FAILURE --reason PREVIOUSLY_FAILED) or re-send it, and check `status "
        "{}` until it is final\n",
        options.charge_id);
    return 0;
  }
  if (!outcome.charge) {
    std::cerr << "reopen: --resend: the record kept no payload; redrive its DLQ copies instead\n";
    return 1;
  }
  auto sent = aws.sqs().send(options.queue_url, {.body = event_body(*outcome.charge)});
  if (!sent) {
    std::cerr << fmt::format(
        "reopen: reopened, but --resend failed ({} {}); redrive its DLQ copies instead\n",
        sent.error().code, sent.error().message);
    return 1;
  }
  std::cout << nlohmann::json{{"event", "resent"},
                              {"chargeId", options.charge_id},
                              {"messageId", *sent}}
                   .dump()
            << "\n";
  return 0;
}

}  // namespace ic::app
