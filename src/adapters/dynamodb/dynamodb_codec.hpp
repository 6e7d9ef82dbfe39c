// DynamoDB request bodies and record decoding for the IdempotencyStore, as pure functions (no
// I/O), so the exact expressions of docs/design.md §3 can be unit-tested and benchmarked. The
// bodies are sent on every charge, so they are written as JSON text directly (aws::JsonWriter);
// replies are read from the client's parsed document.
//
//   std::string body = encode_claim(table, request);     // conditional UpdateItem (upsert)
//   auto reply = client.call_with_body("UpdateItem", body);
//   auto record = decode_record(reply->at("Attributes"));
#pragma once

#include <chrono>
#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "idempotency/claim_record.hpp"
#include "idempotency/idempotency_store.hpp"

namespace ic::dynamodb {

// Where records live, how long they are kept after their last claim or final write, and the
// attribute that holds Completion::result_ref: the store is generic, so the domain names it
// (the charge table's composition root sets debitRef, docs/design.md §3).
struct TableSpec {
  std::string name;
  std::chrono::seconds retention{30 * 24 * 3600};
  std::string result_attribute = "resultRef";
  // DONE statuses that need a person (FAILED always does). Their final write also sets the
  // sparse index's key, `attention` and `attentionAt`, and keeps the payload; no other write
  // sets them, so a healthy record pays no index write (docs/design.md §3).
  std::vector<std::string> attention_statuses;
};

// The sparse global secondary index: hash key `attention` (S), range key `attentionAt` (N).
inline constexpr std::string_view kAttentionIndex = "attention-index";
// The `attention` value of a final write: "FAILED" for a failure, the status for a DONE
// status in table.attention_statuses, else empty (not indexed).
[[nodiscard]] std::string attention_of(const TableSpec& table, idempotency::ClaimState state,
                                       std::string_view status);

// Claim: upsert conditioned on attribute_not_exists(pk) OR (state = IN_PROGRESS AND
// payloadHash = :h AND (leaseUntil < :now OR claimToken = :token)); firstAttemptAt only when
// absent; ADD fence 1; returns
// ALL_NEW, and ALL_OLD when the condition fails.
[[nodiscard]] std::string encode_claim(const TableSpec& table,
                                       const idempotency::ClaimRequest& request);

// Final write (complete or fail), conditioned on state = IN_PROGRESS AND claimToken = :token.
struct FinalWrite {
  idempotency::ClaimState state = idempotency::ClaimState::Done;  // Done or Failed
  std::string_view status;
  std::string_view failure_reason;  // written when not empty
  std::string_view result_ref;      // written to table.result_attribute when not empty
  std::string_view payload;         // kept only when the write sets `attention`
  Instant now{};
};
[[nodiscard]] std::string encode_final(const TableSpec& table, std::string_view key,
                                       std::string_view token, const FinalWrite& write);

// Sets leaseUntil under the holder's condition: extend passes the new lease, release epoch 0.
[[nodiscard]] std::string encode_set_lease(const TableSpec& table, std::string_view key,
                                           std::string_view token, Instant lease_until);

// Strongly consistent GetItem.
[[nodiscard]] std::string encode_get(const TableSpec& table, std::string_view key);

// An item in DynamoDB's attribute-value JSON as a ClaimRecord; the error names what is wrong.
[[nodiscard]] std::expected<idempotency::ClaimRecord, std::string> decode_record(
    const TableSpec& table, const nlohmann::json& item);

// The ALL_OLD item a ConditionalCheckFailedException carries, or nullopt when the store left
// it out (some emulators ignore ReturnValuesOnConditionCheckFailure).
[[nodiscard]] std::optional<nlohmann::json> old_item_from_error_body(std::string_view body);

}  // namespace ic::dynamodb
