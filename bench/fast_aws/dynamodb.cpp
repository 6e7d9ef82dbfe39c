// DynamoDB's dispatch, errors, table lookup and expression cache (dynamodb.hpp); the
// operations are in dynamodb_items.cpp and dynamodb_tables.cpp.
#include "fast_aws/dynamodb.hpp"

#include "fast_aws/expression_parser.hpp"
#include "fast_aws/request_members.hpp"

namespace ic::bench::fast_aws {

Reply dynamodb_error(std::string_view type, std::string_view message) {
  return typed_error(std::string("com.amazonaws.dynamodb.v20120810#") + std::string(type), message,
                     400);
}

Reply validation(std::string_view message) {
  return dynamodb_error("ValidationException", message);
}

Reply DynamoDb::handle(std::string_view operation, const nlohmann::json& request) {
  if (operation == "UpdateItem") return update_item(request);
  if (operation == "GetItem") return get_item(request);
  if (operation == "DescribeTable") return describe_table(request);
  if (operation == "CreateTable") return create_table(request);
  if (operation == "DescribeTimeToLive") return describe_ttl(request);
  if (operation == "UpdateTimeToLive") return update_ttl(request);
  return unknown_operation(std::string("DynamoDB_20120810.") + std::string(operation));
}

std::expected<Table*, Reply> DynamoDb::table_of(const nlohmann::json& request) {
  const std::string* name = string_member(request, "TableName");
  if (name == nullptr) {
    return std::unexpected(validation(
        "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: "
        "Member must not be null"));
  }
  const auto it = tables_.find(*name);
  if (it == tables_.end()) {
    return std::unexpected(
        dynamodb_error("ResourceNotFoundException", "Requested resource not found"));
  }
  return it->second.get();
}

std::expected<std::shared_ptr<const Program>, std::string> DynamoDb::compiled(
    const std::string& text, bool is_update) {
  auto& cache = is_update ? updates_ : conditions_;
  {
    const std::scoped_lock lock(cache_mutex_);
    if (const auto it = cache.find(text); it != cache.end()) return it->second;
  }
  auto program = is_update ? parse_update(text) : parse_condition(text);
  if (!program) return std::unexpected(program.error());
  auto shared = std::make_shared<const Program>(std::move(*program));
  const std::scoped_lock lock(cache_mutex_);
  if (cache.size() > 1000) cache.clear();  // crafted requests must not grow it without bound
  cache.emplace(text, shared);
  return shared;
}

}  // namespace ic::bench::fast_aws
