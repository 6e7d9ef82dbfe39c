// DynamoDB items: GetItem, and UpdateItem with its condition, update and ReturnValues.
#include <algorithm>
#include <initializer_list>
#include <vector>

#include "fast_aws/bindings.hpp"
#include "fast_aws/dynamodb.hpp"
#include "fast_aws/expression_eval.hpp"
#include "fast_aws/item_update.hpp"
#include "fast_aws/json_text.hpp"
#include "fast_aws/request_members.hpp"

namespace ic::bench::fast_aws {
namespace {

using nlohmann::json;

// The item's key text, checked against the table's key schema.
std::expected<std::string, Reply> key_of(const Table& table, const json& request) {
  const auto key = request.find("Key");
  constexpr std::string_view kMismatch = "The provided key element does not match the schema";
  if (key == request.end() || !key->is_object() || key->size() != 1) {
    return std::unexpected(validation(kMismatch));
  }
  const auto attribute = key->find(table.hash_key);
  if (attribute == key->end()) return std::unexpected(validation(kMismatch));
  auto value = value_of(*attribute);
  if (!value) return std::unexpected(validation(value.error()));
  if (value->kind != table.hash_kind) return std::unexpected(validation(kMismatch));
  if (value->text.empty()) {
    return std::unexpected(validation(
        "One or more parameter values are not valid. The AttributeValue for a key attribute "
        "cannot contain an empty string value. Key: " +
        table.hash_key));
  }
  return std::move(value->text);
}

// The API's older members, which fast_aws does not read: refused rather than ignored.
std::expected<void, Reply> refuse_legacy(const json& request,
                                         std::initializer_list<const char*> members) {
  for (const char* member : members) {
    if (request.contains(member)) {
      return std::unexpected(validation(std::string("fast_aws does not implement ") + member));
    }
  }
  return {};
}

// "Attributes":<item>, or only its attributes named in `only`.
void put_attributes(std::string& body, const Item& item,
                    const std::vector<std::string_view>* only) {
  body += R"("Attributes":)";
  if (only == nullptr) {
    put_item(body, item);
    return;
  }
  Item subset;
  for (const auto& [name, value] : item) {
    if (std::ranges::find(*only, name) != only->end()) subset.emplace_back(name, value);
  }
  put_item(body, subset);
}

}  // namespace

Reply DynamoDb::update_item(const json& request) {
  if (auto legacy = refuse_legacy(request, {"AttributeUpdates", "Expected", "ConditionalOperator"});
      !legacy) {
    return std::move(legacy.error());
  }
  const std::string* update_text = string_member(request, "UpdateExpression");
  if (update_text == nullptr) return validation("fast_aws needs an UpdateExpression");
  auto update = compiled(*update_text, /*is_update=*/true);
  if (!update) return validation(update.error());
  std::shared_ptr<const Program> condition;
  if (const std::string* text = string_member(request, "ConditionExpression")) {
    auto parsed = compiled(*text, /*is_update=*/false);
    if (!parsed) return validation(parsed.error());
    condition = std::move(*parsed);
  }
  auto bound = bind(request, {update->get(), condition.get()});
  if (!bound) return validation(bound.error());
  const std::string* returns = string_member(request, "ReturnValues");
  const std::string_view return_values = returns == nullptr ? "NONE" : std::string_view(*returns);
  if (return_values != "NONE" && return_values != "ALL_NEW" && return_values != "ALL_OLD" &&
      return_values != "UPDATED_NEW" && return_values != "UPDATED_OLD") {
    return validation("1 validation error detected: Value '" + std::string(return_values) +
                      "' at 'returnValues' failed to satisfy constraint: Member must satisfy "
                      "enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]");
  }
  const std::string* on_failure = string_member(request, "ReturnValuesOnConditionCheckFailure");
  const bool old_on_failure = on_failure != nullptr && *on_failure == "ALL_OLD";

  const std::scoped_lock lock(mutex_);
  auto table = table_of(request);
  if (!table) return std::move(table.error());
  auto key = key_of(**table, request);
  if (!key) return std::move(key.error());
  const auto found = (*table)->items.find(*key);
  const Item* old = found == (*table)->items.end() ? nullptr : &found->second;
  if (condition && !holds(*condition, condition->root, old, *bound)) {
    std::string body =
        R"({"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed")";
    if (old_on_failure && old != nullptr) {
      body += R"(,"Item":)";
      put_item(body, *old);
    }
    body += '}';
    return Reply{.status = 400, .body = std::move(body)};
  }
  std::vector<std::string_view> touched;
  auto next = apply_update(**table, **update, old, *key, *bound, touched);
  if (!next) return validation(next.error());
  std::string body = "{";
  if (return_values == "ALL_OLD" || return_values == "UPDATED_OLD") {
    if (old != nullptr) put_attributes(body, *old, return_values == "ALL_OLD" ? nullptr : &touched);
  }
  const Item* stored = nullptr;
  if (found == (*table)->items.end()) {
    stored = &(*table)->items.emplace(std::move(*key), std::move(*next)).first->second;
  } else {
    found->second = std::move(*next);
    stored = &found->second;
  }
  if (return_values == "ALL_NEW" || return_values == "UPDATED_NEW") {
    put_attributes(body, *stored, return_values == "ALL_NEW" ? nullptr : &touched);
  }
  body += '}';
  return ok(std::move(body));
}

Reply DynamoDb::get_item(const json& request) {
  if (auto legacy = refuse_legacy(request, {"ProjectionExpression", "AttributesToGet"}); !legacy) {
    return std::move(legacy.error());
  }
  const std::scoped_lock lock(mutex_);
  auto table = table_of(request);
  if (!table) return std::move(table.error());
  auto key = key_of(**table, request);
  if (!key) return std::move(key.error());
  const auto found = (*table)->items.find(*key);
  if (found == (*table)->items.end()) return ok("{}");
  std::string body = R"({"Item":)";
  put_item(body, found->second);
  body += '}';
  return ok(std::move(body));
}

}  // namespace ic::bench::fast_aws
