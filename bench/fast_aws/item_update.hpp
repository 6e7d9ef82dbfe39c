// An UpdateItem's actions applied to an item, with the checks DynamoDB makes of the result.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "fast_aws/bindings.hpp"
#include "fast_aws/expression.hpp"
#include "fast_aws/item.hpp"
#include "fast_aws/table.hpp"

namespace ic::bench::fast_aws {

// The update's actions applied to a copy of `old` (or to a new item of `key`); `touched` gets
// the attribute names the actions name, for UPDATED_OLD and UPDATED_NEW. The error is a
// ValidationException's message.
std::expected<Item, std::string> apply_update(const Table& table, const Program& update,
                                              const Item* old, const std::string& key,
                                              const Bindings& bound,
                                              std::vector<std::string_view>& touched);

}  // namespace ic::bench::fast_aws
