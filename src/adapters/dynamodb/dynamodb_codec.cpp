#include "adapters/dynamodb/dynamodb_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "adapters/dynamodb/attribute_values.hpp"
#include "aws/protocol/json_writer.hpp"

namespace ic::dynamodb {
namespace {

using nlohmann::json;

constexpr std::string_view kHolderCondition = "#state = :inprogress AND claimToken = :token";

using attr::expires_at;
using aws::JsonWriter;

// DynamoDB's attribute values, {"S": text} and {"N": "digits"}, as members named `name`.
void string_value(JsonWriter& w, std::string_view name, std::string_view text) {
  w.key(name).begin_object().member("S", text).end_object();
}

void number_value(JsonWriter& w, std::string_view name, std::int64_t number) {
  std::array<char, 24> digits{};  // an int64 needs at most 20
  const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), number).ptr;
  w.key(name).begin_object().member("N", std::string_view(digits.data(), end)).end_object();
}

void epoch_ms_value(JsonWriter& w, std::string_view name, Instant t) {
  number_value(w, name, t.time_since_epoch().count());
}

void table_and_key(JsonWriter& w, const TableSpec& table, std::string_view key) {
  w.member("TableName", table.name).key("Key").begin_object();
  string_value(w, "pk", key);
  w.end_object();
}

// A write conditioned on the holder: `names` and `values` add the write's own attribute names
// and values beside the condition's (state and owner are reserved words).
std::string holder_update(const TableSpec& table, std::string_view key, std::string_view token,
                          std::string_view update, const auto& names, const auto& values) {
  JsonWriter w;
  w.begin_object();
  table_and_key(w, table, key);
  w.member("UpdateExpression", update).member("ConditionExpression", kHolderCondition);
  w.key("ExpressionAttributeNames").begin_object().member("#state", "state");
  names(w);
  w.end_object().key("ExpressionAttributeValues").begin_object();
  string_value(w, ":inprogress", idempotency::to_string(idempotency::ClaimState::InProgress));
  string_value(w, ":token", token);
  values(w);
  w.end_object().member("ReturnValuesOnConditionCheckFailure", "ALL_OLD").end_object();
  return std::move(w).take();
}

std::expected<std::string, std::string> string_attr(const json& item, std::string_view name,
                                                    bool required) {
  auto it = item.find(name);
  if (it == item.end()) {
    if (required) return std::unexpected(fmt::format("missing attribute {}", name));
    return std::string{};
  }
  auto value = it->find("S");
  if (value == it->end() || !value->is_string()) {
    return std::unexpected(fmt::format("attribute {} is not of type S", name));
  }
  return value->get<std::string>();
}

std::expected<std::optional<std::int64_t>, std::string> number_attr(const json& item,
                                                                    const char* name) {
  auto it = item.find(name);
  if (it == item.end()) return std::nullopt;
  auto value = it->find("N");
  if (value == it->end() || !value->is_string()) {
    return std::unexpected(fmt::format("attribute {} is not of type N", name));
  }
  const auto& text = value->get_ref<const std::string&>();
  std::int64_t parsed = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    return std::unexpected(fmt::format("attribute {} is not an integer: {}", name, text));
  }
  return parsed;
}

Instant instant_of(std::int64_t ms) {
  return Instant{Millis{ms}};
}

