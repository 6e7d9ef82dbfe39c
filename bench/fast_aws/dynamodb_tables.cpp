// DynamoDB tables: CreateTable, DescribeTable, UpdateTimeToLive and DescribeTimeToLive.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "fast_aws/common.hpp"
#include "fast_aws/dynamodb.hpp"
#include "fast_aws/request_members.hpp"

namespace ic::bench::fast_aws {
namespace {

using nlohmann::json;

constexpr std::string_view kUndefinedKey =
    "One or more parameter values were invalid: Some index key attributes are not defined in "
    "AttributeDefinitions";

std::optional<Kind> scalar_kind(std::string_view type) {
  if (type == "S") return Kind::S;
  if (type == "N") return Kind::N;
  if (type == "B") return Kind::B;
  return std::nullopt;
}

std::string table_arn(const std::string& name) {
  return "arn:aws:dynamodb:" + std::string(kRegion) + ":" + std::string(kAccount) + ":table/" +
         name;
}

}  // namespace

Reply DynamoDb::create_table(const json& request) {
  const std::string* name = string_member(request, "TableName");
  if (name == nullptr || name->size() < 3 || name->size() > 255) {
    return validation(
        "TableName must be at least 3 characters long and at most 255 characters long");
  }
  const auto definitions = request.find("AttributeDefinitions");
  const auto schema = request.find("KeySchema");
  if (definitions == request.end() || !definitions->is_array() || schema == request.end() ||
      !schema->is_array()) {
    return validation("CreateTable needs AttributeDefinitions and KeySchema");
  }
  std::vector<std::pair<std::string, Kind>> types;
  for (const auto& definition : *definitions) {
    const std::string* attribute =
        definition.is_object() ? string_member(definition, "AttributeName") : nullptr;
    const std::string* type =
        definition.is_object() ? string_member(definition, "AttributeType") : nullptr;
    const auto kind = type == nullptr ? std::nullopt : scalar_kind(*type);
    if (attribute == nullptr || !kind) return validation("Invalid AttributeDefinitions");
    types.emplace_back(*attribute, *kind);
  }
  const auto type_of = [&](const std::string& attribute) -> std::optional<Kind> {
    const auto it = std::ranges::find(types, attribute, &std::pair<std::string, Kind>::first);
    return it == types.end() ? std::nullopt : std::optional<Kind>(it->second);
  };
  auto table = std::make_unique<Table>();
  table->name = *name;
  for (const auto& element : *schema) {
    const std::string* attribute =
        element.is_object() ? string_member(element, "AttributeName") : nullptr;
    const std::string* role = element.is_object() ? string_member(element, "KeyType") : nullptr;
    if (attribute == nullptr || role == nullptr || !type_of(*attribute)) {
      return validation(kUndefinedKey);
    }
    if (*role != "HASH") return validation("fast_aws does not implement tables with a range key");
    table->hash_key = *attribute;
    table->hash_kind = *type_of(*attribute);
  }
  if (table->hash_key.empty()) return validation("KeySchema needs a HASH key");
  json indexes = json::array();
  if (const auto gsis = request.find("GlobalSecondaryIndexes");
      gsis != request.end() && gsis->is_array()) {
    for (const auto& gsi : *gsis) {
      const std::string* index_name = gsi.is_object() ? string_member(gsi, "IndexName") : nullptr;
      const auto keys = gsi.is_object() ? gsi.find("KeySchema") : gsi.end();
      if (index_name == nullptr || keys == gsi.end() || !keys->is_array()) {
        return validation("Invalid GlobalSecondaryIndexes");
      }
      for (const auto& element : *keys) {
        const std::string* attribute =
            element.is_object() ? string_member(element, "AttributeName") : nullptr;
        if (attribute == nullptr || !type_of(*attribute)) return validation(kUndefinedKey);
        table->index_keys.emplace_back(*attribute, *type_of(*attribute));
      }
      json index = gsi;
      index["IndexStatus"] = "ACTIVE";
      index["IndexArn"] = table_arn(*name) + "/index/" + *index_name;
      indexes.push_back(std::move(index));
    }
  }
  const std::string* billing = string_member(request, "BillingMode");
  table->description = {
      {"TableName", *name},
      {"TableArn", table_arn(*name)},
      {"AttributeDefinitions", *definitions},
      {"KeySchema", *schema},
      {"CreationDateTime", static_cast<double>(epoch_ms()) / 1000.0},
      {"BillingModeSummary", {{"BillingMode", billing == nullptr ? "PROVISIONED" : *billing}}},
      {"ProvisionedThroughput",
       {{"NumberOfDecreasesToday", 0}, {"ReadCapacityUnits", 0}, {"WriteCapacityUnits", 0}}}};
  if (!indexes.empty()) table->description["GlobalSecondaryIndexes"] = std::move(indexes);
  const std::scoped_lock lock(mutex_);
  if (tables_.contains(*name)) {
    return dynamodb_error("ResourceInUseException", "Table already exists: " + *name);
  }
  // AWS answers CREATING and turns ACTIVE within seconds; here the table is ready at once, so
  // the next DescribeTable says ACTIVE.
  json description = table->description;
  description["TableStatus"] = "CREATING";
  description["ItemCount"] = 0;
  description["TableSizeBytes"] = 0;
  tables_.emplace(*name, std::move(table));
  return ok(json{{"TableDescription", std::move(description)}}.dump());
}

Reply DynamoDb::describe_table(const json& request) {
  const std::scoped_lock lock(mutex_);
  auto table = table_of(request);
  if (!table) return std::move(table.error());
  json description = (*table)->description;
  description["TableStatus"] = "ACTIVE";
  description["ItemCount"] = (*table)->items.size();
  description["TableSizeBytes"] = 0;
  return ok(json{{"Table", std::move(description)}}.dump());
}

Reply DynamoDb::describe_ttl(const json& request) {
  const std::scoped_lock lock(mutex_);
  auto table = table_of(request);
  if (!table) return std::move(table.error());
  json description = {
      {"TimeToLiveStatus", (*table)->ttl_attribute.empty() ? "DISABLED" : "ENABLED"}};
  if (!(*table)->ttl_attribute.empty()) description["AttributeName"] = (*table)->ttl_attribute;
  return ok(json{{"TimeToLiveDescription", std::move(description)}}.dump());
}

Reply DynamoDb::update_ttl(const json& request) {
  const auto specification = request.find("TimeToLiveSpecification");
  const std::string* attribute = specification == request.end() || !specification->is_object()
                                     ? nullptr
                                     : string_member(*specification, "AttributeName");
  const auto enabled = attribute == nullptr ? request.end() : specification->find("Enabled");
  if (attribute == nullptr || enabled == specification->end() || !enabled->is_boolean()) {
    return validation("TimeToLiveSpecification needs AttributeName and Enabled");
  }
  const std::scoped_lock lock(mutex_);
  auto table = table_of(request);
  if (!table) return std::move(table.error());
  std::string& current = (*table)->ttl_attribute;
  if (enabled->get<bool>() && !current.empty()) return validation("TimeToLive is already enabled");
  if (!enabled->get<bool>() && current.empty()) return validation("TimeToLive is already disabled");
  current = enabled->get<bool>() ? *attribute : std::string{};
  return ok(json{{"TimeToLiveSpecification", *specification}}.dump());
}

}  // namespace ic::bench::fast_aws
