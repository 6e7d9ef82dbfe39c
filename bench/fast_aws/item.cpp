// DynamoDB attribute values and items (item.hpp).
#include "fast_aws/item.hpp"

#include <algorithm>
#include <charconv>

#include "fast_aws/common.hpp"
#include "fast_aws/json_text.hpp"

namespace ic::bench::fast_aws {
namespace {

// An N's text as a number, and as an integer when it is one.
std::optional<long double> number_of(std::string_view text) {
  return whole_number<long double>(text);
}

std::optional<std::int64_t> integer_of(std::string_view text) {
  return whole_number<std::int64_t>(text);
}

}  // namespace

std::string_view kind_name(Kind kind) {
  constexpr std::string_view kNames[] = {"S", "N", "B", "BOOL", "NULL", "?"};
  return kNames[static_cast<int>(kind)];
}

std::expected<Value, std::string> value_of(const nlohmann::json& attribute) {
  constexpr std::string_view kInvalid =
      "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes";
  if (!attribute.is_object() || attribute.size() != 1)
    return std::unexpected(std::string(kInvalid));
  const std::string& type = attribute.begin().key();
  const nlohmann::json& content = attribute.begin().value();
  if (type == "S" || type == "B") {
    if (!content.is_string()) return std::unexpected(std::string(kInvalid));
    return Value{type == "S" ? Kind::S : Kind::B, content.get<std::string>()};
  }
  if (type == "N") {
    if (!content.is_string() || !number_of(content.get_ref<const std::string&>())) {
      return std::unexpected("A value provided cannot be converted into a number");
    }
    return Value{Kind::N, content.get<std::string>()};
  }
  if (type == "BOOL") {
    if (!content.is_boolean()) return std::unexpected(std::string(kInvalid));
    return Value{Kind::Bool, content.get<bool>() ? "true" : "false"};
  }
  if (type == "NULL") {
    if (!content.is_boolean() || !content.get<bool>()) {
      return std::unexpected(
          "One or more parameter values were invalid: Null attribute value "
          "types must have the value of true");
    }
    return Value{Kind::Null, "true"};
  }
  if (type == "SS" || type == "NS" || type == "BS" || type == "L" || type == "M") {
    return Value{Kind::Other, attribute.dump()};
  }
  return std::unexpected(std::string(kInvalid));
}

void put_value(std::string& out, const Value& value) {
  switch (value.kind) {
    case Kind::S:
    case Kind::N:
    case Kind::B:
      out += '{';
      put_key(out, kind_name(value.kind));
      put_string(out, value.text);
      out += '}';
      return;
    case Kind::Bool:
      out += R"({"BOOL":)" + value.text + "}";
      return;
    case Kind::Null:
      out += R"({"NULL":true})";
      return;
    case Kind::Other:
      out += value.text;
      return;
  }
}

void put_item(std::string& out, const Item& item) {
  out += '{';
  bool first = true;
  for (const auto& [name, value] : item) {
    if (!first) out += ',';
    first = false;
    put_key(out, name);
    put_value(out, value);
  }
  out += '}';
}

const Value* find(const Item& item, std::string_view name) {
  for (const auto& [attribute, value] : item) {
    if (attribute == name) return &value;
  }
  return nullptr;
}

void put(Item& item, std::string_view name, Value value) {
  for (auto& [attribute, current] : item) {
    if (attribute == name) {
      current = std::move(value);
      return;
    }
  }
  item.emplace_back(std::string(name), std::move(value));
}

void erase(Item& item, std::string_view name) {
  std::erase_if(item, [&](const auto& attribute) { return attribute.first == name; });
}

std::optional<int> compare(const Value& a, const Value& b) {
  if (a.kind != b.kind) return std::nullopt;
  switch (a.kind) {
    case Kind::N: {
      if (const auto x = integer_of(a.text), y = integer_of(b.text); x && y) {
        return *x < *y ? -1 : (*x > *y ? 1 : 0);
      }
      const auto x = number_of(a.text);
      const auto y = number_of(b.text);
      if (!x || !y) return std::nullopt;
      return *x < *y ? -1 : (*x > *y ? 1 : 0);
    }
    case Kind::S:
    case Kind::B:  // base64 text, not the bytes: the order differs, equality does not
      return a.text.compare(b.text) < 0 ? -1 : (a.text == b.text ? 0 : 1);
    default:
      return std::nullopt;
  }
}

bool equal(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  if (const auto order = compare(a, b)) return *order == 0;
  return a.text == b.text;
}

std::optional<std::string> arithmetic(std::string_view a, std::string_view b, bool subtract) {
  if (const auto x = integer_of(a), y = integer_of(b); x && y) {
    std::int64_t result = 0;
    if (!(subtract ? __builtin_sub_overflow(*x, *y, &result)
                   : __builtin_add_overflow(*x, *y, &result))) {
      return number_text(result);
    }
  }
  const auto x = number_of(a);
  const auto y = number_of(b);
  if (!x || !y) return std::nullopt;
  char digits[64];
  const auto end = std::to_chars(digits, digits + sizeof digits, subtract ? *x - *y : *x + *y).ptr;
  return std::string(digits, end);
}

}  // namespace ic::bench::fast_aws
