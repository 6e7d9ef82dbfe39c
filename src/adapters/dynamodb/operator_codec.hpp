// Request bodies of the operator's writes and listings (idempotency::OperatorStore), as pure
// functions over JSON so the exact expressions of docs/design.md §3 "Operator writes" are
// unit-tested.
//
//   auto body = encode_reopen(table, request);      // conditional UpdateItem
//   auto page = client.call("Query", encode_attention_query(table, "FAILED", since, cursor));
#pragma once

#include <expected>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/dynamodb/dynamodb_codec.hpp"
#include "idempotency/operator_store.hpp"

namespace ic::dynamodb {

// state = FAILED AND fence = :fence AND claimToken = :read → IN_PROGRESS, leaseUntil 0, the
// new token; status, failureReason, completedAt and the attention attributes removed; audit
// entry appended.
[[nodiscard]] nlohmann::json encode_reopen(const TableSpec& table,
                                           const idempotency::ReopenRequest& request);

// state = DONE AND status = :from AND fence = :fence AND claimToken = :read → audit entry
// appended and, with a to_status, the new status and the attention attributes removed.
[[nodiscard]] nlohmann::json encode_amend(const TableSpec& table,
                                          const idempotency::AmendRequest& request);

// state = FAILED AND status = :from AND fence = :fence AND claimToken = :read → DONE with the
// new status, the result reference and completedAt; failureReason and the attention attributes
// removed; audit entry appended.
[[nodiscard]] nlohmann::json encode_settle(const TableSpec& table,
                                           const idempotency::SettleRequest& request);

// Query of kAttentionIndex: attention = :a AND attentionAt >= :since, from `cursor` (a page's
// LastEvaluatedKey as JSON text; empty for the first page).
[[nodiscard]] std::expected<nlohmann::json, std::string> encode_attention_query(
    const TableSpec& table, std::string_view attention, Instant since, std::string_view cursor);

// Scan with FilterExpression state = IN_PROGRESS AND leaseUntil < :before, Limit page_items.
[[nodiscard]] std::expected<nlohmann::json, std::string> encode_stale_scan(const TableSpec& table,
                                                                           Instant stale_before,
                                                                           std::string_view cursor,
                                                                           int page_items);

// Scan with FilterExpression state = DONE AND status IN (DEBITED, DEBITED_NOTIFICATION_FAILED)
// AND completedAt BETWEEN :since AND :until, Limit page_items: reconcile --full.
[[nodiscard]] std::expected<nlohmann::json, std::string> encode_debited_scan(
    const TableSpec& table, Instant since, Instant until, std::string_view cursor, int page_items);

// BatchGetItem of up to 100 keys (distinct: DynamoDB refuses a repeated key), strongly
// consistent.
[[nodiscard]] nlohmann::json encode_batch_get(const TableSpec& table,
                                              std::span<const std::string> keys);

struct BatchGetReply {
  std::vector<idempotency::ClaimRecord> records;
  std::vector<std::string> unprocessed;  // keys to ask for again
};
[[nodiscard]] std::expected<BatchGetReply, std::string> decode_batch_get(
    const TableSpec& table, const nlohmann::json& reply);

// A Query or Scan reply as records and the next page's cursor.
[[nodiscard]] std::expected<idempotency::RecordPage, std::string> decode_page(
    const TableSpec& table, const nlohmann::json& reply);

}  // namespace ic::dynamodb
