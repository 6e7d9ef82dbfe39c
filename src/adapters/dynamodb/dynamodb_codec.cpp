#include "adapters/dynamodb/dynamodb_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "adapters/dynamodb/attribute_values.hpp"

namespace ic::dynamodb {
namespace {

using nlohmann::json;

constexpr std::string_view kHolderCondition = "#state = :inprogress AND claimToken = :token";

using attr::epoch_ms;
using attr::expires_at;
using attr::key_of;
using attr::n;
using attr::s;

// The attributes every conditional write names: state and owner are reserved words.
json holder_update(const TableSpec& table, std::string_view key, std::string_view token) {
  return json{
      {"TableName", table.name},
      {"Key", key_of(key)},
      {"ConditionExpression", kHolderCondition},
      {"ExpressionAttributeNames", {{"#state", "state"}}},
      {"ExpressionAttributeValues",
       {{":inprogress", s(idem::to_string(idem::ClaimState::InProgress))}, {":token", s(token)}}},
      {"ReturnValuesOnConditionCheckFailure", "ALL_OLD"}};
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
std::expected<std::vector<idem::AuditEntry>, std::string> decode_audit(const json& item) {
  std::vector<idem::AuditEntry> out;
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
    idem::AuditEntry entry;
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

std::string attention_of(const TableSpec& table, idem::ClaimState state, std::string_view status) {
  if (state == idem::ClaimState::Failed) return std::string(idem::to_string(state));
  if (state == idem::ClaimState::Done &&
      std::ranges::find(table.attention_statuses, status) != table.attention_statuses.end()) {
    return std::string(status);
  }
  return {};
}

json encode_claim(const TableSpec& table, const idem::ClaimRequest& request) {
  return json{
      {"TableName", table.name},
      {"Key", key_of(request.key)},
      {"UpdateExpression",
       "SET #state = :inprogress, leaseUntil = :lease, claimToken = :token, #owner = :owner, "
       "payloadHash = :h, updatedAt = :now, expiresAt = :exp, "
       "createdAt = if_not_exists(createdAt, :now) ADD fence :one"},
      {"ConditionExpression",
       "attribute_not_exists(pk) OR (#state = :inprogress AND payloadHash = :h AND "
       "(leaseUntil < :now OR claimToken = :token))"},
      {"ExpressionAttributeNames", {{"#state", "state"}, {"#owner", "owner"}}},
      {"ExpressionAttributeValues",
       {{":inprogress", s(idem::to_string(idem::ClaimState::InProgress))},
        {":lease", epoch_ms(request.now + request.lease)},
        {":token", s(request.token)},
        {":owner", s(request.owner)},
        {":h", s(request.payload_hash)},
        {":now", epoch_ms(request.now)},
        {":exp", n(expires_at(table, request.now))},
        {":one", n(1)}}},
      {"ReturnValues", "ALL_NEW"},
      {"ReturnValuesOnConditionCheckFailure", "ALL_OLD"}};
}

json encode_final(const TableSpec& table, std::string_view key, std::string_view token,
                  const FinalWrite& write) {
  json body = holder_update(table, key, token);
  std::string update =
      "SET #state = :final, #status = :status, updatedAt = :now, completedAt = :now, "
      "expiresAt = :exp";
  body["ExpressionAttributeNames"]["#status"] = "status";
  auto& values = body["ExpressionAttributeValues"];
  values[":final"] = s(idem::to_string(write.state));
  values[":status"] = s(write.status);
  values[":now"] = epoch_ms(write.now);
  values[":exp"] = n(expires_at(table, write.now));
  if (const std::string attention = attention_of(table, write.state, write.status);
      !attention.empty()) {
    update += ", attention = :attention, attentionAt = :now";
    values[":attention"] = s(attention);
    if (!write.payload.empty()) {
      update += ", payload = :payload";
      values[":payload"] = s(write.payload);
    }
  }
  // DynamoDB accepts empty strings, but an absent attribute says "not applicable" plainly.
  if (!write.failure_reason.empty()) {
    update += ", failureReason = :reason";
    values[":reason"] = s(write.failure_reason);
  }
  if (!write.result_ref.empty()) {
    update += ", #result = :ref";
    body["ExpressionAttributeNames"]["#result"] = table.result_attribute;
    values[":ref"] = s(write.result_ref);
  }
  body["UpdateExpression"] = std::move(update);
  return body;
}

json encode_set_lease(const TableSpec& table, std::string_view key, std::string_view token,
                      Instant lease_until) {
  json body = holder_update(table, key, token);
  body["UpdateExpression"] = "SET leaseUntil = :lease";
  body["ExpressionAttributeValues"][":lease"] = epoch_ms(lease_until);
  return body;
}

json encode_get(const TableSpec& table, std::string_view key) {
  return json{{"TableName", table.name}, {"Key", key_of(key)}, {"ConsistentRead", true}};
}

std::expected<idem::ClaimRecord, std::string> decode_record(const TableSpec& table,
                                                            const json& item) {
  if (!item.is_object()) return std::unexpected("item is not an object");
  idem::ClaimRecord record;
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
  const auto state = idem::parse_claim_state(state_text);
  if (!state) return std::unexpected(fmt::format("unknown state {}", state_text));
  record.state = *state;

  std::optional<std::int64_t> lease, created, updated, completed;
  std::optional<std::int64_t> fence, expires;
  const struct {
    const char* name;
    std::optional<std::int64_t>* out;
  } numbers[] = {{"leaseUntil", &lease},  {"fence", &fence},           {"createdAt", &created},
                 {"updatedAt", &updated}, {"completedAt", &completed}, {"expiresAt", &expires}};
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
