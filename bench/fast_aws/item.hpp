// DynamoDB attribute values and items: read from the request, compared, added up, and
// written back as JSON text.
#pragma once

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ic::bench::fast_aws {

// An attribute value. Scalars keep their text (S, N, B as base64), so that items are written
// back without a JSON document; other types keep their whole JSON ({"L":[...]}), compared and
// written back as text.
enum class Kind : std::uint8_t { S, N, B, Bool, Null, Other };

struct Value {
  Kind kind = Kind::S;
  std::string text;
};

using Item = std::vector<std::pair<std::string, Value>>;

// The type's name in the protocol ("S", "BOOL", ...).
std::string_view kind_name(Kind kind);

// An attribute value of a request; the error is a ValidationException's message.
std::expected<Value, std::string> value_of(const nlohmann::json& attribute);

void put_value(std::string& out, const Value& value);
void put_item(std::string& out, const Item& item);

// The item's attribute `name`, or nullptr.
const Value* find(const Item& item, std::string_view name);
// Sets the attribute `name`, in place if the item has it.
void put(Item& item, std::string_view name, Value value);
void erase(Item& item, std::string_view name);

// Negative, zero or positive as a < b, a == b, a > b; nullopt when DynamoDB does not order
// the two (different types, or types without an order).
std::optional<int> compare(const Value& a, const Value& b);
bool equal(const Value& a, const Value& b);

// a + b or a - b of two N texts; integers stay exact.
std::optional<std::string> arithmetic(std::string_view a, std::string_view b, bool subtract);

}  // namespace ic::bench::fast_aws
