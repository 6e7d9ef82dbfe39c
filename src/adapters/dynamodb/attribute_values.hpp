// DynamoDB attribute values in the JSON protocol's form, shared by the request encoders of the
// consumer's writes (dynamodb_codec) and the operator's (operator_codec).
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "adapters/dynamodb/dynamodb_codec.hpp"
#include "core/time.hpp"

namespace ic::dynamodb::attr {

inline nlohmann::json s(std::string_view value) {
  return nlohmann::json{{"S", value}};
}
inline nlohmann::json n(std::int64_t value) {
  return nlohmann::json{{"N", std::to_string(value)}};
}
inline nlohmann::json epoch_ms(Instant t) {
  return n(t.time_since_epoch().count());
}
inline nlohmann::json key_of(std::string_view key) {
  return nlohmann::json{{"pk", s(key)}};
}
// The TTL attribute's value for a write at `now`: epoch seconds, now + the table's retention.
inline std::int64_t expires_at(const TableSpec& table, Instant now) {
  return std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch() + table.retention)
      .count();
}

}  // namespace ic::dynamodb::attr
