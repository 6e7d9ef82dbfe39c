// Evaluating a compiled expression against an item and a request's bindings.
#pragma once

#include <expected>
#include <optional>
#include <string>

#include "fast_aws/bindings.hpp"
#include "fast_aws/expression.hpp"
#include "fast_aws/item.hpp"

namespace ic::bench::fast_aws {

// Whether condition `index` holds for `item` (nullptr: no item under the key).
bool holds(const Program& program, int index, const Item* item, const Bindings& bound);

// An update operand's value, read from the item as it was before the update (as DynamoDB
// evaluates every right-hand side); nullopt for a path the item lacks. The error is a
// ValidationException's message.
std::expected<std::optional<Value>, std::string> evaluate(const Program& program, int index,
                                                          const Item* old, const Bindings& bound);

}  // namespace ic::bench::fast_aws
