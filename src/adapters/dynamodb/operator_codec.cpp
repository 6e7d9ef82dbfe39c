#include "adapters/dynamodb/operator_codec.hpp"

#include "adapters/dynamodb/attribute_values.hpp"

namespace ic::dynamodb {
namespace {

using nlohmann::json;
using namespace attr;

// The fence of the record the operator read, and the audit entry every operator write appends.
json fenced_update(const TableSpec& table, std::string_view key,
                   const idempotency::OperatorFence& read, const idempotency::AuditEntry& audit) {
  const json entry = {{"M",
                       {{"at", epoch_ms(audit.at)},
                        {"actor", s(audit.actor)},
                        {"action", s(audit.action)},
                        {"reason", s(audit.reason)}}}};
  return json{{"TableName", table.name},
              {"Key", key_of(key)},
              {"ExpressionAttributeNames", {{"#state", "state"}}},
              {"ExpressionAttributeValues",
               {{":fence", n(read.fence)},
                {":read", s(read.claim_token)},
                {":now", epoch_ms(audit.at)},
                {":exp", n(expires_at(table, audit.at))},
                {":entry", {{"L", json::array({entry})}}},
                {":none", {{"L", json::array()}}}}},
              {"ReturnValuesOnConditionCheckFailure", "NONE"}};
}

constexpr std::string_view kFenceCondition = "fence = :fence AND claimToken = :read";
constexpr std::string_view kAppendAudit =
    "updatedAt = :now, expiresAt = :exp, audit = list_append(if_not_exists(audit, :none), :entry)";

std::string all_of(std::string_view state_condition, std::string_view fence_condition) {
  return std::string(state_condition) + " AND " + std::string(fence_condition);
}

std::expected<void, std::string> start_from(json& body, std::string_view cursor) {
  if (cursor.empty()) return {};
  auto key = json::parse(cursor, nullptr, /*allow_exceptions=*/false);
  if (!key.is_object()) return std::unexpected("the page cursor is not a key");
  body["ExclusiveStartKey"] = std::move(key);
  return {};
}

}  // namespace

json encode_reopen(const TableSpec& table, const idempotency::ReopenRequest& request) {
  json body = fenced_update(table, request.key, request.read, request.audit);
  body["ConditionExpression"] = all_of("#state = :failed", kFenceCondition);
  body["UpdateExpression"] =
      std::string("SET #state = :inprogress, leaseUntil = :zero, claimToken = :token, ") +
      std::string(kAppendAudit) +
      " REMOVE #status, failureReason, completedAt, attention, attentionAt, payload, "
      "firstAttemptAt";
  body["ExpressionAttributeNames"]["#status"] = "status";
  auto& values = body["ExpressionAttributeValues"];
  values[":failed"] = s(idempotency::to_string(idempotency::ClaimState::Failed));
  values[":inprogress"] = s(idempotency::to_string(idempotency::ClaimState::InProgress));
  values[":zero"] = n(0);
  values[":token"] = s(request.new_token);
  return body;
}

json encode_amend(const TableSpec& table, const idempotency::AmendRequest& request) {
  json body = fenced_update(table, request.key, request.read, request.audit);
  body["ConditionExpression"] = all_of("#state = :done AND #status = :from", kFenceCondition);
  std::string update = "SET " + std::string(kAppendAudit);
  body["ExpressionAttributeNames"]["#status"] = "status";
  auto& values = body["ExpressionAttributeValues"];
  values[":done"] = s(idempotency::to_string(idempotency::ClaimState::Done));
  values[":from"] = s(request.from_status);
  if (!request.to_status.empty()) {
    // The payload stays: a DONE record keeps its charge for reconcile (docs/design.md §3).
    update += ", #status = :to REMOVE attention, attentionAt";
    values[":to"] = s(request.to_status);
  }
  body["UpdateExpression"] = std::move(update);
  return body;
}

json encode_settle(const TableSpec& table, const idempotency::SettleRequest& request) {
  json body = fenced_update(table, request.key, request.read, request.audit);
  body["ConditionExpression"] = all_of("#state = :failed AND #status = :from", kFenceCondition);
  body["UpdateExpression"] =
      "SET #state = :done, #status = :to, #result = :ref, completedAt = :now, " +
      std::string(kAppendAudit) + " REMOVE failureReason, attention, attentionAt";
  body["ExpressionAttributeNames"]["#status"] = "status";
  body["ExpressionAttributeNames"]["#result"] = table.result_attribute;
  auto& values = body["ExpressionAttributeValues"];
  values[":failed"] = s(idempotency::to_string(idempotency::ClaimState::Failed));
  values[":done"] = s(idempotency::to_string(idempotency::ClaimState::Done));
  values[":from"] = s(request.from_status);
  values[":to"] = s(request.to_status);
  values[":ref"] = s(request.result_ref);
  return body;
}

std::expected<json, std::string> encode_attention_query(const TableSpec& table,
                                                        std::string_view attention, Instant since,
                                                        std::string_view cursor) {
  json body{{"TableName", table.name},
            {"IndexName", kAttentionIndex},
            {"KeyConditionExpression", "attention = :a AND attentionAt >= :since"},
            {"ExpressionAttributeValues", {{":a", s(attention)}, {":since", epoch_ms(since)}}}};
  if (auto started = start_from(body, cursor); !started) return std::unexpected(started.error());
  return body;
}

std::expected<json, std::string> encode_stale_scan(const TableSpec& table, Instant stale_before,
                                                   std::string_view cursor, int page_items) {
  json body{{"TableName", table.name},
            {"FilterExpression", "#state = :inprogress AND leaseUntil < :before"},
            {"ExpressionAttributeNames", {{"#state", "state"}}},
            {"ExpressionAttributeValues",
             {{":inprogress", s(idempotency::to_string(idempotency::ClaimState::InProgress))},
              {":before", epoch_ms(stale_before)}}},
            {"Limit", page_items}};
  if (auto started = start_from(body, cursor); !started) return std::unexpected(started.error());
  return body;
}

std::expected<json, std::string> encode_debited_scan(const TableSpec& table, Instant since,
                                                     Instant until, std::string_view cursor,
                                                     int page_items) {
  json body{{"TableName", table.name},
            {"FilterExpression",
             "#state = :done AND #status IN (:debited, :unnotified) AND completedAt BETWEEN "
             ":since AND :until"},
            {"ExpressionAttributeNames", {{"#state", "state"}, {"#status", "status"}}},
            {"ExpressionAttributeValues",
             {{":done", s(idempotency::to_string(idempotency::ClaimState::Done))},
              {":debited", s("DEBITED")},
              {":unnotified", s("DEBITED_NOTIFICATION_FAILED")},
              {":since", epoch_ms(since)},
              {":until", epoch_ms(until)}}},
            {"Limit", page_items}};
  if (auto started = start_from(body, cursor); !started) return std::unexpected(started.error());
  return body;
}

json encode_batch_get(const TableSpec& table, std::span<const std::string> keys) {
  json wanted = json::array();
  for (const std::string& key : keys) wanted.push_back(key_of(key));
  return json{
      {"RequestItems", {{table.name, {{"Keys", std::move(wanted)}, {"ConsistentRead", true}}}}}};
}

std::expected<BatchGetReply, std::string> decode_batch_get(const TableSpec& table,
                                                           const json& reply) {
  BatchGetReply out;
  if (auto responses = reply.find("Responses"); responses != reply.end()) {
    auto items = responses->find(table.name);
    if (items != responses->end()) {
      if (!items->is_array()) return std::unexpected("Responses is not an array");
      for (const auto& item : *items) {
        auto record = decode_record(table, item);
        if (!record) return std::unexpected(record.error());
        out.records.push_back(std::move(*record));
      }
    }
  }
  if (auto left = reply.find("UnprocessedKeys"); left != reply.end() && left->is_object()) {
    auto ours = left->find(table.name);
    if (ours != left->end() && ours->contains("Keys") && ours->at("Keys").is_array()) {
      for (const auto& key : ours->at("Keys")) {
        const auto* pk = key.is_object() && key.contains("pk") ? &key.at("pk") : nullptr;
        if (pk == nullptr || !pk->is_object() || !pk->contains("S") || !pk->at("S").is_string())
          return std::unexpected("an unprocessed key without pk");
        out.unprocessed.push_back(pk->at("S").get<std::string>());
      }
    }
  }
  return out;
}

std::expected<idempotency::RecordPage, std::string> decode_page(const TableSpec& table,
                                                                const json& reply) {
  idempotency::RecordPage page;
  auto items = reply.find("Items");
  if (items != reply.end()) {
    if (!items->is_array()) return std::unexpected("Items is not an array");
    for (const auto& item : *items) {
      auto record = decode_record(table, item);
      if (!record) return std::unexpected(record.error());
      page.records.push_back(std::move(*record));
    }
  }
  if (auto last = reply.find("LastEvaluatedKey"); last != reply.end() && last->is_object()) {
    page.next = last->dump();
  }
  return page;
}

}  // namespace ic::dynamodb
