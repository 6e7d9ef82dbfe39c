// A DynamoDB table in memory: its hash key, its items, and what DescribeTable reports.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fast_aws/item.hpp"

namespace ic::bench::fast_aws {

struct Table {
  std::string name;
  std::string hash_key;
  Kind hash_kind = Kind::S;
  // Secondary index key attributes and their types: an item's value must match (AWS refuses a
  // write that would put an item in an index with the wrong type).
  std::vector<std::pair<std::string, Kind>> index_keys;
  nlohmann::json description;  // DescribeTable's Table, but its status and counts
  std::string ttl_attribute;
  std::unordered_map<std::string, Item> items;  // by the hash key's text
};

}  // namespace ic::bench::fast_aws
