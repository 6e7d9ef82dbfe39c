// A request's expression placeholders (#name, :value) bound to what its
// ExpressionAttributeNames and ExpressionAttributeValues give them.
#pragma once

#include <expected>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fast_aws/expression.hpp"
#include "fast_aws/item.hpp"

namespace ic::bench::fast_aws {

struct Bindings {
  std::vector<std::pair<std::string, std::string>> names;
  std::vector<std::pair<std::string, Value>> values;

  // The attribute a path names: itself, or what its #placeholder is bound to.
  std::string_view name(std::string_view path) const;
  // What a :placeholder is bound to, or nullptr.
  const Value* value(std::string_view placeholder) const;
};

// Binds the request's placeholders, with DynamoDB's checks that every one the programs use is
// given and every one given is used (a null program is none). The error is a
// ValidationException's message.
std::expected<Bindings, std::string> bind(const nlohmann::json& request,
                                          std::initializer_list<const Program*> programs);

}  // namespace ic::bench::fast_aws
