// DynamoDB in memory, over the JSON protocol (X-Amz-Target DynamoDB_20120810.<Op>):
// CreateTable, DescribeTable, UpdateTimeToLive, DescribeTimeToLive, GetItem, and UpdateItem
// with condition and update expressions (expression_parser.hpp), ReturnValues and
// ReturnValuesOnConditionCheckFailure=ALL_OLD. Tables have a hash key only; see main.cpp for
// what else is left out.
#pragma once

#include <expected>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>

#include "fast_aws/expression.hpp"
#include "fast_aws/reply.hpp"
#include "fast_aws/table.hpp"

namespace ic::bench::fast_aws {

// DynamoDB's error `type` ("ValidationException", ...) with `message`.
Reply dynamodb_error(std::string_view type, std::string_view message);
Reply validation(std::string_view message);

class DynamoDb {
 public:
  Reply handle(std::string_view operation, const nlohmann::json& request);

 private:
  // The table named by the request; the caller holds mutex_.
  std::expected<Table*, Reply> table_of(const nlohmann::json& request);

  // The compiled expression for `text`, from the cache or compiled now. Cached by text: the
  // consumer sends a handful of distinct ones.
  std::expected<std::shared_ptr<const Program>, std::string> compiled(const std::string& text,
                                                                      bool is_update);

  // dynamodb_items.cpp
  Reply update_item(const nlohmann::json& request);
  Reply get_item(const nlohmann::json& request);

  // dynamodb_tables.cpp
  Reply create_table(const nlohmann::json& request);
  Reply describe_table(const nlohmann::json& request);
  Reply describe_ttl(const nlohmann::json& request);
  Reply update_ttl(const nlohmann::json& request);

  std::mutex mutex_;  // the tables and their items
  std::unordered_map<std::string, std::unique_ptr<Table>> tables_;
  std::mutex cache_mutex_;  // the compiled expressions, apart: compiling needs no table
  std::unordered_map<std::string, std::shared_ptr<const Program>> updates_;
  std::unordered_map<std::string, std::shared_ptr<const Program>> conditions_;
};

}  // namespace ic::bench::fast_aws