// `audit`: a list (L) of maps (M) {at N, actor S, action S, reason S}.
std::expected<std::vector<idempotency::AuditEntry>, std::string> decode_audit(const json& item) {
  std::vector<idempotency::AuditEntry> out;
  auto it = item.find("audit");
  if (it == item.end()) return out;
  auto list = it->find("L");
  if (list == it->end() || !list->is_array()) {
    return std::unexpected("attribute audit is not of type L");
  }
  for (const auto& element : *list) {
    auto map = element.find("M");
    if (map == element.end() || !map->is_object()) {
      return std::unexpected("an audit entry is not of type M");
    }
    idempotency::AuditEntry entry;
    auto at = number_attr(*map, "at");
    if (!at) return std::unexpected("audit entry: " + at.error());
    entry.at = instant_of(at->value_or(0));
    for (auto [name, out_field] :
         {std::pair{"actor", &entry.actor}, std::pair{"action", &entry.action},
          std::pair{"reason", &entry.reason}}) {
      auto value = string_attr(*map, name, false);
      if (!value) return std::unexpected("audit entry: " + value.error());
      *out_field = std::move(*value);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

std::string attention_of(const TableSpec& table, idempotency::ClaimState state,
                         std::string_view status) {
  if (state == idempotency::ClaimState::Failed) return std::string(idempotency::to_string(state));
  if (state == idempotency::ClaimState::Done &&
      std::ranges::find(table.attention_statuses, status) != table.attention_statuses.end()) {
    return std::string(status);
  }
  return {};
}

std::string encode_claim(const TableSpec& table, const idempotency::ClaimRequest& request) {
  JsonWriter w;
  w.begin_object();
  table_and_key(w, table, request.key);
  w.member("UpdateExpression",
           "SET #state = :inprogress, leaseUntil = :lease, claimToken = :token, #owner = :owner, "
           "payloadHash = :h, updatedAt = :now, expiresAt = :exp, "
           "createdAt = if_not_exists(createdAt, :now), "
           "firstAttemptAt = if_not_exists(firstAttemptAt, :now) ADD fence :one")
      .member("ConditionExpression",
              "attribute_not_exists(pk) OR (#state = :inprogress AND payloadHash = :h AND "
              "(leaseUntil < :now OR claimToken = :token))");
  w.key("ExpressionAttributeNames")
      .begin_object()
      .member("#state", "state")
      .member("#owner", "owner")
      .end_object();
  w.key("ExpressionAttributeValues").begin_object();
  string_value(w, ":inprogress", idempotency::to_string(idempotency::ClaimState::InProgress));
  epoch_ms_value(w, ":lease", request.now + request.lease);
  string_value(w, ":token", request.token);
  string_value(w, ":owner", request.owner);
  string_value(w, ":h", request.payload_hash);
  epoch_ms_value(w, ":now", request.now);
  number_value(w, ":exp", expires_at(table, request.now));
  number_value(w, ":one", 1);
  w.end_object()
      .member("ReturnValues", "ALL_NEW")
      .member("ReturnValuesOnConditionCheckFailure", "ALL_OLD")
      .end_object();
  return std::move(w).take();
}

std::string encode_final(const TableSpec& table, std::string_view key, std::string_view token,
                         const FinalWrite& write) {
  const std::string attention = attention_of(table, write.state, write.status);
  // A debit keeps its charge, so reconcile can compare it with the bank's row; a failure only
  // while it needs a person (docs/design.md §3 `payload`).
  const bool keep_payload = !write.payload.empty() &&
                            (!attention.empty() || write.state == idempotency::ClaimState::Done);
  // DynamoDB accepts empty strings, but an absent attribute says "not applicable" plainly.
  const bool has_reason = !write.failure_reason.empty();
  const bool has_result = !write.result_ref.empty();
  std::string update =
      "SET #state = :final, #status = :status, updatedAt = :now, completedAt = :now, "
      "expiresAt = :exp";
  if (!attention.empty()) update += ", attention = :attention, attentionAt = :now";
  if (keep_payload) update += ", payload = :payload";
  if (has_reason) update += ", failureReason = :reason";
  if (has_result) update += ", #result = :ref";
  return holder_update(
      table, key, token, update,
      [&](JsonWriter& w) {
        w.member("#status", "status");
        if (has_result) w.member("#result", table.result_attribute);
      },
      [&](JsonWriter& w) {
        string_value(w, ":final", idempotency::to_string(write.state));
        string_value(w, ":status", write.status);
        epoch_ms_value(w, ":now", write.now);
        number_value(w, ":exp", expires_at(table, write.now));
        if (!attention.empty()) string_value(w, ":attention", attention);
        if (keep_payload) string_value(w, ":payload", write.payload);
        if (has_reason) string_value(w, ":reason", write.failure_reason);
        if (has_result) string_value(w, ":ref", write.result_ref);
      });
}

std::string encode_set_lease(const TableSpec& table, std::string_view key, std::string_view token,
                             Instant lease_until) {
  return holder_update(
      table, key, token, "SET leaseUntil = :lease", [](JsonWriter&) {},
      [&](JsonWriter& w) { epoch_ms_value(w, ":lease", lease_until); });
}

std::string encode_get(const TableSpec& table, std::string_view key) {
  JsonWriter w;
  w.begin_object();
  table_and_key(w, table, key);
  w.key("ConsistentRead").value(true).end_object();
  return std::move(w).take();
}

std::expected<idempotency::ClaimRecord, std::string> decode_record(const TableSpec& table,
                                                                   const json& item) {
  if (!item.is_object()) return std::unexpected("item is not an object");
  idempotency::ClaimRecord record;
  std::string state_text;
  const struct {
    std::string_view name;
    std::string* out;
    bool required;
  } strings[] = {{"pk", &record.key, true},
                 {"state", &state_text, true},
                 {"claimToken", &record.claim_token, false},
                 {"owner", &record.owner, false},
                 {"payloadHash", &record.payload_hash, false},
                 {"status", &record.status, false},
                 {"failureReason", &record.failure_reason, false},
                 {"payload", &record.payload, false},
                 {table.result_attribute, &record.result_ref, false}};
  for (const auto& field : strings) {
    auto value = string_attr(item, field.name, field.required);
    if (!value) return std::unexpected(value.error());
    *field.out = std::move(*value);
  }
  const auto state = idempotency::parse_claim_state(state_text);
  if (!state) return std::unexpected(fmt::format("unknown state {}", state_text));
  record.state = *state;

  std::optional<std::int64_t> lease, created, updated, completed;
  std::optional<std::int64_t> fence, expires, first_attempt;
  const struct {
    const char* name;
    std::optional<std::int64_t>* out;
  } numbers[] = {{"leaseUntil", &lease},
                 {"fence", &fence},
                 {"createdAt", &created},
                 {"updatedAt", &updated},
                 {"completedAt", &completed},
                 {"expiresAt", &expires},
                 {"firstAttemptAt", &first_attempt}};
  for (const auto& field : numbers) {
    auto value = number_attr(item, field.name);
    if (!value) return std::unexpected(value.error());
    *field.out = *value;
  }
  record.lease_until = instant_of(lease.value_or(0));
  record.fence = fence.value_or(0);
  record.created_at = instant_of(created.value_or(0));
  record.updated_at = instant_of(updated.value_or(0));
  if (completed) record.completed_at = instant_of(*completed);
  if (first_attempt) record.first_attempt_at = instant_of(*first_attempt);
  record.expires_at_epoch_seconds = expires.value_or(0);
  auto audit = decode_audit(item);
  if (!audit) return std::unexpected(audit.error());
  record.audit = std::move(*audit);
  return record;
}

std::optional<json> old_item_from_error_body(std::string_view body) {
  auto parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return std::nullopt;
  auto item = parsed.find("Item");
  if (item == parsed.end() || !item->is_object() || item->empty()) return std::nullopt;
  return *item;
}

}  // namespace ic::dynamodb
