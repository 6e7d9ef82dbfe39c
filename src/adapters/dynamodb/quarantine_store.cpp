#include "adapters/dynamodb/quarantine_store.hpp"

#include <charconv>

#include "adapters/dynamodb/attribute_values.hpp"

namespace ic::dynamodb {
namespace {

using nlohmann::json;

constexpr std::string_view kRecordType = "QUARANTINE";

std::string key_for(std::string_view body_sha256) {
  return std::string(kQuarantineKeyPrefix).append(body_sha256);
}

const std::string* string_of(const json& item, std::string_view name) {
  const auto it = item.find(name);
  if (it == item.end() || !it->is_object()) return nullptr;
  const auto s = it->find("S");
  return s == it->end() || !s->is_string() ? nullptr : s->get_ptr<const std::string*>();
}

}  // namespace

json encode_quarantine_put(const TableSpec& table, const consumer::QuarantineRecord& record) {
  json values = {{":t", attr::s(kRecordType)},
                 {":r", attr::s(record.failure_reason)},
                 {":m", attr::s(record.source_message_id)},
                 {":h", attr::s(record.body_sha256)},
                 {":at", attr::epoch_ms(record.at)},
                 {":x", attr::n(attr::expires_at(table, record.at))}};
  std::string update =
      "SET recordType = :t, failureReason = :r, sourceMessageId = :m, bodySha256 = :h, "
      "quarantinedAt = :at, expiresAt = :x";
  // Absent when empty, as in the DLQ attributes; REMOVE clears a detail of an earlier write.
  if (!record.failure_detail.empty()) {
    values[":d"] = attr::s(record.failure_detail);
    update += ", failureDetail = :d";
  } else {
    update += " REMOVE failureDetail";
  }
  return {{"TableName", table.name},
          {"Key", attr::key_of(key_for(record.body_sha256))},
          {"UpdateExpression", update},
          {"ExpressionAttributeValues", values}};
}

json encode_quarantine_get(const TableSpec& table, std::string_view body_sha256) {
  return {{"TableName", table.name},
          {"Key", attr::key_of(key_for(body_sha256))},
          {"ConsistentRead", true}};
}

std::expected<std::optional<consumer::QuarantineRecord>, std::string> decode_quarantine_get(
    const json& reply) {
  if (!reply.is_object()) return std::unexpected("reply is not an object");
  const auto item = reply.find("Item");
  if (item == reply.end()) return std::nullopt;
  if (!item->is_object()) return std::unexpected("Item is not an object");
  const std::string* type = string_of(*item, "recordType");
  if (type == nullptr || *type != kRecordType) return std::unexpected("not a quarantine record");
  consumer::QuarantineRecord record;
  const struct {
    std::string_view name;
    std::string* out;
    bool required;
  } fields[] = {{"bodySha256", &record.body_sha256, true},
                {"failureReason", &record.failure_reason, true},
                {"sourceMessageId", &record.source_message_id, true},
                {"failureDetail", &record.failure_detail, false}};
  for (const auto& field : fields) {
    const std::string* value = string_of(*item, field.name);
    if (value == nullptr && field.required) {
      return std::unexpected(std::string(field.name) + " missing");
    }
    if (value != nullptr) *field.out = *value;
  }
  const auto at = item->find("quarantinedAt");
  if (at != item->end() && at->is_object() && at->contains("N") && (*at)["N"].is_string()) {
    const auto& text = (*at)["N"].get_ref<const std::string&>();
    std::int64_t ms = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
    if (ec == std::errc{} && end == text.data() + text.size()) record.at = Instant{Millis{ms}};
  }
  return record;
}

Task<std::expected<void, Error>> DynamoDbQuarantineStore::put(
    const consumer::QuarantineRecord& record) {
  consumer::QuarantineRecord stamped = record;
  stamped.at = clock_.now();
  auto reply = co_await client_.call("UpdateItem", encode_quarantine_put(table_, stamped));
  if (!reply) co_return std::unexpected(reply.error());
  co_return std::expected<void, Error>{};
}

Task<std::expected<std::optional<consumer::QuarantineRecord>, Error>> DynamoDbQuarantineStore::find(
    std::string_view body_sha256) {
  auto reply = co_await client_.call("GetItem", encode_quarantine_get(table_, body_sha256));
  if (!reply) co_return std::unexpected(reply.error());
  auto record = decode_quarantine_get(*reply);
  if (!record) {
    co_return std::unexpected(Error{.error_class = ErrorClass::Permanent,
                                    .code = "MalformedItem",
                                    .message = "quarantine record: " + record.error()});
  }
  co_return std::move(*record);
}

}  // namespace ic::dynamodb
